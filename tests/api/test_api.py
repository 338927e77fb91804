"""The Python API end to end: build, run, read results as numpy arrays and DataFrames."""

import hashlib

import numpy as np
import pandas as pd
import pytest

import castlab


def test_unicast_cbr_through_bottleneck(line):
    sim = line
    sink = sim.add_sink("dst", port=9, record="arrivals")
    sim.add_cbr("src", "dst", 9, 2e6, packet_size=1000, start=1.0, stop=21.0)
    sim.monitor_channel(sim.channel("r1", "dst"), 0.5)
    sim.run(30.0)
    arr = sim.sink_arrivals(sink)
    assert isinstance(arr["time_ns"], np.ndarray) and arr["time_ns"].dtype == np.uint64
    # 2 Mb/s offered into 1 Mb/s for 20 s: ~1 Mb/s delivered, about half lost at the queue
    got_bits = arr["size"].sum() * 8
    assert abs(got_bits / 20.0 / 1e6 - 1.0) < 0.02
    st = sim.channel_stats(sim.channel("r1", "dst"))
    assert st["drops_forced"] > 2000
    assert sim.conservation()["holds"]
    df = castlab.series_frame(sim, sim.channel("r1", "dst"))
    assert isinstance(df, pd.DataFrame) and len(df) == 61
    busy = df[(df.time_s > 3) & (df.time_s <= 21)]
    assert np.allclose(busy.throughput_bps, 1e6, rtol=0.03)
    assert (busy.qlen >= 15).all()  # the queue stays near its limit of 20 while overloaded


def test_layered_multicast_and_level_timeline(line):
    sim = line
    groups = [sim.add_group("src") for _ in range(3)]
    sim.add_layered_source("src", groups, [100e3, 200e3, 400e3], packet_size=500)
    sink = sim.add_sink("dst", groups=groups, schedule=[(1.0, 3), (10.0, 1), (15.0, 2)], record="arrivals")
    sim.run(20.0)
    arr = castlab.arrivals_frame(sim, sink)
    assert set(arr.layer.unique()) == {0, 1, 2}
    # after the drop to level 1 at 10 s (and the prune), layer 2 stops
    late2 = arr[(arr.layer == 2) & (arr.time_s > 10.2)]
    assert len(late2) == 0
    lv = castlab.level_frame(sim)
    assert list(lv.level) == [3, 1, 2] and list(lv.time_s) == [1.0, 10.0, 15.0]
    assert castlab.losses_frame(sim, sink).empty  # 700 kb/s fits 1 Mb/s


def test_router_extension_from_python(line):
    sim = line
    groups = [sim.add_group("src") for _ in range(2)]
    sim.add_layered_source("src", groups, [100e3, 100e3], packet_size=500)
    sink = sim.add_sink("dst", groups=groups, schedule=[(0.0, 2)], record="arrivals")
    sim.attach_layer_dropper("r1", sim.channel("r1", "dst"), layer=1)
    sim.run(10.0)
    layers = sim.sink_arrivals(sink)["layer"]
    assert (layers == 0).sum() > 200 and (layers == 1).sum() == 0
    assert sim.layer_dropper_count("r1") > 200


def _fingerprint(tree, seed, **sim_kw):
    sim = tree(seed, **sim_kw)
    groups = [sim.add_group("s") for _ in range(4)]
    sim.add_layered_source("s", groups, [100e3, 200e3, 400e3, 800e3])
    sinks = [sim.add_sink("a", groups=groups, schedule=[(1.0, 4), (20.0, 2)], record="arrivals"),
             sim.add_sink("b", groups=groups, schedule=[(2.0, 3)], record="arrivals")]
    sim.run(40.0)
    h = hashlib.sha256()
    for s in sinks:
        for d in (sim.sink_arrivals(s), sim.sink_losses(s)):
            for k in sorted(d):
                h.update(d[k].tobytes())
    return h.hexdigest()


def test_determinism_same_seed_same_bytes_other_seed_differs(tree):
    a = _fingerprint(tree, 7)
    assert a == _fingerprint(tree, 7)
    assert a != _fingerprint(tree, 8)


def test_phase_randomisation_off_by_default_seeded_when_on_and_settable_for_a_whole_process(monkeypatch, tree):
    from castlab.simulator import PHASE_ENV

    monkeypatch.delenv(PHASE_ENV, raising=False)
    off = _fingerprint(tree, 7)
    assert _fingerprint(tree, 7, phase_overhead=0.0) == off
    on = _fingerprint(tree, 7, phase_overhead=0.002)
    assert on != off and on == _fingerprint(tree, 7, phase_overhead=0.002)
    assert on != _fingerprint(tree, 8, phase_overhead=0.002)
    # the environment sets the default of simulators that do not name it (experiments' code)
    monkeypatch.setenv(PHASE_ENV, "0.002")
    assert _fingerprint(tree, 7) == on
    assert _fingerprint(tree, 7, phase_overhead=0.0) == off
    monkeypatch.setenv(PHASE_ENV, "two ms")
    with pytest.raises(ValueError, match=PHASE_ENV):
        castlab.Simulator(seed=1)
    with pytest.raises(ValueError, match="phase_overhead"):
        castlab.Simulator(seed=1, phase_overhead=2.0)


def test_worst_window_loss_python_matches_hand_computation():
    # 100 pkt/s for 200 s, all lost in [100, 100.5) s
    t = np.arange(20_000, dtype=np.uint64) * 10_000_000
    lost = ((t >= 100_000_000_000) & (t < 100_500_000_000)).astype(np.uint64)
    rec = 1 - lost
    assert castlab.worst_window_loss(t.tolist(), rec.tolist(), lost.tolist(), 1.0) == 0.5
    assert abs(castlab.worst_window_loss(t.tolist(), rec.tolist(), lost.tolist(), 100.0) - 0.005) < 1e-12


def test_transmission_time():
    assert castlab.transmission_ns(1000, 1.5e6) == 5_333_333


@pytest.mark.parametrize("kw, msg", [
    ({"packet_size": 0}, "packet_size: must be a positive 32-bit integer (got 0)"),
    ({"packet_size": 2**32}, "packet_size: must be a positive 32-bit integer (got 4294967296)"),
    ({"flow": -1}, "flow: must be in 0..2^32 (got -1)"),
    ({"flow": 2**32}, "flow: must be in 0..2^32 (got 4294967296)"),
])
def test_integer_checks_read_the_same_in_bindings_and_registry(line, kw, msg):
    # add_layered_source checks its own arguments, add_nlm_sender is made by the registry:
    # one checker, so the same bad value is refused with the same words.
    g = line.add_group("src")
    with pytest.raises(ValueError) as own:
        line.add_layered_source("src", [g], [100e3], **kw)
    with pytest.raises(ValueError) as reg:
        line.add_nlm_sender("src", g, [100e3], **kw)
    assert str(own.value) == msg
    assert str(reg.value) == msg


def test_negative_seed_names_the_field():
    with pytest.raises(ValueError, match=r"^seed: must be >= 0 \(got -1\)$"):
        castlab.Simulator(seed=-1)


def test_cbr_tcp_and_sink_are_registry_roles_that_take_numpy_arrays(line):
    from castlab import _registry

    roles = _registry.roles()
    for name in ("add_layered_source", "add_cbr", "add_sink", "add_tcp_flow"):
        assert name in roles and not hasattr(castlab._native.Simulator, name), name
        assert getattr(castlab.Simulator, name).__doc__ == roles[name]["doc"], name
    # a hand-written binding took any sequence for its list arguments; the registry's roles do too
    groups = [line.add_group("src") for _ in range(2)]
    line.add_layered_source("src", np.array(groups), np.array([100e3, 200e3]), packet_size=np.int64(500),
                            flow=np.int64(4))
    sink = line.add_sink("dst", groups=np.array(groups), schedule=[(0.0, np.int64(2))], record="arrivals")
    line.run(5.0)
    arr = line.sink_arrivals(sink)
    # 100 and 200 kb/s in 500-byte packets: 25 and 50 packets a second for 5 s (jittered send times)
    assert 105 < (arr["layer"] == 0).sum() < 145
    assert 210 < (arr["layer"] == 1).sum() < 290
    assert set(arr["flow"]) == {4}


@pytest.mark.parametrize("kw, msg", [
    ({"record": "all"}, 'record: must be "summary" or "arrivals" (got all)'),
    ({"windows": [1.0, 0.0]}, "windows: every window must be positive (got 0)"),
    ({"schedule": [(1.0, 3)]}, "schedule: levels must be between 0 and the number of groups (got 3)"),
    ({"schedule": [(1.5,)]}, "schedule: must be (time_s, level) pairs (got [1.5])"),
    ({"port": 70000}, "port: must be in 0..=65535 (got 70000)"),
])
def test_add_sink_refuses_bad_arguments_and_adds_nothing(line, kw, msg):
    g = line.add_group("src")
    before = line.add_sink("dst")
    with pytest.raises(ValueError) as e:
        line.add_sink("dst", groups=[g], **kw)
    assert str(e.value) == msg
    assert line.add_sink("dst") == before + 1


def test_every_tcp_variant_builds_through_the_registry_and_delivers(line):
    # TCP_VARIANTS is CcAlgorithm::ALL; the registered add_tcp_flow takes each of them
    flows = {v: line.add_tcp_flow("src", "dst", variant=v, transfer_bytes=20_000) for v in castlab._native.TCP_VARIANTS}
    line.run(10.0)
    for v, a in flows.items():
        st = line.tcp_stats(a)
        assert st["variant"] == v and st["received_bytes"] == 20_000, (v, st)
    with pytest.raises(ValueError, match=r'^variant: must be one of "'):
        line.add_tcp_flow("src", "dst", variant="vegas")
