"""Small statistics shared by the experiments and the results store: Student-t intervals."""

from __future__ import annotations

import math
from typing import Sequence


def t_quantile(confidence: float, n: int) -> float:
    """The two-sided Student-t critical value for `n` samples (n - 1 degrees of freedom): the
    t with P(|T| <= t) = confidence. 2.776 for n = 5 at 95 %, 4.604 at 99 %."""
    if not 0.0 < confidence < 1.0:
        raise ValueError(f"confidence must lie in (0, 1), got {confidence!r}")
    if n < 2:
        raise ValueError(f"a t interval needs at least 2 samples, got {n}")
    from scipy.stats import t

    return float(t.ppf(0.5 + confidence / 2.0, n - 1))


def t_interval(values: Sequence[float], confidence: float = 0.95, *,
               nonnegative: bool = False) -> tuple[float, float, float]:
    """(mean, lo, hi): the mean of `values` and its Student-t confidence interval. NaNs are
    dropped; fewer than two finite values is a ValueError (one sample has no spread, and a
    zero-width interval would read as certainty).

    `nonnegative`: the quantity cannot be negative (a loss rate, a time, a rate): a lower bound
    under 0 is clipped to 0. The t interval is symmetric about the mean; for a small sample of
    a quantity bounded below at 0 its lower half can cross 0, which the quantity cannot reach.
    Clipping keeps the upper bound, the one a reader compares against, unchanged."""
    xs = [float(v) for v in values if v is not None and math.isfinite(float(v))]
    n = len(xs)
    if n < 2:
        raise ValueError(f"a t interval needs at least 2 finite samples, got {n}"
                         + (" (one run: report its value without an interval)" if n == 1 else ""))
    mean = sum(xs) / n
    sd = math.sqrt(sum((x - mean) ** 2 for x in xs) / (n - 1))
    half = t_quantile(confidence, n) * sd / math.sqrt(n)
    lo = mean - half
    if nonnegative and lo < 0.0:
        lo = 0.0
    return (mean, lo, mean + half)


def mean_interval(values: Sequence[float], confidence: float = 0.95, *,
                  nonnegative: bool = False) -> tuple[float, float, float, int]:
    """(mean, lo, hi, n) over the finite `values`, for reports that must say something about
    any sample size: with two or more, ``t_interval``; with one, its value and lo = hi = NaN
    (no interval); with none, NaNs."""
    xs = [float(v) for v in values if v is not None and math.isfinite(float(v))]
    if len(xs) >= 2:
        return (*t_interval(xs, confidence, nonnegative=nonnegative), len(xs))
    return (xs[0] if xs else math.nan, math.nan, math.nan, len(xs))


def describe_interval(values: Sequence[float], confidence: float = 0.95, *, nonnegative: bool = False,
                      unit: str = "seeds", fmt: str = ".3g") -> str:
    """A note for a claim's statement: "mean of 5 seeds; 95 % t interval 0.1..0.3", "1 seed:
    no interval", with "(lower bound clipped at 0)" when a non-negative quantity's was."""
    mean, lo, hi, n = mean_interval(values, confidence, nonnegative=nonnegative)
    one = unit[:-1] if unit.endswith("s") else unit
    if n < 2:
        return f"{n} {one if n == 1 else unit}: no interval"
    clipped = nonnegative and lo == 0.0 and mean - (hi - mean) < 0.0
    return (f"mean of {n} {unit}; {confidence * 100:g} % t interval {lo:{fmt}}..{hi:{fmt}}"
            + (" (lower bound clipped at 0)" if clipped else ""))
