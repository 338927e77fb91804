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

from castlab.experiments.lesbcc.topology import FIG5_RTT112, FIG5_RTT280, PACKET_BYTES

# The declaration comes before the experiments' import below: ``figures`` reads it from this
# package while the package is being imported.
READINGS: dict[str, dict[str, tuple]] = {
    # name -> (what the experiments pass, the sentence or reason)
    "LI2LE": {
        "window": ("window", "§2.1: 'If a new LI arrives from the receiver after a period SRTT + 2σ of T_LastPassed, "
                   "it is converted into an LE and passed, and the timestamp T_LastPassed is updated to the current "
                   "time. Else the LIs are filtered.' Appendix A's LI2LEfilter() is the same test. Primary: it is "
                   "the filter the paper specifies (LesbccConfig's default)."),
        "slot": ("slot", "§1 and §2.1: 'An LE is a binary number defined every RTT per receiver which is 1 when one "
                 "or more LIs are generated in that RTT by the receiver, and is 0 otherwise'; §3.1.3's chain counts "
                 "LEs per RTT round, and §3.1.4 divides the worst receiver's 600 LIs by the chain's 1.2 "
                 "(li2le_reading = 'slot': rounds of SRTT on one source-wide clock)."),
    },
    "Fig. 5's delays": {
        "56 ms": ({}, "§3.1.1: 'The buffer size (125 pkts) is roughly twice the bandwidth times fixed delays': "
                  "125 × 560 × 8 b = 2 × 5 Mb/s (the bottleneck) × 56 ms, the fixed delays read as the fixed round "
                  "trip (5 / 13 / 10 ms per hop). Primary: castlab's reading of the sentence since the first pass."),
        "112 ms": (FIG5_RTT112, "the same sentence with the fixed delays read as the one-way path delay (56 ms one "
                   "way): the buffer is then one bandwidth × round trip, a fixed RTT of 112 ms."),
        "280 ms": (FIG5_RTT280, "the same sentence with the bandwidth read as the 1 Mb/s fair rate of the sentence "
                   "before it ('The fair rate for all flows is therefore 1 Mbps'): 2 × 1 Mb/s × 280 ms."),
    },
    "§5's packet size": {
        "560 B": (PACKET_BYTES, "§5.2.1: 'we used the topology in simulation (Figure 5) with the bandwidths and "
                  "delays changed', so the rest of Fig. 5's set-up carries over, and §3.1.1 gives it: 'The packet "
                  "size is 560 bytes.' §5 names no other size."),
    },
    "the chain's N": {
        "N=500": (500, "§3.1.3: 'We did a Matlab analysis to numerically solve the chain for different large N's'; "
                  "primary: castlab's reading of 'large', above the 75-234 packets one Fig. 5 flow sends per round "
                  "trip at its 6 Mb/s access rate."),
        "N=100": (100, "the same sentence: one Fig. 5 flow's packets per fixed round trip (about 75-234)."),
        "N=200": (200, "the same sentence: the top of that range."),
        "N=1000": (1000, "the same sentence: twice the primary."),
    },
}

# Values considered for an open setting and not readings of the paper, with the reason.
NOT_READINGS: dict[str, dict[str, str]] = {
    "Fig. 5's delays": {
        "500 ms": "§5.2.1's testbed round trip. The same sentence says the testbed changed Fig. 5's delays ('with the "
                  "bandwidths and delays changed'), and 2 × 5 Mb/s × 500 ms is 9 times the 125-packet buffer, so it "
                  "reads no sentence about Fig. 5.",
    },
    "§5's packet size": {
        "1460 B": "TCP's Ethernet segment on the testbed. No sentence of §5 gives LE-SBCC this size; §3's equal sizes "
                  "are §3's 560 bytes.",
    },
}


def readings(setting: str) -> dict:
    """The readings of one open setting, name -> value, the primary first."""
    return {name: value for name, (value, _) in READINGS[setting].items()}


def primary(setting: str) -> str:
    """The primary reading's name of one open setting."""
    return next(iter(READINGS[setting]))


from castlab.experiments.common import Experiment, phase_decided
from castlab.experiments.lesbcc import testbed  # noqa: F401  (registers its testbed topology)
from castlab.experiments.lesbcc.figures import (PAPER, run_fig10, run_fig12, run_fig13, run_fig14, run_fig16,
                                                run_fig19, run_fig20, run_fig21_sim, run_fig6, run_fig7,
                                                run_tfrc_padhye)
from castlab.experiments.lesbcc.topology import FIG5, FIG21

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
