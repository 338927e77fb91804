"""What a sweep runs: a built-in experiment by name, or a scenario (a file or an object).

A target knows its identity (what goes into the run key), checks a grid point's parameters
before anything runs, and runs one (params, seed) into a folder, returning flat scalar metrics.
Targets are pickled into worker processes, so they hold names and scenario data, not live
simulators.

The scenario contract (``castlab.scenario``): ``Scenario.from_toml(path)``, ``.name``,
``.to_dict()`` (canonical, for hashing), ``.with_params({dotted key: value}) -> Scenario`` and
``.run(seed, out) -> {metric: scalar}``. Any object with those methods is a scenario target.
"""

from __future__ import annotations

import abc
import inspect
import time
import warnings
from pathlib import Path
from typing import Any, Mapping, Optional

from castlab.experiments import REGISTRY
from castlab.experiments.common import write_summary
from castlab.scenario import Scenario

__all__ = ["Target", "ExperimentTarget", "ScenarioTarget", "make_target", "flat_metrics"]

# Columns every stored row has; a parameter may not take one of these names.
META_COLUMNS = ("key", "target", "seed", "status", "error", "castlab_version", "git_commit", "wall_s",
                "finished_at", "host")
_SCALARS = (bool, int, float, str)


class Target(abc.ABC):
    """What a sweep runs: an experiment or a scenario."""

    label: str

    @abc.abstractmethod
    def identity(self) -> dict:
        """What identifies the target in a run's key (with params, seed and version)."""

    @abc.abstractmethod
    def check(self, params: Mapping[str, Any]) -> None:
        """Raise ValueError naming an unknown or bad parameter, before anything runs."""

    @abc.abstractmethod
    def run(self, params: Mapping[str, Any], seed: int, out: Path) -> dict:
        """Run once into `out`; return the flat metrics."""


class ExperimentTarget(Target):
    """A built-in experiment (``castlab list``). Its parameters are the keyword arguments its
    run function accepts beyond (out, seed, quick); its metrics are each claim's ``ours`` (when
    numeric) and ``holds``, keyed by the claim id (``<id>`` and ``<id>.holds``)."""

    def __init__(self, name: str, quick: bool = False):
        if name not in REGISTRY:
            raise ValueError(f"unknown experiment {name!r}; `castlab list` shows them")
        self.name = name
        self.quick = bool(quick)
        self.label = name

    def identity(self) -> dict:
        # --quick changes the results, so it is part of what the key hashes.
        return {"experiment": self.name, "quick": self.quick}

    def accepted(self) -> Optional[list[str]]:
        """The parameter names the run function takes, or None when it takes **kwargs."""
        sig = inspect.signature(REGISTRY[self.name].run)
        names = []
        for p in sig.parameters.values():
            if p.kind is p.VAR_KEYWORD:
                return None
            if p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY) and p.name not in ("out", "seed", "quick"):
                names.append(p.name)
        return names

    def check(self, params: Mapping[str, Any]) -> None:
        accepted = self.accepted()
        if accepted is None:
            return
        for k in params:
            if k not in accepted:
                takes = ", ".join(accepted) if accepted else "no parameters"
                raise ValueError(f"experiment {self.name!r} has no parameter {k!r} (it takes: {takes})")

    def run(self, params: Mapping[str, Any], seed: int, out: Path) -> dict:
        exp = REGISTRY[self.name]
        t = time.perf_counter()
        result = exp.run(out, seed, quick=self.quick, **params)
        write_summary(out, exp, seed, result, time.perf_counter() - t, quick=self.quick)
        metrics: dict[str, Any] = {}
        for c in result.claims:
            ours = c.ours.item() if hasattr(c.ours, "item") else c.ours
            if isinstance(ours, (int, float)) and not isinstance(ours, bool):
                metrics[c.id] = float(ours)
            metrics[f"{c.id}.holds"] = bool(c.holds)
        return metrics

    def __repr__(self) -> str:
        return f"ExperimentTarget({self.name!r}, quick={self.quick})"


class ScenarioTarget(Target):
    """A scenario: loaded from a TOML file or given as an object that follows the contract. The
    loaded scenario itself goes to the workers (not its path), so editing the file while a sweep
    runs cannot give a run other content than its key says."""

    def __init__(self, scenario: Any = None, path: Optional[Path] = None):
        if (scenario is None) == (path is None):
            raise ValueError("give a scenario or a path")
        self.path = Path(path).resolve() if path is not None else None
        self._scenario = scenario
        if self._scenario is None:
            self._scenario = self._load()
        self.label = str(getattr(self._scenario, "name", None) or (self.path.stem if self.path else "scenario"))
        self._identity = {"scenario": self._scenario.to_dict()}

    def _load(self):
        return Scenario.from_toml(self.path)

    def scenario(self):
        if self._scenario is None:
            self._scenario = self._load()
        return self._scenario

    def identity(self) -> dict:
        return self._identity

    def check(self, params: Mapping[str, Any]) -> None:
        for k in params:
            if k in META_COLUMNS:
                raise ValueError(f"parameter {k!r} clashes with a results column; rename it")
        if params:
            self.scenario().with_params(dict(params))  # raises, naming the key, when a key is unknown

    def run(self, params: Mapping[str, Any], seed: int, out: Path) -> dict:
        s = self.scenario()
        if params:
            s = s.with_params(dict(params))
        return s.run(seed, out)

    def __repr__(self) -> str:
        return f"ScenarioTarget({self.label!r})"


def make_target(target: Any, quick: bool = False) -> Target:
    """An experiment name, a scenario file (``.toml``), a scenario object or a Target."""
    if isinstance(target, Target):
        return target
    if isinstance(target, (str, Path)):
        if isinstance(target, str) and target in REGISTRY:
            return ExperimentTarget(target, quick=quick)
        p = Path(target)
        if p.suffix == ".toml" or p.is_file():
            if not p.is_file():
                raise ValueError(f"scenario file {str(p)!r} does not exist")
            if quick:
                warnings.warn("--quick applies to built-in experiments only; the scenario runs as written",
                              stacklevel=3)
            return ScenarioTarget(path=p)
        raise ValueError(f"{str(target)!r} is neither an experiment (`castlab list`) nor a scenario file")
    if all(callable(getattr(target, m, None)) for m in ("to_dict", "with_params", "run")):
        if quick:
            warnings.warn("quick applies to built-in experiments only; the scenario runs as written", stacklevel=3)
        return ScenarioTarget(scenario=target)
    raise ValueError(f"cannot sweep {target!r}: give an experiment name, a scenario file or a Scenario")


def flat_metrics(metrics: Any) -> dict:
    """Checks that a run returned {name: scalar}; numpy scalars become Python ones."""
    if not isinstance(metrics, Mapping):
        raise TypeError(f"a run must return a dict of scalar metrics, got {type(metrics).__name__}")
    flat = {}
    for k, v in metrics.items():
        if not isinstance(k, str):
            raise TypeError(f"metric names must be text, got {k!r}")
        if hasattr(v, "item") and not isinstance(v, _SCALARS):
            v = v.item()
        if v is not None and not isinstance(v, _SCALARS):
            raise TypeError(f"metric {k!r} is a {type(v).__name__}, not a scalar")
        flat[k] = v
    return flat
