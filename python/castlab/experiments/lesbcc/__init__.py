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
from castlab.experiments.common import Experiment, phase_decided
from castlab.experiments.lesbcc import testbed  # noqa: F401  (registers its testbed topology)
from castlab.experiments.lesbcc.figures import (PAPER, run_fig10, run_fig12, run_fig13, run_fig14, run_fig16,
                                                run_fig19, run_fig20, run_fig21_sim, run_fig6, run_fig7,
                                                run_tfrc_padhye)
from castlab.experiments.lesbcc.topology import FIG5, FIG21, PACKET_BYTES

# The phase-sensitive set-ups (docs/fidelity/phase.md: with phase randomisation on, a paper
# claim's verdict changed or its value moved by more than the rule allows) decide their claims
# over phase-randomised runs; the overhead is one of the largest packets at the slowest
# bottleneck. fig21-sim: a TCP segment (MSS + 40 bytes of headers) at §5.2.1's 1 Mb/s.
PHASE_FIG21 = (FIG21["tcp_mss_bytes"] + 40) * 8 / FIG21["bottleneck_bps"]
# The Fig. 5 experiments: a 560-byte packet (LE-SBCC's, and TCP's 520-byte segments with their
# headers) at the 5 Mb/s bottlenecks.
PHASE_FIG5 = PACKET_BYTES * 8 / FIG5["bottleneck_bps"]

EXPERIMENTS = [
    Experiment("lesbcc-fig6", PAPER, "Fig. 6 (§3.1.1)", "drop-to-zero avoidance on the Fig. 5 topology, with the packet, "
               "LI, LE and reduction counts, at every reading of the delays and LI2LE", run_fig6),
    Experiment("lesbcc-fig7", PAPER, "Fig. 7 (§3.1.2)", "removing LI2LE and/or Max-LPRF: the multicast flow is beaten "
               "down", run_fig7),
    Experiment("lesbcc-fig10", PAPER, "Fig. 10 (§3.1.3)", "Markov chain: p_li / p_le, non-bursty and bursty, at every "
               "reading of N, and a Monte Carlo of the chain (analysis: no simulator)", run_fig10),
    Experiment("lesbcc-fig12", PAPER, "Fig. 12 (§3.1.4), Appendix A", "1 to 10,001 receivers: LEs passed stay at the "
               "worst receiver's (direct drive of the cascade); LI2LE's 1 + p·x LIs per LE", run_fig12),
    Experiment("lesbcc-fig13", PAPER, "Fig. 13 (§3.2)", "TCP friendliness: one / all unicast flows TCP Reno", phase_decided(run_fig13, PHASE_FIG5)),
    Experiment("lesbcc-fig14", PAPER, "Figs. 14-15 (§3.2.1)", "DropTail vs RED: rates and RTT convergence", phase_decided(run_fig14, PHASE_FIG5)),
    Experiment("lesbcc-fig16", PAPER, "Figs. 16-17 (§3.2.2)", "receiver buffers 25/50/75/100, without and with "
               "aggregation", phase_decided(run_fig16, PHASE_FIG5)),
    Experiment("lesbcc-fig19", PAPER, "Fig. 19 (§3.3)", "Fig. 18 tree: no / partial / complete LI aggregation", run_fig19),
    Experiment("lesbcc-fig20", PAPER, "Fig. 20 (§4.2)", "TFRC module vs 16 TCP Reno flows", phase_decided(run_fig20, PHASE_FIG5)),
    Experiment("lesbcc-fig21-sim", PAPER, "Figs. 13(c), 21 (§5.2.1)", "§5's Linux set-up simulated (1 Mb/s, 500 ms, "
               "16 TCP): the twin of net-lesbcc-fig21", phase_decided(run_fig21_sim, PHASE_FIG21)),
    Experiment("lesbcc-tfrc-padhye", PAPER, "§4.1", "the TFRC module's rate against Padhye's equation on a path with "
               "fixed loss", run_tfrc_padhye),
]

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
