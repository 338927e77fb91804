"""LE-SBCC in net-peers' TCP-first order, testbed against twin: how often the source climbs, the
interval it climbs by, and what its RTT samples are made of.

    python bench/lesbcc_tcp_first.py RUN OUT [--seeds 1-3] [--twin-seeds 1-12] [--order tcp-first]
                                     [--scheme lesbcc-aimd|lesbcc-tfrc]

RUN is a net-peers full run (``bench/net_fair.py net-peers RUN --seeds 1-3``: its
``seed-N/ORDER/SCHEME/`` cases with the source's records); it is only read. For each of
`--twin-seeds` the twin (``peers.twin``, the declared one, 180 s) is run with its source's records
in OUT/twin-N/. For every testbed seed and every twin seed, after the source's first 10 s:
- the share (the run's reading), the source's median rate (over the records) and mean rate
  (over time), its increases and cuts (changes of ``lesbcc_rate.csv``) and their mean size;
- the increase interval SRTT + 2 sigma (its median over ``lesbcc_rtt.csv``) and sigma;
- each RTT sample split into one packet spacing at the rate then (560-byte packets: a receiver
  sees a loss when the next packet arrives, Appendix A) and the rest, the path's part: their
  medians and the rest's interquartile range;
- the loss events a second (loss indications that reduced the rate, ``lesbcc_li.csv`` outcome
  3), and the rate at which the TFRC variant's equation meets them with that path part and σ
  (``equation_rate``): what those alone would give that variant.
Times are from the source's start on both sides (the twin's records are on the run's clock, on
which a TCP-first source starts 10 s in).
Writes OUT/lesbcc_tcp_first.csv and prints it. Simulated and read only: no root.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import numpy as np
import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parent))
from tfrc_decline import equation_bps  # noqa: E402  (bench/, beside this file)

PACKET_BYTES = 560
SKIP_S = 10.0
#: ``lesbcc_li.csv``'s outcome of a loss indication that reduced the rate: a loss event
LI_REDUCTION = 3
#: the run (peers' full form) and the lead of the first flow in it
RUN_S, LEAD_S = 180.0, 10.0


def seeds(text: str) -> list[int]:
    a, _, b = text.partition("-")
    return list(range(int(a), int(b or a) + 1))


def reading(side: str, seed: int, source: Path, share: float, source_s: float) -> dict:
    r = pd.read_csv(source / "lesbcc_rate.csv")
    rt = pd.read_csv(source / "lesbcc_rtt.csv")
    # the source's start: its first rate record (the testbed's clock starts with the source; the
    # twin's is the run's, on which a TCP-first source starts 10 s in)
    start = float(r["time_s"].iloc[0])
    k = np.searchsorted(r["time_s"].to_numpy(), rt["time_s"].to_numpy(), side="right") - 1
    spacing = PACKET_BYTES * 8 / r["bps"].to_numpy()[np.maximum(k, 0)]
    m = (rt["time_s"] > start + SKIP_S).to_numpy()
    rest = rt["sample_s"].to_numpy()[m] - spacing[m]
    after = r[r["time_s"] > start + SKIP_S]
    li = pd.read_csv(source / "lesbcc_li.csv")
    events = float((li["outcome"][li["time_s"] > start + SKIP_S] == LI_REDUCTION).sum()) / (source_s - SKIP_S)
    path = float(np.median(rest))
    # the rate weighted by time, from the source's 10th second to its end
    t = np.clip(np.append(r["time_s"].to_numpy(), start + source_s), start + SKIP_S, start + source_s)
    mean_kbps = float((r["bps"].to_numpy() * np.diff(t)).sum() / (source_s - SKIP_S) / 1e3)
    d = np.diff(after["bps"].to_numpy())
    return {"side": side, "seed": seed, "share": share, "rate_median_kbps": after["bps"].median() / 1e3,
            "rate_mean_kbps": mean_kbps,
            "increases": int((d > 0).sum()), "increase_mean_kbps": float(d[d > 0].mean() / 1e3) if (d > 0).any() else np.nan,
            "cuts": int((d < 0).sum()), "cut_mean_kbps": float(-d[d < 0].mean() / 1e3) if (d < 0).any() else np.nan,
            "srtt_2sigma_median_s": float((rt["srtt_s"] + 2 * rt["sigma_s"])[m].median()),
            "sigma_median_s": float(rt["sigma_s"][m].median()),
            "sample_median_s": float(rt["sample_s"][m].median()), "spacing_median_s": float(np.median(spacing[m])),
            "path_median_s": path,
            "path_iqr_s": float(np.quantile(rest, 0.75) - np.quantile(rest, 0.25)),
            "loss_events_per_s": events, "equation_kbps": equation_rate(events, path, float(rt["sigma_s"][m].median())) * PACKET_BYTES * 8 / 1e3}


def equation_rate(events_per_s: float, path_s: float, sigma_s: float) -> float:
    """Packets a second at which the source's own equation (RFC 5348 §3.1 as the cascade computes
    it, ``tfrc_decline.equation_bps``: t_RTO = R + 4σ) meets the loss events it saw: p is
    `events_per_s` over the rate, and R the path's part plus one packet spacing. The upper of its
    two solutions (the lower is unstable); NaN where none is found."""
    if events_per_s <= 0 or path_s <= 0:
        return float("nan")

    def f(x: float) -> float:  # rate less the equation's rate there, packets a second
        return x - float(equation_bps(events_per_s / x, path_s + 1.0 / x, sigma_s)) / (8 * PACKET_BYTES)

    # f's last rise through 0 on a grid from p = 1 up (a quarter octave a step, to 10^7 packets a
    # second), then bisection
    xs = events_per_s * 2.0 ** (np.arange(0, 4 * np.log2(1e7 / events_per_s) + 1) / 4)
    below = [f(x) <= 0 for x in xs]
    ups = [k for k in range(len(xs) - 1) if below[k] and not below[k + 1]]
    if not ups:
        return float("nan")
    lo, hi = xs[ups[-1]], xs[ups[-1] + 1]
    for _ in range(200):  # bisection: f(lo) <= 0 < f(hi)
        mid = (lo + hi) / 2
        lo, hi = (mid, hi) if f(mid) <= 0 else (lo, mid)
    return hi


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

    source_s = RUN_S - LEAD_S if a.order == "tcp-first" else RUN_S
    rows = []
    for s in seeds(a.seeds):
        case = a.run / f"seed-{s}" / a.order / a.scheme
        if not (case / "case.json").exists():
            ap.error(f"{case}: no {a.scheme} case")
        rows.append(reading("testbed", s, case / "source", json.loads((case / "case.json").read_text())["share"],
                            source_s))
    for s in seeds(a.twin_seeds):
        rd = a.out / f"twin-{s}"
        t = peers.twin(a.scheme, s, 180.0, ("reno", "cubic", "bbr"), a.order, records_dir=rd)
        rows.append(reading("twin", s, rd / "source", float(t["share"]), source_s))
        print(f"twin seed {s}: share {t['share']:.3f}", file=sys.stderr, flush=True)
    df = pd.DataFrame(rows)
    a.out.mkdir(parents=True, exist_ok=True)
    df.to_csv(a.out / "lesbcc_tcp_first.csv", index=False)
    with pd.option_context("display.width", 250, "display.max_columns", 30):
        print(df.round(3).to_string(index=False))
    return 0


if __name__ == "__main__":
    sys.exit(main())
