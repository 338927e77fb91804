"""TFMCC (RFC 4654) from Python: the registered methods and config, the guide's scenario file
run as written, determinism, bad input, and the tfmcc experiment's quick run."""

import json
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import castlab
from castlab import _native
from castlab.experiments.tfmcc.topology import clr_share

GUIDE = Path(__file__).resolve().parents[2] / "docs" / "guide.md"


def test_defaults_are_rfc_4654s():
    d = _native.config_defaults("tfmcc")
    assert d["initial_rtt"] == 0.5 and d["suppression_g"] == 0.1 and d["round_rtts"] == 6.0
    assert d["receivers_bound"] == 10_000.0 and d["loss_intervals"] == 8 and d["rmax_decay"] == 0.9


def _guide_scenario(tmp_path):
    text = GUIDE.read_text().split("### TFMCC in a scenario file", 1)[1]
    block = re.search(r"```toml\n(.*?)```", text, re.S).group(1)
    f = tmp_path / "tfmcc.toml"
    f.write_text(block)
    return castlab.Scenario.from_toml(str(f))


def test_the_guides_scenario_runs_and_the_lossy_receiver_limits_the_rate(tmp_path):
    sc = _guide_scenario(tmp_path)
    metrics = sc.run(seed=1, out=str(tmp_path / "out"))
    # both receivers got the session; the far one lost more (2 % random loss on its last hop)
    assert metrics["near.received"] > 1000 and metrics["far.received"] > 1000
    assert metrics["far.loss"] > metrics["near.loss"] + 0.01
    sim = sc.build(1)
    sim.run(60.0)
    src = sim.scenario_handles.sessions["video"]["source"]
    rec = sim.tfmcc_sender_records(src)
    # §2: the sender follows the receiver with the worst conditions, the far one, once both
    # have reported (after slowstart)
    assert clr_share(rec, "far", 20.0, 60.0) > 0.75, rec["clr_receiver"]
    far = sim.tfmcc_receiver_status(sim.scenario_handles.receivers["far"])
    near = sim.tfmcc_receiver_status(sim.scenario_handles.receivers["near"])
    assert far["loss_event_rate"] > near["loss_event_rate"] > 0
    assert far["rtt_s"] is not None and 0.048 <= far["rtt_s"] < 0.5
    # the rate the sender keeps is near the far receiver's equation-(1) rate, never far above
    s = 1000
    p, r = far["loss_event_rate"], far["current_rtt_s"]
    x_far = 8 * s / (r * (np.sqrt(2 * p / 3) + 12 * np.sqrt(3 * p / 8) * p * (1 + 32 * p * p)))
    assert sim.tfmcc_sender_status(src)["rate_bps"] <= 1.5 * x_far
    # the sender's rate timeline, reports and rounds are consistent columns
    assert len(rec["rate_time_ns"]) == len(rec["rate_bps"]) and np.all(np.diff(rec["rate_time_ns"].astype(np.int64)) >= 0)
    assert len(rec["fb_time_ns"]) == len(rec["fb_rate_bps"]) == len(rec["fb_from_clr"]) > 10
    assert rec["data_sent"] >= metrics["near.received"]


def test_a_clr_that_leaves_tells_the_sender_and_the_rate_follows_the_other_receiver(tmp_path):
    # The guide's scenario with the lossy "far" receiver, the CLR, leaving at 30 s (its
    # scenario key `leave`).
    block = _guide_scenario(tmp_path) and (tmp_path / "tfmcc.toml").read_text()
    f = tmp_path / "leave.toml"
    f.write_text(block.replace('name = "far"\n', 'name = "far"\nleave = "30s"\n'))
    sim = castlab.Scenario.from_toml(str(f)).build(1)
    sim.run(30.5)
    far_agent = sim.scenario_handles.receivers["far"]
    far = sim.tfmcc_receiver_records(far_agent)
    got = far["received"]
    sim.run(60.0)
    src = sim.scenario_handles.sessions["video"]["source"]
    rec = sim.tfmcc_sender_records(src)
    far = sim.tfmcc_receiver_records(far_agent)
    # §3.3 case 3: the CLR's last report carried receiver_leave, and the sender counted it
    assert far["left_s"] == 30.0 and far["leave_reported"]
    assert rec["clr_leaves"] == 1 and rec["leave_reports"] == 1
    left = rec["fb_time_ns"][rec["fb_receiver"] == list(rec["receivers"]).index("far")].max() / 1e9
    assert 30.0 <= left < 30.5
    # it left the group: nothing more arrived there
    assert far["received"] == got
    # the near receiver is the CLR from shortly after, and the rate it allows is higher
    assert clr_share(rec, "near", 32.0, 60.0) > 0.9, rec["clr_receiver"]
    t, x = rec["rate_time_ns"] / 1e9, rec["rate_bps"]

    def mean_rate(a, b):
        grid = np.linspace(a, b, 300)
        return x[np.searchsorted(t, grid, side="right") - 1].mean()

    assert mean_rate(45.0, 60.0) > mean_rate(15.0, 30.0)


def test_same_seed_same_run(tmp_path):
    sc = _guide_scenario(tmp_path)
    runs = []
    for _ in range(2):
        sim = sc.build(3)
        sim.run(20.0)
        rec = sim.tfmcc_sender_records(sim.scenario_handles.sessions["video"]["source"])
        runs.append((rec["rate_bps"].tobytes(), rec["fb_time_ns"].tobytes()))
    assert runs[0] == runs[1]


def test_bad_input_names_the_field():
    sim = castlab.Simulator(seed=1)
    sim.add_node("a")
    g = sim.add_group("a")
    with pytest.raises(ValueError, match="^suppression_g:"):
        sim.add_tfmcc_sender("a", g, suppression_g=2.0)
    with pytest.raises(ValueError, match="^stop:"):
        sim.add_tfmcc_sender("a", g, start=5.0, stop=1.0)
    with pytest.raises(ValueError, match="nonsense"):
        sim.add_tfmcc_receiver("a", g, nonsense=1)
    with pytest.raises(ValueError, match="^agent:"):
        sim.tfmcc_sender_records(sim.add_tfmcc_receiver("a", g))


def test_reproduce_quick_writes_data_plot_and_computed_claims(tmp_path):
    out = tmp_path / "tfmcc"
    r = subprocess.run([sys.executable, "-m", "castlab", "reproduce", "tfmcc", "--quick", "--out", str(out)],
                       capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr
    s = json.loads((out / "summary.json").read_text())
    assert s["experiment"] == "tfmcc" and len(s["claims"]) >= 8
    assert all(isinstance(c["holds"], bool) for c in s["claims"])
    for f in ["dumbbell.csv", "paths.csv", "star.csv", "rates.csv", "tfmcc.png", "tfmcc.svg"]:
        assert (out / f).stat().st_size > 100, f
    # the readings it takes are the package's one declaration: the receive-rate window, one
    # reading, the RFC as written
    from castlab.experiments.tfmcc import READINGS
    from castlab.experiments.tfmcc.declared import WINDOW_SETTING

    assert s["params"]["declared_readings"] == READINGS == {WINDOW_SETTING: ["k RTTs of the receiver's own R"]}


def test_trap_quick_writes_shares_plot_and_computed_claims(tmp_path):
    out = tmp_path / "tfmcc-trap"
    r = subprocess.run([sys.executable, "-m", "castlab", "reproduce", "tfmcc-trap", "--quick", "--out", str(out)],
                       capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr
    s = json.loads((out / "summary.json").read_text())
    from castlab.experiments.tfmcc.trap import CASES, TCPS

    # per TCP flavour: the trap, its rise, and one cause per case other than the trap's
    assert len(s["claims"]) == len(TCPS) * (2 + len(CASES) - 1)
    assert all(isinstance(c["holds"], bool) and c["kind"] == "variant" for c in s["claims"])
    for f in ["shares.csv", "cases.csv", "trap_series.csv", "tfmcc_trap.png", "tfmcc_trap.svg"]:
        assert (out / f).stat().st_size > 100, f
    import pandas as pd

    shares = pd.read_csv(out / "shares.csv")
    assert set(shares["case"]) == set(CASES) and set(shares["tcp"]) == set(TCPS)
    # every case ran both flows through every window: goodput on both sides
    assert (shares["tfmcc_bps"] > 0).all() and (shares["tcp_bps"] > 0).all()
    series = pd.read_csv(out / "trap_series.csv")
    assert {"sender_rate_bps", "report_p"} <= set(series["series"])


def test_trap_ablation_switches_default_to_the_rfc_and_bad_ones_are_refused():
    d = _native.config_defaults("tfmcc")
    assert d["first_interval"] == "rfc" and d["low_rate_leave_after"] == 120.0  # §5.6, §4.4
    assert not (d["windows_over_rmax"] or d["rate_from_smoothed_rtt"] or d["merge_over_rmax"])
    from castlab.experiments.tfmcc.trap import scenario

    sc = scenario("trap", "newreno", 1.0, 2.0).to_dict()
    sc["sessions"][0]["config"]["first_interval"] = "sometimes"
    with pytest.raises(ValueError, match="first_interval"):
        castlab.Scenario.from_dict(sc).build(1)
