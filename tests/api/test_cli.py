"""The castlab command: list, demo, and a reproduction writing data, plots and summary.json."""

import json


def test_list_names_the_engine_checks(castlab_cli):
    r = castlab_cli("list")
    assert r.returncode == 0
    assert "engine-bottleneck" in r.stdout and "engine-red" in r.stdout


def test_demo_prints_every_receiver(castlab_cli):
    r = castlab_cli("run", "--duration", "10")
    assert r.returncode == 0, r.stderr
    for i in range(1, 5):
        assert f"rcv{i}" in r.stdout


def test_reproduce_writes_data_plot_and_computed_claims(tmp_path, castlab_cli):
    r = castlab_cli("reproduce", "engine-bottleneck", "--quick", "--out", str(tmp_path), "--seed", "4", "--strict")
    assert r.returncode == 0, r.stderr
    s = json.loads((tmp_path / "summary.json").read_text())
    assert {"experiment", "paper", "figure", "seed", "params", "wall_s", "claims"} <= set(s)
    assert s["experiment"] == "engine-bottleneck" and s["seed"] == 4
    for c in s["claims"]:
        assert {"id", "statement", "paper_value", "ours", "unit", "tolerance", "holds"} <= set(c)
        assert isinstance(c["holds"], bool)
    assert (tmp_path / "bottleneck.png").stat().st_size > 1000
    assert (tmp_path / "bottleneck.csv").exists()


def test_unknown_experiment_is_a_clear_error(tmp_path, castlab_cli):
    r = castlab_cli("reproduce", "no-such-figure", "--out", str(tmp_path))
    assert r.returncode == 2 and "castlab list" in r.stderr


def test_an_interrupted_reproduce_leaves_the_output_folder_as_it_was(tmp_path):
    """castlab reproduce writes into a temporary sibling and moves the files in only when the
    run is complete: SIGINT midway leaves no partial files (it used to leave seed-2 CSVs beside
    a seed-1 summary.json)."""
    import os
    import signal
    import subprocess
    import sys
    import time

    out = tmp_path / "out"
    out.mkdir()
    (out / "mine.txt").write_text("keep")
    p = subprocess.Popen([sys.executable, "-m", "castlab", "reproduce", "rlm-fig9", "--out", str(out)],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    deadline = time.time() + 60
    partial = []
    while time.time() < deadline and not partial:  # wait until the run is writing its files
        partial = [q for q in tmp_path.iterdir() if q.name.startswith(".out.partial-") and any(q.iterdir())]
        time.sleep(0.05)
    assert partial, "the run never started writing"
    p.send_signal(signal.SIGINT)
    p.wait(timeout=60)
    assert sorted(q.name for q in out.iterdir()) == ["mine.txt"]
    assert not [q for q in tmp_path.iterdir() if q.name.startswith(".out.")]
