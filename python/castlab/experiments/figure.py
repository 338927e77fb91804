"""An experiment as data: the shape a figure takes so that running is apart from analysis.

A :class:`Figure` says what to run and how to read it, and nothing else:

- ``cases(quick)``: the runs, each a :class:`Case` (its parameters as data, and the offset of
  its seed from the experiment's when runs share seeds), in order;
- ``measure(seed, **case.params) -> rows``: one simulation, read into its rows (a dict, a list
  of dicts, a DataFrame: whatever ``table`` reads), or a :class:`Measured` when the run also
  gives files of its own (a trace), which the driver writes beside the tables;
- ``table(rows) -> table``: the rows as the table written to ``csv`` (derived columns added),
  or a dict of tables, each written under its name when the name ends in ``.csv`` and kept for
  the claims and the plot otherwise; ``derived``: further tables computed from it, each written
  to its own file;
- ``claims(table) -> [Claim]``: the claims, decided from the table alone;
- ``plot(table, out) -> files``: the figure, drawn from the table alone;
- ``params(quick, seed)``: what the summary records of the set-up, and ``summary(table)``:
  what it records that is read from the runs (added after it);
- ``readings``: the readings of the setting the paper leaves open (``setting``), name -> what
  ``measure`` takes as ``reading``, the paper's declared primary first (from the paper's
  package); none: ``measure`` takes no reading;
- ``phase_s``: for a phase-sensitive set-up (docs/fidelity/phase.md), the phase overhead its
  claims are decided under; 0: deterministic runs only.

:func:`drive` is the one runner: it runs the cases (case k with seed ``seed + k``, or
``seed + case.seed``) through ``map_runs`` (the process pool when ``--jobs`` asks for one; the
rows are the same either way), writes the tables and the runs' files, draws the plot and decides
the claims; under every reading (``run_readings``: the primary into the experiment's folder, the
others into ``reading-NAME``, each claim decided by the accounting rule), and for a
phase-sensitive figure once deterministic into ``phase-off`` and once randomised, whose claims
count (``run_phase``). smoltcp's ``tests/netsim.rs`` (cases as data, one runner) and Pantheon's
split of running from analysis are the models.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import Any, Callable, Optional

import pandas as pd

from castlab.experiments.common import Claim, Experiment, Result, map_runs, run_phase, run_readings

__all__ = ["Case", "Figure", "Measured", "drive", "experiment"]


@dataclass(frozen=True)
class Case:
    """One run of a figure: the keyword arguments its ``measure`` takes besides the seed, and
    the offset of its seed from the experiment's (default: its place in the list)."""

    params: dict = field(default_factory=dict)
    seed: Optional[int] = None


@dataclass(frozen=True)
class Figure:
    name: str
    paper: str
    figure: str
    description: str
    cases: Callable[[bool], list[Case]]
    measure: Callable[..., Any]
    table: Callable[[list], Any]
    claims: Callable[[Any], list[Claim]]
    plot: Callable[[Any, Path], list[str]]
    csv: str
    params: Callable[[bool, int], dict[str, Any]]
    derived: dict[str, Callable[[pd.DataFrame], pd.DataFrame]] = field(default_factory=dict)
    summary: Optional[Callable[[Any], dict[str, Any]]] = None
    readings: dict[str, Any] = field(default_factory=dict)
    setting: str = ""
    phase_s: float = 0.0

    def __post_init__(self) -> None:
        if self.readings and not self.setting:
            raise ValueError(f"figure {self.name!r}: readings need the name of the setting they read")
        if self.phase_s < 0:
            raise ValueError(f"figure {self.name!r}: phase_s must be >= 0, not {self.phase_s}")


@dataclass(frozen=True)
class Measured:
    """What ``measure`` returns when its run gives files as well as rows: ``rows`` go to
    ``table`` as a plain return would, ``files`` (file name -> table) are written by the driver
    into the run's folder, in case order (a trace of one run beside the figure's table)."""

    rows: Any
    files: dict[str, pd.DataFrame] = field(default_factory=dict)


def _measure(measure: Callable[..., Any], seed: int, params: dict) -> Any:
    return measure(seed, **params)


def _drive_once(fig: Figure, out: Path, seed: int, quick: bool = False, reading: Any = None) -> Result:
    """The figure's cases under one reading (``reading`` None: the figure reads none)."""
    cases = fig.cases(quick)
    extra = {} if reading is None else {"reading": reading}
    if extra and any("reading" in c.params for c in cases):
        raise ValueError(f"figure {fig.name!r}: a case names its own reading and the figure declares readings")
    got = map_runs(partial(_measure, fig.measure),
                   [(seed + (k if c.seed is None else c.seed), {**c.params, **extra}) for k, c in enumerate(cases)])
    rows, run_files = [], {}
    for g in got:
        if isinstance(g, Measured):
            for name, t in g.files.items():
                if name in run_files:
                    raise ValueError(f"figure {fig.name!r}: two runs gave the file {name!r}")
                run_files[name] = t
            rows.append(g.rows)
        else:
            rows.append(g)
    for name, t in run_files.items():
        t.to_csv(out / name, index=False)
    table = fig.table(rows)
    if isinstance(table, dict):
        written = [name for name in table if name.endswith(".csv")]
        for name in written:
            table[name].to_csv(out / name, index=False)
    else:
        table.to_csv(out / fig.csv, index=False)
        written = [fig.csv]
    for name, make in fig.derived.items():
        make(table).to_csv(out / name, index=False)
    files = fig.plot(table, out)
    params = fig.params(quick, seed)
    if fig.summary is not None:
        params = {**params, **fig.summary(table)}
    return Result(params, fig.claims(table), [*run_files, *fig.derived, *written, *files])


def drive(fig: Figure, out: Path, seed: int, quick: bool = False) -> Result:
    """Run ``fig``'s cases, case k under seed ``seed + k``, and read them: the runs' files, the
    tables and the derived tables, the plot's files, the claims; the summary's params are
    ``fig.params(quick, seed)`` and ``fig.summary(table)``. Under every reading of
    ``fig.readings`` (``run_readings``), and for a phase-sensitive figure deterministic and
    randomised (``run_phase``)."""
    run: Callable[..., Result] = partial(_drive_once, fig)
    if fig.readings:
        run = partial(run_readings, run, fig.setting, fig.readings)
    if fig.phase_s > 0:
        run = partial(run_phase, run, fig.phase_s)
    return run(out, seed, quick)


def experiment(fig: Figure) -> Experiment:
    """The registry's entry for ``fig``: ``castlab reproduce NAME`` drives it."""
    run = partial(drive, fig)
    return Experiment(fig.name, fig.paper, fig.figure, fig.description, run)
