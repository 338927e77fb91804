"""The runner: a run is (target, params, seed); runs go through any ``concurrent.futures``
executor and each finished run is stored at once.

A worker runs one (params, seed) in a temporary folder with its output captured into
``log.txt``, and sends back the metrics and the folder's files as bytes. Only the parent writes
the store, so workers need no access to it (a Dask cluster on other machines works without a
shared file system) and there is one writer per store.
"""

from __future__ import annotations

import concurrent.futures as cf
import contextlib
import io
import itertools
import os
import socket
import sys
import tempfile
import time
import traceback
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Iterable, Mapping, Optional, Sequence

from castlab import stopping
from castlab.parallel import WAIT_S, map_calls, process_pool, stop_pool
from castlab.study.store import Store, StoreWriteError, castlab_version, git_commit, run_key
from castlab.study.targets import META_COLUMNS, Target, flat_metrics, make_target

__all__ = ["Run", "SweepReport", "SweepInterrupted", "grid_points", "run_sweep", "execute", "map_calls"]

# Raw outputs larger than this are not sent back (the row is still stored, with a note): the
# store is for results, not for bulk traces. Our choice.
MAX_OUTPUT_BYTES = 200 * 1024 * 1024


@dataclass(frozen=True)
class Run:
    params: tuple  # ((name, value), ...) in grid order
    seed: int
    key: str

    @property
    def param_dict(self) -> dict:
        return dict(self.params)


@dataclass
class SweepReport:
    """What one call of ``run_sweep`` did. ``rows`` holds every run of the sweep (those run now
    and those found in the store), in grid order."""
    total: int = 0
    skipped: int = 0
    ran: int = 0
    failed: int = 0
    rows: list = field(default_factory=list)
    params: list = field(default_factory=list)
    metrics: list = field(default_factory=list)


class SweepInterrupted(KeyboardInterrupt):
    """Ctrl-C during a sweep. Every run that finished is stored (``report``: what it did). The
    runs in progress (handed to a worker: running, or queued on it) were stopped
    (``interrupted``); they and the runs not yet started are not run (``not_run``): nothing of
    them is stored, so the same sweep runs them again."""

    def __init__(self, report: SweepReport, interrupted: list, not_run: list):
        super().__init__(f"sweep interrupted: {report.ran} runs finished and kept, {len(interrupted)} stopped "
                         f"while running, {len(not_run)} not run")
        self.report = report
        self.interrupted = interrupted
        self.not_run = not_run


class _LostWorkers:
    """Counts the workers an executor lost while a sweep ran, when the executor can tell
    (``lost_workers()``, as castlab's Dask executor has): their runs are recomputed on the
    other workers, and the progress line says so instead of staying silent."""

    def __init__(self, ex):
        self._probe = getattr(ex, "lost_workers", None)
        self.count = 0

    def note(self) -> Optional[str]:
        if self._probe is None:
            return None
        n = int(self._probe())
        if n <= self.count:
            return None
        new, self.count = n - self.count, n
        return (f"castlab sweep: {new} worker{'s' if new > 1 else ''} lost ({n} in all); "
                f"the runs it held are being recomputed on the others")


def grid_points(grid: Optional[Mapping[str, Sequence[Any]]]) -> list[dict]:
    """The Cartesian product of a grid {name: [values]}, in the order given (last name fastest)."""
    if not grid:
        return [{}]
    names = list(grid)
    for n in names:
        vals = grid[n]
        if isinstance(vals, (str, bytes)) or not hasattr(vals, "__iter__"):
            raise ValueError(f"grid {n!r}: expected a list of values, got {vals!r}")
        if len(list(vals)) == 0:
            raise ValueError(f"grid {n!r}: no values")
    return [dict(zip(names, combo)) for combo in itertools.product(*(list(grid[n]) for n in names))]


def execute(target: Target, params: dict, seed: int) -> dict:
    """Run one (params, seed) of `target` in a temporary folder: the outcome with the metrics, the
    folder's files as bytes, the wall time and, when the run raised, its error. Never raises for
    the run's own errors (a failed run is a result too); KeyboardInterrupt passes."""
    t = time.perf_counter()
    log = io.StringIO()
    outcome: dict[str, Any] = {"status": "ok", "error": None, "metrics": {}, "files": {}}
    with tempfile.TemporaryDirectory(prefix="castlab-run-") as tmp:
        out = Path(tmp)
        try:
            with contextlib.redirect_stdout(log), contextlib.redirect_stderr(log):
                outcome["metrics"] = flat_metrics(target.run(params, seed, out))
        except Exception as e:  # noqa: BLE001 - a failed run is recorded, the sweep goes on
            outcome["status"] = "error"
            outcome["error"] = f"{type(e).__name__}: {e}"
            log.write("\n" + traceback.format_exc())
        outcome["wall_s"] = time.perf_counter() - t
        if log.getvalue():
            (out / "log.txt").write_text(log.getvalue())
        total = 0
        for p in sorted(out.rglob("*")):
            if p.is_file():
                total += p.stat().st_size
                if total > MAX_OUTPUT_BYTES:
                    outcome["files"] = {"TRUNCATED.txt": b"outputs over the size limit were not kept\n"}
                    break
                outcome["files"][str(p.relative_to(out))] = p.read_bytes()
    outcome["host"] = socket.gethostname()
    outcome["castlab_version"] = castlab_version()
    return outcome


def _progress(total: int, label: str, enabled: bool):
    if not enabled or total == 0:
        return None
    from tqdm import tqdm

    # disable=None: a bar on a terminal, nothing in a log file or a pipe
    return tqdm(total=total, desc=label, unit="run", file=sys.stderr, dynamic_ncols=True, disable=None)


def run_sweep(target: Any, grid: Optional[Mapping[str, Sequence[Any]]] = None, seeds: Iterable[int] = (1,), *,
              store: Optional[os.PathLike | str] = None, jobs: Optional[int] = None,
              executor: Optional[cf.Executor] = None, quick: bool = False, progress: bool = True,
              rerun_failed: bool = True, log=None) -> SweepReport:
    """Run `target` at every grid point times every seed.

    - `executor`: any ``concurrent.futures.Executor`` (a Dask ``client.get_executor()`` too); it
      is used, not shut down. Without one: ``jobs=1`` runs in this process, otherwise a process
      pool of `jobs` workers (default: one per core).
    - `store`: a results directory; runs already stored (same key, status ok) are skipped, and
      every run is stored the moment it finishes. Failed runs are stored with their error and are
      run again next time unless ``rerun_failed=False``.
    A failed run does not stop the others. Ctrl-C (KeyboardInterrupt) stores every run that finished,
    stops the pool's workers at once and raises ``SweepInterrupted``, which names the runs not run.
    A run the store cannot take (its disk is full) stops the sweep with ``StoreWriteError``: the
    store keeps the whole runs written before it, and the same sweep run again does the rest.
    """
    log = sys.stderr if log is None else log
    tgt = make_target(target, quick=quick)
    seeds = [int(s) for s in seeds]
    if not seeds:
        raise ValueError("seeds: no seed given")
    if any(s < 0 for s in seeds):
        raise ValueError(f"seeds must be non-negative, got {seeds}")
    points = grid_points(grid)
    for pt in points:
        for k in pt:
            if k in META_COLUMNS:
                raise ValueError(f"parameter {k!r} clashes with a results column; rename it")
        tgt.check(pt)
    version = castlab_version()
    commit = git_commit()
    identity = tgt.identity()
    runs = [Run(tuple(pt.items()), s, run_key(identity, pt, s, version)) for pt in points for s in seeds]
    if len({r.key for r in runs}) != len(runs):
        raise ValueError("the grid names the same run twice (repeated values or seeds)")

    st = Store(store).create() if store is not None else None
    stored = st.statuses() if st is not None else {}
    todo = [r for r in runs if not (stored.get(r.key) == "ok" or (stored.get(r.key) and not rerun_failed))]
    report = SweepReport(total=len(runs), skipped=len(runs) - len(todo), params=list(points[0]))
    if st is not None:
        again = sum(1 for r in todo if r.key in stored)
        print(f"castlab sweep: {len(runs)} runs, {report.skipped} already stored (skipped), {len(todo)} to run"
              + (f" ({again} failed before)" if again else ""), file=log, flush=True)

    rows: dict[str, dict] = {}
    metric_names: list[str] = []
    bar = _progress(len(todo), tgt.label, progress)

    def finish(run: Run, outcome: dict) -> None:
        worker_version = outcome.get("castlab_version")
        if worker_version is not None and worker_version != version:
            # a cluster worker with another castlab: its numbers must not be filed under ours
            outcome = {**outcome, "status": "error", "metrics": {}, "files": None,
                       "error": f"the worker runs castlab {worker_version}, the sweep castlab {version}"}
        row = {"key": run.key, "target": tgt.label, "seed": run.seed, "status": outcome["status"],
               "error": outcome["error"], "castlab_version": version, "git_commit": commit,
               "wall_s": float(outcome["wall_s"]),
               "finished_at": datetime.now(timezone.utc).isoformat(timespec="seconds"),
               "host": outcome.get("host")}
        pnames = [k for k, _ in run.params]
        row.update(run.params)
        mnames = []
        for k, v in outcome["metrics"].items():
            col = k if k not in row else f"metric.{k}"
            row[col] = v
            mnames.append(col)
            if col not in metric_names:
                metric_names.append(col)
        if st is not None:
            st.write(row, pnames, mnames, outcome["files"])
        rows[run.key] = row
        report.ran += 1
        if outcome["status"] != "ok":
            report.failed += 1
            msg = f"run failed (seed {run.seed}, {dict(run.params)}): {outcome['error']}"
            (bar.write(msg, file=log) if bar is not None else print(msg, file=log, flush=True))
        if bar is not None:
            bar.set_postfix(done=report.ran - report.failed, failed=report.failed, refresh=False)
            bar.update(1)

    done_keys: set[str] = set()
    running: list[Run] = []
    try:
        if executor is None and (jobs == 1 or len(todo) <= 1):
            for r in todo:
                running = [r]
                outcome = execute(tgt, r.param_dict, r.seed)
                with stopping.deferred():  # a stop waits until the finished run is stored
                    finish(r, outcome)
                    done_keys.add(r.key)
            running = []
        elif todo:
            own = executor is None
            ex = executor if executor is not None else process_pool(jobs or os.cpu_count() or 1)
            futures: dict[cf.Future, Run] = {}
            lost = _LostWorkers(ex)
            try:
                for r in todo:
                    futures[ex.submit(execute, tgt, r.param_dict, r.seed)] = r
                pending = set(futures)
                while pending:
                    # a timeout, so that a lost Dask worker shows on the progress line while the
                    # runs it held are recomputed elsewhere, and a stop signal is seen at once
                    ready, pending = cf.wait(pending, timeout=WAIT_S, return_when=cf.FIRST_COMPLETED)
                    for fut in ready:
                        r = futures[fut]
                        try:
                            outcome = fut.result()
                        except Exception as e:  # the worker itself died (killed, out of memory, unpicklable)
                            if stopping.received() is not None:
                                # a stop signal reached the workers too (sent to the process
                                # group): the run was cut off, not failed
                                raise KeyboardInterrupt from e
                            outcome = {"status": "error", "error": f"worker failed: {type(e).__name__}: {e}",
                                       "metrics": {}, "files": None, "wall_s": float("nan"), "host": None}
                        with stopping.deferred():  # a stop waits until the finished run is stored
                            finish(r, outcome)
                            done_keys.add(r.key)
                    note = lost.note()
                    if note:
                        (bar.write(note, file=log) if bar is not None else print(note, file=log, flush=True))
                        if bar is not None:
                            bar.set_postfix(done=report.ran - report.failed, failed=report.failed,
                                            lost_workers=lost.count, refresh=True)
            except BaseException as e:
                # Ctrl-C (or any error here): keep what finished, stop what did not
                running = [r for f, r in futures.items() if f.running()]
                for f in futures:
                    f.cancel()
                if own:
                    stop_pool(ex)
                if isinstance(e, StoreWriteError):
                    raise  # the store takes nothing more: storing the finished runs would fail too
                for f, r in futures.items():
                    if r.key in done_keys or not f.done() or f.cancelled():
                        continue
                    try:
                        outcome = f.result(timeout=0)
                    except BaseException:  # noqa: BLE001 - a run that did not finish is not run
                        continue
                    finish(r, outcome)
                    done_keys.add(r.key)
                raise
            finally:
                if own:
                    ex.shutdown(wait=True, cancel_futures=True)
    except KeyboardInterrupt:
        if bar is not None:
            bar.close()
            bar = None
        interrupted = [r for r in running if r.key not in done_keys]
        not_run = [r for r in todo if r.key not in done_keys]
        report.rows = [rows[r.key] for r in runs if r.key in rows]
        report.metrics = metric_names
        raise SweepInterrupted(report, interrupted, not_run) from None
    finally:
        if bar is not None:
            bar.close()

    if st is not None and report.skipped:
        # the skipped rows come from the store, so the report covers the whole sweep
        df = st.read(version=version)
        by_key = {k: rec for k, rec in zip(df["key"], df.to_dict("records"))}
        for r in runs:
            if r.key not in rows and r.key in by_key:
                rows[r.key] = {k: v for k, v in by_key[r.key].items() if not _isnan(v)}
        for m in df.attrs.get("metrics", []):
            if m not in metric_names:
                metric_names.append(m)
    report.rows = [rows[r.key] for r in runs if r.key in rows]
    report.metrics = metric_names
    return report


def _isnan(v) -> bool:
    return isinstance(v, float) and v != v
