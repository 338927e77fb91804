"""Figure 8 of the NLM paper (§4.1) as a simulator set-up, with NLM or RLM on it.

The set-up of §4.1 (Figure 8), shared by every experiment here:
- N single-source single-receiver sessions S_i -> LMR1 -> LMR2 -> R_i; the bottleneck
  LMR1 -> LMR2 runs at B Mb/s; every link has 10 ms of delay and an output queue of 20 packets
  (DropTail);
- five CBR layers of 100, 100, 200, 400, 800 kb/s, 1024-byte packets, 10 simulated minutes;
  the paper says only "CBR", so whether the sources' packet times carry jitter (the RLM §4 law)
  is open: ``jitter`` sets it for every source of the run alike, layers and cross traffic.
  Exactly periodic sources lock into fixed phases with each other and the bottleneck (Floyd and
  Jacobson 1992), so without jitter every sender's packets wait a random time of up to one
  bottleneck packet time before leaving (the simulator's phase randomisation, their remedy);
  jittered sources already draw their phases, and take the process's phase randomisation:
  the driver's randomised pass of a figure the phase rule found phase-sensitive (its
  ``phase_s``, Figures 9 and 11) or ``castlab reproduce --phase-overhead``;
- NLM with Table 2's parameters (``castlab._native.config_defaults("nlm")``), LMR1 and LMR2 both LMRs;
- RLM configured as the RLM the paper ran: the NLM authors used ns, whose RLM is McCanne's
  ``MMG`` (ns-2.35, ``rlm_param`` as shipped), so the RLM side is castlab's receiver with
  :data:`NS2_MMG_RLM`, one group per layer and no IGMP leave delay (join and leave latency 0).

Our choices where the paper gives none: the access links S_i - LMR1 and LMR2 - R_i run at
10 Mb/s (only the shared link is a bottleneck); loss and rates are counted in 1 s bins.

Loss is counted as §4.1 does for NLM: at the bottleneck's output queue (LMR1 -> LMR2), per
session, the packets its DropTail queue dropped over those offered to it after the LMR's
filters (a loss meter on that channel; the same meter on the plain router for RLM). Rates are
what left that queue (offered minus dropped), per session.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Optional

import numpy as np

from castlab import Simulator, run_with_progress
from castlab.simulator import default_phase_overhead

LAYER_RATES_BPS = [100e3, 100e3, 200e3, 400e3, 800e3]  # §4.1
PACKET_BYTES = 1024  # §4.1
QUEUE_PKTS = 20  # §4.1: output queue of each LMR
LINK_DELAY_S = 0.010  # §4.1
DURATION_S = 600.0  # §4.1: 10 minutes
ACCESS_BPS = 10e6  # our choice: only the shared link binds
BIN_S = 1.0  # our choice: loss and rates per second
CROSS_FLOW = 999

# The RLM of the NLM paper's comparison (§4: "RLM", run in ns with a 25 % loss threshold, §5):
# ns-2.35's MMG receiver, its rlm_param as shipped, expressed in castlab's RlmConfig. Where it
# differs from castlab's defaults (the RLM paper's reading):
# - beta 0.75 against §4's 2/3 (rlm_param(beta));
# - T_max a fixed 60 s (rlm_param(max)) against 600 s scaled with the group size;
# - the detection timer T_D + 1.5 sigma_D in S, H and D (set_TD_timer_conservative: 8 s at the
#   start, against §4's k2 = 2, 9 s) and T_D + (N/2 + 1.5) sigma_D in M at level N
#   (set_TD_timer_wait);
# - the loss rate of M's "L > T" test is lost / (lost + received) since M was entered, judged
#   once 10 packets have arrived (exceed_loss_thresh), against castlab's moving average;
# - the join-timer keeps running in H, M and D and is re-armed after a drop
#   (tests/ns2/rlm.tcl's rearm=1, the run docs/fidelity/nlm.md compares with);
# - a drop on the loss rate in M does not back off the dropped level's join-timer.
# What castlab's Config does not express and stays castlab's: an experiment counts as in
# progress for one detection timer (k1 T_D + k2 sigma_D, 8 s here) where MMG's is-recent uses
# T_D + 2 sigma_D (9 s); MMG's peg-backoff (a backoff raises every higher level's timer to at
# least the backed-off one); MMG's check that the current layer is getting packets before an
# experiment (raising T_D to 1.2 times the wait when not); and MMG's entering M only when its own
# level was added recently (castlab: when its own experiment runs under a higher one).
NS2_MMG_RLM = {"beta": 0.75, "t_max": 60.0, "scale_t_max": False, "k2": 1.5, "k2_m_per_level": 0.5,
               "loss_ratio_in_m": True, "loss_ratio_min_packets": 10, "join_timer_outside_steady": True,
               "backoff_on_loss_rate_drop": False}


def cumulative_bps(level: int) -> float:
    return float(sum(LAYER_RATES_BPS[:level]))


def optimal_level(capacity_bps: float) -> int:
    return max(n for n in range(1, len(LAYER_RATES_BPS) + 1) if n == 1 or cumulative_bps(n) <= capacity_bps)


def slot_s(bottleneck_bps: float) -> float:
    """One packet time at the bottleneck: the phase randomisation of periodic sources, and the
    phase rule's overhead for a phase-sensitive figure (docs/fidelity/phase.md)."""
    return PACKET_BYTES * 8 / bottleneck_bps


@dataclass
class Fig8:
    """Figure 8's topology with ``n`` sessions, run with ``proto`` ("nlm" or "rlm")."""

    proto: str
    seed: int
    n: int
    bottleneck_bps: float
    starts: list[float]
    cross: Optional[tuple[float, float]] = None  # (start s, rate b/s) of CBR cross traffic
    config: Optional[dict] = None  # NLM parameters to override (None: Table 2)
    # Whether the router at the far end of the bottleneck is an LMR too (our reading of "each LMR"
    # in §4.1; the text names only LMR1). False makes it a plain router: a measurement, never a claim.
    lmr2: bool = True
    # RLM receiver settings over NS2_MMG_RLM (RlmConfig fields, record="arrivals" for
    # cross-checks); rlm_base=None gives castlab's own defaults (the RLM paper's reading) instead
    rlm: Optional[dict] = None
    rlm_base: Optional[dict] = field(default_factory=lambda: dict(NS2_MMG_RLM))
    # The loss meter's bin (s); measures read it in bins of any whole multiple (default BIN_S)
    meter_bin_s: float = BIN_S
    # Every source's packet times (layers, NLM sender, cross traffic) with the RLM §4 jitter
    # (True) or exactly periodic (False): one reading for the whole run
    jitter: bool = True
    sim: Simulator = field(init=False)
    bott: int = field(init=False)
    senders: list[int] = field(default_factory=list)
    receivers: list[int] = field(default_factory=list)

    def __post_init__(self):
        # periodic sources: phase randomisation of up to one bottleneck packet time (module doc);
        # jittered sources take the process's default (off unless the driver's randomised pass
        # of a phase-sensitive figure or `castlab reproduce --phase-overhead` sets it)
        overhead = slot_s(self.bottleneck_bps) if not self.jitter else default_phase_overhead()
        sim = Simulator(seed=self.seed, join_latency=0.0, leave_latency=0.0, phase_overhead=overhead)
        self.sim = sim
        sim.add_node("LMR1")
        sim.add_node("LMR2")
        self.bott, _ = sim.add_link("LMR1", "LMR2", self.bottleneck_bps, LINK_DELAY_S, queue_limit_pkts=QUEUE_PKTS)
        for i in range(self.n):
            s, r = f"S{i}", f"R{i}"
            sim.add_node(s)
            sim.add_node(r)
            sim.add_link(s, "LMR1", ACCESS_BPS, LINK_DELAY_S, queue_limit_pkts=QUEUE_PKTS)
            sim.add_link("LMR2", r, ACCESS_BPS, LINK_DELAY_S, queue_limit_pkts=QUEUE_PKTS)
            if self.proto == "nlm":
                g = sim.add_group(s)
                self.senders.append(sim.add_nlm_sender(s, g, LAYER_RATES_BPS, packet_size=PACKET_BYTES, flow=i,
                                                       jitter=self.jitter, **(self.config or {})))
                self.receivers.append(sim.add_nlm_receiver(r, g, layers=len(LAYER_RATES_BPS), start=self.starts[i],
                                                           **(self.config or {})))
            else:
                gs = [sim.add_group(s) for _ in LAYER_RATES_BPS]
                ctl = sim.add_group(s)
                self.senders.append(sim.add_layered_source(s, gs, LAYER_RATES_BPS, packet_size=PACKET_BYTES, flow=i,
                                                           jitter=self.jitter))
                self.receivers.append(sim.add_rlm_receiver(r, gs, ctl, start=self.starts[i],
                                                           **{**(self.rlm_base or {}), **(self.rlm or {})}))
        if self.cross is not None:
            sim.add_node("X")
            sim.add_node("Y")
            sim.add_link("X", "LMR1", ACCESS_BPS, LINK_DELAY_S, queue_limit_pkts=QUEUE_PKTS)
            sim.add_link("LMR2", "Y", ACCESS_BPS, LINK_DELAY_S, queue_limit_pkts=QUEUE_PKTS)
            sim.add_sink("Y", port=9)
            sim.add_cbr("X", "Y", 9, self.cross[1], packet_size=PACKET_BYTES, flow=CROSS_FLOW, start=self.cross[0],
                        jitter=self.jitter)
        if self.proto == "nlm":
            sim.attach_lmr("LMR1", meter_channel=self.bott, meter_bin=self.meter_bin_s,
                           meter_layers=len(LAYER_RATES_BPS), **(self.config or {}))
            if self.lmr2:
                sim.attach_lmr("LMR2", **(self.config or {}))
        else:
            sim.attach_loss_meter("LMR1", self.bott, bin=self.meter_bin_s, layers=len(LAYER_RATES_BPS))

    def run(self, until: float, label: str) -> None:
        run_with_progress(self.sim, until, label=label)

    # ------------------------------------------------------------------ measurements

    def _flow(self, flow: int, until: float, bin_s: float = BIN_S) -> tuple[np.ndarray, np.ndarray]:
        """(offered, dropped) per bin of ``bin_s`` (a whole multiple of the meter's bin) and layer
        for a flow, padded to ``until``."""
        k = int(round(bin_s / self.meter_bin_s))
        if k < 1 or abs(k * self.meter_bin_s - bin_s) > 1e-9:
            raise ValueError(f"bin_s {bin_s} is not a whole multiple of the meter's {self.meter_bin_s} s bin")
        nb = int(np.ceil(until / bin_s))
        f = self.sim.loss_meter("LMR1")["flows"].get(flow)
        shape = (nb * k, len(LAYER_RATES_BPS))
        if f is None:
            return np.zeros((nb, shape[1])), np.zeros((nb, shape[1]))
        out = []
        for key in ("passed", "dropped"):
            a = np.zeros(shape)
            v = f[key][: nb * k]
            a[: len(v)] = v
            out.append(a.reshape(nb, k, shape[1]).sum(1))
        return out[0], out[1]

    def loss(self, flow: int, until: float, bin_s: float = BIN_S) -> np.ndarray:
        """Loss rate per bin (NaN where nothing was offered)."""
        p, d = self._flow(flow, until, bin_s)
        tot = p.sum(1)
        with np.errstate(invalid="ignore", divide="ignore"):
            return np.where(tot > 0, d.sum(1) / tot, np.nan)

    def rate_bps(self, flow: int, until: float, bin_s: float = BIN_S) -> np.ndarray:
        """What left the bottleneck queue per bin, b/s."""
        p, d = self._flow(flow, until, bin_s)
        return (p - d).sum(1) * PACKET_BYTES * 8 / bin_s

    def goodput_bps(self, flow: int, until: float, max_loss: float = 0.2, bin_s: float = BIN_S) -> np.ndarray:
        """§4.2: the layers received with under 20 % loss in order from the base layer."""
        p, d = self._flow(flow, until, bin_s)
        out = np.zeros(len(p))
        for b in range(len(p)):
            for m in range(p.shape[1]):
                if p[b, m] == 0 or d[b, m] / p[b, m] >= max_loss:
                    break
                out[b] += (p[b, m] - d[b, m]) * PACKET_BYTES * 8 / bin_s
        return out

    def level_steps(self, i: int, until: float) -> tuple[np.ndarray, np.ndarray]:
        """The session's number of layers over time: RLM's subscription level; NLM's L_cur at
        the bottleneck interface of LMR1."""
        if self.proto == "rlm":
            r = self.sim.rlm_records(self.receivers[i])
            t, lv = r["level_time_ns"] / 1e9, r["level"].astype(int)
        else:
            r = self.sim.lmr_records("LMR1")
            g = self.group(i)
            sel = (r["lcur_oif"] == self.bott) & (r["lcur_group"] == g)
            t, lv = r["lcur_time_ns"][sel] / 1e9, r["lcur_new"][sel].astype(int)
        t = np.concatenate([[0.0], t, [until]])
        lv = np.concatenate([[0], lv, [lv[-1] if len(lv) else 0]])
        return t, lv

    def group(self, i: int) -> int:
        return i  # NLM: one group per session, created in session order

    def level_at(self, i: int, times: np.ndarray, until: float) -> np.ndarray:
        t, lv = self.level_steps(i, until)
        idx = np.searchsorted(t, times, side="right") - 1
        return lv[np.clip(idx, 0, len(lv) - 1)]
