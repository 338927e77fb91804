import pytest

import castlab


@pytest.fixture
def line():
    """src --(100 Mb/s)-- r1 --(1 Mb/s, 20 pkts)-- dst"""
    sim = castlab.Simulator(seed=3)
    for n in ("src", "r1", "dst"):
        sim.add_node(n)
    sim.add_link("src", "r1", 100e6, 0.001, queue_limit_pkts=100)
    sim.add_link("r1", "dst", 1e6, 0.010, queue_limit_pkts=20)
    return sim
