"""FLID-DL (Byers, Horn, Luby, Mitzenmacher, Shaver: NGC 2000; IEEE JSAC 2002) in the simulator:
TCP-friendliness on a dumbbell, the reaction to a capacity fall with and without IGMP leave
latency (dynamic layering's point), and receivers at different levels behind different last
hops.

``topology`` builds the set-ups as scenarios, ``figures`` runs them, tabulates and decides.
The paper's text could not be read here, so no setting of these set-ups is taken from it:
``READINGS`` (the paper's one declaration) is empty; the protocol's own readings (the increase
probabilities, the slot mechanics) are declared in crates/castlab-proto/src/flid/mod.rs. The
set-ups are castlab's own; the dumbbell is TFMCC's and PGMCC's.

Phase: declared before the first run, the claims are decided over phase-randomised runs with
docs/fidelity/phase.md's overhead, one of the largest packets (TCP's 1000 B segment with its
headers) at the slowest bottleneck (1 Mb/s, set-ups B and C); the deterministic value is given
beside each.
"""

from __future__ import annotations

from castlab.experiments.common import Experiment
from castlab.experiments.figure import experiment
from castlab.experiments.flid.figures import FLID_FIGURE, PHASE_S  # noqa: F401

#: The settings the paper leaves open that a claim reads: none declared (see the docstring).
READINGS: dict = {}

# The figure declares its phase overhead (``PHASE_S``, docs/fidelity/phase.md).
EXPERIMENTS: list[Experiment] = [experiment(FLID_FIGURE)]
