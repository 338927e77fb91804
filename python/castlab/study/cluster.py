"""Dask as an executor: ``local`` starts a ``distributed.LocalCluster`` on this machine, any
other text is a scheduler address (``tcp://host:8786``). Runs are submitted through
``Client.get_executor()``, a ``concurrent.futures`` executor, so the runner treats Dask like
any other pool. Install with ``pip install castlab[dask]``.

Dask recomputes the runs of a worker it loses on the other workers; the executor counts such
losses (``lost_workers()``) so that the sweep's progress line says so.
"""

from __future__ import annotations

import concurrent.futures as cf
import contextlib
import logging
import os
import threading
from typing import Iterator, Optional


class DaskExecutor(cf.Executor):
    """``client.get_executor(pure=False)`` plus a count of the workers that left the cluster
    unexpectedly while it was in use (the scheduler's ``remove-worker`` events)."""

    def __init__(self, client):
        self._inner = client.get_executor(pure=False)
        self._client = client
        self._lock = threading.Lock()
        self._lost: set[str] = set()
        client.subscribe_topic("all", self._on_event)

    def _on_event(self, event) -> None:
        _, msg = event
        if isinstance(msg, dict) and msg.get("action") == "remove-worker" and not msg.get("expected"):
            with self._lock:
                self._lost.add(str(msg.get("worker")))

    def lost_workers(self) -> int:
        with self._lock:
            return len(self._lost)

    def submit(self, fn, /, *args, **kwargs):
        return self._inner.submit(fn, *args, **kwargs)

    def map(self, fn, *iterables, **kwargs):
        return self._inner.map(fn, *iterables, **kwargs)

    def shutdown(self, wait: bool = True, *, cancel_futures: bool = False) -> None:
        with contextlib.suppress(Exception):
            self._client.unsubscribe_topic("all")
        self._inner.shutdown(wait=wait)


class _CancelledRace(logging.Filter):
    """Drops the errors Dask's executor logs (through tornado) when a stop cancels the sweep's
    futures: handing a result to a future the sweep has cancelled (InvalidStateError), or
    waiting on a Dask future the closing cluster cancelled (Dask's FutureCancelledError, a
    CancelledError). castlab cancels futures only on a stop, which the command says; the race
    is harmless."""

    def filter(self, record: logging.LogRecord) -> bool:
        exc = record.exc_info[1] if record.exc_info else None
        return not ((isinstance(exc, cf.InvalidStateError) and "CANCELLED" in str(exc))
                    or isinstance(exc, cf.CancelledError))


@contextlib.contextmanager
def dask_executor(address: str, jobs: Optional[int] = None) -> Iterator[DaskExecutor]:
    quiet = _CancelledRace()
    logging.getLogger("tornado.application").addFilter(quiet)
    try:
        with _dask_executor(address, jobs) as ex:
            yield ex
    finally:
        logging.getLogger("tornado.application").removeFilter(quiet)


@contextlib.contextmanager
def _dask_executor(address: str, jobs: Optional[int] = None) -> Iterator[DaskExecutor]:
    try:
        from distributed import Client, LocalCluster
    except ImportError as e:
        raise ValueError("--dask needs the dask extra: pip install 'castlab[dask]'") from e
    if not isinstance(address, str) or not address:
        raise ValueError(f"dask: expected 'local' or a scheduler address, got {address!r}")
    if address == "local":
        import dask

        # one single-threaded worker process per job: the simulator holds the GIL while it runs.
        # Dask's statistical profiler is off in these workers: it takes the running task's frames
        # from the worker's event-loop thread (sys._current_frames), and a run that returns while
        # one is held has its simulator freed on that thread, which a simulator refuses (it
        # belongs to the thread that built it: a traceback on stderr and a leaked simulator).
        n = jobs or os.cpu_count() or 1
        with dask.config.set({"distributed.worker.profile.enabled": False}), \
                LocalCluster(n_workers=n, threads_per_worker=1, processes=True, dashboard_address=None) as cluster, \
                Client(cluster) as client:
            try:
                yield DaskExecutor(client)
            except KeyboardInterrupt:
                _end_local_workers(cluster)
                raise
    else:
        if jobs is not None:
            raise ValueError("--jobs does not apply to an existing Dask cluster (its workers are set where it runs)")
        with Client(address) as client:
            yield DaskExecutor(client)


def _end_local_workers(cluster) -> None:
    """On a stop: SIGKILL the local cluster's worker processes (ours, by the pids their nannies
    hold) before the cluster closes. A graceful close waits for the runs in progress (4 s and
    more); what they would have returned is not kept anyway. Dask's complaints about the
    connections this cuts are silenced: the command says what happened."""
    import logging
    import signal

    logging.getLogger("distributed").setLevel(logging.CRITICAL + 1)
    for nanny in list(getattr(cluster, "workers", {}).values()):
        pid = getattr(getattr(nanny, "process", None), "pid", None)
        if pid:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.kill(pid, signal.SIGKILL)
