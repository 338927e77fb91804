"""WEBRC (Luby and Goyal, RFC 3738) in the simulator: TCP-friendliness on a dumbbell and on each
receiver's path, heterogeneous receivers at different rates, and the target rate following a
path's RTT and loss.

``topology`` builds the set-ups as scenarios, ``figures`` runs them, tabulates and decides.
The RFC describes no network, so it leaves no setting of these set-ups open to two readings:
``READINGS`` (the package's one declaration) is empty; the RFC's own open settings (N, T, the
wave packets' times) are the protocol module's readings (crates/castlab-proto/src/webrc/mod.rs).
The set-ups are castlab's own; the dumbbell is TFMCC's.

The dumbbell is a DropTail bottleneck shared with TCP, phase-sensitive by docs/fidelity/phase.md's
rule as PGMCC's and TFMCC's are on it, so the claims are decided over phase-randomised runs with
the rule's overhead, one packet at the 4 Mb/s bottleneck (declared before the first run); the
deterministic value is given beside each.
"""

from __future__ import annotations

from castlab.experiments.common import Experiment
from castlab.experiments.figure import experiment
from castlab.experiments.webrc.figures import PHASE_S, WEBRC_FIGURE  # noqa: F401

#: The settings the RFC leaves open that a claim reads: none.
READINGS: dict = {}

# The figure declares its phase overhead (``PHASE_S``, docs/fidelity/phase.md).
EXPERIMENTS: list[Experiment] = [experiment(WEBRC_FIGURE)]
