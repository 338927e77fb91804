"""castlab: a toolkit for multicast congestion control.

The simulator core is Rust (``castlab._native``); this package adds the scenario helpers,
the experiments that reproduce the papers' figures, plots and the ``castlab`` command.
"""

from castlab._native import transmission_ns, worst_window_loss, __version__
from castlab.simulator import Simulator
from castlab.run import run_with_progress

# The frame helpers need pandas, which takes most of a second to import; they are loaded on
# first use so that `import castlab` (and `castlab --version`) stays fast.
_LAZY = {
    "arrivals_frame": "castlab.frames",
    "losses_frame": "castlab.frames",
    "series_frame": "castlab.frames",
    "level_frame": "castlab.frames",
    "Scenario": "castlab.scenario",
    "ScenarioError": "castlab.scenario",
    # studies: they load pandas, pyarrow, tqdm and dask only when called
    "sweep": "castlab.study",
    "results": "castlab.study",
    "aggregate": "castlab.study",
}


def __getattr__(name: str):
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'castlab' has no attribute {name!r}")
    import importlib

    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__():
    return sorted(set(globals()) | set(_LAZY))

__all__ = [
    "Simulator",
    "transmission_ns",
    "worst_window_loss",
    "arrivals_frame",
    "losses_frame",
    "series_frame",
    "level_frame",
    "run_with_progress",
    "Scenario",
    "ScenarioError",
    "sweep",
    "results",
    "aggregate",
    "__version__",
]
