"""Worker processes for independent runs: the one place castlab starts a process pool.

A leaf module (it imports nothing from castlab), so the experiments, the sweep runner and the
command line can all use it without importing one another.

A worker ignores SIGINT and SIGHUP (sent to the whole process group by Ctrl-C and a closing
terminal: the parent decides what a stop means) and ends on SIGTERM, which is how the parent
ends it (``stop_pool``): idle, at once; in a run, once the run's own clean-up (``finally``
blocks, temporary folders, a testbed's teardown) has run, without sending anything back. A
worker whose parent died (SIGKILL) ends itself the same way.

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
import os
import signal
import sys
import threading
import time
from typing import Any, Callable, Iterator, Optional, Sequence

__all__ = ["process_pool", "stop_pool", "end_resource_tracker", "as_completed", "WAIT_S", "workers", "current_workers", "map_calls", "map_runs"]

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


_IN_RUN = False  # in a worker: whether it is running a submitted call
_TERM: Optional[int] = None  # in a worker: the SIGTERM that is ending it


class _Ended(KeyboardInterrupt):
    """Raised in a worker's run by the SIGTERM that ends the worker."""


def _worker_on_term(signum, frame) -> None:
    global _TERM
    if not _IN_RUN:
        os._exit(128 + signum)
    if _TERM is None:
        _TERM = signum
        # castlab.stopping, if the run uses it: this module imports nothing of castlab's, and a
        # deferred() block can be open only where something imported that one
        stopping = sys.modules.get("castlab.stopping")
        if stopping is not None and stopping.holding():
            # inside ``stopping.deferred()`` (an experiment's folder being moved into place):
            # the block ends first, then raises Stopped, and _worker_call ends the worker
            stopping.hold(signum)
            return
        raise _Ended(signum)  # the run unwinds; _worker_call then ends the worker


def _worker_call(fn, args, kwargs):
    """A submitted call as a worker runs it: a SIGTERM during it unwinds it (its clean-up runs)
    and ends the worker instead of returning a cut-off run."""
    global _IN_RUN
    _IN_RUN = True
    try:
        return fn(*args, **kwargs)
    except KeyboardInterrupt as e:
        # ours, or the one a testbed's own handler (castlab.stopping) raised for the signal
        sig = _TERM if _TERM is not None else getattr(e, "signum", None)
        if sig is not None:
            os._exit(128 + int(sig))
        raise
    finally:
        _IN_RUN = False


class _Pool(cf.ProcessPoolExecutor):
    """A process pool whose calls run through ``_worker_call``."""

    def submit(self, fn, /, *args, **kwargs):
        return super().submit(_worker_call, fn, args, kwargs)


def _worker_signals() -> None:
    # Ctrl-C (SIGINT) and a closing terminal (SIGHUP) reach the whole process group. The parent
    # decides what a stop means (keep the finished runs, stop the others); a worker that raised
    # KeyboardInterrupt mid-run would send back a half-run as a failure, or die between runs and
    # break the pool.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGHUP, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, _worker_on_term)
    threading.Thread(target=_watch_parent, args=(os.getppid(),), name="castlab-worker-parent-watch",
                     daemon=True).start()


#: How often a worker checks that the process that started it is still there.
PARENT_CHECK_S = 0.5


def _watch_parent(parent: int) -> None:
    """A worker whose parent died without ending it (SIGKILL) ends itself: SIGTERM to itself,
    so that a run holding a testbed tears it down, then exit after 3 s in any case. Without
    this, a pool's workers would wait for work forever."""
    while os.getppid() == parent:
        time.sleep(PARENT_CHECK_S)
    os.kill(os.getpid(), signal.SIGTERM)
    time.sleep(3.0)
    os._exit(1)


def end_resource_tracker(timeout: float = 1.0) -> None:
    """End multiprocessing's resource tracker, the helper process the first pool of this
    process started, and reap it: for a command about to exit after a stop, once its pools are
    ended. The tracker exits when the last process holding its pipe has closed it; closing ours
    here (the workers are gone) lets it go now rather than after this process, and this
    process reaps it. multiprocessing's own exit clean-up runs first (it would run at exit, and
    would start a new tracker to tell it about the pools' semaphores). SIGKILL after
    `timeout`."""
    from multiprocessing import resource_tracker, util

    tracker = getattr(resource_tracker, "_resource_tracker", None)
    exit_cleanup = getattr(util, "_exit_function", None)
    if tracker is None or exit_cleanup is None:
        return
    import warnings

    with warnings.catch_warnings():
        # a stop signal sent to the whole group ended the first tracker: the clean-up starts a
        # new one, with a warning meant for a crash
        warnings.simplefilter("ignore")
        exit_cleanup()
    # From here on this process tells no tracker anything: a finalizer that runs later (a pool
    # queue's semaphore collected at interpreter exit) still unlinks its semaphore, but its
    # message would start a tracker (a new one, or the first where none ran yet) that outlives
    # this process, orphaned to init.
    tracker._send = lambda *args, **kwargs: None
    fd, pid = getattr(tracker, "_fd", None), getattr(tracker, "_pid", None)
    if fd is None or pid is None:
        return
    tracker._fd = tracker._pid = None
    try:
        os.close(fd)
    except OSError:
        pass
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        try:
            if os.waitpid(pid, os.WNOHANG)[0] == pid:
                return
        except ChildProcessError:
            return
        time.sleep(0.01)
    try:
        os.kill(pid, signal.SIGKILL)
        os.waitpid(pid, 0)
    except (ProcessLookupError, ChildProcessError):
        pass


def process_pool(jobs: int) -> cf.ProcessPoolExecutor:
    """A pool of `jobs` worker processes. Spawn, not fork: the parent may hold threads (the
    progress bar, Dask) and fork copies their locks mid-use. Workers import castlab once and
    serve many runs; they ignore SIGINT and SIGHUP, so on a stop the parent ends them
    (``stop_pool``)."""
    if int(jobs) < 1:
        raise ValueError(f"jobs must be at least 1, got {jobs}")
    return _Pool(max_workers=int(jobs), mp_context=mp.get_context("spawn"), initializer=_worker_signals)


def stop_pool(ex: cf.ProcessPoolExecutor) -> list[int]:
    """Stop a pool now: cancel what has not started, end the worker processes (this pool's own,
    by their handles) and return without waiting for the runs in progress. Returns the
    workers' pids."""
    procs = list((getattr(ex, "_processes", None) or {}).values())
    ex.shutdown(wait=False, cancel_futures=True)
    for p in procs:
        if p.is_alive():
            p.terminate()
    # SIGTERM ends a worker at once, or, in a run that holds a testbed, starts its teardown;
    # one second for all of them together, then SIGKILL (a testbed cut short there is removed
    # by the next testbed that starts: castlab.testbed)
    end = time.monotonic() + 1.0
    for p in procs:
        p.join(timeout=max(0.0, end - time.monotonic()))
    for p in procs:
        if p.is_alive():
            p.kill()
            p.join(timeout=1.0)
    manager = getattr(ex, "_executor_manager_thread", None)
    if manager is not None and manager is not threading.current_thread():
        manager.join(timeout=1.0)  # it lets go of the pool's queues once it sees the workers gone
    return [p.pid for p in procs if p.pid is not None]


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


#: The longest a waiting main thread goes without looking for a stop signal. A signal the kernel
#: hands to another thread (the pool's, a progress bar's) does not wake a wait on a future; the
#: main thread runs its handler when the wait returns. Our choice.
WAIT_S = 0.1


def as_completed(futures) -> Iterator[cf.Future]:
    """``concurrent.futures.as_completed`` that sees a stop signal within ``WAIT_S``."""
    pending = set(futures)
    while pending:
        ready, pending = cf.wait(pending, timeout=WAIT_S, return_when=cf.FIRST_COMPLETED)
        yield from ready


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
        return _map(executor, items)
    ex = process_pool(jobs)
    try:
        result = _map(ex, items)
    except BaseException:
        stop_pool(ex)
        raise
    ex.shutdown(wait=True)
    return result


def _map(ex: cf.Executor, items: list) -> list:
    futures = [ex.submit(_call, item) for item in items]
    try:
        for _ in as_completed(futures):
            pass
    except BaseException:
        for f in futures:
            f.cancel()
        raise
    return [f.result() for f in futures]


def map_runs(fn: Callable[..., Any], calls: Sequence[tuple]) -> list:
    """An experiment's loop of independent runs, ``[fn(*args) for args in calls]``, on
    ``current_workers()`` processes when that is more than 1. Each run is a pure function of its
    arguments, so the list is the same either way (tests/scenario/test_sweep.py checks it on an
    experiment)."""
    calls = [tuple(a) for a in calls]
    n = current_workers()
    if n <= 1 or len(calls) < 2:
        return [fn(*a) for a in calls]
    pool = _POOL.get()
    if pool is not None and pool.jobs == n:
        return map_calls(fn, calls, n, executor=pool.get())
    return map_calls(fn, calls, min(n, len(calls)))
