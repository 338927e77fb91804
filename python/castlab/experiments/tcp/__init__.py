"""TCP baseline experiments: tcp-fairness, tcp-formula (Reno/NewReno), tcp-cubic, tcp-bbr.

These are the baselines the multicast papers measure against: TCP sharing a dumbbell (the
Rainbow paper's fairness metric, §B.1 eq. 3-4, used in its Fig. 13 scenario B-(iv)) and TCP's
throughput against the formulas LE-SBCC uses (the simplified 1.22·MSS/(RTT·√p) of its §3 and
the Padhye et al. equation of its TFRC module, §4.1). ``scenarios`` builds and runs one
set-up, ``figures`` runs the experiments and decides their claims. tcp-cubic and tcp-bbr check
the simulator's CUBIC against RFC 9438's window curve and its BBR against the pacing-gain cycle,
PROBE_RTT and the queue of Linux's tcp_bbr.c. net-tcp-vs-sim (root, ``net``) runs the kernel's
reno, cubic and bbr on the namespace testbed beside the simulator's on a twin of its bottleneck.
"""

from __future__ import annotations

from castlab.experiments.common import Experiment
from castlab.experiments.figure import experiment
from castlab.experiments.tcp.figures import BBR_FIGURE, CUBIC_FIGURE, FAIRNESS_FIGURE, FORMULA_FIGURE
from castlab.experiments.tcp.net import run_net_tcp_vs_sim

EXPERIMENTS = [
    experiment(FAIRNESS_FIGURE),
    experiment(FORMULA_FIGURE),
    experiment(CUBIC_FIGURE),
    experiment(BBR_FIGURE),
    Experiment("net-tcp-vs-sim", "Linux TCP (reno, cubic, bbr)", "TCP baseline (real network)",
               "kernel reno, cubic and bbr alone and in pairs through a 10 Mb/s tbf + pfifo on the namespace "
               "testbed beside the simulator's on the same bottleneck: throughput and RTT (root, iperf3)",
               run_net_tcp_vs_sim),
]
