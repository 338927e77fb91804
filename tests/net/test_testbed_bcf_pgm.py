"""PGM over BCFS on the real network (Yano and McCanne §II-B.3), root only (skipped with the
reason elsewhere): ``castlab net bcf-pgm-source`` multicasts original packets down the ``bcfs``
tree, whose two user-space routers host the simulator's BCF router; the slow receiver behind
its 256 kb/s link loses packets there and NAKs each as a BCF request; the source answers each
with a BCF reply that the routers copy down the breadcrumbs only: the repairs reach the
receiver that asked, and a fast receiver that lost nothing gets none.

The testbed's namespaces (``cl-<name>-*``, the pid in the name) are removed on success,
failure and interrupt; multicast stays in 239.0.0.0/8 with a TTL of the hop count plus one.
"""

from __future__ import annotations

import dataclasses
import json
import os
import subprocess
import sys
import time

import pytest

from castlab.testbed import Testbed, available
from castlab.experiments.rainbow.testbed import bcfs

REASON = available()
pytestmark = pytest.mark.skipif(REASON is not None, reason=f"testbed unavailable: {REASON}")

#: 280 kb/s of 512-byte packets (540 bytes on the wire): above the slow link's 256 kb/s, so
#: its RED queue drops; below the 400 kb/s up-link with the repairs on it, so the fast links lose
#: nothing. 300 packets: about 4.4 s of data.
RATE_BPS = 280_000
COUNT = 300
#: Every router buffer 40 packets (the paper's 10 overflowed the up-link now and then when a
#: burst of repairs met the originals there, and a fast receiver lost a packet too), but the
#: slow link's: the paper's 10. There the source's 64.8 packets a second meet 59.3 drained, about
#: 25 more than leave over the 4.6 s, which a buffer of 10 cannot hold whatever RED's slow
#: average does; in 40, only RED's early drops made a loss, and on a loaded machine sometimes none.
QUEUE_PKTS = 40
SLOW_QUEUE_PKTS = 10


def _castlab(*args) -> list[str]:
    return [sys.executable, "-m", "castlab", *[str(a) for a in args]]


def test_bcf_pgm_repairs_reach_only_the_receivers_that_naked(tmp_path):
    topo = bcfs(receiver_hosts=2, queue_pkts=QUEUE_PKTS)
    topo.links = [dataclasses.replace(ln, queue_pkts=SLOW_QUEUE_PKTS) if (ln.a, ln.b) == ("r2", "rcv1") else ln
                  for ln in topo.links]
    name = f"p{os.getpid() % 100000}"
    rcvs = ["rcv1", "rcv2", "rcv3"]
    with Testbed(topo, name, routers="user", extensions={"r1": ("bcf", {}), "r2": ("bcf", {})},
                 session={"session": 85}) as tb:
        ttl = tb.topo.hops("src", "rcv1") + 1
        words = [*tb.session_words(), "--ttl", ttl, *tb.host_words(), "--count", COUNT]
        rx = {h: tb.spawn(h, _castlab("net", "bcf-pgm-receiver", "--addr", tb.addr(h), "--node", tb.node_id(h),
                                      "--iface-addr", tb.addr(h), "--duration", 10, "--out", tmp_path / h, *words),
                          stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
              for h in rcvs}
        time.sleep(1.5)  # every receiver's join has crossed both routers before the first packet
        src = tb.spawn("src", _castlab("net", "bcf-pgm-source", "--duration", 8.5, "--rate_bps", RATE_BPS,
                                       "--iface-addr", tb.addr("src"), "--out", tmp_path / "src", *words),
                       stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
        outs = {h: p.communicate(timeout=40)[0].decode() for h, p in rx.items()}
        outs["src"] = src.communicate(timeout=40)[0].decode()
        ports = {r: [p["name"] for p in tb.router_stats(r)["ports"]] for r in ("r1", "r2")}
        ifs = {h: ports["r2"].index(tb.iface("r2", h)) for h in rcvs}
        up = ports["r1"].index(tb.iface("r1", "r2"))
    assert all(p.returncode == 0 for p in [*rx.values(), src]), outs
    rec = {h: json.loads((tmp_path / h / "bcf_pgm_stats.json").read_text()) for h in [*rcvs, "src"]}
    ext = {r: tb.final_router_stats[r]["extension"]["status"] for r in ("r1", "r2")}
    assert rec["src"]["data_sent"] == COUNT, rec["src"]
    slow = rec["rcv1"]
    # the slow receiver lost originals at its link, NAKed them, and the repairs made it whole
    assert slow["data_received"] < COUNT and slow["naks_sent"] > 0, (slow, outs["rcv1"])
    assert slow["complete"] and slow["repairs_received"] >= COUNT - slow["data_received"], slow
    # no receiver got a repair for a packet it had not NAKed (§II-B.3: "nobody else")
    assert all(rec[h]["repairs_unrequested"] == 0 for h in rcvs), rec
    # a fast receiver that lost nothing asked for nothing and got nothing, and r2 put no reply
    # on its link (at least one of them: the fast links and the up-link have room to spare,
    # though a loaded machine can lose a packet anywhere)
    per = ext["r2"]["replies_per_channel"]
    quiet = [h for h in ("rcv2", "rcv3") if rec[h]["naks_sent"] == 0]
    ports = {r: {p["name"]: p for p in tb.final_router_stats[r]["ports"]} for r in ("r1", "r2")}
    assert quiet, (ports["r1"], {h: rec[h] for h in ("rcv2", "rcv3")})
    for h in quiet:
        assert rec[h]["data_received"] == COUNT and rec[h]["repairs_received"] == 0, (h, rec[h])
        assert per[ifs[h]] == 0, (h, per, ifs)
    # the replies went down the breadcrumbs: r2 onto rcv1's link, r1 toward r2 only
    assert per[ifs["rcv1"]] >= slow["repairs_received"] > 0, (per, slow)
    assert sum(per) == ext["r2"]["reply_copies"], ext["r2"]
    assert ext["r1"]["replies_per_channel"][up] == ext["r1"]["reply_copies"] > 0, ext["r1"]
