"""The LE-SBCC paper's set-ups as parameters, shared by the experiments.

The Figure 5 topology, shared by fig6, fig7, fig13, fig14, fig16 and fig20 (:func:`fig5_run`):
- the main multicast source and 16 unicast sources (4 sets of 4) each on a 6 Mb/s link to
  Router 1; Router 1 - Router 2 at 6 Mb/s per flow (102 Mb/s); Router 2 to receivers 1-4 at
  5 Mb/s each (the bottlenecks); set k's unicast flows go to receiver k (§3.1.1);
- 125-packet buffers on every link, 560-byte packets (§3.1.1), 450 s;
- propagation delays are not given: §3.1.1 says the 125-packet buffer "is roughly twice the
  bandwidth times fixed delays", i.e. a fixed RTT of about 56 ms at 5 Mb/s. We use 5 ms on the
  source links, 13 ms Router 1 - Router 2 and 10 ms to the receivers (RTT 56 ms);
- sources start uniformly on [0, 5] s (drawn from the run's seed; the paper does not say);
- receivers NAK every loss at once, with no NCF suppression (:data:`SIM_RECEIVER`, §2.1's
  "timely" LIs; fig19's Fig. 18 tree uses the same receivers).

Rates of LE-SBCC flows are their controlled rate (the step function the source paces at,
time-averaged); TCP rates are goodput (acknowledged bytes), in 2-s bins as the paper samples
TCP (footnote 6).
"""

from __future__ import annotations

PACKET_BYTES = 560  # §3.1.1
BUFFER_PKTS = 125  # §3.1.1
DURATION_S = 450.0  # §3.1.1
FAIR_BPS = 1e6  # §3.1.1: "The fair rate for all flows is therefore 1 Mbps"
FIG5 = {
    "access_bps": 6e6, "access_delay_s": 0.005, "core_bps": 102e6, "core_delay_s": 0.013,
    "bottleneck_bps": 5e6, "bottleneck_delay_s": 0.010, "buffer_pkts": BUFFER_PKTS, "packet_bytes": PACKET_BYTES,
    "start_window_s": 5.0,
}
# The delays of the other readings of §3.1.1's "The buffer size (125 pkts) is roughly twice the
# bandwidth times fixed delays" (FIG5 reads it as 2 · 5 Mb/s · 56 ms of fixed RTT); which readings
# the experiments run, and why, is declared in the package (``READINGS["Fig. 5's delays"]``):
# - "fixed delays" as the one-way sum of the link delays, so that twice it is the RTT and the
#   buffer one bandwidth-delay product: 125 · 560 · 8 b = 5 Mb/s · 2 · 56 ms, a fixed RTT of
#   112 ms (every delay of FIG5 times 2);
# - "bandwidth" as the 1 Mb/s fair rate of the sentence before it: 125 · 560 · 8 b =
#   2 · 1 Mb/s · 0.28 s, a fixed RTT of 280 ms (every delay of FIG5 times 5).
FIG5_RTT112 = {"access_delay_s": 0.010, "core_delay_s": 0.026, "bottleneck_delay_s": 0.020}
FIG5_RTT280 = {"access_delay_s": 0.025, "core_delay_s": 0.065, "bottleneck_delay_s": 0.050}
# RED on the bottlenecks for fig14: the paper gives no parameters. ns-2's defaults scaled to the
# 125-packet buffer: min_th = 25 (a fifth of the buffer), max_th = 3·min_th, max_p = 0.1,
# w_q = 0.002 (Floyd and Jacobson's value).
RED = {"red_min_th": 25.0, "red_max_th": 75.0, "red_max_p": 0.1, "red_w_q": 0.002, "mean_pkt_bytes": PACKET_BYTES}
TCP_MSS = PACKET_BYTES - 40  # 560-byte packets on the wire with 40 bytes of headers
# The paper's ns-2 Reno/NewReno most likely predates Limited Transmit (RFC 3042): ns-2's
# `singledup_` became 1 on 2001-11-28, and the paper's newest reference is from August 2001.
# castlab's TcpConfig has it on by default, so the §3 simulations turn it off (decided on the
# dates, not the results; docs/fidelity/lesbcc.md). fig21-sim keeps it on: its twin is a
# modern Linux kernel TCP.
TCP_LIMITED_TRANSMIT = False
# Delayed ACKs where a set-up had them (RFC 5681 §4.2). §3's simulations (fig13, fig14, fig20:
# "TCP Reno" in ns-2) ACK every segment: ns-2's default sink, Agent/TCPSink, has no delayed ACKs
# (that is Agent/TCPSink/DelAck, which a script must ask for, and the paper does not say it did).
# §5.2.1's Linux testbed did: Linux delays ACKs by default, so fig21-sim's TCP receivers do
# (FIG21's tcp_delayed_ack). No other LE-SBCC set-up has TCP.
TCP_DELAYED_ACK = False
# The receivers of the §3 simulations: every receiver NAKs every loss at once. The paper gives
# no receiver parameters for its simulations. The 100 ms NAK back-off and the NCF suppression of
# castlab's PgmReceiver defaults are §5.2.1's Linux set-up, chosen there as small against its
# 500 ms round trip ("this does not affect RTT significantly"). Against the 56 ms round trip of
# Fig. 5 the back-off is the larger part of every RTT sample. §2.1 asks of the receivers "at
# least one LI per receiver seeing loss per RTT" and "timely generation ... of feedback ... to
# allow reliable RTT sampling", and calls PGM-style suppression a form of LI aggregation, which
# §3.3's "no LI aggregation" case does without. NCF suppression would also hide some of the
# worst receiver's NAKs behind the others' there.
SIM_RECEIVER = {"nak_backoff_max": 0.0, "ncf_suppression": False}


# ------------------------------------------------------------------------------------------
# fig12-sim: Fig. 11's star as a packet-level simulation (§3.1.4)
# ------------------------------------------------------------------------------------------

# §3.1.4: "all the receivers and the single source are connected to the same router", constant
# RTTs (their value is not given: 100 ms, as lesbcc-fig12's direct drive declares), uniform
# independent losses (Bernoulli on each receiver's link, downstream), no aggregation, 6000
# packets. The links are fast (100 Mb/s, as fig19's) so that the only losses are these; the
# router's queues hold any burst of NAKs and NCFs (queue_limit_pkts below), so no packet is
# dropped at a queue (the run counts it) and the set-up has no DropTail phase effects. The
# receivers join at 0 and their joins reach the source within 50 ms; the source starts at 1 s,
# so that every receiver has the session from its first packet, as §3.1.4's fixed set of
# receivers has (a receiver that joined late would NAK the packets sent before, all at once).
FIG11 = {"rtt_s": 0.1, "link_bps": 100e6, "src_delay_s": 0.025, "leaf_delay_s": 0.025, "others_loss": 0.02,
         "packets": 6000, "start_s": 1.0}


# ------------------------------------------------------------------------------------------
# fig19: aggregation in the multi-level tree of Fig. 18
# ------------------------------------------------------------------------------------------

FIG18 = {"link_bps": 100e6, "src_delay_s": 0.005, "core_delay_s": 0.005, "leaf_delay_s": 0.010,
         "worst_leaf_delay_s": 0.040, "worst_loss": 0.04, "other_loss": 0.02, "packets": 6000}


# ------------------------------------------------------------------------------------------
# fig21-sim: §5's Linux set-up (Figs. 13(c), 21) in the simulator, the twin of net-lesbcc-fig21
# ------------------------------------------------------------------------------------------

# §5.2.1's parameters, and the testbed's where §5.2.1 is silent (net.py's FIG21_*, testbed
# lesbcc5), so that the real run has a simulated twin: one sending host (the multicast source
# and 16 TCP sources), a 1 Mb/s bottleneck with 500 ms of round-trip link latency (250 ms each
# way), four receiver hosts behind it, each with one multicast receiver and four TCP receivers.
FIG21 = {"bottleneck_bps": 1e6,  # §5.2.1 "Bottleneck bandwidth (set by tc): 1Mbps"
         "one_way_delay_s": 0.25,  # §5.2.1 "Round trip link latency (set by tc): 500 ms"
         "queue_pkts": 50,  # not stated: the testbed's (net.py FIG21_QUEUE)
         "lan_bps": 100e6, "lan_delay_s": 0.0005,  # the hosts' own links: fast (ours)
         "hosts": 4, "tcp_per_host": 4,  # §5.2.1: four receiver machines, four TCP receivers each
         "tcp_mss_bytes": 1460,  # Ethernet-sized segments as on the testbed (iperf3 over veth)
         # §5.2.1 "TCP SACK enabled", on Linux, whose receivers delay ACKs (RFC 5681 §4.2)
         "tcp_variant": "sack", "tcp_delayed_ack": True,
         "start_window_s": 1.0, "warmup_s": 20.0}

# ------------------------------------------------------------------------------------------
# tfrc-padhye: the TFRC module (§4.1) against Padhye's equation on a path with fixed loss
# ------------------------------------------------------------------------------------------

# One source, one receiver, fast links (no queueing), Bernoulli loss p on the receiver's link,
# a fixed RTT of 100 ms. The module sets its rate from Padhye's equation with its own LE rate
# (LEs after the cascade, per packet), SRTT and t_RTO = SRTT + 4σ (§4.1). Rule (fixed before
# running, derived): the time-averaged rate after the warm-up lies within ±25 % of Padhye's T
# at the run's measured LE rate, mean SRTT and mean σ (mean over seeds); the equation is written
# independently in castlab.metrics.padhye_throughput.
TFRC_PATH = {"link_bps": 100e6, "link_delay_s": 0.025, "warmup_s": 30.0}  # two links each way: RTT 100 ms
