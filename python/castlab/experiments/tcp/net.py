"""``net-tcp-vs-sim``: the kernel's reno, cubic and bbr on the namespace testbed beside the
simulator's Linux-like TCPs (``TcpConfig::linux()``) on a twin of the same bottleneck.

The testbed is net-peers' kind (``castlab.testbed``, kernel routers): src - r1 - rcv1, a tc tbf
at ``LINK_BPS`` with a pfifo of ``QUEUE_PKTS`` packets on r1's port towards rcv1, the only
bottleneck. This kernel has neither netem nor sch_fq (the two qdiscs that can hold a packet
back for a fixed time; ``/proc/config.gz``), so there is no propagation delay: a round trip is
the stacks' own latency (measured by ICMP echo before each run, ``base_rtt_s``) plus
serialisation and queueing at the tbf. TSO, GSO and GRO are off on every veth of the path, so
the tbf and the pfifo see one frame per segment.

Each case is one kernel flow alone or a pair, iperf3 -C ALGO from src to rcv1, for
``duration`` seconds, three runs (the full form). Throughput over time comes from the iperf3
servers' interval reports (payload bytes received per 0.5 s); ``ss -tin`` on src is sampled
every 100 ms for each data connection's cwnd, smoothed RTT, pacing rate and delivery rate.
``tcp_metrics`` is off in src's namespace (``tcp_no_metrics_save``), so no run inherits an
ssthresh from the one before.

The twin (``sim_case``) is the same path in the simulator: src - r1 at a veth-like 10 Gb/s,
r1 - rcv1 the bottleneck, each link's one-way delay a quarter of the measured ping round trip.
The bottleneck is the testbed's tbf (a twin models its testbed): a token bucket of
``TBF_BURST_BYTES`` (``castlab.testbed.topology``, the burst of the testbed's own tc line) filling
at ``LINK_BPS`` and charging each packet's 14-byte Ethernet header besides its IP length (1448 +
52 bytes), over a DropTail queue of ``QUEUE_PKTS`` that counts the head packet waiting for tokens
(the pfifo's limit does): a packet that finds the bucket full leaves at once, with no
serialisation time. With ``tbf_burst=None`` (an ablation) the bottleneck serialises every packet
at ``LINK_BPS * 1500 / 1514`` with ``QUEUE_PKTS - 1`` packets queued besides the one on the wire.
Kernel reno is the ``sack`` variant with Linux's settings (Linux's reno recovers by SACK), cubic
and bbr are the variants of those names (which start from ``TcpConfig::linux()``). A pair's
flows start 10 ms apart in the twin; the kernel's two iperf3 clients are started one after the
other. ``refresh_twins`` recomputes the twins of a recorded run from its base RTTs and seeds,
keeping the kernel's readings.

The agreement bounds below were written before the experiment was first run (and
docs/fidelity/tcp.md says so); a bound changed after a verdict was seen goes in
``castlab.experiments.revisions``. Beside the declared twin each run also has the twin with phase
randomisation, and ``cases.csv`` has per flow and side the readings that explain a gap
(``dynamics``): the claims stay on the declared twin.
"""

from __future__ import annotations

import json
import re
import shutil
from contextlib import contextmanager
import subprocess
import sys
import time
from pathlib import Path
from typing import Optional

import numpy as np
import pandas as pd

from castlab.experiments.common import Result, at_most, claim_over_seeds, in_range
from castlab.experiments.net_common import _skip, _unavailable, testbed_name
from castlab.testbed.topology import TBF_BURST_BYTES

LINK_BPS = 10e6  # the tbf's rate
QUEUE_PKTS = 30  # the pfifo's limit: 36 ms of 1514-byte frames at LINK_BPS, the round trip's range
FRAME_BYTES = 1514  # a full segment on the wire at the tbf: 1448 payload + 52 TCP/IP + 14 Ethernet
IP_BYTES = 1500  # the same segment as the simulator counts it (mss + header_bytes)
#: the twin's bottleneck is the testbed's tbf: a token bucket of the burst the testbed's tc line
#: takes (the link key ``tbf_burst``)
TWIN_TBF_BURST_BYTES = TBF_BURST_BYTES
TBF_OVERHEAD_BYTES = FRAME_BYTES - IP_BYTES  # what the tbf charges beyond the IP length (``tbf_overhead``)
#: the serialising twin's bottleneck rate (the ablation, ``tbf_burst=None``): the tbf's rate net
#: of the Ethernet header
TWIN_LINK_BPS = LINK_BPS * IP_BYTES / FRAME_BYTES
VETH_BPS = 10e9  # the unshaped links (veth pairs) in the twin
ALGOS = ("reno", "cubic", "bbr")
CASES: tuple[tuple[str, ...], ...] = (("reno",), ("cubic",), ("bbr",), ("reno", "cubic"), ("cubic", "bbr"),
                                      ("reno", "bbr"))
PORT = 5201
#: the simulator's counterpart of each kernel algorithm
SIM_VARIANT = {"reno": "sack", "cubic": "cubic", "bbr": "bbr"}
#: TcpConfig::linux() for the sack variant (cubic and bbr start from it by themselves; the
#: bindings expose only the Reno family's defaults, so its values are repeated here);
#: docs/fidelity/tcp.md "Linux's settings for CUBIC and BBR" gives where each value comes from
LINUX_SETTINGS = {"mss_bytes": 1448, "header_bytes": 52, "initial_window_segs": 10, "rwnd_bytes": 3 << 20,
                  "initial_rto": 1.0, "min_rto": 0.2, "max_rto": 120.0, "rto_min_on_variance": True,
                  "delayed_ack": True, "delayed_ack_timeout": 0.04, "rack": True, "tlp": True, "push": True}
# A pair's second flow starts this long after the first, on both sides: late enough that its
# handshake and first RTT samples meet the queue the first flow keeps. Launched together, the
# two iperf3 clients raced: where the bbr flow's handshake came before the first flow's data its
# min RTT was the empty path's (0.01 ms) until its first PROBE_RTT 10 s later, and the first
# flow had about as much as bbr meanwhile; where it came after, the min RTT was the queue's, as
# the twin's first data segment measures it (docs/fidelity/tcp.md, "The pairs' start").
PAIR_START_GAP_S = 1.0
#: the gap of runs recorded before cases.csv had a pair_start_gap_s column: the clients launched
#: one after the other at once, the twin's flows 10 ms apart
RECORDED_PAIR_START_GAP_S = 0.01
#: a pair's late readings start this long after its second flow: a bbr flow whose min RTT was
#: last lowered at its start has left its first PROBE_RTT by then (tcp_bbr.c's 10 s min-RTT
#: window, PROBE_RTT's 200 ms and a round trip)
LATE_AFTER_SECOND_S = 10.5
PHASE_S = FRAME_BYTES * 8 / LINK_BPS  # docs/fidelity/phase.md's overhead: one frame at the bottleneck
SS_PERIOD_S = 0.1
BIN_S = 0.5  # iperf3's reporting interval, and the series' bins
FULL_RUNS = 3
FULL_DURATION_S, QUICK_DURATION_S = 30.0, 6.0
FULL_WARM_S, QUICK_WARM_S = 5.0, 2.0  # left out of the means: slow start and its first loss
PINGS = 20

# ---- agreement bounds, declared before the first run (kernel value over the twin's, per run):
# - one flow alone, mean throughput after the warm-up: within 10 %. Alone a flow that keeps the
#   tbf busy gets the link whatever its algorithm, so this checks that both sides fill it equally
#   (a timeout or a slow recovery in one of them shows as a gap);
# - one flow alone, median smoothed RTT after the warm-up: within a factor of 1.5. The RTT is the
#   pfifo's occupancy, which is where the algorithms differ (reno and cubic fill it to the limit
#   and back off by 1/2 and 0.7, BBR aims at no standing queue); a factor rather than a per cent
#   because BBR's queue of a few packets is a small number;
# - a pair, the first flow's throughput over the second's after the warm-up: within a factor of
#   1.5 (the bound for shares);
# - a pair, the median smoothed RTT of both flows after the warm-up: within a factor of 1.5.
# Each is decided on the mean over the runs with its 95 % t interval (undecided when it straddles
# a bound): a claim about how the two agree on average, not on every run, whose per-run values
# are in cases.csv.
ALONE_TPUT = (1 / 1.1, 1.1)
ALONE_RTT = (1 / 1.5, 1.5)
PAIR_RATIO = (1 / 1.5, 1.5)
PAIR_RTT = (1 / 1.5, 1.5)


def linux_twin_flow(algo: str) -> dict:
    """A scenario TCP flow's variant and settings for a kernel algorithm, as the twins run it."""
    f = {"variant": SIM_VARIANT[algo]}
    if SIM_VARIANT[algo] == "sack":
        f["config"] = dict(LINUX_SETTINGS)
    return f


def topology():
    """src - r1 - rcv1, the bottleneck on r1's port towards rcv1 (kernel routers)."""
    from castlab.testbed.topology import Link, Topology

    return Topology(name="tcpvsim", description=f"src - r1 =[{LINK_BPS / 1e6:g} Mb/s tbf, pfifo {QUEUE_PKTS}]=> rcv1",
                    hosts=["src", "rcv1"], routers=["r1"],
                    links=[Link("src", "r1"), Link("r1", "rcv1", LINK_BPS, QUEUE_PKTS, 0.0)])


def case_name(algos: tuple[str, ...]) -> str:
    return "+".join(algos)


# ------------------------------------------------------------------ ss -tin


_SS_NUM = {"cwnd": r"\bcwnd:(\d+)", "ssthresh": r"\bssthresh:(\d+)", "bytes_acked": r"\bbytes_acked:(\d+)",
           "bytes_retrans": r"\bbytes_retrans:(\d+)", "minrtt_ms": r"\bminrtt:([\d.]+)",
           "lost": r"\blost:(\d+)", "bbr_mrtt_ms": r"\bmrtt:([\d.]+)", "bbr_pacing_gain": r"\bpacing_gain:([\d.]+)"}
_SS_RATE = {"pacing_bps": r"\bpacing_rate ([\d.]+)([KMG]?)bps", "delivery_bps": r"\bdelivery_rate ([\d.]+)([KMG]?)bps",
            "bbr_bw_bps": r"\bbbr:\(bw:([\d.]+)([KMG]?)bps"}
_SCALE = {"": 1.0, "K": 1e3, "M": 1e6, "G": 1e9}


def parse_ss(text: str) -> list[dict]:
    """Records of ``ss -tinH`` output taken in a loop: each sample starts with a line ``#T``
    (Unix time, s); each socket is a state line (``ESTAB ... local:port peer:port``) followed by
    its info line. Returns one dict per socket and sample: t, local and peer port, cwnd
    (segments), ssthresh (None before the first reduction), srtt and rttvar (ms), minrtt (ms),
    pacing and delivery rate (b/s), bytes acked and retransmitted, lost (segments); for bbr its
    model's bandwidth (b/s), min RTT (ms) and pacing gain (None for other algorithms)."""
    out, t, cur = [], None, None
    for line in text.splitlines():
        if line.startswith("#"):
            try:
                t = float(line[1:])
            except ValueError:
                t = None
            cur = None
            continue
        if not line.strip() or t is None:
            continue
        if not line[0].isspace():
            parts = line.split()
            cur = None
            if len(parts) >= 5:
                try:
                    cur = {"t": t, "lport": int(parts[3].rsplit(":", 1)[1]), "pport": int(parts[4].rsplit(":", 1)[1])}
                except (IndexError, ValueError):
                    cur = None
            continue
        if cur is None:
            continue
        rec = dict(cur)
        for k, rx in _SS_NUM.items():
            m = re.search(rx, line)
            rec[k] = float(m.group(1)) if m else None
        m = re.search(r"\brtt:([\d.]+)/([\d.]+)", line)
        rec["srtt_ms"], rec["rttvar_ms"] = (float(m.group(1)), float(m.group(2))) if m else (None, None)
        for k, rx in _SS_RATE.items():
            m = re.search(rx, line)
            rec[k] = float(m.group(1)) * _SCALE[m.group(2)] if m else None
        m = re.search(r"^\s*(\S+)\s", line)
        rec["cc"] = m.group(1) if m and ":" not in m.group(1) else None
        out.append(rec)
        cur = None
    return out


def data_connections(rows: list[dict], ports: list[int]) -> dict[int, pd.DataFrame]:
    """Each iperf3 data connection's samples, by server port: iperf3 opens a control connection
    to the same port first, so of the local ports seen towards a server port the one that
    acknowledged the most bytes is the data connection."""
    df = pd.DataFrame(rows)
    res = {}
    for p in ports:
        d = df[df["pport"] == p] if len(df) else df
        if not len(d):
            res[p] = pd.DataFrame()
            continue
        best = d.groupby("lport")["bytes_acked"].max().idxmax()
        res[p] = d[d["lport"] == best].sort_values("t").reset_index(drop=True)
    return res


_SS_LOOP = """
import subprocess, sys, time
out, dst, dur, period = sys.argv[1], sys.argv[2], float(sys.argv[3]), float(sys.argv[4])
end = time.time() + dur
nxt = time.time()
with open(out, "w") as f:
    while time.time() < end:
        t = time.time()
        r = subprocess.run(["ss", "-tinH", "dst", dst], capture_output=True, text=True)
        f.write(f"#{t:.6f}\\n{r.stdout}")
        f.flush()
        nxt += period
        time.sleep(max(0.0, nxt - time.time()))
"""

_PING = """
import os, socket, struct, sys, time
dst, n = sys.argv[1], int(sys.argv[2])
def csum(b):
    b = b + b"\\0" * (len(b) % 2)
    s = sum(struct.unpack(f"!{len(b) // 2}H", b))
    s = (s >> 16) + (s & 0xFFFF)
    s += s >> 16
    return ~s & 0xFFFF
s = socket.socket(socket.AF_INET, socket.SOCK_RAW, socket.IPPROTO_ICMP)
s.settimeout(1.0)
ident = os.getpid() & 0xFFFF
for k in range(n):
    payload = b"castlab" + bytes(49)
    hdr = struct.pack("!BBHHH", 8, 0, 0, ident, k)
    pkt = struct.pack("!BBHHH", 8, 0, csum(hdr + payload), ident, k) + payload
    t = time.perf_counter()
    s.sendto(pkt, (dst, 0))
    while True:
        try:
            data = s.recv(2048)
        except socket.timeout:
            print("nan"); break
        ihl = (data[0] & 0x0F) * 4
        typ, _, _, rid, seq = struct.unpack("!BBHHH", data[ihl:ihl + 8])
        if typ == 0 and rid == ident and seq == k:
            print(time.perf_counter() - t); break
    time.sleep(0.01)
"""


def ping_rtts(tb, src: str, dst: str, n: int = PINGS) -> list[float]:
    """Round trips (s) of `n` ICMP echoes of 84 bytes (IP) from `src` to `dst` on the idle
    testbed (this machine has no ping binary; a raw socket does the same)."""
    r = tb.run(src, [sys.executable, "-c", _PING, tb.addr(dst), str(n)], timeout=30 + n)
    return [float(x) for x in r.stdout.split()]


def offloads_off(tb) -> None:
    """TSO, GSO, GRO (and checksum and scatter-gather offloads) off on every veth of the path."""
    code = "import sys; from castlab._native import net_offloads_off as f; [f(d) for d in sys.argv[1:]]"
    for node, peers in (("src", ["r1"]), ("r1", ["src", "rcv1"]), ("rcv1", ["r1"])):
        tb.run(node, [sys.executable, "-c", code, *[tb.iface(node, p) for p in peers]])


#: the kernel's counters of src's namespace read around each run (nstat): retransmission
#: timeouts, and tail loss probes with the recoveries they made (RACK-TLP, which the twin lacks)
NSTAT = ("TcpExtTCPTimeouts", "TcpExtTCPLossProbes", "TcpExtTCPLossProbeRecovery")


def _nstat(tb) -> dict[str, int]:
    r = tb.run("src", ["nstat", "-asz", *NSTAT], check=False)
    out = {}
    for line in r.stdout.splitlines():
        parts = line.split()
        if len(parts) >= 2 and parts[0] in NSTAT and parts[1].isdigit():
            out[parts[0]] = int(parts[1])
    return out


def _qdisc_drops(tb) -> int:
    r = tb.run("r1", ["tc", "-s", "qdisc", "show", "dev", tb.iface("r1", "rcv1")], check=False)
    m = re.findall(r"pfifo.*?\n\s*Sent \d+ bytes \d+ pkt \(dropped (\d+)", r.stdout, re.S)
    return int(m[0]) if m else -1


# ------------------------------------------------------------------ the kernel side


def iperf_intervals(report: dict) -> pd.DataFrame:
    """An iperf3 server's interval reports: start and end (s from the test's start) and the
    payload bytes received in each."""
    rows = [{"start_s": float(i["sum"]["start"]), "end_s": float(i["sum"]["end"]), "bytes": float(i["sum"]["bytes"])}
            for i in report.get("intervals", [])]
    return pd.DataFrame(rows, columns=["start_s", "end_s", "bytes"])


def kernel_case(tb, out: Path, algos: tuple[str, ...], duration: float, gap: float = PAIR_START_GAP_S) -> dict:
    """One kernel run of `algos` (one iperf3 flow each, src -> rcv1, the k-th client launched
    k x `gap` s after the first) for `duration` s each; writes the iperf3 reports and ``ss.txt``.
    Returns per flow the intervals and the ss samples (times from the first client's start), the
    min RTT its first ss sample shows (its handshake's, unless a data segment in the sampler's
    first 100 ms was quicker), and the run's facts: the pfifo's drops and src's timeout and
    tail-loss-probe counters over the run (all connections of the case together, iperf3's
    control connections included)."""
    out.mkdir(parents=True, exist_ok=True)
    dst = tb.addr("rcv1")
    tb.run("src", ["ip", "tcp_metrics", "flush", "all"], check=False)
    ports = [PORT + k for k in range(len(algos))]
    servers = []
    for p in ports:
        servers.append(tb.spawn("rcv1", ["iperf3", "-s", "-1", "-J", "-i", str(BIN_S), "-p", str(p), "-B", dst],
                                stdout=open(out / f"server{p}.json", "w"), stderr=subprocess.STDOUT))
    # the servers listen once their port shows in ss
    end = time.monotonic() + 10
    while time.monotonic() < end:
        r = tb.run("rcv1", ["ss", "-ltnH"], check=False)
        if all(f":{p} " in r.stdout for p in ports):
            break
        time.sleep(0.05)
    drops0 = _qdisc_drops(tb)
    counters0 = _nstat(tb)
    sampler = tb.spawn("src", [sys.executable, "-c", _SS_LOOP, str(out / "ss.txt"), dst, str(duration + 3),
                               str(SS_PERIOD_S)])
    time.sleep(0.3)
    t0 = time.time()
    clients, offsets = [], []
    for k, (p, a) in enumerate(zip(ports, algos)):
        time.sleep(max(t0 + k * gap - time.time(), 0.0))
        offsets.append(time.time() - t0)
        clients.append(tb.spawn("src", ["iperf3", "-c", dst, "-p", str(p), "-t", str(int(duration)), "-C", a, "-J",
                                        "-i", str(BIN_S)], stdout=open(out / f"client{p}.json", "w"),
                                stderr=subprocess.STDOUT))
    deadline = time.monotonic() + duration + 20 + gap * (len(algos) - 1)
    for c in clients + servers:
        try:
            c.wait(timeout=max(deadline - time.monotonic(), 0.5))
        except subprocess.TimeoutExpired:
            tb.stop(c, timeout=5)
    tb.stop(sampler, timeout=5)
    drops = _qdisc_drops(tb) - drops0 if drops0 >= 0 else -1
    counters1 = _nstat(tb)
    counters = {k: counters1[k] - counters0[k] if k in counters0 and k in counters1 else -1 for k in NSTAT}
    errors, used = [], []
    flows = []
    conns = data_connections(parse_ss((out / "ss.txt").read_text() if (out / "ss.txt").exists() else ""), ports)
    for p, a, off in zip(ports, algos, offsets):
        try:
            srv = json.loads((out / f"server{p}.json").read_text())
            cli = json.loads((out / f"client{p}.json").read_text())
        except ValueError as e:
            errors.append(f"{a}: unreadable iperf3 report ({e})")
            srv, cli = {}, {}
        if cli.get("error") or srv.get("error"):
            errors.append(f"{a}: {cli.get('error') or srv.get('error')}")
        u = cli.get("end", {}).get("sender_tcp_congestion")
        used.append(u)
        if u and u != a:
            errors.append(f"{a}: iperf3 ran {u}")
        ss = conns[p]
        if len(ss):
            ss = ss.assign(t=ss["t"] - t0)
        # iperf3 counts from its own start; the run's clock is the first client's
        iv = iperf_intervals(srv)
        iv[["start_s", "end_s"]] += off
        flows.append({"algo": a, "intervals": iv, "ss": ss, "start_s": off, "first_minrtt_ms": first_minrtt(ss),
                      "retrans_segs": float(cli.get("end", {}).get("sum_sent", {}).get("retransmits", float("nan")))})
    return {"flows": flows, "drops": drops, "errors": errors, "used": used, "counters": counters}


# ------------------------------------------------------------------ the twin


def twin_scenario(algos: tuple[str, ...], duration: float, base_rtt_s: float,
                  tbf_burst: Optional[int] = TWIN_TBF_BURST_BYTES, gap: float = PAIR_START_GAP_S) -> dict:
    """The twin's scenario (``Scenario.from_dict``'s form) of a kernel run of `algos`: src - r1 -
    rcv1, each link's one-way delay base_rtt_s / 4, one TCP flow per algorithm as Linux runs it
    (``linux_twin_flow``), `gap` s apart (PAIR_START_GAP_S, as the kernel's clients). The
    bottleneck r1 - rcv1 is a token bucket of `tbf_burst` bytes at LINK_BPS charging
    TBF_OVERHEAD_BYTES per packet over a queue of QUEUE_PKTS (the testbed's tbf and pfifo; by
    default its burst), or with `tbf_burst` None a link serialising at TWIN_LINK_BPS with
    QUEUE_PKTS - 1 queued besides the packet on the wire (the ablation). The bucket is on both
    directions, where the testbed shapes only r1's port: the reverse direction carries only
    ACKs, which it passes at once."""
    if tbf_burst is not None and int(tbf_burst) < IP_BYTES + TBF_OVERHEAD_BYTES:
        raise ValueError(f"tbf_burst: at least {IP_BYTES + TBF_OVERHEAD_BYTES} bytes, a full segment's frame "
                         f"(got {tbf_burst})")
    d = max(base_rtt_s, 0.0) / 4
    if tbf_burst is None:
        neck = {"rate": TWIN_LINK_BPS, "queue_limit": QUEUE_PKTS - 1}
    else:
        neck = {"rate": LINK_BPS, "queue_limit": QUEUE_PKTS, "tbf_burst": int(tbf_burst),
                "tbf_overhead": TBF_OVERHEAD_BYTES}
    tcp = [{"name": f"f{k}", "src": "src", "dst": "rcv1", "start": gap * k, **linux_twin_flow(a)}
           for k, a in enumerate(algos)]
    return {"name": f"net-tcp-vs-sim twin {case_name(algos)}", "duration": duration, "nodes": ["src", "r1", "rcv1"],
            "links": [{"name": "up", "a": "src", "b": "r1", "rate": VETH_BPS, "delay": d, "queue_limit": 10_000},
                      {"name": "bottleneck", "a": "r1", "b": "rcv1", "delay": d, **neck}],
            "tcp": tcp}


def sim_case(algos: tuple[str, ...], duration: float, seed: int, base_rtt_s: float,
             phase_overhead_s: float = 0.0, tbf_burst: Optional[int] = TWIN_TBF_BURST_BYTES,
             gap: float = PAIR_START_GAP_S) -> dict:
    """The twin of a kernel run (``twin_scenario``; `tbf_burst` its bottleneck's bucket, by default
    the testbed's, None the serialising ablation; `gap` between its flows' starts), seeded
    `seed`, with phase randomisation (docs/fidelity/phase.md) at `phase_overhead_s` (0: off,
    whatever the process's default).
    Returns per flow its trace and stats, and the bottleneck's drops."""
    import os

    from castlab.scenario import Scenario
    from castlab.simulator import PHASE_ENV

    s = Scenario.from_dict(twin_scenario(algos, duration, base_rtt_s, tbf_burst, gap))
    saved = os.environ.get(PHASE_ENV)
    os.environ[PHASE_ENV] = repr(float(phase_overhead_s))
    try:
        sim = s.build(seed)
    finally:
        if saved is None:
            os.environ.pop(PHASE_ENV, None)
        else:
            os.environ[PHASE_ENV] = saved
    sim.run(duration)
    ab, _ = sim.scenario_handles.channels["bottleneck"]
    flows = []
    for k, a in enumerate(algos):
        h = sim.scenario_handles.tcp[f"f{k}"]
        flows.append({"algo": a, "trace": sim.tcp_trace(h), "stats": sim.tcp_stats(h)})
    ch = sim.channel_stats(ab)
    return {"flows": flows, "drops": int(ch["drops_forced"] + ch["drops_early"])}


# ------------------------------------------------------------------ readings


def _step_at(t_ns: np.ndarray, v: np.ndarray, at_s: np.ndarray) -> np.ndarray:
    k = np.searchsorted(t_ns, at_s * 1e9, side="right") - 1
    return np.where(k >= 0, np.asarray(v, float)[np.maximum(k, 0)], np.nan)


#: the pacing gain of each state code of the simulator's bbr trace (tcp_bbr.c's gains: STARTUP
#: 2/ln 2, DRAIN its inverse, PROBE_RTT 1, PROBE_BW's cycle from code 8), as ss shows the kernel's
BBR_STATE_GAIN = {0: 2.88672, 1: 1 / 2.88672, 2: 1.0, 8: 1.25, 9: 0.75, **{c: 1.0 for c in range(10, 16)}}


def bbr_min_rtt(tr: dict) -> tuple[np.ndarray, np.ndarray]:
    """The twin bbr flow's min-RTT filter over time (times ns, values ms), by tcp_bbr.c's rule
    (bbr_update_min_rtt) applied to its traced RTT samples: a sample below the filter's value,
    or any sample once the value is 10 s old, replaces it; leaving PROBE_RTT restarts the 10 s
    (bbr_check_probe_rtt_done). What ss shows as the kernel's ``mrtt``."""
    t, r = tr["rtt_time_ns"], tr["rtt_ns"] / 1e6
    codes, st = tr.get("state_code", np.array([])), tr.get("state_time_ns", np.array([]))
    exits = sorted(int(st[i + 1]) for i in range(len(codes) - 1) if int(codes[i]) == 2)
    m, stamp, x = float("inf"), 0, 0
    vals = np.empty(len(t))
    for k, (ti, ri) in enumerate(zip(t, r)):
        while x < len(exits) and exits[x] <= ti:
            stamp = max(stamp, exits[x])
            x += 1
        if ri < m or ti > stamp + 10_000_000_000:
            m, stamp = float(ri), int(ti)
        vals[k] = m
    return t, vals


def sim_samples(tr: dict, duration: float, mss: int) -> pd.DataFrame:
    """The twin flow's state every SS_PERIOD_S, as ss samples the kernel's: cwnd (segments),
    smoothed RTT (ms); for bbr the pacing rate (b/s), pacing gain and min-RTT filter (ms)."""
    t = np.arange(SS_PERIOD_S, duration + 1e-9, SS_PERIOD_S)
    d = {"t": t, "cwnd": _step_at(tr["cc_time_ns"], tr["cwnd_bytes"] / mss, t),
         "srtt_ms": _step_at(tr["rtt_time_ns"], tr["srtt_ns"] / 1e6, t)}
    if "state_time_ns" in tr and len(tr["state_time_ns"]):
        d["pacing_bps"] = _step_at(tr["state_time_ns"], tr["pacing_rate_bps"], t)
        gains = np.array([BBR_STATE_GAIN.get(int(c), np.nan) for c in tr["state_code"]])
        d["bbr_pacing_gain"] = _step_at(tr["state_time_ns"], gains, t)
        mt, mv = bbr_min_rtt(tr)
        d["bbr_mrtt_ms"] = _step_at(mt, mv, t)
    return pd.DataFrame(d)


def sim_rate(tr: dict, edges: np.ndarray) -> np.ndarray:
    """The twin flow's in-order payload bytes delivered per bin of `edges` (s), as b/s."""
    t, b = tr["rx_time_ns"], tr["rx_bytes"]
    cum = np.interp(edges * 1e9, t, b, left=0.0) if len(t) else np.zeros_like(edges)
    return np.diff(cum) * 8 / np.diff(edges)


def first_minrtt(ss: pd.DataFrame) -> float:
    """The min RTT (ms) of a kernel flow's first ss sample that shows one: tcp_min_rtt, which the
    handshake's RTT starts (and bbr's init copies), NaN without one."""
    if not len(ss) or "minrtt_ms" not in ss:
        return float("nan")
    v = ss["minrtt_ms"].dropna()
    return float(v.iloc[0]) if len(v) else float("nan")


def kernel_rate(iv: pd.DataFrame, edges: np.ndarray) -> np.ndarray:
    """A kernel flow's payload bytes received per bin of `edges`, from iperf3's intervals (which
    are BIN_S long, so a bin is an interval), as b/s."""
    out = np.full(len(edges) - 1, np.nan)
    if not len(iv):
        return out
    mid = ((iv["start_s"] + iv["end_s"]) / 2).to_numpy()
    rate = (iv["bytes"] * 8 / (iv["end_s"] - iv["start_s"]).clip(lower=1e-9)).to_numpy()
    k = np.searchsorted(edges, mid, side="right") - 1
    ok = (k >= 0) & (k < len(out))
    out[k[ok]] = rate[ok]
    return out


def mean_after(iv_or_tr, warm: float, duration: float, kernel: bool) -> float:
    """Mean throughput (b/s) over [warm, duration]: kernel from iperf3's intervals, each by the
    part of it inside (a flow started later than the first has intervals that straddle the
    edges), the twin from its delivered bytes."""
    if kernel:
        iv = iv_or_tr
        a, b = iv["start_s"].to_numpy(float), iv["end_s"].to_numpy(float)
        inside = np.clip(np.minimum(b, duration) - np.maximum(a, warm), 0.0, None)
        span = float(inside.sum())
        frac = inside / np.clip(b - a, 1e-9, None)
        return float((iv["bytes"].to_numpy(float) * frac).sum() * 8 / span) if span > 0 else float("nan")
    tr = iv_or_tr
    cum = np.interp(np.array([warm, duration]) * 1e9, tr["rx_time_ns"], tr["rx_bytes"], left=0.0)
    return float((cum[1] - cum[0]) * 8 / (duration - warm))


def slow_start_exit(samples: pd.DataFrame) -> tuple[float, float]:
    """When the first slow start ended and the cwnd then: the first sample whose cwnd is below
    the largest before it (a reduction), time and that largest cwnd (segments)."""
    if not len(samples) or "cwnd" not in samples:
        return float("nan"), float("nan")
    c = samples["cwnd"].to_numpy(float)
    run = np.fmax.accumulate(np.nan_to_num(c, nan=0.0))
    k = np.nonzero(c[1:] < run[:-1])[0]
    if not len(k):
        return float("nan"), float("nan")
    return float(samples["t"].iloc[k[0] + 1]), float(run[k[0]])


def dynamics(d: pd.DataFrame, warm: float) -> dict:
    """What explains a gap between the sides, from a flow's 100 ms samples after the warm-up:
    the window's growth per round trip between reductions (median over stretches of at least
    0.3 s without one; segments per smoothed RTT), the window after a reduction over the one
    before (median; the samples are 100 ms apart, so a reduction spread over a recovery shows
    whole), reductions per second; and for bbr the pacing rate in the gain-1 phases (median,
    b/s), the share of samples in STARTUP (gain 2/ln 2) and the min-RTT filter's value (median,
    ms), and the window beyond 2 x bandwidth x min RTT (median over gain-1 samples, segments):
    BBR v1's window is 2 x bandwidth x min RTT plus allowances, so its share beside a flow that
    keeps the pfifo filled follows the queue that flow left when the filter was last refreshed."""
    out = {"ca_growth_per_rtt": float("nan"), "reduction_ratio": float("nan"), "reductions_per_s": float("nan"),
           "cruise_pacing_bps": float("nan"), "startup_share": float("nan"), "bbr_mrtt_median_ms": float("nan"),
           "bbr_cwnd_over_2bdp_segs": float("nan")}
    if not len(d) or "cwnd" not in d:
        return out
    d = d[d["t"] >= warm]
    if len(d) < 3:
        return out
    t, c = d["t"].to_numpy(float), d["cwnd"].to_numpy(float)
    r = d["srtt_ms"].to_numpy(float) / 1e3
    cut = [0] + [k for k in range(1, len(c)) if c[k] < c[k - 1]] + [len(c)]
    grow = []
    for a, b in zip(cut, cut[1:]):
        if b - a >= 2 and t[b - 1] - t[a] >= 0.3:
            rtt = float(np.nanmean(r[a:b]))
            if rtt > 0:
                grow.append((c[b - 1] - c[a]) / ((t[b - 1] - t[a]) / rtt))
    red = [c[k] / c[k - 1] for k in cut[1:-1]]
    out.update(ca_growth_per_rtt=float(np.median(grow)) if grow else float("nan"),
               reduction_ratio=float(np.median(red)) if red else float("nan"),
               reductions_per_s=len(red) / max(float(t[-1] - t[0]), 1e-9))
    if "bbr_pacing_gain" in d and d["bbr_pacing_gain"].notna().any():
        g = d["bbr_pacing_gain"].to_numpy(float)
        cruise = d["pacing_bps"].to_numpy(float)[np.isclose(g, 1.0)]
        out.update(cruise_pacing_bps=float(np.nanmedian(cruise)) if len(cruise) else float("nan"),
                   startup_share=float(np.mean(g > 2.0)))
    if "bbr_mrtt_ms" in d and d["bbr_mrtt_ms"].notna().any():
        out["bbr_mrtt_median_ms"] = float(d["bbr_mrtt_ms"].median())
        # the window beyond PROBE_BW's 2 x bandwidth x min RTT (the model's bandwidth from the
        # pacing rate: gain x bw x 0.99, bbr_pacing_margin_percent): the quantization budget,
        # and in the kernel the ACK-aggregation allowance (bbr_extra_acked) the twin leaves out
        g = d["bbr_pacing_gain"].to_numpy(float)
        one = np.isclose(g, 1.0)
        bdp = d["pacing_bps"].to_numpy(float) / 0.99 * d["bbr_mrtt_ms"].to_numpy(float) / 1e3 / 8 / 1448
        ex = (d["cwnd"].to_numpy(float) - 2 * bdp)[one]
        out["bbr_cwnd_over_2bdp_segs"] = float(np.nanmedian(ex)) if len(ex) else float("nan")
    return out


def _median_per_bin(d: pd.DataFrame, key: str, edges: np.ndarray) -> np.ndarray:
    """The median of `key` over the samples of `d` in each bin of `edges` (NaN where none)."""
    med = np.full(len(edges) - 1, np.nan)
    if len(d) and key in d:
        b = np.searchsorted(edges, d["t"].to_numpy(float), side="right") - 1
        v_all = d[key].to_numpy(float)
        for j in range(len(med)):
            v = v_all[b == j]
            v = v[np.isfinite(v)]
            if len(v):
                med[j] = float(np.median(v))
    return med


def twin_readings(algos: tuple[str, ...], duration: float, warm: float, seed: int, base_rtt_s: float,
                  tbf_burst: Optional[int] = TWIN_TBF_BURST_BYTES, gap: float = PAIR_START_GAP_S) -> dict:
    """The twin's side of a run: the declared twin (``sim_case``, bucket `tbf_burst`) and beside it
    the same twin with phase randomisation at one frame's time at the tbf (docs/fidelity/phase.md's
    rule: a gap that closes there comes from the deterministic twin's phase effects, which flow's
    packet meets the full pfifo, not from the algorithms). Returns ``row`` (cases.csv's twin
    columns: ``sim_*``, ``phase_sim_*``, ``twin_tbf_burst_bytes``, 0 for the serialising twin),
    ``series`` (series.csv's twin columns per BIN_S) and ``samples`` (samples.csv's twin rows)."""
    s = sim_case(algos, duration, seed, base_rtt_s, tbf_burst=tbf_burst, gap=gap)
    p = sim_case(algos, duration, seed, base_rtt_s, PHASE_S, tbf_burst=tbf_burst, gap=gap)
    edges = np.arange(0.0, duration + 1e-9, BIN_S)
    row = {"twin_tbf_burst_bytes": 0 if tbf_burst is None else int(tbf_burst), "sim_drops": s["drops"],
           "sim_timeouts": int(sum(f["stats"]["timeouts"] for f in s["flows"])),
           # RACK-TLP's counters, beside the kernel's kernel_loss_probes (TcpExtTCPLossProbes)
           "sim_loss_probes": int(sum(f["stats"]["tlp_probes"] for f in s["flows"])),
           "sim_loss_probe_recoveries": int(sum(f["stats"]["tlp_recoveries"] for f in s["flows"])),
           "sim_rack_losses": int(sum(f["stats"]["rack_losses"] for f in s["flows"]))}
    series, samples, rtts = {}, [], []
    for i, (sf, pf) in enumerate(zip(s["flows"], p["flows"])):
        a = sf["algo"]
        tag = f"f{i}_{a}"
        sm = sim_samples(sf["trace"], duration, int(sf["stats"]["mss_bytes"]))
        series[f"{tag}_sim_bps"] = sim_rate(sf["trace"], edges)
        series[f"{tag}_simphase_bps"] = sim_rate(pf["trace"], edges)
        series[f"{tag}_sim_srtt_ms"] = _median_per_bin(sm, "srtt_ms", edges)
        keep = [c for c in ("t", "cwnd", "srtt_ms", "pacing_bps", "bbr_mrtt_ms", "bbr_pacing_gain") if c in sm]
        samples.append(sm[keep].assign(flow=i, algo=a, side="sim"))
        after = sm[sm["t"] >= warm]["srtt_ms"].dropna().to_numpy(float)
        rtts.append(after)
        se, sc = slow_start_exit(sm)
        st = sf["stats"]
        row.update({f"{tag}_sim_bps": mean_after(sf["trace"], warm, duration, False),
                    f"{tag}_sim_median_srtt_ms": float(np.median(after)) if len(after) else float("nan"),
                    f"{tag}_sim_median_cwnd": float(sm[sm["t"] >= warm]["cwnd"].median()),
                    f"{tag}_sim_ss_exit_s": se, f"{tag}_sim_ss_exit_cwnd": sc,
                    f"{tag}_sim_retrans_segs": float(st["retransmissions"]), f"{tag}_sim_timeouts": float(st["timeouts"]),
                    **{f"{tag}_sim_{k}": v for k, v in dynamics(sm, warm).items()}})
    all_s = np.concatenate(rtts) if rtts else np.array([])
    row["sim_median_srtt_ms"] = float(np.median(all_s)) if len(all_s) else float("nan")
    rp = [sim_samples(f["trace"], duration, int(f["stats"]["mss_bytes"])) for f in p["flows"]]
    rp = np.concatenate([d[d["t"] >= warm]["srtt_ms"].dropna().to_numpy(float) for d in rp])
    row["phase_sim_median_srtt_ms"] = float(np.median(rp)) if len(rp) else float("nan")
    for i, f in enumerate(p["flows"]):
        row[f"f{i}_{f['algo']}_phase_sim_bps"] = mean_after(f["trace"], warm, duration, False)
    return {"row": row, "series": series, "samples": samples}


def pair_window_ratio(series, algos: tuple[str, str], side: str, lo: float, hi: float) -> float:
    """A pair's first-over-second throughput ratio on `side` ("kernel" or "sim") over the
    ``series``' BIN_S bins wholly inside [lo, hi]: the ratio of the two flows' mean rates, bins
    where either flow has no reading left out. NaN where a flow's column is missing or no bin
    is left."""
    k0, k1 = f"f0_{algos[0]}_{side}_bps", f"f1_{algos[1]}_{side}_bps"
    if k0 not in series or k1 not in series:
        return float("nan")
    t = np.asarray(series["time_s"], float)
    inside = (t >= lo - 1e-9) & (t + BIN_S <= hi + 1e-9)
    f0, f1 = np.asarray(series[k0], float)[inside], np.asarray(series[k1], float)[inside]
    ok = np.isfinite(f0) & np.isfinite(f1)
    return _div(float(f0[ok].mean()), float(f1[ok].mean())) if ok.any() else float("nan")


def late_ratios(series, algos: tuple[str, ...], gap: float, duration: float) -> dict:
    """A pair's first-over-second throughput ratio from LATE_AFTER_SECOND_S after its second
    flow's start to the run's end (``pair_window_ratio``), kernel and twin, and the kernel's
    over the twin's: the claim's reading without the stretch before a bbr flow's first
    PROBE_RTT, where its min RTT is still the one it started with. Empty alone; NaN where the
    run ends before."""
    if len(algos) != 2:
        return {}
    late = gap + LATE_AFTER_SECOND_S
    out = {"late_from_s": late}
    for side in ("kernel", "sim"):
        out[f"{side}_pair_ratio_late"] = pair_window_ratio(series, algos, side, late, duration)
    out["pair_ratio_late"] = _div(out["kernel_pair_ratio_late"], out["sim_pair_ratio_late"])
    return out


def _div(a: float, b: float) -> float:
    return a / b if b > 0 else float("nan")


def ratios(row: dict, algos: tuple[str, ...]) -> dict:
    """The claims' readings of a run from its kernel and twin columns: the median RTTs' ratio
    (kernel over twin, and over the phase-randomised twin); alone the throughputs' ratio, for a
    pair each side's first-over-second throughput ratio and the kernel's over the twin's."""
    out = {"rtt_ratio": row["kernel_median_srtt_ms"] / row["sim_median_srtt_ms"],
           "phase_rtt_ratio": row["kernel_median_srtt_ms"] / row["phase_sim_median_srtt_ms"]}
    tags = [f"f{i}_{a}" for i, a in enumerate(algos)]
    k, s, p = ([float(row[f"{t}_{side}_bps"]) for t in tags] for side in ("kernel", "sim", "phase_sim"))
    if len(algos) == 1:
        out.update(tput_ratio=_div(k[0], s[0]), phase_tput_ratio=_div(k[0], p[0]))
    else:
        rk, rs, rp = _div(k[0], k[1]), _div(s[0], s[1]), _div(p[0], p[1])
        out.update(kernel_pair_ratio=rk, sim_pair_ratio=rs, pair_ratio=_div(rk, rs), phase_sim_pair_ratio=rp,
                   phase_pair_ratio=_div(rk, rp))
    return out


def one_run(tb, out: Path, algos: tuple[str, ...], duration: float, warm: float, seed: int,
            tbf_burst: Optional[int] = TWIN_TBF_BURST_BYTES) -> dict:
    """The kernel run and its twin (seeded `seed`, bucket `tbf_burst`: ``twin_readings``) of one
    case; writes ``series.csv`` (per BIN_S: each flow's throughput and median smoothed RTT, kernel
    and twin side by side, and the phase-randomised twin's throughput) and ``samples.csv`` (every
    100 ms: each flow's cwnd, smoothed RTT, pacing and delivery rate, both sides). Returns the
    run's readings (cases.csv's row)."""
    pings = ping_rtts(tb, "src", "rcv1")
    base = float(np.nanmin(pings)) if pings and np.isfinite(pings).any() else 0.0
    gap = PAIR_START_GAP_S
    k = kernel_case(tb, out, algos, duration, gap)
    tw = twin_readings(algos, duration, warm, seed, base, tbf_burst, gap)
    edges = np.arange(0.0, duration + 1e-9, BIN_S)
    series = {"time_s": edges[:-1]}
    samples = []
    row = {"case": case_name(algos), "seed": seed, "base_rtt_s": base, "pair_start_gap_s": gap,
           "kernel_drops": k["drops"],
           "kernel_errors": "; ".join(k["errors"]), "kernel_cc": ",".join(str(u) for u in k["used"]),
           "kernel_timeouts": k["counters"]["TcpExtTCPTimeouts"],
           "kernel_loss_probes": k["counters"]["TcpExtTCPLossProbes"],
           "kernel_loss_probe_recoveries": k["counters"]["TcpExtTCPLossProbeRecovery"]}
    rtts_k = []
    for i, kf in enumerate(k["flows"]):
        a = kf["algo"]
        tag = f"f{i}_{a}"
        series[f"{tag}_kernel_bps"] = kernel_rate(kf["intervals"], edges)
        ss = kf["ss"]
        if len(ss):
            keep = [c for c in ("t", "cwnd", "ssthresh", "srtt_ms", "minrtt_ms", "pacing_bps", "delivery_bps",
                                "bytes_acked", "bbr_bw_bps", "bbr_mrtt_ms", "bbr_pacing_gain") if c in ss]
            samples.append(ss[keep].assign(flow=i, algo=a, side="kernel"))
        series[f"{tag}_kernel_srtt_ms"] = _median_per_bin(ss, "srtt_ms", edges)
        after_k = ss[(ss["t"] >= warm) & (ss["t"] <= duration)]["srtt_ms"].dropna() if len(ss) else pd.Series(dtype=float)
        rtts_k.append(after_k.to_numpy(float))
        ke, kc = slow_start_exit(ss)
        row.update({f"{tag}_kernel_bps": mean_after(kf["intervals"], warm, duration, True),
                    f"{tag}_kernel_start_s": kf["start_s"], f"{tag}_kernel_first_minrtt_ms": kf["first_minrtt_ms"],
                    f"{tag}_kernel_median_srtt_ms": float(np.median(rtts_k[-1])) if len(rtts_k[-1]) else float("nan"),
                    f"{tag}_kernel_median_cwnd": float(ss[ss["t"] >= warm]["cwnd"].median()) if len(ss) else float("nan"),
                    f"{tag}_kernel_ss_exit_s": ke, f"{tag}_kernel_ss_exit_cwnd": kc,
                    f"{tag}_kernel_retrans_segs": kf["retrans_segs"], f"{tag}_kernel_ss_samples": int(len(ss)),
                    **{f"{tag}_kernel_{key}": v for key, v in dynamics(ss, warm).items()}})
    all_k = np.concatenate(rtts_k) if rtts_k else np.array([])
    row["kernel_median_srtt_ms"] = float(np.median(all_k)) if len(all_k) else float("nan")
    row.update(tw["row"])
    row.update(ratios(row, algos))
    series.update(tw["series"])
    row.update(late_ratios(series, algos, gap, duration))
    pd.DataFrame(series).to_csv(out / "series.csv", index=False)
    samples += tw["samples"]
    if samples:
        pd.concat(samples, ignore_index=True).to_csv(out / "samples.csv", index=False)
    return row


def row_gap(row: dict) -> float:
    """The gap between the clients of a cases.csv row's pair: its ``pair_start_gap_s``, or for a
    row recorded before that column RECORDED_PAIR_START_GAP_S."""
    gap = float(row.get("pair_start_gap_s", float("nan")))
    return gap if np.isfinite(gap) else RECORDED_PAIR_START_GAP_S


def refresh_twins(where: Path, tbf_burst: Optional[int] = TWIN_TBF_BURST_BYTES) -> pd.DataFrame:
    """Recompute the twins of a recorded run in `where` (``cases.csv`` and ``CASE/seed-N/`` as
    run_cases left them) without the testbed: each row's twin (``twin_readings`` from its case,
    seed, recorded ``base_rtt_s`` and ``duration_s``, the warm-up of that form, bucket `tbf_burst`,
    None: the serialising ablation) replaces its twin columns and the ratios, the twin's columns of
    ``series.csv`` and its rows of ``samples.csv``. The kernel's readings are kept as they are.
    The twin's flows start as the row's kernel clients did (``pair_start_gap_s``; rows without
    it, RECORDED_PAIR_START_GAP_S). The late readings (``late_ratios``) are computed from the
    refreshed series, and each flow's first min RTT from the kernel's samples where the row
    lacks it. Writes cases.csv back and returns it."""
    df = pd.read_csv(where / "cases.csv")
    rows = []
    for row in df.to_dict("records"):
        algos = tuple(str(row["case"]).split("+"))
        if not set(algos) <= set(ALGOS):
            raise ValueError(f"{where / 'cases.csv'}: unknown case {row['case']!r}")
        duration = float(row["duration_s"])
        warm = FULL_WARM_S if duration >= FULL_DURATION_S else QUICK_WARM_S
        seed = int(row["seed"])
        gap = row_gap(row)
        tw = twin_readings(algos, duration, warm, seed, float(row["base_rtt_s"]), tbf_burst, gap)
        row.update(tw["row"])
        row.update(ratios(row, algos))
        row["pair_start_gap_s"] = gap
        rows.append(row)
        run = where / case_name(algos) / f"seed-{seed}"
        if (run / "series.csv").exists():
            s = pd.read_csv(run / "series.csv")
            for c, v in tw["series"].items():
                s[c] = v[:len(s)] if len(v) >= len(s) else np.pad(v, (0, len(s) - len(v)), constant_values=np.nan)
            s.to_csv(run / "series.csv", index=False)
            row.update(late_ratios(s, algos, gap, duration))
        if (run / "samples.csv").exists():
            old = pd.read_csv(run / "samples.csv")
            for i, a in enumerate(algos):
                key = f"f{i}_{a}_kernel_first_minrtt_ms"
                if not np.isfinite(float(row.get(key, float("nan")))) and "minrtt_ms" in old:
                    mine = old[(old["side"] == "kernel") & (old["flow"] == i)]
                    row[key] = first_minrtt(mine)
            new = pd.concat([old[old["side"] != "sim"], *tw["samples"]], ignore_index=True)
            new.to_csv(run / "samples.csv", index=False)
    out = pd.DataFrame(rows)
    out.to_csv(where / "cases.csv", index=False)
    return out


# ------------------------------------------------------------------ plot


def case_figure(out: Path, algos: tuple[str, ...], duration: float) -> list[str]:
    """Throughput and smoothed RTT over time of one run of a case, kernel (solid) and twin
    (dashed; its phase-randomised run's throughput dotted), a colour per flow."""
    import matplotlib.pyplot as plt

    s = pd.read_csv(out / "series.csv")
    fig, (a1, a2) = plt.subplots(2, 1, figsize=(6.0, 4.6), dpi=120, sharex=True)
    for i, a in enumerate(algos):
        tag = f"f{i}_{a}"
        col = f"C{i}"
        a1.step(s["time_s"], s[f"{tag}_kernel_bps"] / 1e6, where="post", color=col, lw=1.1, label=f"kernel {a}")
        a1.step(s["time_s"], s[f"{tag}_sim_bps"] / 1e6, where="post", color=col, lw=1.1, ls="--", label=f"sim {a}")
        if f"{tag}_simphase_bps" in s:
            a1.step(s["time_s"], s[f"{tag}_simphase_bps"] / 1e6, where="post", color=col, lw=0.7, ls=":",
                    label=f"sim {a}, phase-randomised")
        a2.plot(s["time_s"] + BIN_S / 2, s[f"{tag}_kernel_srtt_ms"], color=col, lw=1.1)
        a2.plot(s["time_s"] + BIN_S / 2, s[f"{tag}_sim_srtt_ms"], color=col, lw=1.1, ls="--")
    a1.axhline(LINK_BPS / 1e6, color="0.6", lw=0.8, ls=":")
    a1.set_ylabel(f"Mb/s per {BIN_S:g} s")
    a2.set_ylabel("smoothed RTT (ms)")
    a2.set_xlabel("time (s)")
    a2.set_xlim(0, duration)
    for ax in (a1, a2):
        ax.grid(True, alpha=0.3)
        ax.tick_params(labelsize=7)
    a1.legend(fontsize=6, ncol=len(algos), loc="lower right")
    a1.set_title(f"{case_name(algos)}: kernel (solid) and simulator (dashed), {LINK_BPS / 1e6:g} Mb/s tbf, "
                 f"pfifo {QUEUE_PKTS}", fontsize=8)
    fig.tight_layout()
    names = ["rate_rtt.png", "rate_rtt.svg"]
    for n in names:
        fig.savefig(out / n)
    plt.close(fig)
    return names


# ------------------------------------------------------------------ the experiment


def missing(tools: tuple[str, ...] = ()) -> Optional[str]:
    """Why the experiment (and a caller needing `tools` besides) cannot run here, or None."""
    reason = _unavailable()
    if reason:
        return reason
    for tool in ("iperf3", "ss", *tools):
        if shutil.which(tool) is None:
            return f"needs `{tool}` (make setup installs iperf3, iproute2 and tshark with apt)"
    avail = Path("/proc/sys/net/ipv4/tcp_available_congestion_control")
    have = set(avail.read_text().split()) if avail.exists() else set()
    if not set(ALGOS) <= have:
        return f"the kernel lacks congestion control {sorted(set(ALGOS) - have)} (tcp_available_congestion_control)"
    return None


@contextmanager
def testbed(tag: str = "t"):
    """The experiment's testbed, up and prepared (offloads off, no cached TCP metrics in src's
    namespace; reno as every namespace's default congestion control, as every testbed has it,
    ``Testbed._tcp_default``); removed on leaving, whatever happens."""
    from castlab.testbed import Testbed

    with Testbed(topology(), testbed_name(tag), routers="kernel") as tb:
        offloads_off(tb)
        tb.run("src", ["sysctl", "-qw", "net.ipv4.tcp_no_metrics_save=1"])
        yield tb


@contextmanager
def src_capture(tb, pcap: Path, snaplen: int = 128):
    """dumpcap on src's port toward r1 into `pcap` (the first `snaplen` bytes of each frame: data
    departures and ACK arrivals as src's stack sees them; its log beside it) while the block
    runs; it captures before the block starts and is stopped, by its id, whatever happens."""
    cap = tb.spawn("src", ["dumpcap", "-q", "-P", "-s", str(int(snaplen)), "-i", tb.iface("src", "r1"), "-w",
                           str(pcap)], stdout=subprocess.DEVNULL, stderr=open(pcap.with_suffix(".log"), "w"))
    try:
        time.sleep(1.0)  # dumpcap has opened the port
        yield
    finally:
        tb.stop(cap, timeout=10)


def run_cases(out: Path, seed: int, runs: int, duration: float, warm: float, cases=CASES,
              tbf_burst: Optional[int] = TWIN_TBF_BURST_BYTES) -> pd.DataFrame:
    """Every case `runs` times on one testbed (seeds `seed`.. and bucket `tbf_burst` for the
    twins); writes cases.csv."""
    rows = []
    with testbed() as tb:
        for r in range(runs):
            for algos in cases:
                where = out / case_name(algos) / f"seed-{seed + r}"
                rows.append(one_run(tb, where, algos, duration, warm, seed + r, tbf_burst))
                pd.DataFrame(rows).to_csv(out / "cases.csv", index=False)
                time.sleep(0.5)  # the pfifo drains
    return pd.DataFrame(rows)


def quoted(d: pd.DataFrame, cols: list[str]) -> str:
    """The values of `cols` (a ``{kernel,sim}`` pair in a name stands for both) in rows `d`, per
    run, for a claim's explanation: the readings a gap is explained by, with their numbers."""
    names = []
    for c in cols:
        names += [c.replace("{kernel,sim}", side) for side in ("kernel", "sim")] if "{kernel,sim}" in c else [c]
    have = [c for c in names if c in d and d[c].notna().any()]
    if not have:
        return ""
    per_run = lambda c: ", ".join(f"{float(v):.3g}" for v in d[c])  # noqa: E731
    return "; per run: " + "; ".join(f"{c} {per_run(c)}" for c in have)


def claims_for(df: pd.DataFrame) -> list:
    claims = []
    for algos in CASES:
        n = case_name(algos)
        d = df[df["case"] == n]
        if not len(d):
            continue
        # where a gap is read (docs/fidelity/tcp.md says what the full runs showed): the twin
        # with phase randomisation beside the declared one, how often each flow is cut, and for
        # bbr the min-RTT filter and the window above 2 BDP on both sides
        cols = ["phase_pair_ratio" if len(algos) == 2 else "phase_tput_ratio", "phase_rtt_ratio"]
        cols += [f"f{i}_{a}_{{kernel,sim}}_reductions_per_s" for i, a in enumerate(algos)]
        cols += [f"f{i}_bbr_{{kernel,sim}}_{k}" for i, a in enumerate(algos) if a == "bbr"
                 for k in ("bbr_mrtt_median_ms", "bbr_cwnd_over_2bdp_segs")]
        # a pair read again without its second flow's first 10.5 s, and the min RTT each kernel
        # flow started with (its handshake's): the start the pair's set-up makes alike
        if len(algos) == 2:
            cols += ["pair_ratio_late", "f1_" + algos[1] + "_kernel_first_minrtt_ms"]
        where = (f"cases.csv rows {n}: {', '.join(cols)}; {n}/seed-N/series.csv, samples.csv "
                 f"(rate_rtt.png: the first seed){quoted(d, cols)}")
        if len(algos) == 1:
            a = algos[0]
            claims.append(claim_over_seeds(
                in_range, d["tput_ratio"], f"alone-throughput-{a}", f"kernel {a} alone: its mean throughput after the "
                f"warm-up over the twin's ({SIM_VARIANT[a]} with Linux's settings) is within 10 %", *ALONE_TPUT, None,
                "ratio", kind="derived", explanation=where))
            claims.append(claim_over_seeds(
                in_range, d["rtt_ratio"], f"alone-rtt-{a}", f"kernel {a} alone: its median smoothed RTT after the warm-up "
                "(ss -tin) over the twin's is within a factor of 1.5", *ALONE_RTT, None, "ratio", kind="derived",
                explanation=where))
        else:
            a, b = algos
            claims.append(claim_over_seeds(
                in_range, d["pair_ratio"], f"pair-share-{a}-{b}", f"{a} beside {b}: the kernel's {a}/{b} throughput "
                f"ratio after the warm-up over the twin's is within a factor of 1.5", *PAIR_RATIO, None, "ratio",
                kind="derived", explanation=where))
            claims.append(claim_over_seeds(
                in_range, d["rtt_ratio"], f"pair-rtt-{a}-{b}", f"{a} beside {b}: the median smoothed RTT of both flows "
                "after the warm-up, kernel over twin, is within a factor of 1.5", *PAIR_RTT, None, "ratio",
                kind="derived", explanation=where))
    bad = sum(1 for e in df["kernel_errors"] if isinstance(e, str) and e)
    claims.append(at_most("kernel-runs-ok", "every kernel run ran the algorithm asked for and iperf3 reported no error "
                          "(runs that did not)", 0, bad, "runs", kind="sanity", explanation="cases.csv kernel_errors"))
    few = 0
    for _, r in df.iterrows():
        for c in r.index:
            ticks = r.get("duration_s", 0) / SS_PERIOD_S
            if c.endswith("_kernel_ss_samples") and np.isfinite(r[c]) and r[c] < 0.8 * ticks:
                few += 1
    claims.append(at_most("ss-sampled", "every kernel flow was sampled by ss at least 80 % of its 100 ms ticks "
                          "(flows that were not)", 0, few, "flows", kind="sanity",
                          explanation="cases.csv *_kernel_ss_samples"))
    return claims


def twin_description(tbf_burst: Optional[int] = TWIN_TBF_BURST_BYTES) -> str:
    """The twin's links as summary.json states them."""
    if tbf_burst is None:
        neck = (f"r1 - rcv1 serialising at {TWIN_LINK_BPS:.0f} b/s (LINK_BPS x {IP_BYTES}/{FRAME_BYTES}), DropTail "
                f"{QUEUE_PKTS - 1} + 1 on the wire (the ablation: no token bucket)")
    else:
        neck = (f"r1 - rcv1 the testbed's tbf: a token bucket of {int(tbf_burst)} bytes at {LINK_BPS:.0f} b/s "
                f"charging {TBF_OVERHEAD_BYTES} bytes of Ethernet header per packet, over a DropTail queue of "
                f"{QUEUE_PKTS} counting the packet waiting for tokens")
    return (f"src - r1 {VETH_BPS / 1e9:g} Gb/s; {neck}; each link's delay a quarter of the ping's minimum round "
            "trip")


def _gaps(df: pd.DataFrame):
    """The gap between a pair's clients in `df`'s runs: one value, or the sorted values if they
    differ (RECORDED_PAIR_START_GAP_S for rows recorded without the column)."""
    vals = sorted({row_gap(r) for r in df.to_dict("records")})
    return vals[0] if len(vals) == 1 else vals


def result_from(out: Path, df: pd.DataFrame, seed: int, quick: bool,
                tbf_burst: Optional[int] = TWIN_TBF_BURST_BYTES) -> Result:
    """The experiment's result from its cases.csv `df` (a run's, or a refresh's,
    ``refresh_twins``): the claims, the plots of seed `seed`'s runs and the parameters."""
    duration = float(df["duration_s"].iloc[0])
    warm = QUICK_WARM_S if quick else FULL_WARM_S
    seeds = sorted({int(x) for x in df["seed"]})
    files = ["cases.csv"]
    for algos in CASES:
        where = out / case_name(algos) / f"seed-{seed}"
        if (where / "series.csv").exists():
            files += [f"{case_name(algos)}/seed-{seed}/{f}" for f in case_figure(where, algos, duration)]
            files += [f"{case_name(algos)}/seed-{seed}/series.csv", f"{case_name(algos)}/seed-{seed}/samples.csv"]
    claims = claims_for(df)
    params = {"network": "real", "topology": topology().description, "routers": "kernel (tbf + pfifo)",
              "propagation_delay_s": 0.0,
              "no_delay": "this kernel has neither netem nor sch_fq: no propagation delay, the round trip is the "
                          "stacks' latency (ping) plus serialisation and queueing",
              "bottleneck_bps": LINK_BPS, "queue_pkts": QUEUE_PKTS, "tbf_burst_bytes": TBF_BURST_BYTES,
              "duration_s": duration, "warm_up_s": warm,
              "runs": len(seeds), "seeds": seeds, "cases": [case_name(c) for c in CASES],
              "offloads": "TSO, GSO, GRO, checksum and scatter-gather off on src, r1 and rcv1's veths",
              "kernel": "iperf3 -C ALGO -i 0.5 (servers' interval reports for throughput), ss -tin every 100 ms, "
                        "tcp_no_metrics_save=1; a pair's second client launched pair_start_gap_s after the first",
              "pair_start_gap_s": _gaps(df),
              "late_after_second_s": LATE_AFTER_SECOND_S,
              "twin": {"links": twin_description(tbf_burst), "tbf_burst_bytes": tbf_burst,
                       "variants": SIM_VARIANT, "reno_settings": LINUX_SETTINGS, "pair_start_gap_s": _gaps(df)},
              "bounds": {"alone_throughput": ALONE_TPUT, "alone_rtt": ALONE_RTT, "pair_ratio": PAIR_RATIO,
                         "pair_rtt": PAIR_RTT},
              "decided_on": "one run" if quick else f"the mean over {len(seeds)} runs (95 % t interval)",
              "rows": df.to_dict("records")}
    return Result(params, claims, files)


def run_net_tcp_vs_sim(out: Path, seed: int, quick: bool = False, runs: int = FULL_RUNS,
                       tbf_burst: Optional[int] = TWIN_TBF_BURST_BYTES) -> Result:
    """The quick form: every case once for QUICK_DURATION_S. The full form: every case `runs`
    times for FULL_DURATION_S, the claims on the mean over runs. `tbf_burst`: the twin's bucket,
    by default the testbed's (None: the serialising twin, an ablation)."""
    reason = missing()
    if reason:
        return _skip(reason)
    if runs < 1:
        raise ValueError(f"runs: must be at least 1 (got {runs})")
    duration = QUICK_DURATION_S if quick else FULL_DURATION_S
    warm = QUICK_WARM_S if quick else FULL_WARM_S
    n = 1 if quick else runs
    df = run_cases(out, seed, n, duration, warm, tbf_burst=tbf_burst)
    df["duration_s"] = duration
    df.to_csv(out / "cases.csv", index=False)
    return result_from(out, df, seed, quick, tbf_burst)
