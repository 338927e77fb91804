"""BCFS and Rainbow experiments: Yano and McCanne, *The Breadcrumb Forwarding Service and the
Digital Fountain Rainbow*, UCB/CSD-99-1068, §IV-A (scenarios A-(i), A-(ii)) and the Rainbow
parts of §IV-B (B-(i) .. B-(iv)), plus the real-mode fountain (``bcfs-file``).

``READINGS`` (below) declares, in this one place, every setting the paper leaves open, its
primary reading (chosen from the paper's text, first) and the other readings the paper allows
(sensitivity), each with the sentence or reason behind it; ``VARIANTS`` the set-ups the paper
does not use that the experiments report beside it. Every experiment of the paper takes its
readings from here (docs/fidelity/README.md's accounting rule).

``topology`` holds the set-up every scenario shares and the network builder, ``scenarios`` one
run of each scenario, ``metrics`` what is read from the runs (eq. 1's overhead, rates, sharing),
``figures`` the experiments: seeds, CSVs, plots and claims.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class Reading:
    """One reading of an open setting: what the experiments pass (``value``) and why the paper
    allows it (``why``: its sentence, or the reason)."""

    value: Any
    why: str


@dataclass(frozen=True)
class Setting:
    """An open setting: its readings, the primary first."""

    what: str
    readings: dict = field(default_factory=dict)

    @property
    def primary(self) -> str:
        return next(iter(self.readings))

    @property
    def value(self) -> Any:
        """The primary reading's value."""
        return self.readings[self.primary].value

    def values(self) -> dict:
        """reading -> value, the primary first."""
        return {k: r.value for k, r in self.readings.items()}


TRQ_LOSS = "the TRQ-loss rule"
FAST_DELAYS = "Fig. 5's fast delays"
RED_THRESHOLDS = "the RED thresholds"

# Declared from the paper's text before the runs that decide its claims (never from results).
READINGS: dict[str, Setting] = {
    TRQ_LOSS: Setting(
        "answers to later TRQs after which an outstanding TRQ is lost (RainbowConfig.reorder_threshold)",
        {"1 later answer": Reading(
            {"reorder_threshold": 1},
            "§III-C: 'We can also detect packet loss when a later TRQ is replied before an earlier TRQ for "
            "another label is still waiting for a reply': one later reply is the rule as written")}),
    FAST_DELAYS: Setting(
        "one-way delays of A-(i)'s four fast down-links, s",
        {"5/10/20/40 ms": Reading(
            [0.005, 0.010, 0.020, 0.040],
            "§IV-A.2: 'each link has different transmission delay' and §IV-A.3: the fast receivers reach "
            "their rate 'after different increase rate in slow start phase because of bandwidth and delay "
            "difference'; the set-up the experiment ran from its first commit, four distinct delays, the "
            "widest relative spread of the readings"),
         "5/10/15/20 ms": Reading([0.005, 0.010, 0.015, 0.020], "four distinct delays, a tighter spread"),
         "2/4/6/8 ms": Reading([0.002, 0.004, 0.006, 0.008], "four distinct delays, LAN-like"),
         "10/20/30/40 ms": Reading([0.010, 0.020, 0.030, 0.040], "four distinct delays, evenly spaced")}),
    RED_THRESHOLDS: Setting(
        "min/max thresholds of the RED gateways' 10-packet queues, packets",
        {"5/15": Reading(
            (5.0, 15.0),
            "§IV: 'We implemented the BCFS network service and Rainbow/Digital Fountain on the network "
            "simulator ns-2' and §IV-A.2: 'All routers are RED gateways with a queue size of 10 packets', "
            "with no thresholds: ns-2's defaults of the time (thresh_ 5, maxthresh_ 15, linterm_ 10, "
            "q_weight_ 0.002) are what such a run gets"),
         "3/9": Reading((3.0, 9.0), "min_th a third of the 10-packet buffer, max_th = 3·min_th (Floyd's rule "
                        "of thumb): RED that drops early in that buffer"),
         "2/6": Reading((2.0, 6.0), "min_th a fifth of the buffer, max_th = 3·min_th")}),
}

# Set-ups the paper does not use, reported beside its claims as kind ``variant``.
VARIANTS: dict[str, Reading] = {
    "TRQ loss after 3 later answers": Reading(
        {"reorder_threshold": 3},
        "TCP's duplicate-ACK threshold ('the window control algorithm mirrors that in TCP', §III-C); the "
        "Rust default, chosen with A-(i)'s result in view, so not a reading of the paper's rule"),
    "equal 10 ms fast delays": Reading(
        [0.010, 0.010, 0.010, 0.010], "not 'different transmission delay': reported, not a reading"),
    "DropTail": Reading({"queue": "droptail"}, "not a RED gateway: reported beside the RED readings"),
}


def declared(*settings: str) -> dict:
    """What an experiment's ``params`` record of the settings it reads: each one's primary
    reading and value and the readings declared for it (``READINGS``)."""
    return {s: {"primary": READINGS[s].primary, "value": READINGS[s].value, "readings": list(READINGS[s].readings)}
            for s in settings}


from castlab.experiments.common import Experiment, phase_decided  # noqa: E402  (READINGS first: the modules read it)
from castlab.experiments.rainbow.figures import (PAPER, run_a1_with_ablation, run_b1, run_b2, run_b3, run_b4, run_file,
                                                 run_table1)
from castlab.experiments.rainbow import testbed  # noqa: F401  (registers its testbed topology)
from castlab.experiments.rainbow.topology import LINKS_A1, LINKS_B1, LINKS_B2, LINKS_T1, PACKET_BYTES


def _slot_s(bps: float) -> float:
    """docs/fidelity/phase.md's overhead: one packet (every Rainbow, RLC and TCP packet here is
    PACKET_BYTES on the wire) at the experiment's slowest bottleneck."""
    return PACKET_BYTES * 8 / bps


# The phase-sensitive experiments (docs/fidelity/phase.md's table: a paper claim's verdict or
# value moved with phase randomisation on): their claims are decided over phase-randomised runs.
PHASE_A1 = _slot_s(LINKS_A1["slow_bps"])  # the 256 kb/s down-link
PHASE_T1 = _slot_s(min(min(LINKS_T1["l1_bps"]), LINKS_T1["cluster_bps"]))  # the 250 kb/s backbone reading
PHASE_B1 = _slot_s(LINKS_B1["shared_bps"])  # the shared 500 kb/s link
PHASE_B2 = _slot_s(LINKS_B2["r0_bps"])  # the narrowest receiver, 512 kb/s
# B-(iii) sweeps its one bottleneck from 128 to 512 kb/s: each point's runs are randomised by one
# packet at that point's link (scenarios.tcp_share_run); PHASE_B3 only switches randomisation on
PHASE_B3 = _slot_s(128e3)

EXPERIMENTS = [
    Experiment("rainbow-a1", PAPER, "Fig. 6 (scenario A-(i))",
               "shared 400 kb/s up-link, four fast and one 256 kb/s down-link: rates, overhead, sharing",
               phase_decided(run_a1_with_ablation, PHASE_A1)),
    Experiment("rainbow-table1", PAPER, "Table 1 (scenario A-(ii))",
               "two clusters of five behind 256 kb/s down-links, backbone 1 Mb/s / 500 / 250 kb/s",
               phase_decided(run_table1, PHASE_T1)),
    Experiment("rainbow-b1", PAPER, "Fig. 9(a) (scenario B-(i))",
               "N homogeneous receivers behind one shared link: overhead (eq. 1) against N",
               phase_decided(run_b1, PHASE_B1)),
    Experiment("rainbow-b2", PAPER, "Fig. 11(a) (scenario B-(ii))",
               "13 receivers at 2^(αn)·512 kb/s: link utilisation (eq. 2) against α",
               phase_decided(run_b2, PHASE_B2)),
    Experiment("rainbow-b3", PAPER, "Fig. 12 (scenario B-(iii))",
               "one Rainbow receiver and one NewReno flow on 128-512 kb/s: fairness, rate ratio, loss",
               phase_decided(run_b3, PHASE_B3)),
    Experiment("rainbow-b4", PAPER, "Fig. 13 (scenario B-(iv))",
               "N Rainbow and N NewReno sessions on 1 Mb/s, 2N = 4..16: fairness, rate ratio, loss", run_b4),
    Experiment("bcfs-file", PAPER, "§III-A (digital fountain, real mode)",
               "a RaptorQ-encoded file over Rainbow to heterogeneous receivers: every copy identical", run_file),
]
