"""The set-up shared by every Rainbow experiment, and the network builder.

The set-up shared by every experiment (§IV-A.2, §IV-B.2):
- 512-byte data packets; a receiver stops after 2,000 packets (the fountain's symbolic mode:
  2,000 distinct symbols);
- each receiver (session) starts at a uniformly random time in [0, 5] s, drawn from the seed;
- every router is a RED gateway with a 10-packet queue. The paper gives no RED thresholds: the
  primary reading (``READINGS``, the package's one declaration) is ns-2's defaults of the time
  (thresh 5, maxthresh 15, linterm 10 i.e. max_p 0.1, q_weight 0.002) in the 10-packet buffer,
  on every link (hosts' interfaces included);
- every node runs a BCF router (``add_bcf_routers``) with the ``BcfConfig`` defaults;
- Rainbow receivers with the ``RainbowConfig`` defaults except the TRQ-loss rule, which is the
  declared primary reading (the paper's literal rule, one later answer) unless an experiment
  passes a variant;
- the paper's Fig. 5 and 8 hold link delays its text does not: ours are in each experiment's
  parameters (``LINKS_*``) and in ``summary.json``.

Averages run over ``seeds`` runs (a parameter of every experiment); ``reproduce`` uses the
paper's counts, 100 in §IV-A and 50 in §IV-B (5 files for ``bcfs-file``), with RLC beside Rainbow
in B-(i) .. B-(iv), the RED and delay readings and the RLC ablations; ``quick`` runs 1-3.
"""

from __future__ import annotations

from typing import Optional

from castlab import Simulator
from castlab._native import config_defaults
from castlab.experiments import streams
from castlab.experiments.rainbow.declared import FAST_DELAYS, READINGS, RED_THRESHOLDS, TRQ_LOSS

PACKET_BYTES = 512  # §IV-A.2 and §IV-B.2
NEEDED = 2000  # §IV-A.2: "a receiver stops sending TRQs after receiving 2000 packets"
START_RANGE_S = (0.0, 5.0)  # §IV-A.2, §IV-B.2
QUEUE_PKTS = 10  # §IV-A.2: "All routers are RED gateways with a queue size of 10 packets"

def red_queue(thresholds: tuple[float, float]) -> dict:
    """A RED gateway with the 10-packet queue and the given (min_th, max_th), ns-2's other defaults."""
    return {"queue": "red", "queue_limit_pkts": QUEUE_PKTS, "red_min_th": float(thresholds[0]),
            "red_max_th": float(thresholds[1]), "red_max_p": 0.1, "red_w_q": 0.002, "mean_pkt_bytes": PACKET_BYTES}


RED = red_queue(READINGS[RED_THRESHOLDS].value)  # every link's queue: the primary RED reading
#: The receivers' TRQ-loss rule: the primary reading (``RainbowConfig`` overrides).
TRQ_RULE = dict(READINGS[TRQ_LOSS].value)
FAST_BPS = 10e6  # "fast" links (source access, receivers' access where not the bottleneck)
TCP_MSS = PACKET_BYTES - 40  # TCP segments are 512 bytes on the wire too (40-byte header)
# The paper ran ns-2's NewReno; ns-2 of 1999 floored the RTO at two 100 ms ticks (0.2 s), and
# so does the Rainbow receivers' TRQ timer here. castlab's TcpConfig default is RFC 6298's 1 s.
TCP_MIN_RTO_S = 0.2
# The paper's TCP is ns-2's NewReno of 1999, before Limited Transmit (RFC 3042, 2001): ns-2's
# `singledup_` became 1 only on 2001-11-28 (its ns-default.tcl says so). castlab's TcpConfig has
# it on by default (RFC 5681 §3.2, ns-2.35), so the Rainbow experiments turn it off. Decided on
# the dates, not on the results (docs/fidelity/rainbow.md gives the effect).
TCP_LIMITED_TRANSMIT = False


class Net:
    """One simulation: nodes, RED links, BCF routers everywhere, fountain sources and Rainbow
    receivers. Call :meth:`finish_build` before adding agents."""

    def __init__(self, seed: int, rainbow_kw: Optional[dict] = None, queue: Optional[dict] = None,
                 phase_s: Optional[float] = None):
        # phase_s: the run's phase randomisation (None: the process default, castlab.simulator)
        self.sim = Simulator(seed=seed) if phase_s is None else Simulator(seed=seed, phase_overhead=float(phase_s))
        self.rng = streams.rng(seed, "rainbow-net")
        self.nodes: set[str] = set()
        self.rainbow_kw = {**TRQ_RULE, **(rainbow_kw or {})}
        self.queue = RED if queue is None else queue  # every link's queue (an ablation may replace RED)
        self.receivers: list[dict] = []

    def node(self, name: str) -> str:
        if name not in self.nodes:
            self.sim.add_node(name)
            self.nodes.add(name)
        return name

    def link(self, a: str, b: str, bps: float, delay_s: float) -> tuple[int, int]:
        return self.sim.add_link(self.node(a), self.node(b), bps, delay_s, **self.queue)

    def finish_build(self) -> None:
        self.sim.add_bcf_routers()

    def source(self, node: str, **kw) -> int:
        return self.sim.add_fountain_source(node, packet_bytes=PACKET_BYTES, **kw)

    def receiver(self, node: str, source: int, label: str, start: Optional[float] = None, **kw) -> int:
        if start is None:
            start = float(self.rng.uniform(*START_RANGE_S))
        a = self.sim.add_rainbow_receiver(node, source, start=start, needed_packets=NEEDED, **{**self.rainbow_kw, **kw})
        self.receivers.append({"agent": a, "node": node, "label": label, "start_s": start})
        return a

    def records(self) -> list[dict]:
        return [{**r, **self.sim.rainbow_records(r["agent"])} for r in self.receivers]

    def rlc_session(self, src_node: str, start: float = 0.0, **rlc_kw) -> list[int]:
        """An RLC sender on `src_node` (the Rainbow paper's RLC set-up, `config_defaults("rlc")`,
        overridable); returns its layers' groups for :meth:`rlc_receiver`."""
        layers = int(rlc_kw.get("layers", config_defaults("rlc")["layers"]))
        groups = [self.sim.add_group(src_node) for _ in range(layers)]
        self.sim.add_rlc_sender(src_node, groups, 1, start=start, **rlc_kw)
        return groups

    def rlc_receiver(self, node: str, groups: list[int], start: Optional[float] = None, **rlc_kw) -> int:
        if start is None:
            start = float(self.rng.uniform(*START_RANGE_S))
        return self.sim.add_rlc_receiver(node, groups, 1, start=start, **rlc_kw)


# ------------------------------------------------------------------------------------------
# rainbow-a1: scenario A-(i)
# ------------------------------------------------------------------------------------------

# Fig. 5 (A-(i)): one shared up-link of 400 kb/s, a 256 kb/s down-link (R1) and four fast
# down-links "with different transmission delay" (R2..R5). The fast rate and the other delays are
# ours; the fast delays are the declared primary reading (``READINGS``).
LINKS_A1 = {"source_bps": FAST_BPS, "source_delay_s": 0.005, "uplink_bps": 400e3, "uplink_delay_s": 0.020,
            "slow_bps": 256e3, "slow_delay_s": 0.010, "fast_bps": 1e6,
            "fast_delays_s": list(READINGS[FAST_DELAYS].value)}


# ------------------------------------------------------------------------------------------
# rainbow-table1: scenario A-(ii)
# ------------------------------------------------------------------------------------------

# Fig. 5 (A-(ii)): backbone L1 shared by two clusters of five receivers, each cluster behind a
# 256 kb/s down-link. Delays and the receivers' access links are ours.
LINKS_T1 = {"source_bps": FAST_BPS, "source_delay_s": 0.005, "l1_bps": [1e6, 500e3, 250e3], "l1_delay_s": 0.020,
            "cluster_bps": 256e3, "cluster_delay_s": 0.010, "access_bps": FAST_BPS,
            "access_delays_s": [0.002, 0.004, 0.006, 0.008, 0.010]}


# ------------------------------------------------------------------------------------------
# rainbow-b1: scenario B-(i)
# ------------------------------------------------------------------------------------------

# Fig. 8 (B-(i)): N homogeneous receivers; "the shared up-link is narrower than a down-link for
# each receiver". Rates and delays are ours.
LINKS_B1 = {"source_bps": FAST_BPS, "source_delay_s": 0.005, "shared_bps": 500e3, "shared_delay_s": 0.020,
            "down_bps": 1e6, "down_delay_s": 0.010}


# ------------------------------------------------------------------------------------------
# rainbow-b2: scenario B-(ii)
# ------------------------------------------------------------------------------------------

LINKS_B2 = {"source_bps": 100e6, "source_delay_s": 0.005, "r0_bps": 512e3, "down_delay_s": 0.010}


# ------------------------------------------------------------------------------------------
# rainbow-b3 and rainbow-b4: Rainbow against TCP NewReno
# ------------------------------------------------------------------------------------------

LINKS_TCP = {"access_bps": FAST_BPS, "access_delay_s": 0.005, "shared_delay_s": 0.020}
