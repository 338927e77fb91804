"""Sink record modes: a sink that keeps only counters reads the same results as one
that records every arrival, and its online worst-case windowed loss equals the offline metric
computed from the full records."""

import numpy as np
import pytest

import castlab


def _lossy(seed: int):
    sim = castlab.Simulator(seed=seed)
    for n in ("s", "a", "b"):
        sim.add_node(n)
    sim.add_link("s", "a", 10e6, 0.002, queue_limit_pkts=50)
    sim.add_link("a", "b", 400e3, 0.010, queue_limit_pkts=8, loss_ab=0.02)
    groups = [sim.add_group("s") for _ in range(3)]
    sim.add_layered_source("s", groups, [100e3, 200e3, 300e3], packet_size=500)
    sched = [(0.0, 3), (20.0, 1), (25.0, 3)]
    windows = [0.1, 1.0, 10.0]
    full = sim.add_sink("b", groups=groups, schedule=sched, record="arrivals", windows=windows)
    lean = sim.add_sink("b", groups=groups, schedule=sched, windows=windows)
    plain = sim.add_sink("b", groups=groups, schedule=sched, record="arrivals")  # no online windows
    return sim, full, lean, plain, windows


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_summary_and_arrivals_modes_read_the_same(seed):
    sim, full, lean, plain, windows = _lossy(seed)
    sim.run(40.0)
    a, b = sim.sink_summary(full), sim.sink_summary(lean)
    assert a["record"] == "arrivals" and b["record"] == "summary"
    for k in ("received", "lost", "bytes", "first_arrival_ns", "last_arrival_ns"):
        assert a[k] == b[k], k
    for k in ("layer_received", "layer_lost"):
        assert np.array_equal(a[k], b[k]), k
    assert a["lost"] > 50, "the run must lose packets"
    # the counters agree with the rows
    arr, loss = sim.sink_arrivals(full), sim.sink_losses(full)
    assert a["received"] == len(arr["time_ns"]) and a["lost"] == int(loss["count"].sum())
    assert a["bytes"] == int(arr["size"].sum())
    # online windows == offline computation on the full records (exact)
    t = np.concatenate([loss["time_ns"], arr["time_ns"]])
    order = np.argsort(t, kind="stable")  # losses first at equal times, as the sink counts them
    rec = np.concatenate([np.zeros(len(loss["time_ns"]), np.uint64), np.ones(len(arr["time_ns"]), np.uint64)])
    lost = np.concatenate([loss["count"].astype(np.uint64), np.zeros(len(arr["time_ns"]), np.uint64)])
    for w in windows:
        offline = castlab.worst_window_loss(t[order].tolist(), rec[order].tolist(), lost[order].tolist(), w)
        assert b["worst_window_loss"][w] == offline
        assert a["worst_window_loss"][w] == offline
        assert sim.sink_worst_window_loss(lean, w) == offline
        assert sim.sink_worst_window_loss(plain, w) == offline  # from the rows
    # reading does not disturb the run: continue and the modes still agree
    sim.run(45.0)
    assert sim.sink_summary(full)["worst_window_loss"] == sim.sink_summary(lean)["worst_window_loss"]


def test_summary_sink_refuses_rows_and_unconfigured_windows_naming_the_field():
    sim, full, lean, plain, windows = _lossy(1)
    sim.run(2.0)
    with pytest.raises(ValueError, match="^record"):
        sim.sink_arrivals(lean)
    with pytest.raises(ValueError, match="^record"):
        sim.sink_losses(lean)
    with pytest.raises(ValueError, match="^window"):
        sim.sink_worst_window_loss(lean, 5.0)
    with pytest.raises(ValueError, match="^record"):
        sim.add_sink("b", record="everything")
    for bad in (0.0, -1.0, float("nan")):
        with pytest.raises(ValueError, match="^windows"):
            sim.add_sink("b", windows=[1.0, bad])
    assert sim.sink_summary(lean)["received"] > 0


def test_counters_are_read_without_numpy_and_columns_become_arrays():
    """A run that reads only a sink's counters does not import numpy (its import is most of a
    short run's start-up); reading a per-layer column gives a numpy array."""
    import subprocess
    import sys

    code = """
import sys
from castlab import Simulator
sim = Simulator(seed=1)
sim.add_node("a"); sim.add_node("b"); sim.add_link("a", "b", 1e6, 0.01)
g = sim.add_group("a")
sim.add_layered_source("a", [g], [200e3], packet_size=500)
k = sim.add_sink("b", groups=[g], schedule=[(0.0, 1)])
sim.run(2.0)
s = sim.sink_summary(k)
assert s["received"] > 50 and "layer_received" in s
assert "numpy" not in sys.modules, "numpy imported before a column was read"
col = s["layer_received"]
import numpy as np
assert isinstance(col, np.ndarray) and col.dtype == np.uint64 and int(col[0]) == s["received"]
assert isinstance(dict(s.items())["layer_lost"], np.ndarray)
"""
    subprocess.run([sys.executable, "-c", code], check=True)
