"""What every experiment shares: claims whose ``holds`` is computed, and the summary file.

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
"""

from __future__ import annotations

import json
import math
import platform
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Callable, Optional, Sequence

KINDS = ("paper", "derived", "variant", "sanity")
# Until every experiment classifies its claims, a claim without a kind says so.
UNCLASSIFIED = "unclassified"


@dataclass
class Claim:
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
    from castlab.stats import mean_interval

    return mean_interval(values, confidence)[:3]


# Worker processes for an experiment's own loop over seeds and points (map_runs): 1 runs them
# here; `castlab reproduce NAME --jobs N` sets N. `reproduce --all --jobs N` keeps 1 here and runs
# the experiments themselves in parallel instead.
_JOBS = {"n": 1}


def set_jobs(n: int) -> None:
    if int(n) < 1:
        raise ValueError(f"jobs must be at least 1, got {n}")
    _JOBS["n"] = int(n)


def map_runs(fn: Callable[..., Any], calls: Sequence[tuple]) -> list:
    """An experiment's loop of independent runs, ``[fn(*args) for args in calls]``, through the
    studies runner's process pool when jobs > 1. Each run is a pure function of its arguments,
    so the list is the same either way (tests/test_sweep.py checks it on an experiment)."""
    calls = [tuple(a) for a in calls]
    if _JOBS["n"] <= 1 or len(calls) < 2:
        return [fn(*a) for a in calls]
    from castlab.study.runner import map_calls

    return map_calls(fn, calls, min(_JOBS["n"], len(calls)))


@dataclass
class Experiment:
    name: str
    paper: str
    figure: str
    description: str
    run: Callable[..., "Result"]


@dataclass
class Result:
    params: dict
    claims: list[Claim]
    files: list[str] = field(default_factory=list)


#: What a claim of a ``--quick`` run says beside its ``holds``: the shorter settings decide
#: nothing about the paper (a claim can hold on them and fail on the full run).
QUICK_NOTE = "quick run: not a verdict"


def write_summary(out: Path, exp: Experiment, seed: int, result: Result, wall_s: float, quick: bool = False) -> dict:
    """summary.json; a ``quick`` run is marked as a whole (``"quick": true``) and per claim
    (``"verdict": QUICK_NOTE``), so its ``holds`` is not read as the experiment's result."""
    claims = [asdict(c) for c in result.claims]
    if quick:
        for c in claims:
            c["verdict"] = QUICK_NOTE
    summary = {
        "experiment": exp.name,
        "paper": exp.paper,
        "figure": exp.figure,
        "seed": seed,
        "params": result.params,
        "wall_s": round(wall_s, 3),
        "machine": f"{platform.machine()} {platform.system()} python {platform.python_version()}",
        "quick": bool(quick),
        "claims": claims,
        "files": result.files,
    }
    (out / "summary.json").write_text(json.dumps(summary, indent=2, default=_json_default) + "\n")
    return summary


def _json_default(x: Any):
    if hasattr(x, "item"):
        return x.item()
    return str(x)


def timed(fn: Callable[[], Result]) -> tuple[Result, float]:
    t = time.perf_counter()
    r = fn()
    return r, time.perf_counter() - t
