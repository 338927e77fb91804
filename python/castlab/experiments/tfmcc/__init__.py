"""TFMCC (RFC 4654) in the simulator: the properties the RFC states, checked on three set-ups.

``topology`` builds the set-ups as scenarios (a dumbbell shared with TCP, receivers behind
paths of different loss, a star of N receivers), ``figures`` runs them and decides the claims.

The dumbbell is phase-sensitive (docs/fidelity/phase.md: its TCP-friendliness at K = 1 and
K = 8 flows changes verdict with phase randomisation on), so the experiment's claims are decided
over phase-randomised runs with the rule's overhead, one packet at the 4 Mb/s bottleneck; the
deterministic value is given beside each.

RFC 4654 describes no network, so it leaves no setting of these set-ups open to two readings:
``READINGS`` (the paper's one declaration, as every paper package has) is empty. The set-ups
(dumbbell, paths, star) are castlab's own (``topology``); the RED dumbbell is a variant.
"""

from __future__ import annotations

from castlab.experiments.common import Experiment, phase_decided
from castlab.experiments.tcp.scenarios import HEADER_BYTES
from castlab.experiments.tfmcc.figures import run_tfmcc
from castlab.experiments.tfmcc.topology import DUMBBELL, PACKET_BYTES
from castlab.experiments.tfmcc.trap import LINK_BPS as TRAP_LINK_BPS, run_trap

#: The settings RFC 4654 leaves open that a claim reads (setting -> readings, the primary first):
#: none.
READINGS: dict = {}

#: docs/fidelity/phase.md's overhead: one packet (TFMCC's and TCP's, headers included) at the
#: slowest bottleneck, the dumbbell's.
PHASE_S = (PACKET_BYTES + HEADER_BYTES) * 8 / DUMBBELL["bottleneck_bps"]
#: tfmcc-trap's: its largest packet (a CUBIC segment of Linux's 1448 + 52 bytes) at its 1 Mb/s link.
TRAP_PHASE_S = (1448 + 52) * 8 / TRAP_LINK_BPS

EXPERIMENTS = [
    Experiment("tfmcc", "RFC 4654 (TFMCC)", "§1, §3.3-§3.4, §4.5",
               "TFMCC against TCP on a dumbbell and on the slowest receiver's path, the CLR following the "
               "worst receiver, and reports per feedback round as receivers are added",
               phase_decided(run_tfmcc, PHASE_S)),
    Experiment("tfmcc-trap", "RFC 4654 (TFMCC)", "§1, §3.1, §4.3, §5.6 (start-up)",
               "TFMCC started behind a queue one TCP flow (NewReno, CUBIC) has filled, with each suspected cause of "
               "its start-up trap changed alone: start order, initial RTT, first interval, RTT in X_r, merging, "
               "packet size, receive-rate windows",
               phase_decided(run_trap, TRAP_PHASE_S)),
]

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
