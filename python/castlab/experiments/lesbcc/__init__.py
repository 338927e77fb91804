"""LE-SBCC experiments: Thapliyal, Sidhartha, Li, Kalyanaraman, *LE-SBCC: Loss-Event
Oriented Source-based Multicast Congestion Control*, §3 (Figures 6-19), §4 (Figure 20 and the TFRC
module against Padhye's equation) and §5.2.1 (Figures 13(c), 21 simulated: ``lesbcc-fig21-sim``,
the twin of the testbed's ``net-lesbcc-fig21``).

``topology`` holds the paper's set-ups (Fig. 5, Fig. 18, §5.2.1's Linux network, the TFRC path),
``scenarios`` one run of each, ``markov`` §3.1.3's Markov chain, ``metrics`` what is read from
the runs, ``figures`` the experiments: seeds, readings, CSVs, plots and claims.

:data:`READINGS` is the one declaration of the settings the paper leaves open (the accounting
rule, ``castlab.claims``): for each, the primary reading first and then every other reading the
paper allows, each with the paper's sentence or the reason that supports it. Every experiment
takes its readings from it (``figures`` imports it; a test checks the experiments' params
against it), and a claim holds only when it holds at every reading of every setting its value
depends on. :data:`NOT_READINGS` lists the values considered and left out, with the reason.
"""

from __future__ import annotations

from castlab.experiments.lesbcc.declared import NOT_READINGS, READINGS, primary, readings  # noqa: F401
from castlab.experiments.common import Experiment
from castlab.experiments.figure import experiment
from castlab.experiments.lesbcc import testbed  # noqa: F401  (registers its testbed topology)
from castlab.experiments.lesbcc.figures import FIGURES, PAPER, PHASE_FIG5, PHASE_FIG21  # noqa: F401

# Each figure declares its cases over the readings of ``READINGS`` and, when phase-sensitive,
# its phase overhead (``figures``).
EXPERIMENTS: list[Experiment] = [experiment(f) for f in FIGURES]

# The real-network experiments of this paper (root, the namespace testbed; castlab.experiments.net_common).
from castlab.experiments.net_common import LESBCC_PAPER
from castlab.experiments.lesbcc.net import run_net_lesbcc_aggregation, run_net_lesbcc_fig21, run_net_lesbcc_openpgm

EXPERIMENTS += [
    Experiment("net-lesbcc-fig21", LESBCC_PAPER, "Fig. 21", "LE-SBCC (AIMD) against 16 kernel TCP flows through a "
               "1 Mb/s bottleneck with a 500 ms round trip in castlab's router (root)", run_net_lesbcc_fig21),
    Experiment("net-lesbcc-openpgm", LESBCC_PAPER, "§1, §5.2.1 (real receivers)", "LE-SBCC's source over PGM with "
               "four unmodified OpenPGM (ZeroMQ epgm) receivers and 16 kernel TCP flows, beside castlab's receivers "
               "and OpenPGM's fixed-rate sender (root, python3-zmq)", run_net_lesbcc_openpgm),
    Experiment("net-lesbcc-aggregation", LESBCC_PAPER, "Figs. 16-17 (real)", "LE-SBCC with NAK aggregation in "
               "castlab's user-space router against none, receivers behind bottlenecks of 25-100 packets, beside the "
               "simulated twins (root)", run_net_lesbcc_aggregation),
]
