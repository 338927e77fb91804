"""Rainbow's set-up on the namespace testbed (``castlab testbed up bcfs``, the ``net-rainbow``
experiment)."""

from __future__ import annotations

from castlab.experiments.rainbow.declared import READINGS, RED_THRESHOLDS
from castlab.testbed.topology import Link, Topology, register

#: RED as every router of the Rainbow paper's simulations runs it (§IV-A.2: "All routers are RED
#: gateways with a queue size of 10 packets"; the thresholds are the declared primary reading,
#: ns-2's defaults of the time, ``READINGS``): (min_th, max_th, max_p, w_q, gentle).
BCFS_RED = (*READINGS[RED_THRESHOLDS].value, 0.1, 0.002, False)


@register("bcfs")
def bcfs(receiver_hosts: int = 2, rate_bps: float = 400e3, queue_pkts: int = 10, slow_bps: float = 256e3,
         fast_bps: float = 1e6, source_bps: float = 10e6, source_delay_s: float = 0.005,
         uplink_delay_s: float = 0.020, slow_delay_s: float = 0.010,
         fast_delays_s: tuple[float, ...] = (0.005, 0.020), tcp_delay_s: float = 0.010) -> Topology:
    """A BCFS tree for Rainbow: the shape of the Rainbow paper's scenario A-(i) (Yano and McCanne
    Fig. 5), scaled to what two cores hold. The source ``src`` reaches ``r1`` (G0) over a fast
    link; the shared up-link ``r1`` -> ``r2`` (G1) at `rate_bps` (the paper's 400 kb/s); behind
    ``r2`` one slow receiver ``rcv1`` (256 kb/s) and `receiver_hosts` fast ones (1 Mb/s, each
    with its own delay: the paper's four are two here by default), and ``tcprx``, the far end of
    a kernel TCP flow from ``src`` that shares the up-link (as B-(iii) sets Rainbow beside TCP).
    Every link's egress in the routers is RED in a 10-packet buffer (§IV-A.2). Link delays and
    the fast rate are ours, the simulated twin's (``LINKS_A1`` in experiments/rainbow). With
    user routers each link's rate, queue and delay sit at the routers' egress onto it: a host's
    own egress onto its access link has none (the simulator shapes both directions)."""
    n = receiver_hosts
    if not 1 <= n <= 4:
        raise ValueError(f"bcfs: receiver_hosts (fast receivers) must be 1..4, got {n}")
    delays = list(fast_delays_s) + [fast_delays_s[-1]] * max(0, n - len(fast_delays_s))
    fast = [f"rcv{k + 2}" for k in range(n)]
    red = BCFS_RED
    links = [Link("src", "r1", source_bps, queue_pkts, source_delay_s, red),
             Link("r1", "r2", rate_bps, queue_pkts, uplink_delay_s, red),
             Link("r2", "rcv1", slow_bps, queue_pkts, slow_delay_s, red)]
    links += [Link("r2", h, fast_bps, queue_pkts, d, red) for h, d in zip(fast, delays)]
    links.append(Link("r2", "tcprx", fast_bps, queue_pkts, tcp_delay_s, red))
    return Topology(
        name="bcfs",
        description=f"BCFS tree (Rainbow A-(i) shape): src - r1 =[{rate_bps / 1e3:g} kb/s, RED {queue_pkts} pkts]=> "
                    f"r2 - rcv1 ({slow_bps / 1e3:g} kb/s), {n} fast receivers ({fast_bps / 1e6:g} Mb/s), tcprx",
        hosts=["src", "rcv1", *fast, "tcprx"],
        routers=["r1", "r2"],
        links=links,
    )
