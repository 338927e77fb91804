"""The examples run (with short settings, so this file stays well under a
minute) and write what they say they write."""

import csv
import runpy
import subprocess
import sys
from pathlib import Path

from castlab import Scenario, cli

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
PNG = b"\x89PNG\r\n\x1a\n"


def test_rlm_vs_tcp_tree_runs_three_seeds_and_plots(tmp_path):
    out = tmp_path / "rvt"
    mod = runpy.run_path(str(EXAMPLES / "rlm_vs_tcp_tree.py"))
    res = mod["main"](["--duration", "150", "--seeds", "1-3", "--out", str(out)])
    for png in ("levels.png", "rates.png"):
        data = (out / png).read_bytes()
        assert data.startswith(PNG) and len(data) > 10_000, png
    rows = list(csv.DictReader(open(out / "flows.csv")))
    assert sorted({r["seed"] for r in rows}) == ["1", "2", "3"]
    assert {r["name"] for r in rows} == {"r128", "r256", "r512", "r1M", "tcp"}
    assert len(rows) == 15 == len(res["flows"])
    for seed in (1, 2, 3):
        assert (out / f"seed-{seed}" / "summary.json").is_file()
    # every receiver joined and received something in every seed; TCP moved data
    assert all(int(r["received"]) > 0 for r in rows)
    assert all(float(r["mean_rate_bps"]) > 100e3 for r in rows if r["name"] == "tcp")


def test_rlm_vs_tcp_tree_as_a_script(tmp_path):
    out = tmp_path / "script"
    r = subprocess.run([sys.executable, str(EXAMPLES / "rlm_vs_tcp_tree.py"), "--duration", "40", "--seeds", "1",
                        "--out", str(out)], capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    assert (out / "levels.png").is_file() and "seed 1: tcp" in r.stdout


def test_tree_toml_runs_with_the_command_its_header_gives(tmp_path, capsys):
    text = (EXAMPLES / "tree.toml").read_text()
    assert "castlab scenario run examples/tree.toml --seeds 1-3 --out out/tree" in text
    sc = Scenario.from_toml(EXAMPLES / "tree.toml")
    assert sc.name == "rlm-tree" and sc.seeds == [1, 2, 3] and sc.duration == 300.0
    out = tmp_path / "tree"
    # the header's short form, with --out moved into the test's folder
    argv = ["scenario", "run", str(EXAMPLES / "tree.toml"), "--seeds", "1", "--set", "duration=60s",
            "--set", "links.bottleneck.delay=40ms", "--out", str(out)]
    assert cli.main(argv) == 0
    printed = capsys.readouterr().out
    for name in ("a1", "a2", "b1", "b2_fixed", "ftp"):
        assert name in printed
    d = out / "seed-1"
    for f in ("summary.json", "flows.csv", "levels.csv", "queue_bottleneck_queue.csv", "loss_bottleneck_loss.csv"):
        assert (d / f).is_file(), f
    import json

    s = json.loads((d / "summary.json").read_text())
    assert s["params"]["duration"] == 60.0
    assert s["params"]["links"][0]["delay"] == 0.04
    # the fixed three-layer sink behind 128 kb/s loses what does not fit: 224 kb/s offered
    assert s["metrics"]["b2_fixed.loss"] > 0.3
