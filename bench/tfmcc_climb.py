"""castlab's TFMCC climbing from the rate floor on the testbed, read from a run's sender records
and set beside the bound RFC 4654 puts on it.

    python bench/tfmcc_climb.py RUN_DIR [RUN_DIR ...] [--plot OUT.png] [--csv OUT.csv]

RUN_DIR is a case directory of net-peers or net-tfmcc-uftp (``seed-N/ORDER/tfmcc`` or
``.../tfmcc_ALGO``) with the sender's records in ``source/``: ``tfmcc_rate.csv`` (every rate
change), ``tfmcc_round.csv`` (R_max at each feedback round's end) and ``tfmcc_fb.csv`` (every
report: receiver, X_r, p, RTT, whether from the CLR).

The bound, from the RFC alone (no record of the run enters it): at the floor of one packet per
8 s (§4.4; X_0 = 8s/8 s), §3.2 holds R_max at or above the packet interval, R_0 = 8s/X_0 + ts_gran;
outside slowstart the rate rises by at most 8s/R_max once per R_max (§3.3 case 4 and its recovery
sentence); R_max falls by at most a factor 0.9 per feedback round (§3.2) of T = 6 R_max (§3.4).
So R_max falls by at most R_max/10 every 6 R_max, a straight line R(t) = R_0 - t/60, and the
rate by the increase rule, dX/dt = 8s/R(t)^2, is X(t) = X_0 + 8s * 60 * (1/R(t) - 1/R_0): about
one packet per R_0 every R_0 at first (1 kb/s per 8 s with 1000-byte packets).

Per run the script prints the floor's time (first rate at X_0), the rate 60, 120 s later and at the
run's end beside the bound, and, over the increases after the floor, the median of each step over
8s/R_max (R_max the last round's) and of the time between steps over R_max: 1 and about 1 (steps
wait for the CLR's next report, which follows a data packet) when the sender follows §3.3.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np
import pandas as pd

TS_GRAN_S = 0.010  # §3.7 (TfmccConfig::clock_granularity)
FLOOR_INTERVAL_S = 8.0  # §4.4 (TfmccConfig::min_packet_interval)
ROUND_RTTS = 6.0  # §3.4, unicast feedback
RMAX_DECAY = 0.9  # §3.2


def bound(t: np.ndarray, packet_bytes: float) -> np.ndarray:
    """The fastest climb RFC 4654 allows from the floor at t = 0 (module docstring)."""
    x0 = 8 * packet_bytes / FLOOR_INTERVAL_S
    r0 = 8 * packet_bytes / x0 + TS_GRAN_S
    per_s = (1 - RMAX_DECAY) / ROUND_RTTS  # R_max lost per second: R/10 every 6 R
    r = np.maximum(r0 - per_s * t, TS_GRAN_S)
    return x0 + 8 * packet_bytes / per_s * (1 / r - 1 / r0)


def climb(run: Path, packet_bytes: float = 1000.0) -> dict:
    src = run / "source"
    rate = pd.read_csv(src / "tfmcc_rate.csv")
    rounds = pd.read_csv(src / "tfmcc_round.csv")
    floor = 8 * packet_bytes / FLOOR_INTERVAL_S
    at = rate.index[rate["bps"] <= floor * 1.0001]
    if not len(at):
        return {"run": str(run), "floor_s": float("nan")}
    i0 = at[0]
    t0 = float(rate["time_s"][i0])
    after = rate.iloc[i0:].reset_index(drop=True)
    end = float(after["time_s"].iloc[-1])
    ups = after[after["bps"].diff() > 0]
    steps = ups["bps"].to_numpy() - after["bps"].shift().loc[ups.index].to_numpy()
    times = ups["time_s"].to_numpy()
    prev = after["time_s"].shift().loc[ups.index].to_numpy()  # the change before each increase

    def rmax_at(t: float) -> float:
        r = rounds[rounds["time_s"] <= t]
        return float(r["rmax_s"].iloc[-1]) if len(r) else float("nan")

    rm = np.array([rmax_at(t) for t in times])
    ratio = steps / (8 * packet_bytes / rm)
    gaps = (times - prev) / rm

    def x_at(t: float) -> float:
        r = after[after["time_s"] <= t]
        return float(r["bps"].iloc[-1])

    out = {"run": str(run), "floor_s": t0, "increases": int(len(steps)),
           "step_over_8s_rmax_median": float(np.median(ratio)) if len(ratio) else float("nan"),
           "step_over_8s_rmax_max": float(np.max(ratio)) if len(ratio) else float("nan"),
           "gap_over_rmax_median": float(np.median(gaps)) if len(gaps) else float("nan"),
           "decreases": int((after["bps"].diff() < 0).sum()), "end_s": end, "rate_end_bps": x_at(end),
           "bound_end_bps": float(bound(np.array([end - t0]), packet_bytes)[0]), "rmax_end_s": rmax_at(end)}
    for k in (60, 120):
        if t0 + k <= end:
            out[f"rate_{k}s_bps"] = x_at(t0 + k)
            out[f"bound_{k}s_bps"] = float(bound(np.array([float(k)]), packet_bytes)[0])
    return out


def plot(run: Path, path: Path, packet_bytes: float = 1000.0, names: tuple[str, ...] = ("rcv1", "rcv2")) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    src = run / "source"
    rate = pd.read_csv(src / "tfmcc_rate.csv")
    rounds = pd.read_csv(src / "tfmcc_round.csv")
    fb = pd.read_csv(src / "tfmcc_fb.csv")
    c = climb(run, packet_bytes)
    t0 = c["floor_s"]
    fig, (a1, a2, a3) = plt.subplots(3, 1, figsize=(7.5, 7.0), dpi=120, sharex=True)
    a1.step(rate["time_s"], rate["bps"] / 1e3, where="post", color="k", lw=1.0, label="sending rate X (tfmcc_rate.csv)")
    tt = np.linspace(0, rate["time_s"].iloc[-1] - t0, 400)
    a1.plot(t0 + tt, bound(tt, packet_bytes) / 1e3, "--", color="tab:red", lw=1.0,
            label="RFC 4654's fastest climb from the floor (§3.2, §3.3, §3.4)")
    name = lambda k: names[k] if 0 <= k < len(names) else f"receiver {k}"
    colors = ["tab:blue", "tab:orange", "tab:purple", "tab:brown"]
    for rcv, g in fb.groupby("receiver"):
        a1.plot(g["time_s"], g["rate_bps"] / 1e3, ".", ms=3, alpha=0.6, color=colors[rcv % 4],
                label=f"X_r reported by {name(rcv)}")
    a1.set_yscale("log")
    a1.set_ylabel("kb/s")
    a1.legend(fontsize=6)
    a2.step(rounds["time_s"], rounds["rmax_s"], where="post", color="tab:green", label="R_max at each round's end")
    a2.set_ylabel("R_max (s)")
    a2.legend(fontsize=6)
    for rcv, g in fb.groupby("receiver"):
        clr = g["from_clr"].astype(str).str.lower().eq("true")
        a3.plot(g["time_s"][clr], g["loss_event_rate"][clr], "o", ms=3, color=colors[rcv % 4],
                label=f"p reported by {name(rcv)} as CLR")
        a3.plot(g["time_s"][~clr], g["loss_event_rate"][~clr], "x", ms=4, color=colors[rcv % 4],
                label=f"p reported by {name(rcv)}, not CLR")
    a3.set_yscale("log")
    a3.set_ylabel("loss event rate p")
    a3.set_xlabel("time from the sender's start (s)")
    a3.legend(fontsize=6)
    for a in (a1, a2, a3):
        a.grid(True, alpha=0.3)
        a.axvline(t0, color="0.5", lw=0.6, ls=":")
    fig.suptitle(f"castlab's TFMCC from the floor: {'/'.join(run.parts[-4:])}", fontsize=7)
    fig.tight_layout()
    fig.savefig(path)
    plt.close(fig)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("runs", nargs="+", type=Path)
    ap.add_argument("--packet-bytes", type=float, default=1000.0, help="TFMCC's s (net-peers: 1000)")
    ap.add_argument("--plot", type=Path, help="draw the first run to this file")
    ap.add_argument("--csv", type=Path, help="write the table here")
    ap.add_argument("--receivers", default="rcv1,rcv2", help="the receivers' names by index (net-peers' order)")
    a = ap.parse_args(argv)
    missing = [r for r in a.runs if not (r / "source" / "tfmcc_rate.csv").exists()]
    if missing:
        ap.error(f"no source/tfmcc_rate.csv in {', '.join(map(str, missing))}")
    df = pd.DataFrame([climb(r, a.packet_bytes) for r in a.runs])
    with pd.option_context("display.width", 250, "display.max_columns", 30):
        print(df.to_string(index=False, float_format=lambda x: f"{x:.4g}"))
    if a.csv:
        df.to_csv(a.csv, index=False)
    if a.plot:
        plot(a.runs[0], a.plot, a.packet_bytes, tuple(a.receivers.split(",")))
    return 0


if __name__ == "__main__":
    sys.exit(main())
