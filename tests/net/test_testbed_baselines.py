"""The baselines' roles on the testbed with castlab's user-space routers, root only (skipped
with the reason elsewhere): a 2-hop tree, the source behind r1, a fast receiver on r1 and a
slow one behind r2, whose link onto it is a kernel bottleneck (tc tbf + pfifo).

- PGMCC over RFC 3208's wire (``--wire pgm``: ODATA/RDATA with OpenPGM's OPT_PGMCC_DATA, NAKs
  and ACKs with OPT_PGMCC_FEEDBACK, ACK type 0x0d): the slow receiver is elected acker and its
  ACKs clock the source down to the slow link's rate; tshark's own PGM dissector decodes the
  source's capture (the ACK's fields and the acker's address in the data packets).
- an unmodified OpenPGM receiver (libpgm-5.3 through ``openpgm_cc_receiver.py``, its congestion
  control on) on the fast branch: elected acker, its ACKs clock castlab's source.
- FLID-DL and WEBRC (castlab's envelope): the receiver behind the slow hop gets less than the
  fast one, and no more than its link carries.

Numbers (what each receiver got, the rates after the acker switch): docs/testbed.md, "The
baselines on a 2-hop tree".

Each test builds its own testbed (namespaces ``cl-<name>-*``, the pid in the name,
``testbed_name``) and removes it on success, failure and interrupt; multicast stays in
239.0.0.0/8 with a TTL of the hop count plus one; every process is started by the test and
bounded by its ``--duration``.
"""

from __future__ import annotations

import collections
import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pandas as pd
import pytest

from castlab.experiments.net_common import testbed_name as _testbed_name
from castlab.testbed import Link, Testbed, Topology, available

REASON = available()
pytestmark = pytest.mark.skipif(REASON is not None, reason=f"testbed unavailable: {REASON}")

#: The slow last hop: 400 kb/s, 20 packets of pfifo. The other links are unshaped veths.
SLOW_BPS = 400_000
#: The roles' default port base: the groups' UDP port, where tshark is told PGM runs.
PORT = 47000


def _tree() -> Topology:
    return Topology(
        name="tree2",
        description="src - r1 - fast; r1 - r2 - slow, the last hop a tbf bottleneck",
        hosts=["src", "fast", "slow"],
        routers=["r1", "r2"],
        links=[Link("src", "r1"), Link("r1", "fast"), Link("r1", "r2"), Link("r2", "slow", rate_bps=SLOW_BPS, queue_pkts=20)],
    )


def _castlab(*args) -> list[str]:
    return [sys.executable, "-m", "castlab", *[str(a) for a in args]]


def _load() -> str:
    return "load average %.2f %.2f %.2f" % os.getloadavg()


@pytest.mark.skipif(shutil.which("tshark") is None, reason="needs tshark (make setup installs it with apt)")
def test_pgmcc_on_the_pgm_wire_follows_the_slow_receiver(tmp_path):
    duration = 12.0
    with Testbed(_tree(), _testbed_name("q"), routers="user", session={"session": 86}) as tb:
        ttl = tb.topo.hops("src", "slow") + 1
        words = [*tb.session_words(), "--ttl", ttl, *tb.host_words(), "--wire", "pgm"]
        rx = {h: tb.spawn(h, _castlab("net", "pgmcc-receiver", "--addr", tb.addr(h), "--node", tb.node_id(h),
                                      "--iface-addr", tb.addr(h), "--duration", duration + 6,
                                      "--out", tmp_path / h, *words),
                          stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
              for h in ("fast", "slow")}
        time.sleep(1.5)  # both joins have crossed the routers before the first packet
        src = tb.spawn("src", _castlab("net", "pgmcc-source", "--duration", duration, "--iface-addr", tb.addr("src"),
                                       "--out", tmp_path / "src", "--pcap", tmp_path / "src.pcap", *words),
                       stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
        outs = {"src": src.communicate(timeout=duration + 40)[0].decode()}
        outs.update({h: p.communicate(timeout=40)[0].decode() for h, p in rx.items()})
        load = _load()
    assert src.returncode == 0 and all(p.returncode == 0 for p in rx.values()), outs
    sc = json.loads((tmp_path / "src" / "pgmcc_counts.json").read_text())
    st = json.loads((tmp_path / "src" / "pgmcc_source.json").read_text())
    rc = {h: json.loads((tmp_path / h / "pgmcc_receiver_counts.json").read_text()) for h in ("fast", "slow")}
    net = json.loads((tmp_path / "src" / "net_stats.json").read_text())["stats"]
    acker = pd.read_csv(tmp_path / "src" / "pgmcc_acker.csv")
    receivers = json.loads((tmp_path / "src" / "pgmcc_counts.json").read_text())
    ports = {r: {p["name"]: {k: v for k, v in p.items() if "drop" in k or k in ("tx_packets", "rx_packets")}
                 for p in tb.final_router_stats[r]["ports"]} for r in ("r1", "r2")}
    print(load, sc, st, rc, net, acker, ports, outs["src"], outs["slow"], sep="\n")

    # PGM on the wire: ODATA, NCF, RDATA and SPM out, NAKs and ACKs in, nothing refused
    assert net["pgm_sent_odata"] > 100 and net["pgm_received_ack"] > 100, net
    assert net["no_route"] == 0, net
    # elected, and the acker at the end is the slow receiver (its loss behind the bottleneck);
    # its ACKs clocked the window
    assert len(acker) >= 1 and st["acker"] is not None, (acker, outs["src"])
    assert st["acker"] == tb.addr("slow"), (st, receivers)
    assert sc["acks"] > 100 and rc["slow"]["acks_sent"] > 100, (sc, rc)
    assert rc["slow"]["lost"] > 0, rc["slow"]
    assert rc["fast"]["received"] >= rc["slow"]["received"] > 0.5 * sc["data_sent"], rc

    # tshark's own PGM dissector reads the capture: checksums good, nothing malformed, the ACKs'
    # RX_MAX and bitmap, and the data packets' acker the slow receiver's address
    r = subprocess.run(["tshark", "-n", "-r", str(tmp_path / "src.pcap"), "-d", f"udp.port=={PORT},pgm",
                        "-o", "pgm.check_checksum:TRUE", "-T", "fields", "-e", "pgm.hdr.type",
                        "-e", "pgm.hdr.cksum.status", "-e", "_ws.malformed", "-e", "pgm.ack.maxsqn",
                        "-e", "pgm.ack.bitmap", "-e", "pgm.opts.ccdata.acker.ipv4", "-e", "pgm.opts.ccdata.lossrate", "-e", "frame.time_relative"],
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    rows = [line.split("\t") for line in r.stdout.splitlines()]
    assert len(rows) == net["pcap_records"] > 0
    assert {x[1].split(",")[-1] for x in rows} == {"1"} and all(x[2] == "" for x in rows), rows[:5]
    by_type = collections.Counter(int(x[0], 0) for x in rows)
    assert by_type[0x0d] == net["pgm_received_ack"] and by_type[0x04] == net["pgm_sent_odata"], (by_type, net)
    acks = [x for x in rows if int(x[0], 0) == 0x0d]
    assert all(x[3] != "" and int(x[4], 0) & 1 for x in acks), acks[:5]
    ackers = collections.Counter(x[5] for x in rows if int(x[0], 0) == 0x04)
    # single-rate, following the slow receiver: from 2 s after the slow receiver became the acker
    # to the end, what the source sent (ODATA and RDATA, 1000-byte datagrams) is the slow link's
    # rate, though the fast receiver could take more
    switch = acker["time_s"][acker["receiver"] == receivers["receivers"].index(tb.addr("slow"))].iloc[-1]
    data_t = sorted(float(x[7]) for x in rows if int(x[0], 0) in (0x04, 0x05))
    after = [t for t in data_t if t >= switch + 2.0]
    sent_bps = len(after) * 1000 * 8 / (after[-1] - after[0])
    print(by_type, ackers, f"slow acker from {switch:.2f} s; sent {sent_bps / 1e3:.0f} kb/s after {switch + 2:.2f} s")
    # the capture's clock starts with the source's first packet, the records' with the driver:
    # 0.1 s covers the difference; every ODATA after the switch names the slow receiver
    later = collections.Counter(x[5] for x in rows if int(x[0], 0) == 0x04 and float(x[7]) > switch + 0.1)
    assert set(later) == {tb.addr("slow")} and sum(later.values()) > 100, later
    assert 0.7 * SLOW_BPS < sent_bps < 1.2 * SLOW_BPS, sent_bps
    # the source's shutdown step ends the session: one SPM with OPT_FIN, its last packet
    text = subprocess.run(["tshark", "-n", "-r", str(tmp_path / "src.pcap"), "-d", f"udp.port=={PORT},pgm", "-V",
                           "-Y", "ip.src==" + tb.addr("src")], capture_output=True, text=True, timeout=120).stdout
    frames = text.split("\nFrame ")
    assert text.count("Option: Fin") == 1 and "Option: Fin" in frames[-1] and "Type: SPM" in frames[-1], frames[-1]


def _multi_rate(tmp_path, kind: str, cfg: list[str], duration: float) -> dict:
    """A multi-rate scheme's source and a receiver on each branch for `duration` seconds; what
    each receiver process got (its driver's counters) and its records."""
    conf = [w for kv in cfg for w in ("--config", kv)]
    with Testbed(_tree(), _testbed_name(kind[0]), routers="user", session={"session": 87}) as tb:
        ttl = tb.topo.hops("src", "slow") + 1
        words = [*tb.session_words(), "--ttl", ttl, *tb.host_words(), *conf]
        rx = {h: tb.spawn(h, _castlab("net", f"{kind}-receiver", "--addr", tb.addr(h), "--node", tb.node_id(h),
                                      "--iface-addr", tb.addr(h), "--duration", duration + 3,
                                      "--out", tmp_path / h, *words),
                          stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
              for h in ("fast", "slow")}
        time.sleep(1.5)
        src = tb.spawn("src", _castlab("net", f"{kind}-source", "--duration", duration, "--iface-addr", tb.addr("src"),
                                       "--out", tmp_path / "src", *words),
                       stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
        outs = {"src": src.communicate(timeout=duration + 40)[0].decode()}
        outs.update({h: p.communicate(timeout=40)[0].decode() for h, p in rx.items()})
        load = _load()
    drops = {p["name"]: p["drops_forced"] for p in tb.final_router_stats["r2"]["ports"]}
    assert src.returncode == 0 and all(p.returncode == 0 for p in rx.values()), outs
    net = {h: json.loads((tmp_path / h / "net_stats.json").read_text())["stats"] for h in ("fast", "slow")}
    bps = {h: net[h]["bytes_received"] * 8 / duration for h in net}
    print(kind, load, {h: f"{b / 1e3:.0f} kb/s" for h, b in bps.items()}, "r2 drops", drops, sep="\n")
    print(outs["fast"].splitlines()[-3:], outs["slow"].splitlines()[-3:], sep="\n")
    return {"bps": bps, "outs": outs, "drops": drops}


def test_flid_receivers_behind_the_slow_hop_get_less(tmp_path):
    # FLID-DL (castlab's defaults: 64 kb/s base, x1.3 a layer, 0.5 s slots): the slow receiver
    # settles where its 400 kb/s hop stops losing; the fast one climbs on
    r = _multi_rate(tmp_path, "flid", [], 20.0)
    bps = r["bps"]
    assert bps["slow"] < 1.1 * SLOW_BPS, bps
    assert bps["fast"] > 1.5 * bps["slow"] > 0, bps


def test_webrc_receivers_behind_the_slow_hop_get_less(tmp_path):
    # WEBRC with a short session as in test_net.py (TSD 1 s, N = 4 waves, T = 7) and BCR_P of 20
    # packets/s: SR_P = 20·(1 + 4/3 + ... + (4/3)^4) = 193 packets/s (1.5 Mb/s) at most, above
    # the slow hop's 400 kb/s (50 packets/s of 1000 bytes)
    cfg = ["tsd=1", "qd=3", "waves=4", "layers=8", "bcr_p=20", "el=0.05"]
    r = _multi_rate(tmp_path, "webrc", cfg, 20.0)
    bps = r["bps"]
    assert bps["slow"] < 1.1 * SLOW_BPS, bps
    assert bps["fast"] > 1.5 * bps["slow"] > 0, bps


OPENPGM_RX = Path(__file__).with_name("openpgm_cc_receiver.py")


def _libpgm() -> str | None:
    import ctypes.util

    try:
        import ctypes

        ctypes.CDLL("libpgm-5.3.so.0")
    except OSError:
        return "needs OpenPGM's libpgm-5.3.so.0 (Debian's libpgm-5.3-0)"
    return None


@pytest.mark.skipif(_libpgm() is not None, reason=str(_libpgm()))
def test_an_openpgm_receiver_is_elected_acker_and_clocks_castlabs_source(tmp_path):
    # An unmodified OpenPGM receiver (its own congestion control on, through ctypes) on the fast
    # branch, castlab's PGMCC source on the PGM wire: OpenPGM answers the election with its ACK,
    # is elected, and its ACKs (RX_MAX and bitmap of PGM sequence numbers) clock the window.
    duration = 8.0
    with Testbed(_tree(), _testbed_name("o"), routers="user", session={"session": 88}) as tb:
        ttl = tb.topo.hops("src", "slow") + 1
        words = [*tb.session_words(), "--ttl", ttl, *tb.host_words(), "--wire", "pgm"]
        rx = tb.spawn("fast", [sys.executable, OPENPGM_RX, tb.addr("fast"), "239.255.0.1", PORT, duration + 4],
                      stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
        time.sleep(1.5)
        src = tb.spawn("src", _castlab("net", "pgmcc-source", "--duration", duration, "--iface-addr", tb.addr("src"),
                                       "--out", tmp_path / "src", "--pcap", tmp_path / "src.pcap", *words),
                       stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
        src_out = src.communicate(timeout=duration + 40)[0].decode()
        rx_out = rx.communicate(timeout=40)[0].decode()
        load = _load()
    assert src.returncode == 0 and rx.returncode == 0, (src_out, rx_out)
    got = json.loads(rx_out.strip().splitlines()[-1])
    sc = json.loads((tmp_path / "src" / "pgmcc_counts.json").read_text())
    st = json.loads((tmp_path / "src" / "pgmcc_source.json").read_text())
    net = json.loads((tmp_path / "src" / "net_stats.json").read_text())["stats"]
    print(load, got, sc, st, {k: v for k, v in net.items() if k.startswith("pgm_") or "drops" in k}, src_out,
          sep="\n")
    assert got["messages"] > 100, got
    assert st["acker"] == tb.addr("fast"), (st, src_out)
    assert sc["acks"] > 100 and net["pgm_received_ack"] > 100, (sc, net)
