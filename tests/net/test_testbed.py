"""The namespace testbed: it comes up and goes down leaving nothing, routes unicast, forwards
multicast only to members and stops at a leave, its bottleneck holds its rate and counts its
drops, Ctrl-C tears it down, and the real-network experiments run in their quick forms.

Every test builds its own testbed (namespaces ``cl-<name>-*``) and removes it on success,
failure and interrupt; traffic stays inside those namespaces; multicast goes to 239.0.0.0/8
with a TTL no larger than the hop count. Skips with the reason where root, ``ip``, ``tc`` or
igmpproxy are missing.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time

import pytest

from castlab.testbed import Testbed, available, rlm1

REASON = available()
pytestmark = pytest.mark.skipif(REASON is not None, reason=f"testbed unavailable: {REASON}")


def _netns(prefix: str = "cl-") -> set[str]:
    """Namespaces whose names start with `prefix` (other runs on the machine have their own)."""
    r = subprocess.run(["ip", "netns", "list"], capture_output=True, text=True)
    return {n for n in (line.split()[0] for line in r.stdout.splitlines() if line.strip()) if n.startswith(prefix)}


def _name(kind: str) -> str:
    """This process's testbed name for one test: concurrent runs never collide."""
    return f"{kind}{os.getpid() % 100000}"


ECHO_SERVER = """
import socket
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM); s.bind(("0.0.0.0", 7007)); s.settimeout(10)
for _ in range(3):
    data, peer = s.recvfrom(100); s.sendto(data.upper(), peer)
"""
ECHO_CLIENT = """
import socket, sys
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM); s.settimeout(2)
got = []
for i in range(3):
    for _ in range(5):
        s.sendto(b"ping%d" % i, (sys.argv[1], 7007))
        try:
            got.append(s.recv(100).decode()); break
        except socket.timeout:
            pass
print(",".join(got))
"""
SEND = """
import socket, sys, time
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.setsockopt(socket.IPPROTO_IP, socket.IP_MULTICAST_TTL, int(sys.argv[2]))
s.setsockopt(socket.IPPROTO_IP, socket.IP_MULTICAST_IF, socket.inet_aton(sys.argv[1]))
end = time.time() + float(sys.argv[3])
while time.time() < end:
    s.sendto(b"m" * 100, ("239.255.9.9", 7009)); time.sleep(0.005)
"""
JOIN_LEAVE = """
import socket, struct, sys, time
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind(("", 7009)); s.settimeout(0.05)
m = struct.pack("4s4s", socket.inet_aton("239.255.9.9"), socket.inet_aton(sys.argv[1]))
n_before = 0
t = time.time()
while time.time() - t < 0.5:  # not a member yet: nothing may arrive
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


def test_up_and_down_leave_nothing_behind():
    mine = f"cl-{_name('u')}-"
    with Testbed(rlm1(receivers=2), _name("u")) as tb:
        assert {tb.ns(n) for n in ("src", "rcv1", "rcv2", "r1")} == _netns(mine)
        assert all(p.poll() is None for p in tb.daemons.values()), "igmpproxy must be running"
        pids = [p.pid for p in tb.daemons.values()]
    assert _netns(mine) == set()
    for pid in pids:
        with pytest.raises(ProcessLookupError):
            os.kill(pid, 0)


CONNECT_AND_NAME_CC = """
import socket, sys
srv = socket.socket(); srv.bind((sys.argv[1], 0)); srv.listen(1)
c = socket.create_connection(srv.getsockname(), timeout=5)
print(c.getsockopt(socket.IPPROTO_TCP, socket.TCP_CONGESTION, 16).rstrip(b"\\0").decode())
"""


def _host_cc() -> str:
    return open("/proc/sys/net/ipv4/tcp_congestion_control").read().strip()


@pytest.mark.parametrize("routers", ["kernel", "user"])
def test_every_namespace_starts_its_tcp_connections_under_reno_whatever_the_hosts_default(routers):
    """A connection comes up under the namespace's default congestion control, and one that came
    up under bbr stays paced after a switch (iperf3 -C switches then): the testbed names reno,
    which does not pace, in each of its namespaces and leaves the host's default alone."""
    host = _host_cc()
    with Testbed(rlm1(receivers=1), _name("c"), routers=routers) as tb:
        for node in ("src", "rcv1", "r1"):
            assert tb.run(node, ["sysctl", "-n", "net.ipv4.tcp_congestion_control"]).stdout.strip() == "reno"
        r = tb.run("src", [sys.executable, "-c", CONNECT_AND_NAME_CC, tb.addr("src")], timeout=30)
        assert r.stdout.strip() == "reno", r.stderr
    assert _host_cc() == host


def test_unicast_crosses_the_topology():
    with Testbed(rlm1(receivers=1), _name("e")) as tb:
        srv = tb.spawn("rcv1", [sys.executable, "-c", ECHO_SERVER])
        time.sleep(0.3)
        r = tb.run("src", [sys.executable, "-c", ECHO_CLIENT, tb.addr("rcv1")], timeout=30)
        tb.stop(srv)
        assert r.stdout.strip() == "PING0,PING1,PING2"


def test_multicast_reaches_members_only_and_stops_at_a_leave():
    with Testbed(rlm1(receivers=2), _name("m")) as tb:
        ttl = tb.topo.hops("src", "rcv1") + 1
        assert ttl == 2
        snd = tb.spawn("src", [sys.executable, "-c", SEND, tb.addr("src"), ttl, 8])
        time.sleep(0.3)
        r = tb.run("rcv1", [sys.executable, "-c", JOIN_LEAVE, tb.addr("rcv1")], timeout=30)
        before, during = (int(x) for x in r.stdout.split())
        assert before == 0
        assert during > 150, during  # 200 packets/s sent for 1.5 s
        # after the leave, rcv1's link goes quiet (bridge fast leave); rcv2 never joined
        time.sleep(0.5)
        a1, a2 = tb.link_rx_packets("rcv1", "r1"), tb.link_rx_packets("rcv2", "r1")
        time.sleep(1.0)
        quiet1 = tb.link_rx_packets("rcv1", "r1") - a1
        quiet2 = tb.link_rx_packets("rcv2", "r1") - a2
        tb.stop(snd)
        assert quiet1 <= 2 and quiet2 <= 2, (quiet1, quiet2)


BLAST = """
import socket, sys, time
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
gap = 1000 * 8 / float(sys.argv[2]); end = time.time() + 3.0; nxt = time.time()
while time.time() < end:
    s.sendto(b"b" * 972, (sys.argv[1], 7010)); nxt += gap
    d = nxt - time.time()
    if d > 0: time.sleep(d)
"""
SINK = """
import socket, time
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM); s.bind(("0.0.0.0", 7010)); s.settimeout(1.0)
first = last = None; nbytes = 0
while True:
    try:
        d = s.recv(2000)
    except socket.timeout:
        if first is not None: break
        continue
    now = time.time(); first = first or now; last = now; nbytes += len(d) + 28
print(nbytes * 8 / max(last - first, 1e-9))
"""


def test_the_bottleneck_holds_its_rate_and_counts_its_drops():
    rate = 1.5e6
    with Testbed(rlm1(receivers=1, rate_bps=rate, queue_pkts=20), _name("b")) as tb:
        sink = tb.spawn("rcv1", [sys.executable, "-c", SINK], stdout=subprocess.PIPE)
        time.sleep(0.3)
        tb.run("src", [sys.executable, "-c", BLAST, tb.addr("rcv1"), 3e6], timeout=30)  # twice the bottleneck
        out, _ = sink.communicate(timeout=20)
        got = float(out.decode().strip())
        q = tb.qdisc_stats("rcv1")
    # tbf meters the IP packet (1000 B here); the receiver counts UDP payload + IP/UDP headers
    assert rate * 0.85 <= got <= rate * 1.1, got
    assert q["pfifo"]["drops"] > 100, q


def test_ctrl_c_tears_a_testbed_down():
    name = _name("s")
    p = subprocess.Popen([sys.executable, "-m", "castlab", "testbed", "up", "rlm1", "--name", name,
                          "--receivers", "1"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.time() + 60
        while time.time() < deadline:
            line = p.stdout.readline()
            if line.startswith("up;") or not line:
                break
        assert _netns(f"cl-{name}-")
        p.send_signal(signal.SIGINT)
        p.wait(timeout=30)
    finally:
        if p.poll() is None:
            p.kill()
            p.wait()
        subprocess.run([sys.executable, "-m", "castlab", "testbed", "down", name], capture_output=True)
    assert p.returncode == 0, p.stderr.read()
    assert _netns(f"cl-{name}-") == set()


@pytest.fixture(scope="module")
def rlm_pair(tmp_path_factory):
    """net-rlm's quick testbed and simulator runs, made once: net-rlm and net-vs-sim analyse
    the same runs (each experiment run alone makes its own)."""
    from castlab.experiments.rlm.net import _rlm_pair

    return _rlm_pair(tmp_path_factory.mktemp("rlm-pair"), 1, True)


@pytest.mark.parametrize("name", ["net-rlm", "net-vs-sim", "net-lesbcc-fig21"])
def test_real_network_experiments_run_in_quick_form(tmp_path, name, request):
    from castlab.experiments import REGISTRY
    from castlab.experiments.net_common import testbed_name

    if name in ("net-rlm", "net-vs-sim"):
        res = REGISTRY[name].run(tmp_path, 1, quick=True, pair=request.getfixturevalue("rlm_pair"))
    else:  # what this checks (it runs, its router, its files, computed claims) needs no 60 s
        res = REGISTRY[name].run(tmp_path, 1, quick=True, duration=30.0)
    assert _netns(f"cl-{testbed_name('r')}-") == set() and _netns(f"cl-{testbed_name('l')}-") == set()
    assert res.params["network"] == "real"
    assert "skipped" not in res.params
    assert res.claims and all(isinstance(c.holds, bool) for c in res.claims)
    for f in res.files:
        assert (tmp_path / f).stat().st_size > 0, f
    if res.params.get("routers") == "user":
        # the bottleneck is the user-space router's port onto the LAN, with §5.2.1's round trip
        assert res.params["qdisc"]["name"] == "n0r" and res.params["qdisc"]["departures"] > 0
        assert res.params["round_trip_latency_s"] == 0.5
    else:
        assert "tbf" in str(res.params["qdisc"])
    if name == "net-rlm":
        # the driver, the testbed and RLM together: every receiver reaches the level that fits
        assert {c.id: c.holds for c in res.claims}["reaches-optimal"]


def _hand_started(ns: str) -> subprocess.Popen:
    """A process started by hand inside a testbed's namespace, as a user would with
    `ip netns exec` (not through Testbed.spawn, so the testbed has no record of it)."""
    return subprocess.Popen(["ip", "netns", "exec", ns, sys.executable, "-c", "import time; time.sleep(120)"],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


def _ended_within(p: subprocess.Popen, seconds: float) -> bool:
    try:
        p.wait(timeout=seconds)
        return True
    except subprocess.TimeoutExpired:
        return False


def test_teardown_ends_processes_started_by_hand_in_its_namespaces():
    name = _name("h")
    hand = None
    try:
        with Testbed(rlm1(receivers=1), name) as tb:
            hand = _hand_started(tb.ns("rcv1"))
            deadline = time.time() + 10
            while hand.pid not in set(_pids_in(tb.ns("rcv1"))) and time.time() < deadline:
                time.sleep(0.05)
            assert hand.poll() is None
        assert _ended_within(hand, 10), "a process started by hand outlived the testbed"
        assert _netns(f"cl-{name}-") == set()
    finally:
        if hand is not None and hand.poll() is None:
            hand.kill()
            hand.wait()


def _pids_in(ns: str) -> list[int]:
    r = subprocess.run(["ip", "netns", "pids", ns], capture_output=True, text=True)
    return [int(t) for t in r.stdout.split() if t.isdigit()]


def test_foreground_up_exits_when_down_runs_from_another_shell():
    name = _name("f")
    up = subprocess.Popen([sys.executable, "-m", "castlab", "testbed", "up", "rlm1", "--name", name,
                           "--receivers", "1"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    hand = None
    try:
        deadline = time.time() + 60
        while time.time() < deadline:
            line = up.stdout.readline()
            if line.startswith("up;") or not line:
                break
        assert _netns(f"cl-{name}-"), up.stderr.read() if up.poll() is not None else "not up"
        hand = _hand_started(f"cl-{name}-rcv1")
        time.sleep(0.5)
        down = subprocess.run([sys.executable, "-m", "castlab", "testbed", "down", name], capture_output=True,
                              text=True, timeout=60)
        assert down.returncode == 0, down.stderr
        t0 = time.monotonic()
        assert _ended_within(up, 15), "`testbed up` did not notice `testbed down`"
        assert time.monotonic() - t0 < 15
        assert up.returncode == 0
        assert "is gone" in up.stderr.read()
        assert _ended_within(hand, 10), "the hand-started process outlived `testbed down`"
        assert _netns(f"cl-{name}-") == set()
    finally:
        for p in (up, hand):
            if p is not None and p.poll() is None:
                p.kill()
                p.wait()
        subprocess.run([sys.executable, "-m", "castlab", "testbed", "down", name], capture_output=True)


def _running(pid: int) -> bool:
    """Whether `pid` is a live process (a zombie, ended and waiting to be reaped, is not)."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[-1].split()[0] != "Z"
    except OSError:
        return False


def test_the_next_testbed_removes_what_a_killed_one_left(capsys):
    """`testbed up` SIGKILLed leaves its namespaces and igmpproxy behind (its daemons run in
    sessions of their own); the next testbed that starts finds that its owner is gone, removes
    them, and comes up working."""
    import json

    from castlab.testbed import STATE_ROOT

    dead, nxt = _name("k"), _name("n")
    up = subprocess.Popen([sys.executable, "-m", "castlab", "testbed", "up", "rlm1", "--name", dead,
                           "--receivers", "1"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                          start_new_session=True)
    try:
        deadline = time.time() + 60
        while time.time() < deadline:
            line = up.stdout.readline()
            if line.startswith("up;") or not line:
                break
        left = _netns(f"cl-{dead}-")
        assert left, up.stderr.read() if up.poll() is not None else "not up"
        st = json.loads((STATE_ROOT / dead / "state.json").read_text())
        daemons = [rec["pid"] for rec in st["processes"]]
        assert daemons and all(_running(pid) for pid in daemons)
        assert set(st["namespaces"]) == left and st["owner_pid"] == up.pid
        up.send_signal(signal.SIGKILL)  # the process only, as `kill -9 PID` does
        up.wait(timeout=10)
        assert _netns(f"cl-{dead}-") == left and all(_running(pid) for pid in daemons), "nothing was left?"
        capsys.readouterr()
        with Testbed(rlm1(receivers=1), nxt) as tb:
            assert _netns(f"cl-{dead}-") == set()
            assert not [pid for pid in daemons if _running(pid)]
            assert not (STATE_ROOT / dead).exists()
            srv = tb.spawn("rcv1", [sys.executable, "-c", ECHO_SERVER])
            time.sleep(0.3)
            r = tb.run("src", [sys.executable, "-c", ECHO_CLIENT, tb.addr("rcv1")], timeout=30)
            tb.stop(srv)
            assert r.stdout.strip() == "PING0,PING1,PING2"
        err = capsys.readouterr().err
        assert f"removed testbed {dead!r}, left by a castlab process that is gone" in err
        assert "igmpproxy" in err and f"cl-{dead}-r1" in err
    finally:
        if up.poll() is None:
            up.kill()
            up.wait()
        for n in (dead, nxt):
            subprocess.run([sys.executable, "-m", "castlab", "testbed", "down", n], capture_output=True)
    assert _netns(f"cl-{nxt}-") == set()


def test_stale_testbed_records_of_live_or_detached_owners_are_kept(tmp_path):
    """Only a record whose owner is gone is stale: one owned by a running process, one left up
    on purpose (`up --detach`) and one of another format stay."""
    import json
    import shutil

    from castlab.testbed import STATE_FORMAT, STATE_ROOT, _boot_id, _start_time, reap_stale

    me = os.getpid()
    dead = subprocess.Popen([sys.executable, "-c", "pass"])
    dead.wait()
    base = {"format": STATE_FORMAT, "boot_id": _boot_id(), "namespaces": [], "processes": [], "detached": False}
    records = {_name("la"): {**base, "owner_pid": me, "owner_start": _start_time(me)},
               _name("de"): {**base, "owner_pid": dead.pid, "owner_start": 1, "detached": True},
               _name("of"): {**base, "format": 1, "owner_pid": dead.pid, "owner_start": 1},
               _name("go"): {**base, "owner_pid": dead.pid, "owner_start": 1}}
    try:
        for n, st in records.items():
            (STATE_ROOT / n).mkdir(parents=True)
            (STATE_ROOT / n / "state.json").write_text(json.dumps({"name": n, **st}))
        removed = reap_stale()
        assert _name("go") in removed and not (STATE_ROOT / _name("go")).exists()
        for n in (_name("la"), _name("de"), _name("of")):
            assert n not in removed and (STATE_ROOT / n / "state.json").exists()
    finally:
        for n in records:
            shutil.rmtree(STATE_ROOT / n, ignore_errors=True)
