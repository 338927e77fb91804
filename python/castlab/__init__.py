"""castlab: a toolkit for multicast congestion control.

The simulator core is Rust (``castlab._native``); this package adds the scenario helpers,
the experiments that reproduce the papers' figures, plots and the ``castlab`` command.
"""

from castlab._native import transmission_ns, worst_window_loss, __version__
from castlab.simulator import Simulator
from castlab.frames import arrivals_frame, losses_frame, series_frame, level_frame
from castlab.run import run_with_progress

__all__ = [
    "Simulator",
    "transmission_ns",
    "worst_window_loss",
    "arrivals_frame",
    "losses_frame",
    "series_frame",
    "level_frame",
    "run_with_progress",
    "__version__",
]
