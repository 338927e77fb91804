"""castlab's multicast congestion controllers and real third-party ones on one testbed bottleneck,
each against the same kernel TCP flows: ``net-peers``, and the case runner ``net-tfmcc-uftp``
(``net/tfmcc.py``) shares.

The bottleneck is a kernel tbf + pfifo on the receiver's bridge port (kernel routers,
igmpproxy, IGMP snooping with fast leave): the third-party peers (UFTP, NORM) send and join
through the kernel's own multicast stack and routing, which is what they are deployed on, and the
user-space router's delay lines would add a process per router namespace on a machine whose two
cores the run shares. So there is no propagation delay: round trips are serialisation and
queueing (up to ``QUEUE_PKTS`` packets at ``LINK_BPS``).

Every scheme is measured at the same place: a packet counter (``castlab.testbed.count``) on the
receiver ``rcv1``'s interface counts the multicast bytes that got through the bottleneck each
second, and each TCP flow's bytes by its port; one on the source's interface counts what the
scheme sent per group, for its loss. Each run gets a testbed of its own.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Optional

import numpy as np
import pandas as pd

from castlab.experiments.common import Result, at_least, claim_over_seeds, in_range
from castlab.experiments.net_common import _castlab, _skip, _unavailable, testbed_name
from castlab.testbed.topology import TBF_BURST_BYTES

LINK_BPS = 1e6  # the measurements: 1 Mb/s tbf
QUEUE_PKTS = 50  # pfifo 50, as they were taken
TCP_ALGOS = ("reno", "cubic", "bbr")
TCP_PORT = 5201
SESSION = 77
WARM_S = 10.0  # the first seconds (slow starts, UFTP's registration) are left out of the means
WINDOW_S = 10.0  # the "lowest 10 s rate" window
# RFC 4654 §1: "reasonably fair" is a sending rate "generally within a factor of two" of a TCP
# flow's under the same conditions; the band every share claim uses, decided before the runs.
FAIR_LO, FAIR_HI = 0.5, 2.0
SENDER_TAIL_S = 2.0  # senders run this much past the TCP flows, so they outlast the measurement
DROP_FLOOR = 0.1  # no drop to zero: every 10 s window above a tenth of the fair share (LE-SBCC §5.2.1)
# Seeds of net-peers' full form. Its claims are decided on the mean over them (claim_over_seeds),
# a rule fixed before the first multi-seed run; quick is one run.
FULL_SEEDS = 3
# Start orders: every scheme, castlab's and third-party, meets its TCP flows in
# the same relation. `scheme-first`: the TCP flows start LEAD_S after the scheme began sending
# data; `tcp-first`: the scheme's sender is started LEAD_S after the TCP flows. Either way the
# measurement (second 0 of series.csv) starts when both run: when the TCP flows are due (their
# spawn follows by milliseconds), or when the scheme sends its first data (UFTP first registers its
# receivers, so its data comes a few seconds after its start: the `lead_s` reading is the first
# side's real head start).
ORDERS = ("scheme-first", "tcp-first")
LEAD_S = 10.0
# The full forms: 180 s from the moment both run, the share per 30 s window (a start-up trap
# shows as a share that rises from window to window). The quick forms: one order, 30 s.
FULL_DURATION_S, QUICK_DURATION_S = 180.0, 30.0
SHARE_WINDOW_S = 30.0
QUICK_ORDERS = ("scheme-first",)
# The counters' bins. The readings take their seconds from the packet logs' kernel timestamps;
# the bins are the reading of a case without packet logs, placed on the run's clock to this
# resolution (a bin that holds a second's boundary is counted in the second it starts in).
COUNT_BIN_S = 0.1
# Item 5 (decided before the first run with the orders): a castlab scheme's testbed share within
# this factor of its simulated twin's share under the same order, per seed, decided on the mean
# over seeds with its t interval (undecided where the interval spans a bound).
NET_VS_SIM = 1.5
# The testbed's propagation delay per link: none (no netem on this kernel; every link is a veth
# pair). Its round trip beyond the queue is the stacks' latency, tens of µs (net-tcp-vs-sim's
# ICMP echoes measured 24-88 µs), which the twin does not model. The twin puts this on every link.
TESTBED_HOP_DELAY_S = 0.0
# The testbed's bottleneck is `tc ... tbf rate R burst 1600` over a pfifo (castlab.testbed's
# shaping, which declares the burst): a token bucket of 1600 bytes that lets a conforming packet
# leave at once. The twin puts this bucket on its last hops in place of serialisation
# (`tbf_burst`; None gives the serialising twin, an ablation).
TESTBED_TBF_BURST_BYTES = TBF_BURST_BYTES
# rcv1's own RTO for each kernel flow, per start order (ss -tin on rcv1, `rto`; LE-SBCC (AIMD),
# seed 1, 2026-11-28): a receiver that sends no data keeps the RTO of its handshake's RTT, 200 ms
# and a little more for the first flow (an empty path), over a second for flows whose handshake
# waited behind a queue. Linux's receiver ACKs at once after a gap longer than it (quick-ACK
# mode); a twin given `quickack_gap_s` does too.
TESTBED_RCV_RTO_S = {"scheme-first": {"reno": 0.204, "cubic": 1.216, "bbr": 0.8},
                     "tcp-first": {"reno": 0.204, "cubic": 1.784, "bbr": 1.604}}
# How long a twin's receivers start before its source. On the testbed `run_case` starts the
# sender only once every receiver listens, so the receivers have joined before its first packet;
# a twin whose receivers start with the source loses that packet (the graft reaches r1 as an event
# after it) and its receivers NAK it or take a loss event from it. The value only has to exceed the
# twin's join latency: the simulator's `join_latency` (0 in these scenarios) plus the links'
# propagation delays on the graft's two hops (TESTBED_HOP_DELAY_S each: none), i.e. 0 s.
TESTBED_RECEIVERS_LEAD_S = 0.1


def topology():
    """src - r1 - {rcv1, rcv2}: the bottleneck on rcv1's bridge port (tbf + pfifo, shared by the
    multicast scheme and every TCP flow, all of which end at rcv1); rcv2 is a second multicast
    receiver behind a port of its own at the same rate (no TCP)."""
    from castlab.testbed.topology import Lan, Link, Topology

    return Topology(name="peers", description=f"src - r1 =[{LINK_BPS / 1e6:g} Mb/s tbf, pfifo {QUEUE_PKTS} per port]=> "
                    "rcv1 (multicast + TCP), rcv2 (multicast)", hosts=["src", "rcv1", "rcv2"], routers=["r1"],
                    links=[Link("src", "r1", delay_s=TESTBED_HOP_DELAY_S)],
                    lans=[Lan("r1", ("rcv1", "rcv2"), LINK_BPS, QUEUE_PKTS, TESTBED_HOP_DELAY_S, "per-host")])


def norm_binary() -> Optional[str]:
    """castlab-norm (contrib/norm, built by `make build` next to the venv's python), or None."""
    p = Path(sys.executable).parent / "castlab-norm"
    return str(p) if p.exists() else shutil.which("castlab-norm")


# ------------------------------------------------------------------ the schemes


@dataclass
class Ctx:
    """What a scheme's command lines need: the testbed, the run's directory and settings."""

    tb: object
    out: Path
    #: how long the sender sends (the measurement, plus the lead when it starts first)
    duration: float
    ttl: int
    seed: int
    logs: Path
    #: how long a receiver listens (it starts before either side)
    listen: float = 0.0
    files: dict = field(default_factory=dict)


@dataclass(frozen=True)
class Scheme:
    name: str
    label: str
    #: the simulated twin's session (kind, config) and its receivers' protocol, or None
    twin: Optional[tuple[str, dict, str]]
    needs: Callable[[], Optional[str]]
    receiver: Callable[[Ctx, str, int], list]
    sender: Callable[[Ctx], list]
    #: the sender's own rate over time (time_s, rate_bps), where it keeps one
    rates: Callable[[Ctx], Optional[pd.DataFrame]] = lambda c: None
    #: whether a receiver listens (default: it has printed its first line, as castlab's roles
    #: and castlab-norm do once they listen)
    ready: Optional[Callable[[Ctx, str], bool]] = None
    #: whether the sender has begun sending data (the TCP flows start then)
    sending: Callable[[Ctx], bool] = lambda c: True
    #: whether the sender ends on its own a few seconds after the TCP flows (and writes its
    #: records then); UFTP's does not, and is stopped when they end
    ends: bool = True
    #: the longest the sender may take from its start to its first data (tcp-first: the TCP
    #: flows run this much longer, so that they outlast the measurement)
    startup_s: float = 3.0


def _castlab_session(c: Ctx, iface: str) -> list:
    tb = c.tb
    return ["--source-addr", tb.addr(tb.topo.source), "--ttl", c.ttl, "--session", SESSION, "--iface-addr", iface,
            "--seed", c.seed]


def _castlab_rx(role: str, *extra) -> Callable[[Ctx, str, int], list]:
    def argv(c: Ctx, host: str, node: int) -> list:
        a = c.tb.addr(host)
        return _castlab("net", role, "--addr", a, "--node", node, "--duration", c.listen + 10,
                        "--out", c.out / f"rx_{host}", *_castlab_session(c, a), *extra)
    return argv


def _castlab_tx(role: str, *extra) -> Callable[[Ctx], list]:
    def argv(c: Ctx) -> list:
        s = c.tb.addr(c.tb.topo.source)
        return _castlab("net", role, "--duration", c.duration + SENDER_TAIL_S, "--out", c.out / "source",
                        *_castlab_session(c, s), *extra)
    return argv


def _table_rates(stem: str, t_col: str, r_col: str) -> Callable[[Ctx], Optional[pd.DataFrame]]:
    def read(c: Ctx) -> Optional[pd.DataFrame]:
        p = c.out / "source" / f"{stem}.csv"
        if not p.exists():
            return None
        d = pd.read_csv(p)
        if t_col not in d or r_col not in d:
            return None
        return pd.DataFrame({"time_s": d[t_col].to_numpy(float), "rate_bps": d[r_col].to_numpy(float)})
    return read


def _tfmcc_rates(c: Ctx) -> Optional[pd.DataFrame]:
    p = c.out / "source" / "tfmcc_rate.csv"
    if not p.exists():
        return None
    d = pd.read_csv(p)
    t = next((k for k in ("time_s", "t_s", "time") if k in d), None)
    if t is None and "time_ns" in d:
        return pd.DataFrame({"time_s": d["time_ns"].to_numpy(float) / 1e9, "rate_bps": d["bps"].to_numpy(float)})
    return pd.DataFrame({"time_s": d[t].to_numpy(float), "rate_bps": d["bps"].to_numpy(float)}) if t else None


UFTP_PUB = "239.255.91.1"
UFTP_PRIV = "239.255.92.1"
UFTP_PORT = 6010
#: Each receiver's client ID (uftpd -U) and the server's closed group of them (uftp -H): the server
#: announces until every listed client has registered (or its UFTP_ROBUST rounds run out), so a
#: receiver whose ANNOUNCE sat behind a full queue is not left out while another registers at once
#: (an open group runs its rounds on the clients it has heard and refuses later ones).
UFTP_CLIENTS = {"rcv1": "0x00000001", "rcv2": "0x00000002"}
#: uftp -s: rounds of its announce phase (the man page's 10-50, default 20), each 3 GRTT. Once the
#: receiver without TCP has registered the GRTT is its 10 ms, so 50 rounds give a receiver behind
#: a queue of 0.6 s (net-peers' pfifo full) about 1.5 s to answer instead of 0.6 s.
UFTP_ROBUST = 50


def _uftp_needs() -> Optional[str]:
    missing = [t for t in ("uftp", "uftpd") if shutil.which(t) is None]
    return f"needs {' and '.join(missing)} (make setup installs uftp with apt)" if missing else None


def _uftp_rx(c: Ctx, host: str, node: int) -> list:
    d = c.out / f"uftpd_{host}"
    d.mkdir(exist_ok=True)
    # -d: in the foreground (its pid is the one tracked); files land in a directory of the run's
    return ["uftpd", "-d", "-D", d, "-M", UFTP_PUB, "-p", UFTP_PORT, "-L", c.logs / f"uftpd_{host}.log", "-x", 2,
            "-U", UFTP_CLIENTS[host]]


def udp_bound(tb, node: str, port: int) -> bool:
    """Whether a UDP socket in `node` is bound to `port` (uftpd flushes its log late: its socket
    says when it listens)."""
    r = tb.run(node, ["ss", "-Huln", f"sport = :{port}"], check=False, timeout=10)
    return r.returncode == 0 and bool(r.stdout.strip())


def _uftp_sending(c: Ctx) -> bool:
    # after its announce phase (until both receivers have registered) UFTP logs the file it sends
    p = c.out / "uftp.log"
    return p.exists() and "Sending file" in p.read_text(errors="replace")


def _uftp_tx(c: Ctx) -> list:
    # a file larger than the run can carry at the link's rate, so TFMCC sends all the time
    f = c.out / "uftp_payload.bin"
    with open(f, "wb") as fh:
        fh.truncate(int(c.duration * LINK_BPS / 8 * 1.5))
    tb = c.tb
    return ["uftp", "-C", "tfmcc", "-x", 4, "-L", c.out / "uftp.log", "-t", c.ttl, "-M", UFTP_PUB, "-P", UFTP_PRIV,
            "-p", UFTP_PORT, "-I", tb.addr(tb.topo.source), "-Y", "none", "-H", ",".join(UFTP_CLIENTS.values()),
            "-s", UFTP_ROBUST, f]


def uftp_rate_log(path: Path) -> pd.DataFrame:
    """UFTP's TFMCC rate per feedback (``-x 4``: "rate = N" lines, bytes per second) as
    (time_s since its first line, rate_bps)."""
    import datetime as dt

    ts, rs = [], []
    t0 = None
    if not path.exists():
        return pd.DataFrame({"time_s": [], "rate_bps": []})
    for line in path.read_text(errors="replace").splitlines():
        try:
            stamp = dt.datetime.strptime(line[:26], "%Y/%m/%d %H:%M:%S.%f").timestamp()
        except ValueError:
            continue
        t0 = stamp if t0 is None else t0
        if ": rate = " in line:
            try:
                rs.append(float(line.rsplit("=", 1)[1]) * 8)
                ts.append(stamp - t0)
            except ValueError:
                pass
    return pd.DataFrame({"time_s": ts, "rate_bps": rs})


NORM_GROUP = "239.255.93.1"
NORM_PORT = 6020


def _norm_needs() -> Optional[str]:
    return None if norm_binary() else ("needs castlab-norm (contrib/norm, built by make build with g++ and "
                                       "libnorm-dev, which make setup installs)")


def _norm_rx(c: Ctx, host: str, node: int) -> list:
    return [norm_binary(), "recv", NORM_GROUP, NORM_PORT, c.listen + 10, c.logs / f"norm_{host}.csv"]


def _norm_tx(c: Ctx) -> list:
    return [norm_binary(), "send", NORM_GROUP, NORM_PORT, c.ttl, c.duration + SENDER_TAIL_S, c.out / "norm_source.csv"]


def _norm_rates(c: Ctx) -> Optional[pd.DataFrame]:
    p = c.out / "norm_source.csv"
    if not p.exists():
        return None
    d = pd.read_csv(p)
    return pd.DataFrame({"time_s": d["time_s"], "rate_bps": d["rate_bps"]})


def _none() -> Optional[str]:
    return None


SCHEMES = {
    s.name: s for s in [
        Scheme("lesbcc-aimd", "castlab LE-SBCC (AIMD)", ("lesbcc", {"policy": "aimd"}, "pgm"), _none,
               _castlab_rx("pgm-receiver"), _castlab_tx("lesbcc-source", "--policy", "aimd"),
               _table_rates("rates", "time_s", "rate_bps")),
        Scheme("lesbcc-tfrc", "castlab LE-SBCC (TFRC)", ("lesbcc", {"policy": "tfrc"}, "pgm"), _none,
               _castlab_rx("pgm-receiver"), _castlab_tx("lesbcc-source", "--policy", "tfrc"),
               _table_rates("rates", "time_s", "rate_bps")),
        Scheme("rlm", "castlab RLM", ("layered", {}, "rlm"), _none, _castlab_rx("rlm-receiver"),
               _castlab_tx("source", "--layers", 6, "--base-rate", 32e3, "--packet-size", 1000)),
        Scheme("rlc", "castlab RLC", ("rlc", {}, "rlc"), _none, _castlab_rx("rlc-receiver"), _castlab_tx("rlc-source")),
        Scheme("tfmcc", "castlab TFMCC", ("tfmcc", {"packet_size": 1000}, "tfmcc"), _none,
               _castlab_rx("tfmcc-receiver"), _castlab_tx("tfmcc-source"), _tfmcc_rates),
        Scheme("uftp", "UFTP TFMCC", None, _uftp_needs, _uftp_rx, _uftp_tx,
               lambda c: uftp_rate_log(c.out / "uftp.log"), lambda c, h: udp_bound(c.tb, h, UFTP_PORT), _uftp_sending,
               ends=False, startup_s=45.0),
        Scheme("norm", "NORM-CC (libnorm)", None, _norm_needs, _norm_rx, _norm_tx, _norm_rates),
    ]
}


#: Ablations, in neither experiment's table: castlab's TFMCC with one RFC 4654 departure switched
#: on at its receivers and sender, run by hand (bench/net_fair.py) in run_case's set-up beside the
#: default. `windows_over_rmax` counts the receive rate over max(R, R_max) instead of §4.3.4's k·R,
#: as UFTP counts it over its group RTT (docs/fidelity/tfmcc.md, T9). `-first-uftp` adds UFTP's
#: first loss interval (§5.6's l_0 with X_recv in bytes/s, truncated): both of UFTP's departures.
ABLATIONS = {s.name: s for s in [
    Scheme("tfmcc-windows-rmax", "castlab TFMCC, windows over max(R, R_max)",
           ("tfmcc", {"packet_size": 1000, "windows_over_rmax": True}, "tfmcc"), _none,
           _castlab_rx("tfmcc-receiver", "--config", "windows_over_rmax=true"),
           _castlab_tx("tfmcc-source", "--config", "windows_over_rmax=true"), _tfmcc_rates),
    Scheme("tfmcc-windows-rmax-first-uftp", "castlab TFMCC, windows over max(R, R_max), UFTP's first interval",
           ("tfmcc", {"packet_size": 1000, "windows_over_rmax": True, "first_interval": "uftp"}, "tfmcc"), _none,
           _castlab_rx("tfmcc-receiver", "--config", "windows_over_rmax=true", "--config", "first_interval=uftp"),
           _castlab_tx("tfmcc-source", "--config", "windows_over_rmax=true", "--config", "first_interval=uftp"),
           _tfmcc_rates),
]}


def scheme_of(name: str) -> Scheme:
    """A scheme of SCHEMES or ABLATIONS by name."""
    sc = SCHEMES.get(name) or ABLATIONS.get(name)
    if sc is None:
        raise ValueError(f"no scheme {name!r} (one of {', '.join([*SCHEMES, *ABLATIONS])})")
    return sc


# ------------------------------------------------------------------ one run


def _has_line(path: Path) -> bool:
    return path.exists() and "\n" in path.read_text(errors="replace")


def _wait_until(cond: Callable[[], bool], timeout: float) -> bool:
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if cond():
            return True
        time.sleep(0.05)
    return False


def _wait_ready(path: Path, timeout: float) -> bool:
    """Wait until a process writing to `path` has written its first line."""
    return _wait_until(lambda: _has_line(path), timeout)


def _counter_origin(path: Path) -> Optional[float]:
    """The CLOCK_MONOTONIC second a counter's bins count from (its ``ready T0`` line)."""
    if not _has_line(path):
        return None
    words = path.read_text(errors="replace").split()
    try:
        return float(words[1]) if len(words) >= 2 and words[0] == "ready" else None
    except ValueError:
        return None


def _sleep_until(t: float) -> None:
    while (left := t - time.monotonic()) > 0:
        time.sleep(min(left, 0.5))


def run_case(out: Path, seed: int, duration: float, scheme: str, tcp: tuple[str, ...], tb=None,
             order: str = "scheme-first", lead: float = LEAD_S) -> dict:
    """`scheme` against one kernel TCP flow per entry of `tcp` (its algorithm, iperf3 -C), all
    through rcv1's bottleneck, started in `order` (ORDERS: the later side `lead` seconds after the
    earlier) and measured for `duration` seconds from the moment both run. Returns the readings
    and writes ``series.csv`` (per second from then, the lead's seconds negative: the scheme's and
    each TCP flow's rate at rcv1) and ``windows.csv`` (the share per SHARE_WINDOW_S). On a testbed
    of its own unless `tb` (a :func:`topology` testbed that is up) is given: quick tests share one."""
    import contextlib

    from castlab.testbed import Testbed

    if order not in ORDERS:
        raise ValueError(f"order: one of {', '.join(ORDERS)}, not {order!r}")
    if not (duration > 0 and lead >= 0):
        raise ValueError(f"duration must be positive and lead not negative (got {duration}, {lead})")
    sc = scheme_of(scheme)
    out.mkdir(parents=True, exist_ok=True)
    logs = out / "logs"
    logs.mkdir(exist_ok=True)
    topo = topology()
    rx_hosts = ["rcv1", "rcv2"]
    meas = "rcv1"
    first = order == "scheme-first"
    # the sender sends through the lead when it starts first; the TCP flows run through it when
    # they do, and as long again as the scheme may take to send its first data
    send_s = duration + (lead if first else 0.0)
    tcp_s = duration + (0.0 if first else lead + sc.startup_s)
    listen = lead + sc.startup_s + duration + SENDER_TAIL_S
    with (contextlib.nullcontext(tb) if tb is not None else Testbed(topo, testbed_name("p"), routers="kernel")) as tb:
        ttl = tb.topo.hops(topo.source, meas) + 1
        c = Ctx(tb, out, send_s, ttl, seed, logs, listen=listen)
        servers = [tb.spawn(meas, ["iperf3", "-s", "-1", "-p", TCP_PORT + k, "-B", tb.addr(meas)],
                            stdout=open(logs / f"iperf3_s{k}.log", "w"), stderr=subprocess.STDOUT)
                   for k in range(len(tcp))]
        rx = []
        for i, h in enumerate(rx_hosts):
            log = logs / f"rx_{h}.out"
            p = tb.spawn(h, sc.receiver(c, h, tb.node_id(h)), stdout=open(log, "w"),
                         stderr=open(logs / f"rx_{h}.err", "w"))
            rx.append(p)
            if not _wait_until(lambda: p.poll() is not None or (sc.ready(c, h) if sc.ready else _has_line(log)), 30) \
                    or p.poll() is not None:
                raise RuntimeError(f"{scheme}'s receiver on {h} did not start listening: {logs / f'rx_{h}.err'}")
        # the counters run from before either side starts; their bins are placed on this
        # process's clock by the origin each prints
        counters, origins = [], []
        for node, peer, direction in (("src", "r1", "out"), (meas, "r1", "in")):
            ready = logs / f"count_{node}.ready"
            counters.append(tb.spawn(node, [sys.executable, "-m", "castlab.testbed.count", "--iface",
                                            tb.iface(node, peer), "--direction", direction, "--duration",
                                            listen + 60, "--bin", COUNT_BIN_S, "--out", out / f"count_{node}.csv",
                                            "--packets", out / f"packets_{node}.csv"],
                                     stdout=open(ready, "w"), stderr=open(logs / f"count_{node}.log", "w")))
        for node, p in zip(("src", meas), counters):
            if not _wait_ready(logs / f"count_{node}.ready", 30):
                raise RuntimeError(f"the packet counter on {node} did not start: {logs / f'count_{node}.log'}")
            origins.append(_counter_origin(logs / f"count_{node}.ready"))
        if any(o is None for o in origins):
            raise RuntimeError(f"a packet counter printed no origin: {logs}")
        clients: list = []

        def start_tcp(seconds: float) -> float:
            t = time.monotonic()
            for k, algo in enumerate(tcp):
                f = open(logs / f"tcp{k}_{algo}.json", "w")
                clients.append((algo, f, tb.spawn(topo.source, ["iperf3", "-c", tb.addr(meas), "-p", TCP_PORT + k,
                                                                "-t", int(np.ceil(seconds)), "-C", algo, "-J"],
                                                  stdout=f)))
            return t

        def start_sender() -> tuple[object, float, float]:
            # the clock is read before the spawn: the sender's first packets may leave before
            # the spawn returns. Its first data: that moment for a scheme that sends from its
            # start, else the check that saw it sending (every 0.1 s)
            t = t_first = time.monotonic()
            p = tb.spawn(topo.source, sc.sender(c), stdout=open(logs / "source.out", "w"),
                         stderr=open(logs / "source.err", "w"))
            while not sc.sending(c) and p.poll() is None and time.monotonic() - t < 60:
                time.sleep(0.1)
                t_first = time.monotonic()
            return p, t, t_first

        start_err = []
        if first:
            src, t_sender, t_data = start_sender()
            # second 0 is the moment the TCP flows are due, so that the lead's seconds of
            # series.csv begin at the scheme's first data: their spawn follows it by the sleep's
            # overshoot (tens of ms on a loaded machine), which `lead_s` records
            t_both = t_data + lead
            _sleep_until(t_both)
            t_tcp = start_tcp(tcp_s)
        else:
            t_tcp = start_tcp(tcp_s)
            _sleep_until(t_tcp + lead)
            src, t_sender, t_data = start_sender()
            t_both = t_data
            if t_data - t_sender > sc.startup_s:
                start_err.append(f"the sender took {t_data - t_sender:.1f} s to its first data, more than the "
                                 f"{sc.startup_s:g} s the TCP flows run past the measurement")
        startup = t_data - t_sender
        offset = t_both - t_sender  # the sender's clock against the measurement's
        end = t_tcp + tcp_s + 15
        for p in [x[2] for x in clients]:
            try:
                p.wait(timeout=max(end - time.monotonic(), 0.5))
            except subprocess.TimeoutExpired:
                pass
        if sc.ends:
            try:  # its duration runs a few seconds past the flows', then it writes its records
                src.wait(timeout=max(t_both + duration + SENDER_TAIL_S + 15 - time.monotonic(), 1.0))
            except subprocess.TimeoutExpired:
                pass
        else:
            _sleep_until(t_both + duration + SENDER_TAIL_S)
        # UFTP's sender never ends on its own inside the run (its file is larger): stopped here
        src_rc = tb.stop(src, timeout=10)
        time.sleep(1.0)
        for p in rx:
            tb.stop(p, timeout=10)
        for p in servers + counters:
            tb.stop(p, timeout=10)
        # the bottleneck's own drop count (cumulative over the cases of a shared testbed): the
        # per-flow drops of flowdrops.py, from the two packet logs, add up to it
        try:
            qdisc = tb.qdisc_stats(meas)
        except (RuntimeError, OSError, ValueError, subprocess.SubprocessError) as e:
            qdisc = {"error": str(e)}
    for d in out.glob("uftpd_*"):
        shutil.rmtree(d, ignore_errors=True)
    (out / "uftp_payload.bin").unlink(missing_ok=True)
    tcp_err = list(start_err)
    for algo, f, _ in clients:
        f.close()
        try:
            rep = json.loads(Path(f.name).read_text())
            if rep.get("error"):
                tcp_err.append(f"{algo}: {rep['error']}")
            else:
                used = rep["end"].get("sender_tcp_congestion") or rep["end"].get("sum_sent", {}).get("congestion")
                if used and used != algo:
                    tcp_err.append(f"{algo}: iperf3 ran {used}")
        except (ValueError, KeyError) as e:
            tcp_err.append(f"{algo}: unreadable iperf3 report ({e})")
    # the packet logs' clock (CLOCK_REALTIME) at the measurement's second 0: the readings' seconds
    # are the packets' kernel timestamps from there (each counter's bins, placed by its origin on
    # this process's clock, where a packet log is missing)
    t0_real = t_both + (time.time() - time.monotonic())
    rec = readings(out, duration, tcp, origins=(t_both - origins[0], t_both - origins[1]), lead=lead,
                   t0_real=t0_real)
    rates = sc.rates(c)
    if rates is not None and len(rates):
        rates = rates.assign(time_s=rates["time_s"] - offset)  # on the measurement's clock
        rates.to_csv(out / "sender_rates.csv", index=False)
    # per flow, the drops at the bottleneck and the arrival pattern there after the warm-up
    # (flowdrops: flows.csv)
    rec.update(qdisc=qdisc, t0_realtime_s=t0_real)
    try:
        rec.update(tcp_handshake_rtt_s=handshake_rtts(out / "packets_src.csv", tcp))
    except (OSError, ValueError, KeyError) as e:
        rec.update(handshake_error=str(e))
    try:
        from castlab.experiments.tfmcc import flowdrops

        flowdrops.testbed_flows(out, duration, warm_up(duration), tcp, TCP_PORT, t0_real).to_csv(
            out / "flows.csv", index=False)
    except (OSError, ValueError, KeyError) as e:
        rec.update(flows_error=str(e))
    rec.update(scheme=scheme, label=sc.label, tcp=list(tcp), order=order, lead_s=abs(t_tcp - t_data),
               sender_rc=src_rc, tcp_errors=tcp_err, startup_s=startup, sender_clock_offset_s=offset,
               sender_rate_mean_bps=_mean_step(rates, warm_up(duration), duration) if rates is not None else float("nan"))
    (out / "case.json").write_text(json.dumps(rec, indent=1, default=float))
    return rec


def _mean_step(rates: pd.DataFrame, a: float, b: float) -> float:
    """Time average over [a, b] of a rate given at change points."""
    if rates is None or not len(rates):
        return float("nan")
    t = np.arange(a, b, 0.1)
    i = np.searchsorted(rates["time_s"].to_numpy(), t, side="right") - 1
    v = np.where(i >= 0, rates["rate_bps"].to_numpy()[np.clip(i, 0, None)], np.nan)
    return float(np.nanmean(v)) if np.isfinite(v).any() else float("nan")


def warm_up(duration: float) -> float:
    return min(WARM_S, duration / 3)


def joined_seconds(got: np.ndarray) -> set[int]:
    """The seconds in which a group was joined at rcv1 for the whole second, from the seconds in
    which rcv1 got any of its packets: those with packets in the second before and the second
    after too. Packets flowed from some time in s-1 to some time in s+1, so the group was joined
    across s (the testbed's IGMP snooping has fast leave: a left group stops arriving at once),
    bar a leave and rejoin inside s. The first and last seconds of a span, where a layered
    receiver joined or left partway, are left out: counting them charged a layer's packets
    sent before its join or after its leave as lost."""
    s = {int(x) for x in got}
    return {x for x in s if x - 1 in s and x + 1 in s}


def _log_seconds(path: Path, t0_real: float) -> pd.DataFrame:
    """A packet log's packets (``castlab.testbed.count --packets``) per whole second of the
    measurement's clock, by the kernel's timestamp of each (`t0_real`: second 0 on the log's
    clock): the counters' columns ``second,kind,key,packets,bytes``."""
    d = pd.read_csv(path, usecols=["time_ns", "kind", "key", "bytes"], dtype={"kind": str, "key": str})
    sec = np.floor(d["time_ns"].to_numpy(np.int64) / 1e9 - t0_real).astype(int)
    g = d.assign(second=sec).groupby(["second", "kind", "key"])["bytes"]
    return pd.DataFrame({"packets": g.size(), "bytes": g.sum()}).reset_index()


#: A TCP segment of at least this many payload bytes is a bulk transfer's (iperf3's control
#: connection carries a few hundred bytes at most, each segment far below this).
BULK_SEGMENT_BYTES = 1000


def handshake_rtts(path: Path, tcp: tuple[str, ...], port: int = TCP_PORT) -> dict[str, float]:
    """Each kernel TCP flow's handshake RTT (s), from src's packet log (``castlab.testbed.count
    --packets`` on what leaves src: a TCP packet's ``pid`` is its sequence number): the time from
    the data connection's SYN to the ACK that completes its handshake, which src sends as the
    SYN-ACK arrives. Linux's connecting side takes this RTT as the flow's first sample and its
    min RTT (the SYN's ACK goes through ``tcp_ack_update_rtt``; BBR's filter starts from it), so
    it says whether the flow's handshake met an empty path or a queue.

    The flow of algorithm ``tcp[k]`` is the one to ``port + k``. iperf3 opens a control
    connection to the same port first; the data connection is the last handshake before the
    port's first bulk segment (BULK_SEGMENT_BYTES). A handshake is a packet without payload whose
    sequence number s is new, followed by one without payload at s + 1 (the SYN takes one
    sequence number); a retransmitted SYN counts from its last copy before that ACK, whose
    timestamp the SYN-ACK echoes. NaN for a flow whose handshake is not in the log."""
    d = pd.read_csv(path, usecols=["time_ns", "kind", "key", "pid", "payload"], dtype={"kind": str, "key": str})
    d = d[d["kind"] == "tcp"]
    out = {}
    for k, algo in enumerate(tcp):
        f = d[d["key"] == str(port + k)].sort_values("time_ns", kind="stable")
        times = f["time_ns"].to_numpy(np.int64)
        seqs = f["pid"].to_numpy(np.int64)
        pay = f["payload"].to_numpy(np.int64)
        bulk = np.flatnonzero(pay >= BULK_SEGMENT_BYTES)
        end = int(bulk[0]) if len(bulk) else len(f)
        # sequence numbers a connection has reached: a segment's and the one after its payload
        # (a pure ACK there, or a 1-byte message and the ACK after it, is no handshake)
        reached: set[int] = set()
        syn_at: dict[int, int] = {}  # the sequence number a SYN took -> its last copy's time
        found = float("nan")
        for t, seq, n in zip(times[:end], seqs[:end], pay[:end]):
            seq, t, n = int(seq), int(t), int(n)
            if n == 0:
                syn = (seq - 1) % 2**32
                if syn in syn_at:
                    found = (t - syn_at.pop(syn)) / 1e9
                elif seq not in reached or seq in syn_at:
                    syn_at[seq] = t
            reached.update((seq, (seq + max(n, 1)) % 2**32))
        out[algo] = found
    return out


def _on_clock(d: pd.DataFrame, origin: float) -> pd.DataFrame:
    """A counter's rows with ``second`` the whole second of the measurement's clock their bin
    starts in (the bin's start minus `origin`, the measurement's start on the counter's clock)."""
    t = d["second"].to_numpy(float) - origin
    return d.assign(second=np.floor(t + 1e-9).astype(int))


def window_shares(series: pd.DataFrame, tcp: tuple[str, ...], duration: float,
                  window: float = SHARE_WINDOW_S) -> pd.DataFrame:
    """The share per `window` seconds from the measurement's start (whole windows only): the
    scheme's mean rate at rcv1 over the mean TCP flow's, beside both rates."""
    rows = []
    secs = series["second"].to_numpy()
    for k, a in enumerate(np.arange(0.0, duration - window + 1e-9, window)):
        w = (secs >= a) & (secs < a + window)
        mc = float(series.loc[w, "scheme_bps"].mean())
        tcp_bps = float(np.mean([series.loc[w, f"tcp{j}_{x}_bps"].mean() for j, x in enumerate(tcp)])) \
            if tcp else float("nan")
        rows.append({"window": k, "window_start_s": float(a), "scheme_bps": mc, "tcp_mean_bps": tcp_bps,
                     "share": mc / tcp_bps if tcp_bps > 0 else float("nan")})
    return pd.DataFrame(rows, columns=["window", "window_start_s", "scheme_bps", "tcp_mean_bps", "share"])


def readings(out: Path, duration: float, tcp: tuple[str, ...], origins: tuple[float, float] = (0.0, 0.0),
             lead: float = 0.0, t0_real: Optional[float] = None) -> dict:
    """The counters' readings: per second the scheme's multicast rate at rcv1 and each TCP flow's;
    the means after the warm-up (WARM_S, or a third of a shorter run), the share against the mean TCP
    flow, the share per SHARE_WINDOW_S, the lowest WINDOW_S rate, and the scheme's loss from its
    packets sent and got per group in the seconds it was joined throughout. Second 0 is the
    measurement's start: with `t0_real` (its moment on the packet logs' clock) each packet counts
    in the second its kernel timestamp falls in, from the packet logs (``packets_src.csv``,
    ``packets_rcv1.csv``); without it, or where a log is missing, the counters' bins count, which
    `origins` places on the counters' clocks (src's, rcv1's) to COUNT_BIN_S. The `lead` seconds
    before it are kept in ``series.csv`` (negative seconds) and left out of every reading."""
    secs = np.arange(-int(np.ceil(lead)), int(duration))
    empty = pd.DataFrame(columns=["second", "kind", "key", "packets", "bytes"])

    def per_node(node: str, origin: float) -> pd.DataFrame:
        if t0_real is not None and (out / f"packets_{node}.csv").exists():
            return _log_seconds(out / f"packets_{node}.csv", t0_real)
        return _on_clock(pd.read_csv(out / f"count_{node}.csv") if (out / f"count_{node}.csv").exists() else empty,
                         origin)

    tx, rx = per_node("src", origins[0]), per_node("rcv1", origins[1])

    def per_second(d: pd.DataFrame) -> np.ndarray:
        s = d.groupby("second")["bytes"].sum()
        return np.array([s.get(k, 0) for k in secs], dtype=float) * 8

    mc = per_second(rx[rx["kind"] == "mc"])
    series = {"second": secs, "scheme_bps": mc}
    for k, algo in enumerate(tcp):
        series[f"tcp{k}_{algo}_bps"] = per_second(rx[(rx["kind"] == "tcp") & (rx["key"].astype(str) == str(TCP_PORT + k))])
    sdf = pd.DataFrame(series)
    sdf.to_csv(out / "series.csv", index=False)
    wdf = window_shares(sdf, tcp, duration)
    wdf.to_csv(out / "windows.csv", index=False)
    warm = warm_up(duration)
    steady = (secs >= warm) & (secs < duration)
    tcp_means = [float(series[f"tcp{k}_{a}_bps"][steady].mean()) for k, a in enumerate(tcp)]
    mc_mean = float(mc[steady].mean()) if steady.any() else float("nan")
    tcp_mean = float(np.mean(tcp_means)) if tcp_means else float("nan")
    wins = [float(mc[(secs >= a) & (secs < a + WINDOW_S)].mean())
            for a in np.arange(warm, duration - WINDOW_S + 1e-9, WINDOW_S)]
    # loss: per group, packets got at rcv1 over packets sent, in the seconds of the measurement
    # the group was joined throughout (joined_seconds): a layer rcv1 did not join, or joined or
    # left partway through a second, is not lost there
    sent = got = 0
    mrx, mtx = rx[rx["kind"] == "mc"], tx[tx["kind"] == "mc"]
    for g, d in mrx.groupby("key"):
        per = d.groupby("second")["packets"].sum()
        whole = {x for x in joined_seconds(per.index.to_numpy()) if 0 <= x < duration}
        got += int(per[per.index.isin(whole)].sum())
        sent += int(mtx.loc[(mtx["key"] == g) & mtx["second"].isin(whole), "packets"].sum())
    loss = max(0.0, 1.0 - got / sent) if sent else float("nan")
    return {"scheme_mean_bps": mc_mean, "tcp_mean_bps": tcp_mean, "tcp_means_bps": dict(zip(tcp, tcp_means)),
            "share": mc_mean / tcp_mean if tcp_mean > 0 else float("nan"),
            "shares": {a: (mc_mean / m if m > 0 else float("nan")) for a, m in zip(tcp, tcp_means)},
            "window_shares": [float(x) for x in wdf["share"]],
            "lowest_10s_bps": float(np.nanmin(wins)) if wins else float("nan"), "loss": loss,
            "mc_packets_sent": sent, "mc_packets_got": got}


# ------------------------------------------------------------------ the simulated twin


def twin_times(order: str, lead: float, source_delay_s: float) -> tuple[float, float, float, float]:
    """A twin's start times in `order`: (its receivers', its source's, the first TCP flow's, the
    shift). The source and the TCP flows start as the testbed starts them, the later side `lead`
    seconds after the earlier; the receivers `source_delay_s` before the source. Where that would
    be before 0, every time is shifted later by the difference (the shift), the measurement too."""
    if order not in ORDERS:
        raise ValueError(f"order: one of {', '.join(ORDERS)}, not {order!r}")
    if not source_delay_s >= 0:
        raise ValueError(f"source_delay_s must not be negative (got {source_delay_s})")
    t_scheme, t_tcp = (0.0, lead) if order == "scheme-first" else (lead, 0.0)
    shift = max(0.0, source_delay_s - t_scheme)
    return t_scheme + shift - source_delay_s, t_scheme + shift, t_tcp + shift, shift


def twin_scenario(scheme: str, duration: float, tcp: tuple[str, ...], order: str = "scheme-first",
                  lead: float = LEAD_S, hop_delay_s: float = TESTBED_HOP_DELAY_S,
                  tbf_burst: Optional[int] = TESTBED_TBF_BURST_BYTES,
                  quickack_gap_s: Optional[dict] = None,
                  handshake_rtt_s: Optional[dict] = None,
                  source_delay_s: float = TESTBED_RECEIVERS_LEAD_S, push: bool = True) -> Optional[dict]:
    """The twin's scenario (``Scenario.from_dict``'s form) of `scheme` against one TCP flow per
    algorithm in `tcp`, in `order`, or None where castlab has no twin of the scheme: src - r1 -
    rcv1/rcv2, each last hop at LINK_BPS with a DropTail queue of QUEUE_PKTS, `hop_delay_s` on
    every link (by default the testbed's, TESTBED_HOP_DELAY_S: none). Each last hop is a token
    bucket of `tbf_burst` bytes charging the Ethernet header (the link key ``tbf_burst``), by
    default the testbed's, TESTBED_TBF_BURST_BYTES: a twin models its testbed, whose tbf lets a
    packet that finds the bucket full leave at once. Both directions, where the testbed shapes
    only r1's ports (the reverse direction carries only ACKs and reports, which the bucket passes
    at once). `tbf_burst` None: the last hops serialise every packet at LINK_BPS (an ablation).
    With `quickack_gap_s` (algorithm -> seconds) the TCP sinks of those algorithms run Linux's
    quick-ACK mode (the TCP config's ``quickack``), with that gap: the receiver's RTO, which
    TESTBED_RCV_RTO_S gives as measured on the testbed's rcv1 (an opt-in). With
    `handshake_rtt_s` (algorithm -> seconds) the TCP flows of those algorithms start holding that
    RTT sample, as a kernel flow holds its handshake's (the TCP config's ``handshake_rtt``; an
    opt-in: docs/real-network.md, "The kernel's bbr beside LE-SBCC, state by state"). The
    scheme's receivers start `source_delay_s` before its source (by default the testbed's order,
    TESTBED_RECEIVERS_LEAD_S: the testbed starts the sender once every receiver listens, so its
    receivers miss none of its first packets; 0: together, the ablation, where the receivers miss
    the first). The source's and the TCP flows' times keep their relation; where the receivers
    would start before 0 the whole scenario is shifted later by that much (``twin_times``).
    `push` False turns off Linux's push marks and push ACKs (the TCP config's ``push``) in every
    TCP flow (an ablation)."""
    from castlab.experiments.tcp.net import linux_twin_flow

    def flow(a: str) -> dict:
        f = linux_twin_flow(a)
        if not push:
            f["config"] = {**f.get("config", {}), "push": False}
        if quickack_gap_s and a in quickack_gap_s:
            f["config"] = {**f.get("config", {}), "quickack": True, "quickack_gap": float(quickack_gap_s[a])}
        if handshake_rtt_s and a in handshake_rtt_s:
            f["config"] = {**f.get("config", {}), "handshake_rtt": float(handshake_rtt_s[a])}
        return f

    sc = scheme_of(scheme)
    if sc.twin is None:
        return None
    kind, cfg, proto = sc.twin
    t_rcv, t_scheme, t_tcp, shift = twin_times(order, lead, source_delay_s)
    link = lambda n, a, b, r: {"name": n, "a": a, "b": b, "rate": r, "delay": hop_delay_s, "queue_limit": QUEUE_PKTS}
    last = lambda n, a, b, r: {**link(n, a, b, r), **({} if tbf_burst is None else {"tbf_burst": int(tbf_burst)})}
    session = {"name": "m", "source": "src", "start": t_scheme}
    if kind == "layered":
        session.update(layers=6, base_rate=32e3, packet_size=1000)
    else:
        session.update(kind=kind, config=dict(cfg))
    return {"name": f"net-peers twin {scheme}", "duration": shift + lead + duration, "nodes": ["src", "r1", "rcv1", "rcv2"],
            "links": [link("up", "src", "r1", 100e6), last("b1", "r1", "rcv1", LINK_BPS),
                      last("b2", "r1", "rcv2", LINK_BPS)],
            "sessions": [session],
            "receivers": [{"name": h, "node": h, "session": "m", "protocol": proto, "start": t_rcv}
                          for h in ("rcv1", "rcv2")],
            "tcp": [{"name": f"tcp{k}", "src": "src", "dst": "rcv1", "start": t_tcp + 0.1 * k, **flow(a)}
                    for k, a in enumerate(tcp)]}


def twin(scheme: str, seed: int, duration: float, tcp: tuple[str, ...], order: str = "scheme-first",
         lead: float = LEAD_S, records_dir: Optional[Path] = None, capture: bool = False,
         hop_delay_s: float = TESTBED_HOP_DELAY_S,
         tbf_burst: Optional[int] = TESTBED_TBF_BURST_BYTES,
         quickack_gap_s: Optional[dict] = None, handshake_rtt_s: Optional[dict] = None,
         source_delay_s: float = TESTBED_RECEIVERS_LEAD_S, push: bool = True) -> Optional[dict]:
    """The same set-up in the simulator (``twin_scenario``): src - r1 - rcv1/rcv2, each last hop
    at LINK_BPS with a DropTail queue of QUEUE_PKTS, `hop_delay_s` per link and the token bucket
    `tbf_burst`. By default both are the testbed's (a twin models its testbed): no delay
    (TESTBED_HOP_DELAY_S; its round trip beyond the queue is the stacks' latency, tens of µs,
    24-88 µs in net-tcp-vs-sim, not modelled here) and tbf's bucket of TESTBED_TBF_BURST_BYTES.
    One TCP flow src -> rcv1 per kernel algorithm in `tcp`, as Linux runs it
    (``castlab.experiments.tcp.net.linux_twin_flow``: reno as the sack variant with Linux's
    settings, cubic and bbr from TcpConfig::linux(); net-tcp-vs-sim compares each with the
    kernel's), started in the testbed's `order`: the later side `lead` seconds after the earlier
    (the TCP flows 0.1 s apart), measured for `duration` seconds from the later side's start.
    Returns the scheme's rate and loss at rcv1, its share against the mean TCP flow after the
    warm-up (the testbed's readings), each TCP flow's rate and the share against it
    (``tcp_means_bps``, ``shares``, by algorithm), and its share per SHARE_WINDOW_S. With
    `records_dir`, the scheme's own records are written there in the testbed roles' files
    (``twin_records``: ``source/``, ``rx_rcv1/``, ``rx_rcv2/``), and with `capture` too the
    packets leaving src toward r1 and r1 toward rcv1 (``twin_src.pcap``, ``twin_rcv1.pcap``,
    ``flowdrops.read_pcap``). ``docs/real-network.md`` shows the twin beside the testbed with
    other delays per link, without the bucket (`tbf_burst` None: last hops that serialise), and
    with `quickack_gap_s` (``twin_scenario``: Linux's quick-ACK mode at the TCP sinks) and with
    `handshake_rtt_s` (``twin_scenario``: the flows' handshake RTT). `source_delay_s`: how long
    the receivers start before the source (``twin_scenario``; by default the testbed's order, 0 the
    ablation); the measurement's window moves with the scenario's shift. `push` False: the TCP
    flows without Linux's push marks and push ACKs (``twin_scenario``; the ablation)."""
    from castlab.experiments.tfmcc import twin_records
    from castlab.scenario import Scenario

    d = twin_scenario(scheme, duration, tcp, order, lead, hop_delay_s, tbf_burst, quickack_gap_s, handshake_rtt_s,
                      source_delay_s, push)
    if d is None:
        return None
    t_rcv, _, t_tcp, shift = twin_times(order, lead, source_delay_s)
    s = Scenario.from_dict(d)
    sim = s.build(seed)
    if records_dir is not None and capture:
        Path(records_dir).mkdir(parents=True, exist_ok=True)
        for a, b, f in (("src", "r1", "twin_src.pcap"), ("r1", "rcv1", "twin_rcv1.pcap")):
            sim.enable_pcap(a, b, Path(records_dir) / f)
    starts = {"rcv1": t_rcv, **{f"tcp{k}": t_tcp + 0.1 * k for k in range(len(tcp))}}
    warm = warm_up(duration)
    wins = list(np.arange(0.0, duration - SHARE_WINDOW_S + 1e-9, SHARE_WINDOW_S))
    edges = sorted({0.0, warm, duration, *wins, *(a + SHARE_WINDOW_S for a in wins)})
    bits: dict[float, dict[str, float]] = {}
    rows: dict = {}
    for e in edges:
        sim.run(shift + lead + e)
        rows = {r["name"]: r for r in s.flow_table(sim)}
        # each row's mean rate is over [its start, now]: the bits it got so far
        bits[e] = {n: (float(rows[n]["mean_rate_bps"]) * (sim.now - st) if sim.now > st else 0.0)
                   for n, st in starts.items()}
        bits[e] = {n: (v if np.isfinite(v) else 0.0) for n, v in bits[e].items()}

    def rate(name: str, a: float, b: float) -> float:
        return (bits[b][name] - bits[a][name]) / (b - a)

    def share(a: float, b: float) -> tuple[float, float, float]:
        m = rate("rcv1", a, b)
        t = float(np.mean([rate(f"tcp{k}", a, b) for k in range(len(tcp))])) if tcp else float("nan")
        return m, t, (m / t if t > 0 else float("nan"))

    m, t, sh = share(warm, duration)
    if records_dir is not None and scheme in twin_records.ROLES:
        twin_records.write_twin(sim, scheme, Path(records_dir))
    del sim  # its captures are complete once it is dropped
    tcp_means = {a: rate(f"tcp{k}", warm, duration) for k, a in enumerate(tcp)}
    return {"scheme_mean_bps": m, "loss": float(rows["rcv1"]["loss"]), "tcp_mean_bps": t, "share": sh,
            "tcp_means_bps": tcp_means, "shares": {a: (m / v if v > 0 else float("nan")) for a, v in tcp_means.items()},
            "window_shares": [share(a, a + SHARE_WINDOW_S)[2] for a in wins]}


# ------------------------------------------------------------------ net-peers


def missing(scheme: str) -> Optional[str]:
    """Why `scheme` cannot run here, or None."""
    return SCHEMES[scheme].needs()


def _window_cols(prefix: str, shares: list[float]) -> dict:
    return {f"{prefix}{k}": v for k, v in enumerate(shares)}


def _twin_cols(t: dict) -> dict:
    """A twin's columns of peers.csv: the scheme's rate, share and loss, each TCP flow's rate
    (``twin_tcp_ALGO_bps``) and the share against it (``twin_share_ALGO``), the share per window."""
    return {"twin_rate_bps": t["scheme_mean_bps"], "twin_share": t["share"], "twin_loss": t["loss"],
            **{f"twin_tcp_{a}_bps": v for a, v in t["tcp_means_bps"].items()},
            **{f"twin_share_{a}": v for a, v in t["shares"].items()},
            **_window_cols("twin_share_w", t["window_shares"])}


def case_handshakes(case_dir: Path, tcp: tuple[str, ...]) -> dict[str, float]:
    """A run's handshake RTTs (s) by algorithm: case.json's ``tcp_handshake_rtt_s``, or read from
    its packet log (``handshake_rtts``) for a run recorded without them; {} where neither is."""
    case = case_dir / "case.json"
    got = json.loads(case.read_text()).get("tcp_handshake_rtt_s") if case.exists() else None
    if got is None and (case_dir / "packets_src.csv").exists():
        got = handshake_rtts(case_dir / "packets_src.csv", tcp)
    return {a: float(v) for a, v in (got or {}).items() if a in tcp}


#: Why castlab's TFMCC sender fell to its floor (``tfmcc_falls``' ``cause``). A report at the
#: floor with no loss yet, or with a loss history whose equation (1) gives more than the floor, is
#: twice the receive rate of a k·R window that held no packet (§4.4; with a loss history, the
#: receiver had cleared have_loss after 10 RTTs without data, §4.3.1).
FALL_BEFORE_LOSS = "no loss yet"
FALL_LOSS_CLEARED = "loss flag cleared"
FALL_EQUATION = "equation"
FALL_NO_REPORT = "no report"


def tfmcc_floor_bps(config: Optional[dict] = None) -> float:
    """castlab's TFMCC floor, one packet per ``min_packet_interval`` (RFC 4654 §4.4's one per
    8 s), for `config` over TfmccConfig's defaults."""
    from castlab.net import config_defaults_of

    c = {**config_defaults_of("tfmcc"), **(config or {})}
    return 8.0 * float(c["packet_size"]) / float(c["min_packet_interval"])


FALL_COLS = ["at_s", "receiver", "reported_bps", "loss_event_rate", "rtt_s", "cause", "round_end", "rmax_s"]


def tfmcc_falls(run_dir: Path, floor_bps: Optional[float] = None) -> pd.DataFrame:
    """Each time castlab's TFMCC sender whose records are in `run_dir` (``source/``: a testbed
    run's, or a twin's ``twin/``) set its rate to its floor (`floor_bps`, by default
    ``tfmcc_floor_bps`` of the schemes' packet size) from above, a row: ``at_s`` from the
    sender's start (its first rate record), the report that did it at that instant (``receiver``
    as the sender numbers them, ``reported_bps``, ``loss_event_rate``, the sender's ``rtt_s`` of
    that receiver), why the report was that low (``cause``, FALL_*: ``no report`` where no
    report arrived at that instant) and whether the same report ended a feedback round (§3.4:
    the first non-CLR report after T), with R_max after it (``rmax_s``; the next round lasts
    ``round_rtts`` of it). Empty where the records are missing."""
    from castlab.metrics import padhye_throughput

    src = Path(run_dir) / "source"
    if not (src / "tfmcc_rate.csv").exists():
        return pd.DataFrame(columns=FALL_COLS)
    size = float(SCHEMES["tfmcc"].twin[1]["packet_size"])
    floor = tfmcc_floor_bps({"packet_size": size}) if floor_bps is None else float(floor_bps)
    rate = pd.read_csv(src / "tfmcc_rate.csv")
    fb = pd.read_csv(src / "tfmcc_fb.csv") if (src / "tfmcc_fb.csv").exists() else pd.DataFrame(
        columns=["time_ns", "receiver", "rate_bps", "loss_event_rate", "rtt_s"])
    rounds = pd.read_csv(src / "tfmcc_round.csv") if (src / "tfmcc_round.csv").exists() else pd.DataFrame(
        columns=["time_ns", "rmax_s"])
    if not len(rate):
        return pd.DataFrame(columns=FALL_COLS)
    start_ns = int(rate["time_ns"].iloc[0])
    at_floor = rate["bps"].to_numpy(float) <= floor * (1 + 1e-9)
    rows = []
    for k in np.flatnonzero(at_floor[1:] & ~at_floor[:-1]) + 1:
        t_ns = int(rate["time_ns"].iloc[k])
        now = fb[fb["time_ns"] == t_ns]
        rnd = rounds[rounds["time_ns"] == t_ns]
        row = {"at_s": (t_ns - start_ns) / 1e9, "receiver": np.nan, "reported_bps": np.nan, "loss_event_rate": np.nan,
               "rtt_s": np.nan, "cause": FALL_NO_REPORT, "round_end": bool(len(rnd)),
               "rmax_s": float(rnd["rmax_s"].iloc[-1]) if len(rnd) else np.nan}
        if len(now):
            r = now.loc[now["rate_bps"].astype(float).idxmin()]
            p, rtt = float(r["loss_event_rate"]), float(r["rtt_s"])
            if not p > 0:
                cause = FALL_BEFORE_LOSS
            elif float(padhye_throughput(size, rtt, p, 4 * rtt)) * 8 > floor:
                cause = FALL_LOSS_CLEARED
            else:
                cause = FALL_EQUATION
            row.update(receiver=int(r["receiver"]), reported_bps=float(r["rate_bps"]), loss_event_rate=p, rtt_s=rtt,
                       cause=cause)
        rows.append(row)
    return pd.DataFrame(rows, columns=FALL_COLS)


def falls_cols(run_dir: Path, prefix: str = "") -> dict:
    """A run's falls to the floor (``tfmcc_falls``) as table columns: ``falls`` (how many),
    ``falls_loss_cleared`` (of them, reports whose loss flag had cleared), ``falls_at_round_end``
    and ``first_fall_s`` (from the sender's start), each after `prefix`; {} where the run left
    no sender records."""
    if not (Path(run_dir) / "source" / "tfmcc_rate.csv").exists():
        return {}
    f = tfmcc_falls(run_dir)
    return {f"{prefix}falls": len(f), f"{prefix}falls_loss_cleared": int((f["cause"] == FALL_LOSS_CLEARED).sum()),
            f"{prefix}falls_at_round_end": int(f["round_end"].astype(bool).sum()),
            f"{prefix}first_fall_s": float(f["at_s"].iloc[0]) if len(f) else np.nan}


def above_base_s(run_dir: Path, span_s: float, receiver: str = "rcv1") -> float:
    """How long a layered scheme's `receiver` (its ``rx_RECEIVER/levels.csv``: a testbed run's or
    a twin's) held more than the base layer in the `span_s` seconds from its first record; NaN
    where the run left no level records."""
    p = Path(run_dir) / f"rx_{receiver}" / "levels.csv"
    if not p.exists():
        return float("nan")
    d = pd.read_csv(p)
    if not len(d):
        return float("nan")
    t = d["time_ns"].to_numpy(np.int64) / 1e9
    t = np.clip(t - t[0], 0.0, span_s)
    held = np.diff(np.append(t, span_s))
    return float(held[d["level"].to_numpy() >= 2].sum())


def levels_cols(case_dir: Path, order: str, duration: float, lead: float = LEAD_S) -> dict:
    """A layered scheme's run and its twin (`case_dir` and `case_dir`/``twin``): rcv1's seconds
    above the base layer from its start to the end of the measurement, `duration` after the later
    side's start (``above_base_s``, ``twin_above_base_s``); {} where either left no records."""
    span = duration + (lead if order == "scheme-first" else 0.0)
    a, b = above_base_s(case_dir, span), above_base_s(Path(case_dir) / "twin", span)
    return {} if np.isnan(a) or np.isnan(b) else {"above_base_s": a, "twin_above_base_s": b}


def _every_row_has(d: pd.DataFrame, cols) -> bool:
    return len(d) > 0 and all(c in d and d[c].notna().all() for c in cols)


def levels_phrase(d: pd.DataFrame) -> str:
    """``levels_cols`` of per-seed rows `d` in words, or "" where a seed lacks them."""
    cols = ("above_base_s", "twin_above_base_s")
    if not _every_row_has(d, cols):
        return ""
    f = lambda c: ", ".join(f"{v:.0f}" for v in d[c])  # noqa: E731
    return (f"rcv1 held more than the base layer per seed for {f(cols[0])} s on the testbed, {f(cols[1])} s in the "
            f"twin (above_base_s, twin_above_base_s)")


def falls_phrase(d: pd.DataFrame, named: str, testbed: str = "", twin: str = "twin_") -> str:
    """The falls of per-seed rows `d` in words for a claim's explanation, both sides (columns of
    ``falls_cols`` after `testbed` and `twin`; `named` says where a reader finds them), or ""
    where either side lacks them."""
    if not _every_row_has(d, [f"{p}{c}" for p in (testbed, twin) for c in ("falls", "first_fall_s")]):
        return ""
    n = lambda p: ", ".join(str(int(v)) for v in d[f"{p}falls"])  # noqa: E731
    t = lambda p: ", ".join(f"{v:.1f}" for v in d[f"{p}first_fall_s"])  # noqa: E731
    return (f"the sender's falls to its floor per seed: testbed {n(testbed)}, twin {n(twin)}, the first at "
            f"{t(testbed)} s against {t(twin)} s from its start ({named}; each fall's report: tfmcc_falls)")


def told_twin(name: str, seed: int, duration: float, tcp: tuple[str, ...], order: str, lead: float,
              handshakes: dict[str, float], tbf_burst: Optional[int] = TESTBED_TBF_BURST_BYTES) -> Optional[dict]:
    """``twin`` told the kernel flows' `handshakes` (algorithm -> s; the measured ones, finite
    and positive, are told), or None where none was measured or the scheme has no twin."""
    told = {a: v for a, v in handshakes.items() if np.isfinite(v) and v > 0}
    if not told or SCHEMES[name].twin is None:
        return None
    return twin(name, seed, duration, tcp, order, lead, handshake_rtt_s=told, tbf_burst=tbf_burst)


def _told_cols(name: str, seed: int, duration: float, tcp: tuple[str, ...], order: str, lead: float,
               handshakes: dict[str, float], tbf_burst: Optional[int] = TESTBED_TBF_BURST_BYTES) -> dict:
    """The handshake columns of peers.csv (``tcp_handshake_ALGO_ms``: each kernel flow's, from
    its run) and the told twin's: the twin whose TCP flows start holding those RTTs as their
    first sample and min RTT (``twin``'s `handshake_rtt_s`; a flow without one keeps the default,
    no handshake), so that each meets its start as the kernel's did (``twin_told_share``, its
    rate and each TCP flow's; none for a scheme without a twin). An output beside the claims,
    which stay on the default twin."""
    cols = {f"tcp_handshake_{a}_ms": handshakes.get(a, float("nan")) * 1e3 for a in tcp}
    t = told_twin(name, seed, duration, tcp, order, lead, handshakes, tbf_burst)
    if t:
        cols.update(twin_told_rate_bps=t["scheme_mean_bps"], twin_told_share=t["share"],
                    **{f"twin_told_tcp_{a}_bps": v for a, v in t["tcp_means_bps"].items()})
    return cols


def _twin_windows(name: str, order: str, t: dict) -> list[dict]:
    return [{"scheme": name, "order": order, "side": "twin", "window": k, "window_start_s": k * SHARE_WINDOW_S,
             "share": v} for k, v in enumerate(t["window_shares"])]


def peers_table(out: Path, seed: int, duration: float, schemes: list[str], tcp: tuple[str, ...],
                tb=None, orders: tuple[str, ...] = ORDERS, lead: float = LEAD_S) -> pd.DataFrame:
    """One run per scheme and start order against the kernel TCP flows `tcp` (one per algorithm),
    each in ``ORDER/SCHEME/``, plus the simulated twin in the same order where castlab has one; a
    scheme whose peer is missing gets a row with the reason. Writes ``peers.csv`` (a row per
    scheme and order; ``share_wK`` and ``twin_share_wK`` are the shares per SHARE_WINDOW_S,
    ``tcp_ALGO_bps`` and ``twin_tcp_ALGO_bps`` each TCP flow's rate on either side,
    ``tcp_handshake_ALGO_ms`` each kernel flow's handshake RTT and ``twin_told_*`` the twin told
    those, ``_told_cols``; TFMCC's falls to its floor, ``falls_cols``, and a layered scheme's time
    above the base layer, ``levels_cols``, on both sides) and ``windows.csv`` (the same per window,
    long). The twin's own records of a castlab scheme go to ``ORDER/SCHEME/twin/`` in the testbed
    roles' files (``twin_records``)."""
    rows, wins = [], []
    for order in orders:
        for name in schemes:
            sc = SCHEMES[name]
            why = sc.needs()
            row = {"scheme": name, "label": sc.label, "order": order, "duration_s": duration, "skipped": why or ""}
            if not why:
                r = run_case(out / order / name, seed, duration, name, tcp, tb, order=order, lead=lead)
                row.update(rate_bps=r["scheme_mean_bps"], tcp_mean_bps=r["tcp_mean_bps"], share=r["share"],
                           loss=r["loss"], lowest_10s_bps=r["lowest_10s_bps"],
                           sender_rate_mean_bps=r["sender_rate_mean_bps"], lead_s=r["lead_s"],
                           startup_s=r["startup_s"],
                           **{f"share_{a}": v for a, v in r["shares"].items()},
                           **{f"tcp_{a}_bps": v for a, v in r["tcp_means_bps"].items()},
                           **_window_cols("share_w", r["window_shares"]),
                           tcp_errors="; ".join(r["tcp_errors"]))
                wins += [{"scheme": name, "order": order, "side": "testbed", "window": k,
                          "window_start_s": k * SHARE_WINDOW_S, "share": v} for k, v in enumerate(r["window_shares"])]
            t = twin(name, seed, duration, tcp, order, lead, records_dir=out / order / name / "twin")
            if t:
                row.update(_twin_cols(t))
                wins += _twin_windows(name, order, t)
            if not why:
                row.update(_told_cols(name, seed, duration, tcp, order, lead, case_handshakes(out / order / name, tcp)))
                row.update(falls_cols(out / order / name))
                row.update(levels_cols(out / order / name, order, duration, lead))
            row.update(falls_cols(out / order / name / "twin", "twin_"))
            rows.append(row)
    df = pd.DataFrame(rows)
    pd.DataFrame(wins, columns=["scheme", "order", "side", "window", "window_start_s", "share"]).to_csv(
        out / "windows.csv", index=False)
    df.to_csv(out / "peers.csv", index=False)
    return df


def refresh_twins(where: Path, seed: int, duration: float, tcp: tuple[str, ...], lead: float = LEAD_S,
                  tbf_burst: Optional[int] = TESTBED_TBF_BURST_BYTES) -> pd.DataFrame:
    """Recompute the simulated twins of a seed's table in `where` (``peers.csv``, ``windows.csv``
    and ``ORDER/SCHEME/case.json`` as peers_table left them) without the testbed: every twin
    column and the twin's rows of windows.csv are replaced by `twin`'s readings, and each TCP
    flow's testbed rate (``tcp_ALGO_bps``) is filled in from its run's case.json. The testbed's
    readings are kept as they are, and the twin's own records written to ``ORDER/SCHEME/twin/``.
    The told twin's columns (``_told_cols``) are recomputed too, from each run's handshakes
    (``case_handshakes``: its packet log where case.json has none), and so are the falls and
    levels columns of both sides (``falls_cols``, ``levels_cols``). `tbf_burst`: the twins'
    token bucket (``twin_scenario``; None: the serialising twins, an ablation). Writes both
    tables back and returns peers.csv's."""
    df = pd.read_csv(where / "peers.csv")
    df = df.drop(columns=[c for c in df.columns if c.startswith("twin_")])
    wpath = where / "windows.csv"
    wins = pd.read_csv(wpath) if wpath.exists() else pd.DataFrame(
        columns=["scheme", "order", "side", "window", "window_start_s", "share"])
    wins = wins[wins["side"] != "twin"].to_dict("records")
    rows = []
    for row in df.to_dict("records"):
        name, order = row["scheme"], row["order"]
        case = where / order / name / "case.json"
        if case.exists():
            means = json.loads(case.read_text()).get("tcp_means_bps", {})
            row.update({f"tcp_{a}_bps": float(means[a]) for a in tcp if a in means})
        t = twin(name, seed, duration, tcp, order, lead, records_dir=where / order / name / "twin",
                 tbf_burst=tbf_burst)
        if t:
            row.update(_twin_cols(t))
            wins += _twin_windows(name, order, t)
        if case.exists():
            row.update(_told_cols(name, seed, duration, tcp, order, lead, case_handshakes(where / order / name, tcp),
                                  tbf_burst))
            row.update(falls_cols(where / order / name))
            row.update(levels_cols(where / order / name, order, duration, lead))
        row.update(falls_cols(where / order / name / "twin", "twin_"))
        rows.append(row)
    out = pd.DataFrame(rows)
    pd.DataFrame(wins, columns=["scheme", "order", "side", "window", "window_start_s", "share"]).to_csv(wpath, index=False)
    out.to_csv(where / "peers.csv", index=False)
    return out


def net_vs_sim(df: pd.DataFrame, tcp: tuple[str, ...]) -> pd.DataFrame:
    """Where testbed and twin differ, per castlab scheme and start order, as means over the rows
    (seeds) of peers.csv: the scheme's rate, share and loss on both sides and their ratio (testbed
    over twin), and each TCP flow's rate on both sides and its ratio; the share's ratio to the
    told twin's (``told_share_ratio``, where every seed has one: ``_told_cols``) and the range of
    each kernel flow's handshake RTT over the seeds (``tcp_handshake_ALGO_ms_min``/``_max``).
    Rows without a twin are left out."""
    have = [c for c in ("rate_bps", "twin_rate_bps", "share", "twin_share", "loss", "twin_loss") if c in df]
    if "twin_share" not in df:
        return pd.DataFrame()
    d = _ran(df[df["twin_share"].notna()])
    out = []
    for (n, o), g in d.groupby(["scheme", "order"], sort=False):
        m = {c: float(g[c].astype(float).mean()) for c in have}
        row = {"scheme": n, "order": o, "seeds": len(g), **m,
               "share_ratio": float(np.mean(g["share"].astype(float) / g["twin_share"].astype(float)))}
        if "rate_bps" in m and "twin_rate_bps" in m:
            row["rate_ratio"] = m["rate_bps"] / m["twin_rate_bps"]
        if "twin_told_share" in g and g["twin_told_share"].notna().all():
            row["told_share_ratio"] = float(np.mean(g["share"].astype(float) / g["twin_told_share"].astype(float)))
        for a in tcp:
            tb, tw = f"tcp_{a}_bps", f"twin_tcp_{a}_bps"
            if tb in g and tw in g:
                row[tb], row[tw] = float(g[tb].mean()), float(g[tw].mean())
                row[f"tcp_{a}_ratio"] = row[tb] / row[tw]
            hs = f"tcp_handshake_{a}_ms"
            if hs in g:
                row[f"{hs}_min"], row[f"{hs}_max"] = float(g[hs].min()), float(g[hs].max())
        out.append(row)
    return pd.DataFrame(out)


def _skipped(d: pd.DataFrame) -> pd.Series:
    """Whether each row was skipped (its reason a non-empty string; an all-empty column reads as
    floats)."""
    return d["skipped"].map(lambda x: isinstance(x, str) and len(x) > 0)


def _ran(df: pd.DataFrame) -> pd.DataFrame:
    return df[~_skipped(df)]


def peers_figure(out: Path, df: pd.DataFrame, tcp: tuple[str, ...]) -> list[str]:
    """Rate over time per scheme (a row each) and start order (a column each), each TCP flow
    beside it, at rcv1; the lead's seconds are negative."""
    import matplotlib.pyplot as plt

    ran = _ran(df).to_dict("records")
    if not ran:
        return []
    orders = [o for o in ORDERS if o in {r["order"] for r in ran}]
    schemes = list(dict.fromkeys(r["scheme"] for r in ran))
    by = {(r["scheme"], r["order"]): r for r in ran}
    fig, axes = plt.subplots(len(schemes), len(orders), figsize=(4.2 * len(orders) + 0.6, 1.6 * len(schemes) + 0.8),
                             dpi=120, sharex=True, sharey=True, squeeze=False)
    shades = ["tab:blue", "tab:orange", "tab:green", "tab:purple"]
    for i, n in enumerate(schemes):
        for j, o in enumerate(orders):
            ax = axes[i, j]
            r = by.get((n, o))
            if r is None or not (out / o / n / "series.csv").exists():
                ax.axis("off")
                continue
            s = pd.read_csv(out / o / n / "series.csv")
            for k, a in enumerate(tcp):
                ax.plot(s["second"], s[f"tcp{k}_{a}_bps"] / 1e3, color=shades[k % len(shades)], lw=0.6, alpha=0.8,
                        label=f"TCP {a}")
            ax.plot(s["second"], s["scheme_bps"] / 1e3, color="k", lw=1.0, label="the scheme")
            ax.axvline(0, color="0.5", lw=0.6, ls=":")
            ax.set_title(f"{r['label']}, {o}: share {r['share']:.2f}", fontsize=7)
            ax.grid(True, alpha=0.3)
            ax.tick_params(labelsize=6)
    for ax in axes[-1]:
        ax.set_xlabel("time from when both run (s)", fontsize=7)
    for ax in axes[:, 0]:
        ax.set_ylabel("kb/s at rcv1", fontsize=7)
    handles, labels = axes.flat[0].get_legend_handles_labels()
    fig.suptitle(f"Multicast schemes (black) against kernel TCP, {LINK_BPS / 1e6:g} Mb/s tbf bottleneck, "
                 "rates at the receiver", fontsize=8)
    fig.tight_layout(rect=(0, 0, 1, 0.96))
    fig.legend(handles, labels, loc="upper center", ncol=len(labels), fontsize=6, bbox_to_anchor=(0.5, 0.985),
               frameon=False)
    names = [f"peers.{e}" for e in ("png", "svg")]
    for f in names:
        fig.savefig(out / f)
    plt.close(fig)
    return names


def shares_figure(out: Path, windows: pd.DataFrame, panels: list[str], title: str, stem: str,
                  key: str = "scheme") -> list[str]:
    """The share per SHARE_WINDOW_S window, one panel per `key` value: each start order (a colour)
    on the testbed (solid; UFTP dash-dotted; the mean over seeds, each seed a marker) and in the
    twin (dashed)."""
    import matplotlib.pyplot as plt

    from castlab.experiments.plotting import save

    if windows.empty:
        return []
    cols = min(len(panels), 3)
    rows = (len(panels) + cols - 1) // cols
    fig, axes = plt.subplots(rows, cols, figsize=(3.4 * cols, 2.3 * rows + 0.4), dpi=120, squeeze=False)
    colors = {"scheme-first": "tab:blue", "tcp-first": "tab:red"}
    styles = {"testbed": ("-", "."), "castlab": ("-", "."), "uftp": ("-.", "^"), "twin": ("--", ".")}
    for ax, p in zip(axes.flat, panels):
        d = windows[windows[key] == p]
        for (o, side), g in d.groupby(["order", "side"], sort=False):
            mid = g["window_start_s"] + SHARE_WINDOW_S / 2
            m = g.groupby("window_start_s")["share"].mean()
            ls, mk = styles.get(side, ("-", "."))
            ax.plot(m.index + SHARE_WINDOW_S / 2, m.to_numpy(), ls, color=colors.get(o, "k"), lw=1.1,
                    label=f"{o}, {side}")
            if side != "twin":
                ax.plot(mid, g["share"], mk, color=colors.get(o, "k"), ms=3, alpha=0.6)
        ax.set_title(str(p), fontsize=8)
        ax.set_yscale("symlog", linthresh=0.01)
        ax.grid(True, alpha=0.3)
        ax.tick_params(labelsize=6)
        ax.set_xlabel("window centre (s from when both run)", fontsize=7)
        ax.set_ylabel("share", fontsize=7)
    for ax in axes.flat[len(panels):]:
        ax.axis("off")
    axes.flat[0].legend(fontsize=5)
    fig.suptitle(title, fontsize=8)
    return save(fig, out, stem)


def _read_seed(where: Path, expect: dict) -> Optional[pd.DataFrame]:
    """A seed's table of an earlier run of the same settings (its CSV is written last), or None."""
    p = where / expect["file"]
    if not p.exists():
        return None
    d = pd.read_csv(p)
    if "order" not in d or set(d["order"]) != set(expect["orders"]) or \
            ("duration_s" in d and not np.allclose(d["duration_s"].dropna(), expect["duration"])):
        return None
    return d


def peers_claims(df: pd.DataFrame, tcp: tuple[str, ...], orders: tuple[str, ...]) -> list:
    """Per scheme and start order: RFC 4654 §1's factor of two against the mean TCP flow and no
    drop to zero (variant), and for a castlab scheme its testbed share within NET_VS_SIM of its
    twin's (derived); each on the mean over seeds with its t interval."""
    fair = LINK_BPS / (len(tcp) + 1)
    claims = []
    for o in orders:
        for n, d in df[df["order"] == o].groupby("scheme", sort=False):
            if _skipped(d).any():
                continue
            label = SCHEMES[n].label
            where = f"peers.csv ({o} rows); seed-N/{o}/{n}/series.csv"
            claims.append(claim_over_seeds(
                in_range, d["share"], f"tcp-friendly-{n}-{o}", f"(variant) {label}'s rate at the receiver over the "
                f"mean kernel TCP flow's ({', '.join(tcp)}, one each), {o}, is within RFC 4654 §1's factor of two",
                FAIR_LO, FAIR_HI, None, "ratio", kind="variant", explanation=f"share per seed in {where}"))
            claims.append(claim_over_seeds(
                at_least, d["lowest_10s_bps"] / fair, f"no-drop-to-zero-{n}-{o}", f"(variant) {label}, {o}: every "
                f"{WINDOW_S:g} s window after the first {WARM_S:g} s carries more than a tenth of the fair share "
                f"({fair / 1e3:.0f} kb/s)", DROP_FLOOR, None, "fraction of fair share", kind="variant", worst="min",
                explanation=f"lowest_10s_bps per seed in {where}"))
            if SCHEMES[n].twin is not None and "twin_share" in d:
                ratio = d["share"].to_numpy(float) / d["twin_share"].to_numpy(float)
                diff = net_vs_sim(d, tcp)
                why = f"; {differences(diff.iloc[0], tcp)}" if len(diff) else ""
                for more in (falls_phrase(d, "falls, twin_falls, first_fall_s, twin_first_fall_s"), levels_phrase(d)):
                    why += f"; {more}" if more else ""
                claims.append(claim_over_seeds(
                    in_range, ratio, f"net-vs-sim-{n}-{o}", f"(derived) {label}'s share of the mean kernel TCP "
                    f"flow on the testbed is within a factor of {NET_VS_SIM:g} of its simulated twin's under the "
                    f"same order ({o}) and TCP flavours, per seed", 1 / NET_VS_SIM, NET_VS_SIM, None, "ratio",
                    kind="derived", explanation=f"share and twin_share per seed in peers.csv ({o} rows); the share "
                    f"per window on both sides in windows.csv; the testbed's rates over time in {where}{why}"))
    return claims


def differences(r: pd.Series, tcp: tuple[str, ...]) -> str:
    """A net_vs_sim row in words: testbed over twin for the scheme's rate and each TCP flow's,
    the scheme's loss on both sides, each with the peers.csv columns it comes from."""
    parts = []
    if np.isfinite(r.get("rate_ratio", np.nan)):
        parts.append(f"the scheme's rate at rcv1 {r['rate_ratio']:.2f} of the twin's (rate_bps / twin_rate_bps)")
    if np.isfinite(r.get("loss", np.nan)) and np.isfinite(r.get("twin_loss", np.nan)):
        parts.append(f"its loss {r['loss']:.1%} against {r['twin_loss']:.1%} (loss, twin_loss)")
    flows = [f"{a} {r[f'tcp_{a}_ratio']:.2f}" for a in tcp if np.isfinite(r.get(f"tcp_{a}_ratio", np.nan))]
    if flows:
        parts.append(f"each TCP flow's rate over the twin's: {', '.join(flows)} (tcp_ALGO_bps / twin_tcp_ALGO_bps)")
    hs = [f"{a} {_ms_range(r[f'tcp_handshake_{a}_ms_min'], r[f'tcp_handshake_{a}_ms_max'])}" for a in tcp
          if np.isfinite(r.get(f"tcp_handshake_{a}_ms_min", np.nan))]
    if hs:
        parts.append(f"the kernel flows' handshake RTTs {', '.join(hs)} (tcp_handshake_ALGO_ms)")
    if np.isfinite(r.get("told_share_ratio", np.nan)):
        parts.append(f"share over the twin told those handshakes {r['told_share_ratio']:.2f} (share / twin_told_share)")
    return ("testbed against twin, means over seeds: " + "; ".join(parts) +
            "; causes per scheme in docs/real-network.md, 'The testbed against its twin, per scheme'") if parts else ""


def _ms_range(lo: float, hi: float) -> str:
    """A range of milliseconds as the handshakes need it: µs below a millisecond (an empty path's
    handshake takes tens of µs)."""
    f = lambda v: f"{v * 1e3:.0f} µs" if v < 1 else f"{v:.0f} ms"  # noqa: E731
    return f(lo) if np.isclose(lo, hi, rtol=0.05) else f"{f(lo)}-{f(hi)}"


def run_net_peers(out: Path, seed: int, quick: bool = False, seeds: int = FULL_SEEDS, reuse: bool = False) -> Result:
    """The quick form: one QUICK_DURATION_S run per scheme at `seed`, scheme first
    (QUICK_ORDERS). The full form: both start orders (ORDERS), FULL_DURATION_S from the moment
    both run, at seeds `seed` .. `seed` + `seeds` - 1, each seed's runs in ``seed-N/`` (the
    figures are the first seed's and all seeds' windows), every claim decided per order on the
    mean over the seeds. With `reuse`, a seed whose table an earlier run of the same settings left
    in ``seed-N/`` is read, not run again (seeds can so run in parallel processes)."""
    reason = _unavailable() or (None if shutil.which("iperf3") else "needs iperf3 (make setup installs it with apt)")
    if reason:
        return _skip(reason)
    if not quick and seeds < 1:
        raise ValueError(f"seeds: must be at least 1 (got {seeds})")
    duration = QUICK_DURATION_S if quick else FULL_DURATION_S
    orders = QUICK_ORDERS if quick else ORDERS
    tcp = TCP_ALGOS
    run_seeds = [seed] if quick else list(range(seed, seed + seeds))
    frames = []
    for s in run_seeds:
        where = out if quick else out / f"seed-{s}"
        where.mkdir(parents=True, exist_ok=True)
        d = _read_seed(where, {"file": "peers.csv", "orders": orders, "duration": duration}) if reuse else None
        if d is None:
            d = peers_table(where, s, duration, list(SCHEMES), tcp, orders=orders)
        frames.append(d.assign(seed=s))
    df = pd.concat(frames, ignore_index=True)
    df.to_csv(out / "peers.csv", index=False)
    wframes = []
    for s in run_seeds:
        w = (out if quick else out / f"seed-{s}") / "windows.csv"
        if w.exists():
            wframes.append(pd.read_csv(w).assign(seed=s))
    windows = pd.concat(wframes, ignore_index=True) if wframes else pd.DataFrame(
        columns=["scheme", "order", "side", "window", "window_start_s", "share", "seed"])
    if not quick:
        windows.to_csv(out / "windows.csv", index=False)
    first = out if quick else out / f"seed-{run_seeds[0]}"
    files = peers_figure(first, df[df["seed"] == run_seeds[0]], tcp)
    if not quick:
        files = [f"seed-{run_seeds[0]}/{f}" for f in files]
    files += shares_figure(out, windows, list(dict.fromkeys(_ran(df)["scheme"])),
                           f"net-peers: share of the mean kernel TCP flow per {SHARE_WINDOW_S:g} s window "
                           f"({len(run_seeds)} seed(s)): testbed solid, twin dashed", "peers_shares")
    claims = peers_claims(df, tcp, orders)
    fair = LINK_BPS / (len(tcp) + 1)
    params = {"network": "real", "topology": topology().description, "routers": "kernel (tbf + pfifo, igmpproxy)",
              "propagation_delay_s": TESTBED_HOP_DELAY_S, "duration_s": duration, "warm_up_s": WARM_S,
              "window_s": WINDOW_S,
              "share_window_s": SHARE_WINDOW_S, "orders": list(orders), "lead_s": LEAD_S,
              "bottleneck_bps": LINK_BPS, "queue_pkts": QUEUE_PKTS, "seeds": run_seeds,
              "decided_on": "one run" if quick else f"the mean over {len(run_seeds)} seeds (95 % t interval)",
              "tcp": f"one kernel flow per algorithm, iperf3 -C {'/'.join(tcp)}; the namespaces' default named reno",
              "twin": f"the simulator, the same rates and queue, no delay per link and tbf's bucket of "
                      f"{TESTBED_TBF_BURST_BYTES} bytes on the last hops (the testbed's), one TCP flow "
                      "per kernel flow as Linux runs it (reno: sack with Linux's settings; cubic, bbr: "
                      "TcpConfig::linux()), the same start order and lead",
              "measured_at": "rcv1's interface (castlab.testbed.count): the scheme's multicast bytes and each TCP flow's",
              "fair_share_bps": fair, "rows": df.to_dict("records")}
    return Result(params, claims, ["peers.csv", *([] if quick else ["windows.csv"]), *files])
