"""NLM's set-up on the namespace testbed (``castlab testbed up nlm8``)."""

from __future__ import annotations

from castlab.testbed.topology import Link, Topology, register


@register("nlm8")
def nlm8(receiver_hosts: int = 1, rate_bps: float = 1.5e6, queue_pkts: int = 20, delay_s: float = 0.010,
         access_bps: float = 10e6) -> Topology:
    """NLM's Figure 8 (§4.1): N sessions S_i -> LMR1 -> LMR2 -> R_i, the bottleneck LMR1 -> LMR2
    at `rate_bps` (Fig. 9: 1.5 Mb/s; Figs 10-11: 1.6 Mb/s), every link 10 ms and an output queue
    of 20 packets, DropTail. The access links run at `access_bps` (10 Mb/s, as the simulated
    twin: our choice where the paper gives none). Session i has source ``src`` (i = 1, the
    topology's multicast source) or ``srcI`` and receiver ``rcvI``. With user routers each
    link's delay and queue sit at the routers' egress onto it: a host's own egress onto its
    access link has neither (the simulator delays both directions)."""
    n = receiver_hosts
    if not 1 <= n <= 8:
        raise ValueError(f"nlm8: receiver_hosts (sessions) must be 1..8, got {n}")
    srcs = ["src"] + [f"src{i + 1}" for i in range(1, n)]
    rcvs = [f"rcv{i + 1}" for i in range(n)]
    links = [Link(s, "r1", access_bps, queue_pkts, delay_s) for s in srcs]
    links.append(Link("r1", "r2", rate_bps, queue_pkts, delay_s))
    links += [Link("r2", r, access_bps, queue_pkts, delay_s) for r in rcvs]
    return Topology(
        name="nlm8",
        description=f"NLM Fig. 8: {n} x S_i - r1 (LMR1) =[{rate_bps / 1e6:g} Mb/s, {queue_pkts} pkts, "
                    f"{delay_s * 1e3:g} ms]=> r2 (LMR2) - R_i",
        hosts=srcs + rcvs,
        routers=["r1", "r2"],
        links=links,
    )
