"""Declarative scenarios: a TOML file or a dict describes a simulation.

A scenario is data: nodes, links with their queues, sessions (a source and its multicast
groups), receivers with their protocol configs, TCP and CBR flows, router services, monitors,
the duration and the seeds. ``Scenario.from_toml(path)`` reads a file, ``Scenario.from_dict(d)``
takes the same schema built in code, ``build(seed)`` gives a :class:`castlab.Simulator` and
``run(seed, out)`` runs it, writes the outputs and returns flat summary metrics. The schema is
documented in ``docs/guide.md`` ("Scenarios"); ``examples/tree.toml`` is a worked file.

Every check names the key as a dotted path (``links.bottleneck.delay``: tables of the file are
addressed by their ``name``) and, for a file, its line. tomllib gives no line numbers, so
:class:`schema._Lines` finds them with a small scan of the text: good for ``key = value`` lines, keys
of inline tables written on one line and ``[[table]]`` headers.

The same dotted paths override values in :meth:`Scenario.with_params` (the sweep runner's
grid keys): ``{"links.bottleneck.delay": "20ms", "receivers.r1.config.deaf_period": 5}``.

Reading and checking are in ``schema``, building in ``build``, the flow table and the files a
run writes in ``outputs``; every protocol's sessions, receivers and routers come from the
protocol registry.
"""

from __future__ import annotations

import copy
import os
import shutil
import time
from pathlib import Path
from typing import Any, Optional, Union

from castlab.scenario.build import Handles
from castlab.scenario.build import build as _build
from castlab.scenario.outputs import FLOW_COLUMNS, format_table, write_csv
from castlab.scenario.outputs import flow_table as _flow_table
from castlab.scenario.outputs import metrics as _metrics
from castlab.scenario.outputs import write as _write_outputs
from castlab.scenario.schema import (BareNumberWarning, ScenarioError, _Checker, _Lines, _normalise, did_you_mean,
                                     warn_bare_quantity, written_at)

__all__ = ["Scenario", "ScenarioError", "BareNumberWarning", "Handles", "FLOW_COLUMNS", "format_table", "write_csv",
           "did_you_mean", "written_at", "warn_bare_quantity"]

# the public names keep their home
ScenarioError.__module__ = BareNumberWarning.__module__ = Handles.__module__ = __name__


class Scenario:
    """A simulation described as data. Build one with :meth:`from_toml` or :meth:`from_dict`."""

    def __init__(self, data: dict, source: Optional[str] = None):
        # `data` is canonical (from _normalise); use the constructors.
        self._data = data
        self.source = source

    def __repr__(self) -> str:
        from castlab.scenario.schema import _flow_kinds

        d = self._data
        flows = "".join(f"{len(d[t])} {t}, " for t in _flow_kinds())
        return (f"Scenario({d['name']!r}, {len(d['nodes'])} nodes, {len(d['links'])} links, "
                f"{len(d['receivers'])} receivers, {flows}{d['duration']:g} s)")

    # -- construction

    @classmethod
    def from_toml(cls, path: Union[str, Path], strict: bool = True) -> "Scenario":
        """Read a scenario file. Errors name the key and its line; with ``strict=False`` an
        implausible value (a rate under 1 kb/s, a delay over 100 s) is a warning instead."""
        try:
            import tomllib
        except ModuleNotFoundError:  # Python < 3.11: the same parser, as the tomli package
            import tomli as tomllib

        path = Path(path)
        text = path.read_text()
        try:
            raw = tomllib.loads(text)
        except tomllib.TOMLDecodeError as e:
            raise ScenarioError(f"{path}: {e}") from None
        chk = _Checker(str(path), _Lines(text), strict)
        return cls(_normalise(raw, chk), source=str(path))

    @classmethod
    def from_dict(cls, d: dict, strict: bool = True) -> "Scenario":
        """The same schema as a file, built in code (values may be numbers in SI or strings
        with units)."""
        chk = _Checker(None, None, strict)
        return cls(_normalise(copy.deepcopy(d), chk))

    # -- the sweep runner's contract

    @property
    def name(self) -> str:
        return self._data["name"]

    @property
    def seeds(self) -> list[int]:
        return list(self._data["seeds"])

    @property
    def duration(self) -> float:
        return self._data["duration"]

    def to_dict(self) -> dict:
        """The canonical form: every key present, times in s and rates in bit/s, entries
        named. JSON-serialisable; ``from_dict(to_dict())`` gives the same scenario."""
        return copy.deepcopy(self._data)

    def with_params(self, params: dict[str, Any]) -> "Scenario":
        """A new scenario with dotted keys overridden: ``"duration"``, ``"links.bottleneck.delay"``,
        ``"receivers.r1.config.deaf_period"`` (entries of [[tables]] by their name). An unknown
        key is an error naming it."""
        d = self.to_dict()
        for key, value in params.items():
            parts = key.split(".")
            node: Any = d
            path: list[str] = []
            for j, part in enumerate(parts[:-1]):
                path.append(part)
                if isinstance(node, list):
                    match = [x for x in node if isinstance(x, dict) and x.get("name") == part]
                    if not match:
                        names = [x.get("name") for x in node]
                        raise ScenarioError(f"{key!r}: no {'.'.join(path[:-1])} entry named {part!r} "
                                            f"(names: {', '.join(map(str, names)) or 'none'})")
                    node = match[0]
                elif isinstance(node, dict):
                    if part not in node:
                        if part == "config" and j > 0:
                            node[part] = {}
                        else:
                            raise ScenarioError(f"{key!r}: unknown key {'.'.join(path)!r}")
                    node = node[part]
                else:
                    raise ScenarioError(f"{key!r}: {'.'.join(path[:-1])!r} is a value, not a table")
            last = parts[-1]
            if isinstance(node, list):
                raise ScenarioError(f"{key!r}: name an entry of {'.'.join(path) or last!r} and its key "
                                    f"(e.g. {key}.NAME.KEY)")
            if not isinstance(node, dict):
                raise ScenarioError(f"{key!r}: {'.'.join(path)!r} is a value, not a table")
            # a key the entry does not have yet: only config fields (checked by from_dict) and
            # the optional keys the schema allows, so a typo is caught below
            node[last] = value
        try:
            return Scenario.from_dict(d)
        except ScenarioError as e:
            raise ScenarioError(f"with_params({', '.join(params)}): {e}") from None

    # -- building and running (castlab.scenario.build, castlab.scenario.outputs)

    def build(self, seed: int, capture_dir: Optional[Union[str, Path]] = None):
        """A :class:`castlab.Simulator` for this scenario and ``seed``; its ``scenario_handles``
        attribute (:class:`Handles`) maps the entries' names to agent ids and channels. With
        `capture_dir`, the ``[[captures]]`` write their pcaps there (complete once the simulator
        is dropped)."""
        return _build(self, seed, None if capture_dir is None else Path(capture_dir))

    def flow_table(self, sim) -> list[dict]:
        """One row per receiver and flow after a run (FlowMonitor-like): sent, received, lost,
        loss, mean rate over [start, now], worst-window loss per window, final level."""
        return _flow_table(self, sim)

    def metrics(self, rows: list[dict], sim) -> dict[str, Any]:
        """Flat scalar metrics: ``"r1.loss"`` per row and column, plus totals."""
        return _metrics(rows, sim)

    def run(self, seed: int, out: Optional[Path] = None) -> dict[str, Any]:
        """Build, run for the scenario's duration, and return flat summary metrics (scalars;
        per row ``"NAME.COLUMN"``, and ``"total.*"``). With ``out``, write there summary.json,
        flows.csv, levels.csv, one CSV per monitor and one pcap per capture."""
        t0 = time.perf_counter()
        work = None
        if out is not None:
            # Written beside `out` and moved in when complete, summary.json last, so an
            # interrupted run never leaves a summary beside another run's CSVs; the captures
            # are written there while the simulator runs.
            out = Path(out)
            out.parent.mkdir(parents=True, exist_ok=True)
            work = out.parent / f".{out.name}.partial-{os.getpid()}"
            shutil.rmtree(work, ignore_errors=True)
            work.mkdir()
        try:
            sim = self.build(seed, capture_dir=work)
            from castlab import run_with_progress

            run_with_progress(sim, self.duration, label=f"{self.name} seed {seed}")
            rows = self.flow_table(sim)
            metrics = self.metrics(rows, sim)
            if out is not None and work is not None:
                _write_outputs(self, work, seed, sim, rows, metrics, time.perf_counter() - t0)
                del sim  # the captures' files are complete once the simulator is dropped
                out.mkdir(exist_ok=True)
                for f in sorted(work.iterdir(), key=lambda f: f.name == "summary.json"):
                    os.replace(f, out / f.name)
                work.rmdir()
        except BaseException:
            if work is not None:
                shutil.rmtree(work, ignore_errors=True)
            raise
        return metrics
