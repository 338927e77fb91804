"""LE-SBCC's open settings, declared once (the package's doc says how they are used): a leaf
the experiments import, so the package and its figures do not import each other."""

from __future__ import annotations

from castlab.experiments.lesbcc.topology import FIG5_RTT112, FIG5_RTT280, PACKET_BYTES

READINGS: dict[str, dict[str, tuple]] = {
    # name -> (what the experiments pass, the sentence or reason)
    "LI2LE": {
        "window": ("window", "§2.1: 'If a new LI arrives from the receiver after a period SRTT + 2σ of T_LastPassed, "
                   "it is converted into an LE and passed, and the timestamp T_LastPassed is updated to the current "
                   "time. Else the LIs are filtered.' Appendix A's LI2LEfilter() is the same test. Primary: it is "
                   "the filter the paper specifies (LesbccConfig's default)."),
        "slot": ("slot", "§1 and §2.1: 'An LE is a binary number defined every RTT per receiver which is 1 when one "
                 "or more LIs are generated in that RTT by the receiver, and is 0 otherwise'; §3.1.3's chain counts "
                 "LEs per RTT round, and §3.1.4 divides the worst receiver's 600 LIs by the chain's 1.2 "
                 "(li2le_reading = 'slot': rounds of SRTT on one source-wide clock)."),
    },
    "Fig. 5's delays": {
        "56 ms": ({}, "§3.1.1: 'The buffer size (125 pkts) is roughly twice the bandwidth times fixed delays': "
                  "125 × 560 × 8 b = 2 × 5 Mb/s (the bottleneck) × 56 ms, the fixed delays read as the fixed round "
                  "trip (5 / 13 / 10 ms per hop). Primary: castlab's reading of the sentence since the first pass."),
        "112 ms": (FIG5_RTT112, "the same sentence with the fixed delays read as the one-way path delay (56 ms one "
                   "way): the buffer is then one bandwidth × round trip, a fixed RTT of 112 ms."),
        "280 ms": (FIG5_RTT280, "the same sentence with the bandwidth read as the 1 Mb/s fair rate of the sentence "
                   "before it ('The fair rate for all flows is therefore 1 Mbps'): 2 × 1 Mb/s × 280 ms."),
    },
    "§5's packet size": {
        "560 B": (PACKET_BYTES, "§5.2.1: 'we used the topology in simulation (Figure 5) with the bandwidths and "
                  "delays changed', so the rest of Fig. 5's set-up carries over, and §3.1.1 gives it: 'The packet "
                  "size is 560 bytes.' §5 names no other size."),
    },
    "the chain's N": {
        "N=500": (500, "§3.1.3: 'We did a Matlab analysis to numerically solve the chain for different large N's'; "
                  "primary: castlab's reading of 'large', above the 75-234 packets one Fig. 5 flow sends per round "
                  "trip at its 6 Mb/s access rate."),
        "N=100": (100, "the same sentence: one Fig. 5 flow's packets per fixed round trip (about 75-234)."),
        "N=200": (200, "the same sentence: the top of that range."),
        "N=1000": (1000, "the same sentence: twice the primary."),
    },
}

# Values considered for an open setting and not readings of the paper, with the reason.
NOT_READINGS: dict[str, dict[str, str]] = {
    "Fig. 5's delays": {
        "500 ms": "§5.2.1's testbed round trip. The same sentence says the testbed changed Fig. 5's delays ('with the "
                  "bandwidths and delays changed'), and 2 × 5 Mb/s × 500 ms is 9 times the 125-packet buffer, so it "
                  "reads no sentence about Fig. 5.",
    },
    "§5's packet size": {
        "1460 B": "TCP's Ethernet segment on the testbed. No sentence of §5 gives LE-SBCC this size; §3's equal sizes "
                  "are §3's 560 bytes.",
    },
}


def readings(setting: str) -> dict:
    """The readings of one open setting, name -> value, the primary first."""
    return {name: value for name, (value, _) in READINGS[setting].items()}


def primary(setting: str) -> str:
    """The primary reading's name of one open setting."""
    return next(iter(READINGS[setting]))
