"""Unmodified OpenPGM endpoints for castlab's interop tests: ZeroMQ ``epgm://`` SUB and PUB
sockets (libzmq built with OpenPGM, as Debian's ``libzmq5`` is), driven from the command line.

Runs under the system Python with ``python3-zmq`` (``/usr/bin/python3``), not castlab's
virtualenv: it imports nothing of castlab, so the receivers and the source it drives are
OpenPGM's own, configured only through ZeroMQ's socket options.

    zmq_epgm.py sub --endpoint 'epgm://10.77.0.2;239.255.0.1:47000' --duration 20 --out sub.json
    zmq_epgm.py pub --endpoint 'epgm://10.77.0.1;239.255.0.1:47000' --count 400 --rate-kbps 400

Every message's body starts with its number, 8 bytes big-endian (castlab's PGM transport puts
the PGM sequence number there: ``zmq::frame`` in castlab-net's ``pgm_codec.rs``); a SUB writes the
numbers it delivered. The endpoint names the
interface by its IP address: inside a network namespace OpenPGM resolves interface names
through DNS and fails.
"""

from __future__ import annotations

import argparse
import json
import signal
import sys
import time


def _zmq():
    try:
        import zmq
    except ImportError:
        print("zmq_epgm: needs python3-zmq (the system Python's pyzmq)", file=sys.stderr)
        sys.exit(3)
    if not zmq.has("pgm"):
        print("zmq_epgm: this libzmq has no OpenPGM (epgm) transport", file=sys.stderr)
        sys.exit(3)
    return zmq


def sub(a) -> int:
    zmq = _zmq()
    ctx = zmq.Context()
    s = ctx.socket(zmq.SUB)
    s.setsockopt(zmq.RATE, a.rate_kbps)
    s.setsockopt(zmq.RECOVERY_IVL, int(a.recovery_s * 1000))
    s.setsockopt(zmq.RCVTIMEO, 100)
    s.setsockopt(zmq.SUBSCRIBE, b"")
    s.connect(a.endpoint)
    print(f"[zmq-sub] {a.endpoint} ready", flush=True)
    seen: list[int] = []
    first = last = None
    end = time.monotonic() + a.duration
    signal.signal(signal.SIGTERM, signal.default_int_handler)  # SIGTERM stops as SIGINT does
    try:
        while time.monotonic() < end:
            try:
                m = s.recv()
            except zmq.Again:
                continue
            now = time.monotonic()
            first = first if first is not None else now
            last = now
            seen.append(int.from_bytes(m[:8], "big") if len(m) >= 8 else -1)
            if a.expect and len(set(seen)) >= a.expect:
                break
    except KeyboardInterrupt:
        pass
    finally:
        s.close(linger=0)
        ctx.term()
    distinct = sorted(set(seen))
    rec = {"endpoint": a.endpoint, "messages": len(seen), "distinct": len(distinct),
           "duplicates": len(seen) - len(distinct), "first": distinct[0] if distinct else None,
           "last": distinct[-1] if distinct else None,
           "in_order": seen == sorted(seen), "span_s": (last - first) if first is not None else 0.0,
           "numbers": distinct}
    if a.out:
        with open(a.out, "w") as f:
            json.dump(rec, f)
    print(f"[zmq-sub] delivered {len(seen)} messages, {len(distinct)} distinct", flush=True)
    return 0


def pub(a) -> int:
    zmq = _zmq()
    ctx = zmq.Context()
    s = ctx.socket(zmq.PUB)
    s.setsockopt(zmq.RATE, a.rate_kbps)
    s.setsockopt(zmq.RECOVERY_IVL, int(a.recovery_s * 1000))
    s.setsockopt(zmq.SNDHWM, 0)
    s.setsockopt(zmq.MULTICAST_HOPS, a.hops)
    s.connect(a.endpoint)
    signal.signal(signal.SIGTERM, signal.default_int_handler)  # SIGTERM stops as SIGINT does
    time.sleep(a.warmup_s)
    pad = bytes(max(0, a.size - 8))
    gap = a.interval_s
    t0 = time.monotonic()
    sent = 0
    try:
        for k in range(a.count):
            if gap > 0:
                delay = t0 + k * gap - time.monotonic()
                if delay > 0:
                    time.sleep(delay)
            s.send(k.to_bytes(8, "big") + pad)
            sent += 1
        print(f"[zmq-pub] sent {sent} messages in {time.monotonic() - t0:.2f} s", flush=True)
        time.sleep(a.linger_s)  # repairs are served while the socket lives
    except KeyboardInterrupt:
        pass
    finally:
        s.close(linger=0)
        ctx.term()
    return 0


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sp = p.add_subparsers(dest="mode", required=True)
    for name in ("sub", "pub"):
        q = sp.add_parser(name)
        q.add_argument("--endpoint", required=True, help="epgm://IFACE_IP;GROUP:PORT")
        q.add_argument("--rate-kbps", type=int, default=1000, help="ZMQ_RATE, kb/s (default %(default)s)")
        q.add_argument("--recovery-s", type=float, default=10.0, help="ZMQ_RECOVERY_IVL, s (default %(default)s)")
    q = sp.choices["sub"]
    q.add_argument("--duration", type=float, default=30.0)
    q.add_argument("--expect", type=int, default=0, help="stop once this many distinct messages arrived")
    q.add_argument("--out", default=None, help="JSON record of what was delivered")
    q = sp.choices["pub"]
    q.add_argument("--count", type=int, default=100)
    q.add_argument("--size", type=int, default=500, help="message bytes (default %(default)s)")
    q.add_argument("--interval-s", type=float, default=0.01, help="seconds between messages")
    q.add_argument("--warmup-s", type=float, default=1.0, help="wait before the first message")
    q.add_argument("--linger-s", type=float, default=5.0, help="stay up this long after the last")
    q.add_argument("--hops", type=int, default=1, help="ZMQ_MULTICAST_HOPS: one more than the routers on the way")
    a = p.parse_args(argv)
    return sub(a) if a.mode == "sub" else pub(a)


if __name__ == "__main__":
    sys.exit(main())
