"""net-peers' share per 30 s window for castlab's schemes: the testbed beside two builds' twins.

    python bench/twin_shares_figure.py BEFORE AFTER OUT.png [--label-before X] [--label-after Y]

BEFORE and AFTER are copies of one net-peers full run whose twins were recomputed with two builds
(``bench/net_fair.py net-peers COPY --seeds 1-3 --refresh-twins``); they are only read. Their
``windows.csv`` give each scheme's share of the mean kernel TCP flow per window, testbed and twin,
per seed. One panel per castlab scheme and order: the testbed's mean over seeds (solid), the twin
of BEFORE (dotted) and of AFTER (dashed). Writes OUT.png.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import pandas as pd

SCHEMES = ("lesbcc-aimd", "lesbcc-tfrc", "rlm", "rlc", "tfmcc")
ORDERS = ("scheme-first", "tcp-first")
WINDOW_S = 30.0


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("before", type=Path)
    ap.add_argument("after", type=Path)
    ap.add_argument("out", type=Path)
    ap.add_argument("--label-before", default="twin before")
    ap.add_argument("--label-after", default="twin after")
    a = ap.parse_args(argv)
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    b, f = (pd.read_csv(p / "windows.csv") for p in (a.before, a.after))
    fig, axes = plt.subplots(len(ORDERS), len(SCHEMES), figsize=(15, 5.6), sharex=True)
    for i, order in enumerate(ORDERS):
        for j, scheme in enumerate(SCHEMES):
            ax = axes[i][j]
            for df, side, style, label in ((f, "testbed", "-", "testbed"), (b, "twin", ":", a.label_before),
                                           (f, "twin", "--", a.label_after)):
                x = df[(df.scheme == scheme) & (df.order == order) & (df.side == side)]
                m = x.groupby("window")["share"].mean()
                ax.plot((m.index + 0.5) * WINDOW_S, m.to_numpy(), style, color="k" if side == "testbed" else "C3",
                        label=label)
            ax.set_yscale("log")
            ax.set_title(f"{scheme}, {order}", fontsize=9)
            ax.grid(alpha=0.3)
            if i == len(ORDERS) - 1:
                ax.set_xlabel("window centre (s from when both run)")
            if j == 0:
                ax.set_ylabel("share of the mean TCP flow")
    axes[0][0].legend(fontsize=7)
    fig.suptitle("net-peers: share per 30 s window, mean over seeds 1-3", fontsize=10)
    fig.tight_layout()
    a.out.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(a.out, dpi=110)
    print(a.out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
