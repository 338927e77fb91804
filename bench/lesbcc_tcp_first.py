"""LE-SBCC in net-peers' TCP-first order, testbed against twin: how often the source climbs, the
interval it climbs by, and what its RTT samples are made of.

    python bench/lesbcc_tcp_first.py RUN OUT [--seeds 1-3] [--twin-seeds 1-12] [--order tcp-first]
                                     [--scheme lesbcc-aimd|lesbcc-tfrc]

RUN is a net-peers full run (``bench/net_fair.py net-peers RUN --seeds 1-3``: its
``seed-N/ORDER/SCHEME/`` cases with the source's records); it is only read. For each of
`--twin-seeds` the twin (``peers.twin``, the declared one, 180 s) is run with its source's records
in OUT/twin-N/. For every testbed seed and every twin seed, after the source's first 10 s:
- the share (the run's reading), the source's median rate, its increases and cuts (changes of
  ``lesbcc_rate.csv``) and their mean size;
- the increase interval SRTT + 2 sigma (its median over ``lesbcc_rtt.csv``) and sigma;
- each RTT sample split into one packet spacing at the rate then (560-byte packets: a receiver
  sees a loss when the next packet arrives, Appendix A) and the rest, the path's part: their
  medians and the rest's interquartile range.
Writes OUT/lesbcc_tcp_first.csv and prints it. Simulated and read only: no root.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import numpy as np
import pandas as pd

PACKET_BYTES = 560
SKIP_S = 10.0


def seeds(text: str) -> list[int]:
    a, _, b = text.partition("-")
    return list(range(int(a), int(b or a) + 1))


def reading(side: str, seed: int, source: Path, share: float) -> dict:
    r = pd.read_csv(source / "lesbcc_rate.csv")
    rt = pd.read_csv(source / "lesbcc_rtt.csv")
    k = np.searchsorted(r["time_s"].to_numpy(), rt["time_s"].to_numpy(), side="right") - 1
    spacing = PACKET_BYTES * 8 / r["bps"].to_numpy()[np.maximum(k, 0)]
    m = (rt["time_s"] > SKIP_S).to_numpy()
    rest = rt["sample_s"].to_numpy()[m] - spacing[m]
    after = r[r["time_s"] > SKIP_S]
    d = np.diff(after["bps"].to_numpy())
    return {"side": side, "seed": seed, "share": share, "rate_median_kbps": after["bps"].median() / 1e3,
            "increases": int((d > 0).sum()), "increase_mean_kbps": float(d[d > 0].mean() / 1e3) if (d > 0).any() else np.nan,
            "cuts": int((d < 0).sum()), "cut_mean_kbps": float(-d[d < 0].mean() / 1e3) if (d < 0).any() else np.nan,
            "srtt_2sigma_median_s": float((rt["srtt_s"] + 2 * rt["sigma_s"])[m].median()),
            "sigma_median_s": float(rt["sigma_s"][m].median()),
            "sample_median_s": float(rt["sample_s"][m].median()), "spacing_median_s": float(np.median(spacing[m])),
            "path_median_s": float(np.median(rest)),
            "path_iqr_s": float(np.quantile(rest, 0.75) - np.quantile(rest, 0.25))}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("run", type=Path)
    ap.add_argument("out", type=Path)
    ap.add_argument("--seeds", default="1-3")
    ap.add_argument("--twin-seeds", default="1-12")
    ap.add_argument("--order", default="tcp-first", choices=("tcp-first", "scheme-first"))
    ap.add_argument("--scheme", default="lesbcc-aimd", choices=("lesbcc-aimd", "lesbcc-tfrc"))
    a = ap.parse_args(argv)
    from castlab.experiments.tfmcc import peers

    rows = []
    for s in seeds(a.seeds):
        case = a.run / f"seed-{s}" / a.order / a.scheme
        if not (case / "case.json").exists():
            ap.error(f"{case}: no {a.scheme} case")
        rows.append(reading("testbed", s, case / "source", json.loads((case / "case.json").read_text())["share"]))
    for s in seeds(a.twin_seeds):
        rd = a.out / f"twin-{s}"
        t = peers.twin(a.scheme, s, 180.0, ("reno", "cubic", "bbr"), a.order, records_dir=rd)
        rows.append(reading("twin", s, rd / "source", float(t["share"])))
        print(f"twin seed {s}: share {t['share']:.3f}", file=sys.stderr, flush=True)
    df = pd.DataFrame(rows)
    a.out.mkdir(parents=True, exist_ok=True)
    df.to_csv(a.out / "lesbcc_tcp_first.csv", index=False)
    with pd.option_context("display.width", 250, "display.max_columns", 30):
        print(df.round(3).to_string(index=False))
    return 0


if __name__ == "__main__":
    sys.exit(main())
