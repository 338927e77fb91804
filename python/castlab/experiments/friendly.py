"""The TCP-friendliness check the baseline schemes' experiments share (pgmcc, webrc, flid-dl):
a scheme's goodput over the mean of K TCP flows' on one shared DropTail dumbbell, against
NewReno and against CUBIC, decided over seeds per (variant, K) in a band, and drawn as one
panel of ratio against K."""

from __future__ import annotations

from typing import Callable

import pandas as pd

from castlab.experiments.common import claim_over_seeds, in_range

__all__ = ["VARIANTS", "tcp_friendly_claims", "plot_tcp_friendly"]

#: The TCP flavours the dumbbell runs against, with the kind of their claims: NewReno is the
#: sources' own baseline, CUBIC postdates them (a variant).
VARIANTS = (("newreno", "derived"), ("cubic", "variant"))


def tcp_friendly_claims(df: pd.DataFrame, statement: Callable[[str, int], str], band: tuple[float, float]) -> list:
    """One claim per (variant, K) of the table's ``dumbbell`` rows (columns ``variant``,
    ``k_tcp``, ``ratio``), id ``tcp-friendly-VARIANT-kK``: the ratio over seeds in ``band``;
    ``statement(variant, k)`` says it."""
    claims = []
    db = df[df["setup"] == "dumbbell"]
    for variant, kind in VARIANTS:
        for k in sorted(db[db["variant"] == variant]["k_tcp"].unique()):
            rows = db[(db["variant"] == variant) & (db["k_tcp"] == k)]
            claims.append(claim_over_seeds(in_range, rows["ratio"], f"tcp-friendly-{variant}-k{k}",
                                           statement(variant, k), *band, None, "ratio", kind=kind))
    return claims


def plot_tcp_friendly(ax, df: pd.DataFrame, band: tuple[float, float], ylabel: str, bottleneck_bps: float) -> None:
    """The dumbbell's ratio against K on ``ax``: the mean over seeds with their range, per variant,
    over the band."""
    db = df[df["setup"] == "dumbbell"]
    for variant, fmt in (("newreno", "o-"), ("cubic", "s--")):
        g = db[db["variant"] == variant].groupby("k_tcp")["ratio"]
        if len(g):
            m = g.mean()
            ax.errorbar(m.index, m, yerr=[m - g.min(), g.max() - m], fmt=fmt, capsize=3, label=variant)
    ax.axhspan(*band, color="0.9", zorder=0, label="within 2x")
    ax.set_xscale("log", base=2)
    ax.set_xlabel("TCP flows K")
    ax.set_ylabel(ylabel)
    ax.set_title(f"{bottleneck_bps / 1e6:g} Mb/s dumbbell", fontsize=9)
    ax.legend(fontsize=7)
