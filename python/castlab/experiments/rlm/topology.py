"""Figure 7's topologies of the RLM paper, built on one network builder.

The set-up of §4, shared by every experiment here:
- links 1.5 Mb/s with DropTail queues of 20 packets, 1000-byte packets;
- a six-layer CBR source at 32·2^m kb/s (m = 0..5) with the §4 jitter (``add_layered_source``);
- receivers start uniformly on [30, 120] s (drawn from the run's seed), 10 simulated minutes;
- the RLM constants of §4 (the ``add_rlm_receiver`` defaults);
- multicast join and leave latency 0: a join grafts at once and a leave prunes at once, each
  then taking one link delay per hop to travel (ns-2's prune timing is not stated in the paper).

The topologies of Figure 7 are built by :func:`topology1` ... :func:`topology4`, all through
:class:`Net`, and every per-receiver metric comes from :meth:`Net.receiver_table`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Optional

import numpy as np
import pandas as pd

from castlab import Simulator, run_with_progress
from castlab.experiments import streams
from castlab.experiments.rlm.levels import excursions_above_s, modal_level, settle_time_s

LAYER_RATES_BPS = [32e3 * 2**m for m in range(6)]  # §4: 32·2^m kb/s, m = 0..5
LINK_BPS = 1.5e6  # §4: "the link bandwidths are 1.5 Mb/s"
QUEUE_PKTS = 20  # §4: router queue size 20 packets
PACKET_BYTES = 1000  # §4: 1 KB packets
DURATION_S = 600.0  # §4.3: 10 simulated minutes
START_RANGE_S = (30.0, 120.0)  # §4: receivers start uniformly on [30, 120] s
LINK_DELAY_S = 0.010  # §4.3: 10 ms links
WINDOWS_S = (1.0, 10.0, 100.0)  # §4.3: 1, 10 and 100 s measurement windows
JOIN_LATENCY_S = 0.0
LEAVE_LATENCY_S = 0.0
# §5 RED: Floyd & Jacobson's recommended thresholds (min_th 5, max_th 15, max_p 0.1) in the
# same 20-packet buffer. The paper gives no RED parameters; w_q is the one value we scale. RED's
# average forgets with a time constant of about 1/w_q packet arrivals, so a memory of M seconds
# on a link of C b/s carrying s-byte packets is w_q = 1 / (M·C / 8s) (rule fixed before the runs
# that use it). RED's 0.002 is tuned for fast links (500 packets are 2.7 s at 1.5 Mb/s, longer
# than a join-experiment); the intent here is a memory of about 27 ms at 1.5 Mb/s, which is
# five 1000-byte packet times: w_q = 1/5 (0.02 would be a 50-packet, 0.27 s memory).
# RED_WQ_READINGS are run beside it and reported as a band.
RED_MEMORY_S = 0.027
RED_W_Q = 1.0 / round(RED_MEMORY_S * LINK_BPS / (8 * PACKET_BYTES))
RED_PARAMS = {"red_min_th": 5.0, "red_max_th": 15.0, "red_max_p": 0.1, "red_w_q": RED_W_Q}


def cumulative_rate_bps(level: int) -> float:
    return float(sum(LAYER_RATES_BPS[:level]))


def optimal_level(capacity_bps: float) -> int:
    """The highest level whose cumulative rate fits in ``capacity_bps`` (§4.1's optimum)."""
    return max(n for n in range(1, len(LAYER_RATES_BPS) + 1) if n == 1 or cumulative_rate_bps(n) <= capacity_bps)


@dataclass
class Rx:
    agent: int
    node: str
    start_s: float
    optimal: int
    group: str  # which set the receiver belongs to (e.g. "B", "B/2", "pair 3")
    session: int


@dataclass
class Net:
    """A simulation of the §4 set-up: nodes, links with the chosen queue, layered sessions and
    RLM receivers. ``queue`` is "droptail" or "red" (with :data:`RED_PARAMS` unless ``red``
    overrides them)."""

    seed: int
    queue: str = "droptail"
    red: Optional[dict] = None
    # A reading of a setting the paper leaves open (castlab.experiments.rlm.READINGS): "rlm",
    # RlmConfig overrides for every receiver; "leave_latency_s", the multicast leave latency
    reading: Optional[dict] = None
    # Phase randomisation (s) for every sender; None: the process's default, which the driver
    # sets for a phase-sensitive figure's randomised pass (its ``phase_s``, docs/fidelity/phase.md)
    # and `castlab reproduce --phase-overhead` for every run; off otherwise
    phase_overhead: Optional[float] = None
    sim: Simulator = field(init=False)
    rxs: list[Rx] = field(default_factory=list)
    sessions: list[tuple[list[int], int]] = field(default_factory=list)

    def __post_init__(self):
        leave = float((self.reading or {}).get("leave_latency_s", LEAVE_LATENCY_S))
        phase = {} if self.phase_overhead is None else {"phase_overhead": float(self.phase_overhead)}
        self.sim = Simulator(seed=self.seed, join_latency=JOIN_LATENCY_S, leave_latency=leave, **phase)
        # start times: their own stream, so they depend on the seed only
        self._starts = streams.rng(self.seed, "rlm-starts")

    def nodes(self, *names: str) -> None:
        for n in names:
            self.sim.add_node(n)

    def link(self, a: str, b: str, rate_bps: float = LINK_BPS, delay_s: float = LINK_DELAY_S,
             limit_pkts: int = QUEUE_PKTS) -> None:
        kw = {}
        if self.queue == "red":
            kw = {"queue": "red", **RED_PARAMS, **(self.red or {}), "mean_pkt_bytes": PACKET_BYTES}
        self.sim.add_link(a, b, rate_bps, delay_s, queue_limit_pkts=limit_pkts, **kw)

    def session(self, src: str) -> int:
        """Six data groups and a control group rooted at ``src``, and the §4 source there."""
        groups = [self.sim.add_group(src) for _ in LAYER_RATES_BPS]
        control = self.sim.add_group(src)
        self.sim.add_layered_source(src, groups, LAYER_RATES_BPS, packet_size=PACKET_BYTES, jitter=True)
        self.sessions.append((groups, control))
        return len(self.sessions) - 1

    def receiver(self, node: str, session: int, optimal: int, group: str = "", start_s: Optional[float] = None) -> Rx:
        start = float(self._starts.uniform(*START_RANGE_S)) if start_s is None else start_s
        groups, control = self.sessions[session]
        # receiver_table reads the arrival times (its tail rate) and the §4.1 windows (online)
        a = self.sim.add_rlm_receiver(node, groups, control, start=start, record="arrivals",
                                      windows=list(WINDOWS_S), **(self.reading or {}).get("rlm", {}))
        rx = Rx(a, node, start, optimal, group, session)
        self.rxs.append(rx)
        return rx

    def run(self, until: float = DURATION_S, label: str = "") -> None:
        run_with_progress(self.sim, until, label=label)

    def receiver_table(self, windows=WINDOWS_S, tail_from_s: float = 300.0) -> pd.DataFrame:
        """One row per receiver: start, optimum, final level, level held longest over the
        second half of the run, convergence time (s after its
        start), worst-case loss per window, packets received and lost, mean rate over
        [tail_from_s, now], experiments run."""
        rows = []
        now = self.sim.now
        for rx in self.rxs:
            r = self.sim.rlm_records(rx.agent)
            t = r["level_time_ns"] / 1e9
            settle = settle_time_s(t, r["level"], rx.optimal)
            above = excursions_above_s(t, r["level"].astype(int), rx.optimal, settle, now)
            arr = r["arr_time_ns"] / 1e9
            tail = int(np.count_nonzero(arr >= tail_from_s))
            row = {"agent": rx.agent, "node": rx.node, "group": rx.group, "session": rx.session,
                   "start_s": rx.start_s, "optimal": rx.optimal, "final_level": int(r["level"][-1]),
                   "held_level": modal_level(t, r["level"].astype(int), now / 2, now),
                   "convergence_s": settle - rx.start_s, "received": int(r["received"]), "lost": int(r["lost"]),
                   "tail_rate_bps": tail * PACKET_BYTES * 8 / max(now - tail_from_s, 1e-9),
                   "experiments": len(r["exp_start_ns"]),
                   "above_mean_s": float(np.mean(above)) if above else float("nan"), "above_n": len(above)}
            for w in windows:
                row[f"worst_{w:g}s"] = self.sim.rlm_worst_window_loss(rx.agent, w)
            rows.append(row)
        return pd.DataFrame(rows)


# ---------------------------------------------------------------- the topologies of Figure 7


def topology1(seed: int, delay_s: float = LINK_DELAY_S, queue: str = "droptail", red: Optional[dict] = None,
              reading: Optional[dict] = None) -> Net:
    """(1): source S and receiver R on either side of one 1.5 Mb/s bottleneck link."""
    net = Net(seed, queue, red, reading)
    net.nodes("S", "R")
    net.link("S", "R", delay_s=delay_s)
    s = net.session("S")
    net.receiver("R", s, optimal_level(LINK_BPS), "R")
    return net


def topology2(seed: int, n: int, queue: str = "droptail", red: Optional[dict] = None,
              reading: Optional[dict] = None) -> Net:
    """(2): S –bottleneck– X, and n receivers each on its own link from X (all 1.5 Mb/s, 10 ms)."""
    net = Net(seed, queue, red, reading)
    net.nodes("S", "X")
    net.link("S", "X")
    s = net.session("S")
    for i in range(n):
        net.nodes(f"R{i}")
        net.link("X", f"R{i}")
        net.receiver(f"R{i}", s, optimal_level(LINK_BPS), "B")
    return net


def topology3(seed: int, n_high: int, n_low: int, queue: str = "droptail",
              phase_overhead: Optional[float] = None) -> Net:
    """(3): S –B– X; n_high receivers on links from X (rate B); a B/2 link X–Y with n_low
    receivers behind Y. B = 1.5 Mb/s, 10 ms links. Optima: level 5 at B (992 kb/s), level 4
    at B/2 = 750 kb/s (480 kb/s)."""
    net = Net(seed, queue, phase_overhead=phase_overhead)
    net.nodes("S", "X", "Y")
    net.link("S", "X")
    net.link("X", "Y", rate_bps=LINK_BPS / 2)
    s = net.session("S")
    for i in range(n_high):
        net.nodes(f"H{i}")
        net.link("X", f"H{i}")
        net.receiver(f"H{i}", s, optimal_level(LINK_BPS), "B")
    for i in range(n_low):
        net.nodes(f"L{i}")
        net.link("Y", f"L{i}")
        net.receiver(f"L{i}", s, optimal_level(LINK_BPS / 2), "B/2")
    return net


PAIR_SHARE_BPS = LINK_BPS  # topology (4): bottleneck = pairs × 1.5 Mb/s
ACCESS_BPS = 10e6  # topology (4): access links fast enough that only the shared link binds


def topology4_queue_pkts(pairs: int) -> int:
    """§4.3: the queue limit is twice the bandwidth-delay product of the bottleneck; the delay
    is the path's round trip (three 10 ms hops each way)."""
    rtt = 2 * 3 * LINK_DELAY_S
    return max(QUEUE_PKTS, int(round(2 * pairs * PAIR_SHARE_BPS * rtt / (8 * PACKET_BYTES))))


def topology4(seed: int, pairs: int, queue: str = "droptail", reading: Optional[dict] = None) -> Net:
    """(4): ``pairs`` independent sessions S_i → R_i sharing X–Y, whose rate is pairs × 1.5
    Mb/s and whose queue is twice its bandwidth-delay product (§4.3). Access links S_i–X and
    Y–R_i are 10 Mb/s (our choice: with 1.5 Mb/s access links the shared link could never be
    the bottleneck)."""
    net = Net(seed, queue, reading=reading)
    net.nodes("X", "Y")
    net.link("X", "Y", rate_bps=pairs * PAIR_SHARE_BPS, limit_pkts=topology4_queue_pkts(pairs))
    for i in range(pairs):
        net.nodes(f"S{i}", f"R{i}")
        net.link(f"S{i}", "X", rate_bps=ACCESS_BPS)
        net.link("Y", f"R{i}", rate_bps=ACCESS_BPS)
        s = net.session(f"S{i}")
        # the fair share is 1.5 Mb/s: level 5; a pair may reach 6 only at others' expense
        net.receiver(f"R{i}", s, optimal_level(PAIR_SHARE_BPS), f"pair {i}")
    return net
