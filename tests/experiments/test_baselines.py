"""The baselines comparison: its set-ups as built, the readings of one run
against what the links allow, and the quick form through the command line."""

from __future__ import annotations

import json
import subprocess
import sys

import pandas as pd
import pytest

from castlab.experiments.baselines import figures, topology
from castlab.simulator import PHASE_ENV


def test_tree_has_four_last_hops_each_shared_with_one_tcp_flow_of_the_flavour(monkeypatch):
    monkeypatch.delenv(PHASE_ENV, raising=False)
    d = topology.tree("webrc", "reno", 1, 30.0).to_dict()
    last = {l["b"]: l for l in d["links"] if l["a"] == "hub" and l["b"].startswith("rx")}
    assert [last[f"rx{i}"]["rate"] for i in range(4)] == [0.5e6, 1e6, 2e6, 4e6]
    assert [last[f"rx{i}"]["delay"] for i in range(4)] == [0.040, 0.020, 0.010, 0.005]
    # one bandwidth-delay product of 1500-byte packets at the base RTT, at least 10: the
    # products are 0.5 Mb/s x 88 ms = 5500 B, 1 Mb/s x 48 ms = 6000 B, 2 Mb/s x 28 ms = 7000 B and
    # 4 Mb/s x 18 ms = 9000 B, 4 to 6 packets: every hop gets the floor
    assert [last[f"rx{i}"]["queue_limit"] for i in range(4)] == [10, 10, 10, 10]
    assert [(t["src"], t["dst"]) for t in d["tcp"]] == [(f"ts{i}", f"rx{i}") for i in range(4)]
    # kernel reno as the twins run it: the sack variant with Linux's 1448-byte segments
    assert {t["variant"] for t in d["tcp"]} == {"sack"} and {t["config"]["mss_bytes"] for t in d["tcp"]} == {1448}
    assert all(0.0 <= t["start"] <= 5.0 for t in d["tcp"])
    assert "phase_overhead" not in d["simulator"]


def test_dumbbell_reuses_tfmccs_and_runs_the_flavours_tcp():
    d = topology.dumbbell("rlm", 4, "cubic", 2, 30.0).to_dict()
    bn = next(l for l in d["links"] if l["name"] == "bottleneck")
    assert (bn["rate"], bn["delay"], bn["queue_limit"]) == (4e6, 0.020, 50)
    assert len(d["receivers"]) == 4 and {r["protocol"] for r in d["receivers"]} == {"rlm"}
    assert [t["variant"] for t in d["tcp"]] == ["cubic"] * 4
    # RLM §4's layers: 32·2^m kb/s, m = 0..5
    assert d["sessions"][0]["rates"] == [32e3, 64e3, 128e3, 256e3, 512e3, 1024e3]


def test_each_set_up_gets_its_own_phase_overhead(monkeypatch):
    # the rule's overhead: a 1500-byte segment at the slowest bottleneck, 4 Mb/s: 3 ms; 0.5 Mb/s: 24 ms
    monkeypatch.setenv(PHASE_ENV, repr(0.003))
    db = topology.dumbbell("tfmcc", 1, "bbr", 1, 10.0).to_dict()
    assert db["simulator"]["phase_overhead"] == pytest.approx(0.003)
    assert topology.tree("tfmcc", "bbr", 1, 10.0).to_dict()["simulator"]["phase_overhead"] == pytest.approx(0.024)
    monkeypatch.setenv(PHASE_ENV, repr(0.01))  # an overhead asked for explicitly is taken as given
    assert topology.tree("tfmcc", "bbr", 1, 10.0).to_dict()["simulator"]["phase_overhead"] == pytest.approx(0.01)


def test_one_tree_run_stays_within_each_last_hop_and_is_a_function_of_its_seed(monkeypatch):
    monkeypatch.delenv(PHASE_ENV, raising=False)
    row = figures._measure(1, "flid", "tree", 4, "cubic", 40.0, 10.0)
    for i, cap in enumerate(topology.TREE["last_hop_bps"]):
        # the receiver's goodput and its TCP flow's share the hop: together under its rate
        # (goodput counts payload of packets that crossed it, so a little under)
        assert 0 < row[f"rx{i}_bps"] and 0 < row[f"tcp{i}_bps"], row
        assert row[f"rx{i}_bps"] + row[f"tcp{i}_bps"] <= cap * 1.01, (i, row)
    assert row["spread"] == pytest.approx(max(row[f"rx{i}_bps"] for i in range(4)) /
                                          min(row[f"rx{i}_bps"] for i in range(4)))
    s = pd.DataFrame(row["series"])
    assert list(s["second"]) == list(range(40))
    # the 1 s bins after the warm-up average to the run's goodput
    assert s["rx3_bps"][10:].mean() == pytest.approx(row["rx3_bps"])
    again = figures._measure(1, "flid", "tree", 4, "cubic", 40.0, 10.0)
    assert {k: v for k, v in again.items() if k != "series"} == {k: v for k, v in row.items() if k != "series"}


def test_single_rate_receivers_on_the_dumbbell_get_one_rate_and_share_the_bottleneck(monkeypatch):
    monkeypatch.delenv(PHASE_ENV, raising=False)
    row = figures._measure(1, "pgmcc", "dumbbell", 1, "reno", 40.0, 10.0)
    assert row["jain"] > 0.99, row
    assert row["scheme_bps"] + row["tcp_bps"] <= 4e6 * 1.01, row
    assert row["share"] == pytest.approx(row["scheme_bps"] / row["tcp_bps"])


def test_reproduce_quick_writes_tables_plot_and_derived_claims(tmp_path):
    out = tmp_path / "baselines"
    r = subprocess.run([sys.executable, "-m", "castlab", "reproduce", "baselines", "--quick", "--out", str(out)],
                       capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr
    s = json.loads((out / "summary.json").read_text())
    # per scheme against reno: the K = 1 dumbbell share and two tree claims
    assert s["experiment"] == "baselines" and len(s["claims"]) == 6 * 3
    assert {c["kind"] for c in s["claims"]} == {"derived"}
    assert s["phase_overhead_s"] == pytest.approx(0.003)
    runs = pd.read_csv(out / "baselines.csv")
    assert len(runs) == 12 and set(runs["scheme"]) == set(topology.SCHEMES)
    rates = pd.read_csv(out / "rates.csv")
    assert len(rates) == 12 * 60
    for f in ["baselines.png", "baselines.svg"]:
        assert (out / f).stat().st_size > 100, f
    listed = subprocess.run([sys.executable, "-m", "castlab", "list"], capture_output=True, text=True, timeout=60)
    assert "baselines" in listed.stdout and "net-baselines" in listed.stdout
