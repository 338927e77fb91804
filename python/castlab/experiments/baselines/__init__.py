"""``baselines``: the six multicast congestion-control schemes castlab has (TFMCC and PGMCC
single-rate; RLM, RLC, FLID-DL and WEBRC multi-rate) compared on one simulator, on the same
dumbbell and heterogeneous tree, against the same TCPs (Reno, CUBIC, BBR as Linux runs them),
with the same metrics: share, loss, rate over time, fairness among receivers.

``topology`` builds the set-ups as scenarios, ``figures`` runs them, tabulates and decides;
``net`` is the real-network part, ``net-baselines`` (root).
No source describes this comparison, so it leaves no setting open to two readings: ``READINGS``
is empty. The schemes' own readings are declared in their protocol modules.

Phase: the set-ups share DropTail bottlenecks with TCP, which makes them phase-sensitive by
docs/fidelity/phase.md's rule (TFMCC's and PGMCC's dumbbell are), so, declared before the first
run, the claims are decided over phase-randomised runs with the rule's overhead per set-up
(``topology.PHASE_S``), the deterministic value beside each.
"""

from __future__ import annotations

from castlab.experiments.baselines.figures import BASELINES_FIGURE
from castlab.experiments.baselines.net import run_net_baselines
from castlab.experiments.common import Experiment
from castlab.experiments.figure import experiment

#: The settings this comparison leaves open that a claim reads: none.
READINGS: dict = {}

EXPERIMENTS = [
    experiment(BASELINES_FIGURE),
    Experiment("net-baselines", "castlab: TFMCC, PGMCC, RLM, RLC, FLID-DL, WEBRC", "comparison (testbed)",
               "baselines' real-network rows: the six schemes' castlab net roles on a namespace testbed (1 Mb/s tbf) "
               "against one kernel reno, cubic and bbr flow, with simulated twins (root)", run_net_baselines),
]
