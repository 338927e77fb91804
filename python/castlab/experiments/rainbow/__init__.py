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
from castlab.experiments.common import Experiment
from castlab.experiments.figure import experiment
from castlab.experiments.rainbow.figures import (FIGURES, PAPER, PHASE_A1, PHASE_B1, PHASE_B2, PHASE_B3,  # noqa: F401
                                                 PHASE_T1)
from castlab.experiments.rainbow import testbed  # noqa: F401  (registers its testbed topology)

# Each figure declares its phase overhead (``figures``), its readings come from ``declared``.
EXPERIMENTS: list[Experiment] = [experiment(f) for f in FIGURES]

# The real-network experiments of this paper (root, the namespace testbed; castlab.experiments.net_common).
from castlab.experiments.rainbow.net import PAPER as RAINBOW_PAPER, run_net_rainbow

EXPERIMENTS += [
    Experiment("net-rainbow", RAINBOW_PAPER, "§IV-A.3, B-(iii) (real)", "Rainbow over BCFS in castlab's user-space "
               "routers delivering a RaptorQ-coded file to three receivers beside a kernel TCP flow (root)",
               run_net_rainbow),
]
