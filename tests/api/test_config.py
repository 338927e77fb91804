"""One registration path for protocol settings: keyword overrides of the Rust `Default` (the
papers' values), assigned by name and validated in Rust, with errors that name the field."""

import math

import pytest

import castlab
from castlab._native import config_defaults


def _star():
    sim = castlab.Simulator(seed=1)
    for n in ("s", "r", "d"):
        sim.add_node(n)
    sim.add_link("s", "r", 10e6, 0.01)
    sim.add_link("r", "d", 10e6, 0.01)
    return sim


def test_defaults_are_the_papers_values():
    rlm = config_defaults("rlm")  # RLM §4 / Table 1
    assert (rlm["alpha"], rlm["beta"], rlm["t_min"], rlm["t_max"]) == (2.0, pytest.approx(2 / 3), 5.0, 600.0)
    assert (rlm["g1"], rlm["g2"], rlm["loss_threshold"]) == (0.25, 0.25, 0.25)
    les = config_defaults("lesbcc")  # LE-SBCC: 560-byte packets, AIMD by default
    assert (les["packet_bytes"], les["policy"], les["max_rate_bps"]) == (560, "aimd", math.inf)
    assert config_defaults("tcp")["dupack_threshold"] == 3
    with pytest.raises(ValueError, match="^protocol"):
        config_defaults("xcp")


def test_an_override_reaches_the_agent_and_the_rest_stay_default():
    sim = _star()
    gs = [sim.add_group("s") for _ in range(3)]
    ctl = sim.add_group("s")
    a = sim.add_rlm_receiver("d", gs, ctl, t_min=3, loss_threshold=0.2)
    got = sim.rlm_config(a)
    want = dict(config_defaults("rlm"), t_min=3.0, loss_threshold=0.2)
    assert got == want


@pytest.mark.parametrize(
    "call, field",
    [
        (lambda sim, gs, ctl: sim.add_rlm_receiver("d", gs, ctl, t_mni=3.0), "t_mni"),
        (lambda sim, gs, ctl: sim.add_rlm_receiver("d", gs, ctl, beta=1.5), "beta"),
        (lambda sim, gs, ctl: sim.add_rlm_receiver("d", gs, ctl, t_min=-1.0), "t_min"),
        (lambda sim, gs, ctl: sim.add_rlm_receiver("d", gs, ctl, t_min="5s"), "t_min"),
        (lambda sim, gs, ctl: sim.add_rlm_receiver("d", gs, ctl, member_timeout_intervals=2**40), "member_timeout_intervals"),
        (lambda sim, gs, ctl: sim.add_rlm_receiver("d", gs, ctl, scale_t_max=1), "scale_t_max"),
        (lambda sim, gs, ctl: sim.add_lesbcc_source("s", gs[0], policy="cubic"), "policy"),
        (lambda sim, gs, ctl: sim.add_lesbcc_source("s", gs[0], tfrc_weights=[]), "tfrc_weights"),
        (lambda sim, gs, ctl: sim.add_pgm_receiver("d", gs[0], nak_rpt_ivl=0.0), "nak_rpt_ivl"),
        (lambda sim, gs, ctl: sim.add_tcp_flow("s", "d", initial_window_segs=10**9), "initial_window_segs"),
        (lambda sim, gs, ctl: sim.add_tcp_flow("s", "d", min_rto=2.0, max_rto=1.0), "max_rto"),
        (lambda sim, gs, ctl: sim.add_bcf_routers(max_entries=10**9), "max_entries"),
        (lambda sim, gs, ctl: sim.attach_lmr("r", qweight=0.0), "qweight"),
        (lambda sim, gs, ctl: sim.add_nlm_receiver("d", gs[0], ss_intvl=0), "ss_intvl"),
    ],
)
def test_bad_overrides_name_the_field_and_add_nothing(call, field):
    sim = _star()
    gs = [sim.add_group("s") for _ in range(3)]
    ctl = sim.add_group("s")
    before = sim.add_sink("d", port=100)  # agent ids are sequential: they count the agents
    with pytest.raises(ValueError, match=f"^{field}"):
        call(sim, gs, ctl)
    assert sim.add_sink("d", port=101) == before + 1


def test_lesbcc_unicast_routes_each_override_to_its_own_config():
    sim = _star()
    a = sim.add_lesbcc_unicast("s", "d", packet_bytes=1000, nak_backoff_max=0.0)
    assert sim.lesbcc_stats(a)["rate_bps"] > 0
    with pytest.raises(ValueError, match="^nak_rpt_ivl"):
        sim.add_lesbcc_unicast("s", "d", nak_rpt_ivl=-1.0)
