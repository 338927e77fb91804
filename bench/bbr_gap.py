"""The kernel's bbr beside castlab's LE-SBCC (AIMD) on net-peers' testbed, against the twin's BBR:
BBR's model and window over time on both sides.

    python bench/bbr_gap.py RUNS [--seeds 1-3] [--duration 60] [--handshake-rtt testbed|SECONDS]
                                 [--source-delay SECONDS]

RUNS holds one `bench/netgap_probe.py` directory per seed (`RUNS/seed-N/lesbcc-aimd/`, made by
``netgap_probe.py RUNS/seed-N --schemes lesbcc-aimd --tcp bbr --seed N --ss --ss-period 0.1``):
the testbed case with src's ``ss -tin`` log and both namespaces' ``nstat`` before and after. The
kernel's side is read from those files; the twin (``peers.twin_scenario``, the testbed's set-up:
no delay per link, its token bucket) is run here with the same seed and its bbr flow's trace read
(``tcp_trace``: cwnd, RTT samples, retransmissions, timeouts; per change of mode or gain phase the
pacing rate, the bandwidth estimate and the min RTT). Both sides are sampled on a 0.1 s grid over
the measurement after the warm-up (the kernel: its ss snapshots there). Writes RUNS/bbr_gap.csv
(a row per seed and side), RUNS/bbr_series_SEED.csv (both sides' samples) and prints the table.
`--handshake-rtt`: a third side, the twin whose bbr flow starts holding a handshake's RTT sample
(``peers.twin``'s `handshake_rtt_s`): "testbed" takes each seed's from the kernel socket's first
ss snapshot (`minrtt`, which the SYN-ACK set), or give seconds. Its source's records go to
RUNS/seed-N/lesbcc-aimd/twin-handshake/. The sides `twin` and `twin-handshake` start the
receivers with the source (``peers.twin``'s `source_delay_s` 0, the ablation). `--source-delay
S`: the twin whose receivers start S seconds before its source, as the testbed's (S = 0.1 is
the twins' default, ``peers.TESTBED_RECEIVERS_LEAD_S``), alone (twin-late) and with the handshake
(twin-handshake-late).

STARTUP on both sides (the first 3 s of the bbr flow): its largest cwnd, the segments it
retransmitted, and LE-SBCC's source then: its rate 5 s after the TCP flow's start and the RTT
samples it took in those 3 s (`lesbcc_rate.csv`, `lesbcc_rtt.csv`).

Time in PROBE_RTT: the kernel's ss shows `cwnd_gain:1` only there (tcp_bbr.c's bbr_update_gains);
the twin's state code 2. The kernel's retransmission timeouts, loss probes and SACK recoveries are
the src namespace's counters over the whole case (one TCP flow; the counters of iperf3's control
connection are a handful of segments), the twin's timeouts and retransmissions its flow's.
"""

from __future__ import annotations

import argparse
import json
import re
from pathlib import Path

import numpy as np
import pandas as pd

GRID_S = 0.1
#: the span read as the bbr flow's STARTUP and its losses, from its start (the kernel's STARTUP
#: ended 1.4-1.8 s after its start in the runs of docs/real-network.md, the twin's at 0.7 s)
STARTUP_S = 3.0
#: the src namespace's counters read (nstat)
NSTAT = ("TcpExtTCPTimeouts", "TcpExtTCPLossProbes", "TcpExtTCPLossProbeRecovery", "TcpExtTCPSackRecovery",
         "TcpRetransSegs", "TcpExtTCPFastRetrans", "TcpExtTCPOrigDataSent")


def _nstat(path: Path) -> dict[str, int]:
    out = {}
    for line in path.read_text().splitlines():
        p = line.split()
        if len(p) >= 2 and p[1].isdigit():
            out[p[0]] = int(p[1])
    return out


def kernel_side(case: Path, duration: float) -> tuple[dict, pd.DataFrame]:
    from castlab.experiments.tcp import net
    from castlab.experiments.tfmcc import peers

    rec = json.loads((case / "case.json").read_text())
    t0, warm = float(rec["t0_realtime_s"]), peers.warm_up(duration)
    text = (case / "ss_src.txt").read_text()
    rows = net.parse_ss(text)
    # cwnd_gain is not among parse_ss's fields: read it per bbr info line, in the same order
    gains = [float(m.group(1)) if m else np.nan for m in
             (re.search(r"\bcwnd_gain:([\d.]+)", ln) for ln in text.splitlines() if ln[:1].isspace())]
    if len(gains) == len(rows):
        for r, g in zip(rows, gains):
            r["bbr_cwnd_gain"] = g
    df = pd.DataFrame(rows)
    d = df[df["cc"] == "bbr"]
    data = d.groupby("lport")["bytes_acked"].max().idxmax()  # iperf3's data connection
    d = d[d["lport"] == data].sort_values("t")
    d = d.assign(t=d["t"] - t0)
    e = d[(d["t"] >= 0) & (d["t"] < STARTUP_S)]
    startup = {"handshake_rtt_ms": float(d["minrtt_ms"].iloc[0]), "startup_max_cwnd": float(e["cwnd"].max()),
               "startup_retx_segs": float(e["bytes_retrans"].max() or 0) / 1448,
               "ssthresh_end": float(d["ssthresh"].dropna().iloc[-1]) if d["ssthresh"].notna().any() else np.nan,
               **_source(case / "source", float(rec["sender_clock_offset_s"]))}
    d = d[(d["t"] >= warm) & (d["t"] <= duration)]
    before, after = _nstat(case / "nstat_src_before.txt"), _nstat(case / "nstat_src.txt")
    cnt = {k: after.get(k, 0) - before.get(k, 0) for k in NSTAT}
    s = pd.DataFrame({"t": d["t"], "bw_bps": d["bbr_bw_bps"], "min_rtt_ms": d["bbr_mrtt_ms"],
                      "pacing_bps": d["pacing_bps"], "cwnd": d["cwnd"], "srtt_ms": d["srtt_ms"],
                      "pacing_gain": d["bbr_pacing_gain"], "cwnd_gain": d.get("bbr_cwnd_gain")})
    last = d.iloc[-1]
    r = {"bbr_bps": rec["tcp_means_bps"]["bbr"], "scheme_bps": rec["scheme_mean_bps"], "share": rec["share"],
         "probe_rtt_frac": float((s["cwnd_gain"] == 1).mean()),
         "timeouts": cnt["TcpExtTCPTimeouts"], "loss_probes": cnt["TcpExtTCPLossProbes"],
         "loss_probe_recoveries": cnt["TcpExtTCPLossProbeRecovery"], "sack_recoveries": cnt["TcpExtTCPSackRecovery"],
         "retrans_segs": cnt["TcpRetransSegs"], "data_segs": cnt["TcpExtTCPOrigDataSent"],
         "lost_end": last.get("lost"), "samples": len(s), **startup}
    return r, s


def _source(where: Path, tcp_start_s: float) -> dict:
    """LE-SBCC's source around the TCP flow's start (`tcp_start_s` on the source's clock): its
    rate just before, and STARTUP_S + 2 s after, and the RTT samples it used in STARTUP_S."""
    rate, rtt = pd.read_csv(where / "lesbcc_rate.csv"), pd.read_csv(where / "lesbcc_rtt.csv")
    at = lambda t: float(rate["bps"].to_numpy()[max(int(np.searchsorted(rate["time_s"], t, side="right")) - 1, 0)])
    used = rtt[rtt["used"].astype(bool)]
    return {"mc_rate_at_tcp_start_bps": at(tcp_start_s), "mc_rate_5s_bps": at(tcp_start_s + 5.0),
            "mc_samples_startup": int(((used["time_s"] >= tcp_start_s) & (used["time_s"] < tcp_start_s + STARTUP_S)).sum()),
            "mc_first_sample_s": float(used[used["time_s"] >= tcp_start_s]["time_s"].min() - tcp_start_s)}


def twin_side(seed: int, duration: float, handshake_s: float | None = None,
              records: Path | None = None, source_delay_s: float = 0.0) -> tuple[dict, pd.DataFrame]:
    from castlab.experiments.tcp import net
    from castlab.experiments.tfmcc import peers
    from castlab.scenario import Scenario

    lead, warm = peers.LEAD_S, peers.warm_up(duration)
    hs = None if handshake_s is None else {"bbr": handshake_s}
    tw = peers.twin("lesbcc-aimd", seed, duration, ("bbr",), records_dir=records, handshake_rtt_s=hs,
                    source_delay_s=source_delay_s)
    sc = Scenario.from_dict(peers.twin_scenario("lesbcc-aimd", duration, ("bbr",), handshake_rtt_s=hs,
                                                source_delay_s=source_delay_s))
    sim = sc.build(seed)
    sim.run(lead + duration)
    h = sim.scenario_handles.tcp["tcp0"]
    tr, st = sim.tcp_trace(h), sim.tcp_stats(h)
    mss = int(st["mss_bytes"])
    t = np.arange(lead + warm, lead + duration + 1e-9, GRID_S)
    step = net._step_at
    code = step(tr["state_time_ns"], tr["state_code"], t)
    gain = np.array([net.BBR_STATE_GAIN.get(int(c), np.nan) if np.isfinite(c) else np.nan for c in code])
    s = pd.DataFrame({"t": t - lead, "bw_bps": step(tr["state_time_ns"], tr["model_bw_bps"], t),
                      "min_rtt_ms": step(tr["state_time_ns"], tr["min_rtt_ns"] / 1e6, t),
                      "pacing_bps": step(tr["state_time_ns"], tr["pacing_rate_bps"], t),
                      "cwnd": step(tr["cc_time_ns"], tr["cwnd_bytes"] / mss, t),
                      "srtt_ms": step(tr["rtt_time_ns"], tr["srtt_ns"] / 1e6, t),
                      "pacing_gain": gain, "cwnd_gain": np.where(code == 2, 1.0, np.nan)})
    st0 = lead * 1e9
    early = lambda x: (np.asarray(x) >= st0) & (np.asarray(x) < st0 + STARTUP_S * 1e9)
    startup = {"handshake_rtt_ms": np.nan if handshake_s is None else handshake_s * 1e3,
               "startup_max_cwnd": float(np.max(tr["cwnd_bytes"][early(tr["cc_time_ns"])]) / mss),
               "startup_retx_segs": int(np.sum(early(tr["retx_time_ns"]))),
               "ssthresh_end": float(tr["ssthresh_bytes"][-1]) / mss if len(tr["ssthresh_bytes"]) else np.nan,
               **(_source(records / "source", lead) if records is not None else {})}
    in_win = lambda x: int(np.sum((x >= (lead + warm) * 1e9) & (x <= (lead + duration) * 1e9)))
    r = {"bbr_bps": tw["tcp_means_bps"]["bbr"], "scheme_bps": tw["scheme_mean_bps"], "share": tw["share"],
         "probe_rtt_frac": float(np.mean(code == 2)),
         "timeouts": int(st["timeouts"]), "loss_probes": 0, "loss_probe_recoveries": 0,
         "sack_recoveries": int(st["fast_retransmits"]), "retrans_segs": int(st["retransmissions"]),
         "data_segs": int(st["segments_sent"]) - int(st["retransmissions"]), "lost_end": None, "samples": len(s),
         "timeouts_in_window": in_win(tr["timeout_time_ns"]), **startup}
    return r, s


def summary(s: pd.DataFrame) -> dict:
    cruise = s[s["pacing_gain"] == 1.0]
    out = {}
    for k in ("bw_bps", "min_rtt_ms", "pacing_bps", "cwnd", "srtt_ms"):
        out[f"{k}_med"] = float(s[k].median())
    out["bw_p10"], out["bw_p90"] = float(s["bw_bps"].quantile(0.1)), float(s["bw_bps"].quantile(0.9))
    out["min_rtt_p10"], out["min_rtt_p90"] = float(s["min_rtt_ms"].quantile(0.1)), float(s["min_rtt_ms"].quantile(0.9))
    # the window BBR's model sets in PROBE_BW: cwnd_gain (2) x bw x min_rtt, segments of 1448 bytes
    out["bdp2_segs_med"] = float((2 * s["bw_bps"] / 8 * s["min_rtt_ms"] / 1e3 / 1448).median())
    out["gain_1.25_frac"] = float((s["pacing_gain"] == 1.25).mean())
    out["cruise_frac"] = float(len(cruise) / max(len(s), 1))
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("runs", type=Path)
    ap.add_argument("--seeds", default="1-3")
    ap.add_argument("--duration", type=float, default=60.0)
    ap.add_argument("--handshake-rtt", default=None, help='"testbed" (per seed, from ss) or seconds')
    ap.add_argument("--source-delay", type=float, default=None, help="the twin's receivers before its source, s")
    a = ap.parse_args()
    lo, _, hi = a.seeds.partition("-")
    seeds = range(int(lo), int(hi or lo) + 1)
    rows = []
    for seed in seeds:
        case = a.runs / f"seed-{seed}" / "lesbcc-aimd"
        kr, ks = kernel_side(case, a.duration)
        tr, ts = twin_side(seed, a.duration, records=case / "twin-tbf")
        rows.append({"seed": seed, "side": "testbed", **kr, **summary(ks)})
        rows.append({"seed": seed, "side": "twin", **tr, **summary(ts)})
        series = [ks.assign(side="testbed"), ts.assign(side="twin")]
        h = None
        if a.handshake_rtt is not None:
            h = kr["handshake_rtt_ms"] / 1e3 if a.handshake_rtt == "testbed" else float(a.handshake_rtt)
        for side, hh, late in (("twin-handshake", h, 0.0), ("twin-late", None, a.source_delay),
                               ("twin-handshake-late", h, a.source_delay)):
            if (side.startswith("twin-handshake") and h is None) or late is None:
                continue
            hr, hs = twin_side(seed, a.duration, hh, records=case / side, source_delay_s=late)
            rows.append({"seed": seed, "side": side, **hr, **summary(hs)})
            series.append(hs.assign(side=side))
        pd.concat(series).to_csv(a.runs / f"bbr_series_{seed}.csv", index=False)
    df = pd.DataFrame(rows)
    df.to_csv(a.runs / "bbr_gap.csv", index=False)
    with pd.option_context("display.width", 250, "display.max_columns", 60):
        print(df.set_index(["seed", "side"]).T.round(3).to_string())


if __name__ == "__main__":
    main()
