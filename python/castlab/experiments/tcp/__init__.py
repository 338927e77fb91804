"""TCP baseline experiments: tcp-fairness, tcp-formula (Reno/NewReno), tcp-cubic, tcp-bbr.

These are the baselines the multicast papers measure against: TCP sharing a dumbbell (the
Rainbow paper's fairness metric, §B.1 eq. 3-4, used in its Fig. 13 scenario B-(iv)) and TCP's
throughput against the formulas LE-SBCC uses (the simplified 1.22·MSS/(RTT·√p) of its §3 and
the Padhye et al. equation of its TFRC module, §4.1). ``scenarios`` builds and runs one
set-up, ``figures`` runs the experiments and decides their claims. tcp-cubic and tcp-bbr check
the simulator's CUBIC against RFC 9438's window curve and its BBR against the pacing-gain cycle,
PROBE_RTT and the queue of Linux's tcp_bbr.c.
"""

from __future__ import annotations

from castlab.experiments.common import Experiment
from castlab.experiments.figure import experiment
from castlab.experiments.tcp.figures import FAIRNESS_FIGURE, FORMULA_FIGURE, run_bbr, run_cubic

EXPERIMENTS = [
    experiment(FAIRNESS_FIGURE),
    experiment(FORMULA_FIGURE),
    Experiment("tcp-cubic", "RFC 9438 §4", "TCP baseline",
               "one CUBIC flow alone: the window between losses against W_cubic(t), β and C", run_cubic),
    Experiment("tcp-bbr", "Linux tcp_bbr.c (BBR v1)", "TCP baseline",
               "one BBR flow alone: the pacing-gain cycle's sending rates, PROBE_RTT, the queue", run_bbr),
]
