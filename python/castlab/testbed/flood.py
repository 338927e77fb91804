"""Hostile frames at a live user-space router: valid IGMP reports for fresh groups and sources,
malformed or forged frames of every kind the router counts, and broken or forged datagrams
for the endpoints behind it (a PGM source, a keyed castlab source), sent from one receiver host
of a one-router testbed while a six-layer stream crosses the router to the other.

The issue's full forms, by hand (root; under a minute each)::

    sudo .venv/bin/python -m castlab.testbed.flood run --reports 3000 --rate 150
    sudo .venv/bin/python -m castlab.testbed.flood run --hostile 100000 --rate 5000
    sudo .venv/bin/python -m castlab.testbed.flood run --hostile 70000 --endpoint 30000 --rate 5000

``run`` builds the testbed (:func:`topology`: a source, one user router, two receivers each
behind its own 1.5 Mb/s router port with 20 packets of queue), starts a sink at all six layers on
``rcv1`` and the layered source (16 kb/s · 2^m, 1.008 Mb/s, under the 1.5 Mb/s bottleneck, so
the stream alone loses nothing), then floods from ``rcv2``'s link. It prints and returns the
stream's loss, the router's CPU (from /proc, over the flood and over the seconds after it) and
resident memory, the router's counters against what was sent, by kind, and with
``--endpoint`` the PGM source's and the stream source's counters against the datagrams aimed
at them. ``send`` is the flooder itself, run inside the hostile host's namespace (``run``
starts it there).

Frames are built here with :mod:`struct`: Ethernet II to 01:00:5e:00:00:16 (224.0.0.22), IPv4
with a Router Alert option (RFC 2113), IGMP (RFC 2236, RFC 3376 §4), each kind breaking one
rule. Traffic stays on the testbed's links; the groups are in 239.0.0.0/8 but for the kinds
whose point is a group outside it (never joined, so never forwarded: link-local, elsewhere in
224.0.0.0/4, or not multicast at all).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import socket
import struct
import subprocess
import sys
import time
from pathlib import Path
from typing import Callable, Optional


class Draws:
    """The flood's random choices, from the ``testbed-flood`` stream (castlab.streams)."""

    def __init__(self, seed: int):
        from castlab.streams import rng

        self._g = rng(seed, "testbed-flood")

    def randrange(self, a: int, b: Optional[int] = None) -> int:
        """An integer in [0, a), or in [a, b)."""
        return int(self._g.integers(a) if b is None else self._g.integers(a, b))

    def getrandbits(self, k: int) -> int:
        """An integer of k random bits (k at most 64)."""
        return int(self._g.integers(0, 1 << k, dtype="uint64", endpoint=False))


ALL_REPORTERS = "224.0.0.22"
MAC_22 = bytes([1, 0, 0x5E, 0, 0, 22])
HOSTILE_MAC = bytes([2, 0, 0, 0, 0xBA, 0xD0])
ETH_P_IP = 0x0800
V2_REPORT, V3_REPORT = 0x16, 0x22
TO_EX, ALLOW = 4, 5
OFF_LINK = "10.123.45.67"


def csum(b: bytes) -> int:
    """The Internet checksum (RFC 1071)."""
    if len(b) % 2:
        b += b"\0"
    s = sum(struct.unpack(f"!{len(b) // 2}H", b))
    while s >> 16:
        s = (s & 0xFFFF) + (s >> 16)
    return ~s & 0xFFFF


def ipv4(src: str, payload: bytes, *, ttl: int = 1, options: bytes = b"\x94\x04\x00\x00", proto: int = 2,
         dst: str = ALL_REPORTERS, total_extra: int = 0, bad_csum: bool = False) -> bytes:
    """An IPv4 header (with `options`, a Router Alert by default) and `payload`."""
    hl = 20 + len(options)
    h = struct.pack("!BBHHHBBH4s4s", 0x40 | hl // 4, 0xC0, hl + len(payload) + total_extra, 0, 0, ttl, proto, 0,
                    socket.inet_aton(src), socket.inet_aton(dst)) + options
    c = csum(h) ^ (0x5A5A if bad_csum else 0)
    return h[:10] + struct.pack("!H", c) + h[12:] + payload


def igmp(body: bytes, bad_csum: bool = False) -> bytes:
    """An IGMP message with its checksum (bytes 2-3 of `body` are overwritten)."""
    b = body[:2] + b"\0\0" + body[4:]
    c = csum(b) ^ (0x1111 if bad_csum else 0)
    return b[:2] + struct.pack("!H", c) + b[4:]


def v3(kind: int, group: str, sources: tuple[str, ...] = (), claim: Optional[int] = None) -> bytes:
    """An IGMPv3 report of one record (`claim`: the number of sources it says it has)."""
    n = len(sources) if claim is None else claim
    rec = struct.pack("!BBH4s", kind, 0, n, socket.inet_aton(group)) + b"".join(socket.inet_aton(s) for s in sources)
    return igmp(struct.pack("!BBHHH", V3_REPORT, 0, 0, 0, 1) + rec)


def v2(group: str) -> bytes:
    return igmp(struct.pack("!BBH4s", V2_REPORT, 0, 0, socket.inet_aton(group)))


def eth(ip: bytes) -> bytes:
    f = MAC_22 + HOSTILE_MAC + struct.pack("!H", ETH_P_IP) + ip
    return f + b"\0" * max(0, 60 - len(f))


def _addr(base: int, k: int) -> str:
    return socket.inet_ntoa(struct.pack("!I", base + k))


G_FRESH = struct.unpack("!I", socket.inet_aton("239.200.0.0"))[0]
S_FRESH = struct.unpack("!I", socket.inet_aton("10.200.0.0"))[0]
G_MANY = "239.201.0.1"  # one group that collects many sources


def valid_report(src: str, k: int) -> bytes:
    """The k-th valid report: a fresh group any-source (k % 3 == 0), a fresh source of a fresh
    group (1), eight fresh sources of one group (2)."""
    if k % 3 == 0:
        return eth(ipv4(src, v3(TO_EX, _addr(G_FRESH, k))))
    if k % 3 == 1:
        return eth(ipv4(src, v3(ALLOW, _addr(G_FRESH, k), (_addr(S_FRESH, k),))))
    return eth(ipv4(src, v3(ALLOW, G_MANY, tuple(_addr(S_FRESH, 8 * k + j) for j in range(8)))))


def wanted_memberships(n: int) -> int:
    """Distinct memberships (any-source groups and (S, G) pairs) `n` valid reports ask for."""
    return (n + 2) // 3 + (n + 1) // 3 + 8 * (n // 3)


# Each hostile kind: (builder of the frame from the host's address and an rng, the router counter
# it must land in; None where a mutation decides). Groups are 239/8 unless the kind is about that.
HOSTILE: dict[str, tuple[Callable[[str, Draws], bytes], Optional[str]]] = {
    # the IP total length claims 40 bytes more than the frame has
    "truncated": (lambda s, r: eth(ipv4(s, v3(TO_EX, "239.202.0.1"), total_extra=40)), "truncated"),
    "bad_ip_checksum": (lambda s, r: eth(ipv4(s, v3(TO_EX, "239.202.0.2"), bad_csum=True)), "bad_ip_checksum"),
    # an option whose length (1) is below the minimum of 2
    "bad_ip_options": (lambda s, r: eth(ipv4(s, v3(TO_EX, "239.202.0.3"), options=b"\x94\x01\x00\x00")),
                       "bad_ip_options"),
    "bad_igmp_checksum": (lambda s, r: eth(ipv4(s, igmp(v3(TO_EX, "239.202.0.4"), bad_csum=True))), "bad_igmp"),
    # a record claiming 50 sources and carrying one
    "record_overrun": (lambda s, r: eth(ipv4(s, v3(ALLOW, "239.202.0.5", ("10.9.9.9",), claim=50))), "bad_igmp"),
    # a v2 report for an address that is not a group
    "not_a_group": (lambda s, r: eth(ipv4(s, v2("10.1.2.3"))), "bad_igmp"),
    "ttl_2": (lambda s, r: eth(ipv4(s, v3(TO_EX, "239.202.0.6"), ttl=2)), "igmp_bad_ttl"),
    "no_router_alert": (lambda s, r: eth(ipv4(s, v3(TO_EX, "239.202.0.7"), options=b"")), "igmp_no_router_alert"),
    "off_link_source": (lambda s, r: eth(ipv4(OFF_LINK, v3(TO_EX, "239.202.0.8"))), "igmp_off_link"),
    # sources that cannot send: a group address, 0.0.0.0
    "impossible_source": (lambda s, r: eth(ipv4(s, v3(ALLOW, "239.202.0.9", ("224.1.1.1",)))), "igmp_bad_source"),
    "link_local_group": (lambda s, r: eth(ipv4(s, v2("224.0.0.77"))), "igmp_link_local"),
    # a group outside 239.0.0.0/8 (the router takes 239/8 only, unless --allow-any-group)
    "group_outside_239": (lambda s, r: eth(ipv4(s, v3(TO_EX, "230.1.2.3"))), "igmp_out_of_scope"),
    # one random bit of a valid report flipped after the Ethernet header: it breaks the IP
    # header's consistency or checksum, or IGMP's checksum (one flipped bit always changes a
    # ones'-complement sum)
    "mutated": (lambda s, r: _mutate(eth(ipv4(s, v3(TO_EX, "239.202.0.10"))), r), None),
}

# where a mutated frame lands
MUTATION_COUNTERS = ("truncated", "bad_ip_header", "bad_ip_checksum", "bad_igmp")


def _mutate(f: bytes, r: Draws) -> bytes:
    b = bytearray(f)
    i = r.randrange(14, 14 + 24 + 16)
    b[i] ^= 1 << r.randrange(8)
    return bytes(b)


# ------------------------------------------------------------------ datagrams at the endpoints

PGM_NAK, PGM_NCF = 0x08, 0x0A


def pgm(kind: int, body: bytes, *, gsi: bytes = b"cl\0\0\0\x5c", options: int = 0, sport: int = 7500,
        dport: int = 1, bad_csum: bool = False) -> bytes:
    """A PGM packet (RFC 3208 §8: the common header, then `body`), its checksum over the whole."""
    h = struct.pack("!HHBBH6sH", sport, dport, kind, options, 0, gsi, 0) + body
    c = csum(h) or 0xFFFF
    c ^= 0x0F0F if bad_csum else 0
    return h[:6] + struct.pack("!H", c) + h[8:]


def nak_body(sqn: int, source: str, group: str) -> bytes:
    """A NAK's or NCF's body (§8.3): the sequence number, the source NLA, the group NLA."""
    return struct.pack("!IHH4sHH4s", sqn, 1, 0, socket.inet_aton(source), 1, 0, socket.inet_aton(group))


# Each kind aimed at the endpoints: (builder from (the PGM source's address and group, a
# captured genuine envelope datagram, an rng), where it goes, the endpoint's counter).
def _env(f: Callable[[bytearray, Draws], bytes]) -> Callable[[tuple, bytes, Draws], bytes]:
    return lambda pg, d, r: f(bytearray(d), r)


def _flip_mac(d: bytearray, r: Draws) -> bytes:
    d[20 + r.randrange(16)] ^= 1 << r.randrange(8)
    return bytes(d)


def _set(d: bytearray, at: int, b: bytes) -> bytes:
    d[at:at + len(b)] = b
    return bytes(d)


def _strip_mac(d: bytearray, r: Draws) -> bytes:
    """The MAC flag and field taken off, the datagram padded back to its size."""
    d[5] &= ~1
    return bytes(d[:20] + d[36:]) + bytes(16)


ENDPOINT: dict[str, tuple[Callable[[tuple, bytes, Draws], bytes], str, str]] = {
    # PGM at the PGM source: a NAK and an NCF whose bodies are too short, a NAK whose option
    # length runs past the packet, a NAK with a bad checksum, a well-formed NAK for another TSI
    "pgm_nak_short": (lambda pg, d, r: pgm(PGM_NAK, nak_body(5, *pg)[:12]), "pgm", "malformed"),
    "pgm_ncf_short": (lambda pg, d, r: pgm(PGM_NCF, nak_body(5, *pg)[:8]), "pgm", "malformed"),
    "pgm_nak_bad_options": (lambda pg, d, r: pgm(PGM_NAK, nak_body(5, *pg) + struct.pack("!BBH", 0, 4, 400),
                                                 options=1), "pgm", "malformed"),
    "pgm_nak_bad_checksum": (lambda pg, d, r: pgm(PGM_NAK, nak_body(5, *pg), bad_csum=True), "pgm", "malformed"),
    "pgm_nak_foreign_tsi": (lambda pg, d, r: pgm(PGM_NAK, nak_body(5, *pg), gsi=b"xx\0\0\0\1"), "pgm",
                            "foreign_session"),
    # castlab envelopes at the stream's source (its own link is fast: the sink's bottleneck
    # would drop them as any excess), made from a genuine keyed datagram of the stream: a MAC
    # byte flipped, the epoch or the session changed, the MAC taken off, cut inside its header
    "env_bad_mac": (_env(_flip_mac), "source", "bad_mac"),
    "env_forged_epoch": (_env(lambda d, r: _set(d, 12, struct.pack("!Q", r.getrandbits(64)))), "source", "bad_mac"),
    "env_other_session": (_env(lambda d, r: _set(d, 8, struct.pack("!I", 0xBAD0 + r.randrange(100)))), "source",
                          "foreign_session"),
    "env_no_mac": (_env(_strip_mac), "source", "unauthenticated"),
    "env_cut": (_env(lambda d, r: bytes(d[:r.randrange(20)])), "source", "malformed"),
}


def capture(group: str, source: str, port: int, me: str, timeout: float = 10.0) -> bytes:
    """One datagram of (source, group) at `port`, joined source-specifically from `me`."""
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    s.bind((group, port))
    mreq = socket.inet_aton(group) + socket.inet_aton(me) + socket.inet_aton(source)
    s.setsockopt(socket.IPPROTO_IP, 39, mreq)  # IP_ADD_SOURCE_MEMBERSHIP
    s.settimeout(timeout)
    try:
        return s.recv(70000)
    finally:
        s.setsockopt(socket.IPPROTO_IP, 40, mreq)  # IP_DROP_SOURCE_MEMBERSHIP
        s.close()


def _hostport(x: str) -> tuple[str, int]:
    a, p = x.rsplit(":", 1)
    return a, int(p)


def send(iface: str, src: str, reports: int, hostile: int, rate: float, seed: int, endpoint: int = 0,
         stream_source: Optional[str] = None, stream: Optional[str] = None, pgm_source: Optional[str] = None,
         pgm_group: Optional[str] = None) -> dict:
    """Send `reports` valid reports, then `hostile` hostile frames (kinds in turn, in a seeded
    order), at `rate` frames a second, on `iface` of this namespace; then `endpoint` datagrams
    of the ENDPOINT kinds: to `stream_source` (ADDR:PORT, the stream's source agent; made from
    one datagram captured of `stream`, SOURCE:GROUP:PORT) and to `pgm_source` (ADDR:PORT, its
    group `pgm_group`). Returns what was
    sent, by kind, and how long it took."""
    s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW, 0)
    s.bind((iface, 0))
    rng = Draws(seed)
    kinds = list(HOSTILE)
    sent: dict[str, int] = {"reports": 0}
    genuine = b""
    if endpoint:
        if not (stream_source and stream and pgm_source and pgm_group):
            raise ValueError("endpoint datagrams need --stream-source, --stream, --pgm-source and --pgm-group")
        ssrc, sgroup, sport = stream.split(":")
        genuine = capture(sgroup, ssrc, int(sport), src)
    t0 = time.perf_counter()
    n = 0

    def pace() -> None:
        due = t0 + n / rate
        wait = due - time.perf_counter()
        if wait > 0.0005:
            time.sleep(wait)

    for k in range(reports):
        s.send(valid_report(src, k))
        sent["reports"] += 1
        n += 1
        pace()
    for k in range(hostile):
        kind = kinds[rng.randrange(len(kinds))]
        s.send(HOSTILE[kind][0](src, rng))
        sent[kind] = sent.get(kind, 0) + 1
        n += 1
        pace()
    s.close()
    if endpoint:
        u = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        to = {"source": _hostport(stream_source or ""), "pgm": _hostport(pgm_source or "")}
        pg = (to["pgm"][0], pgm_group)
        ekinds = list(ENDPOINT)
        for k in range(endpoint):
            kind = ekinds[rng.randrange(len(ekinds))]
            build, where, _ = ENDPOINT[kind]
            u.sendto(build(pg, genuine, rng), to[where])
            sent[kind] = sent.get(kind, 0) + 1
            n += 1
            pace()
        u.close()
    return {"sent": sent, "seconds": time.perf_counter() - t0}


# ---------------------------------------------------------------------------------------- run

def _cpu_s(pid: int) -> float:
    f = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(f[11]) + int(f[12])) / os.sysconf("SC_CLK_TCK")


def _rss_kib(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    return -1


# The router's counters a frame of the flooder ends in (one each): what it refused and why,
# and the IGMP it took.
FRAME_COUNTERS = ("truncated", "unsupported", "bad_arp", "bad_ip_header", "bad_ip_checksum", "bad_udp_header",
                  "bad_udp_checksum", "bad_igmp", "bad_ip_options", "oversize", "other_ethertype", "not_for_us",
                  "martian", "igmp_bad_ttl", "igmp_no_router_alert", "igmp_off_link", "igmp_reports", "igmp_leaves",
                  "igmp_queries_heard")


# The stream's session (keyed: the sink checks every datagram's MAC) and the PGM source's.
STREAM_PORT, STREAM_GROUP = 47000, "239.255.0.1"
STREAM_KEY = bytes.fromhex("5ca1ab1e" * 4)
PGM_PORT, PGM_GROUP = 48000, "239.255.50.1"


def topology():
    """The flood's testbed: a source, one router, and two receivers each behind its own port of
    the router (1.5 Mb/s, DropTail 20 packets), so the stream to one and the flood from the
    other meet only in the router."""
    from castlab.testbed import Lan, Link, Topology

    return Topology(name="flood", description="src - r1 =[1.5 Mb/s, 20 pkts each]=> rcv1, rcv2",
                    hosts=["src", "rcv1", "rcv2"], routers=["r1"], links=[Link("src", "r1")],
                    lans=[Lan("r1", ("rcv1", "rcv2"), 1.5e6, 20, 0.010, "per-host")])


def _pgm_source_role() -> str:
    """The registered network source role that speaks PGM on the wire (``--wire pgm``)."""
    from castlab import _registry

    for p in _registry.protocols():
        for role in p.get("net_roles", []):
            wire = next((f for f in role.get("flags", []) if f["name"] == "wire"), None)
            if role.get("source") and wire is not None and "pgm" in (wire.get("choices") or []):
                return role["cli"]
    raise RuntimeError("no registered network source speaks PGM on the wire")


def run(reports: int = 0, hostile: int = 0, rate: float = 150.0, *, endpoint: int = 0, seed: int = 1,
        after_s: float = 5.0, out: Optional[Path] = None, name: Optional[str] = None,
        say: Callable[[str], None] = print) -> dict:
    """The flood on :func:`topology`'s testbed (see the module's text); returns the measurements."""
    import tempfile

    import pandas as pd

    from castlab.testbed import Testbed

    out = Path(out) if out is not None else Path(tempfile.mkdtemp(prefix="castlab-flood-"))
    flood_s = (reports + hostile + endpoint) / rate
    duration = 2.0 + flood_s + after_s
    topo = topology()
    res: dict = {"reports": reports, "hostile": hostile, "rate": rate, "seed": seed}
    session = {"session": 91, "key": STREAM_KEY, "port_base": STREAM_PORT, "group_base": STREAM_GROUP}
    with Testbed(topo, name or f"f{os.getpid() % 100000}", routers="user", session=session) as tb:
        ttl = tb.topo.hops("src", "rcv1") + 1
        words = [*tb.session_words(), "--ttl", str(ttl)]
        castlab = [sys.executable, "-m", "castlab", "net"]
        sink = tb.spawn("rcv1", [*castlab, "sink", "--layers", 6, "--level", 6, "--addr", tb.addr("rcv1"),
                                 "--node", 1, "--iface-addr", tb.addr("rcv1"), "--duration", duration + 2,
                                 "--out", out / "sink", *words],
                        stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
        time.sleep(0.5)
        src = tb.spawn("src", [*castlab, "source", "--layers", 6, "--base-rate", "16k", "--duration", duration,
                               "--iface-addr", tb.addr("src"), "--out", out / "source", *words],
                       stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
        pgm_src = None
        if endpoint:
            # a PGM source of its own session, for the PGM datagrams to aim at (no member: its
            # packets stop at the router)
            pgm_src = tb.spawn("src", [*castlab, _pgm_source_role(), "--wire", "pgm", "--duration", duration,
                                       "--iface-addr", tb.addr("src"), "--source-addr", tb.addr("src"),
                                       "--ttl", str(ttl), "--session", 92, "--group-base", PGM_GROUP,
                                       "--port-base", PGM_PORT, "--out", out / "pgm_source"],
                               stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
        pid = tb.daemons["r1"].pid
        time.sleep(2.0)
        snap = tb.router_stats("r1")
        before = snap.get("stats", {})
        hostile_if = tb.iface("r1", "rcv2")
        rx0 = next((p["rx_frames"] for p in snap.get("ports", []) if p["name"] == hostile_if), 0)
        res["periodic_tables"] = any("groups" in p for p in snap.get("ports", []))
        rss0, cpu0, t0 = _rss_kib(pid), _cpu_s(pid), time.monotonic()
        say(f"[flood] {reports} reports, {hostile} hostile frames and {endpoint} datagrams at {rate:g}/s from rcv2 "
            f"({flood_s:.1f} s) while 6 layers (1.008 Mb/s) cross r1 to rcv1")
        fl = tb.run("rcv2", [sys.executable, "-m", "castlab.testbed.flood", "send", "--iface",
                             tb.iface("rcv2", "r1"), "--src", tb.addr("rcv2"), "--reports", reports, "--hostile",
                             hostile, "--rate", rate, "--seed", seed, "--endpoint", endpoint,
                             "--stream-source", f"{tb.addr('src')}:{STREAM_PORT + 1}",
                             "--stream", f"{tb.addr('src')}:{STREAM_GROUP}:{STREAM_PORT}",
                             "--pgm-source", f"{tb.addr('src')}:{PGM_PORT}", "--pgm-group", PGM_GROUP],
                    timeout=flood_s * 3 + 60)
        sent = json.loads(fl.stdout)
        cpu1, t1, rss_peak = _cpu_s(pid), time.monotonic(), _rss_kib(pid)
        time.sleep(after_s)
        cpu2, t2, rss2 = _cpu_s(pid), time.monotonic(), _rss_kib(pid)
        src_out = src.communicate(timeout=duration + 60)[0].decode()
        sink_out = sink.communicate(timeout=duration + 60)[0].decode()
        pgm_out = pgm_src.communicate(timeout=duration + 60)[0].decode() if pgm_src else ""
        alive = tb.daemons["r1"].poll() is None
        res["router_restarts"] = dict(tb.router_restarts)
    final = tb.final_router_stats.get("r1", {})
    after = final.get("stats", {})
    delta = {k: after.get(k, 0) - before.get(k, 0) for k in after if isinstance(after.get(k), int)}
    port = next((p for p in final.get("ports", []) if p["name"] == hostile_if), {})
    arr = pd.read_csv(out / "sink" / "arrivals.csv")
    losses = pd.read_csv(out / "sink" / "losses.csv")
    m = re.search(r"sent (\d+) datagrams", src_out)
    res.update(
        sent=sent["sent"], flood_seconds=sent["seconds"], router_alive=alive,
        stream_sent=int(m.group(1)) if m else None, stream_received=len(arr),
        stream_lost=int(losses["count"].sum()) if len(losses) else 0,
        router_cpu_flood=(cpu1 - cpu0) / (t1 - t0), router_cpu_after=(cpu2 - cpu1) / (t2 - t1),
        router_rss_kib=[rss0, rss_peak, rss2], counters=delta,
        hostile_port={k: port.get(k) for k in ("igmp_groups", "igmp_sources", "rx_frames", "rx_kernel_drops")},
        hostile_port_rx=port.get("rx_frames", 0) - rx0,
        hostile_port_groups=len(port.get("groups", [])),
        hostile_port_any_source=sum(1 for g in port.get("groups", []) if g[1]),
        src_exit=src.returncode, sink_exit=sink.returncode,
        sink_out=sink_out[-2000:], pgm_out=pgm_out[-2000:],
        pgm_exit=pgm_src.returncode if pgm_src else None)
    ep_stats = {}
    for where, d in (("source", out / "source"), ("pgm", out / "pgm_source")):
        f = d / "net_stats.json"
        ep_stats[where] = json.loads(f.read_text())["stats"] if f.exists() else {}
    res["endpoint_stats"] = ep_stats
    ep_expected: dict[str, dict[str, int]] = {"source": {}, "pgm": {}}
    for kind, n in sent["sent"].items():
        if kind in ENDPOINT:
            _, where, c = ENDPOINT[kind]
            ep_expected[where][c] = ep_expected[where].get(c, 0) + n
    res["endpoint_expected"] = ep_expected
    expected: dict[str, int] = {}
    for kind, n in sent["sent"].items():
        c = HOSTILE[kind][1] if kind in HOSTILE else None
        if c:
            expected[c] = expected.get(c, 0) + n
    res["expected"] = expected
    res["frames_counted"] = sum(delta.get(k, 0) for k in FRAME_COUNTERS)
    say(f"[flood] stream: {res['stream_sent']} sent, {res['stream_received']} received, {res['stream_lost']} lost; "
        f"router CPU {100 * res['router_cpu_flood']:.1f} % during the flood, {100 * res['router_cpu_after']:.1f} % "
        f"in the {after_s:g} s after; RSS {rss0} -> {rss_peak} -> {rss2} KiB; router restarted: "
        f"{res['router_restarts'] or 'no'}")
    say(f"[flood] rcv2's link: {port.get('igmp_groups')} groups, {port.get('igmp_sources')} sources; "
        f"kernel drops {port.get('rx_kernel_drops')}; frames counted {res['frames_counted']} of "
        f"{reports + hostile} sent")
    for c in sorted(set(expected) | {k for k in delta if k.startswith("igmp_") or k.startswith("bad_")}):
        if delta.get(c, 0) or expected.get(c):
            say(f"[flood]   {c:<22} {delta.get(c, 0):>8}  (sent for it: {expected.get(c, '-')})")
    for where in ("source", "pgm"):
        for c, k in sorted(ep_expected[where].items()):
            say(f"[flood]   {where} {c:<17} {ep_stats[where].get(c, 0):>8}  (sent for it: {k})")
    (out / "flood.json").write_text(json.dumps({k: v for k, v in res.items() if not k.endswith("_out")}, indent=1))
    return res


def main(argv=None) -> int:
    p = argparse.ArgumentParser(prog="python -m castlab.testbed.flood", description=__doc__.split("\n\n")[0])
    sub = p.add_subparsers(dest="cmd", required=True)
    s = sub.add_parser("send", help="send the frames on an interface of this namespace (inside the hostile host)")
    s.add_argument("--iface", required=True)
    s.add_argument("--src", required=True, help="the host's address (the reports' source)")
    s.add_argument("--stream-source", default=None, metavar="ADDR:PORT", help="the stream's source agent")
    s.add_argument("--stream", default=None, metavar="SOURCE:GROUP:PORT",
                   help="the keyed stream one genuine datagram is captured of")
    s.add_argument("--pgm-source", default=None, metavar="ADDR:PORT")
    s.add_argument("--pgm-group", default=None)
    for q in (s, r := sub.add_parser("run", help="build the testbed, stream across r1 and flood it; print the numbers")):
        q.add_argument("--reports", type=int, default=0, help="valid IGMPv3 reports for fresh groups and sources")
        q.add_argument("--hostile", type=int, default=0, help="malformed and forged frames, every kind in turn")
        q.add_argument("--rate", type=float, default=150.0, help="frames a second (default %(default)s)")
        q.add_argument("--seed", type=int, default=1)
        q.add_argument("--endpoint", type=int, default=0,
                       help="datagrams at the endpoints: PGM NAKs and NCFs of wrong lengths at a PGM source, "
                            "forged and broken envelopes at the stream's sink")
    r.add_argument("--after", type=float, default=5.0, help="seconds measured after the flood (default 5)")
    r.add_argument("--out", default=None, help="directory for the sink's records and flood.json")
    a = p.parse_args(argv)
    if not (a.rate > 0 and a.reports >= 0 and a.hostile >= 0 and a.endpoint >= 0):
        p.error("--rate must be > 0, --reports, --hostile and --endpoint >= 0")
    if a.cmd == "send":
        print(json.dumps(send(a.iface, a.src, a.reports, a.hostile, a.rate, a.seed, a.endpoint, a.stream_source,
                              a.stream, a.pgm_source, a.pgm_group)))
        return 0
    res = run(a.reports, a.hostile, a.rate, endpoint=a.endpoint, seed=a.seed, after_s=a.after, out=a.out)
    ok = res["router_alive"] and not res["router_restarts"] and res["stream_lost"] == 0
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
