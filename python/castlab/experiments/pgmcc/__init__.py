"""PGMCC (Rizzo, SIGCOMM 2000; draft-ietf-rmt-bb-pgmcc-03) in the simulator: TCP-friendliness on
a dumbbell and on the worst receiver's path, and the acker following the worst receiver.

``topology`` builds the set-ups as scenarios, ``figures`` runs them, tabulates and decides.
The draft describes no network, so it leaves no setting of these set-ups open to two readings:
``READINGS`` (the paper's one declaration) is empty. The set-ups are castlab's own; the dumbbell
is TFMCC's.

The dumbbell is phase-sensitive by docs/fidelity/phase.md's rule (with one packet time of
randomisation the ratio against one NewReno flow moves from 0.61 to 0.79, more than its
distance to the band's end), so the claims are decided over phase-randomised runs with the
rule's overhead, one packet at the 4 Mb/s bottleneck; the deterministic value is given beside
each.
"""

from __future__ import annotations

from castlab.experiments.common import Experiment
from castlab.experiments.figure import experiment
from castlab.experiments.pgmcc.figures import PGMCC_FIGURE, PHASE_S  # noqa: F401

#: The settings the draft leaves open that a claim reads: none.
READINGS: dict = {}

# The figure declares its phase overhead (``PHASE_S``, docs/fidelity/phase.md).
EXPERIMENTS: list[Experiment] = [experiment(PGMCC_FIGURE)]
