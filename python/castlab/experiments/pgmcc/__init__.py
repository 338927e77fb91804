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

from functools import partial

from castlab.experiments.common import Experiment, phase_decided
from castlab.experiments.figure import drive
from castlab.experiments.pgmcc.figures import PGMCC_FIGURE
from castlab.experiments.pgmcc.topology import DUMBBELL, PACKET_BYTES
from castlab.experiments.tcp.scenarios import HEADER_BYTES

#: The settings the draft leaves open that a claim reads: none.
READINGS: dict = {}

#: docs/fidelity/phase.md's overhead: one of the largest packets (TCP's, headers included) at the
#: slowest bottleneck, the dumbbell's.
PHASE_S = (max(PACKET_BYTES, PACKET_BYTES + HEADER_BYTES)) * 8 / DUMBBELL["bottleneck_bps"]

_F = PGMCC_FIGURE
EXPERIMENTS = [Experiment(_F.name, _F.paper, _F.figure, _F.description, phase_decided(partial(drive, _F), PHASE_S))]
