"""LE-SBCC's set-up on the namespace testbed (``castlab testbed up lesbcc5``, the
``net-lesbcc-*`` experiments)."""

from __future__ import annotations

from castlab.testbed.topology import Lan, Link, Topology, register


@register("lesbcc5")
def lesbcc5(receiver_hosts: int = 4, rate_bps: float = 1e6, queue_pkts: int = 50, delay_s: float = 0.25) -> Topology:
    """LE-SBCC's Fig. 5 dumbbell as §5.2.1 ran it on Linux: every sender (the multicast source
    and the TCP sources) on one host, a 1 Mb/s tbf bottleneck, four receiver hosts behind it
    (each one multicast receiver and four TCP receivers). §5.2.1 sets 500 ms of round-trip
    latency with tc: `delay_s` on the bottleneck and on the source's link, so that with
    user-space routers (which delay their egress onto each link) the round trip is
    2·delay_s; with kernel routers only the bottleneck is shaped, with netem where the kernel
    has it. The queue is not stated (50 packets: ours)."""
    hosts = ["src"] + [f"rcv{i + 1}" for i in range(receiver_hosts)]
    return Topology(
        name="lesbcc5",
        description=f"LE-SBCC Fig. 5 / §5.2.1: src - r1 =[{rate_bps / 1e6:g} Mb/s, {queue_pkts} pkts]=> LAN of {receiver_hosts} receiver hosts",
        hosts=hosts,
        routers=["r1"],
        links=[Link("src", "r1", delay_s=delay_s)],
        lans=[Lan("r1", tuple(hosts[1:]), rate_bps, queue_pkts, delay_s)],
    )
