"""A newcomer's first hour: default output folders never mix runs, aggregates read as plain
numbers sorted by value, small samples and quick runs do not pass for verdicts, scenario typos
and unit-less quantities are pointed out, and `castlab plot` draws a store and a scenario run."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def castlab(*args, cwd=None, timeout=300):
    return subprocess.run([sys.executable, "-m", "castlab", *args], capture_output=True, text=True,
                          timeout=timeout, cwd=cwd)


SMALL = """
name = "{name}"
duration = "{duration}"
nodes = ["src", "r", "a", "b"]
[[links]]
name = "bottleneck"
a = "src"
b = "r"
rate = "1Mbps"
delay = "10ms"
queue_limit = 20
[[links]]
a = "r"
b = "a"
rate = "1Mbps"
delay = "5ms"
[[links]]
a = "r"
b = "b"
rate = "256kbps"
delay = "5ms"
[[sessions]]
name = "s"
source = "src"
layers = 4
base_rate = "32kbps"
[[receivers]]
name = "ra"
node = "a"
session = "s"
[[receivers]]
name = "rb"
node = "b"
session = "s"
[[monitors]]
name = "bq"
kind = "queue"
link = "bottleneck"
"""


def small(tmp_path: Path, name: str, duration: str = "20s", **extra) -> Path:
    p = tmp_path / f"{name}.toml"
    p.write_text(SMALL.format(name=name, duration=duration))
    return p


# ---- default output folders


def test_two_reproduces_without_out_get_a_folder_each(tmp_path):
    for name in ("engine-red", "engine-bottleneck"):
        r = castlab("reproduce", name, "--quick", cwd=tmp_path)
        assert r.returncode == 0, r.stderr
    for name in ("engine-red", "engine-bottleneck"):
        s = json.loads((tmp_path / "out" / name / "summary.json").read_text())
        assert s["experiment"] == name
    assert not (tmp_path / "out" / "summary.json").exists()


def test_reproduce_refuses_a_folder_holding_another_experiment(tmp_path):
    out = tmp_path / "shared"
    assert castlab("reproduce", "engine-red", "--quick", "--out", str(out)).returncode == 0
    before = sorted(p.name for p in out.iterdir())
    r = castlab("reproduce", "engine-bottleneck", "--quick", "--out", str(out))
    assert r.returncode == 2
    assert "engine-red" in r.stderr and "another --out" in r.stderr
    assert sorted(p.name for p in out.iterdir()) == before
    # the same experiment again replaces its own files
    assert castlab("reproduce", "engine-red", "--quick", "--out", str(out)).returncode == 0


def test_two_scenario_files_do_not_share_seed_folders(tmp_path):
    a, b = small(tmp_path, "alpha"), small(tmp_path, "beta")
    assert castlab("scenario", "run", str(a), "--seeds", "1", cwd=tmp_path).returncode == 0
    assert castlab("scenario", "run", str(b), "--seeds", "2-3", cwd=tmp_path).returncode == 0
    assert sorted(p.name for p in (tmp_path / "out" / "alpha").glob("seed-*")) == ["seed-1"]
    assert sorted(p.name for p in (tmp_path / "out" / "beta").glob("seed-*")) == ["seed-2", "seed-3"]
    # into one folder by hand: refused, nothing written
    r = castlab("scenario", "run", str(b), "--seeds", "2", "--out", str(tmp_path / "out" / "alpha"))
    assert r.returncode == 2 and "scenario:alpha" in r.stderr
    assert sorted(p.name for p in (tmp_path / "out" / "alpha").glob("seed-*")) == ["seed-1"]
    # the same scenario with other parameters is refused too; with the same ones it adds seeds
    r = castlab("scenario", "run", str(a), "--seeds", "2", "--set", "duration=10s", "--out",
                str(tmp_path / "out" / "alpha"))
    assert r.returncode == 2 and "other parameters" in r.stderr
    assert castlab("scenario", "run", str(a), "--seeds", "2", cwd=tmp_path).returncode == 0
    assert sorted(p.name for p in (tmp_path / "out" / "alpha").glob("seed-*")) == ["seed-1", "seed-2"]
