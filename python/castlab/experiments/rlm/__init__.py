"""RLM experiments: McCanne, Jacobson and Vetterli, *Receiver-driven Layered
Multicast*, SIGCOMM 1996, §4 (Figures 8-13) and §5 (RED).

``topology`` builds Figure 7's topologies and reads each receiver (with ``levels``), ``metrics``
holds the readings taken from the runs (knees, the best packing, worst-case loss), ``figures``
the experiments: seeds, CSVs, plots and claims.
"""

from __future__ import annotations

from castlab.experiments.common import Experiment
from castlab.experiments.rlm.figures import (PAPER, run_fig10, run_fig11, run_fig12, run_fig13, run_fig8, run_fig9,
                                             run_red)

EXPERIMENTS: list[Experiment] = [
    Experiment("rlm-fig8", PAPER, "Figure 8", "RLM subscription level over time, topology (1), 10 ms", run_fig8),
    Experiment("rlm-fig9", PAPER, "Figure 9", "worst-case loss (1/10/100 s windows) against link latency", run_fig9),
    Experiment("rlm-fig10", PAPER, "Figure 10", "worst-case loss against session size, topology (2)", run_fig10),
    Experiment("rlm-fig11", PAPER, "Figure 11", "convergence time of each receiver against session size", run_fig11),
    Experiment("rlm-fig12", PAPER, "Figure 12", "worst-case loss with receivers at B and B/2, topology (3)", run_fig12),
    Experiment("rlm-fig13", PAPER, "Figure 13", "independent pairs sharing a scaled bottleneck, topology (4)",
               run_fig13),
    Experiment("rlm-red", PAPER, "§5 (RED)", "RED instead of DropTail on topology (2): loss improves", run_red),
]
