import signal
import sys
from pathlib import Path

import pytest

import castlab

# The tests are grouped in folders (api/, scenario/, protocols/, net/, experiments/); the helpers
# they share (study_fake, browser, protocol_names) stay here and import by name from any group.
sys.path.insert(0, str(Path(__file__).resolve().parent))

# A shell starts a background job's children with SIGINT ignored, and an ignored signal stays
# ignored across exec: Python then installs no KeyboardInterrupt handler, in this process or in
# the processes the tests start, and the tests of Ctrl-C would fail for how the suite was
# launched. Give the suite the handler an interactive start gives it; its children then start
# with the default disposition.
if signal.getsignal(signal.SIGINT) is signal.SIG_IGN:
    signal.signal(signal.SIGINT, signal.default_int_handler)


@pytest.fixture
def line():
    """src --(100 Mb/s)-- r1 --(1 Mb/s, 20 pkts)-- dst"""
    sim = castlab.Simulator(seed=3)
    for n in ("src", "r1", "dst"):
        sim.add_node(n)
    sim.add_link("src", "r1", 100e6, 0.001, queue_limit_pkts=100)
    sim.add_link("r1", "dst", 1e6, 0.010, queue_limit_pkts=20)
    return sim
