"""Real-network experiments: the papers' protocols as processes
(`castlab net ROLE`) on the namespace testbed (`castlab.testbed`), with kernel bottlenecks, kernel
multicast routing and kernel TCP, each beside a simulation of the same set-up.

- ``net-rlm``: RLM receivers behind real 1.5 Mb/s, 20-packet bottlenecks (RLM's topology (1),
  once per receiver), claims computed as ``rlm-fig8``'s.
- ``net-lesbcc-fig21``: LE-SBCC (AIMD) against 16 kernel TCP flows through one 1 Mb/s
  bottleneck with §5.2.1's 500 ms round trip, as the LE-SBCC paper (Fig. 21) ran it on Linux:
  the router is castlab's user-space router (DropTail queue, delay lines), ``"routers": "user"``.
- ``net-vs-sim``: the ``net-rlm`` set-up in the simulator and on the testbed, side by side.
- ``net-lesbcc-openpgm``: LE-SBCC's source over PGM with unmodified OpenPGM receivers.
- ``net-tfmcc-uftp``: castlab's TFMCC and UFTP's (RFC 4654 both) against the same kernel TCP flows.
- ``net-peers``: castlab's schemes, UFTP's TFMCC and NORM-CC, each against kernel TCP (reno, cubic,
  bbr) on one bottleneck, with the simulated twins.

Each paper's experiments live in a module of their own (``rlm``, ``lesbcc``, ``tfmcc``, ``peers``); ``common`` holds what
they share (testbed names, role command lines, process waits, the latency probe).

What the testbed cannot reproduce is recorded in each summary's ``params``: with kernel routers
and without netem (absent on this kernel) there is no propagation delay, only serialisation and queueing; the join and
leave latencies are the testbed's, measured at the start of each run and given to the simulated
twin. Every experiment skips (no claims, a reason in ``params``) where the testbed cannot be built.
"""

from castlab.experiments.common import Experiment
from castlab.experiments.net.common import LESBCC_PAPER, RLM_PAPER, testbed_name
from castlab.experiments.net.lesbcc import run_net_lesbcc_fig21, run_net_lesbcc_openpgm
from castlab.experiments.net.peers import run_net_peers
from castlab.experiments.net.rlm import run_net_rlm, run_net_vs_sim
from castlab.experiments.net.tfmcc import run_net_tfmcc_uftp

__all__ = ["EXPERIMENTS", "testbed_name"]

EXPERIMENTS = [
    Experiment("net-rlm", RLM_PAPER, "Fig. 8 (real)", "RLM receivers behind real tbf bottlenecks on the namespace "
               "testbed (root)", run_net_rlm),
    Experiment("net-lesbcc-fig21", LESBCC_PAPER, "Fig. 21", "LE-SBCC (AIMD) against 16 kernel TCP flows through a "
               "1 Mb/s bottleneck with a 500 ms round trip in castlab's router (root)", run_net_lesbcc_fig21),
    Experiment("net-vs-sim", RLM_PAPER, "Fig. 8 (real vs sim)", "the net-rlm set-up on the testbed and in the "
               "simulator, side by side (root)", run_net_vs_sim),
    Experiment("net-lesbcc-openpgm", LESBCC_PAPER, "§1, §5.2.1 (real receivers)", "LE-SBCC's source over PGM with "
               "four unmodified OpenPGM (ZeroMQ epgm) receivers and 16 kernel TCP flows, beside castlab's receivers "
               "and OpenPGM's fixed-rate sender (root, python3-zmq)", run_net_lesbcc_openpgm),
    Experiment("net-tfmcc-uftp", "RFC 4654 (TFMCC)", "§1 (real peer)", "castlab's TFMCC and UFTP's TFMCC each "
               "against one kernel TCP flow (reno, cubic, bbr) through a 1 Mb/s tbf bottleneck, beside the simulated "
               "twin (root, uftp)", run_net_tfmcc_uftp),
    Experiment("net-peers", "RFC 4654 (TFMCC)", "§1 (peers)", "castlab's LE-SBCC (AIMD, TFRC), RLM, RLC and TFMCC, "
               "UFTP's TFMCC and NORM-CC, each against kernel TCP reno, cubic and bbr through one 1 Mb/s tbf "
               "bottleneck, with simulated twins (root; a missing peer's row skipped)", run_net_peers),
]
