"""Captures Wireshark reads: ``castlab net ROLE --pcap FILE`` writes what a role sends and
receives, with synthetic IPv4/UDP headers around the bytes on the wire, and tshark decodes every
packet of it: a PGM session (``--wire pgm``) with tshark's own RFC 3208 dissector, checksums
good, and castlab's envelope with ``contrib/wireshark/castlab.lua``; the counts by packet type
in the capture match the roles' own counters.

Runs inside a network namespace the test creates and deletes (the fixtures of test_net.py);
skipped, with the reason, without root, ``ip netns`` or tshark.
"""

from __future__ import annotations

import collections
import json
import shutil
import signal
import subprocess
import time
from pathlib import Path

import pytest

from test_net import netns, roles  # noqa: F401  (fixtures)

pytestmark = pytest.mark.skipif(shutil.which("tshark") is None,
                                reason="needs tshark (make setup installs it with apt)")

LUA = Path(__file__).resolve().parents[2] / "contrib" / "wireshark" / "castlab.lua"
PORT = 47000  # the roles' default port base, and so the groups' UDP port


def tshark(pcap: Path, *args: str) -> list[list[str]]:
    r = subprocess.run(["tshark", "-n", "-r", str(pcap), *args], capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stderr
    return [line.split("\t") for line in r.stdout.splitlines()]


def run_pair(netns, roles, tmp_path: Path, *wire: str) -> tuple[Path, Path]:
    # the source's rate cap (150 kb/s) is below LE-SBCC's initial rate: gaps, NAKs, NCFs, RDATA
    rx = roles(netns, "pgm-receiver", "--addr", "127.0.0.2", "--node", "1", "--duration", "60",
               "--out", str(tmp_path / "rx"), "--pcap", str(tmp_path / "rx.pcap"), *wire)
    time.sleep(1.5)
    src = roles(netns, "lesbcc-source", "--duration", "3", "--rate-cap", "150k", "--rate-cap-burst", "3000",
                "--out", str(tmp_path / "src"), "--pcap", str(tmp_path / "src.pcap"), *wire)
    out = src.wait(30)
    time.sleep(0.5)
    rx.signal(signal.SIGTERM)
    out += rx.wait(30)
    assert src.p.returncode == 0 and rx.p.returncode == 0, out
    return tmp_path / "src", tmp_path / "rx"


def test_pgm_capture_decodes_with_tsharks_own_dissector(netns, roles, tmp_path):
    src, rx = run_pair(netns, roles, tmp_path, "--wire", "pgm")
    les = json.loads((src / "lesbcc_stats.json").read_text())
    for side in (src, rx):
        net = json.loads((side / "net_stats.json").read_text())["stats"]
        rows = tshark(tmp_path / f"{side.name}.pcap", "-d", f"udp.port=={PORT},pgm", "-o", "pgm.check_checksum:TRUE",
                      "-T", "fields", "-e", "pgm.hdr.type", "-e", "pgm.hdr.cksum.status", "-e", "_ws.malformed",
                      "-e", "pgm.bad_checksum")
        assert len(rows) == net["pcap_records"] == net["datagrams_sent"] + net["datagrams_received"] > 0
        # every packet is PGM, with a good checksum (tshark 4's dissector lists the field twice, the
        # verdict last: 1 = good), and nothing malformed
        assert all(r[0] != "" for r in rows), rows[:5]
        assert {r[1].split(",")[-1] for r in rows} == {"1"}, collections.Counter(r[1] for r in rows)
        assert all(r[2] == "" and r[3] == "" for r in rows)
        by_type = collections.Counter(int(r[0], 0) for r in rows)
        for name, code in (("spm", 0), ("odata", 4), ("rdata", 5), ("nak", 8), ("ncf", 10)):
            assert by_type.get(code, 0) == net[f"pgm_sent_{name}"] + net[f"pgm_received_{name}"], (name, by_type, net)
    # and the source's capture is what the source's agent counted sending
    rows = tshark(tmp_path / "src.pcap", "-d", f"udp.port=={PORT},pgm", "-Y", "ip.src==127.0.0.1",
                  "-T", "fields", "-e", "pgm.hdr.type")
    sent = collections.Counter(int(r[0], 0) for r in rows)
    # the session ends with one SPM carrying OPT_FIN, the source agent's last (its shutdown
    # step, which the agent counts among its SPMs): the last packet
    text = subprocess.run(["tshark", "-n", "-r", str(tmp_path / "src.pcap"), "-d", f"udp.port=={PORT},pgm", "-V"],
                          capture_output=True, text=True, timeout=60).stdout
    frames = text.split("\nFrame ")
    assert text.count("Option: Fin") == 1 and "Option: Fin" in frames[-1] and "Type: SPM" in frames[-1], frames[-1]
    agent = {0: les["spm_sent"], 4: les["odata_sent"], 5: les["rdata_sent"], 10: les["ncf_sent"]}
    # what the agent sent is on the wire, less what the driver's rate cap dropped
    assert set(sent) <= set(agent) and all(sent[k] <= agent[k] for k in agent), (sent, agent)
    drops = json.loads((src / "net_stats.json").read_text())["stats"]["rate_cap_drops"]
    assert sum(agent.values()) - sum(sent.values()) == drops and sent[5] > 0, (sent, agent, drops)


def test_envelope_capture_decodes_with_the_lua_dissector(netns, roles, tmp_path):
    src, rx = run_pair(netns, roles, tmp_path)
    les = json.loads((src / "lesbcc_stats.json").read_text())
    rxs = json.loads((rx / "pgm_receiver_stats.json").read_text())
    for side in (src, rx):
        net = json.loads((side / "net_stats.json").read_text())["stats"]
        rows = tshark(tmp_path / f"{side.name}.pcap", "-X", f"lua_script:{LUA}", "-T", "fields",
                      "-e", "castlab.session", "-e", "castlab.kind", "-e", "castlab.pgm.kind", "-e", "_ws.expert",
                      "-e", "castlab.seq")
        assert len(rows) == net["pcap_records"] == net["datagrams_sent"] + net["datagrams_received"] > 0
        # every datagram is castlab's envelope of session 1, a PGM header, and no expert complaint
        assert {r[0] for r in rows} == {"1"} and {r[1] for r in rows} == {"6"}, rows[:5]
        assert all(r[3] == "" for r in rows)
    rows = tshark(tmp_path / "src.pcap", "-X", f"lua_script:{LUA}", "-Y", "ip.src==127.0.0.1", "-T", "fields",
                  "-e", "castlab.pgm.kind")
    sent = collections.Counter(int(r[0]) for r in rows)
    agent = {1: les["odata_sent"], 2: les["rdata_sent"], 4: les["ncf_sent"], 5: les["spm_sent"]}
    assert set(sent) <= set(agent) and all(sent[k] <= agent[k] for k in agent), (sent, agent)
    drops = json.loads((src / "net_stats.json").read_text())["stats"]["rate_cap_drops"]
    assert sum(agent.values()) - sum(sent.values()) == drops and sent[2] > 0, (sent, agent, drops)
    rows = tshark(tmp_path / "rx.pcap", "-X", f"lua_script:{LUA}", "-Y", "castlab.pgm.kind==3", "-T", "fields",
                  "-e", "castlab.seq")
    assert len(rows) == rxs["naks_sent"] > 0


def test_simulated_link_pcap_decodes_like_a_real_capture(tmp_path):
    """The simulator's per-link capture (ns-3's EnablePcap) holds the bytes the real mode sends:
    the same dissectors read it, and it has one record per packet the link carried."""
    import gc

    import castlab

    sim = castlab.Simulator(seed=2)
    for name in ("src", "r1", "h0", "h1"):
        sim.add_node(name)
    sim.add_link("src", "r1", 10e6, 0.005, queue_limit_pkts=1000)
    g = sim.add_group("src")
    rx = []
    for h, loss in (("h0", 0.05), ("h1", 0.0)):
        sim.add_link("r1", h, 10e6, 0.010, queue_limit_pkts=1000, loss_ab=loss)
        rx.append(sim.add_pgm_receiver(h, group=g, flow=3))
    src = sim.add_lesbcc_source("src", g, flow=3, total_packets=300, spm_interval=0.5)
    sim.enable_pcap("r1", "h0", tmp_path / "down.pcap", wire="pgm")
    sim.enable_pcap("h0", "r1", tmp_path / "up.pcap", wire="pgm")
    sim.enable_pcap("src", "r1", tmp_path / "env.pcap")
    sim.run(40.0)
    down = sim.channel_stats(sim.channel("r1", "h0"))["departures"]
    up = sim.channel_stats(sim.channel("h0", "r1"))["departures"]
    env = sim.channel_stats(sim.channel("src", "r1"))["departures"]
    naks = sim.pgm_receiver_stats(rx[0])["naks_sent"]
    assert sim.lesbcc_stats(src)["rdata_sent"] > 0 and naks > 0
    del sim
    gc.collect()  # the taps flush when the simulator goes
    args = ("-d", f"udp.port=={PORT},pgm", "-o", "pgm.check_checksum:TRUE", "-T", "fields", "-e", "pgm.hdr.type",
            "-e", "pgm.hdr.cksum.status", "-e", "_ws.malformed")
    rows = tshark(tmp_path / "down.pcap", *args)
    assert len(rows) == down > 300
    assert {r[1].split(",")[-1] for r in rows} == {"1"} and all(r[2] == "" for r in rows)
    assert {int(r[0], 0) for r in rows} <= {0, 4, 5, 10}
    rows = tshark(tmp_path / "up.pcap", *args)
    assert len(rows) == up == naks and {int(r[0], 0) for r in rows} == {8}
    assert {r[1].split(",")[-1] for r in rows} == {"1"}
    rows = tshark(tmp_path / "env.pcap", "-X", f"lua_script:{LUA}", "-T", "fields", "-e", "castlab.kind",
                  "-e", "castlab.flow", "-e", "_ws.expert")
    assert len(rows) == env and {(r[0], r[1], r[2]) for r in rows} == {("6", "3", "")}


CAPTURED = """
name = "captured"
duration = "30s"
nodes = ["src", "r1", "h0"]

[[links]]
name = "feed"
a = "src"
b = "r1"
rate = "10Mbps"
delay = "5ms"
queue_limit = 1000

[[links]]
name = "edge"
a = "r1"
b = "h0"
rate = "10Mbps"
delay = "10ms"
queue_limit = 1000
loss_ab = 0.05

[[sessions]]
name = "le"
kind = "lesbcc"
source = "src"
flow = 3
config = { total_packets = 300, spm_interval = "0.5s" }

[[receivers]]
name = "rx"
node = "h0"
session = "le"

[[captures]]
name = "down"
link = "edge"
wire = "pgm"

[[captures]]
name = "naks"
link = "edge"
direction = "ba"
wire = "pgm"

[[captures]]
link = "feed"
"""


def test_scenario_captures_decode_with_both_dissectors(tmp_path):
    """A scenario file's [[captures]] write capture_NAME.pcap in the run's folder, one record per
    packet that left the link's end, which tshark decodes: PGM with its own dissector (good
    checksums, NAKs only upstream), castlab's envelope with the Lua one."""
    from castlab import cli

    (tmp_path / "captured.toml").write_text(CAPTURED)
    assert cli.main(["scenario", "run", str(tmp_path / "captured.toml"), "--seeds", "4",
                     "--out", str(tmp_path / "out")]) == 0
    run = tmp_path / "out" / "seed-4"
    summary = json.loads((run / "summary.json").read_text())
    assert {"capture_down.pcap", "capture_naks.pcap", "capture_capture3.pcap"} <= set(summary["files"])
    flows = summary["flows"]
    naks = next(r for r in flows if r["name"] == "rx")
    args = ("-d", f"udp.port=={PORT},pgm", "-o", "pgm.check_checksum:TRUE", "-T", "fields", "-e", "pgm.hdr.type",
            "-e", "pgm.hdr.cksum.status", "-e", "_ws.malformed", "-e", "ip.src", "-e", "ip.dst")
    down = tshark(run / "capture_down.pcap", *args)
    up = tshark(run / "capture_naks.pcap", *args)
    # the 300 data packets go down (less those the link's loss drops before they leave), with
    # SPMs, NCFs and repairs; only NAKs come up
    types_down = collections.Counter(int(r[0], 0) for r in down)
    assert 250 < types_down[4] <= 300 and types_down[5] > 0 and set(types_down) <= {0, 4, 5, 10}, types_down
    assert {int(r[0], 0) for r in up} == {8} and len(up) > 0
    for rows in (down, up):
        assert {r[1].split(",")[-1] for r in rows} == {"1"} and all(r[2] == "" for r in rows)
    # node n is 10.0.0.(n+1): the NAKs leave h0 (node 2) for the source (node 0)
    assert {(r[3], r[4]) for r in up} == {("10.0.0.3", "10.0.0.1")}
    # the same run without a file: the capture agrees with the engine's count of the link
    sim = castlab_scenario(tmp_path / "captured.toml").build(4)
    sim.run(30.0)
    h = sim.scenario_handles
    assert len(down) == sim.channel_stats(h.channels["edge"][0])["departures"]
    assert len(up) == sim.channel_stats(h.channels["edge"][1])["departures"]
    env = tshark(run / "capture_capture3.pcap", "-X", f"lua_script:{LUA}", "-T", "fields", "-e", "castlab.kind",
                 "-e", "castlab.flow", "-e", "_ws.expert")
    assert len(env) == sim.channel_stats(h.channels["feed"][0])["departures"] > 300
    assert {(r[0], r[1], r[2]) for r in env} == {("6", "3", "")}
    assert naks["received"] > 0
    # a capture only watches: the same run without captures has the same flow table
    (tmp_path / "plain.toml").write_text(CAPTURED.split("[[captures]]")[0])
    assert cli.main(["scenario", "run", str(tmp_path / "plain.toml"), "--seeds", "4",
                     "--out", str(tmp_path / "plain")]) == 0
    assert (tmp_path / "plain" / "seed-4" / "flows.csv").read_bytes() == (run / "flows.csv").read_bytes()
    assert not list((tmp_path / "plain" / "seed-4").glob("*.pcap"))


def castlab_scenario(path):
    from castlab.scenario import Scenario

    return Scenario.from_toml(path)


def test_scenario_capture_errors_name_the_field(tmp_path):
    from castlab.scenario import Scenario, ScenarioError

    head = CAPTURED.split("[[captures]]")[0]
    at = len(head.splitlines()) + 1  # the line of the first [[captures]]
    cases = [('link = "nowhere"', f"'captures.capture1.link' (line {at + 1}): no link named 'nowhere'"),
             ('link = "edge"\ndirection = "up"', f"'captures.capture1.direction' (line {at + 2}): a direction is"),
             ('link = "edge"\nwire = "pcapng"', f"'captures.capture1.wire' (line {at + 2}): a wire format is"),
             ('link = "edge"\nfilter = "udp"', f"'captures.capture1.filter' (line {at + 2}): unknown key"),
             ('direction = "ab"', f"'captures.capture1' (line {at}): missing required key 'link'"),
             ('name = "a"\nlink = "edge"\n[[captures]]\nname = "b"\nlink = "edge"',
              f"'captures.b.direction' (line {at + 3}): link 'edge' direction 'ab' is already captured by 'a'")]
    for body, msg in cases:
        text = head + "[[captures]]\n" + body + "\n"
        (tmp_path / "bad.toml").write_text(text)
        with pytest.raises(ScenarioError) as e:
            Scenario.from_toml(tmp_path / "bad.toml")
        assert msg in str(e.value), (body, str(e.value))
    # two links between the same nodes: the capture could not tell which one it taps
    twin = head.replace('[[sessions]]', '[[links]]\nname = "edge2"\na = "h0"\nb = "r1"\nrate = "1Mbps"\n'
                        'delay = "1ms"\n\n[[sessions]]')
    (tmp_path / "bad.toml").write_text(twin + '[[captures]]\nlink = "edge"\n')
    with pytest.raises(ScenarioError, match="links 'edge' and 'edge2' join the same two nodes"):
        Scenario.from_toml(tmp_path / "bad.toml")
    # a scenario without captures keeps its canonical form (no "captures" key)
    (tmp_path / "none.toml").write_text(head)
    assert "captures" not in Scenario.from_toml(tmp_path / "none.toml").to_dict()
