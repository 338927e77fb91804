"""SIGINT, SIGTERM and SIGHUP stop every long command the same way (castlab.stopping): within
2 s, with no process of its own left, the finished runs kept and said on stderr, exit 130 /
143 / 129, and the same command run again does only what is missing.

Each test runs the real `castlab` command in a process group of its own, so that what it
started can be found (and, whatever happens, killed) by that group."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

# One CBR flow through a bottleneck: about 0.3 s of wall time per run on a 2-core machine.
SCENARIO = """\
name = "one-bottleneck"
duration = "60s"
nodes = ["src", "dst"]

[[links]]
name = "bottleneck"
a = "src"
b = "dst"
rate = "10Mbps"
delay = "10ms"
queue_limit = 20

[[cbr]]
name = "load"
src = "src"
dst = "dst"
rate = "12Mbps"
port = 7000
"""

EXIT = {signal.SIGINT: 130, signal.SIGTERM: 143, signal.SIGHUP: 129}


def _group(pgid: int) -> list[str]:
    """The processes of process group `pgid` (from /proc) that have not ended: 'pid state
    command'. A zombie handed to init (state Z, parent 1) has ended: only its exit status waits
    for init to collect it, which this machine's init does late, and no process of castlab's can
    collect it for init."""
    found = []
    for d in os.listdir("/proc"):
        if not d.isdigit():
            continue
        try:
            stat = Path(f"/proc/{d}/stat").read_text()
            cmd = Path(f"/proc/{d}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
        except OSError:
            continue
        fields = stat.rsplit(")", 1)[1].split()  # state, ppid, pgrp, ...
        if fields[0] == "Z" and fields[1] == "1":
            continue
        if int(fields[2]) == pgid:
            found.append(f"{d} {fields[0]} {cmd[:120]}")
    return found


class Cli:
    """`castlab ARGS` in a new session (its own process group), output to files."""

    def __init__(self, tmp: Path, *args: str, tag: str = "run"):
        self.out = tmp / f"{tag}.out"
        self.err = tmp / f"{tag}.err"
        with open(self.out, "w") as o, open(self.err, "w") as e:
            self.p = subprocess.Popen([sys.executable, "-m", "castlab", *args], cwd=tmp, stdout=o, stderr=e,
                                      start_new_session=True)

    def stderr(self) -> str:
        return self.err.read_text()

    def wait_for(self, cond, what: str, limit: float = 60.0) -> None:
        end = time.monotonic() + limit
        while time.monotonic() < end:
            if cond():
                return
            assert self.p.poll() is None, f"ended (exit {self.p.returncode}) before {what}: {self.stderr()}"
            time.sleep(0.02)
        raise AssertionError(f"no {what} within {limit:g} s: {self.stderr()}")

    def stop(self, sig: int, *, group: bool = False) -> float:
        """Send `sig` (to the process, or to its whole group as a terminal does) and wait for it
        to exit; returns how long that took."""
        t = time.monotonic()
        if group:
            os.killpg(self.p.pid, sig)
        else:
            self.p.send_signal(sig)
        self.p.wait(timeout=30)
        return time.monotonic() - t

    def kill(self) -> None:
        try:
            os.killpg(self.p.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        if self.p.poll() is None:
            self.p.wait(timeout=10)


def _stored(store: Path) -> int:
    return len(list((store / "runs").glob("*.parquet"))) if (store / "runs").is_dir() else 0


@pytest.mark.parametrize("sig,group", [(signal.SIGTERM, False), (signal.SIGHUP, True), (signal.SIGINT, True)],
                         ids=["SIGTERM", "SIGHUP-to-group", "SIGINT-to-group"])
def test_a_stopped_sweep_ends_its_workers_keeps_its_runs_and_resumes(tmp_path, sig, group):
    from castlab.study import results

    (tmp_path / "s.toml").write_text(SCENARIO)
    store = tmp_path / "st"
    args = ("sweep", "s.toml", "--seeds", "1-10", "--jobs", "2", "--store", "st", "--no-progress")
    cli = Cli(tmp_path, *args)
    try:
        cli.wait_for(lambda: _stored(store) >= 2, "two stored runs")
        assert len(_group(cli.p.pid)) >= 3, _group(cli.p.pid)  # the command, its workers, the tracker
        took = cli.stop(sig, group=group)
        left = _group(cli.p.pid)
    finally:
        cli.kill()
    err = cli.stderr()
    assert cli.p.returncode == EXIT[sig], err
    assert took < 2.0, f"took {took:.2f} s to stop"
    assert left == [], (left, err)
    name = "Ctrl-C (SIGINT)" if sig == signal.SIGINT else signal.Signals(sig).name
    line = next(x for x in err.splitlines() if "stopped by" in x)
    assert f"castlab sweep: stopped by {name}: " in line and "the same command runs only those" in line
    kept = int(line.split(": ")[2].split()[0])
    stored = results(store)
    assert len(stored) == kept and kept >= 2 and (stored["status"] == "ok").all()
    assert f"{kept} runs finished and are stored in st" in line
    assert not list((store / "runs").glob(".*")), "a half-written row was left"
    if sig != signal.SIGTERM:
        return  # the same command again: once is enough

    again = subprocess.run([sys.executable, "-m", "castlab", *args], cwd=tmp_path, capture_output=True, text=True,
                           timeout=120)
    assert again.returncode == 0, again.stderr
    assert f"10 runs, {kept} already stored (skipped), {10 - kept} to run" in again.stderr
    after = results(store)
    assert len(after) == 10 and after["key"].is_unique and (after["status"] == "ok").all()
    assert set(stored["key"]) <= set(after["key"])


def _listed(line: str) -> set[str]:
    """The experiment names a stop or resume line lists in its parentheses."""
    return set(line[line.index("(") + 1:line.index(")")].split(", "))


def _summaries(out: Path) -> dict[str, int]:
    return {p.parent.name: p.stat().st_mtime_ns for p in out.glob("*/summary.json")}


def test_a_stopped_reproduce_all_keeps_the_finished_experiments_and_resumes(tmp_path):
    """`reproduce --all --jobs 2` (the simulated experiments, short settings) stopped by SIGTERM
    once one experiment finished; started again, it keeps those and runs the others."""
    out = tmp_path / "all"
    args = ("reproduce", "--all", "--quick", "--no-net", "--jobs", "2", "--out", "all")
    cli = Cli(tmp_path, *args)
    try:
        cli.wait_for(lambda: len(_summaries(out)) >= 1, "a finished experiment")
        took = cli.stop(signal.SIGTERM)
        left = _group(cli.p.pid)
    finally:
        cli.kill()
    err = cli.stderr()
    assert cli.p.returncode == 143, err
    assert took < 2.0, f"took {took:.2f} s to stop"
    assert left == [], left
    kept = _summaries(out)
    line = next(x for x in err.splitlines() if "stopped by" in x)
    assert f"castlab reproduce: stopped by SIGTERM: {len(kept)} of " in line, line
    assert _listed(line) == set(kept) and "the same command runs only those" in line
    assert not (out / "report.json").exists()
    assert not [p.name for p in out.iterdir() if ".partial-" in p.name]  # a cut-off experiment leaves nothing

    second = Cli(tmp_path, *args, tag="again")
    try:
        second.wait_for(lambda: "running (seed" in second.stderr(), "an experiment started")
        took = second.stop(signal.SIGTERM)
        left = _group(second.p.pid)
    finally:
        second.kill()
    err2 = second.stderr()
    assert second.p.returncode == 143 and took < 2.0 and left == [], (err2, took, left)
    n = len(kept)
    line2 = next(x for x in err2.splitlines() if "finished by an earlier run" in x)
    assert f"{n} experiment{'' if n == 1 else 's'} finished by an earlier run of this command " \
           f"{'is' if n == 1 else 'are'} kept (" in line2 and _listed(line2) == set(kept), line2
    for name, mtime in kept.items():
        assert f"[{name}] running" not in err2
        assert (out / name / "summary.json").stat().st_mtime_ns == mtime  # not run again


def test_a_stopped_scenario_run_keeps_its_finished_seeds(tmp_path):
    (tmp_path / "s.toml").write_text(SCENARIO)
    out = tmp_path / "o"
    args = ("scenario", "run", "s.toml", "--seeds", "1-30", "--out", "o")
    cli = Cli(tmp_path, *args)
    try:
        cli.wait_for(lambda: (out / "seed-2" / "summary.json").exists(), "two finished seeds")
        took = cli.stop(signal.SIGTERM)
    finally:
        cli.kill()
    err = cli.stderr()
    assert cli.p.returncode == 143 and took < 2.0, (err, took)
    done = sorted(int(p.parent.name.split("-")[1]) for p in out.glob("seed-*/summary.json"))
    line = next(x for x in err.splitlines() if "stopped by" in x)
    assert f"seeds {', '.join(map(str, done))} finished and are kept" in line, line
    assert not [p for p in tmp_path.iterdir() if ".partial-" in p.name]

    second = Cli(tmp_path, *args, tag="again")
    try:
        second.wait_for(lambda: "-> o/seed-" in second.stderr(), "a seed started")
        second.stop(signal.SIGTERM)
    finally:
        second.kill()
    err2 = second.stderr()
    assert second.p.returncode == 143, err2
    assert f"seeds {', '.join(map(str, done))} finished by an earlier run of this command are kept" in err2
    assert f"seed {done[0]} -> " not in err2 and f"seed {done[-1] + 1} -> " in err2


def test_a_stopped_dask_sweep_ends_its_local_cluster(tmp_path):
    pytest.importorskip("distributed", reason="Dask distributed is not installed (pip install castlab[dask])")
    (tmp_path / "s.toml").write_text(SCENARIO)
    store = tmp_path / "st"
    cli = Cli(tmp_path, "sweep", "s.toml", "--seeds", "1-40", "--jobs", "2", "--store", "st", "--no-progress",
              "--dask", "local")
    try:
        cli.wait_for(lambda: _stored(store) >= 2, "two stored runs")
        took = cli.stop(signal.SIGTERM)
        left = _group(cli.p.pid)
    finally:
        cli.kill()
    err = cli.stderr()
    assert cli.p.returncode == 143, err
    assert took < 2.0, f"took {took:.2f} s to stop"
    assert left == [], left
    assert "castlab sweep: stopped by SIGTERM: " in err and "Traceback" not in err, err


def test_a_signal_inside_deferred_waits_for_the_block(tmp_path):
    from castlab import stopping

    steps = []
    with pytest.raises(stopping.Stopped) as stop:
        with stopping.handled():
            with stopping.deferred():
                os.kill(os.getpid(), signal.SIGTERM)
                for _ in range(100):  # Python runs the handler at the next bytecode boundary
                    steps.append(1)
                os.kill(os.getpid(), signal.SIGINT)  # a second signal does not replace the first
                steps.append("end of block")
            steps.append("after the block")
    assert steps[-1] == "end of block" and stop.value.signum == signal.SIGTERM
    assert stopping.exit_code() == 143 and stopping.what() == "SIGTERM"
    assert signal.getsignal(signal.SIGTERM) is signal.SIG_DFL  # handlers restored


def test_a_signal_that_lands_in_a_weakref_callback_still_stops_the_command():
    """Python runs a signal handler wherever the main thread is; inside a weakref callback (a
    matplotlib figure being closed) the Stopped it raises is printed as "ignored" and dropped.
    The stop must still reach the command: `castlab reproduce` used to finish the run and exit 0
    after a Ctrl-C that came while a figure was closed."""
    import gc
    import weakref

    from castlab import stopping

    class Thing:
        pass

    landed = []

    def callback(_ref):  # the handler runs here, at the call's bytecode boundary
        os.kill(os.getpid(), signal.SIGINT)
        landed.append("callback")

    steps = 0
    with pytest.raises(stopping.Stopped) as stop:
        with stopping.handled():
            thing = Thing()
            ref = weakref.ref(thing, callback)
            del thing
            gc.collect()
            deadline = time.monotonic() + 5.0
            while time.monotonic() < deadline:  # the stop comes again from another thread
                steps += 1
                time.sleep(0.001)
    assert stop.value.signum == signal.SIGINT and ref() is None
    assert landed == [], "the handler did not run inside the callback: this test tests nothing"
    assert steps < 1000, f"the stop came only after {steps} steps"
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler
    assert sys.unraisablehook is not stopping._unraisable


def test_workers_end_themselves_when_the_command_is_killed(tmp_path):
    """SIGKILL cannot be caught: the pool workers see their parent gone and end (they used to
    wait for work forever), and so does the resource tracker once they have."""
    (tmp_path / "s.toml").write_text(SCENARIO)
    store = tmp_path / "st"
    cli = Cli(tmp_path, "sweep", "s.toml", "--seeds", "1-40", "--jobs", "2", "--store", "st", "--no-progress")
    try:
        cli.wait_for(lambda: _stored(store) >= 1, "a stored run")
        cli.p.send_signal(signal.SIGKILL)
        cli.p.wait(timeout=10)
        end = time.monotonic() + 5.0
        running = _group(cli.p.pid)
        while time.monotonic() < end:
            running = [p for p in _group(cli.p.pid) if p.split()[1] != "Z"]  # a zombie has ended
            if not running:
                break
            time.sleep(0.05)
        assert running == [], running
    finally:
        cli.kill()


def test_a_stop_while_a_finished_part_is_counted_leaves_it_in_the_file(tmp_path):
    """The progress file of `reproduce --all` and `scenario run` says what the stop line says:
    a signal that comes as a part is counted waits until the file has it, so the next command
    keeps it rather than running it again."""
    from castlab import stopping
    from castlab.cli import _Progress

    class StopOnAppend(list):
        def append(self, part):
            super().append(part)
            os.kill(os.getpid(), signal.SIGTERM)  # the stop comes the instant the part is counted
            for _ in range(100):  # Python runs the handler at the next bytecode boundary
                pass

    path = tmp_path / ".progress"
    progress = _Progress(path, {"seed": 1})
    progress.done = StopOnAppend()
    with pytest.raises(stopping.Stopped):
        with stopping.handled():
            progress.finished("tfmcc")
    assert list(progress.done) == ["tfmcc"]
    assert json.loads(path.read_text())["done"] == ["tfmcc"]
    assert _Progress(path, {"seed": 1}).resume(["tfmcc", "rlm"], lambda n: True) == ["tfmcc"]


def test_a_worker_stopped_inside_a_deferred_block_finishes_the_block_then_ends(tmp_path):
    """A pool worker's SIGTERM handler holds the signal inside ``stopping.deferred()`` (an
    experiment's folder being moved into place), so the block completes; the worker then ends
    with 143 without running on."""
    log = tmp_path / "log"
    code = f"""
import os, signal
from castlab import parallel, stopping

def run():
    with stopping.deferred():
        os.kill(os.getpid(), signal.SIGTERM)
        for _ in range(100):
            pass
        open({str(log)!r}, "a").write("moved\\n")
    open({str(log)!r}, "a").write("after the block\\n")

signal.signal(signal.SIGTERM, parallel._worker_on_term)
parallel._worker_call(run, (), {{}})
open({str(log)!r}, "a").write("returned\\n")
"""
    p = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert p.returncode == 143, p.stderr
    assert log.read_text() == "moved\n"


def test_a_stop_while_numpy_loads_for_the_first_array_is_a_clean_stop():
    """The numpy crate loads NumPy's C API at a process's first array by running Python (it
    reads numpy's version). A stop signal that arrives there is raised after the load, as
    ``Stopped`` from the call that wanted the array, not inside it (where the crate would panic);
    and the next array is made as usual."""
    code = """
import os, signal, sys
import numpy, numpy.lib
from castlab import Simulator, stopping

real = numpy.lib.NumpyVersion
seen = []

def version(s):  # what the crate calls while it loads the API
    seen.append(s)
    os.kill(os.getpid(), signal.SIGTERM)
    for _ in range(100):  # Python runs the handler at the next bytecode boundary
        pass
    return real(s)

numpy.lib.NumpyVersion = version
sim = Simulator(seed=1)
sim.add_node("a"); sim.add_node("b"); sim.add_link("a", "b", 1e6, 0.01)
g = sim.add_group("a")
sim.add_layered_source("a", [g], [200e3], packet_size=500)
sim.add_sink("b", groups=[g], schedule=[(0.0, 1)])
sim.run(1.0)
try:
    with stopping.handled():
        sim.level_timeline()  # the process's first array
except stopping.Stopped as e:
    assert e.signum == signal.SIGTERM and seen, seen
else:
    sys.exit("no Stopped")
t = sim.level_timeline()
assert list(t["level"]) == [1] and t["time_ns"].dtype == numpy.uint64 and len(seen) == 1, (t, seen)
print("ok")
"""
    p = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert p.returncode == 0 and p.stdout.strip() == "ok", p.stderr
