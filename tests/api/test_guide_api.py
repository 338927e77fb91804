"""docs/guide.md's "Python API in ten minutes" runs as written: its Python blocks, in order, in
one namespace, from a scratch folder; then what they built is checked against what the text
says it shows."""

from __future__ import annotations

import contextlib
import io
import re
from pathlib import Path

import pytest

GUIDE = Path(__file__).resolve().parents[2] / "docs" / "guide.md"


def _section_blocks() -> list[str]:
    text = GUIDE.read_text()
    part = text.split("## Python API in ten minutes", 1)[1].split("\n## ", 1)[0]
    return re.findall(r"```python\n(.*?)```", part, re.S)


@pytest.fixture(scope="module")
def ran(tmp_path_factory):
    import os

    blocks = _section_blocks()
    assert len(blocks) == 4, "a TCP flow, a queue monitor, an RLM receiver, a sweep"
    ns: dict = {}
    cwd = os.getcwd()
    os.chdir(tmp_path_factory.mktemp("guide"))
    out = io.StringIO()
    try:
        with contextlib.redirect_stdout(out):
            for i, b in enumerate(blocks):
                exec(compile(b, f"guide.md block {i + 1}", "exec"), ns)
    finally:
        os.chdir(cwd)
    ns["_printed"] = out.getvalue()
    return ns


def test_the_tcp_flow_moves_data_through_the_bottleneck(ran):
    st = ran["st"]
    assert st["segments_sent"] > 1000 and st["received_bytes"] > 0
    # goodput: the in-order bytes over the 29 s since the flow's start, below the 1.5 Mb/s
    # bottleneck and (one long flow, a 20-packet queue) most of it
    # the simulator was rebuilt by later blocks: read the printed goodput
    line = next(ln for ln in ran["_printed"].splitlines() if ln.endswith("Mb/s"))
    mbps = float(line.split()[0])
    assert mbps == pytest.approx(st["received_bytes"] * 8 / 29.0 / 1e6, rel=1e-9)
    assert 0.7 * 1.5 < mbps <= 1.5


def test_the_queue_series_samples_every_interval(ran):
    s, df = ran["s"], ran["frame"]
    assert len(s["time_ns"]) == 201  # 0 to 20 s every 100 ms, both ends
    assert s["qlen"].max() <= 20 and s["drops"][-1] >= 0
    assert list(df.columns[:2]) == ["time_s", "time_ns"] and "throughput_bps" in df


def test_the_rlm_receiver_climbs_from_level_one_at_its_start(ran):
    mine = ran["mine"]
    assert mine["time_s"].iloc[0] == pytest.approx(5.0) and mine["level"].iloc[0] == 1
    assert mine["level"].max() >= 3
    assert len(ran["rec"]["exp_start_ns"]) > 0


def test_the_sweep_returns_a_row_per_run(ran):
    df = ran["df"]
    assert len(df) == 6 and "rx.loss" in df
    assert sorted(set(df["seed"])) == [1, 2, 3]
    assert set(df["links.bottleneck.delay"]) == {"10ms", "40ms"}


def test_the_goodput_accessor_against_its_definition():
    import castlab

    sim = castlab.Simulator(seed=3)
    for n in ("a", "b"):
        sim.add_node(n)
    sim.add_link("a", "b", 2e6, 0.010)
    tcp = sim.add_tcp_flow("a", "b", start=2.0, transfer_bytes=200_000)
    sim.run(20.0)
    st = sim.tcp_stats(tcp)
    assert st["completed_at"] is not None
    assert sim.tcp_goodput_bps(tcp, start=2.0) == pytest.approx(8 * st["received_bytes"] / (st["completed_at"] - 2.0))
    assert sim.tcp_goodput_bps(tcp, start=2.0, end=10.0) == pytest.approx(8 * st["received_bytes"] / 8.0)
    with pytest.raises(ValueError, match="empty"):
        sim.tcp_goodput_bps(tcp, start=30.0)
