"""net-tcp-vs-sim's reno+bbr: what BBR's PROBE_RTT measures beside reno, kernel against twin.

    python bench/reno_bbr_probe_rtt.py OUT [--runs 3] [--duration 30] [--seed 1]

Each run is the "reno+bbr" case (``net.kernel_case``: two iperf3 flows src -> rcv1 through the
10 Mb/s tbf and 30-packet pfifo, ``ss -tin`` every 0.1 s) with dumpcap on src's port, and the
same case's twin (``net.twin_scenario``, seeded `seed` + run). For every PROBE_RTT of the bbr
flow after the first 2 s (kernel: ss samples with bbr's cwnd at 4 or less, each episode from its
first such sample; twin: state code 2):
- the lowest RTT sample bbr took in it and until 0.5 s after it began (kernel: from the capture,
  an ACK's time less the departure of the newest segment it acknowledges, segments sent once
  only; twin: the trace's RTT samples), and the min RTT bbr's filter held 1 s later;
- reno's segments in flight then (kernel: from the capture, the highest byte sent less the
  cumulative ACK and the bytes SACKed above it, in segments, averaged over the ACKs of reno's in
  the episode; twin: reno's cwnd, which RFC 6675's recovery keeps at ssthresh, sampled every 0.1
  s in the episode).
Writes OUT/episodes.csv (a row per episode) and OUT/run.json (the gap between the two clients,
``net.PAIR_START_GAP_S``, which the twins and the tools reading OUT take from it; a folder
without run.json was recorded with the clients launched together,
``net.RECORDED_PAIR_START_GAP_S``), and prints the episodes. Needs root, the testbed, iperf3, ss
and dumpcap.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd

MSS = 1448
WINDOW_S = 0.5


def capture_flows(pcap: Path, ports: list[int]) -> dict[int, dict]:
    """Per server port: the data connection's departures (time, end byte, once-sent) and ACKs
    (time, cumulative ACK, SACKed bytes above it)."""
    flt = " or ".join(f"tcp.port == {p}" for p in ports)
    r = subprocess.run(["tshark", "-r", str(pcap), "-Y", flt, "-T", "fields", "-E", "separator=;", "-e",
                        "frame.time_epoch", "-e", "tcp.srcport", "-e", "tcp.dstport", "-e", "tcp.seq", "-e", "tcp.ack",
                        "-e", "tcp.len", "-e", "tcp.options.sack_le", "-e", "tcp.options.sack_re"],
                       capture_output=True, text=True, check=True)
    rows = [ln.split(";") for ln in r.stdout.splitlines() if ln.count(";") == 7]
    df = pd.DataFrame(rows, columns=["t", "sport", "dport", "seq", "ack", "len", "sle", "sre"])
    for c in ("t", "sport", "dport", "seq", "ack", "len"):
        df[c] = pd.to_numeric(df[c], errors="coerce")
    out = {}
    for p in ports:
        data = df[(df.dport == p) & (df.len > 0)]
        if not len(data):
            continue
        conn = data.groupby("sport")["len"].sum().idxmax()
        d = data[data.sport == conn].sort_values("t")
        end = (d.seq + d.len).to_numpy(float)
        counts = pd.Series(end).value_counts()
        once = np.array([counts[e] == 1 for e in end])
        a = df[(df.sport == p) & (df.dport == conn)].sort_values("t")
        sacked = []
        for le, re_, ack in zip(a.sle, a.sre, a.ack):
            if not le:
                sacked.append(0.0)
                continue
            blocks = [(float(x), float(y)) for x, y in zip(le.split(","), re_.split(",")) if x and y]
            sacked.append(sum(max(0.0, y - max(x, ack)) for x, y in blocks))
        out[p] = {"tx_t": d.t.to_numpy(float), "tx_end": end, "once": once, "ack_t": a.t.to_numpy(float),
                  "ack": a.ack.to_numpy(float), "sacked": np.array(sacked)}
    return out


def rtt_samples(f: dict) -> tuple[np.ndarray, np.ndarray]:
    """(time, RTT) per ACK that acknowledges new data, from the newest segment it covers that
    was sent once."""
    order = np.argsort(f["tx_end"], kind="stable")
    ends, ts, once = f["tx_end"][order], f["tx_t"][order], f["once"][order]
    t_out, r_out, prev = [], [], -1.0
    for t, ack in zip(f["ack_t"], f["ack"]):
        if ack <= prev:
            continue
        prev = ack
        k = np.searchsorted(ends, ack, side="right") - 1
        if k >= 0 and once[k]:
            t_out.append(t)
            r_out.append(t - ts[k])
    return np.array(t_out), np.array(r_out)


def in_flight(f: dict) -> tuple[np.ndarray, np.ndarray]:
    """(time, segments in flight) at each ACK: highest byte sent less the cumulative ACK and the
    bytes SACKed above it."""
    sent = np.maximum.accumulate(f["tx_end"])
    k = np.searchsorted(f["tx_t"], f["ack_t"], side="right") - 1
    hi = np.where(k >= 0, sent[np.maximum(k, 0)], 0.0)
    return f["ack_t"], np.maximum(hi - f["ack"] - f["sacked"], 0.0) / MSS


def episodes(t: np.ndarray, probe: np.ndarray) -> list[float]:
    """Start times of runs of True in `probe` (samples at times `t`), one per run."""
    out, prev = [], False
    for ti, p in zip(t, probe):
        if p and not prev:
            out.append(float(ti))
        prev = bool(p)
    return out


def recorded_gap(runs: Path) -> float:
    """The gap between the two clients of the runs in `runs` (this tool's OUT): run.json's, or
    for a folder recorded before run.json was written the clients launched together."""
    from castlab.experiments.tcp import net

    f = runs / "run.json"
    return float(json.loads(f.read_text())["pair_start_gap_s"]) if f.exists() else net.RECORDED_PAIR_START_GAP_S


def kernel_run(tb, where: Path, duration: float, gap: float) -> list[dict]:
    from castlab.experiments.tcp import net

    where.mkdir(parents=True, exist_ok=True)
    pcap = where / "src.pcap"
    with net.src_capture(tb, pcap):
        k = net.kernel_case(tb, where, ("reno", "bbr"), duration, gap)
    if k["errors"]:
        raise RuntimeError(f"{where}: {'; '.join(k['errors'])}")
    ports = [net.PORT, net.PORT + 1]
    conns = net.data_connections(net.parse_ss((where / "ss.txt").read_text()), ports)
    bbr_ss = conns[net.PORT + 1]
    flows = capture_flows(pcap, ports)
    t0 = float(min(f["tx_t"][0] for f in flows.values()))
    bt, br = rtt_samples(flows[net.PORT + 1])
    rt, rf = in_flight(flows[net.PORT])
    rows = []
    for e in episodes(bbr_ss["t"].to_numpy(float), (bbr_ss["cwnd"] <= 4).to_numpy()):
        if e - t0 < 2.0:
            continue
        m = (bt >= e - 0.1) & (bt <= e + WINDOW_S)
        mr = (rt >= e - 0.1) & (rt <= e + WINDOW_S)
        later = bbr_ss[bbr_ss["t"] >= e + 1.0]["bbr_mrtt_ms"]
        rows.append({"side": "kernel", "t_s": e - t0, "bbr_lowest_rtt_ms": float(br[m].min() * 1e3) if m.any() else np.nan,
                     "bbr_filter_after_ms": float(later.iloc[0]) if len(later) else np.nan,
                     "reno_in_flight_segs": float(rf[mr].mean()) if mr.any() else np.nan})
    return rows


def twin_traces(duration: float, seed: int, base_rtt_s: float, gap: float) -> tuple[dict, dict, list[float]]:
    """The reno+bbr case's twin run for `duration` s, bbr starting `gap` s after reno: reno's and
    bbr's traces, and the times bbr entered PROBE_RTT (state code 2)."""
    from castlab.experiments.tcp import net
    from castlab.scenario import Scenario

    s = Scenario.from_dict(net.twin_scenario(("reno", "bbr"), duration, base_rtt_s, gap=gap))
    sim = s.build(seed)
    sim.run(duration)
    reno = sim.tcp_trace(sim.scenario_handles.tcp["f0"])
    bbr = sim.tcp_trace(sim.scenario_handles.tcp["f1"])
    st, code = bbr["state_time_ns"] / 1e9, bbr["state_code"]
    starts = [float(st[i]) for i in range(len(code)) if int(code[i]) == 2 and (i == 0 or int(code[i - 1]) != 2)]
    return reno, bbr, starts


def twin_run(duration: float, seed: int, base_rtt_s: float, gap: float) -> list[dict]:
    from castlab.experiments.tcp import net

    reno, bbr, starts = twin_traces(duration, seed, base_rtt_s, gap)
    rt, rr = bbr["rtt_time_ns"] / 1e9, bbr["rtt_ns"] / 1e9
    ct, cw = reno["cc_time_ns"] / 1e9, reno["cwnd_bytes"] / MSS
    mt, mv = net.bbr_min_rtt(bbr)
    rows = []
    for e in starts:
        if e < 2.0:
            continue
        m = (rt >= e - 0.1) & (rt <= e + WINDOW_S)
        grid = np.arange(e - 0.1, e + WINDOW_S, 0.1)
        k = np.searchsorted(ct, grid, side="right") - 1
        j = np.searchsorted(mt / 1e9, e + 1.0, side="right") - 1
        rows.append({"side": "twin", "t_s": e, "bbr_lowest_rtt_ms": float(rr[m].min() * 1e3) if m.any() else np.nan,
                     "bbr_filter_after_ms": float(mv[j]) if j >= 0 else np.nan,
                     "reno_in_flight_segs": float(np.mean(cw[np.maximum(k, 0)]))})
    return rows


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("out", type=Path)
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--duration", type=float, default=30.0)
    ap.add_argument("--seed", type=int, default=1)
    a = ap.parse_args(argv)
    if a.runs < 1 or a.duration < 12:
        ap.error("--runs at least 1, --duration at least 12 s (a PROBE_RTT comes 10 s in)")
    from castlab.experiments.tcp import net

    why = net.missing(("dumpcap", "tshark"))
    if why:
        print(f"reno_bbr_probe_rtt: {why}", file=sys.stderr)
        return 2
    a.out.mkdir(parents=True, exist_ok=True)
    gap = net.PAIR_START_GAP_S
    (a.out / "run.json").write_text(json.dumps({"pair_start_gap_s": gap}) + "\n")
    rows = []
    with net.testbed("p") as tb:
        for r in range(a.runs):
            base = float(np.nanmin(net.ping_rtts(tb, "src", "rcv1")))
            both = kernel_run(tb, a.out / f"run-{r + 1}", a.duration, gap) + twin_run(a.duration, a.seed + r, base, gap)
            for row in both:
                rows.append({"run": r + 1, **row})
            pd.DataFrame(rows).to_csv(a.out / "episodes.csv", index=False)
            time.sleep(0.5)
    with pd.option_context("display.width", 200):
        print(pd.DataFrame(rows).round(2).to_string(index=False))
    return 0


if __name__ == "__main__":
    sys.exit(main())
