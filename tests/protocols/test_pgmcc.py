"""PGMCC (draft-ietf-rmt-bb-pgmcc) from Python: the registered methods and config, the guide's
scenario file run as written, determinism, bad input, and the pgmcc experiment's quick run."""

import json
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import castlab
from castlab import _native
from castlab.experiments.pgmcc.topology import acker_share

GUIDE = Path(__file__).resolve().parents[2] / "docs" / "guide.md"


def _scenario(tmp_path):
    text = GUIDE.read_text().split("### PGMCC in a scenario file", 1)[1]
    block = re.search(r"```toml\n(.*?)```", text, re.S).group(1)
    f = tmp_path / "pgmcc.toml"
    f.write_text(block)
    return castlab.Scenario.from_toml(str(f))


def test_defaults_are_the_drafts():
    d = _native.config_defaults("pgmcc")
    assert d["acker_bias"] == 0.75 and d["ssthresh"] == 4.0 and d["dupacks"] == 3
    assert d["loss_filter"] == 500 / 65536 and d["initial_rto"] == 3.0 and d["retry_max"] == 2


def test_the_guides_scenario_runs_and_the_lossier_receiver_is_the_acker(tmp_path):
    sc = _scenario(tmp_path)
    metrics = sc.run(seed=1, out=str(tmp_path / "out"))
    assert metrics["near.received"] > 1000 and metrics["far.received"] > 1000
    assert metrics["far.loss"] > metrics["near.loss"] + 0.01
    sim = sc.build(1)
    sim.run(40.0)
    src = sim.scenario_handles.sessions["bulk"]["source"]
    rec = sim.pgmcc_source_records(src)
    # §2.3: the receiver of lowest TCP throughput (the lossier, same RTT) holds the acker role
    assert acker_share(rec, "far", 10.0, 40.0) > 0.9, rec["acker_receiver"]
    far = sim.pgmcc_receiver_status(sim.scenario_handles.receivers["far"])
    near = sim.pgmcc_receiver_status(sim.scenario_handles.receivers["near"])
    assert far["is_acker"] and not near["is_acker"]
    # the loss filters read near their paths' random losses (2 % and 0.2 %, 131-packet memory)
    assert 0.005 < far["loss_rate"] < 0.05 and near["loss_rate"] < far["loss_rate"]
    st = sim.pgmcc_source_status(src)
    assert st["acker"] == "far" and st["window"] >= 1.0 and 0.04 <= st["srtt_s"] < 0.5
    # each NAK's RTT sample is the 40 ms path RTT or more (the correction term removes the back-off)
    assert len(rec["fb_rtt_s"]) > 10 and np.all(rec["fb_rtt_s"] >= 0.04) and np.median(rec["fb_rtt_s"]) < 0.06
    # a window clocked by ACKs at 2 % loss, 40 ms: TCP's sqrt(3/2)/sqrt(p) ~ 8.7 packets per RTT, so a
    # few hundred packets/s, far below the 100 Mb/s links
    rate = metrics["far.received"] / 40.0
    assert 50 < rate < 1000, rate
    assert rec["halvings"] > 10 and rec["acks"] > 1000


def test_the_python_api_builds_a_session():
    sim = castlab.Simulator(seed=2)
    for n in ("s", "h", "a", "b"):
        sim.add_node(n)
    sim.add_link("s", "h", 10e6, 0.005, queue_limit_pkts=100)
    sim.add_link("h", "a", 10e6, 0.005, queue_limit_pkts=100)
    sim.add_link("h", "b", 10e6, 0.020, queue_limit_pkts=100)
    g = sim.add_group("s")
    src = sim.add_pgmcc_source("s", g, flow=4, stop=20.0)
    ra = sim.add_pgmcc_receiver("a", g, flow=4)
    rb = sim.add_pgmcc_receiver("b", g, flow=4)
    sim.run(25.0)
    a, b = sim.pgmcc_receiver_records(ra), sim.pgmcc_receiver_records(rb)
    assert a["received"] > 1000 and b["received"] > 1000
    # no random loss: the farther receiver (longer RTT, lower TCP throughput at equal loss) ends up
    # the acker, and no packet is sent after `stop`
    st = sim.pgmcc_source_status(src)
    assert st["acker"] == "b"
    rec = sim.pgmcc_source_records(src)
    assert rec["data_sent"] + rec["rdata_sent"] >= a["received"]
    assert sim.pgmcc_config(ra)["acker_bias"] == 0.75


def test_same_seed_same_run(tmp_path):
    sc = _scenario(tmp_path)
    runs = []
    for _ in range(2):
        sim = sc.build(3)
        sim.run(15.0)
        rec = sim.pgmcc_source_records(sim.scenario_handles.sessions["bulk"]["source"])
        runs.append((rec["acker_time_ns"].tobytes(), rec["fb_time_ns"].tobytes(), rec["cut_window"].tobytes()))
    assert runs[0] == runs[1]


def test_bad_input_names_the_field():
    sim = castlab.Simulator(seed=1)
    sim.add_node("a")
    g = sim.add_group("a")
    with pytest.raises(ValueError, match="^acker_bias:"):
        sim.add_pgmcc_source("a", g, acker_bias=2.0)
    with pytest.raises(ValueError, match="^stop:"):
        sim.add_pgmcc_source("a", g, start=5.0, stop=1.0)
    with pytest.raises(ValueError, match="nonsense"):
        sim.add_pgmcc_receiver("a", g, nonsense=1)
    with pytest.raises(ValueError, match="^agent:"):
        sim.pgmcc_source_records(sim.add_pgmcc_receiver("a", g))


def test_reproduce_quick_writes_data_plot_and_computed_claims(tmp_path):
    out = tmp_path / "pgmcc"
    r = subprocess.run([sys.executable, "-m", "castlab", "reproduce", "pgmcc", "--quick", "--out", str(out)],
                       capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr
    s = json.loads((out / "summary.json").read_text())
    assert s["experiment"] == "pgmcc" and len(s["claims"]) >= 8
    assert all(isinstance(c["holds"], bool) for c in s["claims"])
    assert {c["kind"] for c in s["claims"]} <= {"derived", "variant"}
    for f in ["pgmcc.csv", "pgmcc.png", "pgmcc.svg"]:
        assert (out / f).stat().st_size > 100, f
    from castlab.experiments.pgmcc import READINGS

    assert s["params"]["declared_readings"] == READINGS == {}
    listed = subprocess.run([sys.executable, "-m", "castlab", "list"], capture_output=True, text=True, timeout=60)
    assert "pgmcc" in listed.stdout
