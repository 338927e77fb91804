"""What every real-network experiment shares: the papers' constants, testbed names, role
command lines, process waits and the join/leave latency probe.

The real-network experiments run the papers' protocols as processes (`castlab net ROLE`) on the
namespace testbed (`castlab.testbed`), with kernel bottlenecks, kernel multicast routing and
kernel TCP, each beside a simulation of the same set-up. Each lives in its paper's package
(``rlm.net``: net-rlm, net-vs-sim, net-rlm-red; ``lesbcc.net``: net-lesbcc-fig21, -openpgm,
-aggregation; ``nlm.net``: net-nlm; ``rainbow.net``: net-rainbow; ``tfmcc.net`` and
``tfmcc.peers``: net-tfmcc-uftp, net-peers).

What the testbed cannot reproduce is recorded in each summary's ``params``: with kernel routers
and without netem (absent on this kernel) there is no propagation delay, only serialisation and
queueing; the join and leave latencies are the testbed's, measured at the start of each run and
given to the simulated twin. Every experiment skips (no claims, a reason in ``params``) where the
testbed cannot be built.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Optional

import pandas as pd

from castlab.experiments.common import Result

RLM_PAPER = "McCanne et al. 1996"
LESBCC_PAPER = "Thapliyal et al. (LE-SBCC)"  # the same name as experiments/lesbcc.py, so the report groups them
LAYERS_BPS = [32e3 * 2**m for m in range(6)]  # RLM §4: six layers at 32·2^m kb/s
RLM_LINK_BPS = 1.5e6  # RLM §4
RLM_QUEUE = 20  # RLM §4
RLM_PACKET = 1000  # RLM §4
OPTIMAL = 5  # the largest level whose cumulative rate (992 kb/s) fits 1.5 Mb/s
FIG21_LINK_BPS = 1e6  # LE-SBCC §5.2.1: "Bottleneck bandwidth (set by tc): 1Mbps"
FIG21_TCP_PER_HOST = 4  # §5.2.1: four receiver machines, four TCP receivers each
FIG21_HOSTS = 4
FIG21_QUEUE = 50  # not stated: ours
SAME_ORDER = 3.0  # "the same order": within a factor of 3 (decided before the first run)
LOSS_FLOOR = 0.005  # below 0.5 % both ways a short run cannot tell rates apart



_DIGITS36 = "0123456789abcdefghijklmnopqrstuvwxyz"


def testbed_name(kind: str, pid: Optional[int] = None) -> str:
    """A testbed name of this process (`pid`, by default its own): `kind`, one letter, then the
    pid in base 36, so that runs in parallel never share namespaces. Five base-36 digits hold
    every pid Linux allows (its limit, 2^22, is below 36^5), and a name is at most six
    characters (``Testbed``'s rule), so `kind` is one letter."""
    if len(kind) != 1 or not kind.isalpha():
        raise ValueError(f"testbed_name: kind {kind!r} must be one letter (a name is at most 6 characters)")
    n = os.getpid() if pid is None else int(pid)
    if not 0 < n < 36 ** 5:
        raise ValueError(f"testbed_name: pid {n} is outside 1..{36 ** 5 - 1}")
    digits = ""
    while n:
        n, d = divmod(n, 36)
        digits = _DIGITS36[d] + digits
    return kind + digits


def _skip(reason: str) -> Optional[Result]:
    return Result({"network": "real", "skipped": reason}, [])


def _unavailable() -> Optional[str]:
    from castlab.testbed import available

    return available()


def _castlab(*args) -> list[str]:
    return [sys.executable, "-m", "castlab", *[str(a) for a in args]]


def _session(tb, ttl: int) -> list[str]:
    return ["--source-addr", tb.addr(tb.topo.source), "--ttl", ttl, "--session", 77]


def _measure_latencies(tb, host: str) -> tuple[float, float]:
    """Join latency (join to first packet) and leave latency (leave to the last packet on the
    host's link) of the testbed's multicast routing, for a 200 packet/s probe group."""
    group = "239.255.200.1"
    send = ("import socket,time\ns=socket.socket(socket.AF_INET,socket.SOCK_DGRAM)\n"
            "s.setsockopt(socket.IPPROTO_IP,socket.IP_MULTICAST_TTL,4)\n"
            f"s.setsockopt(socket.IPPROTO_IP,socket.IP_MULTICAST_IF,socket.inet_aton('{tb.addr(tb.topo.source)}'))\n"
            "t=time.time()\nwhile time.time()-t<12:\n"
            f"    s.sendto(b'x'*64,('{group}',5999)); time.sleep(0.005)\n")
    recv = ("import socket,struct,time\ns=socket.socket(socket.AF_INET,socket.SOCK_DGRAM)\n"
            "s.setsockopt(socket.SOL_SOCKET,socket.SO_REUSEADDR,1); s.bind(('',5999)); s.settimeout(0.01)\n"
            f"m=struct.pack('4s4s',socket.inet_aton('{group}'),socket.inet_aton('{tb.addr(host)}'))\n"
            "t=time.time(); s.setsockopt(socket.IPPROTO_IP,socket.IP_ADD_MEMBERSHIP,m); first=None\n"
            "while time.time()-t<2:\n    try:\n        s.recv(99); first=first if first is not None else time.time()-t\n"
            "    except socket.timeout: pass\n"
            "s.setsockopt(socket.IPPROTO_IP,socket.IP_DROP_MEMBERSHIP,m); print(first)\n")
    p = tb.spawn(tb.topo.source, [sys.executable, "-c", send])
    try:
        time.sleep(0.3)
        r = tb.run(host, [sys.executable, "-c", recv], timeout=20)
        join = float(r.stdout.strip()) if r.stdout.strip() not in ("", "None") else float("nan")
        t0 = time.monotonic()
        prev = tb.link_rx_packets(host, tb.topo.routers[0])
        leave = float("nan")
        while time.monotonic() - t0 < 8.0:
            time.sleep(0.05)
            c = tb.link_rx_packets(host, tb.topo.routers[0])
            if c - prev == 0:
                leave = time.monotonic() - t0 - 0.05
                break
            prev = c
    finally:
        tb.stop(p)
    return join, max(leave, 0.0)


def _wait(procs: list[subprocess.Popen], timeout: float) -> None:
    end = time.monotonic() + timeout
    for p in procs:
        try:
            p.wait(timeout=max(end - time.monotonic(), 1.0))
        except subprocess.TimeoutExpired:
            pass


def _read_table(out: Path, stem: str) -> pd.DataFrame:
    for ext in (".csv", ".parquet"):
        p = out / f"{stem}{ext}"
        if p.exists():
            return pd.read_csv(p) if ext == ".csv" else pd.read_parquet(p)
    return pd.DataFrame()

def _first_line(p: subprocess.Popen, timeout: float = 30.0) -> None:
    """Wait until a started process prints its first line (it listens by then)."""
    import select

    if p.stdout is not None:
        r, _, _ = select.select([p.stdout], [], [], timeout)
        if r:
            p.stdout.readline()
