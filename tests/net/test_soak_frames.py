"""The soak's frame counter (`bench/soak_frames.py`) on a capture built here byte by byte: what
crossed the link by kind, which session datagrams arrived for a group the host had left, and
which of the host's own IGMP reports come back to it. No root, no network."""

from __future__ import annotations

import struct
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench"))
from soak_frames import count_frames, proc_counters  # noqa: E402

OWN = bytes.fromhex("020000000001")
ROUTER = bytes.fromhex("020000000002")
G = bytes([239, 255, 0, 3])


def ipv4(src_mac: bytes, dst: bytes, proto: int, body: bytes, dst_mac: bytes = b"\x01\x00\x5e\x00\x00\x01") -> bytes:
    ip = struct.pack("!BBHHHBBH4s4s", 0x45, 0, 20 + len(body), 0, 0, 1, proto, 0, bytes([10, 77, 100, 1]), dst)
    return dst_mac + src_mac + b"\x08\x00" + ip + body


def igmp(kind: int, group: bytes) -> bytes:
    return struct.pack("!BBH4s", kind, 0, 0, group)


def udp(n: int = 40) -> bytes:
    return struct.pack("!HHHH", 5000, 6000, 8 + n, 0) + bytes(n)


def pcap(path: Path, frames: list[tuple[float, bytes]]) -> Path:
    out = bytearray(struct.pack("<IHHiIII", 0xA1B2C3D4, 2, 4, 0, 0, 65535, 1))
    for ts, f in frames:
        out += struct.pack("<IIII", int(ts), round(ts % 1 * 1e6), len(f), len(f)) + f
    path.write_bytes(bytes(out))
    return path


def test_frames_by_kind_membership_and_window(tmp_path):
    ip6 = struct.pack("!IHBB", 0x60000000, 8, 58, 255) + bytes(32)  # next header ICMPv6
    rs = b"\x33\x33\x00\x00\x00\x02" + ROUTER + b"\x86\xdd" + ip6 + bytes([133, 0, 0, 0, 0, 0, 0, 0])
    arp = b"\xff" * 6 + ROUTER + b"\x08\x06" + bytes(28)
    frames = [
        (99.0, ipv4(ROUTER, G, 17, udp())),                        # before the window
        (100.0, ipv4(ROUTER, G, 17, udp())),                       # not yet joined
        (101.0, ipv4(OWN, G, 2, igmp(0x16, G))),                   # own v2 report: joins G
        (102.0, ipv4(ROUTER, G, 17, udp())),
        (103.0, ipv4(ROUTER, G, 17, udp())),
        (104.0, ipv4(OWN, G, 17, udp())),                          # own datagram: outbound
        (105.0, ipv4(ROUTER, bytes([224, 0, 0, 1]), 2, igmp(0x11, bytes(4)))),
        (106.0, ipv4(OWN, bytes([224, 0, 0, 2]), 2, igmp(0x17, G))),  # own leave
        (106.5, ipv4(ROUTER, G, 17, udp())),                       # in the queue when it left
        (107.0, ipv4(ROUTER, G, 2, igmp(0x11, G))),                # group-specific query, left
        (108.0, rs),
        (109.0, arp),
        (110.0, ipv4(ROUTER, bytes([10, 77, 100, 10]), 6, bytes(20), dst_mac=OWN)),
        (200.0, ipv4(ROUTER, G, 17, udp())),                       # after the window
    ]
    got = count_frames(pcap(tmp_path / "c.pcap", frames), OWN.hex(":"), since=99.5, until=150.0)
    assert {k: got[k] for k in ("session", "igmp", "ipv4_other", "ipv6", "arp", "other")} == {
        "session": 4, "igmp": 2, "ipv4_other": 1, "ipv6": 1, "arp": 1, "other": 0}
    assert (got["session_not_member"], got["igmp_not_member"]) == (2, 1)
    assert (got["outbound"], got["own_igmp_looped"], got["before"], got["after"]) == (3, 1, 1, 1)
    assert got["detail"] == {"general_query": 1, "group_query": 1, "router_solicitation": 1, "arp": 1,
                             "proto_6": 1}


def test_an_igmpv3_report_joins_and_leaves(tmp_path):
    def v3(rtype: int, sources: int) -> bytes:
        rec = struct.pack("!BBH4s", rtype, 0, sources, G) + bytes(4 * sources)
        return struct.pack("!BBHHH", 0x22, 0, 0, 0, 1) + rec

    frames = [
        (1.0, ipv4(OWN, bytes([224, 0, 0, 22]), 2, v3(5, 1))),      # ALLOW {S}: joins
        (2.0, ipv4(ROUTER, G, 17, udp())),
        (3.0, ipv4(OWN, bytes([224, 0, 0, 22]), 2, v3(6, 1))),      # BLOCK {S}: leaves
        (4.0, ipv4(ROUTER, G, 17, udp())),
    ]
    got = count_frames(pcap(tmp_path / "v3.pcap", frames), OWN.hex(":"))
    assert (got["session"], got["session_not_member"], got["own_igmp_looped"]) == (2, 1, 0)


def test_proc_counters_reads_header_and_value_lines():
    text = "Ip: Forwarding InReceives\nIp: 2 17\nUdp: InDatagrams NoPorts\nUdp: 12 0\n"
    assert proc_counters(text) == {"Ip": {"Forwarding": 2, "InReceives": 17}, "Udp": {"InDatagrams": 12, "NoPorts": 0}}
