"""RLM experiments: McCanne, Jacobson and Vetterli, *Receiver-driven Layered
Multicast*, SIGCOMM 1996, §4 (Figures 8-13) and §5 (RED).

``topology`` builds Figure 7's topologies and reads each receiver (with ``levels``), ``metrics``
holds the readings taken from the runs (knees, the best packing, worst-case loss), ``figures``
the experiments: seeds, CSVs, plots and claims.
"""

from __future__ import annotations

from castlab.experiments.common import Experiment
from castlab.experiments.figure import experiment
from castlab.experiments.rlm import testbed  # noqa: F401  (registers its testbed topology)
from castlab.experiments.rlm.declared import (DETECTION_READINGS, JOIN_TIMER_READINGS,  # noqa: F401
                                              LEAVE_READINGS, RED_WQ_READINGS)
from castlab.experiments.rlm.figures import FIG11_PHASE_S, FIGURES, PAPER  # noqa: F401

# The settings the paper leaves open are declared once, in ``declared``; each figure names the
# readings it runs under, and Figure 11 its phase overhead (``figures``).
EXPERIMENTS: list[Experiment] = [experiment(f) for f in FIGURES]

# The real-network experiments of this paper (root, the namespace testbed; castlab.experiments.net_common).
from castlab.experiments.net_common import RLM_PAPER
from castlab.experiments.rlm.net import run_net_rlm, run_net_rlm_red, run_net_vs_sim

EXPERIMENTS += [
    Experiment("net-rlm", RLM_PAPER, "Fig. 8 (real)", "RLM receivers behind real tbf bottlenecks on the namespace "
               "testbed (root)", run_net_rlm),
    Experiment("net-vs-sim", RLM_PAPER, "Fig. 8 (real vs sim)", "the net-rlm set-up on the testbed and in the "
               "simulator, side by side (root)", run_net_vs_sim),
    Experiment("net-rlm-red", RLM_PAPER, "§5 (RED, real)", "RLM on topology (2) behind a RED bottleneck in "
               "castlab's user-space router against DropTail, beside the simulated twins (root)", run_net_rlm_red),
]
