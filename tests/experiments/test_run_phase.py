"""Claims of a phase-sensitive experiment decided over phase-randomised runs (docs/fidelity/phase.md):
``run_phase``, which the figure driver applies for a figure's ``phase_s``."""

import json
import os

from castlab.experiments.common import Experiment, Result, at_most, run_phase, write_summary
from castlab.simulator import PHASE_ENV, default_phase_overhead

SEEN = []


def _run(out, seed, quick=False):
    # a stand-in experiment whose one claim is the overhead its simulators would get
    ov = default_phase_overhead()
    SEEN.append((out.name, ov))
    (out / "x.csv").write_text(f"{ov}\n")
    return Result({"seed": seed}, [at_most("c", "the overhead", 0.001, ov, "s", kind="paper")], ["x.csv"])


def test_claims_come_from_the_randomised_run_with_the_deterministic_one_beside(tmp_path, monkeypatch):
    monkeypatch.delenv(PHASE_ENV, raising=False)
    SEEN.clear()
    res = run_phase(_run, 0.002, tmp_path, 1)
    # deterministic first (into phase-off), then randomised (into out); the variable is restored
    assert SEEN == [("phase-off", 0.0), (tmp_path.name, 0.002)]
    assert PHASE_ENV not in os.environ
    (c,) = res.claims
    assert c.ours == 0.002 and not c.holds and "deterministic: 0, holds" in c.statement
    assert res.files == ["x.csv", "phase-off/x.csv"] and (tmp_path / "phase-off" / "x.csv").exists()
    s = write_summary(tmp_path, Experiment("x", "p", "f", "d", _run), 1, res, 0.0)
    assert s["phase_overhead_s"] == 0.002
    assert json.loads((tmp_path / "summary.json").read_text())["params"]["phase_off"] == "phase-off"


def test_an_explicit_overhead_runs_once_and_quick_runs_randomised_only(tmp_path, monkeypatch):
    SEEN.clear()
    monkeypatch.setenv(PHASE_ENV, "0.005")
    res = run_phase(_run, 0.002, tmp_path, 1)
    assert SEEN == [(tmp_path.name, 0.005)] and res.claims[0].ours == 0.005
    monkeypatch.delenv(PHASE_ENV)
    SEEN.clear()
    run_phase(_run, 0.002, tmp_path, 1, quick=True)
    assert SEEN == [(tmp_path.name, 0.002)]


def _overhead_here(_):
    return default_phase_overhead()


def _run_in_workers(out, seed, quick=False):
    # the overhead the worker processes of map_runs see, one run per worker
    from castlab.parallel import map_runs
    seen = map_runs(_overhead_here, [(0,), (1,)])
    return Result({"seen": seen}, [at_most("c", "the overheads", 0.001, max(seen), "s", kind="paper")], [])


def test_the_randomised_run_reaches_the_worker_processes(tmp_path, monkeypatch):
    # workers read the variable when they start: a pool started by the deterministic case would
    # run the "randomised" case deterministic under --jobs 2
    from castlab.parallel import workers
    monkeypatch.delenv(PHASE_ENV, raising=False)
    with workers(2):
        res = run_phase(_run_in_workers, 0.002, tmp_path, 1)
    assert res.params["seen"] == [0.002, 0.002]
    assert "deterministic: 0, holds" in res.claims[0].statement
