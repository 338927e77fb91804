"""What every experiment shares: claims whose ``holds`` is computed, and the summary file."""

from __future__ import annotations

import json
import math
import platform
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Callable, Optional


@dataclass
class Claim:
    id: str
    statement: str
    paper_value: Any
    ours: Any
    unit: str
    tolerance: Any
    holds: bool


def _num(x: float) -> float:
    return float(x) if x is not None and math.isfinite(float(x)) else float("nan")


def within(id: str, statement: str, paper_value: float, ours: float, unit: str, *,
           abs_tol: Optional[float] = None, rel_tol: Optional[float] = None) -> Claim:
    """A numeric claim: holds when |ours - paper_value| <= the tolerance (absolute, or
    relative to the paper's value)."""
    if (abs_tol is None) == (rel_tol is None):
        raise ValueError("give exactly one of abs_tol and rel_tol")
    ours = _num(ours)
    tol = abs_tol if abs_tol is not None else rel_tol * abs(paper_value)
    holds = math.isfinite(ours) and abs(ours - paper_value) <= tol
    tol_text = f"±{abs_tol}" if abs_tol is not None else f"±{rel_tol:.0%}"
    return Claim(id, statement, paper_value, ours, unit, tol_text, bool(holds))


def at_most(id: str, statement: str, bound: float, ours: float, unit: str) -> Claim:
    """A bound: holds when ours <= bound."""
    ours = _num(ours)
    return Claim(id, statement, f"<= {bound}", ours, unit, "bound", bool(math.isfinite(ours) and ours <= bound))


def at_least(id: str, statement: str, bound: float, ours: float, unit: str) -> Claim:
    ours = _num(ours)
    return Claim(id, statement, f">= {bound}", ours, unit, "bound", bool(math.isfinite(ours) and ours >= bound))


def in_range(id: str, statement: str, lo: float, hi: float, ours: float, unit: str) -> Claim:
    ours = _num(ours)
    return Claim(id, statement, f"{lo}..{hi}", ours, unit, "range", bool(math.isfinite(ours) and lo <= ours <= hi))


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


def write_summary(out: Path, exp: Experiment, seed: int, result: Result, wall_s: float) -> dict:
    summary = {
        "experiment": exp.name,
        "paper": exp.paper,
        "figure": exp.figure,
        "seed": seed,
        "params": result.params,
        "wall_s": round(wall_s, 3),
        "machine": f"{platform.machine()} {platform.system()} python {platform.python_version()}",
        "claims": [asdict(c) for c in result.claims],
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
