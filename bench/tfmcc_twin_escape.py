"""Why net-peers' TFMCC twin, TCP first, escapes the collapse in seed 3 and not in seeds 1 and 2:
the twins' own records side by side.

    python bench/tfmcc_twin_escape.py OUT --run [--seeds 1,2,3] [--shifts -50:50:5]
    python bench/tfmcc_twin_escape.py OUT [--seeds 1,2,3] [--csv T.csv] [--plot F.png]

`--run` computes without the testbed (the twin is deterministic) net-peers' TFMCC twin TCP first
as the full form computes it (``peers.twin``: its defaults, the token bucket on the last hops,
the kernel's three TCP flows with BBR's ACK-aggregation allowance; FULL_DURATION_S, LEAD_S),
with its records and captures, into OUT/seed-N/ (``twin.json``: what ``twin`` returns), and two
ablations beside it:

* OUT/seed-N-rcv2-late/: rcv2 joins at RCV2_LATE_S instead of with the sender, nothing else
  changed. Every agent draws from its own random stream (``Rng::stream``: seed, kind, index), and
  nothing reaches the sender before the first report, so the first report of this run is rcv1's
  round-0 feedback timer (§4.5) as it would have expired in OUT/seed-N/ had nothing cancelled it.
* OUT/shift/seed-N/dMS/ (with `--shifts`): the sender and its receivers start MS ms later (earlier
  when negative) against the TCP flows (``twin``'s `lead`), each with its records and twin.json.

Without `--run` the script reads OUT. Per seed, from the records (receivers are named by
``source/tfmcc_counts.json``'s ``receivers``, the sender's order of first reports):

* ``rcv2_r0_s``: rcv2's round-0 report (``source/tfmcc_fb.csv``, round 0), which ends round 0;
* ``rcv2_next_pkt_s``: the next data packet at rcv2, which echoes that report
  (``rx_rcv2/tfmcc_receiver_rtt.csv``, its first RTT measurement, ``rcv2_first_R_ms``);
* ``rcv1_r0_s``: rcv1's round-0 report in the run (none when cancelled), ``rcv1_timer_r0_s`` its
  timer undisturbed (the rcv2-late ablation) and ``rcv1_round1_pkt_s`` the first packet sent after
  ``rcv2_r0_s`` to reach rcv1 (``twin_src.pcap``, ``twin_rcv1.pcap``): it cancels the timer
  if it comes first (§4.5: a new round cancels feedback for older ones); each receiver's round-0
  timer counted from its first data packet (``rcv2_timer_r0_after_first_pkt_s`` from the
  first sent, rcv2's path having no queue; ``rcv1_timer_r0_after_first_pkt_s`` from the first
  to reach rcv1), the draws of §4.5's biased timers, T = 6 R_max;
* ``clr_at_rcv2_next_pkt``: the CLR when that packet left (``source/tfmcc_clr.csv``);
* ``ss_peak_kbps``: the highest rate before the first floor; ``rcv1_first_R_s``/``_ms``: rcv1's
  first RTT measurement (``rx_rcv1/tfmcc_receiver_rtt.csv``);
* ``floor_s``: the first rate of one packet per 8 s (``source/tfmcc_rate.csv``) and
  ``floor_by`` the receiver whose report it followed;
* ``HOST_first_p_report_s``, ``HOST_first_p``, ``HOST_first_p_X_kbps``: each receiver's first
  report with a loss event (its ``tfmcc_receiver_report.csv``; the records keep no time of the
  event itself), its p and the sending rate then;
* ``ss_end_s``: the first report with a loss (``slowstart_end_s`` of tfmcc_counts.json, §3.6) and
  ``ss_end_by``, ``ss_end_p`` the receiver and p of that report;
* after the floor: the highest rate (``after_floor_peak_kbps``), the first round's end at or
  after it and R_max from then (``source/tfmcc_round.csv``: §3.2 holds R_max at or above the
  floor's packet interval), rcv1's longest silence in the
  SILENCE_SPAN_S after it (``rcv1_silent_from_s`` to ``rcv1_silent_to_s``, its reports);
* ``share`` and ``share_wK`` (twin.json), the claim's reading per seed and per 30 s window.

With shifts, a second table per seed counts the outcomes: slowstart ended before the first
floor, after it but before rcv2's next data packet (``FLOOR_GAP_S`` later), or after it (the
escape), by the CLR when the first packet after rcv2's round-0 report left.

`--plot`: seeds side by side: the sending rate and each receiver's reported X_r and the RTT it
used (10-30 s), and the whole run's rate.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import numpy as np
import pandas as pd

PACKET_BYTES = 1000.0  # net-peers' TFMCC packet size (peers.SCHEMES)
FLOOR_BPS = 8 * PACKET_BYTES / 8.0  # §4.4: one packet per 8 s
FLOOR_GAP_S = 8.0  # the packet interval at the floor
RCV2_LATE_S = 60.0  # the ablation's join time: long after rcv1's round-0 timer (T = 6 R_max, §3.4)
ORDER = "tcp-first"
SILENCE_SPAN_S = 90.0  # rcv1's reports read after the first floor (more than a round of 6 x 8.01 s)


# ------------------------------------------------------------------ computing the twins


def run_twins(out: Path, seeds: list[int], shifts_ms: list[int]) -> None:
    from castlab.experiments.tfmcc import peers, twin_records
    from castlab.scenario import Scenario

    dur, tcp = peers.FULL_DURATION_S, peers.TCP_ALGOS
    for seed in seeds:
        t = peers.twin("tfmcc", seed, dur, tcp, ORDER, records_dir=out / f"seed-{seed}", capture=True)
        (out / f"seed-{seed}" / "twin.json").write_text(json.dumps(t, indent=1))
        d = peers.twin_scenario("tfmcc", dur, tcp, ORDER)
        for r in d["receivers"]:
            if r["name"] == "rcv2":
                r["start"] = RCV2_LATE_S
        s = Scenario.from_dict(d)
        sim = s.build(seed)
        sim.run(d["duration"])
        twin_records.write_twin(sim, "tfmcc", out / f"seed-{seed}-rcv2-late")
        for ms in shifts_ms:
            where = out / "shift" / f"seed-{seed}" / f"d{ms}"
            t = peers.twin("tfmcc", seed, dur, tcp, ORDER, lead=peers.LEAD_S + ms / 1000, records_dir=where)
            (where / "twin.json").write_text(json.dumps(t, indent=1))


# ------------------------------------------------------------------ reading the records


def names(run: Path) -> list[str]:
    """The receivers by the sender's index (the order it first heard them)."""
    return list(json.loads((run / "source" / "tfmcc_counts.json").read_text())["receivers"])


def feedback(run: Path) -> pd.DataFrame:
    fb = pd.read_csv(run / "source" / "tfmcc_fb.csv")
    fb["host"] = [names(run)[i] for i in fb["receiver"]]
    fb["from_clr"] = fb["from_clr"].astype(str).str.lower().eq("true")
    return fb


def clr_at(run: Path, t: float) -> str:
    c = pd.read_csv(run / "source" / "tfmcc_clr.csv")
    c = c[c["time_s"] <= t]
    return names(run)[int(c["receiver"].iloc[-1])] if len(c) else ""


def captured(run: Path) -> dict:
    """From the captures (none: nan): the first data packet sent, the first to reach rcv1, and a
    function giving when the first data packet sent after a time reached rcv1."""
    from castlab.experiments.tfmcc.flowdrops import read_pcap

    nan = float("nan")
    if not (run / "twin_src.pcap").exists():
        return {"first_sent": nan, "rcv1_first": nan, "at_rcv1_after": lambda t: nan}
    src, rcv = (read_pcap(run / f) for f in ("twin_src.pcap", "twin_rcv1.pcap"))
    src = src[src["flow"].str.startswith("mc:")]
    got = rcv[rcv["flow"].str.startswith("mc:")].set_index("pid")["t_s"]

    def at_rcv1_after(t: float) -> float:
        arrivals = got.reindex(src[src["t_s"] > t]["pid"]).dropna()
        return float(arrivals.min()) if len(arrivals) else nan

    return {"first_sent": float(src["t_s"].min()), "rcv1_first": float(got.min()), "at_rcv1_after": at_rcv1_after}


def milestones(run: Path, late: Path | None = None) -> dict:
    """The events of one twin run (see the module's docstring); `late`: its rcv2-late ablation."""
    fb = feedback(run)
    rate = pd.read_csv(run / "source" / "tfmcc_rate.csv")
    rounds = pd.read_csv(run / "source" / "tfmcc_round.csv")
    counts = json.loads((run / "source" / "tfmcc_counts.json").read_text())
    rtt = {h: pd.read_csv(run / f"rx_{h}" / "tfmcc_receiver_rtt.csv") for h in ("rcv1", "rcv2")}
    rep1 = pd.read_csv(run / "rx_rcv1" / "tfmcc_receiver_report.csv")
    r0 = fb[fb["round"] == 0]
    m: dict = {}
    r2 = r0[r0["host"] == "rcv2"]
    m["rcv2_r0_s"] = float(r2["time_s"].iloc[0]) if len(r2) else float("nan")
    m["rcv2_next_pkt_s"] = float(rtt["rcv2"]["time_s"].iloc[0]) if len(rtt["rcv2"]) else float("nan")
    m["rcv2_first_R_ms"] = float(rtt["rcv2"]["sample_s"].iloc[0]) * 1e3 if len(rtt["rcv2"]) else float("nan")
    r1 = r0[r0["host"] == "rcv1"]
    m["rcv1_r0_s"] = float(r1["time_s"].iloc[0]) if len(r1) else float("nan")
    if late is not None and (late / "source" / "tfmcc_fb.csv").exists():
        lf = feedback(late)
        lf = lf[(lf["host"] == "rcv1") & (lf["round"] == 0)]
        m["rcv1_timer_r0_s"] = float(lf["time_s"].iloc[0]) if len(lf) else float("nan")
    cap = captured(run)
    m["rcv1_round1_pkt_s"] = cap["at_rcv1_after"](m["rcv2_r0_s"])
    m["rcv2_timer_r0_after_first_pkt_s"] = m["rcv2_r0_s"] - cap["first_sent"]
    m["rcv1_timer_r0_after_first_pkt_s"] = m.get("rcv1_timer_r0_s", float("nan")) - cap["rcv1_first"]
    m["clr_at_rcv2_next_pkt"] = clr_at(run, m["rcv2_next_pkt_s"] - 1e-6)
    floor = rate[rate["bps"] <= FLOOR_BPS * (1 + 1e-6)]
    m["floor_s"] = float(floor["time_s"].iloc[0]) if len(floor) else float("nan")
    by = fb[np.isclose(fb["time_s"], m["floor_s"], atol=1e-6)]
    m["floor_by"] = str(by["host"].iloc[0]) if len(by) else ""
    m["ss_peak_kbps"] = float(rate[rate["time_s"] < m["floor_s"]]["bps"].max()) / 1e3
    m["rcv1_first_R_s"] = float(rtt["rcv1"]["time_s"].iloc[0]) if len(rtt["rcv1"]) else float("nan")
    m["rcv1_first_R_ms"] = float(rtt["rcv1"]["sample_s"].iloc[0]) * 1e3 if len(rtt["rcv1"]) else float("nan")
    for h in ("rcv1", "rcv2"):
        rep = pd.read_csv(run / f"rx_{h}" / "tfmcc_receiver_report.csv")
        lossy = rep[rep["loss_event_rate"] > 0]
        m[f"{h}_first_p_report_s"] = float(lossy["time_s"].iloc[0]) if len(lossy) else float("nan")
        m[f"{h}_first_p"] = float(lossy["loss_event_rate"].iloc[0]) if len(lossy) else float("nan")
        m[f"{h}_first_p_X_kbps"] = (float(rate[rate["time_s"] <= m[f"{h}_first_p_report_s"]]["bps"].iloc[-1]) / 1e3
                                    if len(lossy) else float("nan"))
    m["ss_end_s"] = float(counts["slowstart_end_s"]) if counts.get("slowstart_end_s") is not None else float("nan")
    lossy = fb[fb["loss_event_rate"] > 0]
    m["ss_end_by"] = str(lossy["host"].iloc[0]) if len(lossy) else ""
    m["ss_end_p"] = float(lossy["loss_event_rate"].iloc[0]) if len(lossy) else float("nan")
    after = rate[rate["time_s"] > m["floor_s"]]
    m["after_floor_peak_kbps"] = float(after["bps"].max()) / 1e3 if len(after) else float("nan")
    nxt = rounds[rounds["time_s"] >= m["floor_s"] - 1e-6]
    m["round_end_after_floor_s"] = float(nxt["time_s"].iloc[0]) if len(nxt) else float("nan")
    m["rmax_after_floor_s"] = float(nxt["rmax_s"].iloc[0]) if len(nxt) else float("nan")
    t1 = rep1["time_s"].to_numpy()
    t1 = t1[(t1 >= m["floor_s"]) & (t1 <= m["floor_s"] + SILENCE_SPAN_S)]
    k = int(np.argmax(np.diff(t1))) if len(t1) > 1 else -1
    m["rcv1_silent_from_s"] = float(t1[k]) if k >= 0 else float("nan")
    m["rcv1_silent_to_s"] = float(t1[k + 1]) if k >= 0 else float("nan")
    tj = run / "twin.json"
    if tj.exists():
        t = json.loads(tj.read_text())
        m["share"] = float(t["share"])
        m["rate_rcv1_kbps"] = float(t["scheme_mean_bps"]) / 1e3
        m.update({f"share_w{k}": float(v) for k, v in enumerate(t["window_shares"])})
    return m


def outcome(m: dict) -> str:
    """How the first slowstart ended against the first floor (the module's docstring)."""
    if not m["ss_end_s"] < float("inf") or m["ss_end_s"] >= m["floor_s"] + FLOOR_GAP_S:
        return "ends after the floor's next packet (escape)"
    if m["ss_end_s"] < m["floor_s"]:
        return "ends before the floor"
    return "ends after the floor, before its next packet"


def shift_table(out: Path, seed: int) -> pd.DataFrame:
    rows = []
    for where in sorted((out / "shift" / f"seed-{seed}").glob("d*"), key=lambda p: int(p.name[1:])):
        m = milestones(where)
        rows.append({"seed": seed, "shift_ms": int(where.name[1:]), "clr_at_rcv2_next_pkt": m["clr_at_rcv2_next_pkt"],
                     "outcome": outcome(m), "share": m.get("share", float("nan"))})
    return pd.DataFrame(rows)


# ------------------------------------------------------------------ the figure


def plot(out: Path, seeds: list[int], path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(3, len(seeds), figsize=(4.2 * len(seeds), 8.0), dpi=110, sharey="row", squeeze=False)
    colors = {"rcv1": "tab:blue", "rcv2": "tab:orange"}
    for j, seed in enumerate(seeds):
        run = out / f"seed-{seed}"
        rate = pd.read_csv(run / "source" / "tfmcc_rate.csv")
        fb = feedback(run)
        m = milestones(run, out / f"seed-{seed}-rcv2-late")
        a1, a2, a3 = axes[0][j], axes[1][j], axes[2][j]
        for a in (a1, a3):
            a.step(rate["time_s"], rate["bps"] / 1e3, where="post", color="k", lw=1.0, label="sending rate X")
        for h, g in fb.groupby("host"):
            clr = g["from_clr"]
            a1.plot(g["time_s"][clr], g["rate_bps"][clr] / 1e3, "o", ms=2.5, color=colors[h], label=f"X_r of {h} as CLR")
            a1.plot(g["time_s"][~clr], g["rate_bps"][~clr] / 1e3, "x", ms=4, color=colors[h], label=f"X_r of {h}, not CLR")
            rep = pd.read_csv(run / f"rx_{h}" / "tfmcc_receiver_report.csv")
            a2.plot(rep["time_s"], rep["rtt_s"] * 1e3, ".", ms=3, color=colors[h], label=f"R in {h}'s reports")
        rounds = pd.read_csv(run / "source" / "tfmcc_round.csv")
        a2.step(rounds["time_s"], rounds["rmax_s"] * 1e3, where="post", color="tab:green", lw=1.0, label="R_max (rounds)")
        for a in (a1, a2):
            a.set_xlim(10, 30)
            a.set_xticks([10, 15, 20, 25, 30])
            for t, ls in ((m["rcv2_r0_s"], ":"), (m["floor_s"], "--"), (m["ss_end_s"], "-.")):
                a.axvline(t, color="0.4", lw=0.7, ls=ls)
        a1.set_title(f"seed {seed}: share {m.get('share', float('nan')):.3f}", fontsize=9)
        a3.set_xlabel("time from the twin's start (s); TFMCC from 10 s")
        for a in (a1, a2, a3):
            a.set_yscale("log")
            a.grid(True, alpha=0.3)
    axes[0][0].set_ylabel("kb/s (10-30 s)")
    axes[1][0].set_ylabel("R, R_max (ms)")
    axes[2][0].set_ylabel("X, kb/s (whole run)")
    axes[0][0].legend(fontsize=6, loc="lower right")
    axes[1][0].legend(fontsize=6, loc="lower right")
    fig.suptitle("net-peers' TFMCC twin, TCP first (reno, cubic, bbr): dotted rcv2's round-0 report, "
                 "dashed the first floor, dash-dot the first report with a loss (slowstart's end)", fontsize=8)
    fig.tight_layout()
    fig.savefig(path)
    plt.close(fig)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("out", type=Path)
    ap.add_argument("--run", action="store_true", help="compute the twins and ablations into OUT first")
    ap.add_argument("--seeds", default="1,2,3")
    ap.add_argument("--shifts", default="", help="START:STOP:STEP in ms (with --run: run them)")
    ap.add_argument("--csv", type=Path)
    ap.add_argument("--plot", type=Path)
    a = ap.parse_args(argv)
    seeds = [int(s) for s in a.seeds.split(",") if s]
    shifts: list[int] = []
    if a.shifts:
        lo, hi, step = (int(x) for x in a.shifts.split(":"))
        shifts = list(range(lo, hi + 1, step))
    if a.run:
        run_twins(a.out, seeds, shifts)
    missing = [s for s in seeds if not (a.out / f"seed-{s}" / "source" / "tfmcc_fb.csv").exists()]
    if missing:
        ap.error(f"no records for seeds {missing} in {a.out} (run with --run)")
    df = pd.DataFrame([{"seed": s, **milestones(a.out / f"seed-{s}", a.out / f"seed-{s}-rcv2-late")} for s in seeds])
    with pd.option_context("display.width", 250, "display.max_columns", 60, "display.max_rows", 80):
        print(df.set_index("seed").T.to_string(float_format=lambda x: f"{x:.5g}"))
        if (a.out / "shift").exists():
            sh = pd.concat([shift_table(a.out, s) for s in seeds], ignore_index=True)
            print()
            print(sh.groupby(["seed", "clr_at_rcv2_next_pkt", "outcome"]).agg(runs=("share", "size"), share_min=("share", "min"),
                                                                        share_max=("share", "max")).to_string())
            print()
            print(sh.pivot(index="shift_ms", columns="seed", values="share").to_string(float_format=lambda x: f"{x:.3f}"))
    if a.csv:
        df.to_csv(a.csv, index=False)
    if a.plot:
        plot(a.out, seeds, a.plot)
    return 0


if __name__ == "__main__":
    sys.exit(main())
