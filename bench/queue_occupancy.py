"""The bottleneck queue's occupancy over time, rebuilt from the packet logs on both sides of it,
on the testbed and in its twins: is a flow dropped more because the queue is full more often,
or because its arrivals meet the full queue more often than the time share?

    python bench/queue_occupancy.py CASE [CASE ...] --seed N [--duration 60] [--out FILE.csv]
                                   [--twins] [--tbf-burst 1600]

Each CASE is a case directory of ``bench/netgap_probe.py`` (OUT/SCHEME: ``case.json``,
``packets_src.csv``, ``packets_rcv1.csv``, and the twins' captures it wrote: ``twin/`` with 1 ms
per link, ``twin-hop-X/`` with X s). `--twins` also computes, where missing, the twin with no
delay per link (``twin-hop-0/``) and the twin with the testbed's token bucket on its last hops
(``twin-tbf/``, `--tbf-burst` bytes), and each of the two with Linux's quick-ACK mode at its TCP
sinks (``twin-quickack/``, ``twin-tbf-quickack/``: ``peers.twin``'s `quickack_gap_s`, the
testbed's receiver RTOs ``peers.TESTBED_RCV_RTO_S``), with captures (simulated, so exact).
`--seed` is the cases' seed (the twins'; netgap_probe's ``flows.csv`` records it).

Per side and flow, over the measured span (after the warm-up): ``flowdrops.occupancy_table``'s
columns: the drop fraction, the fraction of the flow's arrivals that met the queue at its limit
(``full_frac``) and that over the time share F (``full_index``), the drop fraction with and
without a full queue, the flow's packets in the queue on average and while it is full; and the
link's F (``full_time``), mean length, and the share of drops that met a full queue and of
admitted packets that did (1 and 0 when the rebuilt queue is the queue's own view). The limit
is the pfifo's, QUEUE_PKTS, on the testbed and in the token-bucket twin (a packet waits in the
queue for its tokens); a serialising twin's capture is taken as a packet finishes its
serialisation, so the rebuilt queue holds the packet in service too: QUEUE_PKTS + 1. Writes
FILE.csv (default: queue_occupancy.csv in the first CASE's parent) and prints it.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import pandas as pd


def sides(case: Path) -> list[tuple[str, Path, float, bool]]:
    """(label, directory, delay per link (s), token bucket) of each twin captured in `case`."""
    out = []
    for d in sorted(case.glob("twin*")):
        if not (d / "twin_src.pcap").exists():
            continue
        if d.name == "twin":
            out.append(("twin-hop-0.001", d, 0.001, False))
        elif d.name.startswith("twin-hop-"):
            out.append((d.name, d, float(d.name[len("twin-hop-"):]), False))
        elif d.name.startswith("twin-tbf-hop-"):
            out.append((d.name, d, float(d.name[len("twin-tbf-hop-"):]), True))
        elif d.name in ("twin-tbf", "twin-tbf-quickack"):
            out.append((d.name, d, 0.0, True))
        elif d.name == "twin-quickack":
            out.append((d.name, d, 0.0, False))
    return out


def main() -> None:
    from castlab.experiments.tfmcc import flowdrops as fd
    from castlab.experiments.tfmcc import peers

    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("cases", type=Path, nargs="+")
    ap.add_argument("--seed", type=int, required=True)
    ap.add_argument("--duration", type=float, default=60.0)
    ap.add_argument("--out", type=Path)
    ap.add_argument("--twins", action="store_true")
    ap.add_argument("--tbf-burst", type=int, default=peers.TESTBED_TBF_BURST_BYTES)
    a = ap.parse_args()
    warm = peers.warm_up(a.duration)
    rows = []
    for case in a.cases:
        rec = json.loads((case / "case.json").read_text())
        tcp = tuple(rec["tcp"])
        name, order = rec["scheme"], rec["order"]
        base = {"scheme": name, "order": order, "seed": a.seed}
        t0 = rec["t0_realtime_s"]
        sent, got = fd.read_log(case / "packets_src.csv"), fd.read_log(case / "packets_rcv1.csv")
        names = {f"tcp:{peers.TCP_PORT + k}": x for k, x in enumerate(tcp)}
        occ = fd.occupancy(sent, got)
        t, link = fd.occupancy_table(occ, (t0 + warm, t0 + a.duration), peers.QUEUE_PKTS, names)
        rows += [{"side": "testbed", **base, **r, **link, "share": rec["share"]} for r in t.to_dict("records")]
        if a.twins:
            q = {"quickack_gap_s": peers.TESTBED_RCV_RTO_S[order]}
            ser = {"tbf_burst": None}  # the serialising twin (peers.twin's default has the bucket)
            for d, kw in (("twin-hop-0", {"hop_delay_s": 0.0, **ser}), ("twin-tbf", {"tbf_burst": a.tbf_burst}),
                          ("twin-quickack", {**q, **ser}), ("twin-tbf-quickack", {"tbf_burst": a.tbf_burst, **q})):
                if not (case / d / "twin_src.pcap").exists():
                    peers.twin(name, a.seed, a.duration, tcp, order, records_dir=case / d, capture=True, **kw)
        for label, d, hop, tbf in sides(case):
            sent, got = fd.read_pcap(d / "twin_src.pcap"), fd.read_pcap(d / "twin_rcv1.pcap")
            rcv1_ip = "10.0.0.3"  # node 2 of the twin's ["src", "r1", "rcv1", "rcv2"] (castlab-py's pcap)
            occ = fd.occupancy(sent, got, hop_s=hop)
            limit = peers.QUEUE_PKTS if tbf else peers.QUEUE_PKTS + 1
            span = (peers.LEAD_S + warm, peers.LEAD_S + a.duration)
            t, link = fd.occupancy_table(occ, span, limit, fd.twin_names(sent, tcp, rcv1_ip))
            rows += [{"side": label, **base, **r, **link} for r in t.to_dict("records")]
    df = pd.DataFrame(rows)
    out = a.out or a.cases[0].parent / "queue_occupancy.csv"
    df.to_csv(out, index=False)
    with pd.option_context("display.width", 250, "display.max_columns", 40):
        print(df.drop(columns=["order"]).round(4).to_string(index=False))


if __name__ == "__main__":
    main()
