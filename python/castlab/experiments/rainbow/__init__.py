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

from castlab.experiments.rainbow.declared import (FAST_DELAYS, READINGS, RED_THRESHOLDS, TRQ_LOSS,  # noqa: F401
                                                 VARIANTS, Reading, Setting, declared)
from castlab.experiments.common import Experiment, phase_decided
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

# The real-network experiments of this paper (root, the namespace testbed; castlab.experiments.net_common).
from castlab.experiments.rainbow.net import PAPER as RAINBOW_PAPER, run_net_rainbow

EXPERIMENTS += [
    Experiment("net-rainbow", RAINBOW_PAPER, "§IV-A.3, B-(iii) (real)", "Rainbow over BCFS in castlab's user-space "
               "routers delivering a RaptorQ-coded file to three receivers beside a kernel TCP flow (root)",
               run_net_rainbow),
]
