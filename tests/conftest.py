import signal
import subprocess
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


@pytest.fixture
def tree():
    """A factory of the two-leaf tree, ``tree(seed, **simulator_kwargs)``: s --(1.5 Mb/s, 10 ms,
    20 pkts)-- r, then r --(700 kb/s, 10 ms, RED 3/9, w_q 0.02, 40 pkts)-- a and r --(1 Mb/s,
    20 ms, 20 pkts, 2 % random loss a->b)-- b; nodes and links only."""

    def make(seed, **sim_kw):
        sim = castlab.Simulator(seed=seed, **sim_kw)
        for n in ("s", "r", "a", "b"):
            sim.add_node(n)
        sim.add_link("s", "r", 1.5e6, 0.01, queue_limit_pkts=20)
        sim.add_link("r", "a", 700e3, 0.01, queue="red", queue_limit_pkts=40, red_min_th=3, red_max_th=9,
                     red_w_q=0.02)
        sim.add_link("r", "b", 1e6, 0.02, queue_limit_pkts=20, loss_ab=0.02)
        return sim

    return make


@pytest.fixture
def castlab_cli():
    """The ``castlab`` command as a function: ``castlab_cli("list")`` runs ``python -m castlab
    list`` with this interpreter and returns the finished process (returncode, stdout, stderr as
    text); `cwd`, `timeout` (seconds, 300 by default) and `env` as subprocess.run takes them."""

    def run(*args, cwd=None, timeout=300, env=None):
        return subprocess.run([sys.executable, "-m", "castlab", *map(str, args)], capture_output=True, text=True,
                              timeout=timeout, cwd=cwd, env=env)

    return run
