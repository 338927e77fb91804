"""Whether the kernel's reno is paced, and what BBR's min-RTT filter then holds, on net-tcp-vs-sim's
reno+bbr, kernel against twin.

    python bench/kernel_reno_pacing.py RUNS OUT [--seed 1] [--base-rtt 2e-4]

RUNS is the output folder of ``bench/reno_bbr_probe_rtt.py`` (its ``run-N/`` folders: the kernel's
reno+bbr case with ``src.pcap``, dumpcap on src's port, and ``ss.txt``); it is only read. Per run:
- ``lags.csv``, kernel only, per flow (5201 reno, 5202 bbr): for every ACK that acknowledges new
  data and is followed by a departure of the flow before its next such ACK, the time from the ACK
  to that departure; its percentiles and the fraction over 1 ms. A flow that sends when its ACKs
  come (an unpaced reno) answers within microseconds; one that is paced waits for its pacing
  timer when the rate, 1.2 cwnd/srtt in Linux, is below what the ACKs release. Beside it, before
  and after the second flow's first PROBE_RTT (its start plus ``net.LATE_AFTER_SECOND_S``; the
  first 2 s left out): the largest burst (departures each under 50 µs after the one before) and
  the largest cwnd ss showed. Linux lets one skb take at most half the window (``tcp_cwnd_test``).
- ``intervals.csv``, kernel and twin (``net.twin_scenario`` with the round trip `base-rtt`, seeded
  `seed` + run - 1, as that tool seeds its twins, bbr starting as the recorded client did
  (``recorded_gap``), for as long as the kernel's run): the stretches
  between two of bbr's PROBE_RTTs after the first 2 s (kernel: ss samples with bbr's cwnd at 4 or
  less; twin: state code 2), each with the min RTT bbr's filter held (median), bbr's and reno's
  median cwnd (segments), the fraction of the time reno's cwnd was 4 or less, and reno's
  throughput over bbr's (bytes acknowledged), from 0.5 s after the PROBE_RTT.
Prints both. Simulated and read only: no root, no testbed; tshark reads the captures.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np
import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parent))

import reno_bbr_probe_rtt as probe  # noqa: E402

MSS = 1448
SETTLE_S = 0.5  # after a PROBE_RTT, the filter has its new value
STEP_S = 0.1  # the grid the series are read on (ss's sampling interval)


def departure_lags(flow: dict) -> np.ndarray:
    """Seconds from each ACK of new data to the flow's next departure, where that departure
    comes before the flow's next ACK of new data. `flow`: ``tx_t`` (departure times, sorted),
    ``ack_t`` and ``ack`` (cumulative ACKs, in time order)."""
    tx, at, ack = (np.asarray(flow[k], float) for k in ("tx_t", "ack_t", "ack"))
    new = np.r_[len(ack) > 0, np.diff(ack) > 0][: len(ack)]
    at = at[new]
    k = np.searchsorted(tx, at, side="right")
    has = k < len(tx)
    nxt = np.r_[at[1:], np.inf][has]
    dep = tx[k[has]]
    return (dep - at[has])[dep < nxt]


def lag_row(flow: dict) -> dict:
    lag = departure_lags(flow) * 1e3
    p = np.percentile(lag, [50, 90, 99]) if len(lag) else [np.nan] * 3
    return {"answered_acks": len(lag), "lag_p50_ms": p[0], "lag_p90_ms": p[1], "lag_p99_ms": p[2],
            "over_1ms": float(np.mean(lag > 1.0)) if len(lag) else np.nan}


BURST_GAP_S = 50e-6  # departures closer than this left as one skb (the veth sends a segment in 1.2 us)


def largest_burst(tx_t: np.ndarray, lo: float, hi: float) -> int:
    """The most departures in [lo, hi) each under BURST_GAP_S after the one before (0 if none)."""
    t = np.asarray(tx_t, float)
    t = t[(t >= lo) & (t < hi)]
    if not len(t):
        return 0
    best = run = 1
    for g in np.diff(t):
        run = run + 1 if g < BURST_GAP_S else 1
        best = max(best, run)
    return best


def burst_row(tx_t: np.ndarray, ss: pd.DataFrame, late: float, end: float) -> dict:
    """``largest_burst`` and ss's largest cwnd in [2 s, late) and [late, end] (times on one
    clock)."""
    out = {}
    for tag, lo, hi in (("early", 2.0, late), ("late", late, end + 1e-9)):
        c = ss[(ss["t"] >= lo) & (ss["t"] < hi)]["cwnd"] if len(ss) else pd.Series(dtype=float)
        out[f"burst_{tag}"] = largest_burst(tx_t, lo, hi)
        out[f"cwnd_max_{tag}"] = float(c.max()) if len(c) else np.nan
    return out


def _step(t: np.ndarray, v: np.ndarray, grid: np.ndarray) -> np.ndarray:
    """The last value at or before each grid time (NaN before the first)."""
    k = np.searchsorted(t, grid, side="right") - 1
    return np.where(k >= 0, np.asarray(v, float)[np.maximum(k, 0)], np.nan)


def intervals(probes: list[float], end: float, t: dict, v: dict) -> list[dict]:
    """The stretches between PROBE_RTTs (start times `probes`, the last ending at `end`): per
    stretch the medians of the series ``v[name]`` (read at ``t[name]``) on a 0.1 s grid from
    ``SETTLE_S`` after its start, and reno's acknowledged bytes over bbr's across it. Series:
    ``filter_ms``, ``bbr_cwnd``, ``reno_cwnd`` (segments), ``bbr_acked``, ``reno_acked`` (bytes)."""
    edges = [p for p in probes if p > 2.0] + [end]
    rows = []
    for a, b in zip(edges[:-1], edges[1:]):
        n = int(np.floor((b - a - SETTLE_S) / STEP_S + 1e-9))  # grid times before b, on whole steps
        grid = a + SETTLE_S + STEP_S * np.arange(max(n, 0))
        if len(grid) < 2:
            continue
        s = {k: _step(np.asarray(t[k], float), v[k], grid) for k in v}
        bbr = s["bbr_acked"][-1] - s["bbr_acked"][0]
        rows.append({"from_s": a, "to_s": b, "filter_ms": float(np.nanmedian(s["filter_ms"])),
                     "bbr_cwnd": float(np.nanmedian(s["bbr_cwnd"])), "reno_cwnd": float(np.nanmedian(s["reno_cwnd"])),
                     "reno_cwnd_le4": float(np.mean(s["reno_cwnd"] <= 4)),
                     "reno_over_bbr": float((s["reno_acked"][-1] - s["reno_acked"][0]) / bbr) if bbr > 0 else np.nan})
    return rows


def kernel_intervals(where: Path) -> list[dict]:
    from castlab.experiments.tcp import net

    conns = net.data_connections(net.parse_ss((where / "ss.txt").read_text()), [net.PORT, net.PORT + 1])
    b, r = conns[net.PORT + 1], conns[net.PORT]
    t0 = float(min(b["t"].min(), r["t"].min()))
    bt, rt = b["t"].to_numpy(float) - t0, r["t"].to_numpy(float) - t0
    probes = [e - t0 for e in probe.episodes(b["t"].to_numpy(float), (b["cwnd"] <= 4).to_numpy())]
    t = {"filter_ms": bt, "bbr_cwnd": bt, "bbr_acked": bt, "reno_cwnd": rt, "reno_acked": rt}
    v = {"filter_ms": b["bbr_mrtt_ms"].to_numpy(float), "bbr_cwnd": b["cwnd"].to_numpy(float),
         "bbr_acked": b["bytes_acked"].to_numpy(float), "reno_cwnd": r["cwnd"].to_numpy(float),
         "reno_acked": r["bytes_acked"].to_numpy(float)}
    return intervals(probes, float(max(bt.max(), rt.max())), t, v)


def twin_intervals(duration: float, seed: int, base_rtt_s: float, gap: float) -> list[dict]:
    from castlab.experiments.tcp import net

    reno, bbr, probes = probe.twin_traces(duration, seed, base_rtt_s, gap)
    mt, mv = net.bbr_min_rtt(bbr)
    t = {"filter_ms": mt / 1e9, "bbr_cwnd": bbr["cc_time_ns"] / 1e9, "bbr_acked": bbr["ack_time_ns"] / 1e9,
         "reno_cwnd": reno["cc_time_ns"] / 1e9, "reno_acked": reno["ack_time_ns"] / 1e9}
    v = {"filter_ms": mv, "bbr_cwnd": bbr["cwnd_bytes"] / MSS, "bbr_acked": bbr["acked_bytes"],
         "reno_cwnd": reno["cwnd_bytes"] / MSS, "reno_acked": reno["acked_bytes"]}
    return intervals(probes, duration, t, v)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("runs", type=Path)
    ap.add_argument("out", type=Path)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--base-rtt", type=float, default=2e-4, help="the twins' round trip without queue, s")
    a = ap.parse_args(argv)
    if not 0 < a.base_rtt < 1:
        ap.error(f"--base-rtt {a.base_rtt} s: give the path's round trip without queue, between 0 and 1 s")
    from castlab.experiments.tcp import net

    folders = sorted(p for p in a.runs.glob("run-*") if (p / "src.pcap").exists())
    if not folders:
        ap.error(f"{a.runs}: no run-N/src.pcap (bench/reno_bbr_probe_rtt.py's output)")
    a.out.mkdir(parents=True, exist_ok=True)
    gap = probe.recorded_gap(a.runs)
    lags, spans = [], []
    for where in folders:
        run = int(where.name.split("-")[1])
        flows = probe.capture_flows(where / "src.pcap", [net.PORT, net.PORT + 1])
        conns = net.data_connections(net.parse_ss((where / "ss.txt").read_text()), [net.PORT, net.PORT + 1])
        t0 = float(min(f["tx_t"][0] for f in flows.values()))
        s0 = float(min(c["t"].min() for c in conns.values()))
        end = float(max(f["tx_t"][-1] for f in flows.values())) - t0
        for port, name in ((net.PORT, "reno"), (net.PORT + 1, "bbr")):
            ss = conns[port].assign(t=conns[port]["t"] - s0)
            lags.append({"run": run, "flow": name, **lag_row(flows[port]),
                         **burst_row(flows[port]["tx_t"] - t0, ss, gap + net.LATE_AFTER_SECOND_S, end)})
        duration = float(net.data_connections(net.parse_ss((where / "ss.txt").read_text()), [net.PORT])[net.PORT]
                         ["t"].pipe(lambda s: s.max() - s.min()))
        spans += [{"run": run, "side": "kernel", **r} for r in kernel_intervals(where)]
        twin = twin_intervals(round(duration), a.seed + run - 1, a.base_rtt, gap)
        spans += [{"run": run, "side": "twin", **r} for r in twin]
    lags, spans = pd.DataFrame(lags), pd.DataFrame(spans)
    lags.to_csv(a.out / "lags.csv", index=False)
    spans.to_csv(a.out / "intervals.csv", index=False)
    with pd.option_context("display.width", 200):
        print(lags.round(3).to_string(index=False))
        print(spans.round(2).to_string(index=False))
    return 0


if __name__ == "__main__":
    sys.exit(main())
