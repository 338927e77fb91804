"""Failures in the simulator from Python and from scenario files: links and nodes that go down
and come back (ns-2's ``rtmodel-at``), with routes recomputed, trees re-grafted, what a failed
link held counted, and bad events refused before the run."""

from __future__ import annotations

import contextlib
import io
import re
from pathlib import Path

import pytest

import castlab
from castlab import Scenario
from castlab.scenario import ScenarioError


def diamond(seed: int = 1) -> castlab.Simulator:
    """src–r1–dst is the short path; src–r2–dst (cost 2 on r2–dst) the detour."""
    sim = castlab.Simulator(seed=seed)
    for n in ("src", "r1", "r2", "dst"):
        sim.add_node(n)
    sim.add_link("src", "r1", 10e6, 0.005)
    sim.add_link("r1", "dst", 2e6, 0.005, queue_limit_pkts=30)
    sim.add_link("src", "r2", 10e6, 0.005)
    sim.add_link("r2", "dst", 2e6, 0.005, cost=2)
    return sim


def test_link_down_and_up_from_python_reroute_and_count_what_the_link_held():
    sim = diamond()
    sim.add_sink("dst", port=9)
    # 2.5 Mb/s into a 2 Mb/s link: its queue is full when it fails
    sim.add_cbr("src", "dst", 9, 2.5e6)
    sim.link_down(2.0, "r1", "dst")
    sim.link_up(4.0, "dst", "r1")  # either order of the nodes names the link
    sim.run(1.0)
    assert sim.route("src", "dst") == ["src", "r1", "dst"]
    r1_dst = sim.channel("r1", "dst")
    sim.run(3.0)
    assert sim.route("src", "dst") == ["src", "r2", "dst"]
    st = sim.channel_stats(r1_dst)
    assert st["up"] is False and st["queue_len"] == 0
    # the full queue (30), the packet being serialised, the ones on the wire
    assert 31 <= st["drops_link_down"] <= 31 + 3
    sim.run(6.0)
    assert sim.route("src", "dst") == ["src", "r1", "dst"] and sim.channel_stats(r1_dst)["up"]
    c = sim.conservation()
    assert c["holds"] and c["link_down"] == st["drops_link_down"]


def test_node_failure_cuts_every_link_of_the_node_until_it_returns():
    sim = diamond()
    sim.node_down(1.0, "r1")
    sim.node_down(1.5, "r2")
    sim.node_up(2.0, "r1")
    sim.run(1.2)
    assert not sim.node_is_up("r1") and sim.route("src", "dst") == ["src", "r2", "dst"]
    sim.run(1.7)
    assert sim.route("src", "dst") is None
    sim.run(2.5)
    assert sim.node_is_up("r1") and not sim.node_is_up("r2")
    assert sim.route("src", "dst") == ["src", "r1", "dst"]


@pytest.mark.parametrize(
    "call, message",
    [
        (lambda s: s.link_down(1.0, "r1", "nowhere"), 'b: no node named "nowhere"'),
        (lambda s: s.link_down(1.0, "src", "dst"), "b: is not linked from a"),
        (lambda s: s.node_down(1.0, "ghost"), 'node: no node named "ghost"'),
        (lambda s: s.node_up(float("nan"), "r1"), "at: must be a finite number"),
        (lambda s: s.link_up(-2.0, "r1", "dst"), "at: must be a finite number"),
        (lambda s: s.link_down(0.5, "r1", "dst"), "at: 0.5 s is in the past"),
    ],
)
def test_bad_failure_calls_are_refused_and_change_nothing(call, message):
    sim = diamond()
    sim.run(1.0)
    with pytest.raises(ValueError, match=message):
        call(sim)
    sim.run(2.0)
    assert sim.route("src", "dst") == ["src", "r1", "dst"]


SCENARIO = """
name = "failover"
duration = "8s"
nodes = ["src", "r1", "r2", "dst"]

[[links]]
a = "src"
b = "r1"
rate = "10Mbps"
delay = "5ms"

[[links]]
name = "primary"
a = "r1"
b = "dst"
rate = "2Mbps"
delay = "5ms"

[[links]]
a = "src"
b = "r2"
rate = "10Mbps"
delay = "5ms"

[[links]]
name = "backup"
a = "r2"
b = "dst"
rate = "2Mbps"
delay = "5ms"
cost = 2

[[sessions]]
name = "video"
source = "src"
rates = ["200kbps", "200kbps"]

[[receivers]]
name = "fixed"
node = "dst"
session = "video"
protocol = "sink"
level = 2

[[tcp]]
name = "ftp"
src = "src"
dst = "dst"

[[monitors]]
link = "backup"
interval = "100ms"

[[events]]
at = "2s"
link = "primary"
state = "down"

[[events]]
at = "3s"
node = "r2"
state = "down"

[[events]]
at = "4s"
node = "r2"
state = "up"

[[events]]
at = "5s"
link = "primary"
state = "up"
"""


def write(tmp_path, text: str):
    p = tmp_path / "failover.toml"
    p.write_text(text)
    return p


def test_scenario_events_run_and_a_run_is_a_pure_function_of_scenario_and_seed(tmp_path):
    sc = Scenario.from_toml(write(tmp_path, SCENARIO))
    assert [(e["name"], e["at"], e.get("link", e.get("node")), e["state"]) for e in sc.to_dict()["events"]] == [
        ("event1", 2.0, "primary", "down"), ("event2", 3.0, "r2", "down"),
        ("event3", 4.0, "r2", "up"), ("event4", 5.0, "primary", "up")]
    sim = sc.build(seed=4)
    sim.run(sc.duration)
    h = sim.scenario_handles
    backup = sim.channel_series(h.channels["backup"][0])  # r2 → dst
    t, b = backup["time_ns"] / 1e9, backup["bytes"]
    # the backup carries traffic only while the primary is down and r2 is up: [2, 3) and
    # [4, 5) s (a sample at t counts the bytes of the 100 ms before it)
    moved = [t[i] for i in range(1, len(t)) if b[i] > b[i - 1]]
    assert all(2.0 < x <= 3.1 or 4.0 < x <= 5.1 for x in moved), moved
    assert any(x < 3.1 for x in moved) and any(x > 4.0 for x in moved)
    c = sim.conservation()
    assert c["holds"] and c["link_down"] > 0
    rows = {r["name"]: r for r in sc.flow_table(sim)}
    assert rows["fixed"]["received"] > 0 and rows["ftp"]["received"] > 0
    assert Scenario.from_dict(sc.to_dict()).to_dict() == sc.to_dict()
    # the same scenario and seed twice: the same run, to the last counter
    again = sc.build(seed=4)
    again.run(sc.duration)
    assert repr(sc.flow_table(again)) == repr(sc.flow_table(sim))  # repr: nan == nan
    assert again.conservation() == c and again.engine_stats() == sim.engine_stats()


def test_a_scenario_without_events_keeps_its_canonical_form():
    d = Scenario.from_dict({"duration": "1s", "nodes": ["a", "b"],
                            "links": [{"a": "a", "b": "b", "rate": "1Mbps", "delay": "1ms"}]}).to_dict()
    assert "events" not in d


@pytest.mark.parametrize(
    "event, message",
    [
        ('at = "2s"\nlink = "primray"\nstate = "down"', r"'events\.event1\.link' \(line \d+\): no link named "
                                                       r"'primray' did you mean 'primary'\?"),
        ('at = "2s"\nnode = "r9"\nstate = "down"', r"'events\.event1\.node' \(line \d+\): no node named 'r9'"),
        ('at = "9s"\nlink = "primary"\nstate = "down"', r"'events\.event1\.at' \(line \d+\): 9 s is after the end "
                                                        r"of the run \(duration 8 s\)"),
        ('at = "-1s"\nlink = "primary"\nstate = "down"', r"'events\.event1\.at'"),
        ('at = "2s"\nlink = "primary"\nstate = "off"', r"'events\.event1\.state' \(line \d+\): a state is "
                                                       r"\"down\" or \"up\", got 'off'"),
        ('at = "2s"\nlink = "primary"\nnode = "r1"\nstate = "down"', r"either a link .* or a node"),
        ('at = "2s"\nstate = "down"', r"either a link .* or a node"),
        ('link = "primary"\nstate = "down"', r"missing required key 'at'"),
        ('at = "2s"\nlink = "primary"\nstate = "down"\nwhen = 3', r"'events\.event1\.when' \(line \d+\): "
                                                                  r"unknown key"),
    ],
)
def test_bad_events_are_clear_errors_before_the_run(tmp_path, event, message):
    text = SCENARIO.split("[[events]]")[0] + "[[events]]\n" + event + "\n"
    with pytest.raises(ScenarioError, match=message):
        Scenario.from_toml(write(tmp_path, text))


def test_an_event_on_one_of_two_parallel_links_is_refused(tmp_path):
    text = SCENARIO.replace('name = "backup"\na = "r2"\nb = "dst"', 'name = "backup"\na = "r1"\nb = "dst"')
    with pytest.raises(ScenarioError, match="links 'primary' and 'backup' join the same two nodes"):
        Scenario.from_toml(write(tmp_path, text))


def test_events_take_overrides_by_name(tmp_path):
    sc = Scenario.from_toml(write(tmp_path, SCENARIO)).with_params({"events.event4.at": "6s"})
    assert sc.to_dict()["events"][3]["at"] == 6.0
    with pytest.raises(ScenarioError, match="after the end of the run"):
        sc.with_params({"events.event1.at": "20s"})


# ----------------------------------------------------------------------------- the guide's example

GUIDE = Path(__file__).resolve().parents[2] / "docs" / "guide.md"


def _guide_blocks(lang: str) -> list[str]:
    part = GUIDE.read_text().split("### Failures in the simulator", 1)[1].split("\n## ", 1)[0]
    return re.findall(rf"```{lang}\n(.*?)```", part, re.S)


def test_the_guides_failover_scenario_does_what_the_guide_says(tmp_path):
    (toml,) = _guide_blocks("toml")
    sc = Scenario.from_toml(write(tmp_path, toml))
    sim = sc.build(seed=1)
    sim.run(sc.duration)
    h = sim.scenario_handles
    # "the RLM receiver has climbed to level 4 when the primary fails at 60 s ... drops to level
    # 3 within ten seconds, and from 70 s to the repair it is above level 3 only for a
    # join-experiment that fails within two seconds; after 100 s ... climbs above level 3 again"
    lt = sim.level_timeline()
    rx = h.receivers["rx"]
    steps = [(t / 1e9, int(lv)) for t, a, lv in zip(lt["time_ns"], lt["agent"], lt["level"]) if a == rx]
    at = lambda t: [lv for s, lv in steps if s <= t][-1]
    assert at(60.0) == 4 and at(70.0) == 3
    bounds = [70.0] + [s for s, _ in steps if 70.0 < s < 100.0] + [100.0]
    above = [(lo, hi) for lo, hi in zip(bounds, bounds[1:]) if at(lo) > 3]
    assert len(above) <= 1 and all(hi - lo <= 2.0 for lo, hi in above)
    assert max(lv for s, lv in steps if s >= 100.0) > 3
    # "the backup ... shows traffic only from 60 to 100 s" (a sample counts the second before it)
    q = sim.channel_series(h.channels["backup"][0])
    t, b = q["time_ns"] / 1e9, q["bytes"]
    moved = [t[i] for i in range(1, len(t)) if b[i] > b[i - 1]]
    assert moved and min(moved) > 60.0 and max(moved) <= 101.0
    # "the packets that were on the primary when it failed show in conservation()["link_down"]"
    c = sim.conservation()
    assert c["holds"] and c["link_down"] > 0
    assert sim.channel_stats(h.channels["primary"][0])["drops_link_down"] + \
        sim.channel_stats(h.channels["primary"][1])["drops_link_down"] == c["link_down"]


def test_the_guides_python_failure_example_prints_what_it_says():
    (code,) = _guide_blocks("python")
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        exec(compile(code, "guide.md failures", "exec"), {})
    printed = out.getvalue().splitlines()
    said = re.findall(r"# (\[.*?\])", code)
    assert printed == said == ["['src', 'r2', 'dst']", "['src', 'r1', 'dst']"]
