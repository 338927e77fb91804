"""What every experiment shares: the experiment and result types, the summary file, the loop
over seeds and points (``map_runs``) and the one way a claim is decided on the mean over seeds.

The claim types and builders live in ``castlab.claims`` and the process pool in
``castlab.parallel`` (leaf modules); they are re-exported here for the experiments.
"""

from __future__ import annotations

import json
import platform
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Callable, Sequence

import numpy as np

from castlab.claims import (KINDS, UNCLASSIFIED, Claim, at_least, at_most, band_at_least, band_at_most,
                            band_in_range, in_band, in_range, inconsistent, t_interval, within)
from castlab.parallel import map_runs

__all__ = ["KINDS", "UNCLASSIFIED", "Claim", "inconsistent", "within", "at_most", "at_least", "in_range", "in_band",
           "band_in_range", "band_at_least", "band_at_most", "t_interval", "map_runs", "over_seeds",
           "claim_over_seeds", "with_seed_interval", "Experiment", "Result", "write_summary", "timed"]


def over_seeds(values: Sequence[float], confidence: float = 0.95, label: str = "") -> tuple[float, str]:
    """The mean of per-seed values and the note that ends the statement of a claim decided on
    it: the number of (finite) seeds and the Student-t interval of that mean (`label` names the
    reading it belongs to, when the claim is decided on several)."""
    vals = [float(v) for v in values]
    mean, lo, hi = t_interval(vals, confidence)
    n = sum(1 for v in vals if np.isfinite(v))
    where = f"{label}: " if label else ""
    return mean, f" [{where}mean of {n} seeds; {confidence * 100:.0f} % t interval {lo:.3g}..{hi:.3g}]"


def with_seed_interval(c: Claim, values: Sequence[float], confidence: float = 0.95, label: str = "") -> Claim:
    """A claim already decided on the mean of `values` (or on a band whose `label` reading is
    that mean), with the mean's t interval appended to its statement as ``over_seeds`` writes
    it: the one place the interval of a claim over seeds goes."""
    _, note = over_seeds(values, confidence, label)
    c.statement += note
    return c


def claim_over_seeds(make: Callable[..., Claim], per_seed: Sequence[float], *args, **kw) -> Claim:
    """``make(id, statement, ..., ours, ...)`` with ``ours`` the mean over seeds of ``per_seed`` and
    the statement ending with the seeds' count and the 95 % t interval (``over_seeds``).
    ``args`` holds the builder's positional arguments with ``None`` where ``ours`` goes."""
    values = per_seed.to_numpy(float) if hasattr(per_seed, "to_numpy") else per_seed
    mean, note = over_seeds(values)
    args = [mean if a is None else a for a in args]
    args[1] = args[1] + note
    return make(*args, **kw)


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
