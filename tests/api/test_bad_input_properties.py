"""Property tests (hypothesis) of the Python API's bad-input surface: every public method of the
simulator, called with random values (negative, NaN, inf, huge, wrong types, unknown names,
empty lists), never aborts or hangs the process, raises nothing but ValueError, TypeError or
OverflowError, and leaves the simulator as it was after an error.

The random calls run in a child process with a deadline, so an abort (SIGABRT, a Rust panic
across the FFI) or a hang fails the test instead of killing or blocking the suite; each call's
simulated horizon is bounded (`run` only up to `now + 0.05 s`).
"""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap

import pytest

pytest.importorskip("hypothesis")

CHILD = textwrap.dedent(r'''
    import inspect, json, math, sys
    from hypothesis import given, settings, strategies as st, HealthCheck
    import castlab

    ALLOWED = (ValueError, TypeError, OverflowError)
    # the engine's methods and those made from the protocol registry
    NATIVE = castlab.Simulator
    METHODS = sorted(n for n in dir(NATIVE) if not n.startswith("_") and callable(getattr(NATIVE, n)))

    def base():
        sim = castlab.Simulator(seed=1)
        for n in ("a", "b", "c"):
            sim.add_node(n)
        sim.add_link("a", "b", 1e6, 0.01)
        sim.add_link("b", "c", 1e6, 0.01)
        g = sim.add_group("a")
        sim.add_sink("c", groups=[g], schedule=[(0.0, 1)])
        return sim

    values = st.one_of(
        st.integers(min_value=-2**70, max_value=2**70),
        st.floats(allow_nan=True, allow_infinity=True),
        st.sampled_from([0, -1, 1, 2**31, 2**63, 1e300, -1e-9, float("nan"), float("inf")]),
        st.text(max_size=8), st.sampled_from(["a", "b", "c", "nowhere", "", "red", "aimd"]),
        st.none(), st.booleans(), st.lists(st.integers(-3, 3), max_size=4), st.just([]),
        st.lists(st.tuples(st.floats(-1, 10), st.integers(-1, 9)), max_size=3),
    )

    def snapshot(sim):
        return (sim.now, json.dumps(sim.engine_stats(), sort_keys=True, default=str),
                json.dumps(sim.conservation(), sort_keys=True, default=str))

    stats = {"calls": 0, "errors": 0, "ok": 0}

    @settings(max_examples=int(sys.argv[1]), deadline=None, database=None,
              suppress_health_check=list(HealthCheck))
    @given(st.sampled_from(METHODS), st.lists(values, max_size=6),
           st.dictionaries(st.sampled_from(["start", "stop", "port", "flow", "t_min", "bogus", "rate_bps",
                                            "queue_limit_pkts", "until", "window", "record", "nodes"]), values,
                           max_size=2))
    def check(name, args, kwargs):
        sim = base()
        before = snapshot(sim)
        if name == "run":
            args = [sim.now + 0.05] if not args or not isinstance(args[0], (int, float)) or not (args[0] < 0.05) else args
        stats["calls"] += 1
        try:
            getattr(sim, name)(*args, **kwargs)
            stats["ok"] += 1
            return
        except ALLOWED:
            stats["errors"] += 1
        assert snapshot(sim) == before, f"{name}{args}{kwargs} changed the simulator before failing"
        # and it still works
        sim.add_node("z")
        sim.add_link("c", "z", 1e6, 0.001)
        sim.run(sim.now + 0.01)

    check()
    print(json.dumps(stats))
''')


def test_random_calls_never_abort_hang_or_raise_anything_else(tmp_path):
    script = tmp_path / "child.py"
    script.write_text(CHILD)
    try:
        r = subprocess.run([sys.executable, str(script), "5000"], capture_output=True, text=True, timeout=240)
    except subprocess.TimeoutExpired as e:
        pytest.fail(f"a random call hung (no answer in 240 s): {e.stdout!r}")
    assert r.returncode == 0, f"exit {r.returncode} (negative: killed by a signal)\n{r.stderr[-3000:]}"
    stats = json.loads(r.stdout.strip().splitlines()[-1])
    assert stats["calls"] >= 5000 and stats["errors"] > 100 and stats["ok"] > 10, stats
