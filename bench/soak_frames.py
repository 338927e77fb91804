"""What crossed a link, by kind, from a capture; and a namespace's IP and UDP counters. Used by
`soak_testbed.py` to account for every frame a bottleneck forwarded.

`count_frames(pcap, own_mac, since, until)` reads a classic pcap file (Ethernet link type, as
`dumpcap -P` writes it). Frames whose source MAC is `own_mac` are the capturing host's own (they
leave by the same interface): they are counted as ``outbound`` and their IGMP reports and leaves
tell which groups the host held at each instant. Every other frame captured in the window
(`since`, `until`] (seconds since the epoch) is counted by kind: ``session`` (IPv4 UDP to
239.0.0.0/8, the testbed's session groups), ``igmp``, ``ipv4_other``, ``ipv6`` (neighbour
discovery, MLD), ``arp`` and ``other``; ``session_not_member`` counts the session datagrams
that arrived for a group the host had left (its last report for the group was a leave) or not
yet joined, which the host's IP layer drops before any socket sees them, and
``igmp_not_member`` the group-specific queries it drops for the same reason;
``own_igmp_looped`` counts the host's own IGMP reports sent to a group it holds, which come
back to it by multicast loopback (in the window only). ``detail`` counts IGMP
by type and destination (general query to 224.0.0.1, group-specific query) and IPv6 by ICMPv6
type. Frames outside the window are counted in ``before`` and ``after``.
"""

from __future__ import annotations

import struct
from pathlib import Path

_MAGIC = {b"\xd4\xc3\xb2\xa1": ("<", 1e-6), b"\xa1\xb2\xc3\xd4": (">", 1e-6),
          b"\x4d\x3c\xb2\xa1": ("<", 1e-9), b"\xa1\xb2\x3c\x4d": (">", 1e-9)}
KINDS = ("session", "igmp", "ipv4_other", "ipv6", "arp", "other")
_IGMP = {0x11: "query", 0x12: "v1_report", 0x16: "v2_report", 0x17: "v2_leave", 0x22: "v3_report"}
_ICMP6 = {130: "mld_query", 131: "mld_report", 132: "mld_done", 133: "router_solicitation",
          134: "router_advertisement", 135: "neighbour_solicitation", 136: "neighbour_advertisement",
          143: "mldv2_report"}


def _ip(b: bytes) -> str:
    return ".".join(str(x) for x in b)


def _parse(frame: bytes):
    """(kind, detail, (ihl offset, ip header) or None)."""
    if len(frame) < 14:
        return "other", "short", None
    etype, off = struct.unpack_from("!H", frame, 12)[0], 14
    if etype == 0x8100 and len(frame) >= 18:  # one VLAN tag
        etype, off = struct.unpack_from("!H", frame, 16)[0], 18
    if etype == 0x0806:
        return "arp", "arp", None
    if etype == 0x86DD:
        nh = frame[off + 6] if len(frame) > off + 6 else -1
        # MLD carries a hop-by-hop header (Router Alert) before ICMPv6
        if nh == 0 and len(frame) > off + 40 + 8:
            nh, l4 = frame[off + 40], off + 40 + (frame[off + 41] + 1) * 8
        else:
            l4 = off + 40
        if nh == 58 and len(frame) > l4:
            return "ipv6", _ICMP6.get(frame[l4], f"icmpv6_{frame[l4]}"), None
        return "ipv6", f"ipv6_next_{nh}", None
    if etype != 0x0800 or len(frame) < off + 20:
        return "other", f"ethertype_{etype:#06x}", None
    ihl = (frame[off] & 15) * 4
    proto, dst = frame[off + 9], frame[off + 16: off + 20]
    if proto == 17 and dst[0] == 239:
        return "session", _ip(dst), (off, ihl)
    if proto == 2 and len(frame) >= off + ihl + 8:
        t = frame[off + ihl]
        name = _IGMP.get(t, f"igmp_{t:#x}")
        if t == 0x11:
            g = _ip(frame[off + ihl + 4: off + ihl + 8])
            name = "general_query" if g == "0.0.0.0" else "group_query"
        return "igmp", name, (off, ihl)
    return "ipv4_other", f"proto_{proto}", (off, ihl)


def _membership(frame: bytes, off: int, ihl: int, held: dict[str, bool]) -> None:
    """Update `held` (group -> held) from one of the host's own IGMP frames."""
    i = off + ihl
    t = frame[i]
    if t in (0x12, 0x16) and len(frame) >= i + 8:
        held[_ip(frame[i + 4: i + 8])] = True
    elif t == 0x17 and len(frame) >= i + 8:
        held[_ip(frame[i + 4: i + 8])] = False
    elif t == 0x22 and len(frame) >= i + 8:
        n, j = struct.unpack_from("!H", frame, i + 6)[0], i + 8
        for _ in range(n):
            if len(frame) < j + 8:
                break  # cut by the snap length: the rest of the report is not known
            rtype, aux, nsrc = frame[j], frame[j + 1], struct.unpack_from("!H", frame, j + 2)[0]
            g = _ip(frame[j + 4: j + 8])
            # EXCLUDE modes (2, 4) hold the group; INCLUDE with sources (1, 3, 5) holds it;
            # TO_IN{} (3 with none) and BLOCK (6) of the only source leave it
            if rtype in (2, 4) or (rtype in (1, 3, 5) and nsrc > 0):
                held[g] = True
            elif rtype in (3, 6):
                held[g] = False
            j += 8 + 4 * nsrc + 4 * aux


def count_frames(pcap: Path, own_mac: str, since: float = float("-inf"), until: float = float("inf")) -> dict:
    """Frames of `pcap` by kind (module documentation)."""
    own = bytes.fromhex(own_mac.replace(":", ""))
    out: dict = {k: 0 for k in KINDS}
    out.update(session_not_member=0, igmp_not_member=0, outbound=0, own_igmp_looped=0, before=0, after=0,
               detail={})
    held: dict[str, bool] = {}
    data = Path(pcap).read_bytes()
    if len(data) < 24 or data[:4] not in _MAGIC:
        raise ValueError(f"{pcap}: not a classic pcap file")
    e, unit = _MAGIC[data[:4]]
    if struct.unpack_from(e + "I", data, 20)[0] != 1:
        raise ValueError(f"{pcap}: link type is not Ethernet")
    pos = 24
    while pos + 16 <= len(data):
        sec, frac, incl = struct.unpack_from(e + "III", data, pos)
        ts = sec + frac * unit
        frame = data[pos + 16: pos + 16 + incl]
        pos += 16 + incl
        kind, detail, ip = _parse(frame)
        if frame[6:12] == own:
            out["outbound"] += 1
            if kind == "igmp" and ip is not None and since < ts <= until:
                _membership(frame, ip[0], ip[1], held)
                # a report to a group the host holds comes back to it by multicast loopback
                out["own_igmp_looped"] += held.get(_ip(frame[ip[0] + 16: ip[0] + 20]), False)
            elif kind == "igmp" and ip is not None:
                _membership(frame, ip[0], ip[1], held)
            continue
        if ts <= since:
            out["before"] += 1
            continue
        if ts > until:
            out["after"] += 1
            continue
        out[kind] += 1
        if kind == "session":
            out["session_not_member"] += not held.get(detail, False)
        else:
            if detail == "group_query":
                g = _ip(frame[ip[0] + ip[1] + 4: ip[0] + ip[1] + 8])
                out["igmp_not_member"] += not held.get(g, False)
            out["detail"][detail] = out["detail"].get(detail, 0) + 1
    return out


def proc_counters(text: str) -> dict[str, dict[str, int]]:
    """`/proc/net/snmp` or `/proc/net/netstat` as {"Udp": {"InDatagrams": n, ...}, ...}."""
    lines = [ln.split() for ln in text.splitlines() if ln.strip()]
    out: dict[str, dict[str, int]] = {}
    for names, values in zip(lines, lines[1:]):
        if names and values and names[0] == values[0] and not names[1].lstrip("-").isdigit():
            out[names[0].rstrip(":")] = {k: int(v) for k, v in zip(names[1:], values[1:])}
    return out
