"""RLM's set-up on the namespace testbed (``castlab testbed up rlm1``, the ``net-rlm``
experiments)."""

from __future__ import annotations

from castlab.testbed.topology import Lan, Link, Topology, register


@register("rlm1", receivers="receivers")
def rlm1(receivers: int = 3, rate_bps: float = 1.5e6, queue_pkts: int = 20, delay_s: float = 0.010) -> Topology:
    """RLM's topology (1) once per receiver (McCanne et al. §4, Fig. 7): the source, one
    router, and for each receiver its own bottleneck (1.5 Mb/s, DropTail 20 packets; the 10 ms
    delay only with netem), the receivers on one segment so that they hear each other's
    join-experiment announcements. The bottleneck sits on each receiver's bridge port behind
    IGMP snooping with fast leave, so a leave stops a layer on that link within a second:
    behind igmpproxy alone a leave takes tens of seconds to prune (docs/testbed.md)."""
    hosts = ["src"] + [f"rcv{i + 1}" for i in range(receivers)]
    return Topology(
        name="rlm1",
        description=f"RLM topology (1) per receiver: src - r1 =[{rate_bps / 1e6:g} Mb/s, {queue_pkts} pkts each]=> {receivers} receivers",
        hosts=hosts,
        routers=["r1"],
        links=[Link("src", "r1")],
        lans=[Lan("r1", tuple(hosts[1:]), rate_bps, queue_pkts, delay_s, "per-host")],
    )
