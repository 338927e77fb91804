"""A real network on one Linux host: hosts and routers as network namespaces, veth links, a
kernel bottleneck (tc tbf + pfifo; netem delay where the kernel has it), unicast routes, and
kernel IP multicast routing driven by IGMP membership through igmpproxy, so that a receiver's
leave prunes its branch. Kernel TCP (iperf3) gives cross traffic.

Everything it creates (namespaces, links, daemons, processes it starts) is removed on exit, on
error and on SIGINT/SIGTERM/SIGHUP. A testbed records what it made in a state file (its
namespaces; each process it started, by pid, start time and command line; the pid of the
castlab process that owns it), and every testbed that starts first removes what a testbed
whose owner is gone left behind (``reap_stale``): a SIGKILLed run does not leave its
namespaces and daemons beside the next. ``castlab testbed down NAME`` removes one by hand. Teardown also ends
every process still running inside the testbed's namespaces (``ip netns pids``), those
started by hand with ``ip netns exec`` included. Needs root, ``ip``,
``tc`` and ``igmpproxy`` (the Makefile's set-up installs them with apt); ``available()`` says
what is missing. See docs/testbed.md.
"""

from __future__ import annotations

import atexit
import contextlib
import fcntl
import importlib.util
import ipaddress
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Optional, Sequence

from castlab import stopping
from castlab.testbed.topology import NET_PREFIX, TBF_BURST_BYTES, Lan, Link, Topology, register, topologies

__all__ = ["Testbed", "Topology", "Link", "Lan", "register", "topologies", "available", "down_by_name",
           "list_testbeds", "netem_available", "netns_pids", "reap_stale", "removed_elsewhere"]



def __getattr__(name: str):
    """A registered topology's builder by its name (``from castlab.testbed import NAME``): the
    papers' set-ups are defined beside their experiments (:func:`topologies`).

    ``from castlab.testbed import cli`` asks here before it imports the submodule: a private
    name or a submodule's is refused at once, without loading the table (which imports every
    experiment)."""
    if name.startswith("_") or importlib.util.find_spec(f"{__name__}.{name}") is not None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    reg = topologies().get(name)
    if reg is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return reg.make


STATE_ROOT = Path(tempfile.gettempdir()) / "castlab-testbed"
#: Every namespace's default TCP congestion control (``Testbed._tcp_default``): reno, which does
#: not pace.
TCP_DEFAULT_CC = "reno"
#: Every namespace the testbed creates starts with this; `down` removes only those of one name.
NS_PREFIX = "cl-"
#: The state file's format: only records of this format are removed as stale (an older one may
#: belong to a testbed left up on purpose).
STATE_FORMAT = 2
#: A dead user-space router is restarted this many times before its testbed is torn down.
ROUTER_RESTARTS = 3
#: How often a user router rewrites its counters while it runs (what qdisc_stats reads).
ROUTER_STATS_EVERY_S = 0.5


#: How long `up` waits for a snooping bridge to forward multicast by membership (igmpproxy's
#: queries alone make a bridge wait their 10 s response time: this bounds that case too).
SNOOPING_READY_S = 15.0

# Run inside a router's namespace with the bridge's address: one IGMPv2 general query
# (RFC 2236 §2: type 0x11, group 0, to 224.0.0.1) with a maximum response time of 0.1 s
# (code 1), sent through the bridge, without the Router Alert option (neither the bridge nor a
# Linux host asks for it). A snooping bridge that hears a query starts forwarding by
# membership after that query's response time; the first query it hears sets the wait.
_PRIME_SNOOPING = """
import socket, struct, sys
def csum(b):
    s = sum(struct.unpack("!4H", b)); s = (s >> 16) + (s & 0xffff); s += s >> 16
    return ~s & 0xffff
q = struct.pack("!BBH4s", 0x11, 1, 0, bytes(4))
q = struct.pack("!BBH4s", 0x11, 1, csum(q), bytes(4))
s = socket.socket(socket.AF_INET, socket.SOCK_RAW, socket.IPPROTO_IGMP)
s.setsockopt(socket.IPPROTO_IP, socket.IP_MULTICAST_IF, socket.inet_aton(sys.argv[1]))
s.setsockopt(socket.IPPROTO_IP, socket.IP_MULTICAST_TTL, 1)
s.setsockopt(socket.IPPROTO_IP, socket.IP_MULTICAST_LOOP, 0)
s.sendto(q, ("224.0.0.1", 0))
"""

# Run inside a router's namespace: bursts of 20 datagrams from the bridge's address to a group
# no host joined, until the bridge port argv[1] forwards fewer than half of a burst (queries
# may cross it meanwhile), or argv[3] seconds pass (exit 1).
_WAIT_FILTERING = """
import socket, sys, time
port, addr, limit = sys.argv[1], sys.argv[2], float(sys.argv[3])
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.setsockopt(socket.IPPROTO_IP, socket.IP_MULTICAST_IF, socket.inet_aton(addr))
s.setsockopt(socket.IPPROTO_IP, socket.IP_MULTICAST_TTL, 1)
s.setsockopt(socket.IPPROTO_IP, socket.IP_MULTICAST_LOOP, 0)
def tx():
    with open(f"/sys/class/net/{port}/statistics/tx_packets") as f:
        return int(f.read())
end = time.monotonic() + limit
while True:
    a = tx()
    for _ in range(20):
        s.sendto(b"ready?", ("239.255.200.9", 5997))
    if tx() - a < 10:
        sys.exit(0)
    if time.monotonic() > end:
        sys.exit(f"{port} forwarded {tx() - a} of 20")
    time.sleep(0.1)
"""


def _run(argv: Sequence[str], *, check: bool = True, timeout: float = 30.0) -> subprocess.CompletedProcess:
    r = subprocess.run(list(argv), capture_output=True, text=True, timeout=timeout)
    if check and r.returncode != 0:
        raise RuntimeError(f"{' '.join(argv)}: exit {r.returncode}: {r.stderr.strip() or r.stdout.strip()}")
    return r


def available() -> Optional[str]:
    """None when a testbed can be built here, else the reason it cannot."""
    if sys.platform != "linux":
        return "needs Linux network namespaces"
    if os.geteuid() != 0:
        return "needs root (network namespaces, tc, multicast routing)"
    for tool in ("ip", "tc", "igmpproxy"):
        if shutil.which(tool) is None:
            return f"needs `{tool}` (make setup installs iproute2 and igmpproxy with apt)"
    probe = f"{NS_PREFIX}probe-{os.getpid()}"
    r = _run(["ip", "netns", "add", probe], check=False)
    if r.returncode != 0:
        return f"cannot create a network namespace: {r.stderr.strip()}"
    _run(["ip", "netns", "del", probe], check=False)
    return None


_NETEM: Optional[bool] = None


def netem_available() -> bool:
    """Whether this kernel has the netem qdisc (probed once, in a scratch namespace)."""
    global _NETEM
    if _NETEM is None:
        probe = f"{NS_PREFIX}netem-{os.getpid()}"
        _run(["ip", "netns", "add", probe])
        try:
            r = _run(["ip", "netns", "exec", probe, "tc", "qdisc", "add", "dev", "lo", "root", "netem", "delay", "1ms"],
                     check=False)
            _NETEM = r.returncode == 0
        finally:
            _run(["ip", "netns", "del", probe], check=False)
    return _NETEM


def _pid_alive(pid: int) -> bool:
    """Whether `pid` runs: a zombie (ended, not yet reaped by its parent) does not."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[-1].split()[0] != "Z"
    except (OSError, IndexError):
        return True


def _kill_pid(pid: int, timeout: float = 3.0) -> None:
    """SIGTERM, then SIGKILL after `timeout`: a process this testbed started, by its id."""
    try:
        os.kill(pid, signal.SIGTERM)
    except ProcessLookupError:
        return
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        try:
            done, _ = os.waitpid(pid, os.WNOHANG)
            if done == pid:
                return
        except ChildProcessError:
            if not _pid_alive(pid):
                return
        time.sleep(0.05)
    try:
        os.kill(pid, signal.SIGKILL)
        os.waitpid(pid, 0)
    except (ProcessLookupError, ChildProcessError):
        pass


def _start_time(pid: int) -> Optional[int]:
    """When process `pid` started (clock ticks after boot, /proc/PID/stat field 22), or None if
    there is no such process. With the pid it names one process for the whole uptime."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    fields = stat.rsplit(")", 1)[-1].split()
    return int(fields[19]) if len(fields) > 19 and fields[19].isdigit() else None


def _cmdline(pid: int) -> Optional[list[str]]:
    try:
        raw = Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return None
    return [a.decode(errors="replace") for a in raw.split(b"\0")[:-1]]


def _boot_id() -> str:
    try:
        return Path("/proc/sys/kernel/random/boot_id").read_text().strip()
    except OSError:
        return ""


def _same_process(rec: dict) -> bool:
    """Whether the process a state file recorded (pid, start time, argv) is still running as
    the program it started: the same start time, and the recorded command line (or, for
    ``ip netns exec NS CMD...``, which execs CMD, that command's)."""
    pid, start, argv = rec.get("pid"), rec.get("start"), rec.get("argv")
    if not isinstance(pid, int) or start is None or not isinstance(argv, list):
        return False
    if _start_time(pid) != start:
        return False
    cmd = _cmdline(pid)
    inner = argv[4:] if argv[:3] == ["ip", "netns", "exec"] else None
    return cmd is not None and (cmd == argv or cmd == inner)


def _owner_alive(st: dict) -> bool:
    if st.get("boot_id") != _boot_id():
        return False  # recorded before a reboot
    pid = st.get("owner_pid")
    return isinstance(pid, int) and _start_time(pid) is not None and _start_time(pid) == st.get("owner_start")


@contextlib.contextmanager
def _state_lock():
    """One testbed at a time looks for stale ones (two starting together do not race)."""
    STATE_ROOT.mkdir(parents=True, exist_ok=True)
    with open(STATE_ROOT / ".lock", "w") as f:
        fcntl.flock(f, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(f, fcntl.LOCK_UN)


def reap_stale() -> dict[str, list[str]]:
    """Remove what testbeds whose owning castlab process is gone (SIGKILLed, or the machine
    rebooted) left behind: the processes they started, each only if it is still the recorded
    program (pid, start time, command line), every process inside their namespaces, the
    namespaces by name, their state folders. Testbeds left up on purpose (``testbed up
    --detach``) and state files of another format are left alone. Returns name -> what was
    removed."""
    if not STATE_ROOT.is_dir():
        return {}
    removed: dict[str, list[str]] = {}
    with _state_lock():
        for d in sorted(STATE_ROOT.iterdir()):
            try:
                st = json.loads((d / "state.json").read_text())
            except (OSError, ValueError):
                continue
            if not isinstance(st, dict) or st.get("format") != STATE_FORMAT or st.get("detached"):
                continue
            if _owner_alive(st):
                continue
            name = str(st.get("name", d.name))
            what = []
            for rec in st.get("processes", []):
                if isinstance(rec, dict) and _same_process(rec):
                    _kill_pid(rec["pid"])
                    inner = rec["argv"][4:] if rec["argv"][:3] == ["ip", "netns", "exec"] else rec["argv"]
                    what.append(f"pid {rec['pid']} ({os.path.basename(inner[0]) if inner else '?'})")
            present = set(_netns_list())
            mine = sorted({n for n in st.get("namespaces", []) if n in present}
                          | {n for n in present if n.startswith(f"{NS_PREFIX}{name}-")})
            what += [f"pid {pid} (in its namespaces)" for pid in _end_processes_in(mine)]
            for n in mine:
                _run(["ip", "netns", "del", n], check=False)
                what.append(n)
            shutil.rmtree(d, ignore_errors=True)
            removed[name] = what
    return removed


def _stop_together(procs: Sequence[subprocess.Popen], timeout: float) -> None:
    """SIGTERM to each of `procs` still running, then wait for them all within `timeout`, then
    SIGKILL those left: processes this testbed started, by their handles."""
    live = [p for p in procs if p.poll() is None]
    for p in live:
        with contextlib.suppress(ProcessLookupError):
            p.send_signal(signal.SIGTERM)
    end = time.monotonic() + timeout
    for p in live:
        with contextlib.suppress(subprocess.TimeoutExpired):
            p.wait(timeout=max(0.0, end - time.monotonic()))
    for p in live:
        if p.poll() is None:
            p.kill()
            with contextlib.suppress(subprocess.TimeoutExpired):
                p.wait(timeout=timeout)


def netns_pids(ns: str) -> list[int]:
    """The processes running in network namespace `ns` (``ip netns pids``)."""
    r = _run(["ip", "netns", "pids", ns], check=False)
    return [int(t) for t in r.stdout.split() if t.isdigit()]


def _end_processes_in(namespaces: Sequence[str], timeout: float = 3.0) -> list[int]:
    """End every process inside `namespaces`: the ones the testbed started and the ones started
    by hand with ``ip netns exec`` (a receiver left running would otherwise outlive its
    network, reporting from a namespace no longer listed). SIGTERM, then SIGKILL for those
    still there after `timeout`. Returns the pids signalled."""
    pids = sorted({pid for ns in namespaces for pid in netns_pids(ns)} - {os.getpid()})
    for pid in pids:
        try:
            os.kill(pid, signal.SIGTERM)
        except ProcessLookupError:
            pass
    end = time.monotonic() + timeout
    left = list(pids)
    while left and time.monotonic() < end:
        for pid in list(left):
            try:  # reap our own children, so that a zombie does not count as alive
                os.waitpid(pid, os.WNOHANG)
            except ChildProcessError:
                pass
        left = [pid for pid in left if pid in {q for ns in namespaces for q in netns_pids(ns)}]
        if left:
            time.sleep(0.05)
    for pid in left:
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
    return pids


class Testbed:
    """A topology brought up as namespaces. Use as a context manager, or call `up` and `down`.

    ``tb.run(node, argv)`` runs a command inside a node and waits; ``tb.spawn(node, argv)``
    starts one and tracks it (stopped with ``tb.stop``, and at teardown in any case).
    """

    __test__ = False  # not a pytest test class, despite its name

    def __init__(self, topology: Topology, name: str = "tb", *, verbose: bool = False, routers: str = "kernel",
                 extensions: Optional[dict[str, tuple[str, dict]]] = None, session: Optional[dict] = None):
        """`extensions`: router -> (router kind, options) for user routers to host (e.g.
        ``{"r1": ("lmr", {})}``), for the castlab session `session` describes (the host roles'
        settings: ``session``, ``key``, ``port_base``, ``group_base``, ``layers``...; node 0 is
        the topology's source, the nodes' ids are :meth:`node_id`)."""
        topology.check()
        if not name.isalnum() or len(name) > 6:
            raise ValueError(f"name: {name!r} must be alphanumeric, at most 6 characters")
        if routers not in ("kernel", "user"):
            raise ValueError(f"routers: {routers!r} must be 'kernel' (kernel forwarding, igmpproxy, tc) or 'user' "
                             "(castlab's user-space router)")
        if routers == "kernel" and any(x.red is not None for x in list(topology.links) + list(topology.lans)):
            raise ValueError("red: a RED bottleneck needs routers='user' (this kernel has no sch_red)")
        extensions = dict(extensions or {})
        for r in extensions:
            if r not in topology.routers:
                raise ValueError(f"extensions: {r!r} is not a router of topology {topology.name}")
        if extensions and routers != "user":
            raise ValueError("extensions: router extensions need routers='user'")
        #: "kernel" (ip_forward, igmpproxy, tc tbf) or "user" (castlab-net's router process)
        self.routers = routers
        self.extensions = extensions
        self.session = dict(session or {})
        self.router_argv: dict[str, list[str]] = {}
        self.router_restarts: dict[str, int] = {}
        self.failed: Optional[str] = None
        #: each user-space router's counters as it wrote them at teardown
        self.final_router_stats: dict[str, dict] = {}
        self._stopping = False
        #: left up on purpose (``testbed up --detach``): never removed as stale
        self.detached = False
        self.topo = topology
        self.name = name
        self.verbose = verbose
        self.state_dir = STATE_ROOT / name
        self.procs: list[subprocess.Popen] = []
        self.daemons: dict[str, subprocess.Popen] = {}
        self.netem = False
        self.is_up = False
        self._old_handlers: dict[int, object] = {}
        self._ifaces: dict[tuple[str, str], str] = {}  # (node, peer) -> interface in node

    # ---- naming
    def ns(self, node: str) -> str:
        return f"{NS_PREFIX}{self.name}-{node}"

    def addr(self, node: str) -> str:
        return self.topo.addr(node)

    def node_id(self, node: str) -> int:
        """The castlab node id of a host or router: the source is 0, the other hosts 1, 2...
        in the topology's order, then the routers."""
        t = self.topo
        order = [t.source] + [h for h in t.hosts if h != t.source] + list(t.routers)
        return order.index(node)

    def host_words(self) -> list[str]:
        """``--host ID=ADDR`` for every node but the source (whose address is the session's
        ``--source-addr``): what a role or router needs to address the others."""
        t = self.topo
        out: list[str] = []
        for n in t.hosts + t.routers:
            if n != t.source:
                out += ["--host", f"{self.node_id(n)}={self.addr(n)}"]
        return out

    def session_words(self) -> list[str]:
        """The session settings as the host roles' and the router's flags."""
        out = ["--source-addr", self.addr(self.topo.source)]
        for k, v in self.session.items():
            if k == "key" and isinstance(v, (bytes, bytearray)):
                v = v.hex()
            if isinstance(v, bool):
                if v:
                    out.append(f"--{k.replace('_', '-')}")
                continue
            if v is not None:
                out += [f"--{k.replace('_', '-')}", str(v)]
        return out

    def iface(self, node: str, peer: str) -> str:
        """The interface of `node` that faces `peer` (a link's veth, or a LAN's port)."""
        return self._ifaces[(node, peer)]

    # ---- running commands inside nodes
    def _argv(self, node: str, argv: Sequence[str]) -> list[str]:
        return ["ip", "netns", "exec", self.ns(node), *[str(a) for a in argv]]

    def run(self, node: str, argv: Sequence[str], *, check: bool = True, timeout: float = 30.0):
        return _run(self._argv(node, argv), check=check, timeout=timeout)

    def spawn(self, node: str, argv: Sequence[str], *, stdout=None, stderr=None, env=None) -> subprocess.Popen:
        p = subprocess.Popen(self._argv(node, argv), stdout=stdout if stdout is not None else subprocess.DEVNULL,
                             stderr=stderr if stderr is not None else subprocess.DEVNULL, env=env,
                             start_new_session=True)
        self.procs.append(p)
        self._save_state()
        return p

    def stop(self, p: subprocess.Popen, sig: int = signal.SIGINT, timeout: float = 10.0) -> Optional[int]:
        """Signal a process this testbed started; SIGKILL it if it outlives `timeout`."""
        if p.poll() is None:
            try:
                p.send_signal(sig)
                p.wait(timeout=timeout)
            except subprocess.TimeoutExpired:
                p.kill()
                p.wait(timeout=timeout)
        return p.returncode

    # ---- bring up
    def up(self) -> "Testbed":
        reason = available()
        if reason:
            raise RuntimeError(f"testbed: {reason}")
        for name, what in reap_stale().items():
            print(f"castlab testbed: removed testbed {name!r}, left by a castlab process that is gone: "
                  f"{', '.join(what) if what else 'its state file'}", file=sys.stderr, flush=True)
        if self.state_dir.exists() or any(n.startswith(f"{NS_PREFIX}{self.name}-") for n in _netns_list()):
            raise RuntimeError(f"testbed {self.name!r} exists already: `castlab testbed down {self.name}` removes it")
        self.state_dir.mkdir(parents=True)
        self._save_state()  # before anything is made: a SIGKILL from here on leaves a record
        self.is_up = True
        try:
            self._build()
        except BaseException:
            self.down()
            raise
        return self

    def _tcp_default(self, node: str) -> None:
        """Name `node`'s default congestion control, ``TCP_DEFAULT_CC``, rather than inherit the
        host's. A program that names a connection's algorithm only once it is up (iperf3 -C)
        starts it under the default; one started under bbr keeps BBR's internal pacing after the
        switch (tcp_bbr.c's init asks for it in ``sk_pacing_status``, and nothing takes it back),
        so on a host whose default is bbr a "reno" or "cubic" flow would be paced at Linux's
        pacing rate, 1.2 cwnd/srtt. With a default that does not pace, reno and cubic run as
        Linux runs them and bbr, switched to, asks for pacing itself."""
        r = self.run(node, ["sysctl", "-qw", f"net.ipv4.tcp_congestion_control={TCP_DEFAULT_CC}"], check=False)
        if r.returncode != 0:
            print(f"castlab testbed: could not set {node}'s default congestion control to {TCP_DEFAULT_CC} "
                  f"({(r.stderr or '').strip()}); its TCP flows start under the host's", file=sys.stderr, flush=True)

    def _build(self) -> None:
        if self.routers == "user":
            self._build_user()
            return
        t = self.topo
        nodes = t.hosts + t.routers
        for n in nodes:
            _run(["ip", "netns", "add", self.ns(n)])
            self._save_state()
            self.run(n, ["ip", "link", "set", "lo", "up"])
            self._tcp_default(n)
        self.netem = netem_available()
        for i, ln in enumerate(t.links):
            ia, ib = f"l{i}a", f"l{i}b"
            _run(["ip", "link", "add", ia, "netns", self.ns(ln.a), "type", "veth", "peer", "name", ib,
                  "netns", self.ns(ln.b)])
            self._ifaces[(ln.a, ln.b)] = ia
            self._ifaces[(ln.b, ln.a)] = ib
        for j, lan in enumerate(t.lans):
            br = f"br{j}"
            snoop = "1" if lan.shaping == "per-host" else "0"
            # per-host: the bridge snoops IGMP (and is the segment's querier, so that snooping
            # filters rather than floods) and drops a port from a group on that port's leave
            self.run(lan.router, ["ip", "link", "add", br, "type", "bridge", "mcast_snooping", snoop,
                                  "mcast_querier", snoop, "mcast_query_use_ifaddr", snoop, "mcast_last_member_interval", "50",
                                  "mcast_startup_query_interval", "100", "mcast_query_response_interval", "100"])
            for k, h in enumerate(lan.hosts):
                hi, pi = f"n{j}h{k}", f"n{j}p{k}"
                _run(["ip", "link", "add", hi, "netns", self.ns(h), "type", "veth", "peer", "name", pi,
                      "netns", self.ns(lan.router)])
                self.run(lan.router, ["ip", "link", "set", pi, "master", br])
                if lan.shaping == "per-host":
                    self.run(lan.router, ["ip", "link", "set", pi, "type", "bridge_slave", "fastleave", "on",
                                          "mcast_flood", "off", "mcast_router", "0"])
                self.run(lan.router, ["ip", "link", "set", pi, "up"])
                self._ifaces[(h, lan.router)] = hi
                self._ifaces[(lan.router, h)] = br
        # addresses
        for net, m in t.subnets():
            plen = net.split("/")[1]
            for node, a in m.items():
                dev = self._dev_on(node, m)
                self.run(node, ["ip", "addr", "add", f"{a}/{plen}", "dev", dev])
                self.run(node, ["ip", "link", "set", dev, "up"])
        # unicast routes; hosts also route 239.0.0.0/8 out of their (single) interface
        for node, rs in t.routes().items():
            for net, via in rs:
                self.run(node, ["ip", "route", "add", net, "via", via])
        for h in t.hosts:
            dev = next(d for (n, _), d in self._ifaces.items() if n == h)
            self.run(h, ["ip", "route", "add", "239.0.0.0/8", "dev", dev])
        for r in t.routers:
            self.run(r, ["sysctl", "-qw", "net.ipv4.ip_forward=1", "net.ipv4.conf.all.rp_filter=0",
                         "net.ipv4.conf.default.rp_filter=0"])
        # bottlenecks
        for ln in t.links:
            if ln.rate_bps is not None:
                self._shape(ln.a, self.iface(ln.a, ln.b), ln.rate_bps, ln.queue_pkts, ln.delay_s)
        for j, lan in enumerate(t.lans):
            if lan.rate_bps is None:
                continue
            if lan.shaping == "shared":
                self._shape(lan.router, f"br{j}", lan.rate_bps, lan.queue_pkts, lan.delay_s)
            else:
                for k in range(len(lan.hosts)):
                    self._shape(lan.router, f"n{j}p{k}", lan.rate_bps, lan.queue_pkts, lan.delay_s)
        # multicast routing
        snooping = [(j, lan) for j, lan in enumerate(t.lans) if lan.shaping == "per-host"]
        subnets = t.subnets()
        for j, lan in snooping:
            self.run(lan.router, [sys.executable, "-c", _PRIME_SNOOPING, subnets[len(t.links) + j][1][lan.router]])
        for r in t.routers:
            self._start_igmpproxy(r)
        # igmpproxy installs its VIFs; a snooping bridge forwards by membership only once it
        # has heard a querier and that query's response time has passed (before that it
        # floods, so a leave would seem to take seconds). The query sent above answers in
        # 0.1 s; igmpproxy's own queries, heard after it, do not restart that wait.
        time.sleep(0.3)
        for j, lan in snooping:
            r = self.run(lan.router, [sys.executable, "-c", _WAIT_FILTERING, f"n{j}p0",
                                      subnets[len(t.links) + j][1][lan.router], str(SNOOPING_READY_S)],
                         check=False, timeout=SNOOPING_READY_S + 10)
            if r.returncode != 0:
                raise RuntimeError(f"bridge br{j} in {lan.router} still floods multicast to non-members "
                                   f"{SNOOPING_READY_S:g} s after its querier started: {r.stderr.strip()}")
        self._save_state()

    # ---- user-space routers
    def _build_user(self) -> None:
        """Routers as castlab-net's router process (docs/testbed.md): kernel forwarding off and
        no addresses on the routers' interfaces (the router answers ARP for them), every rate,
        queue (DropTail or RED) and delay at the router's egress, no igmpproxy. A shared LAN
        is a bridge in a namespace of its own (a switch) behind one router interface; a
        per-host LAN gives each host its own point-to-point link to the router."""
        t = self.topo
        switches = [f"lan{j}" for j, lan in enumerate(t.lans) if lan.shaping == "shared"]
        for n in t.hosts + t.routers + switches:
            _run(["ip", "netns", "add", self.ns(n)])
            self._save_state()
            self.run(n, ["ip", "link", "set", "lo", "up"])
            self._tcp_default(n)
        for i, ln in enumerate(t.links):
            ia, ib = f"l{i}a", f"l{i}b"
            _run(["ip", "link", "add", ia, "netns", self.ns(ln.a), "type", "veth", "peer", "name", ib,
                  "netns", self.ns(ln.b)])
            self._ifaces[(ln.a, ln.b)] = ia
            self._ifaces[(ln.b, ln.a)] = ib
        for j, lan in enumerate(t.lans):
            if lan.shaping == "shared":
                sw = f"lan{j}"
                self.run(sw, ["ip", "link", "add", f"br{j}", "type", "bridge", "mcast_snooping", "0"])
                _run(["ip", "link", "add", f"n{j}r", "netns", self.ns(lan.router), "type", "veth", "peer", "name",
                      f"n{j}u", "netns", self.ns(sw)])
                ports = [f"n{j}u"]
                for k, h in enumerate(lan.hosts):
                    hi, pi = f"n{j}h{k}", f"n{j}p{k}"
                    _run(["ip", "link", "add", hi, "netns", self.ns(h), "type", "veth", "peer", "name", pi,
                          "netns", self.ns(sw)])
                    ports.append(pi)
                    self._ifaces[(h, lan.router)] = hi
                    self._ifaces[(lan.router, h)] = f"n{j}r"
                for pi in ports:
                    self.run(sw, ["ip", "link", "set", pi, "master", f"br{j}"])
                    self.run(sw, ["ip", "link", "set", pi, "up"])
                self.run(sw, ["ip", "link", "set", f"br{j}", "up"])
            else:
                for k, h in enumerate(lan.hosts):
                    hi, pi = f"n{j}h{k}", f"n{j}p{k}"
                    _run(["ip", "link", "add", hi, "netns", self.ns(h), "type", "veth", "peer", "name", pi,
                          "netns", self.ns(lan.router)])
                    self._ifaces[(h, lan.router)] = hi
                    self._ifaces[(lan.router, h)] = pi
        for net, m in t.subnets():
            plen = net.split("/")[1]
            for node, a in m.items():
                if node in t.hosts:
                    dev = self._dev_on(node, m)
                    self.run(node, ["ip", "addr", "add", f"{a}/{plen}", "dev", dev])
                    self.run(node, ["ip", "link", "set", dev, "up"])
        for r in t.routers:
            for (n, _), dev in self._ifaces.items():
                if n == r:
                    self.run(r, ["ip", "link", "set", dev, "up"])
            self.run(r, ["sysctl", "-qw", "net.ipv4.ip_forward=0", "net.ipv6.conf.all.disable_ipv6=1"])
        for h in t.hosts:
            for net, via in t.routes()[h]:
                self.run(h, ["ip", "route", "add", net, "via", via])
            devs = sorted({d for (n, _), d in self._ifaces.items() if n == h})
            self.run(h, ["ip", "route", "add", "239.0.0.0/8", "dev", devs[0]])
            # the hosts' offloads off: the router's AF_PACKET sockets then see whole frames of
            # at most the MTU with their checksums filled in
            code = "import sys; from castlab._native import net_offloads_off as f; [f(d) for d in sys.argv[1:]]"
            self.run(h, [sys.executable, "-c", code, *devs])
        for r in t.routers:
            self.router_argv[r] = self._router_argv(r)
            self._start_router(r)
        for r in t.routers:
            self._wait_router(r)
        self._save_state()
        threading.Thread(target=self._watch_routers, name=f"castlab-testbed-{self.name}-watchdog",
                         daemon=True).start()

    def _router_argv(self, r: str) -> list[str]:
        """`castlab net router` words for router `r`: each interface with the rate, queue and
        delay of the link it leads onto (the router's egress) and, on a point-to-point link, the
        node at its far end (`peer=`: where a `RouterSend::Via` copy goes; a shared LAN has none,
        and the router gives each host on it a copy), its routes."""
        t = self.topo
        words: list[str] = []

        def iface(dev: str, addr: str, x, lan: bool, peer: Optional[str] = None) -> str:
            parts = [dev, f"{addr}/24"]
            if x is not None:
                if x.rate_bps is not None:
                    parts.append(f"rate={int(x.rate_bps)}")
                if x.delay_s:
                    parts.append(f"delay={x.delay_s!r}")
                if x.red is not None:
                    mn, mx, p, w, gentle = x.red
                    parts.append(f"queue=red:{x.queue_pkts}:{mn}:{mx}:{p}:{w}" + (":gentle" if gentle else ""))
                elif x.rate_bps is not None:
                    parts.append(f"queue=droptail:{x.queue_pkts}")
            if lan:
                parts.append("lan")
            if peer is not None:
                # the neighbour an extension's `RouterSend::Via` copy onto this link goes to
                parts.append(f"peer={self.node_id(peer)}")
            return ",".join(parts)

        subnets = t.subnets()
        for i, ln in enumerate(t.links):
            if r in (ln.a, ln.b):
                peer = ln.b if ln.a == r else ln.a
                words += ["--iface", iface(self.iface(r, peer), subnets[i][1][r], ln, False, peer)]
        for j, lan in enumerate(t.lans):
            if lan.router != r:
                continue
            addr = subnets[len(t.links) + j][1][r]
            if lan.shaping == "shared":
                words += ["--iface", iface(f"n{j}r", addr, lan, True)]
            else:
                for k, h in enumerate(lan.hosts):
                    words += ["--iface", iface(f"n{j}p{k}", addr, lan, False, h)]
                    words += ["--route", f"{t.addr(h)}/32,dev=n{j}p{k}"]
        for net, via in t.routes()[r]:
            words += ["--route", f"{net},via={via}"]
        if r in self.extensions:
            kind, options = self.extensions[r]
            words += ["--node", str(self.node_id(r)), "--extension", kind,
                      *(f"{k}={json.dumps(v)}" for k, v in options.items())]
            words += self.session_words() + self.host_words()
        # SCHED_FIFO: on a loaded machine the router then handles a frame when it arrives, not
        # when the scheduler gets to it (docs/real-network.md, "Measured")
        return [sys.executable, "-m", "castlab.router", *words, "--realtime", "--status-interval", "3600",
                "--stats-every", str(ROUTER_STATS_EVERY_S), "--out", str(self.state_dir / f"router-{r}")]

    def _wait_router(self, r: str, timeout: float = 30.0) -> None:
        """Until router `r` says it runs (its interfaces open), or raise with its log."""
        log = self.state_dir / f"router-{r}.log"
        end = time.monotonic() + timeout
        while time.monotonic() < end:
            text = log.read_text() if log.exists() else ""
            if "[router]" in text and "running" in text.split("[router]")[-1]:
                return
            if self.daemons[r].poll() is not None:
                raise RuntimeError(f"router {r} did not start (exit {self.daemons[r].returncode}): {text.strip()}")
            time.sleep(0.05)
        raise RuntimeError(f"router {r} did not start within {timeout:g} s")

    def _start_router(self, r: str) -> None:
        log = open(self.state_dir / f"router-{r}.log", "a")
        self.daemons[r] = subprocess.Popen(self._argv(r, self.router_argv[r]), stdout=log, stderr=subprocess.STDOUT,
                                           start_new_session=True)
        self._save_state()

    def _watch_routers(self) -> None:
        """A router process that dies is restarted (its namespace forwards nothing while it is
        down: kernel forwarding is off), at most ROUTER_RESTARTS times; after that the testbed
        is torn down rather than left half working."""
        while self.is_up and not self._stopping:
            time.sleep(0.2)
            for r, p in list(self.daemons.items()):
                if self._stopping or not self.is_up or p.poll() is None:
                    continue
                n = self.router_restarts.get(r, 0)
                if n >= ROUTER_RESTARTS:
                    self.failed = f"router {r} died {n + 1} times (last exit {p.returncode}): testbed torn down"
                    print(f"castlab testbed {self.name}: {self.failed}", file=sys.stderr, flush=True)
                    self.down()
                    return
                self.router_restarts[r] = n + 1
                print(f"castlab testbed {self.name}: router {r} exited ({p.returncode}); restarting",
                      file=sys.stderr, flush=True)
                self._start_router(r)

    def router_stats(self, r: str) -> dict:
        """The router's counters as it last wrote them: every ROUTER_STATS_EVERY_S seconds
        while it runs (`stopped_by` None), and at its exit; {} before the first write."""
        f = self.state_dir / f"router-{r}" / "router_stats.json"
        return json.loads(f.read_text()) if f.exists() else {}

    def _dev_on(self, node: str, members: dict[str, str]) -> str:
        for peer in members:
            if peer != node and (node, peer) in self._ifaces:
                return self._ifaces[(node, peer)]
        raise RuntimeError(f"no interface of {node} on {members}")

    @staticmethod
    def tbf_argv(dev: str, rate_bps: float) -> list[str]:
        """The `tc` command that puts the bottleneck's token bucket on `dev` (its queue, the pfifo
        or netem, is attached below it): TBF_BURST_BYTES of burst."""
        return ["tc", "qdisc", "add", "dev", dev, "root", "handle", "1:", "tbf", "rate", f"{int(rate_bps)}bit",
                "burst", str(TBF_BURST_BYTES), "latency", "10s"]

    def _shape(self, node: str, dev: str, rate_bps: float, queue_pkts: int, delay_s: float) -> None:
        # tbf: one 1500-byte packet of burst at most (a fluid bottleneck); the queue is the pfifo
        self.run(node, self.tbf_argv(dev, rate_bps))
        if delay_s > 0 and self.netem:
            self.run(node, ["tc", "qdisc", "add", "dev", dev, "parent", "1:1", "handle", "10:", "netem",
                            "delay", f"{delay_s * 1e3:.3f}ms", "limit", str(queue_pkts)])
        else:
            self.run(node, ["tc", "qdisc", "add", "dev", dev, "parent", "1:1", "handle", "10:", "pfifo",
                            "limit", str(queue_pkts)])

    def bottleneck(self) -> tuple[str, str]:
        """(node, device) of the topology's (first) bottleneck."""
        for ln in self.topo.links:
            if ln.rate_bps is not None:
                return ln.a, self.iface(ln.a, ln.b)
        for j, lan in enumerate(self.topo.lans):
            if lan.rate_bps is not None:
                return lan.router, f"br{j}" if lan.shaping == "shared" else f"n{j}p0"
        raise ValueError(f"topology {self.topo.name} has no bottleneck")

    def _start_igmpproxy(self, r: str) -> None:
        t = self.topo
        up_peer = t.upstream(r)
        lines = ["quickleave", f"phyint {self.iface(r, up_peer)} upstream ratelimit 0 threshold 1",
                 f"  altnet {NET_PREFIX}.0.0/16"]
        done = {self.iface(r, up_peer)}
        for (n, peer), dev in self._ifaces.items():
            if n == r and dev not in done:
                done.add(dev)
                lines.append(f"phyint {dev} downstream ratelimit 0 threshold 1")
        # bridge ports are not interfaces of their own for multicast routing: the bridge is
        for j, lan in enumerate(t.lans):
            if lan.router == r:
                for k in range(len(lan.hosts)):
                    lines.append(f"phyint n{j}p{k} disabled")
        lines.append("phyint lo disabled")
        conf = self.state_dir / f"igmpproxy-{r}.conf"
        conf.write_text("\n".join(lines) + "\n")
        log = open(self.state_dir / f"igmpproxy-{r}.log", "w")
        p = subprocess.Popen(self._argv(r, ["igmpproxy", "-d", "-v", str(conf)]), stdout=log,
                             stderr=subprocess.STDOUT, start_new_session=True)
        self.daemons[r] = p
        self._save_state()

    # ---- reading the network
    def bottleneck_of(self, host: str) -> tuple[str, str]:
        """(node, device) of the bottleneck in front of `host` (its port when shaped per host)."""
        for j, lan in enumerate(self.topo.lans):
            if lan.rate_bps is not None and host in lan.hosts:
                if lan.shaping == "per-host":
                    return lan.router, f"n{j}p{lan.hosts.index(host)}"
                return lan.router, f"br{j}"
        return self.bottleneck()

    def qdisc_stats(self, host: Optional[str] = None) -> dict:
        """A bottleneck's own counters (the one in front of `host`, or the topology's first).
        Kernel routers: its qdiscs' (`tc -s -j`): sent bytes/packets, drops, overlimits,
        backlog, for the tbf and its child queue. User routers: the router's output port onto
        the bottleneck, as the router last wrote it (at most ROUTER_STATS_EVERY_S old), under
        ``"user"`` in the same keys (``drops`` = forced + early, ``overlimits`` = early drops
        and marks, ``backlog`` = ``qlen`` in packets) and, as the router names them, under
        ``"port"``."""
        node, dev = self.bottleneck() if host is None else self.bottleneck_of(host)
        if self.routers == "user":
            return self._user_queue_stats(node, dev)
        r = self.run(node, ["tc", "-s", "-j", "qdisc", "show", "dev", dev])
        out = {}
        for q in json.loads(r.stdout or "[]"):
            out[q.get("kind", "?")] = {k: q.get(k) for k in ("bytes", "packets", "drops", "overlimits", "requeues",
                                                             "backlog", "qlen")}
        return out

    def _user_queue_stats(self, node: str, dev: str) -> dict:
        if dev.startswith("br"):  # a shared LAN: the user router's one port onto it
            dev = f"n{dev[2:]}r"
        st = self.final_router_stats.get(node) or self.router_stats(node)
        port = next((p for p in st.get("ports", []) if p.get("name") == dev), None)
        if port is None:
            raise RuntimeError(f"router {node} has written no counters for {dev} yet")
        q = {"bytes": port["bytes_departed"], "packets": port["departures"],
             "drops": port["drops_forced"] + port["drops_early"],
             "overlimits": port["drops_early"] + port["marked"], "requeues": 0,
             "backlog": port["backlog"], "qlen": port["backlog"]}
        return {"user": q, "port": port, "final": bool(st.get("stopped_by"))}

    def link_rx_packets(self, node: str, peer: str) -> int:
        dev = self.iface(node, peer)
        return int(self.run(node, ["cat", f"/sys/class/net/{dev}/statistics/rx_packets"]).stdout.strip())

    def mroutes(self, router: str) -> str:
        return self.run(router, ["ip", "mroute", "show"]).stdout

    # ---- teardown
    def down(self) -> None:
        """Stop every process and daemon this testbed started (by pid) and delete its
        namespaces. Safe to call twice, and after a partial `up`."""
        self._stopping = True
        # the processes it started first (a role's last datagrams cross the routers), then the
        # routers (a user router writes its counters on the way out) and igmpproxy: each group
        # SIGTERMed at once and given 3 s together, then SIGKILLed
        _stop_together(self.procs, 3.0)
        _stop_together(list(self.daemons.values()), 3.0)
        if self.routers == "user":
            for r in self.router_argv:
                self.final_router_stats[r] = self.router_stats(r)
        self.procs.clear()
        self.daemons.clear()
        mine = [n for n in _netns_list() if n.startswith(f"{NS_PREFIX}{self.name}-")]
        _end_processes_in(mine)
        for n in mine:
            _run(["ip", "netns", "del", n], check=False)
        shutil.rmtree(self.state_dir, ignore_errors=True)
        self.is_up = False

    def _namespaces(self) -> list[str]:
        """Every namespace this testbed makes (the switches' too, with user routers)."""
        t = self.topo
        nodes = t.hosts + t.routers
        if self.routers == "user":
            nodes += [f"lan{j}" for j, lan in enumerate(t.lans) if lan.shaping == "shared"]
        return [self.ns(n) for n in nodes]

    def _save_state(self) -> None:
        """The state file: what this testbed made, for ``down`` and for ``reap_stale`` after
        its owner (this process) is gone. Written whole, then renamed."""
        if not self.state_dir.exists():
            return
        started = self.procs + list(self.daemons.values())
        me = os.getpid()
        st = {"format": STATE_FORMAT, "name": self.name, "topology": self.topo.name, "owner_pid": me,
              "owner_start": _start_time(me), "boot_id": _boot_id(), "detached": self.detached,
              "namespaces": self._namespaces(), "pids": [p.pid for p in started],
              "processes": [{"pid": p.pid, "start": _start_time(p.pid), "argv": [str(a) for a in p.args]}
                            for p in started if p.poll() is None]}
        tmp = self.state_dir / f".state.json.{me}"
        with stopping.deferred():
            tmp.write_text(json.dumps(st))
            os.replace(tmp, self.state_dir / "state.json")

    # ---- context manager: teardown on exit, error and SIGINT/SIGTERM/SIGHUP
    def __enter__(self) -> "Testbed":
        # the stop signals raise KeyboardInterrupt (castlab.stopping), so the block unwinds and
        # the testbed is torn down; one a pool worker ignores (the parent decides) stays ignored
        for s in stopping.SIGNALS:
            try:
                if signal.getsignal(s) is not signal.SIG_IGN:
                    self._old_handlers[s] = signal.signal(s, stopping.handler)
            except ValueError:  # not the main thread
                pass
        atexit.register(self.down)
        return self.up()

    def __exit__(self, *exc) -> None:
        try:
            self.down()
        finally:
            atexit.unregister(self.down)
            for s, h in self._old_handlers.items():
                signal.signal(s, h)

    def describe(self) -> str:
        t = self.topo
        lines = [f"testbed {self.name!r}: {t.description}"]
        for n in t.hosts:
            lines.append(f"  host   {n:<6} {self.addr(n):<14} netns {self.ns(n)}")
        for n in t.routers:
            lines.append(f"  router {n:<6} netns {self.ns(n)}")
        if self.routers == "user":
            for r in t.routers:
                lines.append(f"  router {r}: castlab net router " + " ".join(self.router_argv.get(r, [])[3:-4]))
            lines.append("  user-space routers: kernel forwarding off, rates, queues and delays at each router's "
                         "egress, IGMP querier in the router")
            return "\n".join(lines)
        shaped = [(f"{ln.a}->{ln.b}", ln) for ln in t.links if ln.rate_bps is not None]
        shaped += [(f"{lan.router}->LAN", lan) for lan in t.lans if lan.rate_bps is not None]
        for where, x in shaped:
            delay = (f", delay {x.delay_s * 1e3:g} ms" if self.netem else
                     f", no propagation delay (netem absent; wanted {x.delay_s * 1e3:g} ms)") if x.delay_s else ""
            lines.append(f"  bottleneck {where}: tbf {x.rate_bps / 1e6:g} Mb/s, pfifo {x.queue_pkts} pkts{delay}")
        lines.append("  multicast routing: igmpproxy in every router (IGMP-driven, quickleave)")
        return "\n".join(lines)


def _netns_list() -> list[str]:
    r = _run(["ip", "netns", "list"], check=False)
    return [line.split()[0] for line in r.stdout.splitlines() if line.strip()]


def list_testbeds() -> dict[str, list[str]]:
    """Testbeds present on this host: name -> namespaces."""
    out: dict[str, list[str]] = {}
    for n in _netns_list():
        if n.startswith(NS_PREFIX) and "-" in n[len(NS_PREFIX):]:
            name = n[len(NS_PREFIX):].split("-", 1)[0]
            out.setdefault(name, []).append(n)
    return out


def down_by_name(name: str) -> list[str]:
    """Remove a testbed left behind by a killed process: the processes whose pids its state
    file lists (all started by it), then its namespaces. Returns what was removed."""
    removed = []
    st_file = STATE_ROOT / name / "state.json"
    if st_file.exists():
        try:
            st = json.loads(st_file.read_text())
        except ValueError:
            st = {}
        for pid in st.get("pids", []):
            if _pid_alive(pid):
                _kill_pid(pid)
                removed.append(f"pid {pid}")
    mine = [n for n in _netns_list() if n.startswith(f"{NS_PREFIX}{name}-")]
    removed += [f"pid {pid} (in its namespaces)" for pid in _end_processes_in(mine)]
    for n in mine:
        _run(["ip", "netns", "del", n], check=False)
        removed.append(n)
    shutil.rmtree(STATE_ROOT / name, ignore_errors=True)
    return removed


def removed_elsewhere(tb: "Testbed") -> Optional[str]:
    """Why a testbed that is up in this process is gone, if it is: its state folder or one of
    its namespaces was removed (``castlab testbed down NAME`` from another shell), or one of
    its daemons died. None while it is whole."""
    if not tb.state_dir.exists():
        return "its state was removed (`castlab testbed down` from elsewhere?)"
    present = set(_netns_list())
    gone = [tb.ns(n) for n in tb.topo.hosts + tb.topo.routers if tb.ns(n) not in present]
    if gone:
        return f"namespace {gone[0]} was removed"
    # A user-space router that dies is the watchdog's to restart (`tb.failed` says when it gives up).
    dead = [r for r, p in tb.daemons.items()
            if p.poll() is not None and not (tb.routers == "user" and r in tb.router_argv)]
    if dead:
        return f"igmpproxy in {dead[0]} exited"
    return None


def ip_in_testbed(a: str) -> bool:
    return ipaddress.ip_address(a) in ipaddress.ip_network(f"{NET_PREFIX}.0.0/16")
