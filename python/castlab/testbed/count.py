"""A per-second packet counter for one interface of a testbed node: what arrives (or leaves),
split into multicast UDP (by group) and TCP (by the receiving port), from an AF_PACKET socket.

It measures third-party peers (UFTP, NORM) and castlab's roles alike, at the same place, so the
rows of ``net-peers`` compare one reading. Run inside a node's namespace (root)::

    python -m castlab.testbed.count --iface DEV --direction in --duration 60 --out FILE.csv

It prints ``ready T0 T0_REAL`` once the socket is bound (T0: the CLOCK_MONOTONIC second its bins
count from, so that a caller can place them on its own clock; T0_REAL: the same moment on
CLOCK_REALTIME, the packet log's clock), stops at the duration or on SIGINT/SIGTERM, and writes
``second,kind,key,packets,bytes`` rows, one per bin of ``--bin`` seconds (default 1; ``second``
is the bin's start after T0; ``kind`` is ``mc`` with the group as key, or ``tcp`` with the port:
the destination port of what arrives, the source port of what leaves). A packet goes in the bin
of the kernel's timestamp of it on the tap, not of the moment the counter reads it: a counter
that waits in a blocking read, or falls behind on a loaded machine, reads a packet up to its
read timeout before (the clock read before the wait) or arbitrarily long after it arrived.
Bytes are IP datagram lengths. Anything that is not IPv4 UDP to 239.0.0.0/8 or IPv4 TCP is
ignored.

With ``--packets FILE`` it also writes one row per counted packet,
``time_ns,kind,key,bytes,pid,payload``:
the kernel's receive timestamp of the packet on the tap (CLOCK_REALTIME, ns; for what leaves, the
moment the interface's driver was handed it), the kind and key (a TCP packet's key is its
destination port in either direction: the same flow on both sides of a path), the IP length
(a sender's segmentation offload hands the tap one packet of several segments, which the
bottleneck's tbf splits), ``pid`` and the transport payload's bytes. A UDP packet's ``pid`` is
the CRC-32 of its UDP header and first payload bytes, which a router on the way leaves as they
are (it changes the IP header's TTL and checksum); a TCP packet's is its sequence number, so that
the segments cut from one offloaded packet are matched to it by their sequence numbers. The two
logs of one run, on both sides of a bottleneck, tell which packets of each flow it dropped
(``castlab.experiments.tfmcc.flowdrops``).
"""

from __future__ import annotations

import argparse
import csv
import math
import signal
import socket
import struct
import sys
import time
import zlib

ETH_P_ALL = 0x0003
PACKET_OUTGOING = 4
SO_TIMESTAMPNS = 35  # Linux, <asm-generic/socket.h>: the receive time as a struct timespec
PID_BYTES = 64  # transport header and payload bytes a packet's id covers


def packet_id(frame: bytes | bytearray | memoryview, n: int) -> int:
    """The id of the IPv4 UDP packet in the Ethernet frame `frame[:n]`: the CRC-32 of up to
    PID_BYTES bytes from its UDP header on (what a forwarding router leaves unchanged)."""
    ihl = (frame[14] & 0x0F) * 4
    a = 14 + ihl
    return zlib.crc32(bytes(frame[a:min(n, a + PID_BYTES)]))


def _origin() -> tuple[float, int]:
    """The counter's origin on CLOCK_MONOTONIC (s) and on CLOCK_REALTIME (ns), read together: of
    three pairs, the one whose realtime reads around the monotonic one are closest."""
    best = None
    for _ in range(3):
        a = time.time_ns()
        m = time.monotonic()
        b = time.time_ns()
        if best is None or b - a < best[0]:
            best = (b - a, m, (a + b) // 2)
    return best[1], best[2]


def count(iface: str, direction: str, duration: float, bin_s: float = 1.0, packets=None) -> dict:
    """Counts per bin; with `packets` (a csv writer) a row per counted packet (module doc)."""
    s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW, socket.htons(ETH_P_ALL))
    s.bind((iface, 0))
    s.settimeout(0.2)
    s.setsockopt(socket.SOL_SOCKET, SO_TIMESTAMPNS, 1)  # each packet's bin is its kernel timestamp's
    anc = socket.CMSG_SPACE(16)
    stop = [False]

    def on_signal(signum, frame):
        stop[0] = True

    signal.signal(signal.SIGINT, on_signal)
    signal.signal(signal.SIGTERM, on_signal)
    counts: dict[tuple[int, str, str], list[int]] = {}
    t0, t0_real_ns = _origin()
    print(f"ready {t0:.6f} {t0_real_ns / 1e9:.6f}", flush=True)
    buf = bytearray(2048)
    while not stop[0]:
        if time.monotonic() - t0 >= duration:
            break
        try:
            n, cmsgs, _, addr = s.recvmsg_into([buf], anc)
        except socket.timeout:
            continue
        except InterruptedError:
            continue
        outgoing = addr[2] == PACKET_OUTGOING
        if outgoing != (direction == "out") or n < 34 or buf[12:14] != b"\x08\x00":
            continue
        ihl = (buf[14] & 0x0F) * 4
        total = struct.unpack_from("!H", buf, 16)[0]
        proto = buf[23]
        if proto == 17 and buf[30] == 239:
            key = flow = ("mc", socket.inet_ntoa(bytes(buf[30:34])))
        elif proto == 6 and n >= 14 + ihl + 4:
            sport, dport = struct.unpack_from("!HH", buf, 14 + ihl)
            key = ("tcp", str(sport if outgoing else dport))
            flow = ("tcp", str(dport))
        else:
            continue
        ts = next((struct.unpack("@qq", d[:16]) for lvl, typ, d in cmsgs
                   if lvl == socket.SOL_SOCKET and typ == SO_TIMESTAMPNS and len(d) >= 16), None)
        # the kernel's receive time; the read's moment only for a packet that carries none
        t_ns = ts[0] * 1_000_000_000 + ts[1] if ts is not None else time.time_ns()
        now = (t_ns - t0_real_ns) / 1e9
        c = counts.setdefault((math.floor(now / bin_s), *key), [0, 0])
        c[0] += 1
        c[1] += total
        if packets is not None:
            if proto == 6 and n >= 14 + ihl + 13:
                # TCP: its sequence number and payload bytes, so that the segments the bottleneck
                # cut from one offloaded packet are matched to it
                seq, = struct.unpack_from("!I", buf, 14 + ihl + 4)
                payload = total - ihl - (buf[14 + ihl + 12] >> 4) * 4
                packets.writerow([t_ns, flow[0], flow[1], total, seq, payload])
            else:
                packets.writerow([t_ns, flow[0], flow[1], total, packet_id(buf, n), total - ihl - 8])
    s.close()
    return counts


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="python -m castlab.testbed.count", description=__doc__.split("\n\n")[0])
    ap.add_argument("--iface", required=True)
    ap.add_argument("--direction", choices=["in", "out"], default="in")
    ap.add_argument("--duration", type=float, required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--bin", type=float, default=1.0, help="bin width in seconds (default 1)")
    ap.add_argument("--packets", help="also write one row per counted packet to this CSV (module doc)")
    a = ap.parse_args(argv)
    if not 0 < a.duration <= 86400:
        ap.error("--duration must be in (0, 86400] seconds")
    if not 0.001 <= a.bin <= 60:
        ap.error("--bin must be in [0.001, 60] seconds")
    pf = open(a.packets, "w", newline="") if a.packets else None
    try:
        pw = None
        if pf is not None:
            pw = csv.writer(pf)
            pw.writerow(["time_ns", "kind", "key", "bytes", "pid", "payload"])
        counts = count(a.iface, a.direction, a.duration, a.bin, pw)
    except OSError as e:
        print(f"count: {a.iface}: {e}", file=sys.stderr)
        return 1
    finally:
        if pf is not None:
            pf.close()
    with open(a.out, "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["second", "kind", "key", "packets", "bytes"])
        for (k, kind, key), (p, b) in sorted(counts.items()):
            w.writerow([k if a.bin == 1.0 else round(k * a.bin, 6), kind, key, p, b])
    return 0


if __name__ == "__main__":
    sys.exit(main())
