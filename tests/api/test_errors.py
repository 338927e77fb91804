"""Bad input is a ValueError that names the field; nothing already built or run is lost."""

import pytest

import castlab


def _raises(field, fn, *a, **kw):
    with pytest.raises(ValueError) as e:
        fn(*a, **kw)
    assert str(e.value).startswith(f"{field}:"), str(e.value)


def test_every_bad_input_names_its_field(line):
    sim = line
    _raises("b", sim.add_link, "src", "nowhere", 1e6, 0.01)
    _raises("a", sim.add_link, "nowhere", "src", 1e6, 0.01)
    _raises("rate_bps", sim.add_link, "src", "dst", 0.0, 0.01)
    _raises("rate_bps", sim.add_link, "src", "dst", -1e6, 0.01)
    _raises("delay", sim.add_link, "src", "dst", 1e6, -0.01)
    _raises("queue_limit_pkts", sim.add_link, "src", "dst", 1e6, 0.01, queue_limit_pkts=-5)
    _raises("queue", sim.add_link, "src", "dst", 1e6, 0.01, queue="fifo")
    _raises("red_max_th", sim.add_link, "src", "dst", 1e6, 0.01, queue="red", red_min_th=10, red_max_th=5)
    _raises("loss_ab", sim.add_link, "src", "dst", 1e6, 0.01, loss_ab=1.5)
    _raises("name", sim.add_node, "src")
    _raises("source", sim.add_group, "nowhere")
    g = sim.add_group("src")
    _raises("groups", sim.add_sink, "dst", groups=[g, 99])
    _raises("groups", sim.add_layered_source, "src", [42], [1e5])
    _raises("rates_bps", sim.add_layered_source, "src", [g], [-1e5])
    _raises("rates_bps", sim.add_layered_source, "src", [g], [1e5, 2e5])
    _raises("node", sim.add_sink, "nowhere")
    _raises("schedule", sim.add_sink, "dst", groups=[g], schedule=[(1.0, 2)])
    _raises("packet_size", sim.add_cbr, "src", "dst", 9, 1e6, packet_size=0)
    _raises("dst_port", sim.add_cbr, "src", "dst", -1, 1e6)
    _raises("stop", sim.add_cbr, "src", "dst", 9, 1e6, start=5.0, stop=1.0)
    _raises("seed", castlab.Simulator, seed=-1)
    _raises("leave_latency", castlab.Simulator, leave_latency=-1.0)
    _raises("channel", sim.monitor_channel, 999, 1.0)
    sim.add_sink("dst", port=9)
    _raises("port", sim.add_sink, "dst", port=9)
    sim.run(10.0)
    _raises("start", sim.add_cbr, "src", "dst", 9, 1e6, start=3.0)
    _raises("start", sim.add_sink, "dst", start=2.0)
    _raises("until", sim.run, 5.0)
    _raises("node", sim.add_node, "late")
    # the run carries on after all of that
    sim.add_cbr("src", "dst", 9, 1e5, start=10.0, stop=12.0)
    sim.run(15.0)
    assert sim.now == 15.0
    assert sim.conservation()["holds"]
    assert sim.channel_stats(sim.channel("r1", "dst"))["departures"] > 0


def test_window_loss_input_checks():
    _raises("received", castlab.worst_window_loss, [1, 2], [1], [0, 0], 1.0)
    _raises("times_ns", castlab.worst_window_loss, [2, 1], [1, 1], [0, 0], 1.0)
    _raises("window", castlab.worst_window_loss, [1, 2], [1, 1], [0, 0], 0.0)


def test_config_overrides_for_a_role_without_config_are_refused(line):
    """A role with no protocol config (the loss meter) refuses config overrides by name."""
    sim = line
    with pytest.raises(TypeError, match="attach_loss_meter: takes no config overrides"):
        sim.add_role("attach_loss_meter", {"node": "r1", "channel": 1}, {"w_q": 0.1})


def test_net_config_flag_reads_values_as_set_does():
    """``castlab net --config`` reads NAME=VALUE in the grammar of ``--set``: TOML values,
    else the text; a missing ``=`` names the flag."""
    import argparse

    from castlab.net import parse_override

    assert parse_override("t_min=0.3") == ("t_min", 0.3)
    assert parse_override(" layers = 5") == ("layers", 5)
    assert parse_override("fast=TRUE") == ("fast", True)
    assert parse_override("groups=[1, 2]") == ("groups", [1, 2])
    assert parse_override("name=abc") == ("name", "abc")
    with pytest.raises(argparse.ArgumentTypeError, match="--config 'layers'"):
        parse_override("layers")
