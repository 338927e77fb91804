"""What the RLM experiments read from the runs: the predicted join-experiment length, the knee of a loss curve, the best packing of pairs, the
worst-case loss per run.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from castlab.experiments.rlm.topology import (LAYER_RATES_BPS, LINK_BPS, PACKET_BYTES, QUEUE_PKTS, WINDOWS_S,
                                              cumulative_rate_bps)


def predicted_experiment_s(delay_s: float, hops: int = 1) -> float:
    """§4.3: "the duration of the join-experiment is roughly twice the link latency plus the
    queue build-up time". Our arithmetic for topology (1) with the receiver at level 5 trying
    level 6: the graft and the first new packet each cross the path once (2 x latency); the
    bottleneck's 20-packet queue fills at the excess rate (level 6 minus the link), then the
    packet behind the first drop waits a full queue before it reaches the receiver and shows
    the gap (the build-up: fill time plus one full queue's delay)."""
    q_bits = QUEUE_PKTS * PACKET_BYTES * 8
    fill = q_bits / (cumulative_rate_bps(6) - LINK_BPS)
    return 2 * hops * delay_s + fill + q_bits / LINK_BPS
WORST_COLS = [f"worst_{w:g}s" for w in WINDOWS_S]


def worst_per_run(df: pd.DataFrame, key: str) -> pd.DataFrame:
    """Per (key, seed), one run: the maximum over receivers of each receiver's worst-case loss
    (§4.3: "the maximum across the worst-case loss rates for each receiver")."""
    return df.groupby([key, "seed"])[WORST_COLS].max().reset_index()


def worst_by(df: pd.DataFrame, key: str) -> pd.DataFrame:
    """Per key: the mean over seeds of :func:`worst_per_run` (what the figures and their CSVs show;
    the claims take their statistic per seed first, then the mean)."""
    return worst_per_run(df, key).groupby(key)[WORST_COLS].mean().reset_index()


def knee_latency(delays: np.ndarray, loss: np.ndarray) -> float:
    """The knee of a worst-case-loss curve on log-log axes: the inner point where the slope
    falls the most (steep before, flat after). NaN with fewer than three positive points."""
    ok = loss > 0
    x, y = np.log(delays[ok]), np.log(loss[ok])
    if len(x) < 3:
        return float("nan")
    slope = np.diff(y) / np.diff(x)
    drop = slope[:-1] - slope[1:]
    return float(np.exp(x[1 + int(np.argmax(drop))]))


def r_squared(x: np.ndarray, y: np.ndarray) -> float:
    """Coefficient of determination of the least-squares line y ~ a + b x."""
    b, a = np.polyfit(x, y, 1)
    res = y - (a + b * x)
    return float(1 - np.sum(res**2) / np.sum((y - y.mean()) ** 2))


def best_packing_bps(pairs: int, capacity_bps: float) -> float:
    """The largest aggregate of ``pairs`` cumulative layer rates (one level per pair, each
    at least 1) that fits in ``capacity_bps``: what perfect discrete allocation would carry."""
    unit = LAYER_RATES_BPS[0]
    cap = int(capacity_bps // unit)
    sizes = [int(round(cumulative_rate_bps(n) / unit)) for n in range(1, len(LAYER_RATES_BPS) + 1)]
    reach = np.zeros(cap + 1, bool)
    reach[0] = True
    for _ in range(pairs):  # exactly one level per pair
        nxt = np.zeros_like(reach)
        for sz in sizes:
            if sz <= cap:
                nxt[sz:] |= reach[: cap + 1 - sz]
        reach = nxt
    return float(np.nonzero(reach)[0].max() * unit) if reach.any() else 0.0
