"""castlab's LE-SBCC (AIMD) against kernel TCP on net-peers' testbed, beside its simulated twin,
with the source's own records on both sides: rate, loss, RTT samples, SRTT, LIs, reductions.

    python bench/lesbcc_net_focus.py OUT [--duration 60] [--seed 1] [--tcp reno,cubic,bbr]
                                         [--hold default|SECONDS ...] [--twin-only] [--serialising]

One run per `--hold` value (the source's `rtt_run_hold`; "default" is its default) on
`castlab.experiments.tfmcc.peers`' testbed and set-up (`peers.run_case`: 1 Mb/s tbf + pfifo 50,
kernel routers, TCP flows started once the source sends), then the twin of each (the same
scenario as `peers.twin`: no delay per link, the testbed's token bucket on the last hops, or with
`--serialising` last hops that serialise, the ablation; the source's records read back). The
testbed part needs root,
iproute2 and iperf3 (net-peers' needs); `--twin-only` runs the simulator alone. Writes OUT/NAME/
per testbed run (peers' files, the source's `lesbcc_*.csv`) and prints one block per run.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
from pathlib import Path

import numpy as np
import pandas as pd


def twin(duration: float, seed: int, hold: str, tcp: list[str], serialising: bool = False) -> dict:
    from castlab.experiments.tcp.net import linux_twin_flow
    from castlab.experiments.tfmcc import peers
    from castlab.scenario import Scenario

    cfg: dict = {"policy": "aimd"}
    if hold != "default":
        cfg["rtt_run_hold"] = float(hold)
    hop = peers.TESTBED_HOP_DELAY_S  # the testbed's delay per link, as peers.twin's
    link = lambda n, a, b, r: {"name": n, "a": a, "b": b, "rate": r, "delay": hop, "queue_limit": peers.QUEUE_PKTS}
    # the testbed's token bucket on the last hops, as peers.twin's (serialising: the ablation)
    bucket = {} if serialising else {"tbf_burst": peers.TESTBED_TBF_BURST_BYTES}
    d = {"name": "lesbcc focus twin", "duration": duration, "nodes": ["src", "r1", "rcv1", "rcv2"],
         "links": [link("up", "src", "r1", 100e6), {**link("b1", "r1", "rcv1", peers.LINK_BPS), **bucket},
                   {**link("b2", "r1", "rcv2", peers.LINK_BPS), **bucket}],
         "sessions": [{"name": "m", "source": "src", "kind": "lesbcc", "config": cfg}],
         "receivers": [{"name": h, "node": h, "session": "m", "protocol": "pgm"} for h in ("rcv1", "rcv2")],
         "tcp": [{"name": f"tcp{k}", "src": "src", "dst": "rcv1", "start": 0.1 * k, **linux_twin_flow(a)}
                 for k, a in enumerate(tcp)]}
    s = Scenario.from_dict(d)
    sim = s.build(seed)
    sim.run(until=duration)
    rows = {r["name"]: r for r in s.flow_table(sim)}
    src = sim.scenario_handles.sessions["m"]["source"]
    st, tr = sim.lesbcc_stats(src), sim.lesbcc_trace(src)
    tcp_bps = [float(rows[f"tcp{k}"]["mean_rate_bps"]) for k in range(len(tcp))]
    rate = float(rows["rcv1"]["mean_rate_bps"])
    return {"rate_bps": rate, "loss": float(rows["rcv1"]["loss"]), "tcp_bps": dict(zip(tcp, tcp_bps)),
            "share": rate / float(np.mean(tcp_bps)), "stats": st,
            "samples": pd.Series(tr["rtt_sample_s"]), "srtt_end": float(tr["srtt_s"][-1]) if len(tr["srtt_s"]) else None}


def testbed(out: Path, duration: float, seed: int, hold: str, tcp: list[str]) -> dict:
    from castlab.experiments.tfmcc import peers

    extra = ["--policy", "aimd"] + (["--config", f"rtt_run_hold={hold}"] if hold != "default" else [])
    name = f"lesbcc-aimd-hold-{hold}"
    peers.SCHEMES[name] = dataclasses.replace(peers.SCHEMES["lesbcc-aimd"], name=name,
                                              sender=peers._castlab_tx("lesbcc-source", *extra))
    rec = peers.run_case(out / f"{name}-{'-'.join(tcp)}", seed, duration, name, tuple(tcp), lead=0.0)
    where = out / f"{name}-{'-'.join(tcp)}" / "source"
    st = json.loads((where / "lesbcc_stats.json").read_text())
    rtt = pd.read_csv(where / "lesbcc_rtt.csv")
    return {"rate_bps": rec["scheme_mean_bps"], "loss": rec["loss"], "tcp_bps": rec["tcp_means_bps"],
            "share": rec["share"], "stats": st, "samples": rtt["sample_s"],
            "srtt_end": float(rtt["srtt_s"].iloc[-1]) if len(rtt) else None}


def show(label: str, r: dict) -> None:
    st, s = r["stats"], r["samples"]
    keys = ("odata_sent", "lis", "les", "rate_reductions", "rate_increases", "rtt_samples", "rtt_pruned",
            "rtt_ambiguous")
    print(f"{label}: share {r['share']:.3f}, rate at rcv1 {r['rate_bps'] / 1e3:.1f} kb/s, loss {r['loss']:.3f}, "
          f"TCP {', '.join(f'{k} {v / 1e3:.0f}' for k, v in r['tcp_bps'].items())} kb/s")
    print("  " + ", ".join(f"{k} {st[k]}" for k in keys if k in st))
    if len(s):
        print(f"  RTT samples offered {len(s)}: median {s.median():.3f} s, p90 {s.quantile(0.9):.3f} s; "
              f"SRTT at the end {r['srtt_end']:.3f} s")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("out", type=Path)
    ap.add_argument("--duration", type=float, default=60.0)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--tcp", default="reno")
    ap.add_argument("--hold", nargs="+", default=["default"])
    ap.add_argument("--twin-only", action="store_true")
    ap.add_argument("--serialising", action="store_true", help="the twin's last hops serialise (no token bucket)")
    a = ap.parse_args()
    tcp = a.tcp.split(",")
    for hold in a.hold:
        if not a.twin_only:
            show(f"testbed, rtt_run_hold {hold}, vs {a.tcp}", testbed(a.out, a.duration, a.seed, hold, tcp))
        kind = "serialising twin" if a.serialising else "twin"
        show(f"{kind}, rtt_run_hold {hold}, vs {a.tcp}", twin(a.duration, a.seed, hold, tcp, a.serialising))


if __name__ == "__main__":
    main()
