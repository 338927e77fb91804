"""WEBRC (RFC 3738) from Python: the registered methods and config, a scenario with heterogeneous
receivers, determinism, bad input, and the webrc experiment's quick run."""

import json
import subprocess
import sys

import numpy as np
import pytest

import castlab
from castlab import _native


def test_defaults_are_the_rfcs():
    d = _native.config_defaults("webrc")
    # §3.1.1: BCR_P 1, TSD 10 s, QD 300 s, P 0.75; §3.2.2.4: EL 0.5 s; §3.2.2.1: Nu = Delta = 0.3;
    # §3.2.2.2: Alpha 0.25; T + 1 = N + ceil(QD/TSD) + 1 = 20 + 30 + 1
    assert (d["bcr_p"], d["tsd"], d["qd"], d["p"], d["el"]) == (1.0, 10.0, 300.0, 0.75, 0.5)
    assert (d["nu"], d["delta"], d["alpha"], d["waves"], d["layers"]) == (0.3, 0.3, 0.25, 20, 51)


def _star(seed, duration=120.0):
    """src -> hub (10 ms) -> near (10 ms, clean) and far (60 ms, 2 % random loss)."""
    return castlab.Scenario.from_dict({
        "name": "webrc-star", "duration": duration, "nodes": ["src", "hub", "near", "far"],
        "links": [
            {"name": "up", "a": "src", "b": "hub", "rate": 100e6, "delay": 0.010, "queue_limit": 10_000},
            {"name": "n", "a": "hub", "b": "near", "rate": 100e6, "delay": 0.010, "queue_limit": 10_000},
            {"name": "f", "a": "hub", "b": "far", "rate": 100e6, "delay": 0.060, "queue_limit": 10_000,
             "loss_ab": 0.02},
        ],
        "sessions": [{"name": "w", "kind": "webrc", "source": "src", "config": {"max_rate_bps": 2e6}}],
        "receivers": [{"name": "near", "node": "near", "session": "w", "protocol": "webrc"},
                      {"name": "far", "node": "far", "session": "w", "protocol": "webrc"}],
    }).build(seed)


def test_a_scenario_session_serves_receivers_at_their_own_rates():
    sim = _star(1)
    sim.run(120.0)
    near = sim.webrc_receiver_records(sim.scenario_handles.receivers["near"])
    far = sim.webrc_receiver_records(sim.scenario_handles.receivers["far"])
    # the clean receiver climbs to its cap (MRR_b = 2 Mb/s = 250 packets/s) and stays below it
    t = near["epoch_time_ns"] / 1e9
    rr = near["epoch_rr"][t > 60.0]
    assert 150 < rr.mean() <= 260, rr.mean()
    assert near["lost"] == 0 and near["slow_start_end_s"] is not None
    # the lossy, far receiver runs far slower: TFRC's equation at 2 % and RTT 140 ms is 54
    # packets/s; the near one does not wait for it (§2)
    frr = far["epoch_rr"][far["epoch_time_ns"] / 1e9 > 60.0]
    assert frr.mean() < 0.5 * rr.mean()
    assert far["lost"] > 0 and far["loss_event_ns"].size > 5
    st = sim.webrc_receiver_status(sim.scenario_handles.receivers["far"])
    # ARTT near the path's 140 ms RTT (the graft goes up to the source's node)
    assert 0.07 < st["artt_s"] < 0.3, st
    assert 0.005 < st["lossp"] < 0.08, st
    # the sender's waves never exceed SR_P (1258 packets/s) and the base channel sends L = 9 per
    # slot: 12 slots, and the first packet of slot 12 at t = 120 s, which the run includes
    src = sim.webrc_source_records(sim.scenario_handles.sessions["w"]["source"])
    assert src["sent"] < 1259 * 120
    assert src["sent_per_channel"][-1] == 9 * 12 + 1


def test_same_seed_same_run():
    runs = []
    for _ in range(2):
        sim = _star(3, 40.0)
        sim.run(40.0)
        rec = sim.webrc_receiver_records(sim.scenario_handles.receivers["far"])
        runs.append((rec["epoch_rr"].tobytes(), rec["join_time_ns"].tobytes(), rec["loss_event_ns"].tobytes()))
    assert runs[0] == runs[1]


def test_bad_input_names_the_field():
    sim = castlab.Simulator(seed=1)
    sim.add_node("a")
    gs = [sim.add_group("a") for _ in range(51)]
    with pytest.raises(ValueError, match="^p:"):
        sim.add_webrc_source("a", gs, p=1.5)
    with pytest.raises(ValueError, match="^groups:"):
        sim.add_webrc_source("a", gs[:50])
    with pytest.raises(ValueError, match="^layers:"):
        sim.add_webrc_receiver("a", gs[:40], layers=40)
    with pytest.raises(ValueError, match="^agent:"):
        sim.webrc_receiver_records(sim.add_webrc_source("a", gs))


def test_reproduce_quick_writes_data_plot_and_computed_claims(tmp_path):
    out = tmp_path / "webrc"
    r = subprocess.run([sys.executable, "-m", "castlab", "reproduce", "webrc", "--quick", "--out", str(out)],
                       capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr
    s = json.loads((out / "summary.json").read_text())
    assert s["experiment"] == "webrc" and len(s["claims"]) >= 9
    assert all(isinstance(c["holds"], bool) for c in s["claims"])
    assert {c["kind"] for c in s["claims"]} <= {"derived", "variant"}
    for f in ["webrc.csv", "webrc.png", "webrc.svg"]:
        assert (out / f).stat().st_size > 100, f
    from castlab.experiments.webrc import READINGS

    assert s["params"]["declared_readings"] == READINGS == {}
    listed = subprocess.run([sys.executable, "-m", "castlab", "list"], capture_output=True, text=True, timeout=60)
    assert "webrc" in listed.stdout
