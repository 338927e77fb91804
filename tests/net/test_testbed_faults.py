"""Faults on the namespace testbed: a receiver killed outright and started again rejoins and
receives; a source killed and started again is told apart by its session epoch and the
receiver resynchronises on it (losses are counted in the new sequence space); a link set down
and up with `ip link` loses what was sent meanwhile, counted, and delivery resumes; and
`castlab testbed down --all` after the testbed process itself was SIGKILLed leaves no
namespace, link or process.

Every test builds its own testbed (the pid in its name) and removes it on success, failure
and interrupt; traffic stays inside its namespaces; multicast goes to 239.0.0.0/8 with a TTL
equal to the hop count. The `down --all` test runs in a mount namespace of its own with a
private /run/netns, so `--all` sees only the testbed the test made, never another run's.
Skips with the reason where root, `ip`, `tc` or igmpproxy are missing.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from castlab.testbed import Link, Testbed, Topology, available

REASON = available()
pytestmark = pytest.mark.skipif(REASON is not None, reason=f"testbed unavailable: {REASON}")

# two layers of 64 and 128 kb/s in 500-byte packets: 16 + 32 packets/s
LAYERS, BASE_BPS, PACKET = 2, 64e3, 500
PKTS_PER_S = (BASE_BPS + 2 * BASE_BPS) / 8 / PACKET


def _name(kind: str) -> str:
    return f"{kind}{os.getpid() % 100000}"


def _castlab(*args) -> list[str]:
    return [sys.executable, "-m", "castlab", *[str(a) for a in args]]


def _received(log: Path) -> int:
    """The sink's `received=` count on its latest status line (0 before any)."""
    hits = re.findall(r"received=(\d+)", log.read_text()) if log.exists() else []
    return int(hits[-1]) if hits else 0


def _wait_received(log: Path, at_least: int, timeout: float = 20.0) -> int:
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        n = _received(log)
        if n >= at_least:
            return n
        time.sleep(0.1)
    raise AssertionError(f"{log.name}: received {_received(log)} < {at_least} within {timeout:g} s:\n"
                         f"{log.read_text() if log.exists() else '(no log)'}")


def test_receiver_and_source_restarts_and_a_link_down_up(tmp_path):
    topo = Topology("chain", "src - r1 - rcv1", ["src", "rcv1"], ["r1"], [Link("src", "r1"), Link("r1", "rcv1")])
    with Testbed(topo, _name("k")) as tb:
        ttl = tb.topo.hops("src", "rcv1") + 1
        session = ["--source-addr", tb.addr("src"), "--ttl", ttl, "--session", 78, "--layers", LAYERS]

        def source(tag: str):
            return tb.spawn("src", _castlab("net", "source", "--base-rate", BASE_BPS, "--packet-size", PACKET,
                                            "--duration", 60, "--iface-addr", tb.addr("src"), *session),
                            stdout=open(tmp_path / f"src-{tag}.log", "w"), stderr=subprocess.STDOUT)

        def sink(tag: str):
            return tb.spawn("rcv1", _castlab("net", "sink", "--level", LAYERS, "--addr", tb.addr("rcv1"), "--node", 1,
                                             "--iface-addr", tb.addr("rcv1"), "--duration", 60,
                                             "--status-interval", 0.25, "--out", tmp_path / f"sink-{tag}", *session),
                            stdout=open(tmp_path / f"sink-{tag}.log", "w"), stderr=subprocess.STDOUT)

        src = source("1")
        first = sink("1")
        _wait_received(tmp_path / "sink-1.log", 30)
        # 1. the receiver dies outright and is started again: it rejoins and receives
        first.kill()
        first.wait(timeout=10)
        again = sink("2")
        log = tmp_path / "sink-2.log"
        n = _wait_received(log, 30)
        # 2. the source dies outright and is started again: a new epoch, sequence numbers from 0
        src.kill()
        src.wait(timeout=10)
        time.sleep(0.5)
        src = source("2")
        n = _wait_received(log, n + 30)
        # 3. the receiver's link goes down and comes back up
        dev = tb.iface("rcv1", "r1")
        tb.run("rcv1", ["ip", "link", "set", dev, "down"])
        t_down = time.monotonic()
        time.sleep(2.0)
        tb.run("rcv1", ["ip", "link", "set", dev, "up"])
        outage_s = time.monotonic() - t_down
        n_up = _received(log)
        _wait_received(log, n_up + 30)
        assert tb.stop(again, signal.SIGINT) == 0
        tb.stop(src, signal.SIGINT)
        text = log.read_text()
    out = tmp_path / "sink-2"
    stats = json.loads((out / "net_stats.json").read_text())["stats"]
    assert stats["peer_restarts"] == 1, text
    assert stats["stale_epoch"] == 0 and stats["join_errors"] == 0, stats
    import pandas as pd

    arr = pd.read_csv(out / "arrivals.csv")
    lost = int(pd.read_csv(out / "losses.csv")["count"].sum())
    assert set(arr["layer"]) == set(range(LAYERS)), "the restarted receiver rejoined every layer"
    # what the source sent while the link was down is lost, and counted as such in the new
    # sequence space (without resynchronising, gaps below the old source's numbers go unseen)
    want = outage_s * PKTS_PER_S
    assert 0.6 * want <= lost <= 1.4 * want + 10, (lost, want, text)


UP_KILL_DOWN = r"""
import json, os, signal, subprocess, sys, time
name, tmp = sys.argv[1], sys.argv[2]
castlab = [sys.executable, "-m", "castlab"]
up = subprocess.Popen(castlab + ["testbed", "up", "lesbcc5", "--name", name, "--receivers", "1", "--routers", "user"],
                      stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, start_new_session=True)
lines, end = [], time.time() + 90
while time.time() < end:
    line = up.stdout.readline()
    lines.append(line)
    if line.startswith("up;") or not line:
        break
state = json.load(open(os.path.join(tmp, "castlab-testbed", name, "state.json")))
hand = subprocess.Popen(["ip", "netns", "exec", f"cl-{name}-rcv1", sys.executable, "-c", "import time; time.sleep(120)"],
                        start_new_session=True)
time.sleep(0.5)
up.kill(); up.wait()
before = subprocess.run(["ip", "netns", "list"], capture_output=True, text=True).stdout.split()
down = subprocess.run(castlab + ["testbed", "down", "--all"], capture_output=True, text=True, timeout=60)
hand.wait(timeout=20)
after = subprocess.run(["ip", "netns", "list"], capture_output=True, text=True).stdout.split()
status = subprocess.run(castlab + ["testbed", "status"], capture_output=True, text=True, timeout=60).stdout
print(json.dumps({"up": "".join(lines), "pids": state["pids"] + [hand.pid], "before": before, "after": after,
                  "down": down.stdout + down.stderr, "status": status,
                  "state_left": os.path.exists(os.path.join(tmp, "castlab-testbed", name))}))
"""


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    with open(f"/proc/{pid}/stat") as f:  # a zombie is gone for our purpose
        return f.read().rsplit(")", 1)[1].split()[0] != "Z"


def test_down_all_after_the_testbed_process_was_killed_leaves_nothing(tmp_path):
    if shutil.which("unshare") is None:
        pytest.skip("needs unshare (util-linux) for a private /run/netns")
    name = _name("z")
    script = tmp_path / "up_kill_down.py"
    script.write_text(UP_KILL_DOWN)
    # a private mount namespace: /run/netns (where `ip netns` keeps its names) is a fresh tmpfs,
    # so `down --all` sees this test's testbed only; the testbed's state goes under tmp_path
    sh = (f"mount --make-rprivate / && mkdir -p /run/netns && mount -t tmpfs castlab-netns /run/netns && "
          f"TMPDIR={tmp_path} exec {sys.executable} {script} {name} {tmp_path}")
    r = subprocess.run(["unshare", "--mount", "sh", "-c", sh], capture_output=True, text=True, timeout=240)
    if r.returncode != 0 and "unshare failed" in r.stderr:
        pytest.skip(f"cannot make a mount namespace here: {r.stderr.strip()}")
    assert r.returncode == 0, r.stderr
    res = json.loads(r.stdout.strip().splitlines()[-1])
    mine = [n for n in res["before"] if n.startswith(f"cl-{name}-")]
    assert len(mine) >= 4, res  # src, r1, lan0, rcv1 were there after the kill
    assert not [n for n in res["after"] if n.startswith("cl-")], res
    assert "no testbed is up" in res["status"], res["status"]
    assert not res["state_left"]
    left = [pid for pid in res["pids"] if _alive(pid)]
    assert left == [], f"processes outlived `down --all`: {left}\n{res['down']}"
    # the veth pairs lived in the namespaces; none reached the host's own
    links = subprocess.run(["ip", "-o", "link", "show"], capture_output=True, text=True).stdout
    assert not re.search(r"\b(l\d+[ab]|n\d+[hpr]\d*)@", links), links


def test_a_router_that_keeps_dying_gets_its_testbed_torn_down():
    """The user-space router restarted after each SIGKILL up to ROUTER_RESTARTS times; at the
    next death the testbed is torn down (never left half working) and says why."""
    from castlab.testbed import ROUTER_RESTARTS, lesbcc5

    name = _name("d")
    with Testbed(lesbcc5(receiver_hosts=1), name, routers="user") as tb:
        for k in range(ROUTER_RESTARTS + 1):
            p = tb.daemons["r1"]
            os.kill(p.pid, signal.SIGKILL)
            end = time.monotonic() + 15
            while time.monotonic() < end and tb.failed is None and (tb.daemons.get("r1") in (p, None)):
                time.sleep(0.05)
            if k < ROUTER_RESTARTS:
                assert tb.daemons["r1"] is not p and tb.router_restarts["r1"] == k + 1, tb.router_restarts
        end = time.monotonic() + 30
        while time.monotonic() < end and tb.is_up:
            time.sleep(0.05)
        assert tb.failed and "router r1 died" in tb.failed, tb.failed
        assert not tb.is_up
        r = subprocess.run(["ip", "netns", "list"], capture_output=True, text=True)
        assert f"cl-{name}-" not in r.stdout
