"""What every experiment shares: the experiment and result types, the summary file, the loop
over seeds and points (``map_runs``) and the one way a claim is decided on the mean over seeds.

The claim types and builders live in ``castlab.claims`` and the process pool in
``castlab.parallel`` (leaf modules); they are re-exported here for the experiments.
"""

from __future__ import annotations

import json
import os
import platform
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Callable, Sequence

import numpy as np

from castlab.claims import (KINDS, QUICK_NOTE, UNCLASSIFIED, VERDICTS, Claim, at_least, at_most, check, edges,
                            combine_readings, in_range, inconsistent, over_readings, t_interval, within)
from castlab.experiments.revisions import revisions_for
from castlab.parallel import map_runs
from castlab.simulator import default_phase_overhead
from castlab.stats import describe_interval, mean_interval

__all__ = ["KINDS", "VERDICTS", "QUICK_NOTE", "UNCLASSIFIED", "NONNEGATIVE_UNITS", "Claim", "inconsistent", "within",
           "at_most", "at_least", "in_range", "over_readings", "combine_readings", "t_interval", "map_runs",
           "over_seeds", "claim_over_seeds", "with_seed_interval", "Experiment", "Result", "write_summary", "timed",
           "run_readings", "run_phase", "reading_claim", "explain", "RULES"]


# Units of quantities that cannot be negative: the interval over seeds of a claim in one of these
# units is clipped at 0 (``claim_over_seeds``; the note says so when it clips).
NONNEGATIVE_UNITS = {"loss fraction", "fraction", "ratio", "s", "ms", "bps", "b/s", "kb/s", "Mb/s"}


def over_seeds(values: Sequence[float], confidence: float = 0.95, label: str = "", *,
               nonnegative: bool = False) -> tuple[float, str]:
    """The mean of per-seed values and the note that ends the statement of a claim decided on
    it: the number of (finite) seeds and the Student-t interval of that mean ("1 seed: no
    interval" for one). `label` names the reading it belongs to, when the claim is decided on
    several; a `nonnegative` quantity's lower bound is clipped at 0."""
    vals = [float(v) for v in values]
    mean = mean_interval(vals, confidence)[0]
    where = f"{label}: " if label else ""
    return mean, f" [{where}{describe_interval(vals, confidence, nonnegative=nonnegative)}]"


def _interval_verdict(c: Claim, values: Sequence[float], confidence: float, nonnegative: bool) -> None:
    """The accounting rule's point 4: a claim decided on the mean whose t interval reaches both
    sides of its rule (the rule gives another verdict somewhere in the interval than at the
    mean: at an end, or at one of the rule's edges inside it, as when the interval covers a
    whole band the mean lies outside) is ``undecided``. A claim whose rule cannot be re-applied,
    or with one seed, is left as it is."""
    vals = [float(v) for v in values if v is not None and np.isfinite(float(v))]
    if len(vals) < 2 or c.verdict not in ("holds", "fails"):
        return
    mean, lo, hi = mean_interval(vals, confidence)[:3]
    if not (np.isfinite(lo) and np.isfinite(hi)):
        return
    if nonnegative:
        lo = max(lo, 0.0)
    at_mean = check(c, mean)
    if at_mean is None:
        return
    inside = [e for e in edges(c) if lo <= e <= hi]
    if any(check(c, v) != at_mean for v in (lo, hi, *inside)):
        c.set_verdict("undecided")


def with_seed_interval(c: Claim, values: Sequence[float], confidence: float = 0.95, label: str = "", *,
                       nonnegative: bool | None = None) -> Claim:
    """A claim already decided on the mean of `values` (or on a reading whose `label` names it),
    with the mean's t interval appended to its statement as ``over_seeds`` writes it, and the
    verdict ``undecided`` when that interval reaches both sides of the claim's rule: the one
    place the interval of a claim over seeds goes. `nonnegative` defaults to the claim's unit
    being one of NONNEGATIVE_UNITS."""
    if nonnegative is None:
        nonnegative = c.unit in NONNEGATIVE_UNITS
    _, note = over_seeds(values, confidence, label, nonnegative=nonnegative)
    c.statement += note
    _interval_verdict(c, values, confidence, nonnegative)
    return c


def claim_over_seeds(make: Callable[..., Claim], per_seed: Sequence[float], *args, worst: str | None = None,
                     **kw) -> Claim:
    """``make(id, statement, ..., ours, ...)`` decided over seeds. ``args`` holds the builder's
    positional arguments with ``None`` where ``ours`` goes.

    - By default ``ours`` is the mean over seeds of ``per_seed``, the statement ends with the
      seeds' count and the 95 % t interval (``over_seeds``; clipped at 0 when the claim's unit is
      one of NONNEGATIVE_UNITS), and the claim is ``undecided`` when that interval reaches both
      sides of its rule.
    - A universal statement ("never", "every", "under 1 %") passes ``worst="max"`` or
      ``worst="min"``: ``ours`` is the worst seed's value (the largest or the smallest), the
      claim holds only when the rule holds on every seed, and the mean is shown beside it."""
    values = per_seed.to_numpy(float) if hasattr(per_seed, "to_numpy") else per_seed
    vals = [float(v) for v in values]
    nonneg = any(isinstance(a, str) and a in NONNEGATIVE_UNITS for a in args[2:])
    if worst is None:
        mean, note = over_seeds(vals, nonnegative=nonneg)
        args = [mean if a is None else a for a in args]
        args[1] = args[1] + note
        c = make(*args, **kw)
        _interval_verdict(c, vals, 0.95, nonneg)
        return c
    if worst not in ("max", "min"):
        raise ValueError(f"worst must be 'max' or 'min', not {worst!r}")
    finite = [v for v in vals if np.isfinite(v)]
    w = (max(finite) if worst == "max" else min(finite)) if finite and len(finite) == len(vals) else float("nan")
    mean = mean_interval(vals)[0]
    k = vals.index(w) if np.isfinite(w) else -1
    where = f"seed #{k + 1}" if k >= 0 else "a seed with no value"
    args = [w if a is None else a for a in args]
    args[1] = args[1] + f" [worst of {len(vals)} seeds ({where}); mean {mean:.3g}]"
    c = make(*args, **kw)
    # the rule on every seed: the worst value decides only if the rule is monotone in it, so
    # check each seed as well
    if c.verdict == "holds" and any(check(c, v) is False for v in vals):
        c.set_verdict("fails")
    return c


#: The numeric builders by name, for helpers that take the rule as data.
RULES: dict[str, Callable[..., Claim]] = {"range": in_range, "at_least": at_least, "at_most": at_most,
                                          "within": within}


def explain(c: Claim, text: str) -> Claim:
    """A paper claim that does not hold carries its cause and the output that shows it; one that
    holds carries none."""
    if c.kind == "paper" and not c.holds:
        c.explanation = text
    return c


def reading_claim(cid: str, statement: str, rule: str | Callable[..., Claim], limits: tuple, runs,
                  col: str, unit: str, *, setting: str, order: Sequence[str] | None = None,
                  explanation: str = "", worst: str | None = None, kind: str = "paper", finite: bool = False,
                  **kw) -> Claim:
    """The one claim over a table of (reading, seed) rows: ``runs`` has a ``reading`` column and
    one row per reading and seed. At each reading the claim is decided over its seeds
    (``claim_over_seeds``: the mean with its t interval, undecided when the interval reaches both
    sides of the rule; or the worst seed, ``worst="max"`` / ``"min"``, for a universal
    statement), and the readings are combined by ``combine_readings`` (the accounting rule) in
    the order ``order`` (the declared order, primary first; readings not in it follow in the
    table's order; default: the table's order). ``rule``: a builder or its name in
    :data:`RULES`: "range" (``limits`` = (lo, hi)), "at_least" or "at_most" (``limits`` =
    (bound,)), "within" (``limits`` = (paper value,), with ``rel_tol`` or ``abs_tol`` in ``kw``).
    ``explanation`` is kept only when a paper claim does not hold (``explain``). ``finite``: the
    runs without a value (NaN) are left out of each reading's seeds, as a table's mean leaves
    them out."""
    make = RULES[rule] if isinstance(rule, str) else rule
    present = list(dict.fromkeys(runs["reading"]))
    order = list(order) if order is not None else present
    names = [r for r in order if r in present] + [r for r in present if r not in order]

    def values(r: str) -> np.ndarray:
        v = runs.loc[runs["reading"] == r, col].to_numpy(float)
        return v[np.isfinite(v)] if finite else v

    per = {r: claim_over_seeds(make, values(r), cid, statement, *limits, None, unit, kind=kind, worst=worst, **kw)
           for r in names}
    return explain(combine_readings(per, setting), explanation)


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


def _reading_dir(name: str) -> str:
    return f"reading-{name.replace(' ', '-')}"


def run_readings(run: Callable[..., "Result"], setting: str, readings: dict[str, Any], out: Path, seed: int,
                 quick: bool = False, **params) -> "Result":
    """``run(out, seed, quick, reading=...)`` once per entry of ``readings`` (name -> what ``run``
    takes as ``reading``; the paper's declared primary reading first), the primary into ``out``
    itself and the others into ``out/reading-NAME``; each claim decided by the accounting rule
    (``combine_readings``: it holds only when it holds under every reading). A ``--quick`` run
    (which decides nothing) runs the primary reading only."""
    names = list(readings)
    results = {}
    for k, name in enumerate(names[:1] if quick else names):
        sub = out if k == 0 else out / _reading_dir(name)
        sub.mkdir(parents=True, exist_ok=True)
        results[name] = run(sub, seed, quick, reading=readings[name], **params)
    first = results[names[0]]
    lists = {n: r.claims for n, r in results.items()}
    ids = [c.id for c in first.claims]
    if any([c.id for c in cs] != ids for cs in lists.values()):
        raise ValueError(f"the readings of {setting!r} must give the same claims in the same order")
    claims = [combine_readings({n: cs[i] for n, cs in lists.items()}, setting) for i in range(len(ids))]
    files = list(first.files)
    for k, (name, r) in enumerate(results.items()):
        if k:
            files += [f"{_reading_dir(name)}/{f}" for f in r.files]
    params_out = {**first.params, "open_setting": setting, "primary_reading": names[0],
                  "readings": {n: readings[n] for n in results},
                  "params_by_reading": {n: r.params for k, (n, r) in enumerate(results.items()) if k}}
    return Result(params_out, claims, files)


def run_phase(run: Callable[..., "Result"], overhead_s: float, out: Path, seed: int, quick: bool = False,
              **params) -> "Result":
    """A phase-sensitive experiment (docs/fidelity/phase.md), its claims decided over
    phase-randomised runs, with every packet delayed up to ``overhead_s`` at its sender (the
    rule's overhead: one of its largest packets at its slowest bottleneck). ``run(out, seed,
    quick)`` runs once deterministic into ``out/phase-off`` and once randomised into ``out``; the
    claims are the randomised run's, each statement followed by the deterministic value and
    verdict. Under ``castlab reproduce --phase-overhead S`` (the variable already set) it runs
    that once; a ``--quick`` run (which decides nothing) runs the randomised case only."""
    from castlab.parallel import current_workers, workers
    from castlab.simulator import PHASE_ENV

    if default_phase_overhead() > 0:
        return run(out, seed, quick, **params)
    det = None
    # Each case runs in its own workers block: the worker processes read the phase variable
    # when they start, so a pool started by one case must not serve the other.
    if not quick:
        sub = out / "phase-off"
        sub.mkdir(parents=True, exist_ok=True)
        with workers(current_workers()):
            det = run(sub, seed, quick, **params)
    os.environ[PHASE_ENV] = repr(float(overhead_s))
    try:
        with workers(current_workers()):
            res = run(out, seed, quick, **params)
    finally:
        os.environ.pop(PHASE_ENV, None)
    off = {c.id: c for c in det.claims} if det else {}
    for c in res.claims:
        d = off.get(c.id)
        if d is not None:
            ours = f"{d.ours:.6g}" if isinstance(d.ours, float) else str(d.ours)
            c.statement += f" [phase-randomised, {overhead_s * 1e3:.4g} ms; deterministic: {ours}, {d.verdict}]"
    files = list(res.files) + ([f"phase-off/{f}" for f in det.files] if det else [])
    return Result({**res.params, "phase_overhead_s": float(overhead_s),
                   "phase_off": "phase-off" if det else None}, res.claims, files)


def write_summary(out: Path, exp: Experiment, seed: int, result: Result, wall_s: float, quick: bool = False) -> dict:
    """summary.json, each claim with its revisions (``castlab.experiments.revisions``); a
    ``quick`` run is marked as a whole (``"quick": true``) and per claim (``"verdict":
    QUICK_NOTE``), so its ``holds`` is not read as the experiment's result."""
    claims = [asdict(c) for c in result.claims]
    for c in claims:
        c["revised"] = c["revised"] or revisions_for(exp.name, c["id"])
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
    if default_phase_overhead() > 0:
        # phase randomisation was on for every simulator of the run (`castlab.simulator`)
        summary["phase_overhead_s"] = default_phase_overhead()
    elif result.params.get("phase_overhead_s"):
        # a phase-sensitive figure's claims, decided over randomised runs (run_phase)
        summary["phase_overhead_s"] = result.params["phase_overhead_s"]
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
