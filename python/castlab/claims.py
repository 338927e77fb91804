"""Claims: what an experiment checks, with a verdict computed from the run, never typed in.

A leaf module (it imports only ``castlab.stats``): experiments, the report and the sweep runner
read claims without importing one another.

Every claim has a ``kind``:

- ``paper``: a statement or number the paper makes (the claim's statement quotes or cites it);
- ``derived``: follows from the paper, but the paper does not state it, or compares with a
  baseline that does not itself reproduce the paper's baseline;
- ``variant``: a set-up the paper does not use (an ablation, another queue, another seed rule);
- ``sanity``: a check that the run did what it should (all data delivered, the engine agrees
  with arithmetic), including statements that cannot fail by construction;
- ``analysis``: arithmetic on a model (a Markov chain, a synthetic sawtooth) that does not run
  the simulator.

The accounting rule (docs/fidelity/README.md), applied here and nowhere else:

1. Each paper declares one primary reading per setting it leaves open; the other readings it
   allows are sensitivity. A claim run under several readings carries ``readings``
   (``[{reading, ours, holds, verdict}]``, the primary first) and ``ours`` is the primary's.
2. Its ``verdict`` is ``holds`` only when every reading holds, ``reading-dependent`` when some
   hold and some fail, ``fails`` when none holds and one fails (``undecided`` when the others
   are undecided and none fails). Lying between readings never makes it hold.
3. A universal statement ("never", "every", "under 1 %") is decided on the worst seed
   (``castlab.experiments.common.claim_over_seeds(..., worst="max")``), the mean shown beside it.
4. A claim decided on the mean over seeds whose t interval reaches both sides of its rule is
   ``undecided``.
5. ``holds`` (the boolean) is true only for the verdict ``holds``.

A failing ``paper`` claim carries an ``explanation``: a short cause and where in the outputs
(file and key) the ablation or arithmetic that shows it can be read.

A ``paper`` claim whose number the paper itself contradicts (its own arithmetic on its own
figures, equations or settings gives another value, with no castlab choice involved) carries
``paper_inconsistent``: that arithmetic, from the paper's numbers alone.

``revised`` lists the changes made to the claim's rule, tolerance, reading, metric, sizes or
parameters after a run in which its verdict was seen (``castlab.experiments.revisions``).

A claim decided over seeds carries the seeds' note at the end of its ``statement``
(`` [mean of N seeds; 95 % t interval LO..HI]`` or `` [worst of N seeds ...]``).
``tolerance`` says only how ``ours`` is compared with ``paper_value``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, Callable, Optional, Sequence

from castlab.stats import mean_interval as _mean_interval

__all__ = ["KINDS", "VERDICTS", "QUICK_NOTE", "UNCLASSIFIED", "Claim", "inconsistent", "within", "at_most",
           "at_least", "in_range", "over_readings", "combine_readings", "combined_verdict", "check",
           "t_interval", "edges"]

KINDS = ("paper", "derived", "variant", "sanity", "analysis")
VERDICTS = ("holds", "reading-dependent", "undecided", "fails")
#: What a claim of a ``--quick`` run says beside its ``holds``: the shorter settings decide
#: nothing about the paper (a claim can hold on them and fail on the full run).
QUICK_NOTE = "quick run: not a verdict"
# Until every experiment classifies its claims, a claim without a kind says so.
UNCLASSIFIED = "unclassified"


@dataclass
class Claim:
    """One checked statement. ``ours`` is our reading (the primary reading's, when the claim is
    run under several), ``paper_value`` the paper's, ``tolerance`` how the two are compared;
    ``holds`` is computed by the builders below and ``verdict`` follows from it unless a rule
    of the module's doc sets it (several readings, an undecided interval)."""

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
    verdict: str = ""
    readings: list = field(default_factory=list)
    revised: list = field(default_factory=list)

    def __post_init__(self) -> None:
        if self.kind not in KINDS and self.kind != UNCLASSIFIED:
            raise ValueError(f"claim {self.id!r}: kind must be one of {KINDS}, not {self.kind!r}")
        if self.paper_inconsistent and self.kind != "paper":
            raise ValueError(f"claim {self.id!r}: only a paper claim can be marked paper_inconsistent")
        if not self.verdict:
            self.verdict = "holds" if self.holds else "fails"
        if self.verdict not in VERDICTS:
            raise ValueError(f"claim {self.id!r}: verdict must be one of {VERDICTS}, not {self.verdict!r}")
        self.holds = self.verdict == "holds"

    def set_verdict(self, verdict: str) -> "Claim":
        """Set the verdict (and ``holds`` with it)."""
        self.verdict = verdict
        self.__post_init__()
        return self


def check(c: Claim, value: float) -> Optional[bool]:
    """Whether ``c``'s rule holds for ``value`` in place of ``ours`` (None when the claim was not
    made by a numeric builder of this module, so its rule cannot be re-applied)."""
    rule = getattr(c, "_rule", None)
    if rule is None:
        return None
    v = _num(value)
    return bool(math.isfinite(v) and rule(v))


def edges(c: Claim) -> tuple[float, ...]:
    """The values at which ``c``'s rule changes its answer (a bound; a range's two ends; a
    tolerance band's two ends and its centre, which holds whatever the rounding at the ends):
    where an interval of values can hold while its ends and its mean fail."""
    return tuple(getattr(c, "_edges", ()))


def _with_rule(c: Claim, rule: Callable[[float], bool], edges: Sequence[float] = ()) -> Claim:
    # Not dataclass fields: summaries (asdict) leave them out; claim_over_seeds and
    # over_readings re-apply the rule to the seeds' interval (its ends, its mean and the rule's
    # edges inside it) and to the worst seed.
    c._rule = rule  # type: ignore[attr-defined]
    c._edges = tuple(float(e) for e in edges)  # type: ignore[attr-defined]
    return c


def inconsistent(c: Claim, arithmetic: str) -> Claim:
    """Mark a paper claim whose value the paper's own numbers contradict; ``arithmetic`` shows it
    from the paper alone (figures, equations, settings), so the mark does not depend on our run."""
    c.paper_inconsistent = arithmetic
    c.__post_init__()
    return c


def _num(x: Any) -> float:
    try:
        v = float(x)
    except (TypeError, ValueError):
        return float("nan")
    return v if math.isfinite(v) else float("nan")


def within(id: str, statement: str, paper_value: float, ours: float, unit: str, *,
           abs_tol: Optional[float] = None, rel_tol: Optional[float] = None,
           kind: str = UNCLASSIFIED, explanation: str = "") -> Claim:
    """A numeric claim: holds when |ours - paper_value| <= the tolerance (absolute, or
    relative to the paper's value)."""
    if (abs_tol is None) == (rel_tol is None):
        raise ValueError("give exactly one of abs_tol and rel_tol")
    ours = _num(ours)
    tol = abs_tol if abs_tol is not None else rel_tol * abs(paper_value)

    def rule(v: float) -> bool:
        return abs(v - paper_value) <= tol

    holds = math.isfinite(ours) and rule(ours)
    tol_text = f"±{abs_tol}" if abs_tol is not None else f"±{rel_tol:.0%}"
    return _with_rule(Claim(id, statement, paper_value, ours, unit, tol_text, bool(holds), kind, explanation), rule,
                      (paper_value - tol, paper_value, paper_value + tol))


def at_most(id: str, statement: str, bound: float, ours: float, unit: str, *,
            kind: str = UNCLASSIFIED, explanation: str = "") -> Claim:
    """A bound: holds when ours <= bound."""
    ours = _num(ours)
    return _with_rule(Claim(id, statement, f"<= {bound}", ours, unit, "bound",
                            bool(math.isfinite(ours) and ours <= bound), kind, explanation), lambda v: v <= bound,
                      (bound,))


def at_least(id: str, statement: str, bound: float, ours: float, unit: str, *,
             kind: str = UNCLASSIFIED, explanation: str = "") -> Claim:
    """A bound: holds when ours >= bound."""
    ours = _num(ours)
    return _with_rule(Claim(id, statement, f">= {bound}", ours, unit, "bound",
                            bool(math.isfinite(ours) and ours >= bound), kind, explanation), lambda v: v >= bound,
                      (bound,))


def in_range(id: str, statement: str, lo: float, hi: float, ours: float, unit: str, *,
             kind: str = UNCLASSIFIED, explanation: str = "") -> Claim:
    """A range: holds when lo <= ours <= hi."""
    ours = _num(ours)
    return _with_rule(Claim(id, statement, f"{lo}..{hi}", ours, unit, "range",
                            bool(math.isfinite(ours) and lo <= ours <= hi), kind, explanation),
                      lambda v: lo <= v <= hi, (lo, hi))


def combined_verdict(verdicts: Sequence[str]) -> str:
    """The accounting rule over a claim's readings: ``holds`` when every reading holds;
    when some reading fails, ``reading-dependent`` if another holds and ``fails`` if none holds
    (the claim cannot hold under every reading); else (an undecided reading, none failing)
    ``undecided``."""
    vs = list(verdicts)
    if not vs:
        raise ValueError("a claim needs at least one reading")
    if all(v == "holds" for v in vs):
        return "holds"
    if "fails" in vs:
        return "reading-dependent" if "holds" in vs else "fails"
    return "undecided"


def _show(v: Any) -> Any:
    if isinstance(v, float):
        return float(f"{v:.6g}") if math.isfinite(v) else v
    return v


def combine_readings(claims_by_reading: dict[str, Claim], setting: str) -> Claim:
    """One claim run under every reading of an open setting (``claims_by_reading``: reading ->
    that reading's claim, the paper's primary reading first), decided by the accounting rule.
    ``ours``, statement, explanation and any ``paper_inconsistent`` are the primary's; the
    statement ends with every reading's value and verdict."""
    names = list(claims_by_reading)
    cs = [claims_by_reading[n] for n in names]
    first = cs[0]
    if any(c.id != first.id for c in cs):
        raise ValueError(f"the readings of {setting!r} must give the same claims in the same order")
    readings = []
    for n, c in zip(names, cs):
        inner = c.readings if c.readings else None
        readings.append({"reading": n, "ours": _show(c.ours), "holds": c.holds, "verdict": c.verdict,
                         **({"readings": inner} if inner else {})})
    verdict = combined_verdict([c.verdict for c in cs])
    if len(cs) == 1:
        note = f" [{setting}: {names[0]} only]"
    else:
        note = (f" [primary reading of {setting}: {names[0]}; every reading: "
                + ", ".join(f"{n} {_fmt(c.ours)} {c.verdict}" for n, c in zip(names, cs)) + "]")
    out = Claim(first.id, first.statement + note, first.paper_value, first.ours, first.unit,
                f"{first.tolerance}, at every reading" if len(cs) > 1 else first.tolerance, first.holds,
                first.kind, first.explanation, first.paper_inconsistent, verdict, readings, list(first.revised))
    rule = getattr(first, "_rule", None)
    return _with_rule(out, rule, edges(first)) if rule is not None else out


def _fmt(v: Any) -> str:
    return f"{v:.4g}" if isinstance(v, float) else str(v)


def over_readings(make: Callable[..., Claim], values: dict[str, Any], *args, setting: str = "the readings",
                  **kw) -> Claim:
    """``make(*args, **kw)`` once per reading with ``ours`` = that reading's value (``values``:
    reading -> value, the primary first; ``args`` holds ``None`` where ``ours`` goes), decided
    by the accounting rule (``combine_readings``)."""
    if not values:
        raise ValueError("over_readings needs at least one reading")
    if sum(a is None for a in args) != 1:
        raise ValueError("over_readings: exactly one positional argument must be None (where ours goes)")
    per = {n: make(*[v if a is None else a for a in args], **kw) for n, v in values.items()}
    return combine_readings(per, setting)


def t_interval(values: Sequence[float], confidence: float = 0.95) -> tuple[float, float, float]:
    """Mean and the Student-t confidence interval (lo, hi) of `values`; with fewer than two
    values there is no interval (lo = hi = NaN), never a zero-width one."""
    return _mean_interval(values, confidence)[:3]
