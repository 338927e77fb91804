"""NLM experiments: Nakauchi, Morikawa and Aoyama, *Network-supported Rate Control Mechanism
for Multicast Streaming Media*, §4 (Figures 9-13), each run with NLM and with RLM on the same
set-up. ``topology`` builds Figure 8's network, ``metrics`` reads it, ``figures`` runs the
experiments and decides their claims.
"""

from __future__ import annotations

from castlab.experiments.common import Experiment
from castlab.experiments.figure import experiment
from castlab.experiments.nlm import testbed  # noqa: F401  (registers its testbed topology)
from castlab.experiments.nlm.declared import (LMR2_READINGS, LMR2_SETTING, SOURCE_READINGS,  # noqa: F401
                                             SOURCE_SETTING)
from castlab.experiments.nlm.figures import FIG9_PHASE_S, FIG11_PHASE_S, FIGURES, PAPER  # noqa: F401

# The settings the paper leaves open are declared once, in ``declared``; each figure names the
# readings it runs under, and Figures 9 and 11 their phase overhead (``figures``).
EXPERIMENTS: list[Experiment] = [experiment(f) for f in FIGURES]

# The real-network experiments of this paper (root, the namespace testbed; castlab.experiments.net_common).
from castlab.experiments.nlm.net import NLM_PAPER, run_net_nlm

EXPERIMENTS += [
    Experiment("net-nlm", NLM_PAPER, "Figs 9-10 (real)", "NLM with LMRs in castlab's user-space routers against "
               "RLM through plain ones on Fig. 8's set-up, beside the simulated twins (root)", run_net_nlm),
]
