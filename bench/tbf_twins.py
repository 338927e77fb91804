"""The net-peers twins with the testbed's token bucket on their last hops (the default twin),
beside the testbed and the serialising twins (the ablation, ``tbf_burst`` None): what does the
bucket change in the twins' shares and per-flow drops?

    python bench/tbf_twins.py COPY OUT [--burst 1600] [--seeds 1-3] [--probe-seeds 1,2]

COPY is a copy of a full net-peers run (``seed-N/peers.csv``, ``windows.csv``, the cases); it is
rewritten. Per seed its twins are recomputed twice (``peers.refresh_twins``, in place: the twin
columns, windows and ``ORDER/SCHEME/twin/`` records): first serialising (``tbf_burst=None``), that
peers.csv kept as ``peers-serialised.csv``, then with a token bucket of `--burst` bytes (by
default the testbed's, ``peers.TESTBED_TBF_BURST_BYTES``), which peers.csv keeps. Writes to OUT:

- ``vs_sim.csv``: ``peers.net_vs_sim`` of both twins, per scheme and order (means over seeds),
  the serialising twin's columns suffixed ``_ser``;
- ``tfmcc_r.csv``: per seed, TFMCC's reported R (``tfmcc_fb.csv``, ``rtt_s``) before the TCP
  flows start (scheme first, the first LEAD_S seconds): the testbed's, the serialising twin's and
  the tbf twin's (median, smallest, count);
- ``flows.csv``: ``flowdrops.flow_table`` of both twins' captures for LE-SBCC (AIMD) and RLC,
  scheme first, 60 s, each of `--probe-seeds` (the set-up of ``bench/netgap_probe.py``, whose
  testbed rows docs/real-network.md gives), with the twin's share (``burst``: the bucket, or
  empty for the serialising twin).

Simulated only (no testbed, no root): a pure function of the copy and the seeds.
"""

from __future__ import annotations

import argparse
import shutil
from pathlib import Path

import numpy as np
import pandas as pd


def _seeds(s: str) -> list[int]:
    a, _, b = s.partition("-")
    return list(range(int(a), int(b or a) + 1))


def _r_before(path: Path, until_s: float) -> dict:
    if not path.exists():
        return {"median_ms": np.nan, "min_ms": np.nan, "reports": 0}
    d = pd.read_csv(path)
    r = d[d["time_s"] < until_s]["rtt_s"].to_numpy(float) * 1e3
    return {"median_ms": float(np.median(r)) if len(r) else np.nan,
            "min_ms": float(r.min()) if len(r) else np.nan, "reports": int(len(r))}


def main() -> None:
    from castlab.experiments.tfmcc import flowdrops as fd
    from castlab.experiments.tfmcc import peers

    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("copy", type=Path)
    ap.add_argument("out", type=Path)
    ap.add_argument("--burst", type=int, default=peers.TESTBED_TBF_BURST_BYTES)
    ap.add_argument("--seeds", default="1-3")
    ap.add_argument("--probe-seeds", default="1,2")
    a = ap.parse_args()
    a.out.mkdir(parents=True, exist_ok=True)
    seeds = _seeds(a.seeds)

    r_rows = []
    for s in seeds:
        where = a.copy / f"seed-{s}"
        fb = where / "scheme-first" / "tfmcc"
        r_rows.append({"seed": s, "side": "testbed", **_r_before(fb / "source" / "tfmcc_fb.csv", peers.LEAD_S)})
        peers.refresh_twins(where, s, peers.FULL_DURATION_S, peers.TCP_ALGOS, tbf_burst=None)
        shutil.copy(where / "peers.csv", where / "peers-serialised.csv")
        r_rows.append({"seed": s, "side": "twin, serialising",
                       **_r_before(fb / "twin" / "source" / "tfmcc_fb.csv", peers.LEAD_S)})
        peers.refresh_twins(where, s, peers.FULL_DURATION_S, peers.TCP_ALGOS, tbf_burst=a.burst)
        r_rows.append({"seed": s, "side": f"twin, tbf {a.burst}",
                       **_r_before(fb / "twin" / "source" / "tfmcc_fb.csv", peers.LEAD_S)})
    pd.DataFrame(r_rows).to_csv(a.out / "tfmcc_r.csv", index=False)

    cat = lambda f: pd.concat([pd.read_csv(a.copy / f"seed-{s}" / f) for s in seeds], ignore_index=True)
    tbf = peers.net_vs_sim(cat("peers.csv"), peers.TCP_ALGOS)
    ser = peers.net_vs_sim(cat("peers-serialised.csv"), peers.TCP_ALGOS)
    keep = ["scheme", "order"]
    vs = tbf.merge(ser[[c for c in ser.columns if c.startswith("twin_") or c in ("share_ratio", *keep)]],
                   on=keep, suffixes=("", "_ser"))
    vs.to_csv(a.out / "vs_sim.csv", index=False)

    rows = []
    duration = 60.0
    warm = peers.warm_up(duration)
    for name in ("lesbcc-aimd", "rlc"):
        for s, burst in ((int(x), b) for x in a.probe_seeds.split(",") for b in (a.burst, None)):
            cap = a.out / "probe" / f"{name}-{s}{'' if burst else '-serialising'}"
            tw = peers.twin(name, s, duration, peers.TCP_ALGOS, "scheme-first", records_dir=cap, capture=True,
                            tbf_burst=burst)
            sent, got = fd.read_pcap(cap / "twin_src.pcap"), fd.read_pcap(cap / "twin_rcv1.pcap")
            span = (peers.LEAD_S + warm, peers.LEAD_S + duration)
            rcv1_ip = "10.0.0.3"  # node 2 of the twin's ["src", "r1", "rcv1", "rcv2"] (castlab-py's pcap)
            t = fd.flow_table(sent, got, span, fd.twin_names(sent, peers.TCP_ALGOS, rcv1_ip))
            rows += [{"scheme": name, "seed": s, "burst": burst, **r, "share": tw["share"]}
                     for r in t.to_dict("records")]
    fl = pd.DataFrame(rows)
    fl.to_csv(a.out / "flows.csv", index=False)
    with pd.option_context("display.width", 250, "display.max_columns", 40):
        print(pd.DataFrame(r_rows).round(3).to_string(index=False))
        print(vs.round(3).to_string(index=False))
        print(fl[["scheme", "seed", "burst", "flow", "packets", "drops", "drop_frac", "phase_p50_ms", "soon_frac",
                  "share"]].round(4).to_string(index=False))


if __name__ == "__main__":
    main()
