"""castlab speaks PGM (RFC 3208 over UDP) with receivers and sources nobody here wrote: ZeroMQ
``epgm://`` SUB and PUB sockets (libzmq on OpenPGM), driven by ``castlab/testbed/zmq_epgm.py``
under the system Python, on the namespace testbed behind a lossy kernel bottleneck.

- castlab's LE-SBCC source (``castlab net lesbcc-source --wire pgm``) to two unmodified
  OpenPGM receivers: every message is delivered, the losses repaired through the receivers' own
  NAKs, which the source reads as loss indications.
- an OpenPGM source (a ZeroMQ PUB) to castlab's PGM receiver (``castlab net pgm-receiver
  --wire pgm``): it NAKs its losses in PGM's format and is repaired.

Every test builds its own testbed (namespaces ``cl-<name>-*``, named with the pid) and removes
it on success, failure and interrupt; multicast stays in 239.0.0.0/8 with a TTL of the hop
count. Skips with the reason where root, the testbed's tools or ``python3-zmq`` are missing.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

import castlab.testbed.zmq_epgm as zmq_epgm
from castlab.testbed import Lan, Link, Testbed, Topology, available

SYSTEM_PYTHON = "/usr/bin/python3"
SCRIPT = zmq_epgm.__file__


def _zmq_reason():
    if not os.path.exists(SYSTEM_PYTHON):
        return f"needs {SYSTEM_PYTHON} with python3-zmq"
    r = subprocess.run([SYSTEM_PYTHON, "-c", "import zmq,sys; sys.exit(0 if zmq.has('pgm') else 4)"],
                       capture_output=True, text=True)
    if r.returncode == 4:
        return "the system libzmq has no OpenPGM (epgm) transport"
    if r.returncode != 0:
        return "needs python3-zmq for /usr/bin/python3 (make setup installs it with apt)"
    return None


REASON = available() or _zmq_reason()
pytestmark = pytest.mark.skipif(REASON is not None, reason=f"PGM interop unavailable: {REASON}")

GROUP = "239.255.77.1"
PORT = 47600


def _topology(rate_bps: float, queue_pkts: int) -> Topology:
    # src - r1 =[bottleneck]=> LAN of two receiver hosts (kernel routers, igmpproxy)
    return Topology(name="pgm", description="src - r1 => LAN(rcv1, rcv2)", hosts=["src", "rcv1", "rcv2"],
                    routers=["r1"], links=[Link("src", "r1")],
                    lans=[Lan("r1", ("rcv1", "rcv2"), rate_bps, queue_pkts)])


def _castlab(*args) -> list[str]:
    return [sys.executable, "-m", "castlab", *[str(a) for a in args]]


def _session(tb, ttl: int) -> list:
    return ["--source-addr", tb.addr("src"), "--ttl", ttl, "--group-base", GROUP, "--port-base", PORT,
            "--wire", "pgm"]


def _ready(p: subprocess.Popen, timeout: float = 20.0) -> str:
    """The first line a started role or script prints (it says so once it listens)."""
    import select

    r, _, _ = select.select([p.stdout], [], [], timeout)
    assert r, "the process did not start listening in time"
    return p.stdout.readline().decode()


def test_openpgm_receivers_are_repaired_by_castlab_lesbcc_source(tmp_path: Path):
    n = 150
    topo = _topology(150e3, 5)  # the source starts at 200 kb/s (§5.2.1): the bottleneck drops
    with Testbed(topo, f"i{os.getpid() % 100000}") as tb:
        ttl = tb.topo.hops("src", "rcv1") + 1
        subs = []
        for h in ("rcv1", "rcv2"):
            subs.append(tb.spawn(h, [SYSTEM_PYTHON, SCRIPT, "sub", "--endpoint", f"epgm://{tb.addr(h)};{GROUP}:{PORT}",
                                     "--duration", 30, "--expect", n, "--out", tmp_path / f"{h}.json"],
                                 stdout=subprocess.PIPE, stderr=subprocess.DEVNULL))
        for p in subs:
            _ready(p)
        src = tb.run("src", _castlab("net", "lesbcc-source", "--duration", 14, "--iface-addr", tb.addr("src"),
                                     "--config", f"total_packets={n}", "--out", tmp_path / "src", *_session(tb, ttl)),
                     timeout=90, check=False)
        for p in subs:
            p.wait(timeout=30)
    assert src.returncode == 0, src.stderr
    stats = json.loads((tmp_path / "src" / "lesbcc_stats.json").read_text())
    net = json.loads((tmp_path / "src" / "net_stats.json").read_text())["stats"]
    for h in ("rcv1", "rcv2"):
        rec = json.loads((tmp_path / f"{h}.json").read_text())
        # every message, each once, as the numbers the source put in them
        assert rec["numbers"] == list(range(n)), (h, rec["distinct"], rec["first"], rec["last"])
        assert rec["duplicates"] == 0
    # losses happened and were repaired through the OpenPGM receivers' NAKs
    assert stats["rdata_sent"] > 0 and net["pgm_received_nak"] > 0, (stats, net)
    assert net["malformed"] == 0 and net["pgm_sent_spm"] > 0
    assert net["pgm_sent_odata"] == n


def test_castlab_pgm_receiver_is_repaired_from_an_openpgm_source(tmp_path: Path):
    topo = _topology(200e3, 10)
    n = 100
    with Testbed(topo, f"o{os.getpid() % 100000}") as tb:
        ttl = tb.topo.hops("src", "rcv1") + 1
        rcv = tb.spawn("rcv1", _castlab("net", "pgm-receiver", "--addr", tb.addr("rcv1"), "--node", 1,
                                        "--iface-addr", tb.addr("rcv1"), "--duration", 30, "--out", tmp_path / "rcv",
                                        *_session(tb, ttl)),
                       stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
        _ready(rcv)
        # 1000-byte messages as fast as ZMQ_RATE lets them: 300 kb/s into 200 kb/s
        pub = tb.run("src", [SYSTEM_PYTHON, SCRIPT, "pub", "--endpoint", f"epgm://{tb.addr('src')};{GROUP}:{PORT}",
                             "--count", n, "--size", 1000, "--interval-s", 0, "--rate-kbps", 300, "--hops", ttl,
                             "--linger-s", 15], timeout=60, check=False)
        rc = tb.stop(rcv, timeout=30)
    assert pub.returncode == 0, pub.stderr
    r = json.loads((tmp_path / "rcv" / "pgm_receiver_stats.json").read_text())
    net = json.loads((tmp_path / "rcv" / "net_stats.json").read_text())["stats"]
    assert net["malformed"] == 0 and net["pgm_received_spm"] > 0, net
    assert r["gaps"] > 0 and r["naks_sent"] > 0, r  # the bottleneck dropped, the receiver NAKed
    assert r["unrecoverable"] == 0 and r["repaired"] == r["gaps"], r
    assert net["pgm_sent_nak"] == r["naks_sent"]
    assert rc is not None
