"""PGMCC (Rizzo, SIGCOMM 2000; draft-ietf-rmt-bb-pgmcc-03) in the simulator: TCP-friendliness on
a dumbbell and on the worst receiver's path, and the acker following the worst receiver.

``topology`` builds the set-ups as scenarios, ``figures`` runs them, tabulates and decides.
The draft describes no network, so it leaves no setting of these set-ups open to two readings:
``READINGS`` (the paper's one declaration) is empty. The set-ups are castlab's own; the dumbbell
is TFMCC's.

PGMCC's window is clocked by ACKs like TCP's, not paced, so the experiment runs
deterministically (no phase randomisation, docs/fidelity/phase.md).
"""

from __future__ import annotations

from castlab.experiments.figure import experiment
from castlab.experiments.pgmcc.figures import PGMCC_FIGURE

#: The settings the draft leaves open that a claim reads: none.
READINGS: dict = {}

EXPERIMENTS = [experiment(PGMCC_FIGURE)]
