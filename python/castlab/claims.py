"""Claims: what an experiment checks, with ``holds`` computed from the run, never typed in.

A leaf module (it imports only ``castlab.stats``): experiments, the report and the sweep runner
read claims without importing one another.

Every claim has a ``kind``:

- ``paper``: a statement or number the paper makes (the claim's statement quotes or cites it);
- ``derived``: follows from the paper, but the paper does not state it;
- ``variant``: a set-up the paper does not use (an ablation, another queue, another seed rule);
- ``sanity``: a check that the run did what it should (all data delivered, the engine agrees
  with arithmetic).

A failing ``paper`` claim carries an ``explanation``: a short cause and where in the outputs
(file and key) the ablation or arithmetic that shows it can be read.

A ``paper`` claim whose number the paper itself contradicts (its own arithmetic on its own
figures, equations or settings gives another value) carries ``paper_inconsistent``: that
arithmetic, from the paper's numbers alone, never from ours. It still counts among the paper's
claims; the report also counts the paper's claims without these (the consistent ones).

A claim decided on the mean over seeds carries that mean's Student-t interval in one place, at
the end of its ``statement``: `` [mean of N seeds; 95 % t interval LO..HI]``, with the reading
named first when the claim is a band (`` [56 ms: mean of ...]``). ``over_seeds`` in
``castlab.experiments.common`` writes it, through ``claim_over_seeds`` (the claim built on the
mean) or ``with_seed_interval`` (a claim already built). ``tolerance`` says only how
``ours`` is compared with ``paper_value`` (``±x``, ``bound``, ``range``, ``band``).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Optional, Sequence

from castlab.stats import mean_interval as _mean_interval

__all__ = ["KINDS", "QUICK_NOTE", "UNCLASSIFIED", "Claim", "inconsistent", "within", "at_most", "at_least", "in_range", "in_band",
           "band_over_readings",
           "band_in_range", "band_at_least", "band_at_most", "t_interval"]

KINDS = ("paper", "derived", "variant", "sanity")
#: What a claim of a ``--quick`` run says beside its ``holds``: the shorter settings decide
#: nothing about the paper (a claim can hold on them and fail on the full run).
QUICK_NOTE = "quick run: not a verdict"
# Until every experiment classifies its claims, a claim without a kind says so.
UNCLASSIFIED = "unclassified"


@dataclass
class Claim:
    """One checked statement. ``ours`` is our reading, ``paper_value`` the paper's, ``tolerance``
    how the two are compared; ``holds`` is computed by the builders below. When ``ours`` is a
    mean over seeds, the statement ends with that mean's t interval (see the module's doc)."""

    id: str
    statement: str
    paper_value: Any
    ours: Any
    unit: str
    tolerance: Any
    holds: bool
    kind: str = UNCLASSIFIED
    explanation: str = ""
    paper_inconsistent: str = ""

    def __post_init__(self) -> None:
        if self.kind not in KINDS and self.kind != UNCLASSIFIED:
            raise ValueError(f"claim {self.id!r}: kind must be one of {KINDS}, not {self.kind!r}")
        if self.paper_inconsistent and self.kind != "paper":
            raise ValueError(f"claim {self.id!r}: only a paper claim can be marked paper_inconsistent")


def inconsistent(c: Claim, arithmetic: str) -> Claim:
    """Mark a paper claim whose value the paper's own numbers contradict; ``arithmetic`` shows it
    from the paper alone (figures, equations, settings), so the mark does not depend on our run."""
    c.paper_inconsistent = arithmetic
    c.__post_init__()
    return c


def _num(x: float) -> float:
    return float(x) if x is not None and math.isfinite(float(x)) else float("nan")


def within(id: str, statement: str, paper_value: float, ours: float, unit: str, *,
           abs_tol: Optional[float] = None, rel_tol: Optional[float] = None,
           kind: str = UNCLASSIFIED, explanation: str = "") -> Claim:
    """A numeric claim: holds when |ours - paper_value| <= the tolerance (absolute, or
    relative to the paper's value)."""
    if (abs_tol is None) == (rel_tol is None):
        raise ValueError("give exactly one of abs_tol and rel_tol")
    ours = _num(ours)
    tol = abs_tol if abs_tol is not None else rel_tol * abs(paper_value)
    holds = math.isfinite(ours) and abs(ours - paper_value) <= tol
    tol_text = f"±{abs_tol}" if abs_tol is not None else f"±{rel_tol:.0%}"
    return Claim(id, statement, paper_value, ours, unit, tol_text, bool(holds), kind, explanation)


def at_most(id: str, statement: str, bound: float, ours: float, unit: str, *,
            kind: str = UNCLASSIFIED, explanation: str = "") -> Claim:
    """A bound: holds when ours <= bound."""
    ours = _num(ours)
    return Claim(id, statement, f"<= {bound}", ours, unit, "bound", bool(math.isfinite(ours) and ours <= bound),
                 kind, explanation)


def at_least(id: str, statement: str, bound: float, ours: float, unit: str, *,
             kind: str = UNCLASSIFIED, explanation: str = "") -> Claim:
    ours = _num(ours)
    return Claim(id, statement, f">= {bound}", ours, unit, "bound", bool(math.isfinite(ours) and ours >= bound),
                 kind, explanation)


def in_range(id: str, statement: str, lo: float, hi: float, ours: float, unit: str, *,
             kind: str = UNCLASSIFIED, explanation: str = "") -> Claim:
    ours = _num(ours)
    return Claim(id, statement, f"{lo}..{hi}", ours, unit, "range", bool(math.isfinite(ours) and lo <= ours <= hi),
                 kind, explanation)


def in_band(id: str, statement: str, paper_value: float, readings: dict[str, float], unit: str, *,
            kind: str = UNCLASSIFIED, explanation: str = "") -> Claim:
    """A sensitivity band: the paper leaves a parameter open, we run each reading it allows
    (``readings``: reading -> our value), and the claim holds when the paper's value lies
    inside [min, max] of ours. ``ours`` is the band itself, as text, so the report shows it."""
    b = _band(readings)
    if b is None:
        return Claim(id, statement, paper_value, "no finite reading", unit, "band", False, kind, explanation)
    lo, hi, band = b
    return Claim(id, statement, paper_value, band, unit, "band", bool(lo <= paper_value <= hi), kind, explanation)


def band_over_readings(claims_by_reading: dict[str, list[Claim]], setting: str) -> list[Claim]:
    """The claims of one experiment run under each reading of a setting the paper leaves open
    (``claims_by_reading``: reading -> that run's claims, the same ids in the same order), decided
    by the band rule: a claim holds when it holds under some reading. ``ours`` shows every
    reading's value (the band when all are numbers); statement, explanation and any
    ``paper_inconsistent`` are the first reading's, and the statement names each reading's verdict."""
    names = list(claims_by_reading)
    lists = [claims_by_reading[n] for n in names]
    if any(len(c) != len(lists[0]) or [x.id for x in c] != [x.id for x in lists[0]] for c in lists):
        raise ValueError(f"the readings of {setting!r} must give the same claims in the same order")
    if len(names) == 1:  # one reading (a quick run): its claims, saying which reading they are
        return [Claim(c.id, f"{c.statement} [{setting}: {names[0]} only]", c.paper_value, c.ours, c.unit, c.tolerance,
                      c.holds, c.kind, c.explanation, c.paper_inconsistent) for c in lists[0]]
    out = []
    for cs in zip(*lists):
        first = cs[0]
        nums = {}
        for n, c in zip(names, cs):
            v = c.ours
            if isinstance(v, (int, float)) and not isinstance(v, bool):
                nums[n] = float(v)
        b = _band(nums) if len(nums) == len(cs) else None
        ours = b[2] if b is not None else "; ".join(f"{n}: {c.ours}" for n, c in zip(names, cs))
        verdicts = ", ".join(f"{n} {'holds' if c.holds else 'fails'}" for n, c in zip(names, cs))
        c = Claim(first.id, f"{first.statement} [band over {setting}: {verdicts}]", first.paper_value, ours,
                  first.unit, f"band ({first.tolerance} per reading)", any(c.holds for c in cs), first.kind,
                  first.explanation, first.paper_inconsistent)
        out.append(c)
    return out


def _band(readings: dict[str, float]) -> tuple[float, float, str] | None:
    vals = {k: _num(v) for k, v in readings.items()}
    finite = [v for v in vals.values() if math.isfinite(v)]
    if not finite:
        return None
    lo, hi = min(finite), max(finite)
    return lo, hi, f"{lo:.4g}..{hi:.4g} (" + ", ".join(f"{k}: {v:.4g}" for k, v in vals.items()) + ")"


def band_in_range(id: str, statement: str, lo: float, hi: float, readings: dict[str, float], unit: str, *,
                  kind: str = UNCLASSIFIED, explanation: str = "") -> Claim:
    """A sensitivity band against a paper's range: the claim holds when the band of our readings
    (the parameter values the paper allows) meets [lo, hi], i.e. some reading the paper allows
    makes the statement true. ``ours`` is the band, as text."""
    b = _band(readings)
    if b is None:
        return Claim(id, statement, f"{lo}..{hi}", "no finite reading", unit, "band", False, kind, explanation)
    blo, bhi, text = b
    return Claim(id, statement, f"{lo}..{hi}", text, unit, "band", bool(blo <= hi and bhi >= lo), kind, explanation)


def band_at_least(id: str, statement: str, bound: float, readings: dict[str, float], unit: str, *,
                  kind: str = UNCLASSIFIED, explanation: str = "") -> Claim:
    """A sensitivity band against a lower bound: holds when the band's top reaches ``bound``."""
    b = _band(readings)
    if b is None:
        return Claim(id, statement, f">= {bound}", "no finite reading", unit, "band", False, kind, explanation)
    return Claim(id, statement, f">= {bound}", b[2], unit, "band", bool(b[1] >= bound), kind, explanation)


def band_at_most(id: str, statement: str, bound: float, readings: dict[str, float], unit: str, *,
                 kind: str = UNCLASSIFIED, explanation: str = "") -> Claim:
    """A sensitivity band against an upper bound: holds when the band's bottom is at most ``bound``."""
    b = _band(readings)
    if b is None:
        return Claim(id, statement, f"<= {bound}", "no finite reading", unit, "band", False, kind, explanation)
    return Claim(id, statement, f"<= {bound}", b[2], unit, "band", bool(b[0] <= bound), kind, explanation)


def t_interval(values: Sequence[float], confidence: float = 0.95) -> tuple[float, float, float]:
    """Mean and the Student-t confidence interval (lo, hi) of `values`; with fewer than two
    values there is no interval (lo = hi = NaN), never a zero-width one."""
    return _mean_interval(values, confidence)[:3]
