"""Running a simulation with progress for long runs."""

from __future__ import annotations

import sys
import time

from castlab._native import Simulator


def run_with_progress(sim: Simulator, until: float, *, label: str = "", steps: int = 20,
                      min_interval_s: float = 2.0, stream=None) -> float:
    """Run ``sim`` to ``until`` seconds in ``steps`` chunks; print progress to ``stream``
    (stderr by default) when a chunk takes a while. Returns the wall time taken."""
    stream = sys.stderr if stream is None else stream
    start = time.perf_counter()
    last_print = start
    t0 = sim.now
    for k in range(1, steps + 1):
        sim.run(t0 + (until - t0) * k / steps)
        now = time.perf_counter()
        if now - last_print >= min_interval_s and k < steps:
            pct = 100 * k / steps
            print(f"  {label} {pct:5.1f}%  t={sim.now:.1f}s  wall {now - start:.1f}s", file=stream, flush=True)
            last_print = now
    return time.perf_counter() - start
