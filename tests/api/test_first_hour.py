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

ROOT = Path(__file__).resolve().parents[2]


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


def test_two_reproduces_without_out_get_a_folder_each(tmp_path, castlab_cli):
    for name in ("engine-red", "engine-bottleneck"):
        r = castlab_cli("reproduce", name, "--quick", cwd=tmp_path)
        assert r.returncode == 0, r.stderr
    for name in ("engine-red", "engine-bottleneck"):
        s = json.loads((tmp_path / "out" / name / "summary.json").read_text())
        assert s["experiment"] == name
    assert not (tmp_path / "out" / "summary.json").exists()


def test_reproduce_refuses_a_folder_holding_another_experiment(tmp_path, castlab_cli):
    out = tmp_path / "shared"
    out.mkdir()  # what `reproduce engine-red --out shared` leaves (the check reads summary.json)
    (out / "summary.json").write_text(json.dumps({"experiment": "engine-red", "claims": []}))
    (out / "red.png").write_bytes(b"png")
    before = sorted(p.name for p in out.iterdir())
    r = castlab_cli("reproduce", "engine-bottleneck", "--quick", "--out", str(out))
    assert r.returncode == 2
    assert "engine-red" in r.stderr and "another --out" in r.stderr
    assert sorted(p.name for p in out.iterdir()) == before
    # the same experiment again replaces its own files
    assert castlab_cli("reproduce", "engine-red", "--quick", "--out", str(out)).returncode == 0


def test_two_scenario_files_do_not_share_seed_folders(tmp_path, castlab_cli):
    a, b = small(tmp_path, "alpha"), small(tmp_path, "beta")
    assert castlab_cli("scenario", "run", str(a), "--seeds", "1", cwd=tmp_path).returncode == 0
    assert castlab_cli("scenario", "run", str(b), "--seeds", "2-3", cwd=tmp_path).returncode == 0
    assert sorted(p.name for p in (tmp_path / "out" / "alpha").glob("seed-*")) == ["seed-1"]
    assert sorted(p.name for p in (tmp_path / "out" / "beta").glob("seed-*")) == ["seed-2", "seed-3"]
    # into one folder by hand: refused, nothing written
    r = castlab_cli("scenario", "run", str(b), "--seeds", "2", "--out", str(tmp_path / "out" / "alpha"))
    assert r.returncode == 2 and "scenario:alpha" in r.stderr
    assert sorted(p.name for p in (tmp_path / "out" / "alpha").glob("seed-*")) == ["seed-1"]
    # the same scenario with other parameters is refused too; with the same ones it adds seeds
    r = castlab_cli("scenario", "run", str(a), "--seeds", "2", "--set", "duration=10s", "--out",
                str(tmp_path / "out" / "alpha"))
    assert r.returncode == 2 and "other parameters" in r.stderr
    assert castlab_cli("scenario", "run", str(a), "--seeds", "2", cwd=tmp_path).returncode == 0
    assert sorted(p.name for p in (tmp_path / "out" / "alpha").glob("seed-*")) == ["seed-1", "seed-2"]


# ---- aggregates: plain numbers, numeric order, short names


def _sweep_frame():
    import pandas as pd

    rows = []
    for delay, base in (("160ms", 0.3), ("10ms", 0.01), ("40ms", 0.05)):
        for seed, d in zip((1, 2, 3), (-0.009, 0.0, 0.009)):
            rows.append({"target": "t.toml", "seed": seed, "status": "ok", "links.bottleneck.delay": delay,
                         "rx.loss": base + d, "rx.mean_rate_bps": 1.4e6 + 1e4 * seed, "total.loss": base})
    df = pd.DataFrame(rows)
    df.attrs.update(params=["links.bottleneck.delay"], metrics=["rx.loss", "rx.mean_rate_bps", "total.loss"])
    return df


def test_aggregate_orders_grid_values_by_magnitude_and_reads_short_names():
    from castlab.study import aggregate

    agg = aggregate(_sweep_frame(), by=["delay"], metrics=["loss"])
    assert list(dict.fromkeys(agg["links.bottleneck.delay"])) == ["10ms", "40ms", "160ms"]
    assert set(agg["metric"]) == {"rx.loss", "total.loss"}
    with pytest.raises(ValueError) as e:
        aggregate(_sweep_frame(), by=["dealy"])
    assert "links.bottleneck.delay" in str(e.value)
    with pytest.raises(ValueError) as e:
        aggregate(_sweep_frame(), metrics=["los"])
    assert "rx.loss" in str(e.value) and "rx.mean_rate_bps" in str(e.value)


def test_value_sort_key_reads_units():
    from castlab.study.results import value_sort_key

    assert sorted(["160ms", "1s", "10ms", "40ms"], key=value_sort_key) == ["10ms", "40ms", "160ms", "1s"]
    assert sorted(["10Mbps", "1.5Mbps", "500kbps"], key=value_sort_key) == ["500kbps", "1.5Mbps", "10Mbps"]
    assert sorted([10, 2, 160], key=value_sort_key) == [2, 10, 160]


def test_aggregate_table_prints_plain_numbers():
    from castlab.study import aggregate
    from castlab.study.results import format_aggregate, plain

    assert plain(0.0042513) == "0.004251" and plain(1413000.0) == "1413000" and plain(12.5) == "12.5"
    text = format_aggregate(aggregate(_sweep_frame()))
    assert "e-0" not in text and "e+0" not in text
    head = text.splitlines()[0]
    assert head.index("delay=10ms") < head.index("delay=40ms") < head.index("delay=160ms")
    assert len(text.splitlines()) == 1 + 3 + 1  # header, one row per metric, the note


def test_cli_results_aggregate_by_the_guides_short_names(tmp_path, capsys):
    from castlab import cli

    sc = small(tmp_path, "grid", duration="10s")
    assert cli.main(["sweep", str(sc), "--grid", "links.bottleneck.delay=160ms,10ms,40ms", "--seeds", "1",
                     "--store", str(tmp_path / "st"), "--jobs", "1", "--no-progress"]) == 0
    capsys.readouterr()
    assert cli.main(["results", str(tmp_path / "st"), "--aggregate", "--by", "delay", "--metrics", "loss"]) == 0
    text = capsys.readouterr().out
    assert text.index("delay=10ms") < text.index("delay=40ms") < text.index("delay=160ms")
    assert "ra.loss" in text and "total.loss" in text and "e-0" not in text
    assert cli.main(["results", str(tmp_path / "st"), "--aggregate", "--by", "latency"]) == 2
    assert "links.bottleneck.delay" in capsys.readouterr().err


# ---- small samples


def test_aggregate_of_one_run_has_no_interval_and_nonnegative_ones_stay_nonnegative():
    from castlab.study import aggregate

    df = _sweep_frame()
    one = aggregate(df[df["seed"] == 1], metrics=["rx.loss"])
    assert one["n"].tolist() == [1, 1, 1] and one["lo"].isna().all() and one["hi"].isna().all()
    # loss 0.001, 0.01, 0.019 over three seeds: the t interval's lower half crosses 0, loss cannot
    agg = aggregate(df, metrics=["rx.loss"]).set_index("links.bottleneck.delay")
    assert agg.loc["10ms", "lo"] == 0.0 and agg.loc["10ms", "hi"] > 0.01


def test_t_interval_clips_a_nonnegative_quantity_and_says_so():
    from castlab.stats import describe_interval, t_interval

    mean, lo, hi = t_interval([0.0, 0.01, 0.0], nonnegative=True)
    assert lo == 0.0 and hi > mean > 0
    assert t_interval([0.0, 0.01, 0.0])[1] < 0  # the plain interval does cross 0
    assert "clipped at 0" in describe_interval([0.0, 0.01, 0.0], nonnegative=True)
    assert describe_interval([0.00425]) == "1 seed: no interval"


# ---- quick runs and short examples


def test_a_quick_run_is_marked_not_a_verdict(tmp_path, castlab_cli):
    r = castlab_cli("reproduce", "engine-red", "--quick", "--out", str(tmp_path / "q"))
    assert r.returncode == 0, r.stderr
    s = json.loads((tmp_path / "q" / "summary.json").read_text())
    assert s["quick"] is True and s["claims"]
    assert all(c["verdict"] == "quick run: not a verdict" for c in s["claims"])
    lines = r.stdout.splitlines()
    assert lines and not any(line.startswith(("  ok", "  FAIL")) for line in lines)
    assert "not a verdict" in r.stdout and "not a verdict" in r.stderr
    assert max(len(line) for line in lines) <= 100


def test_a_full_run_summary_is_not_marked_quick(tmp_path):
    from castlab.experiments import REGISTRY
    from castlab.experiments.common import Claim, Result, write_summary

    c = Claim("c", "a statement", 1.0, 1.0, "s", "exact", True, kind="sanity")
    s = write_summary(tmp_path, REGISTRY["engine-red"], 1, Result({}, [c]), 0.1)
    assert s["quick"] is False and s["claims"][0]["verdict"] == "holds"


def test_rlm_vs_tcp_tree_short_run_starts_every_receiver(tmp_path):
    out = tmp_path / "short"
    r = subprocess.run([sys.executable, str(ROOT / "examples" / "rlm_vs_tcp_tree.py"), "--duration", "60",
                        "--seeds", "1", "--out", str(out)], capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr
    assert "nan" not in r.stdout and "not started" not in r.stdout
    assert "shorter than 240 s" in r.stdout  # the scaled start window is said
    import csv

    levels = list(csv.DictReader(open(out / "seed-1" / "levels.csv")))
    assert {"r128", "r256", "r512", "r1M"} <= {row["name"] for row in levels}  # no empty panel
    r = subprocess.run([sys.executable, str(ROOT / "examples" / "rlm_vs_tcp_tree.py"), "--duration", "5",
                        "--out", str(tmp_path / "tiny")], capture_output=True, text=True, timeout=60)
    assert r.returncode == 2 and "at least 20 s" in r.stderr


# ---- scenario typos and unit-less quantities


def test_a_key_typo_suggests_the_key(tmp_path):
    from castlab.scenario import Scenario, ScenarioError

    p = small(tmp_path, "typo")
    p.write_text(p.read_text().replace("queue_limit = 20", "queue_limt = 20"))
    with pytest.raises(ScenarioError) as e:
        Scenario.from_toml(p)
    msg = str(e.value)
    assert "'links.bottleneck.queue_limt'" in msg and "did you mean 'queue_limit'?" in msg
    p.write_text(p.read_text().replace("queue_limt = 20", "zzz = 20"))
    with pytest.raises(ScenarioError) as e:
        Scenario.from_toml(p)
    assert "did you mean" not in str(e.value)  # nothing close: no guess


def test_a_unitless_time_or_rate_in_a_file_warns(tmp_path):
    import warnings

    from castlab.scenario import BareNumberWarning, Scenario

    p = small(tmp_path, "bare")
    p.write_text(p.read_text().replace('delay = "10ms"', 'delay = "5"').replace('rate = "256kbps"', "rate = 256000"))
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        sc = Scenario.from_toml(p, strict=False)
    msgs = [str(x.message) for x in w if issubclass(x.category, BareNumberWarning)]
    assert any("'links.bottleneck.delay'" in m and "no unit" in m and "5 s" in m for m in msgs), msgs
    assert any("'links.r-b.rate'" in m and "bit/s" in m for m in msgs), msgs
    assert sc.to_dict()["links"][0]["delay"] == 5.0  # still read as SI: a warning, not a change
    # with units, and in code (a dict in SI), nothing is said
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        Scenario.from_toml(small(tmp_path, "units"))
        Scenario.from_dict({**Scenario.from_toml(small(tmp_path, "units2")).to_dict()})
    assert not [x for x in w if issubclass(x.category, BareNumberWarning)]


# ---- reproduce --all without the real network


def _fake_all(monkeypatch, tmp_path, reason):
    from castlab import cli, experiments
    from castlab.experiments.common import Experiment, Result

    ran = []

    def make(name):
        def run(out, seed, quick=False):
            ran.append(name)
            return Result({}, [])
        return Experiment(name, "paper", "fig", "fake", run)

    monkeypatch.setattr(experiments, "REGISTRY", {n: make(n) for n in ("engine-x", "net-rlm", "net-vs-sim")})
    monkeypatch.setattr(cli, "net_unavailable", lambda: reason)
    return cli, ran


def test_reproduce_all_no_net_leaves_the_testbed_experiments_out(tmp_path, monkeypatch, capsys):
    cli, ran = _fake_all(monkeypatch, tmp_path, None)
    assert cli.main(["reproduce", "--all", "--no-net", "--out", str(tmp_path / "a")]) == 0
    assert ran == ["engine-x"] and "--no-net" in capsys.readouterr().err
    assert not (tmp_path / "a" / "net-rlm").exists()


def test_reproduce_all_without_root_skips_them_with_the_reason(tmp_path, monkeypatch, capsys):
    cli, ran = _fake_all(monkeypatch, tmp_path, "needs root (network namespaces, tc, multicast routing)")
    assert cli.main(["reproduce", "--all", "--out", str(tmp_path / "b")]) == 0
    err = capsys.readouterr().err
    assert ran == ["engine-x"] and "net-rlm, net-vs-sim" in err and "needs root" in err


# ---- castlab plot


def _png_size(path: Path) -> tuple[int, int]:
    data = path.read_bytes()
    assert data.startswith(b"\x89PNG\r\n\x1a\n")
    return int.from_bytes(data[16:20], "big"), int.from_bytes(data[20:24], "big")


def _inked(path: Path) -> float:
    """The fraction of pixels that are not background white: a blank figure has almost none."""
    import matplotlib.image as mpimg
    import numpy as np

    img = mpimg.imread(path)[..., :3]
    return float((img.min(axis=2) < 0.9).mean())


def test_plot_a_store_draws_a_metric_against_the_grid(tmp_path, capsys):
    from castlab import cli

    sc = small(tmp_path, "grid", duration="30s")
    assert cli.main(["sweep", str(sc), "--grid", "links.bottleneck.delay=160ms,10ms,40ms", "--seeds", "1-2",
                     "--store", str(tmp_path / "st"), "--jobs", "1", "--no-progress"]) == 0
    assert cli.main(["plot", str(tmp_path / "st"), "--metric", "ra.loss,total.loss"]) == 0
    png = tmp_path / "st" / "plot.png"
    w, h = _png_size(png)
    assert w > 400 and h > 400 and _inked(png) > 0.01
    assert cli.main(["plot", str(tmp_path / "st"), "--metric", "nosuch"]) == 2
    assert "ra.loss" in capsys.readouterr().err  # the error lists the metrics


def test_plot_a_scenario_run_draws_levels_and_queues(tmp_path, capsys):
    from castlab import cli

    sc = small(tmp_path, "levels", duration="30s")
    assert cli.main(["scenario", "run", str(sc), "--seeds", "2", "--out", str(tmp_path / "run")]) == 0
    assert cli.main(["plot", str(tmp_path / "run"), "--out", str(tmp_path / "run.png")]) == 0
    w, h = _png_size(tmp_path / "run.png")
    assert w > 400 and h > 400 and _inked(tmp_path / "run.png") > 0.01
    assert cli.main(["plot", str(tmp_path)]) == 2
    assert "no scenario run here" in capsys.readouterr().err


# ---- cosmetics


def test_list_columns_line_up(castlab_cli):
    from castlab.experiments import REGISTRY

    r = castlab_cli("list")
    assert r.returncode == 0
    lines = r.stdout.splitlines()
    assert len(lines) == len(REGISTRY)
    starts = {line.index(e.paper, len(name)) for line, (name, e) in zip(lines, REGISTRY.items())}
    ends = {line.index(e.figure + ":", line.index(e.paper) + len(e.paper))
            for line, (name, e) in zip(lines, REGISTRY.items())}
    assert len(starts) == 1 and len(ends) == 1, (starts, ends)


def test_make_build_quiets_the_pip_that_maturin_runs():
    text = (ROOT / "Makefile").read_text()
    build = text.split("\nbuild:", 1)[1].split("\n\n", 1)[0]
    assert "PIP_QUIET=1" in build and "--quiet" in build
