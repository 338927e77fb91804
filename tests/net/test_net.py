"""The ``castlab net`` roles as separate processes over loopback multicast, inside a network
namespace each test creates and deletes itself (skipped, with the reason, without root or
``ip netns``). Traffic stays on that namespace's loopback; groups are in 239.0.0.0/8, TTL 1.
Processes are started by the test and stopped by their pid only."""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import socket
import struct
import subprocess
import sys
import threading
import time
from pathlib import Path

import pandas as pd
import pytest

import castlab
from castlab import frames

PORT_BASE = 47000


def _ip(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(["ip", *args], capture_output=True, text=True, timeout=20)


def _skip_reason() -> str | None:
    if not hasattr(os, "geteuid") or os.geteuid() != 0:
        return "needs root to create a network namespace"
    if shutil.which("ip") is None:
        return "needs iproute2's `ip`"
    return None


_counter = [0]


@pytest.fixture
def netns():
    """A fresh namespace with loopback up, multicast on and 239.0.0.0/8 routed to it; deleted
    afterwards whatever happens (SIGTERM is turned into an exception so that `finally` runs)."""
    why = _skip_reason()
    if why:
        pytest.skip(why)
    _counter[0] += 1
    name = f"castlab-t-{os.getpid()}-py{_counter[0]}"
    r = _ip("netns", "add", name)
    if r.returncode != 0:
        pytest.skip(f"cannot create a network namespace: {r.stderr.strip()}")

    def on_term(signum, frame):
        raise KeyboardInterrupt("SIGTERM")

    old = signal.signal(signal.SIGTERM, on_term)
    try:
        for args in (("link", "set", "lo", "up", "multicast", "on"), ("route", "add", "239.0.0.0/8", "dev", "lo")):
            r = _ip("-n", name, *args)
            assert r.returncode == 0, r.stderr
        yield name
    finally:
        _ip("netns", "del", name)
        signal.signal(signal.SIGTERM, old)


class Role:
    """One `castlab net ROLE` process inside the namespace; its output is read as it comes."""

    def __init__(self, ns: str, role: str, *args: str):
        cmd = ["ip", "netns", "exec", ns, sys.executable, "-m", "castlab", "net", role, "--status-interval", "0.5",
               *args]
        # `ip netns exec` execs the command: the pid is the role's own.
        self.p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        self.role = role
        self.lines: list[str] = []
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()

    def _read(self) -> None:
        for line in self.p.stdout:
            self.lines.append(line)

    @property
    def out(self) -> str:
        return "".join(self.lines)

    def ready(self, timeout: float = 30.0) -> None:
        """Wait until the role has built its agent (bound and joined): its first line."""
        deadline = time.monotonic() + timeout
        while not any(line.startswith(f"[{self.role}] session") for line in self.lines):
            assert self.p.poll() is None, f"{self.role} exited before it was ready: {self.out}"
            assert time.monotonic() < deadline, f"{self.role} not ready after {timeout} s: {self.out}"
            time.sleep(0.02)

    def wait(self, timeout: float) -> str:
        try:
            self.p.wait(timeout=timeout)
            self._reader.join(timeout=10)
        finally:
            self.stop()
        return self.out

    def signal(self, sig: int) -> None:
        if self.p.poll() is None:
            self.p.send_signal(sig)

    def stop(self) -> None:
        if self.p.poll() is None:
            self.p.kill()
            self.p.wait(timeout=10)


@pytest.fixture
def roles():
    started: list[Role] = []

    def start(*a) -> Role:
        r = Role(*a)
        started.append(r)
        return r

    yield start
    for r in started:
        r.stop()


def status_lines(out: str, role: str) -> list[str]:
    return re.findall(rf"^\[{role}\] t=\s*[\d.]+s .*$", out, flags=re.M)


def test_source_rlm_receiver_and_sink_roles(netns, roles, tmp_path):
    fast_rlm = ["--config", "t_min=0.3", "--config", "detection_init=0.2", "--config", "detection_dev_init=0.05"]
    rlm = roles(netns, "rlm-receiver", "--addr", "127.0.0.2", "--node", "1", "--duration", "60",
                "--out", str(tmp_path / "rlm"), "--format", "parquet", *fast_rlm)
    sink = roles(netns, "sink", "--addr", "127.0.0.3", "--node", "2", "--level", "2", "--duration", "7",
                 "--out", str(tmp_path / "sink"))
    rlm.ready()
    sink.ready()
    src = roles(netns, "source", "--duration", "4", "--layers", "6", "--base-rate", "32k")
    src_out = src.wait(30)
    sink_out = sink.wait(30)
    rlm.signal(signal.SIGINT)
    rlm_out = rlm.wait(30)

    # every role printed periodic status lines and a summary, and exited 0
    assert src.p.returncode == 0, src_out
    assert sink.p.returncode == 0, sink_out
    assert rlm.p.returncode == 0, rlm_out
    assert len(status_lines(src_out, "source")) >= 6, src_out
    assert len(status_lines(sink_out, "sink")) >= 6, sink_out
    assert "stopped by SIGINT" in rlm_out, rlm_out
    assert "stopped by duration" in src_out and "stopped by duration" in sink_out
    assert re.search(r"level=\d+ state=[SHMD] rate=", rlm_out), rlm_out

    # the source sent at its offered rate: 32·(2^6 - 1) kb/s = 2.016 Mb/s of 1000-byte packets
    sent = int(re.search(r"sent (\d+) datagrams", src_out).group(1))
    assert 0.85 * 2.016e6 * 4 / 8000 <= sent <= 1.1 * 2.016e6 * 4 / 8000, sent

    # the sink: records in the simulator's frame columns, layers 0 and 1 only, nothing lost
    arr = pd.read_csv(tmp_path / "sink" / "arrivals.csv")
    sim = castlab.Simulator(seed=1)
    sim.add_node("a")
    a = sim.add_sink("a", port=5, record="arrivals")
    assert list(arr.columns) == list(frames.arrivals_frame(sim, a).columns)
    assert list(pd.read_csv(tmp_path / "sink" / "losses.csv").columns) == list(frames.losses_frame(sim, a).columns)
    assert set(arr["layer"]) == {0, 1}
    # 32 + 64 kb/s of 1000-byte packets: 12 packets/s over the 4 s the source ran (the sink
    # runs longer and sees all of it), up to the source's jitter
    assert 42 <= len(arr) <= 54, len(arr)
    assert len(pd.read_csv(tmp_path / "sink" / "losses.csv")) == 0
    st = json.loads((tmp_path / "sink" / "net_stats.json").read_text())
    assert st["stats"]["delivered"] == len(arr)
    assert st["params"]["network"] == "real"

    # the RLM receiver climbed on a lossless path, and its records were written on SIGINT
    levels = pd.read_parquet(tmp_path / "rlm" / "levels.parquet")  # --format parquet
    assert not (tmp_path / "rlm" / "levels.csv").exists()
    assert list(levels.columns) == ["time_s", "time_ns", "agent", "level"]
    assert levels["level"].max() >= 3, levels
    counts = json.loads((tmp_path / "rlm" / "rlm_counts.json").read_text())
    assert counts["lost"] == 0 and counts["received"] > 100, counts
    rst = json.loads((tmp_path / "rlm" / "net_stats.json").read_text())
    assert rst["stopped_by"] == "SIGINT"
    assert sum(rst["stats"][k] for k in ("malformed", "foreign_session", "bad_mac", "wrong_source")) == 0


def test_lesbcc_source_and_pgm_receiver_nak_over_the_network(netns, roles, tmp_path):
    # The source's rate cap (150 kb/s) is below LE-SBCC's initial rate (200 kb/s): the cap drops
    # packets, the receiver sees gaps and NAKs them by unicast, and the source's cascade hears
    # the loss indications (§2, §5.1) and repairs.
    rx = roles(netns, "pgm-receiver", "--addr", "127.0.0.2", "--node", "1", "--duration", "60",
               "--out", str(tmp_path / "pgm"))
    rx.ready()
    src = roles(netns, "lesbcc-source", "--policy", "aimd", "--duration", "4", "--rate-cap", "150k",
                "--rate-cap-burst", "3000",
                "--out", str(tmp_path / "les"))
    src_out = src.wait(30)
    rx.signal(signal.SIGTERM)
    rx_out = rx.wait(30)
    assert src.p.returncode == 0 and rx.p.returncode == 0, src_out + rx_out
    assert "stopped by SIGTERM" in rx_out, rx_out
    assert len(status_lines(src_out, "lesbcc-source")) >= 6
    assert len(status_lines(rx_out, "pgm-receiver")) >= 6

    pgm = json.loads((tmp_path / "pgm" / "pgm_receiver_stats.json").read_text())
    les = json.loads((tmp_path / "les" / "lesbcc_stats.json").read_text())
    sst = json.loads((tmp_path / "les" / "net_stats.json").read_text())["stats"]
    assert sst["rate_cap_drops"] > 0
    assert pgm["gaps"] > 0 and pgm["naks_sent"] > 0, pgm
    assert les["lis"] > 0, les  # the NAKs crossed the network to the source
    assert les["receivers"] == ["node 1"]  # the source's table lists only itself
    assert les["rate_reductions"] > 0
    assert pgm["unique"] > 100
    rates = pd.read_csv(tmp_path / "les" / "rates.csv")
    assert list(rates.columns) == ["time_s", "time_ns", "agent", "rate_bps"]
    assert rates["rate_bps"].min() < 200e3  # it came down from the initial rate


# ---- a hostile-packet storm at a running receiver, built from the documented wire format

def codec_data(src_node: int, src_port: int, dst_group: int | None, dst: tuple[int, int] | None,
               size: int, flow: int, seq: int, layer: int) -> bytes:
    """castlab_core::codec for a data packet (crates/castlab-core/src/codec.rs)."""
    dkind, dnode, dport = (1, dst_group, 0) if dst_group is not None else (0, dst[0], dst[1])
    return struct.pack(">BBBBIHBBIHHIIQQQ", 1, dkind, 0, 0, src_node, src_port, layer, 0, dnode, dport, 0,
                       size, flow, seq, 7, 0)


def envelope(session: int, codec: bytes, size: int, mac_flag: bool = False, extra: int = 0) -> bytes:
    """castlab-net's envelope (crates/castlab-net/src/envelope.rs), padded to `size`."""
    head = b"CLAB" + struct.pack(">BBHIQ", 2, 1 if mac_flag else 0, len(codec), session, 0)  # epoch 0: untracked
    body = head + (b"\x00" * 16 if mac_flag else b"") + codec
    return body + b"\x00" * (max(size - len(body), 0) + extra)


def test_packet_storm_is_counted_and_the_receiver_keeps_working(netns, roles, tmp_path):
    # both take the session from a file: session id 5, two layers
    sf = tmp_path / "session.json"
    sf.write_text(json.dumps({"session": 5, "layers": 2, "group-base": "239.255.0.1", "port_base": PORT_BASE}))
    sink = roles(netns, "sink", "--session-file", str(sf), "--addr", "127.0.0.2", "--node", "1", "--level", "1",
                 "--duration", "60", "--out", str(tmp_path / "sink"))
    sink.ready()
    src = roles(netns, "source", "--session-file", str(sf), "--duration", "60", "--base-rate", "80k",
                "--packet-size", "500")
    src.ready()
    time.sleep(0.5)
    storm = r"""
import socket, struct, sys
sys.path.insert(0, %r)
from test_net import codec_data, envelope
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.setsockopt(socket.IPPROTO_IP, socket.IP_MULTICAST_TTL, 1)
s.setsockopt(socket.IPPROTO_IP, socket.IP_MULTICAST_IF, socket.inet_aton("127.0.0.1"))
s.bind(("127.0.0.1", 0))          # the group's source address: passes the kernel's source filter
u = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
u.bind(("127.0.0.9", 0))          # a stranger
group = ("239.255.0.1", %d)
uni = ("127.0.0.2", %d)
ok = codec_data(0, 1, 0, None, 500, 1, 10**9, 0)
for k in range(30):
    s.sendto(bytes((k * 7 + i) %% 256 for i in range(k)), group)                  # malformed
for _ in range(20):
    s.sendto(envelope(999, ok, 500), group)                                       # foreign session
for _ in range(20):
    s.sendto(envelope(5, ok, 500, extra=1), group)                                # wrong size
for _ in range(20):
    s.sendto(envelope(5, ok, 500, mac_flag=True), group)                          # MAC on an unkeyed session
to_sink = codec_data(0, 1, None, (1, 1), 500, 1, 10**9, 0)
for _ in range(20):
    u.sendto(envelope(5, to_sink, 500), uni)                                      # claims node 0, from .9
to_other = codec_data(1, 1, None, (1, 2), 500, 1, 10**9, 0)
for _ in range(20):
    u.sendto(envelope(5, to_other, 500), uni)                                     # not for this agent
""" % (str(Path(__file__).parent), PORT_BASE, PORT_BASE + 1)
    r = subprocess.run(["ip", "netns", "exec", netns, sys.executable, "-c", storm], capture_output=True, text=True,
                       timeout=30)
    assert r.returncode == 0, r.stderr
    time.sleep(2.0)  # the stream goes on after the storm; both roles stop on SIGINT
    src.signal(signal.SIGINT)
    src_out = src.wait(30)
    sink.signal(signal.SIGINT)
    sink_out = sink.wait(30)
    assert sink.p.returncode == 0, sink_out
    st = json.loads((tmp_path / "sink" / "net_stats.json").read_text())["stats"]
    want = {"malformed": 30, "foreign_session": 20, "wrong_size": 20, "bad_mac": 20, "wrong_source": 20,
            "misdirected": 20, "unauthenticated": 0}
    assert {k: st[k] for k in want} == want, sink_out
    assert json.loads((tmp_path / "sink" / "net_stats.json").read_text())["params"]["session"] == 5
    arr = pd.read_csv(tmp_path / "sink" / "arrivals.csv")
    assert (arr["seq"] == 10**9).sum() == 0
    # it kept receiving after the storm: layer 0 at 80 kb/s of 500-byte packets is 20/s
    last = arr["time_s"].max()
    after = arr[arr["time_s"] > last - 1.5]
    assert len(after) >= 20, (len(after), src_out)
    assert len(pd.read_csv(tmp_path / "sink" / "losses.csv")) == 0


# ---- bad input: a clear error naming the field, exit status 2, before any packet is sent

@pytest.mark.parametrize("args, needle", [
    (["sink", "--duration", "-1"], "--duration"),
    (["sink", "--status-interval", "0"], "--status-interval"),
    (["sink", "--level", "9", "--layers", "6"], "schedule"),
    (["sink", "--layers", "0"], "groups"),
    (["sink", "--node", "0"], "--node"),
    (["sink", "--addr", "not-an-ip"], "nodes"),
    (["sink", "--ttl", "0"], "ttl"),
    (["sink", "--group-base", "224.0.0.1"], "group address"),
    (["sink", "--addr", "192.0.2.77"], "bind"),
    (["source", "--base-rate", "1M"], "--rate-cap"),
    (["source", "--base-rate", "1e12", "--rate-cap", "1e15"], "rates_bps"),
    (["source", "--layers", "3", "--rates", "100k,200k"], "--rates: 2 rates for --layers 3"),
    (["source", "--layers", "2", "--rates", "15M,10M"], "--rates: the 2 layers offer"),
    (["rlm-receiver", "--config", "bogus=1"], "bogus: unknown setting"),
    (["sink", "--session-file", "/nonexistent/session.json"], "--session-file"),
    (["rlm-receiver", "--config", "t_min=-1"], "t_min"),
    (["pgm-receiver", "--config", "nak_rpt_ivl=0"], "nak_rpt_ivl"),
])
def test_bad_input_is_refused_with_the_field_named(args, needle):
    # Every case fails while building the role, before a socket sends anything.
    extra = [] if "--duration" in args else ["--duration", "1"]
    r = subprocess.run([sys.executable, "-m", "castlab", "net", *args, *extra], capture_output=True, text=True,
                       timeout=60)
    assert r.returncode == 2, (r.stdout, r.stderr)
    assert needle in r.stderr, r.stderr
    assert "Traceback" not in r.stderr


@pytest.mark.parametrize("bad", [["--rate-cap", "-5"], ["--rate-cap", "fast"], ["--key", "zz"]])
def test_bad_flag_values_are_argparse_errors(bad):
    r = subprocess.run([sys.executable, "-m", "castlab", "net", "sink", *bad], capture_output=True, text=True,
                       timeout=60)
    assert r.returncode == 2 and "Traceback" not in r.stderr, r.stderr
    assert bad[0] in r.stderr or "rate" in r.stderr or "key" in r.stderr, r.stderr


def test_session_file_with_an_unknown_key_is_refused(tmp_path):
    sf = tmp_path / "s.json"
    sf.write_text(json.dumps({"sesion": 3}))
    r = subprocess.run([sys.executable, "-m", "castlab", "net", "sink", "--session-file", str(sf)],
                       capture_output=True, text=True, timeout=60)
    assert r.returncode == 2 and "sesion" in r.stderr and "Traceback" not in r.stderr, r.stderr


# ---- the binding's run loop, in process (a unicast sink on loopback: no packet is sent)

def _idle_driver():
    from castlab.net import NetDriver

    d = NetDriver([(1, "127.0.0.2")], [], {"port_base": 20000 + os.getpid() % 20000})
    d.add_sink(1, 1, 1, record="arrivals")
    return d


def test_run_calls_status_on_schedule_and_returns_at_the_duration():
    d = _idle_driver()
    calls = []
    t0 = time.monotonic()
    d.run(1.0, status=lambda: calls.append(d.now), status_interval=0.25)
    wall = time.monotonic() - t0
    assert 0.95 <= wall < 1.5, wall
    assert len(calls) in (3, 4), calls  # at 0.25, 0.5, 0.75 (and 1.0 if it falls inside)
    assert all(b - a > 0.2 for a, b in zip(calls, calls[1:])), calls
    assert d.stats()["recv_buffer_bytes"] > 0


def test_sigint_stops_run_within_the_slice_and_keeps_the_driver():
    import threading

    d = _idle_driver()
    threading.Timer(0.3, os.kill, (os.getpid(), signal.SIGINT)).start()
    t0 = time.monotonic()
    with pytest.raises(KeyboardInterrupt):
        d.run(10.0)
    waited = time.monotonic() - t0
    assert waited < 0.3 + 0.25, waited  # the GIL comes back at least every 100 ms
    assert d.sink_arrivals(1)["time_ns"].size == 0 and d.now >= 0.3
    d.run(0.1)  # still usable


def test_tfmcc_source_and_receiver_roles_over_the_network(netns, roles, tmp_path):
    # TFMCC on sockets: the receiver measures its RTT from the sender's echoes (loopback: about
    # a millisecond, though the two processes' clocks start apart) and reports twice its receive
    # rate, so the sender leaves its initial one packet per 500 ms in slowstart.
    rx = roles(netns, "tfmcc-receiver", "--addr", "127.0.0.2", "--node", "1", "--duration", "60",
               "--out", str(tmp_path / "rx"))
    time.sleep(1.0)
    src = roles(netns, "tfmcc-source", "--duration", "5", "--out", str(tmp_path / "src"))
    src_out = src.wait(30)
    rx.signal(signal.SIGTERM)
    rx_out = rx.wait(30)
    assert src.p.returncode == 0 and rx.p.returncode == 0, src_out + rx_out
    rtt = pd.read_csv(tmp_path / "rx" / "tfmcc_receiver_rtt.csv")
    assert len(rtt) > 0 and rtt["sample_s"].max() < 0.1, rtt.tail()
    counts = json.loads((tmp_path / "rx" / "tfmcc_receiver_counts.json").read_text())
    assert counts["received"] > 20, (counts, rx_out)
    rates = pd.read_csv(tmp_path / "src" / "tfmcc_rate.csv")
    assert rates["bps"].max() > 4 * 16_000, rates.tail()
    fb = pd.read_csv(tmp_path / "src" / "tfmcc_fb.csv")
    assert len(fb) > 0 and fb["rtt_s"].max() < 0.1, fb.tail()


def test_tfmcc_receiver_leaves_at_the_end_of_its_run_and_tells_the_sender(netns, roles, tmp_path):
    # The only receiver is the CLR; it runs 4 s of the source's 8 s, then leaves with a
    # receiver_leave report (RFC 4654 §3.3 case 3), which the sender counts.
    rx = roles(netns, "tfmcc-receiver", "--addr", "127.0.0.2", "--node", "1", "--duration", "4",
               "--out", str(tmp_path / "rx"))
    time.sleep(0.5)
    src = roles(netns, "tfmcc-source", "--duration", "8", "--out", str(tmp_path / "src"))
    rx_out = rx.wait(30)
    src_out = src.wait(30)
    assert src.p.returncode == 0 and rx.p.returncode == 0, src_out + rx_out
    rc = json.loads((tmp_path / "rx" / "tfmcc_receiver_counts.json").read_text())
    assert rc["left_s"] == pytest.approx(4.0, abs=0.1) and rc["leave_reported"], (rc, rx_out)
    sc = json.loads((tmp_path / "src" / "tfmcc_counts.json").read_text())
    assert sc["clr_leaves"] == 1 and sc["leave_reports"] == 1, (sc, src_out)


def test_pgmcc_source_and_receiver_roles_over_the_network(netns, roles, tmp_path):
    # PGMCC on sockets: the one receiver answers the source's first packet with an election NAK
    # (draft §2.3.1), becomes the acker and ACKs every packet, which clocks the source's window.
    rx = roles(netns, "pgmcc-receiver", "--addr", "127.0.0.2", "--node", "1", "--duration", "60",
               "--out", str(tmp_path / "rx"))
    time.sleep(1.0)
    src = roles(netns, "pgmcc-source", "--duration", "5", "--out", str(tmp_path / "src"))
    src_out = src.wait(30)
    rx.signal(signal.SIGTERM)
    rx_out = rx.wait(30)
    assert src.p.returncode == 0 and rx.p.returncode == 0, src_out + rx_out
    rc = json.loads((tmp_path / "rx" / "pgmcc_receiver_counts.json").read_text())
    assert rc["received"] > 100 and rc["election_naks"] >= 1, (rc, rx_out)
    assert rc["acks_sent"] >= rc["received"] - 2, rc
    sc = json.loads((tmp_path / "src" / "pgmcc_counts.json").read_text())
    assert sc["acks"] > 100 and sc["naks"] >= 1, (sc, src_out)
    acker = pd.read_csv(tmp_path / "src" / "pgmcc_acker.csv")
    assert len(acker) >= 1 and (acker["receiver"] >= 0).all(), acker
    st = json.loads((tmp_path / "src" / "pgmcc_source.json").read_text())
    assert st["acker"] is not None and st["window"] > 4, st


def test_webrc_source_and_receiver_roles_over_the_network(netns, roles, tmp_path):
    # WEBRC on sockets (castlab's envelope): a short session (TSD 1 s, N = 4 waves, T = 7,
    # BCR_P 10 packets/s) so that a few seconds hold several slots; the receiver never sends,
    # joins the base channel, measures its ARTT and joins waves (nothing limits loopback).
    cfg = []
    for kv in ("tsd=1", "qd=3", "waves=4", "layers=8", "bcr_p=10", "el=0.05"):
        cfg += ["--config", kv]
    rx = roles(netns, "webrc-receiver", "--addr", "127.0.0.2", "--node", "1", "--duration", "60",
               "--out", str(tmp_path / "rx"), *cfg)
    time.sleep(1.0)
    src = roles(netns, "webrc-source", "--duration", "6", "--out", str(tmp_path / "src"), *cfg)
    src_out = src.wait(30)
    rx.signal(signal.SIGTERM)
    rx_out = rx.wait(30)
    assert src.p.returncode == 0 and rx.p.returncode == 0, src_out + rx_out
    assert re.search(r"nwc=\d+ rate=", rx_out), rx_out
    rc = json.loads((tmp_path / "rx" / "webrc_receiver_counts.json").read_text())
    # SR_P = 10·(1 + 4/3 + ... + (4/3)^4) = 96.4 packets/s at most: 6 s give a few hundred
    assert 60 < rc["received"] < 600, (rc, rx_out)
    assert rc["slot_changes"] >= 4 and rc["left_session"] is False, rc
    st = json.loads((tmp_path / "src" / "webrc_source.json").read_text())
    assert st["sent"] >= rc["received"], st


def test_rlc_source_and_receiver_roles_over_the_network(netns, roles, tmp_path):
    # RLC on sockets: the receiver starts at level 1 and joins at the source's SPs (every 0.5 s
    # here, shortened so that a few seconds show several joins); nothing limits the rate on
    # loopback, so it only climbs.
    cfg = ["--config", "layers=5", "--config", "sp_base=0.5"]
    rx = roles(netns, "rlc-receiver", "--addr", "127.0.0.2", "--node", "1", "--duration", "60",
               "--out", str(tmp_path / "rlc"), *cfg)
    rx.ready()
    src = roles(netns, "rlc-source", "--duration", "5", *cfg)
    src_out = src.wait(30)
    rx.signal(signal.SIGTERM)
    rx_out = rx.wait(30)
    assert src.p.returncode == 0 and rx.p.returncode == 0, src_out + rx_out
    counts = json.loads((tmp_path / "rlc" / "rlc_counts.json").read_text())
    assert len(counts["join_ns"]) >= 3, (counts, rx_out)
    assert sum(counts["received"]) > 100 and sum(counts["lost"]) == 0, counts
    levels = pd.read_csv(tmp_path / "rlc" / "rlc_level.csv")
    assert levels["level"].max() >= 4


def test_flid_source_and_receiver_roles_over_the_network(netns, roles, tmp_path):
    # FLID-DL on sockets (castlab's envelope): 6 groups, 2 quiescent, so levels 1..4; at these
    # levels every slot's increase signal covers the receiver (p_L = 1), and loopback loses
    # nothing, so it climbs one level per 0.5 s slot and then keeps level 4 by joining one
    # rotating group per slot.
    cfg = ["--config", "layers=6", "--config", "quiescent_slots=2"]
    rx = roles(netns, "flid-receiver", "--addr", "127.0.0.2", "--node", "1", "--duration", "60",
               "--out", str(tmp_path / "flid"), *cfg)
    rx.ready()
    src = roles(netns, "flid-source", "--duration", "5", *cfg)
    src_out = src.wait(30)
    rx.signal(signal.SIGTERM)
    rx_out = rx.wait(30)
    assert src.p.returncode == 0 and rx.p.returncode == 0, src_out + rx_out
    counts = json.loads((tmp_path / "flid" / "flid_counts.json").read_text())
    assert len(counts["increase_ns"]) == 3 and counts["decrease_ns"] == [], (counts, rx_out)
    assert sum(counts["received"]) > 100 and sum(counts["lost"]) == 0 and counts["slots"] >= 8, counts
    levels = pd.read_csv(tmp_path / "flid" / "flid_level.csv")
    assert levels["level"].max() == 4


def test_one_stop_exception_for_the_roles_and_the_router():
    """SIGTERM inside stop_on_signals raises castlab.stopping.Stopped naming it, for the host
    roles and the router alike; the handlers in force before are put back after the block."""
    from castlab import net, router
    from castlab.stopping import Stopped, stop_on_signals

    assert net.Stopped is Stopped and router.Stopped is Stopped
    before = signal.getsignal(signal.SIGTERM)
    with pytest.raises(Stopped, match="^SIGTERM$"):
        with stop_on_signals():
            os.kill(os.getpid(), signal.SIGTERM)
            time.sleep(5)  # the handler raises before this returns
    assert signal.getsignal(signal.SIGTERM) is before
