"""TFMCC (RFC 4654) in the simulator: the properties the RFC states, checked on three set-ups.

``topology`` builds the set-ups as scenarios (a dumbbell shared with TCP, receivers behind
paths of different loss, a star of N receivers), ``figures`` runs them and decides the claims.
"""

from __future__ import annotations

from castlab.experiments.common import Experiment
from castlab.experiments.tfmcc.figures import run_tfmcc

EXPERIMENTS = [
    Experiment("tfmcc", "RFC 4654 (TFMCC)", "§1, §3.3-§3.4, §4.5",
               "TFMCC against TCP on a dumbbell and on the slowest receiver's path, the CLR following the "
               "worst receiver, and reports per feedback round as receivers are added", run_tfmcc),
]
