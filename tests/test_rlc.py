"""RLC through the Python API: defaults are the Rainbow paper's set-up, bad settings name the
field, and receivers behind a 1 Mb/s bottleneck settle at the level that fits (512 kb/s)."""

import numpy as np
import pytest

import castlab
from castlab._native import config_defaults


def test_defaults_are_the_rainbow_papers_setup():
    c = config_defaults("rlc")
    assert (c["base_rate_bps"], c["packet_bytes"], c["sp_base_interval"]) == (32e3, 512, 1.0)


def _net(rate=1e6, receivers=2, **cfg):
    sim = castlab.Simulator(seed=2)
    for n in ("S", "R1", "R2"):
        sim.add_node(n)
    sim.add_link("S", "R1", 10e6, 0.005, queue_limit_pkts=100)
    sim.add_link("R1", "R2", rate, 0.02, queue_limit_pkts=20)
    layers = cfg.get("layers", 8)
    gs = [sim.add_group("S") for _ in range(layers)]
    sim.add_rlc_source("S", gs, **cfg)
    rx = []
    for i in range(receivers):
        sim.add_node(f"H{i}")
        sim.add_link("R2", f"H{i}", 10e6, 0.005, queue_limit_pkts=100)
        rx.append(sim.add_rlc_receiver(f"H{i}", gs, start=0.2, **cfg))
    return sim, gs, rx


def test_bad_settings_name_the_field_and_add_nothing():
    sim, gs, _ = _net(layers=8)
    with pytest.raises(ValueError, match="^layers"):
        sim.add_rlc_receiver("H0", gs, layers=0)
    with pytest.raises(ValueError, match="^burst_duration"):
        sim.add_rlc_source("S", gs, layers=8, burst_duration=0.7)
    with pytest.raises(ValueError, match="^groups"):
        sim.add_rlc_source("S", gs[:3], layers=8)
    with pytest.raises(ValueError, match="^groups"):
        sim.add_rlc_source("H0", gs, layers=8)  # not rooted there


def test_receivers_settle_at_the_level_that_fits():
    sim, _, rx = _net(layers=8)
    sim.run(240.0)
    for a in rx:
        r = sim.rlc_records(a)
        t = r["level_time_ns"] / 1e9
        lv = r["level"].astype(int)
        edges = np.clip(np.append(t, 240.0), 120.0, 240.0)
        at5 = float(np.sum(np.diff(edges)[lv == 5]))
        assert at5 >= 0.6 * 120.0, (at5, list(zip(t, lv))[-10:])
        assert r["joins"] >= 4 and r["received"] > 0
        assert sim.rlc_config(a)["layers"] == 8
