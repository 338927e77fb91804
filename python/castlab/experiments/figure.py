"""An experiment as data: the shape a figure takes so that running is apart from analysis.

A :class:`Figure` says what to run and how to read it, and nothing else:

- ``cases(quick)``: the runs, each a :class:`Case` (its parameters as data, and the offset of
  its seed from the experiment's when runs share seeds), in order;
- ``measure(seed, **case.params) -> row``: one simulation, read into one row (a dict);
- ``table(rows) -> table``: the rows as the table written to ``csv`` (derived columns added),
  and ``derived``: further tables computed from it, each written to its own file;
- ``claims(table) -> [Claim]``: the claims, decided from the table alone;
- ``plot(table, out) -> files``: the figure, drawn from the table alone;
- ``params(quick, seed)``: what the summary records of the set-up.

:func:`drive` is the one runner: it runs the cases (case k with seed ``seed + k``, or
``seed + case.seed``) through
``map_runs`` (the process pool when ``--jobs`` asks for one; the rows are the same either way),
writes the table, draws the plot and decides the claims. The accounting rule's machinery
(readings, seeds, phase randomisation) wraps a figure's experiment as it wraps any other
(``banded``, ``phase_decided``, ``claim_over_seeds`` inside ``claims``). smoltcp's
``tests/netsim.rs`` (cases as data, one runner) and Pantheon's split of running from analysis
are the models.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import Any, Callable, Optional

import pandas as pd

from castlab.experiments.common import Claim, Experiment, Result, map_runs

__all__ = ["Case", "Figure", "drive", "experiment"]


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
    measure: Callable[..., dict]
    table: Callable[[list[dict]], pd.DataFrame]
    claims: Callable[[pd.DataFrame], list[Claim]]
    plot: Callable[[pd.DataFrame, Path], list[str]]
    csv: str
    params: Callable[[bool, int], dict[str, Any]]
    derived: dict[str, Callable[[pd.DataFrame], pd.DataFrame]] = field(default_factory=dict)


def _measure(measure: Callable[..., dict], seed: int, params: dict) -> dict:
    return measure(seed, **params)


def drive(fig: Figure, out: Path, seed: int, quick: bool = False) -> Result:
    """Run ``fig``'s cases, case k under seed ``seed + k``, and read them: the table as
    ``fig.csv`` and the derived tables, the plot's files, the claims; the summary's params are
    ``fig.params(quick, seed)``."""
    cases = fig.cases(quick)
    rows = map_runs(partial(_measure, fig.measure),
                    [(seed + (k if c.seed is None else c.seed), c.params) for k, c in enumerate(cases)])
    table = fig.table(rows)
    table.to_csv(out / fig.csv, index=False)
    for name, make in fig.derived.items():
        make(table).to_csv(out / name, index=False)
    files = fig.plot(table, out)
    return Result(fig.params(quick, seed), fig.claims(table), [*fig.derived, fig.csv, *files])


def experiment(fig: Figure) -> Experiment:
    """The registry's entry for ``fig``: ``castlab reproduce NAME`` drives it."""
    run = partial(drive, fig)
    return Experiment(fig.name, fig.paper, fig.figure, fig.description, run)
