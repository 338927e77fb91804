"""CUBIC and BBR from Python: one list of TCP variants for add_tcp_flow and scenario files,
Linux's settings as the new variants' defaults, their traces, and the tcp-cubic and tcp-bbr
baseline checks in their quick form."""

import json
import subprocess
import sys

import numpy as np
import pytest

import castlab
from castlab._native import TCP_VARIANTS
from castlab.scenario import Scenario
from castlab.scenario.schema import ScenarioError


def _line(seed=1):
    """s --(10 Mb/s, 20 ms, 100 packets)-- d"""
    sim = castlab.Simulator(seed=seed)
    sim.add_node("s")
    sim.add_node("d")
    sim.add_link("s", "d", 10e6, 0.020, queue_limit_pkts=100)
    return sim


def test_one_list_of_variants():
    assert TCP_VARIANTS == ("reno", "newreno", "sack", "cubic", "bbr")
    sim = _line()
    for v in TCP_VARIANTS:
        a = sim.add_tcp_flow("s", "d", variant=v)
        assert sim.tcp_stats(a)["variant"] == v
    with pytest.raises(ValueError) as e:
        sim.add_tcp_flow("s", "d", variant="vegas")
    msg = str(e.value)
    assert msg.startswith("variant:") and all(repr(v).replace("'", '"') in msg for v in TCP_VARIANTS), msg


def _scenario(variant):
    return {"name": "one flow", "duration": 2.0, "nodes": ["s", "d"],
            "links": [{"name": "l", "a": "s", "b": "d", "rate": 10e6, "delay": 0.02, "queue_limit": 100}],
            "tcp": [{"name": "f", "src": "s", "dst": "d", "variant": variant}]}


@pytest.mark.parametrize("variant", TCP_VARIANTS)
def test_scenario_files_take_every_variant(variant):
    sim = Scenario.from_dict(_scenario(variant)).build(1)
    a = sim.scenario_handles.tcp["f"]
    sim.run(2.0)
    assert sim.tcp_stats(a)["variant"] == variant
    assert sim.tcp_stats(a)["received_bytes"] > 0


def test_scenario_files_reject_an_unknown_variant_naming_the_list():
    with pytest.raises(ScenarioError) as e:
        Scenario.from_dict(_scenario("vegas"))
    assert "vegas" in str(e.value) and all(repr(v) in str(e.value) for v in TCP_VARIANTS)


def test_cubic_and_bbr_start_from_linux_settings_reno_family_unchanged():
    sim = _line()
    flows = {v: sim.add_tcp_flow("s", "d", variant=v, start=10.0) for v in ("newreno", "cubic", "bbr")}
    over = sim.add_tcp_flow("s", "d", variant="cubic", mss_bytes=1000, initial_window_segs=4, start=10.0)
    sim.run(0.1)
    for v, a in flows.items():
        st = sim.tcp_stats(a)  # before the flow starts: the initial window
        mss, iw = (1000, 2) if v == "newreno" else (1448, 10)  # RFC 6928's IW 10 for the Linux-like ones
        assert st["mss_bytes"] == mss, v
        assert st["cwnd_bytes"] == iw * mss, v
    assert sim.tcp_stats(over)["mss_bytes"] == 1000
    assert sim.tcp_stats(over)["cwnd_bytes"] == 4 * 1000


def test_bbr_paces_and_traces_its_states_the_others_do_not():
    sim = _line()
    b = sim.add_tcp_flow("s", "d", variant="bbr")
    c = sim.add_tcp_flow("s", "d", variant="cubic", start=100.0)
    sim.run(5.0)
    tb, tc = sim.tcp_trace(b), sim.tcp_trace(c)
    assert len(tb["tx_time_ns"]) == sim.tcp_stats(b)["segments_sent"]
    assert np.all(np.diff(tb["tx_bytes"]) == 1500)  # 1448 + 52 on the wire
    codes = list(tb["state_code"])
    assert codes[:3] == [0, 1, codes[2]] and codes[2] >= 8  # STARTUP, DRAIN, PROBE_BW
    assert len(tc["tx_time_ns"]) == 0 and len(tc["state_code"]) == 0
    # paced per skb, as Linux (TcpConfig::linux()'s skb_pacing): in PROBE_BW segments leave in
    # skbs of 2 (tcp_tso_autosize at 10 Mb/s: 1/1024 s of the rate is under one segment, and a
    # 40 ms min RTT adds nothing), and an skb holds the next back by at least half its time at
    # the pacing rate (a 10 Mb/s link's worth at gain 5/4; half: the credit of
    # tcp_update_skb_after_send), less a rounding nanosecond
    t0 = tb["state_time_ns"][2]
    tx = tb["tx_time_ns"][tb["tx_time_ns"] > t0]
    starts, sizes = np.unique(tx, return_counts=True)
    assert sizes.max() == 2 and (sizes == 2).mean() > 0.5
    seg_ns = 1448 * 8 / (10e6 * 1.25 * 1.06) * 1e9
    assert np.all(np.diff(starts) >= sizes[:-1] * seg_ns / 2 - 1)


def test_same_seed_same_cubic_and_bbr_runs():
    def run():
        sim = _line(seed=3)
        a = [sim.add_tcp_flow("s", "d", variant="cubic"), sim.add_tcp_flow("s", "d", variant="bbr", start=0.5)]
        sim.run(8.0)
        return [{k: v.tolist() for k, v in sim.tcp_trace(x).items()} for x in a]

    assert run() == run()


@pytest.mark.parametrize("name,files", [("tcp-cubic", ["cubic_epochs.csv", "cubic_cwnd.csv", "cubic.png"]),
                                        ("tcp-bbr", ["bbr_runs.csv", "bbr_states.csv", "bbr.png"])])
def test_baseline_checks_quick(tmp_path, name, files):
    out = tmp_path / name
    r = subprocess.run([sys.executable, "-m", "castlab", "reproduce", name, "--quick", "--out", str(out)],
                       capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr
    s = json.loads((out / "summary.json").read_text())
    assert s["experiment"] == name and len(s["claims"]) >= 5
    assert all(c["kind"] in ("derived", "sanity") for c in s["claims"])
    failed = [c["id"] for c in s["claims"] if not c["holds"]]
    assert not failed, failed
    for f in files:
        assert (out / f).stat().st_size > 100, f


def test_rack_tlp_on_for_linux_flows_off_for_the_reno_family_and_switchable():
    # a lossy path: Bernoulli loss on the data direction, so that RACK has losses to mark
    sim = castlab.Simulator(seed=2)
    sim.add_node("s")
    sim.add_node("d")
    sim.add_link("s", "d", 10e6, 0.020, queue_limit_pkts=100, loss_ab=0.02)
    on = sim.add_tcp_flow("s", "d", variant="cubic")
    off = sim.add_tcp_flow("s", "d", variant="cubic", rack=False, tlp=False)
    ns2 = sim.add_tcp_flow("s", "d", variant="sack")
    sim.run(20.0)
    st_on, st_off, st_ns2 = (sim.tcp_stats(a) for a in (on, off, ns2))
    assert st_on["retransmissions"] > 0 and st_on["rack_losses"] > 0
    for st in (st_off, st_ns2):  # RFC 6675 alone: no RACK marks, no probes
        assert st["retransmissions"] > 0
        assert (st["rack_losses"], st["tlp_probes"], st["tlp_recoveries"]) == (0, 0, 0)
    # RACK reads SACK blocks; TLP needs RACK: each refused naming the field, nothing added (the
    # next flow's sender is the agent after the three flows' six)
    with pytest.raises(ValueError, match=r"^rack:"):
        sim.add_tcp_flow("s", "d", variant="newreno", rack=True, start=30.0)
    with pytest.raises(ValueError, match=r"^tlp:"):
        sim.add_tcp_flow("s", "d", variant="cubic", rack=False, start=30.0)
    assert sim.add_tcp_flow("s", "d", variant="cubic", start=30.0) == 7
