"""TFMCC (RFC 4654) in the simulator: the properties the RFC states, checked on three set-ups.

``topology`` builds the set-ups as scenarios (a dumbbell shared with TCP, receivers behind
paths of different loss, a star of N receivers), ``figures`` holds the experiment as a ``Figure``
(cases, measure, table, claims, plot) and ``trap`` the start-up experiment as another.
``scale`` (tfmcc-scale) counts reports per feedback round and follows the CLR with 10^2 to 10^5
receivers behind heterogeneous links.

The dumbbell is phase-sensitive (docs/fidelity/phase.md: its TCP-friendliness at K = 1 and
K = 8 flows changes verdict with phase randomisation on), so the experiment's claims are decided
over phase-randomised runs with the rule's overhead, one packet at the 4 Mb/s bottleneck; the
deterministic value is given beside each.

``READINGS`` (the paper's one declaration, as every paper package has) comes from ``declared``:
the receive-rate window (§4.3.4), whose one reading is the RFC as written, k RTTs of the
receiver's own R; every TFMCC experiment runs it (TfmccConfig's default), and the windows over
max(R, R_max) are an ablation shown beside where they explain a result (tfmcc-trap, tfmcc-scale),
never a reading. RFC 4654 describes no network: the set-ups (dumbbell, paths, star) are
castlab's own (``topology``); the RED dumbbell is a variant.
"""

from __future__ import annotations

from castlab.experiments.common import Experiment
from castlab.experiments.figure import experiment
from castlab.experiments.tfmcc.declared import declared_readings
from castlab.experiments.tfmcc.figures import PHASE_S, TFMCC_FIGURE  # noqa: F401
from castlab.experiments.tfmcc.scale import EXPERIMENT as SCALE_EXPERIMENT
from castlab.experiments.tfmcc.trap import PHASE_S as TRAP_PHASE_S, TRAP_FIGURE  # noqa: F401

#: The settings RFC 4654 leaves open that a claim reads (setting -> readings, the primary first).
READINGS: dict = declared_readings()

# Each figure declares its phase overhead (``PHASE_S``, ``TRAP_PHASE_S``: one of its largest
# packets at its slowest bottleneck, docs/fidelity/phase.md).
# tfmcc-scale: no shared queue and no loaded link, not phase-sensitive (scale.py's docstring)
EXPERIMENTS: list[Experiment] = [experiment(TFMCC_FIGURE), experiment(TRAP_FIGURE), SCALE_EXPERIMENT]

# The real-network experiments of this paper (root, the namespace testbed; castlab.experiments.net_common).
from castlab.experiments.tfmcc.net import run_net_tfmcc_uftp
from castlab.experiments.tfmcc.peers import run_net_peers

EXPERIMENTS += [
    Experiment("net-tfmcc-uftp", "RFC 4654 (TFMCC)", "§1 (real peer)", "castlab's TFMCC and UFTP's TFMCC each "
               "against one kernel TCP flow (reno, cubic, bbr) through a 1 Mb/s tbf bottleneck, each start order "
               "(the TFMCC or TCP 10 s first), beside the simulated twin (root, uftp)", run_net_tfmcc_uftp),
    Experiment("net-peers", "RFC 4654 (TFMCC)", "§1 (peers)", "castlab's LE-SBCC (AIMD, TFRC), RLM, RLC and TFMCC, "
               "UFTP's TFMCC and NORM-CC, each against kernel TCP reno, cubic and bbr through one 1 Mb/s tbf "
               "bottleneck, each start order (the scheme or TCP 10 s first), with simulated twins (root; a missing "
               "peer's row skipped)", run_net_peers),
]
