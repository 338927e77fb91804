"""Real-network experiments: the papers' protocols as processes
(`castlab net ROLE`) on the namespace testbed (`castlab.testbed`), with kernel bottlenecks, kernel
multicast routing and kernel TCP, each beside a simulation of the same set-up.

- ``net-rlm``: RLM receivers behind real 1.5 Mb/s, 20-packet bottlenecks (RLM's topology (1),
  once per receiver), claims computed as ``rlm-fig8``'s.
- ``net-lesbcc-fig21``: LE-SBCC (AIMD) against 16 kernel TCP flows through one 1 Mb/s
  bottleneck with §5.2.1's 500 ms round trip, as the LE-SBCC paper (Fig. 21) ran it on Linux:
  the router is castlab's user-space router (DropTail queue, delay lines), ``"routers": "user"``.
- ``net-rlm-red``: RLM on topology (2) behind a RED bottleneck in the user router (rlm-red's
  parameters) against DropTail, each beside its simulated twin.
- ``net-vs-sim``: the ``net-rlm`` set-up in the simulator and on the testbed, side by side.
- ``net-lesbcc-openpgm``: LE-SBCC's source over PGM with unmodified OpenPGM receivers.
- ``net-lesbcc-aggregation``: LE-SBCC with NAK aggregation hosted in the user router where four
  receivers' bottlenecks (buffers 25/50/75/100) branch off (Fig. 16's shape), against none, each
  beside its simulated twin.
- ``net-nlm``: NLM's Figs 9/10 set-up (Fig. 8, N = 1) with LMRs in the user routers against RLM
  (ns-2's MMG, as the NLM paper ran it) through plain user routers, each beside its simulated twin.
- ``net-rainbow``: Rainbow over BCFS (BCF routers hosted in castlab's user-space routers)
  delivering a RaptorQ-coded file to three receivers beside a kernel TCP flow.
- ``net-tfmcc-uftp``: castlab's TFMCC and UFTP's (RFC 4654 both) against the same kernel TCP flows.
- ``net-peers``: castlab's schemes, UFTP's TFMCC and NORM-CC, each against kernel TCP (reno, cubic,
  bbr) on one bottleneck, with the simulated twins.

Each paper's experiments live in a module of their own (``rlm``, ``lesbcc``, ``nlm``, ``rainbow``, ``tfmcc``,
``peers``); ``common`` holds what
they share (testbed names, role command lines, process waits, the latency probe).

What the testbed cannot reproduce is recorded in each summary's ``params``: with kernel routers
and without netem (absent on this kernel) there is no propagation delay, only serialisation and queueing; the join and
leave latencies are the testbed's, measured at the start of each run and given to the simulated
twin. Every experiment skips (no claims, a reason in ``params``) where the testbed cannot be built.
"""

from castlab.experiments.common import Experiment
from castlab.experiments.net.common import LESBCC_PAPER, RLM_PAPER, testbed_name
from castlab.experiments.net.lesbcc import run_net_lesbcc_aggregation, run_net_lesbcc_fig21, run_net_lesbcc_openpgm
from castlab.experiments.net.nlm import NLM_PAPER, run_net_nlm
from castlab.experiments.net.rlm import run_net_rlm, run_net_rlm_red, run_net_vs_sim
from castlab.experiments.net.rainbow import PAPER as RAINBOW_PAPER, run_net_rainbow
from castlab.experiments.net.peers import run_net_peers
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
    Experiment("net-nlm", NLM_PAPER, "Figs 9-10 (real)", "NLM with LMRs in castlab's user-space routers against "
               "RLM through plain ones on Fig. 8's set-up, beside the simulated twins (root)", run_net_nlm),
    Experiment("net-rlm-red", RLM_PAPER, "§5 (RED, real)", "RLM on topology (2) behind a RED bottleneck in "
               "castlab's user-space router against DropTail, beside the simulated twins (root)", run_net_rlm_red),
    Experiment("net-lesbcc-aggregation", LESBCC_PAPER, "Figs. 16-17 (real)", "LE-SBCC with NAK aggregation in "
               "castlab's user-space router against none, receivers behind bottlenecks of 25-100 packets, beside the "
               "simulated twins (root)", run_net_lesbcc_aggregation),
    Experiment("net-rainbow", RAINBOW_PAPER, "§IV-A.3, B-(iii) (real)", "Rainbow over BCFS in castlab's user-space "
               "routers delivering a RaptorQ-coded file to three receivers beside a kernel TCP flow (root)",
               run_net_rainbow),
    Experiment("net-tfmcc-uftp", "RFC 4654 (TFMCC)", "§1 (real peer)", "castlab's TFMCC and UFTP's TFMCC each "
               "against one kernel TCP flow (reno, cubic, bbr) through a 1 Mb/s tbf bottleneck, beside the simulated "
               "twin (root, uftp)", run_net_tfmcc_uftp),
    Experiment("net-peers", "RFC 4654 (TFMCC)", "§1 (peers)", "castlab's LE-SBCC (AIMD, TFRC), RLM, RLC and TFMCC, "
               "UFTP's TFMCC and NORM-CC, each against kernel TCP reno, cubic and bbr through one 1 Mb/s tbf "
               "bottleneck, with simulated twins (root; a missing peer's row skipped)", run_net_peers),
]
