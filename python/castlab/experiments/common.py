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


from castlab.claims import (KINDS, QUICK_NOTE, UNCLASSIFIED, Claim, at_least, at_most, band_at_least, band_at_most,
                            band_in_range, band_over_readings, in_band, in_range, inconsistent, t_interval, within)
from castlab.parallel import map_runs
from castlab.simulator import default_phase_overhead
from castlab.stats import describe_interval, mean_interval

__all__ = ["KINDS", "QUICK_NOTE", "UNCLASSIFIED", "NONNEGATIVE_UNITS", "Claim", "inconsistent", "within", "at_most",
           "at_least", "in_range", "in_band", "band_in_range", "band_at_least", "band_at_most", "band_over_readings",
           "t_interval", "map_runs", "over_seeds", "claim_over_seeds", "with_seed_interval", "Experiment", "Result",
           "write_summary", "timed", "banded", "phase_decided"]


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


def with_seed_interval(c: Claim, values: Sequence[float], confidence: float = 0.95, label: str = "", *,
                       nonnegative: bool | None = None) -> Claim:
    """A claim already decided on the mean of `values` (or on a band whose `label` reading is
    that mean), with the mean's t interval appended to its statement as ``over_seeds`` writes
    it: the one place the interval of a claim over seeds goes. `nonnegative` defaults to the
    claim's unit being one of NONNEGATIVE_UNITS."""
    if nonnegative is None:
        nonnegative = c.unit in NONNEGATIVE_UNITS
    _, note = over_seeds(values, confidence, label, nonnegative=nonnegative)
    c.statement += note
    return c


def claim_over_seeds(make: Callable[..., Claim], per_seed: Sequence[float], *args, **kw) -> Claim:
    """``make(id, statement, ..., ours, ...)`` with ``ours`` the mean over seeds of ``per_seed`` and
    the statement ending with the seeds' count and the 95 % t interval (``over_seeds``; clipped
    at 0 when the claim's unit is one of NONNEGATIVE_UNITS). ``args`` holds the builder's
    positional arguments with ``None`` where ``ours`` goes."""
    values = per_seed.to_numpy(float) if hasattr(per_seed, "to_numpy") else per_seed
    nonneg = any(isinstance(a, str) and a in NONNEGATIVE_UNITS for a in args[2:])
    mean, note = over_seeds(values, nonnegative=nonneg)
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


def banded(run: Callable[..., "Result"], setting: str, readings: dict[str, dict]) -> Callable[..., "Result"]:
    """An experiment run under every reading of a setting the paper leaves open: ``run(out, seed,
    quick, reading=...)`` once per entry of ``readings`` (name -> what ``run`` takes as
    ``reading``), the first into ``out`` itself and the others into ``out/reading-NAME``; the
    claims decided by the band rule (``band_over_readings``). A ``--quick`` run (which decides
    nothing) runs the first reading only."""
    names = list(readings)

    def run_banded(out: Path, seed: int, quick: bool = False, **params) -> Result:
        results = {}
        for k, name in enumerate(names[:1] if quick else names):
            sub = out if k == 0 else out / f"reading-{name.replace(' ', '-')}"
            sub.mkdir(parents=True, exist_ok=True)
            results[name] = run(sub, seed, quick, reading=readings[name], **params)
        first = results[names[0]]
        claims = band_over_readings({n: r.claims for n, r in results.items()}, setting)
        files = list(first.files)
        for k, (name, r) in enumerate(results.items()):
            if k:
                files += [f"reading-{name.replace(' ', '-')}/{f}" for f in r.files]
        params_out = {**first.params, "open_setting": setting, "readings": {n: readings[n] for n in results},
                      "params_by_reading": {n: r.params for k, (n, r) in enumerate(results.items()) if k}}
        return Result(params_out, claims, files)

    run_banded.__name__ = getattr(run, "__name__", "run")
    run_banded.__doc__ = run.__doc__
    return run_banded


def phase_decided(run: Callable[..., "Result"], overhead_s: float) -> Callable[..., "Result"]:
    """An experiment whose set-up is phase-sensitive (docs/fidelity/phase.md): its claims are
    decided over phase-randomised runs, with every packet delayed up to ``overhead_s`` at its
    sender (the rule's overhead: one of its largest packets at its slowest bottleneck). It runs
    once deterministic into ``out/phase-off`` and once randomised into ``out``; the claims are the
    randomised run's, each statement followed by the deterministic value and verdict. Under
    ``castlab reproduce --phase-overhead S`` (the variable already set) it runs that once; a
    ``--quick`` run (which decides nothing) runs the randomised case only."""
    from castlab.simulator import PHASE_ENV

    def run_phase(out: Path, seed: int, quick: bool = False, **params) -> Result:
        if default_phase_overhead() > 0:
            return run(out, seed, quick, **params)
        det = None
        if not quick:
            sub = out / "phase-off"
            sub.mkdir(parents=True, exist_ok=True)
            det = run(sub, seed, quick, **params)
        os.environ[PHASE_ENV] = repr(float(overhead_s))
        try:
            res = run(out, seed, quick, **params)
        finally:
            os.environ.pop(PHASE_ENV, None)
        off = {c.id: c for c in det.claims} if det else {}
        for c in res.claims:
            d = off.get(c.id)
            if d is not None:
                ours = f"{d.ours:.6g}" if isinstance(d.ours, float) else str(d.ours)
                c.statement += (f" [phase-randomised, {overhead_s * 1e3:.4g} ms; deterministic: {ours}, "
                                f"{'holds' if d.holds else 'fails'}]")
        files = list(res.files) + ([f"phase-off/{f}" for f in det.files] if det else [])
        return Result({**res.params, "phase_overhead_s": float(overhead_s),
                       "phase_off": "phase-off" if det else None}, res.claims, files)

    run_phase.__name__ = getattr(run, "__name__", "run")
    run_phase.__doc__ = run.__doc__
    return run_phase


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
    if default_phase_overhead() > 0:
        # phase randomisation was on for every simulator of the run (`castlab.simulator`)
        summary["phase_overhead_s"] = default_phase_overhead()
    elif result.params.get("phase_overhead_s"):
        # a phase-sensitive experiment's claims, decided over randomised runs (phase_decided)
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
