"""Worker processes for independent runs: the one place castlab starts a process pool.

A leaf module (it imports nothing from castlab), so the experiments, the sweep runner and the
command line can all use it without importing one another.

How many workers an experiment's own loop over seeds and points uses is not a global setting:
``with workers(n): ...`` sets it for the code run inside the block (a context variable, restored
when the block ends), and ``map_runs`` reads it. ``castlab reproduce NAME --jobs N`` runs the
experiment inside ``workers(N)``.
"""

from __future__ import annotations

import concurrent.futures as cf
import contextlib
import contextvars
import multiprocessing as mp
import signal
from typing import Any, Callable, Iterator, Optional, Sequence

__all__ = ["process_pool", "stop_pool", "workers", "current_workers", "map_calls", "map_runs"]

_WORKERS: contextvars.ContextVar[int] = contextvars.ContextVar("castlab_workers", default=1)


class _BlockPool:
    """The process pool of one ``workers(n)`` block: started at the block's first ``map_runs``
    that needs it, serving every later one (an experiment makes several), ended with the block."""

    def __init__(self, jobs: int):
        self.jobs = jobs
        self.ex: Optional[cf.ProcessPoolExecutor] = None

    def get(self) -> cf.ProcessPoolExecutor:
        if self.ex is None:
            self.ex = process_pool(self.jobs)
        return self.ex


_POOL: contextvars.ContextVar[Optional[_BlockPool]] = contextvars.ContextVar("castlab_pool", default=None)


def _ignore_sigint() -> None:
    # Ctrl-C reaches the whole process group. The parent decides what an interrupt means (keep
    # the finished runs, stop the others); a worker that raised KeyboardInterrupt mid-run would
    # send back a half-run as a failure, or die between runs and break the pool.
    signal.signal(signal.SIGINT, signal.SIG_IGN)


def process_pool(jobs: int) -> cf.ProcessPoolExecutor:
    """A pool of `jobs` worker processes. Spawn, not fork: the parent may hold threads (the
    progress bar, Dask) and fork copies their locks mid-use. Workers import castlab once and
    serve many runs; they ignore SIGINT, so on Ctrl-C the parent stops them (``stop_pool``)."""
    if int(jobs) < 1:
        raise ValueError(f"jobs must be at least 1, got {jobs}")
    return cf.ProcessPoolExecutor(max_workers=int(jobs), mp_context=mp.get_context("spawn"),
                                  initializer=_ignore_sigint)


def stop_pool(ex: cf.ProcessPoolExecutor) -> None:
    """Stop a pool now: cancel what has not started, end the worker processes (this pool's own,
    by their handles) and return without waiting for the runs in progress."""
    procs = list((getattr(ex, "_processes", None) or {}).values())
    ex.shutdown(wait=False, cancel_futures=True)
    for p in procs:
        if p.is_alive():
            p.terminate()
    for p in procs:
        p.join(timeout=1.0)
        if p.is_alive():
            p.kill()
            p.join(timeout=1.0)


@contextlib.contextmanager
def workers(n: int) -> Iterator[int]:
    """Run the block with `n` worker processes for ``map_runs`` (1: in this process). The
    processes start at the first ``map_runs`` that uses them and serve the whole block; they end
    with it (at once if the block raises or is interrupted)."""
    if int(n) < 1:
        raise ValueError(f"jobs must be at least 1, got {n}")
    pool = _BlockPool(int(n))
    token = _WORKERS.set(int(n))
    ptoken = _POOL.set(pool)
    ok = False
    try:
        yield int(n)
        ok = True
    finally:
        _POOL.reset(ptoken)
        _WORKERS.reset(token)
        if pool.ex is not None:
            if ok:
                pool.ex.shutdown(wait=True)
            else:
                stop_pool(pool.ex)


def current_workers() -> int:
    """The worker count ``map_runs`` uses here (1 outside any ``workers`` block)."""
    return _WORKERS.get()


def _call(fn_args):
    fn, args = fn_args
    return fn(*args)


def map_calls(fn: Callable[..., Any], calls: Sequence[tuple], jobs: int,
              executor: Optional[cf.Executor] = None) -> list:
    """``[fn(*args) for args in calls]`` over a process pool of `jobs` workers (or `executor`), in
    the order given. `fn` and the arguments must pickle (module-level functions, partials of
    them). On Ctrl-C the pool is stopped at once and KeyboardInterrupt passes on."""
    items = [(fn, tuple(a)) for a in calls]
    if executor is not None:
        return list(executor.map(_call, items))
    ex = process_pool(jobs)
    try:
        result = list(ex.map(_call, items))
    except BaseException:
        stop_pool(ex)
        raise
    ex.shutdown(wait=True)
    return result


def map_runs(fn: Callable[..., Any], calls: Sequence[tuple]) -> list:
    """An experiment's loop of independent runs, ``[fn(*args) for args in calls]``, on
    ``current_workers()`` processes when that is more than 1. Each run is a pure function of its
    arguments, so the list is the same either way (tests/test_sweep.py checks it on an
    experiment)."""
    calls = [tuple(a) for a in calls]
    n = current_workers()
    if n <= 1 or len(calls) < 2:
        return [fn(*a) for a in calls]
    pool = _POOL.get()
    if pool is not None and pool.jobs == n:
        return map_calls(fn, calls, n, executor=pool.get())
    return map_calls(fn, calls, min(n, len(calls)))
