"""Many NewReno flows on a 10 Mb/s dumbbell, castlab beside ns-2.35 counter by counter
(docs/fidelity/tcp.md, "100 flows against ns-2").

    python tests/ns2/tcp100_compare.py [--flows 100] [--queue 53] [--seeds 1-3] [--warm 20]
        [--end 80] [--variant newreno] [--castlab KEY=VALUE ...] [--ns2 VAR=VALUE ...]

The dumbbell is tests/ns2/dumbbell100.tcl's (that of tcp-fairness: 100 Mb/s 1 ms access links,
10 Mb/s 20 ms bottleneck with a DropTail queue, 1000-byte segments, flow starts uniform in
[0, 5] s drawn from the seed, the same times in both simulators). ns-2's agents are set to
castlab's TcpConfig defaults where they differ (dumbbell100.tcl says which); --castlab passes
TcpConfig overrides to every castlab flow, --ns2 Agent/TCP variables to every ns-2 flow, to
ablate one difference at a time.

Counters, all over (warm, end]:
- goodput: segments cumulatively acknowledged, summed over the flows (Mb/s of payload);
- delivered_again: data segments that reached a sink entirely below its in-order point (the
  sink had delivered them already; castlab's sink_duplicates, read from ns-2's bottleneck trace);
- retransmissions (segments sent again, any cause) and timeouts (retransmission-timer
  expiries: castlab's timeouts, ns-2's nrexmit_);
- drops at the bottleneck queue.
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np

SCRIPT = Path(__file__).with_name("dumbbell100.tcl")
MSS = 1000
BOTTLENECK_BPS = 10e6
START_WINDOW_S = 5.0  # tcp-fairness's start window (Rainbow §B.2)


def starts(seed: int, flows: int) -> list[float]:
    return [float(x) for x in np.random.default_rng(seed).uniform(0.0, START_WINDOW_S, flows)]


def _value(v: str):
    for cast in (int, float):
        try:
            return cast(v)
        except ValueError:
            pass
    return {"true": True, "false": False}.get(v.lower(), v)


def run_castlab(variant: str, flows: int, queue: int, warm: float, end: float, seed: int,
                overrides: dict | None = None) -> dict:
    import castlab

    sim = castlab.Simulator(seed=seed)
    sim.add_node("r1")
    sim.add_node("r2")
    bott, _ = sim.add_link("r1", "r2", BOTTLENECK_BPS, 0.020, queue_limit_pkts=queue)
    senders = []
    for i, t in enumerate(starts(seed, flows)):
        sim.add_node(f"s{i}")
        sim.add_node(f"d{i}")
        sim.add_link(f"s{i}", "r1", 100e6, 0.001, queue_limit_pkts=10_000)
        sim.add_link("r2", f"d{i}", 100e6, 0.001, queue_limit_pkts=10_000)
        senders.append(sim.add_tcp_flow(f"s{i}", f"d{i}", variant=variant, mss_bytes=MSS, start=t,
                                        **(overrides or {})))
    keys = ("snd_una", "sink_duplicates", "retransmissions", "timeouts", "fast_retransmits", "segments_sent")
    sim.run(warm)
    b = [sim.tcp_stats(a) for a in senders]
    c0 = sim.channel_stats(bott)
    sim.run(end)
    e = [sim.tcp_stats(a) for a in senders]
    c1 = sim.channel_stats(bott)
    d = {k: sum(y[k] - x[k] for x, y in zip(b, e)) for k in keys}
    acked = [(y["snd_una"] - x["snd_una"]) // MSS for x, y in zip(b, e)]
    return {"sim": "castlab", "seed": seed, "acked_segments": sum(acked),
            "goodput_mbps": sum(acked) * MSS * 8 / (end - warm) / 1e6,
            "delivered_again": d["sink_duplicates"], "retransmissions": d["retransmissions"],
            "timeouts": d["timeouts"], "fast_retransmits": d["fast_retransmits"], "segments_sent": d["segments_sent"],
            "drops": c1["drops_forced"] - c0["drops_forced"], "min_flow": min(acked), "per_flow": acked}


def run_ns2(variant: str, flows: int, queue: int, warm: float, end: float, seed: int,
            overrides: dict | None = None) -> dict:
    ns_variant = {"reno": "Reno", "newreno": "Newreno", "sack": "Sack1"}[variant]
    with tempfile.TemporaryDirectory() as tmp:
        sf = Path(tmp) / "starts"
        sf.write_text("\n".join(f"{t:.9f}" for t in starts(seed, flows)) + "\n")
        tf = Path(tmp) / "trace"
        extra = [f"{k}={v}" for k, v in (overrides or {}).items()]
        r = subprocess.run(["ns", str(SCRIPT), ns_variant, str(flows), str(queue), str(warm), str(end), str(sf),
                            str(tf), *extra], capture_output=True, text=True, timeout=600)
        if r.returncode != 0:
            raise RuntimeError(r.stderr)
        rows = [[int(float(v)) for v in line.split()[1:]] for line in r.stdout.splitlines()
                if line.startswith("flow ")]
        # The bottleneck's trace: "r" at r2 is a data segment on its way to its sink (the access
        # links never drop: 10,000-packet queues); "d" a drop at the bottleneck queue.
        nxt = [0] * flows  # each sink's in-order point (next segment expected)
        held: list[set] = [set() for _ in range(flows)]
        again = drops = 0
        with open(tf) as fh:
            for line in fh:
                f = line.split()
                ev, t = f[0], float(f[1])
                if f[4] != "tcp":
                    continue  # (the trace is of r1 -> r2 only: every tcp packet is data; ns-2's
                    # first segment, seq 0, is a 40-byte SYN-like packet with syn_ true)
                if ev == "d":
                    drops += t > warm
                    continue
                if ev != "r":
                    continue
                fid, seq = int(f[7]), int(f[10])
                if seq < nxt[fid]:
                    again += t > warm
                    continue
                held[fid].add(seq)
                while nxt[fid] in held[fid]:
                    held[fid].discard(nxt[fid])
                    nxt[fid] += 1
    # ack_ is the highest segment number acknowledged (segments count from 0): the in-order point - 1
    acked = [x[2] - x[1] for x in rows]
    return {"sim": "ns-2", "seed": seed, "acked_segments": sum(acked),
            "goodput_mbps": sum(acked) * MSS * 8 / (end - warm) / 1e6,
            "delivered_again": again, "retransmissions": sum(x[4] - x[3] for x in rows),
            "timeouts": sum(x[6] - x[5] for x in rows), "fast_retransmits": float("nan"),
            "segments_sent": sum(x[8] - x[7] for x in rows), "drops": drops, "min_flow": min(acked),
            "per_flow": acked}


COLS = ("goodput_mbps", "delivered_again", "retransmissions", "timeouts", "drops", "segments_sent", "min_flow")


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--flows", type=int, default=100)
    ap.add_argument("--queue", type=int, default=53)
    ap.add_argument("--seeds", default="1-3")
    ap.add_argument("--warm", type=float, default=20.0)
    ap.add_argument("--end", type=float, default=80.0)
    ap.add_argument("--variant", default="newreno")
    ap.add_argument("--castlab", nargs="*", default=[])
    ap.add_argument("--ns2", nargs="*", default=[])
    ap.add_argument("--only", choices=["castlab", "ns2"])
    a = ap.parse_args()
    lo, _, hi = a.seeds.partition("-")
    seeds = list(range(int(lo), int(hi or lo) + 1))
    co = {k: _value(v) for k, v in (kv.split("=", 1) for kv in a.castlab)}
    no = dict(kv.split("=", 1) for kv in a.ns2)
    runs = []
    for s in seeds:
        if a.only != "ns2":
            runs.append(run_castlab(a.variant, a.flows, a.queue, a.warm, a.end, s, co))
        if a.only != "castlab":
            runs.append(run_ns2(a.variant, a.flows, a.queue, a.warm, a.end, s, no))
    print(f"{a.flows} {a.variant} flows, queue {a.queue}, ({a.warm:g}, {a.end:g}] s, castlab {co or 'defaults'}, "
          f"ns-2 {no or 'as dumbbell100.tcl'}")
    print(f"{'sim':8s} {'seed':>4s} " + " ".join(f"{c:>16s}" for c in COLS))
    for r in runs:
        print(f"{r['sim']:8s} {r['seed']:4d} " + " ".join(f"{r[c]:16.3f}" if isinstance(r[c], float) else f"{r[c]:16d}"
                                                        for c in COLS))
    for sim in ("castlab", "ns-2"):
        rs = [r for r in runs if r["sim"] == sim]
        if rs:
            print(f"{sim:8s} {'med':>4s} " + " ".join(f"{statistics.median(r[c] for r in rs):16.3f}" for c in COLS))
    sys.stdout.flush()


if __name__ == "__main__":
    main()
