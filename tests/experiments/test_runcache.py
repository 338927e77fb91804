"""The run cache that lets experiments share the runs they repeat (castlab.experiments.runcache)."""

import pickle

import pandas as pd

from castlab.experiments import runcache
from castlab.experiments.lesbcc import scenarios as XS

CALLS = []


def _run(seed: int, duration: float = 1.0, kw: dict | None = None) -> dict:
    CALLS.append((seed, duration, kw))
    return {"seed": seed, "duration": duration, "kw": kw}


def test_the_key_is_the_runs_full_parameters(monkeypatch):
    monkeypatch.delenv("CASTLAB_PHASE_OVERHEAD", raising=False)
    key = runcache.run_key
    # defaults filled in, positional or keyword, dict order: one run
    assert key(_run, 1) == key(_run, 1, 1.0) == key(_run, seed=1, duration=1.0, kw=None)
    assert key(_run, 1, kw={"a": 1, "b": 2}) == key(_run, 1, kw={"b": 2, "a": 1})
    assert key(_run, 1) != key(_run, 2) != key(_run, 2, kw={})
    assert key(_run, 1, kw={"a": 1}) != key(_run, 1, kw={"a": 1.5})
    # phase randomisation changes the run, so it changes the key
    off = key(_run, 1)
    monkeypatch.setenv("CASTLAB_PHASE_OVERHEAD", "0.001")
    assert key(_run, 1) != off


def test_a_cached_run_is_loaded_not_rerun(tmp_path, monkeypatch):
    CALLS.clear()
    monkeypatch.delenv(runcache.RUN_CACHE_ENV, raising=False)
    assert runcache.cached(_run, 1) == runcache.cached(_run, 1) and len(CALLS) == 2  # off: every call runs
    monkeypatch.setenv(runcache.RUN_CACHE_ENV, str(tmp_path))
    CALLS.clear()
    a = runcache.cached(_run, 3, kw={"x": 1})
    b = runcache.cached(_run, 3, 1.0, kw={"x": 1})
    assert a == b and len(CALLS) == 1
    assert [p.suffix for p in tmp_path.iterdir()] == [".pkl"]  # no temporary file left behind
    # a damaged entry is run again and rewritten, not an error
    entry = next(tmp_path.iterdir())
    entry.write_bytes(b"")
    assert runcache.cached(_run, 3, kw={"x": 1}) == a and len(CALLS) == 2
    assert pickle.loads(entry.read_bytes()) == a


def test_fig5_runs_shared_through_the_cache_are_the_same_run(tmp_path, monkeypatch):
    # lesbcc-fig7's full cascade (main_kw None) is lesbcc-fig6's run: one entry, the same tables
    monkeypatch.delenv(runcache.RUN_CACHE_ENV, raising=False)
    fresh = XS.fig5_at({"duration": 10.0, "topo": {}}, 1)
    monkeypatch.setenv(runcache.RUN_CACHE_ENV, str(tmp_path))
    first = XS.fig5_at({"duration": 10.0, "topo": {}}, 1)
    again = XS.runs_at({"56 ms": {"topo": {}}}, [1], duration=10.0, main_kw=None)["56 ms"][0]
    assert len(list(tmp_path.iterdir())) == 1
    for r in (first, again):
        pd.testing.assert_frame_equal(r["flows"], fresh["flows"])
        assert r["main_mean_bps"] == fresh["main_mean_bps"] and r["events"] == fresh["events"]
