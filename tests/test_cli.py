"""The castlab command: list, demo, and a reproduction writing data, plots and summary.json."""

import json
import subprocess
import sys


def castlab(*args, timeout=300):
    return subprocess.run([sys.executable, "-m", "castlab", *args], capture_output=True, text=True, timeout=timeout)


def test_list_names_the_engine_checks():
    r = castlab("list")
    assert r.returncode == 0
    assert "engine-bottleneck" in r.stdout and "engine-red" in r.stdout


def test_demo_prints_every_receiver():
    r = castlab("run", "--duration", "10")
    assert r.returncode == 0, r.stderr
    for i in range(1, 5):
        assert f"rcv{i}" in r.stdout


def test_reproduce_writes_data_plot_and_computed_claims(tmp_path):
    r = castlab("reproduce", "engine-bottleneck", "--quick", "--out", str(tmp_path), "--seed", "4", "--strict")
    assert r.returncode == 0, r.stderr
    s = json.loads((tmp_path / "summary.json").read_text())
    assert {"experiment", "paper", "figure", "seed", "params", "wall_s", "claims"} <= set(s)
    assert s["experiment"] == "engine-bottleneck" and s["seed"] == 4
    for c in s["claims"]:
        assert {"id", "statement", "paper_value", "ours", "unit", "tolerance", "holds"} <= set(c)
        assert isinstance(c["holds"], bool)
    assert (tmp_path / "bottleneck.png").stat().st_size > 1000
    assert (tmp_path / "bottleneck.csv").exists()


def test_unknown_experiment_is_a_clear_error(tmp_path):
    r = castlab("reproduce", "no-such-figure", "--out", str(tmp_path))
    assert r.returncode == 2 and "castlab list" in r.stderr
