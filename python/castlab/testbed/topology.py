"""Testbed topologies as data: hosts, routers, point-to-point links (one of them, or more, a
kernel bottleneck) and LANs (a bridge behind one router, as the papers' receivers sit on a
shared segment). Addresses and routes are derived here, not typed in.

The papers' set-ups are not written here: each paper's experiments define theirs beside them
(``castlab/experiments/<paper>/testbed.py``), as a function returning a :class:`Topology`
decorated with :func:`register`. :func:`topologies` is the table ``castlab testbed up NAME``
and ``from castlab.testbed import NAME`` read."""

from __future__ import annotations

import importlib
from collections import deque
from dataclasses import dataclass, field
from typing import Callable, Optional

#: Every testbed address lies in 10.77.0.0/16, inside the namespaces the testbed creates (no
#: interface of it is in the host's own namespace, so nothing routes there from outside).
NET_PREFIX = "10.77"
#: The kernel bottleneck's token bucket, bytes (`tc ... tbf rate R burst TBF_BURST_BYTES`): room
#: for one full-size frame (1500 bytes and the 14-byte Ethernet header tbf charges) and no more, so
#: the bottleneck passes no train of packets; a packet that finds the bucket full leaves at once.
#: Simulated twins of a testbed take the same bucket on their bottleneck links (`tbf_burst`).
TBF_BURST_BYTES = 1600


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


@dataclass(frozen=True)
class Registered:
    """A registered topology: its builder (keyword arguments only, each with a default) and the
    keyword that ``castlab testbed up --receivers N`` sets."""

    make: Callable[..., Topology]
    receivers: str = "receiver_hosts"


#: name -> its registration, filled by :func:`register`; read it through :func:`topologies`.
TOPOLOGIES: dict[str, Registered] = {}

#: The package whose import registers every paper's topologies.
PROVIDERS = "castlab.experiments"


def register(name: str, *, receivers: str = "receiver_hosts") -> Callable[[Callable[..., Topology]], Callable[..., Topology]]:
    """Decorator: register a topology builder under `name` (the name the command line takes),
    with `receivers` the builder's keyword for the receiver count. Returns the builder
    unchanged."""

    def deco(make: Callable[..., Topology]) -> Callable[..., Topology]:
        old = TOPOLOGIES.get(name)
        if old is not None and old.make is not make:
            raise ValueError(f"testbed topology {name!r} registered twice")
        TOPOLOGIES[name] = Registered(make, receivers)
        return make

    return deco


def topologies() -> dict[str, Registered]:
    """Every registered topology, by name. The experiments register theirs when their package
    is imported; it is imported here, on first use, since it imports this module."""
    importlib.import_module(PROVIDERS)
    return TOPOLOGIES
