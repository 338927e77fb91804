"""A per-second packet counter for one interface of a testbed node: what arrives (or leaves),
split into multicast UDP (by group) and TCP (by the receiving port), from an AF_PACKET socket.

It measures third-party peers (UFTP, NORM) and castlab's roles alike, at the same place, so the
rows of ``net-peers`` compare one reading. Run inside a node's namespace (root)::

    python -m castlab.testbed.count --iface DEV --direction in --duration 60 --out FILE.csv

It prints ``ready T0`` once the socket is bound (T0: the CLOCK_MONOTONIC second its bins count
from, so that a caller can place them on its own clock), stops at the duration or on
SIGINT/SIGTERM, and writes ``second,kind,key,packets,bytes`` rows, one per bin of ``--bin``
seconds (default 1; ``second`` is the bin's start after T0; ``kind`` is ``mc`` with the group as
key, or ``tcp`` with the port: the destination port of what arrives, the source port of what
leaves).
Bytes are IP datagram lengths. Anything that is not IPv4 UDP to 239.0.0.0/8 or IPv4 TCP is
ignored.
"""

from __future__ import annotations

import argparse
import csv
import signal
import socket
import struct
import sys
import time

ETH_P_ALL = 0x0003
PACKET_OUTGOING = 4


def count(iface: str, direction: str, duration: float, bin_s: float = 1.0) -> dict:
    s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW, socket.htons(ETH_P_ALL))
    s.bind((iface, 0))
    s.settimeout(0.2)
    stop = [False]

    def on_signal(signum, frame):
        stop[0] = True

    signal.signal(signal.SIGINT, on_signal)
    signal.signal(signal.SIGTERM, on_signal)
    counts: dict[tuple[int, str, str], list[int]] = {}
    t0 = time.monotonic()
    print(f"ready {t0:.6f}", flush=True)
    buf = bytearray(2048)
    while not stop[0]:
        now = time.monotonic() - t0
        if now >= duration:
            break
        try:
            n, addr = s.recvfrom_into(buf)
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
            key = ("mc", socket.inet_ntoa(bytes(buf[30:34])))
        elif proto == 6 and n >= 14 + ihl + 4:
            sport, dport = struct.unpack_from("!HH", buf, 14 + ihl)
            key = ("tcp", str(sport if outgoing else dport))
        else:
            continue
        c = counts.setdefault((int(now / bin_s), *key), [0, 0])
        c[0] += 1
        c[1] += total
    s.close()
    return counts


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="python -m castlab.testbed.count", description=__doc__.split("\n\n")[0])
    ap.add_argument("--iface", required=True)
    ap.add_argument("--direction", choices=["in", "out"], default="in")
    ap.add_argument("--duration", type=float, required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--bin", type=float, default=1.0, help="bin width in seconds (default 1)")
    a = ap.parse_args(argv)
    if not 0 < a.duration <= 86400:
        ap.error("--duration must be in (0, 86400] seconds")
    if not 0.001 <= a.bin <= 60:
        ap.error("--bin must be in [0.001, 60] seconds")
    try:
        counts = count(a.iface, a.direction, a.duration, a.bin)
    except OSError as e:
        print(f"count: {a.iface}: {e}", file=sys.stderr)
        return 1
    with open(a.out, "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["second", "kind", "key", "packets", "bytes"])
        for (k, kind, key), (p, b) in sorted(counts.items()):
            w.writerow([k if a.bin == 1.0 else round(k * a.bin, 6), kind, key, p, b])
    return 0


if __name__ == "__main__":
    sys.exit(main())
