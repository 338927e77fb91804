"""Testbed topologies as data: hosts, routers, point-to-point links (one of them, or more, a
kernel bottleneck) and LANs (a bridge behind one router, as the papers' receivers sit on a
shared segment). Addresses and routes are derived here, not typed in."""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass, field
from typing import Optional

#: Every testbed address lies in 10.77.0.0/16, inside the namespaces the testbed creates (no
#: interface of it is in the host's own namespace, so nothing routes there from outside).
NET_PREFIX = "10.77"


@dataclass(frozen=True)
class Link:
    """A point-to-point link a - b (a veth pair). With `rate_bps`, the egress of `a` toward `b`
    is a kernel bottleneck: tc `tbf` at that rate with a `pfifo` of `queue_pkts` packets (and
    `netem` delay where the kernel has it)."""

    a: str
    b: str
    rate_bps: Optional[float] = None
    queue_pkts: int = 20
    delay_s: float = 0.0
    #: RED instead of DropTail, (min_th, max_th, max_p, w_q, gentle), `queue_pkts` its
    #: buffer: only with user-space routers (this kernel has no sch_red).
    red: Optional[tuple] = None


@dataclass(frozen=True)
class Lan:
    """Hosts on one segment (a Linux bridge inside the router's namespace, multicast snooping
    off: every host hears every group the router forwards onto it, as on a hub). With
    `rate_bps`, what the router sends onto the segment goes through a kernel bottleneck (tbf +
    pfifo on the bridge device), shared by every host behind it."""

    router: str
    hosts: tuple[str, ...]
    rate_bps: Optional[float] = None
    queue_pkts: int = 20
    delay_s: float = 0.0
    #: "shared": one bottleneck on the bridge device, shared by every host (a leave prunes
    #: only when the router's IGMP daemon does: igmpproxy takes tens of seconds, docs/testbed.md);
    #: "per-host": a bottleneck on each host's bridge port, with IGMP snooping and fast leave
    #: on the bridge, so a leave stops a group on that host's link at once.
    shaping: str = "shared"
    #: RED instead of DropTail, as for a link (user-space routers only).
    red: Optional[tuple] = None


@dataclass
class Topology:
    name: str
    description: str
    hosts: list[str]
    routers: list[str]
    links: list[Link]
    lans: list[Lan] = field(default_factory=list)
    #: The multicast source host (the root of every group's tree).
    source: str = "src"

    def check(self) -> None:
        names = self.hosts + self.routers
        if len(set(names)) != len(names):
            raise ValueError(f"topology {self.name}: node names must be unique")
        for n in names:
            if not n.isalnum() or len(n) > 8:
                raise ValueError(f"topology {self.name}: node name {n!r} must be alphanumeric, at most 8 characters")
        for ln in self.links:
            for end in (ln.a, ln.b):
                if end not in names:
                    raise ValueError(f"topology {self.name}: link {ln.a}-{ln.b}: no node {end!r}")
            if ln.rate_bps is not None and not (1e3 <= ln.rate_bps <= 10e9):
                raise ValueError(f"topology {self.name}: link {ln.a}-{ln.b}: rate_bps {ln.rate_bps} outside 1 kb/s..10 Gb/s")
            if not (1 <= ln.queue_pkts <= 100_000):
                raise ValueError(f"topology {self.name}: link {ln.a}-{ln.b}: queue_pkts must be 1..100000")
        for lan in self.lans:
            if lan.rate_bps is not None and not (1e3 <= lan.rate_bps <= 10e9):
                raise ValueError(f"topology {self.name}: LAN of {lan.router}: rate_bps {lan.rate_bps} outside 1 kb/s..10 Gb/s")
            if not (1 <= lan.queue_pkts <= 100_000):
                raise ValueError(f"topology {self.name}: LAN of {lan.router}: queue_pkts must be 1..100000")
            if lan.shaping not in ("shared", "per-host"):
                raise ValueError(f"topology {self.name}: LAN of {lan.router}: shaping must be 'shared' or 'per-host'")
        for x in list(self.links) + list(self.lans):
            if x.red is not None:
                if len(x.red) != 5:
                    raise ValueError(f"topology {self.name}: red must be (min_th, max_th, max_p, w_q, gentle)")
                mn, mx, p, w, _ = x.red
                if not (0 <= mn < mx and 0 <= p <= 1 and 0 < w <= 1):
                    raise ValueError(f"topology {self.name}: red {x.red}: needs 0 <= min_th < max_th, max_p in "
                                     "[0, 1], w_q in (0, 1]")
            if not (0 <= x.delay_s <= 10):
                raise ValueError(f"topology {self.name}: delay_s {x.delay_s} outside 0..10 s")
        for lan in self.lans:
            if lan.router not in self.routers:
                raise ValueError(f"topology {self.name}: LAN router {lan.router!r} is not a router")
            for h in lan.hosts:
                if h not in self.hosts:
                    raise ValueError(f"topology {self.name}: LAN host {h!r} is not a host")
        if self.source not in self.hosts:
            raise ValueError(f"topology {self.name}: source {self.source!r} is not a host")

    # ---- derived addressing: link i is 10.77.i.0/24 (a .1, b .2); LAN j is 10.77.(100+j).0/24
    def subnets(self) -> list[tuple[str, dict[str, str]]]:
        """(subnet/24, {node: address}) for every link and LAN, in order."""
        out = []
        for i, ln in enumerate(self.links):
            out.append((f"{NET_PREFIX}.{i}.0/24", {ln.a: f"{NET_PREFIX}.{i}.1", ln.b: f"{NET_PREFIX}.{i}.2"}))
        for j, lan in enumerate(self.lans):
            m = {lan.router: f"{NET_PREFIX}.{100 + j}.1"}
            for k, h in enumerate(lan.hosts):
                m[h] = f"{NET_PREFIX}.{100 + j}.{10 + k}"
            out.append((f"{NET_PREFIX}.{100 + j}.0/24", m))
        return out

    def addr(self, node: str) -> str:
        """A host's address (its first interface's)."""
        for _, m in self.subnets():
            if node in m:
                return m[node]
        raise ValueError(f"topology {self.name}: no node {node!r}")

    def neighbours(self) -> dict[str, list[tuple[str, str]]]:
        """node -> [(neighbour, neighbour's address on the shared subnet)]."""
        nb: dict[str, list[tuple[str, str]]] = {n: [] for n in self.hosts + self.routers}
        for _, m in self.subnets():
            for x in m:
                for y, ay in m.items():
                    if x != y:
                        nb[x].append((y, ay))
        return nb

    def routes(self) -> dict[str, list[tuple[str, str]]]:
        """node -> [(subnet, next-hop address)] for every subnet not directly attached, along
        shortest paths (BFS over the node graph; hosts do not forward)."""
        nb = self.neighbours()
        attached = {n: set() for n in nb}
        for net, m in self.subnets():
            for x in m:
                attached[x].add(net)
        out: dict[str, list[tuple[str, str]]] = {}
        for n in nb:
            first_hop: dict[str, str] = {}
            seen = {n}
            q = deque()
            for y, ay in nb[n]:
                if y not in seen:
                    seen.add(y)
                    first_hop[y] = ay
                    q.append(y)
            while q:
                x = q.popleft()
                if x in self.hosts:
                    continue  # hosts do not forward
                for y, _ in nb[x]:
                    if y not in seen:
                        seen.add(y)
                        first_hop[y] = first_hop[x]
                        q.append(y)
            rs = []
            for net, m in self.subnets():
                if net in attached[n]:
                    continue
                hops = [first_hop[x] for x in m if x in first_hop]
                if hops:
                    rs.append((net, hops[0]))
            out[n] = rs
        return out

    def hops(self, a: str, b: str) -> int:
        """Routers between hosts a and b (what a multicast TTL must exceed)."""
        nb = self.neighbours()
        dist = {a: 0}
        q = deque([a])
        while q:
            x = q.popleft()
            if x == b:
                break
            if x in self.hosts and x != a:
                continue
            for y, _ in nb[x]:
                if y not in dist:
                    dist[y] = dist[x] + 1
                    q.append(y)
        if b not in dist:
            raise ValueError(f"topology {self.name}: {b!r} unreachable from {a!r}")
        return dist[b] - 1

    def upstream(self, router: str) -> str:
        """The router's interface peer toward the source (igmpproxy's upstream side)."""
        nb = dict(self.neighbours())
        dist = {self.source: 0}
        q = deque([self.source])
        while q:
            x = q.popleft()
            for y, _ in nb[x]:
                if y not in dist and (y in self.routers or y == router):
                    dist[y] = dist[x] + 1
                    q.append(y)
        best = min((y for y, _ in nb[router] if y in dist), key=lambda y: dist[y])
        return best


def rlm1(receivers: int = 3, rate_bps: float = 1.5e6, queue_pkts: int = 20, delay_s: float = 0.010) -> Topology:
    """RLM's topology (1) once per receiver (McCanne et al. §4, Fig. 7): the source, one
    router, and for each receiver its own bottleneck (1.5 Mb/s, DropTail 20 packets; the 10 ms
    delay only with netem), the receivers on one segment so that they hear each other's
    join-experiment announcements. The bottleneck sits on each receiver's bridge port behind
    IGMP snooping with fast leave, so a leave stops a layer on that link within a second:
    behind igmpproxy alone a leave takes tens of seconds to prune (docs/testbed.md)."""
    hosts = ["src"] + [f"rcv{i + 1}" for i in range(receivers)]
    return Topology(
        name="rlm1",
        description=f"RLM topology (1) per receiver: src - r1 =[{rate_bps / 1e6:g} Mb/s, {queue_pkts} pkts each]=> {receivers} receivers",
        hosts=hosts,
        routers=["r1"],
        links=[Link("src", "r1")],
        lans=[Lan("r1", tuple(hosts[1:]), rate_bps, queue_pkts, delay_s, "per-host")],
    )


def lesbcc5(receiver_hosts: int = 4, rate_bps: float = 1e6, queue_pkts: int = 50, delay_s: float = 0.25) -> Topology:
    """LE-SBCC's Fig. 5 dumbbell as §5.2.1 ran it on Linux: every sender (the multicast source
    and the TCP sources) on one host, a 1 Mb/s tbf bottleneck, four receiver hosts behind it
    (each one multicast receiver and four TCP receivers). §5.2.1 sets 500 ms of round-trip
    latency with tc: `delay_s` on the bottleneck and on the source's link, so that with
    user-space routers (which delay their egress onto each link) the round trip is
    2·delay_s; with kernel routers only the bottleneck is shaped, with netem where the kernel
    has it. The queue is not stated (50 packets: ours)."""
    hosts = ["src"] + [f"rcv{i + 1}" for i in range(receiver_hosts)]
    return Topology(
        name="lesbcc5",
        description=f"LE-SBCC Fig. 5 / §5.2.1: src - r1 =[{rate_bps / 1e6:g} Mb/s, {queue_pkts} pkts]=> LAN of {receiver_hosts} receiver hosts",
        hosts=hosts,
        routers=["r1"],
        links=[Link("src", "r1", delay_s=delay_s)],
        lans=[Lan("r1", tuple(hosts[1:]), rate_bps, queue_pkts, delay_s)],
    )


def nlm8(receiver_hosts: int = 1, rate_bps: float = 1.5e6, queue_pkts: int = 20, delay_s: float = 0.010,
         access_bps: float = 10e6) -> Topology:
    """NLM's Figure 8 (§4.1): N sessions S_i -> LMR1 -> LMR2 -> R_i, the bottleneck LMR1 -> LMR2
    at `rate_bps` (Fig. 9: 1.5 Mb/s; Figs 10-11: 1.6 Mb/s), every link 10 ms and an output queue
    of 20 packets, DropTail. The access links run at `access_bps` (10 Mb/s, as the simulated
    twin: our choice where the paper gives none). Session i has source ``src`` (i = 1, the
    topology's multicast source) or ``srcI`` and receiver ``rcvI``. With user routers each
    link's delay and queue sit at the routers' egress onto it: a host's own egress onto its
    access link has neither (the simulator delays both directions)."""
    n = receiver_hosts
    if not 1 <= n <= 8:
        raise ValueError(f"nlm8: receiver_hosts (sessions) must be 1..8, got {n}")
    srcs = ["src"] + [f"src{i + 1}" for i in range(1, n)]
    rcvs = [f"rcv{i + 1}" for i in range(n)]
    links = [Link(s, "r1", access_bps, queue_pkts, delay_s) for s in srcs]
    links.append(Link("r1", "r2", rate_bps, queue_pkts, delay_s))
    links += [Link("r2", r, access_bps, queue_pkts, delay_s) for r in rcvs]
    return Topology(
        name="nlm8",
        description=f"NLM Fig. 8: {n} x S_i - r1 (LMR1) =[{rate_bps / 1e6:g} Mb/s, {queue_pkts} pkts, "
                    f"{delay_s * 1e3:g} ms]=> r2 (LMR2) - R_i",
        hosts=srcs + rcvs,
        routers=["r1", "r2"],
        links=links,
    )


#: RED as every router of the Rainbow paper's simulations runs it (§IV-A.2: "All routers are RED
#: gateways with a queue size of 10 packets"; the thresholds are ns-2's defaults of the time, as
#: in experiments/rainbow/topology.py): (min_th, max_th, max_p, w_q, gentle).
BCFS_RED = (5.0, 15.0, 0.1, 0.002, False)


def bcfs(receiver_hosts: int = 2, rate_bps: float = 400e3, queue_pkts: int = 10, slow_bps: float = 256e3,
         fast_bps: float = 1e6, source_bps: float = 10e6, source_delay_s: float = 0.005,
         uplink_delay_s: float = 0.020, slow_delay_s: float = 0.010,
         fast_delays_s: tuple[float, ...] = (0.005, 0.020), tcp_delay_s: float = 0.010) -> Topology:
    """A BCFS tree for Rainbow: the shape of the Rainbow paper's scenario A-(i) (Yano and McCanne
    Fig. 5), scaled to what two cores hold. The source ``src`` reaches ``r1`` (G0) over a fast
    link; the shared up-link ``r1`` -> ``r2`` (G1) at `rate_bps` (the paper's 400 kb/s); behind
    ``r2`` one slow receiver ``rcv1`` (256 kb/s) and `receiver_hosts` fast ones (1 Mb/s, each
    with its own delay: the paper's four are two here by default), and ``tcprx``, the far end of
    a kernel TCP flow from ``src`` that shares the up-link (as B-(iii) sets Rainbow beside TCP).
    Every link's egress in the routers is RED in a 10-packet buffer (§IV-A.2). Link delays and
    the fast rate are ours, the simulated twin's (``LINKS_A1`` in experiments/rainbow). With
    user routers each link's rate, queue and delay sit at the routers' egress onto it: a host's
    own egress onto its access link has none (the simulator shapes both directions)."""
    n = receiver_hosts
    if not 1 <= n <= 4:
        raise ValueError(f"bcfs: receiver_hosts (fast receivers) must be 1..4, got {n}")
    delays = list(fast_delays_s) + [fast_delays_s[-1]] * max(0, n - len(fast_delays_s))
    fast = [f"rcv{k + 2}" for k in range(n)]
    red = BCFS_RED
    links = [Link("src", "r1", source_bps, queue_pkts, source_delay_s, red),
             Link("r1", "r2", rate_bps, queue_pkts, uplink_delay_s, red),
             Link("r2", "rcv1", slow_bps, queue_pkts, slow_delay_s, red)]
    links += [Link("r2", h, fast_bps, queue_pkts, d, red) for h, d in zip(fast, delays)]
    links.append(Link("r2", "tcprx", fast_bps, queue_pkts, tcp_delay_s, red))
    return Topology(
        name="bcfs",
        description=f"BCFS tree (Rainbow A-(i) shape): src - r1 =[{rate_bps / 1e3:g} kb/s, RED {queue_pkts} pkts]=> "
                    f"r2 - rcv1 ({slow_bps / 1e3:g} kb/s), {n} fast receivers ({fast_bps / 1e6:g} Mb/s), tcprx",
        hosts=["src", "rcv1", *fast, "tcprx"],
        routers=["r1", "r2"],
        links=links,
    )


TOPOLOGIES = {"rlm1": rlm1, "lesbcc5": lesbcc5, "nlm8": nlm8, "bcfs": bcfs}
