"""The testbed with castlab's user-space routers (``routers="user"``): LE-SBCC's §5.2.1 shape
with 250 ms at each router egress gives a 500 ms round trip, multicast reaches members only
and stops after a leave on the shared LAN (the router's group-specific queries), a router
killed outright is restarted and forwards again, teardown leaves nothing behind, and RLM's
any-source control group crosses two user routers.

Every test builds its own testbed (namespaces ``cl-<name>-*``, the pid in the name) and
removes it on success, failure and interrupt; traffic stays inside those namespaces;
multicast goes to 239.0.0.0/8 with a TTL no larger than the hop count. Skips with the reason
where root, ``ip`` or ``tc`` are missing.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time

import pytest

from castlab.testbed import Link, Testbed, Topology, available, lesbcc5

REASON = available()
pytestmark = pytest.mark.skipif(REASON is not None, reason=f"testbed unavailable: {REASON}")

ECHO_SERVER = """
import socket
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM); s.bind(("0.0.0.0", 7017)); s.settimeout(20)
while True:
    data, peer = s.recvfrom(100); s.sendto(data.upper(), peer)
"""
# three round trips, each retried (the first may meet an ARP resolution); prints the RTTs
ECHO_CLIENT = """
import socket, sys, time
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM); s.settimeout(1.5)
rtts = []
for i in range(3):
    for _ in range(4):
        t = time.monotonic(); s.sendto(b"ping%d" % i, (sys.argv[1], 7017))
        try:
            while s.recv(100) != b"PING%d" % i:
                pass
            rtts.append(time.monotonic() - t); break
        except socket.timeout:
            pass
print(" ".join("%.4f" % r for r in rtts))
"""
SEND = """
import socket, sys, time
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.setsockopt(socket.IPPROTO_IP, socket.IP_MULTICAST_TTL, int(sys.argv[2]))
s.setsockopt(socket.IPPROTO_IP, socket.IP_MULTICAST_IF, socket.inet_aton(sys.argv[1]))
end = time.time() + float(sys.argv[3])
while time.time() < end:
    s.sendto(b"m" * 100, ("239.255.9.19", 7019)); time.sleep(0.005)
"""
JOIN_LEAVE = """
import socket, struct, sys, time
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind(("", 7019)); s.settimeout(0.05)
m = struct.pack("4s4s", socket.inet_aton("239.255.9.19"), socket.inet_aton(sys.argv[1]))
n_before = 0
t = time.time()
while time.time() - t < 0.5:
    try:
        s.recv(200); n_before += 1
    except socket.timeout:
        pass
s.setsockopt(socket.IPPROTO_IP, socket.IP_ADD_MEMBERSHIP, m)
n = 0; t = time.time()
while time.time() - t < 1.5:
    try:
        s.recv(200); n += 1
    except socket.timeout:
        pass
s.setsockopt(socket.IPPROTO_IP, socket.IP_DROP_MEMBERSHIP, m)
print(n_before, n)
"""


def _netns(prefix: str) -> set[str]:
    r = subprocess.run(["ip", "netns", "list"], capture_output=True, text=True)
    return {n for n in (line.split()[0] for line in r.stdout.splitlines() if line.strip()) if n.startswith(prefix)}


def _name(kind: str) -> str:
    return f"{kind}{os.getpid() % 100000}"


def _rtts(tb: Testbed) -> list[float]:
    r = tb.run("src", [sys.executable, "-c", ECHO_CLIENT, tb.addr("rcv1")], timeout=30)
    return [float(x) for x in r.stdout.split()]


def test_user_routers_delay_forward_multicast_and_restart_when_killed():
    name = _name("w")
    with Testbed(lesbcc5(receiver_hosts=2, delay_s=0.25), name, routers="user") as tb:
        assert {tb.ns(n) for n in ("src", "rcv1", "rcv2", "r1", "lan0")} == _netns(f"cl-{name}-")
        srv = tb.spawn("rcv1", [sys.executable, "-c", ECHO_SERVER])
        time.sleep(0.3)
        rtts = _rtts(tb)
        # 250 ms at r1's egress toward the LAN and 250 ms toward src, nothing else that long
        assert len(rtts) == 3 and all(0.5 <= r < 0.53 for r in rtts), rtts

        # multicast: rcv1 joins and leaves any-source; rcv2 never joins but shares the LAN
        ttl = tb.topo.hops("src", "rcv1") + 1
        snd = tb.spawn("src", [sys.executable, "-c", SEND, tb.addr("src"), ttl, 7])
        time.sleep(0.3)
        r = tb.run("rcv1", [sys.executable, "-c", JOIN_LEAVE, tb.addr("rcv1")], timeout=30)
        before, during = (int(x) for x in r.stdout.split())
        assert before == 0
        assert during > 150, during  # 200 packets/s, the first 250 ms in the delay line
        # on a LAN the router asks twice, 1 s apart, before it prunes (RFC 3376 §8.9: 2 s)
        time.sleep(3.0)
        a2 = tb.link_rx_packets("rcv2", "r1")
        time.sleep(1.0)
        quiet = tb.link_rx_packets("rcv2", "r1") - a2
        tb.stop(snd)
        assert quiet <= 2, quiet

        # kill the router outright: the watchdog restarts it and forwarding comes back
        old = tb.daemons["r1"]
        os.kill(old.pid, signal.SIGKILL)
        t0 = time.monotonic()
        while time.monotonic() - t0 < 5 and (tb.daemons["r1"] is old or tb.daemons["r1"].poll() is not None):
            time.sleep(0.05)
        assert tb.daemons["r1"] is not old and tb.daemons["r1"].poll() is None, "router not restarted"
        assert tb.router_restarts == {"r1": 1}
        time.sleep(0.5)
        rtts = _rtts(tb)
        assert len(rtts) == 3 and all(0.5 <= r < 0.53 for r in rtts), rtts
        # the testbed runs its routers at real-time priority (--realtime), restarted ones too
        log = (tb.state_dir / "router-r1.log").read_text()
        assert "SCHED_FIFO 10; running" in log and "--realtime refused" not in log, log
        assert os.sched_getscheduler(tb.daemons["r1"].pid) == os.SCHED_FIFO
        tb.stop(srv)
        pid = tb.daemons["r1"].pid
    assert _netns(f"cl-{name}-") == set()
    with pytest.raises(ProcessLookupError):
        os.kill(pid, 0)
    stats = tb.final_router_stats["r1"]
    assert stats["stopped_by"] == "SIGTERM"
    lan = next(p for p in stats["ports"] if p["name"] == "n0r")
    assert lan["tx_frames"] > 0 and stats["stats"]["igmp_queries_sent"] > 0


def test_a_red_bottleneck_needs_user_routers():
    t = Topology("x", "x", ["src", "dst"], ["r1"],
                 [Link("src", "r1"), Link("r1", "dst", 1e6, 50, red=(5, 15, 0.1, 0.002, False))])
    with pytest.raises(ValueError, match="routers='user'"):
        Testbed(t, "x")


def test_rlm_control_crosses_two_user_routers(tmp_path):
    """RLM's any-source control group across two user routers: rcv1 sits behind r1, rcv2
    behind r2, so each one's join announcements cross both routers to reach the other (the
    routers relay each receiver's any-source membership to the other router). With a 1 s
    minimum join-timer both climb the source's 4 layers within the run and each hears the
    other's announcements (shared learning's input, RLM §3.3; the rows of what was heard are
    kept with ``trace=full``)."""
    topo = Topology("rlm2r", "two routers, a receiver behind each", ["src", "rcv1", "rcv2"], ["r1", "r2"],
                    [Link("src", "r1"), Link("r1", "rcv1"), Link("r1", "r2"), Link("r2", "rcv2")])
    with Testbed(topo, _name("q"), routers="user") as tb:
        ttl = tb.topo.hops("src", "rcv2") + 1
        sess = ["--source-addr", tb.addr("src"), "--ttl", ttl, "--session", 84]
        src = tb.spawn("src", [sys.executable, "-m", "castlab", "net", "source", "--layers", 4, "--base-rate", 32000,
                               "--duration", 7, "--iface-addr", tb.addr("src"), *sess])
        rx = [tb.spawn(h, [sys.executable, "-m", "castlab", "net", "rlm-receiver", "--layers", 4, "--addr", tb.addr(h),
                           "--node", tb.node_id(h), "--iface-addr", tb.addr(h), "--duration", 6,
                           "--config", "t_min=1.0", "--config", "trace=full", "--out", tmp_path / h, *sess],
                       stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
              for h in ("rcv1", "rcv2")]
        outs = [p.communicate(timeout=40)[0].decode() for p in rx]
        tb.stop(src)
        relayed = {r: tb.router_stats(r).get("stats", {}).get("igmp_relayed_joins", 0) for r in ("r1", "r2")}
        # every point-to-point interface names the node at its far end (where a `Via` copy goes)
        for r, peers in (("r1", ("src", "rcv1", "r2")), ("r2", ("r1", "rcv2"))):
            ifaces = [w for a, w in zip(tb.router_argv[r], tb.router_argv[r][1:]) if a == "--iface"]
            for p in peers:
                assert any(w.startswith(tb.iface(r, p) + ",") and f",peer={tb.node_id(p)}" in w for w in ifaces), ifaces
    assert all(p.returncode == 0 for p in rx), outs
    heard = {}
    for h in ("rcv1", "rcv2"):
        files = sorted(p.name for p in (tmp_path / h).iterdir())
        f = next((tmp_path / h / n for n in files if "heard" in n), None)
        assert f is not None, files
        heard[h] = len(f.read_text().strip().splitlines()) - 1  # less the header
    assert relayed["r2"] > 0, relayed
    assert heard["rcv1"] >= 1 and heard["rcv2"] >= 1, (heard, outs)
