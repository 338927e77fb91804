"""Reading a receiver's subscription level over time: when it settles, its stays above the
optimum, the level it holds longest.
"""

from __future__ import annotations

import numpy as np


def excursions_above_s(t: np.ndarray, lv: np.ndarray, opt: int, t_from: float, t_end: float) -> list[float]:
    """Durations of the stays above ``opt`` that start at or after ``t_from`` (the
    join-experiments once settled); a stay still open at ``t_end`` ends there."""
    out, i = [], 0
    while i < len(t):
        if t[i] >= t_from and lv[i] > opt and (i == 0 or lv[i - 1] <= opt):
            j = i + 1
            while j < len(t) and lv[j] > opt:
                j += 1
            out.append((t[j] if j < len(t) else t_end) - t[i])
            i = j
        else:
            i += 1
    return out


def settle_time_s(times_s: np.ndarray, levels: np.ndarray, opt: int) -> float:
    """First time the receiver reaches ``opt`` and afterwards never goes below it (brief
    excursions above it, the join-experiments, do not count); NaN if it never does."""
    below = np.nonzero(levels < opt)[0]
    first = below[-1] + 1 if below.size else 0
    at = np.nonzero(levels[first:] >= opt)[0]
    return float(times_s[first + at[0]]) if at.size else float("nan")


# ---------------------------------------------------------------- helpers for the figures


def modal_level(t: np.ndarray, lv: np.ndarray, t0: float, t1: float) -> int:
    """The level held for the longest total time over [t0, t1]."""
    ends = np.append(t[1:], t1)
    dur = np.clip(np.minimum(ends, t1) - np.maximum(t, t0), 0, None)
    per = np.bincount(lv, weights=dur)
    return int(np.argmax(per))
