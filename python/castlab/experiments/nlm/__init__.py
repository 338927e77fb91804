"""NLM experiments: Nakauchi, Morikawa and Aoyama, *Network-supported Rate Control Mechanism
for Multicast Streaming Media*, §4 (Figures 9-13), each run with NLM and with RLM on the same
set-up. ``topology`` builds Figure 8's network, ``metrics`` reads it, ``figures`` runs the
experiments and decides their claims.
"""

from __future__ import annotations

from castlab.experiments.common import Experiment, banded
from castlab.experiments.nlm import testbed  # noqa: F401  (registers its testbed topology)
from castlab.experiments.nlm.figures import PAPER, run_fig10, run_fig11, run_fig12, run_fig13, run_fig9

# The settings the paper leaves open, declared once for every NLM experiment (the first reading
# of each is the primary; a claim holds only when it holds under every reading):
# - the sources' packet times: the paper's sources are "CBR" and nothing more, so jittered and
#   periodic packet times are both readings it allows, the same for every source of a figure
#   (layers, NLM senders, cross traffic). Primary: jittered (castlab's sources by default).
# - Figure 8's second router (LMR2 an LMR, or a plain router): fig11 and fig13 (figures.py).
SOURCE_READINGS = {"jittered sources": {"jitter": True}, "periodic sources": {"jitter": False}}
SOURCE_SETTING = "the sources' packet times"
# Figures 9 and 11 are phase-sensitive by the rule of docs/fidelity/phase.md (a claim's value at
# its limit moved with phase randomisation on): their claims are decided over phase-randomised
# runs, so their jittered sources also wait up to one bottleneck packet time before leaving.
SOURCE_READINGS_PHASE = {name: {**r, "phase": True} for name, r in SOURCE_READINGS.items()}


def _banded(run, readings=SOURCE_READINGS):
    return banded(run, SOURCE_SETTING, readings)


EXPERIMENTS: list[Experiment] = [
    Experiment("nlm-fig9", PAPER, "Figure 9", "NLM rate control, N = 1, B = 1.5 Mb/s (and RLM on the same set-up)",
               _banded(run_fig9, SOURCE_READINGS_PHASE)),
    Experiment("nlm-fig10", PAPER, "Figure 10", "goodput of NLM and RLM, N = 1, B = 1.6 Mb/s", _banded(run_fig10)),
    Experiment("nlm-fig11", PAPER, "Figure 11", "response to 1.3 Mb/s CBR cross traffic from 90 s, NLM and RLM",
               _banded(run_fig11, SOURCE_READINGS_PHASE)),
    Experiment("nlm-fig12", PAPER, "Figure 12", "fairness of two sessions joining at 20 s and 120 s, NLM and RLM",
               _banded(run_fig12)),
    Experiment("nlm-fig13", PAPER, "Figure 13", "maximum loss rate against N sessions with B = N Mb/s, NLM and RLM",
               _banded(run_fig13)),
]

# The real-network experiments of this paper (root, the namespace testbed; castlab.experiments.net_common).
from castlab.experiments.nlm.net import NLM_PAPER, run_net_nlm

EXPERIMENTS += [
    Experiment("net-nlm", NLM_PAPER, "Figs 9-10 (real)", "NLM with LMRs in castlab's user-space routers against "
               "RLM through plain ones on Fig. 8's set-up, beside the simulated twins (root)", run_net_nlm),
]
