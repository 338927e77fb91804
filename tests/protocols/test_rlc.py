"""RLC through the Python bindings."""

import pytest

import castlab
from castlab import _native


def _session(seed=1, bottleneck=300e3, **config):
    sim = castlab.Simulator(seed=seed)
    for n in ("S", "R1", "X"):
        sim.add_node(n)
    sim.add_link("S", "R1", 100e6, 0.001, queue_limit_pkts=1000)
    sim.add_link("R1", "X", bottleneck, 0.020, queue_limit_pkts=20)
    layers = config.get("layers", _native.config_defaults("rlc")["layers"])
    groups = [sim.add_group("S") for _ in range(layers)]
    sim.add_rlc_sender("S", groups, 1, **config)
    rx = sim.add_rlc_receiver("X", groups, 1, **config)
    return sim, rx


def test_defaults_are_the_rainbow_setup():
    d = _native.config_defaults("rlc")
    assert d["base_rate_bps"] == 32_000.0
    assert d["sp_base"] == 1.0
    assert d["packet_size"] == 512
    assert d["burst"] is False


def test_receiver_climbs_to_the_level_that_fits_and_reports_records():
    sim, rx = _session()
    sim.run(120.0)
    rec = sim.rlc_records(rx)
    # 32*2^(L-1) kb/s: level 4 (256 kb/s) fits in 300 kb/s, level 5 does not.
    assert max(rec["level"]) >= 4
    assert rec["level"][-1] in (4, 5)
    assert rec["received"][0] > 0 and rec["bytes"] > 0
    assert sim.rlc_config(rx)["deaf_period"] == 10.0


def test_overrides_reach_the_agent_and_bad_ones_name_the_field():
    sim, rx = _session(deaf_period=1.0, burst=True)
    assert sim.rlc_config(rx)["deaf_period"] == 1.0
    assert sim.rlc_config(rx)["burst"] is True
    with pytest.raises(ValueError, match="base_rate_bps"):
        _session(base_rate_bps=-5.0)
    with pytest.raises(ValueError, match="groups"):
        sim.add_rlc_receiver("X", [0], 1)
