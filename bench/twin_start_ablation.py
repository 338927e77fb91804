"""net-peers' three-flow LE-SBCC (AIMD) twins with the start-up ablations of
``bench/bbr_gap.py``, beside a full run's testbed shares: does what explains the gap beside one
bbr flow (the kernel's handshake RTT, the receivers before the source) carry to reno, cubic and
bbr at once?

    python bench/twin_start_ablation.py FULL [--out FILE.csv] [--handshake-rtt 20e-6]

FULL is a full net-peers run (``seed-N/peers.csv`` for seeds 1..FULL_SEEDS). Per seed and order
the twin (``peers.twin``, FULL_DURATION_S) four times: its defaults (the receivers
TESTBED_RECEIVERS_LEAD_S before the source, as the testbed's); those and every TCP flow starting
from a handshake RTT of `--handshake-rtt` seconds (the testbed's was 13-21 us); the receivers
with the source (`source_delay_s` 0, the ablation); that and the handshake. Writes a row per seed, order and variant (the
testbed's share, the twin's, their ratio, the twin's TCP rates) and prints the means over seeds
per order and variant: the claim's reading is the mean over seeds of the ratio.
"""

from __future__ import annotations

import argparse
from pathlib import Path

import pandas as pd


def main() -> None:
    from castlab.experiments.tfmcc import peers

    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("full", type=Path)
    ap.add_argument("--out", type=Path, default=None)
    ap.add_argument("--handshake-rtt", type=float, default=20e-6)
    a = ap.parse_args()
    tcp = ("reno", "cubic", "bbr")
    hs = {t: a.handshake_rtt for t in tcp}
    variants = {"default": {}, "handshake": {"handshake_rtt_s": hs},
                "together": {"source_delay_s": 0.0},
                "together-handshake": {"handshake_rtt_s": hs, "source_delay_s": 0.0}}
    rows = []
    for seed in range(1, peers.FULL_SEEDS + 1):
        tb = pd.read_csv(a.full / f"seed-{seed}" / "peers.csv")
        for order in peers.ORDERS:
            r = tb[(tb["scheme"] == "lesbcc-aimd") & (tb["order"] == order)].iloc[0]
            for v, kw in variants.items():
                tw = peers.twin("lesbcc-aimd", seed, peers.FULL_DURATION_S, tcp, order=order, **kw)
                rows.append({"seed": seed, "order": order, "variant": v, "testbed_share": float(r["share"]),
                             "twin_share": tw["share"], "ratio": float(r["share"]) / tw["share"],
                             **{f"twin_{t}_bps": tw["tcp_means_bps"][t] for t in tcp}})
    df = pd.DataFrame(rows)
    df.to_csv(a.out or a.full.parent / "twin_start_ablation.csv", index=False)
    print(df.to_string(index=False, float_format=lambda x: f"{x:.4g}"))
    print(df.groupby(["order", "variant"])[["testbed_share", "twin_share", "ratio"]].mean().to_string())


if __name__ == "__main__":
    main()
