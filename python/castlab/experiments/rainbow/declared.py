"""BCFS/Rainbow's open settings and variants, declared once (the package's doc says how they are
used): a leaf the experiments import, so the package and its modules do not import each other."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class Reading:
    """One reading of an open setting: what the experiments pass (``value``) and why the paper
    allows it (``why``: its sentence, or the reason)."""

    value: Any
    why: str


@dataclass(frozen=True)
class Setting:
    """An open setting: its readings, the primary first."""

    what: str
    readings: dict = field(default_factory=dict)

    @property
    def primary(self) -> str:
        return next(iter(self.readings))

    @property
    def value(self) -> Any:
        """The primary reading's value."""
        return self.readings[self.primary].value

    def values(self) -> dict:
        """reading -> value, the primary first."""
        return {k: r.value for k, r in self.readings.items()}


TRQ_LOSS = "the TRQ-loss rule"
FAST_DELAYS = "Fig. 5's fast delays"
RED_THRESHOLDS = "the RED thresholds"

# Declared from the paper's text before the runs that decide its claims (never from results).
READINGS: dict[str, Setting] = {
    TRQ_LOSS: Setting(
        "answers to later TRQs after which an outstanding TRQ is lost (RainbowConfig.reorder_threshold)",
        {"1 later answer": Reading(
            {"reorder_threshold": 1},
            "§III-C: 'We can also detect packet loss when a later TRQ is replied before an earlier TRQ for "
            "another label is still waiting for a reply': one later reply is the rule as written")}),
    FAST_DELAYS: Setting(
        "one-way delays of A-(i)'s four fast down-links, s",
        {"5/10/20/40 ms": Reading(
            [0.005, 0.010, 0.020, 0.040],
            "§IV-A.2: 'each link has different transmission delay' and §IV-A.3: the fast receivers reach "
            "their rate 'after different increase rate in slow start phase because of bandwidth and delay "
            "difference'; the set-up the experiment ran from its first commit, four distinct delays, the "
            "widest relative spread of the readings"),
         "5/10/15/20 ms": Reading([0.005, 0.010, 0.015, 0.020], "four distinct delays, a tighter spread"),
         "2/4/6/8 ms": Reading([0.002, 0.004, 0.006, 0.008], "four distinct delays, LAN-like"),
         "10/20/30/40 ms": Reading([0.010, 0.020, 0.030, 0.040], "four distinct delays, evenly spaced")}),
    RED_THRESHOLDS: Setting(
        "min/max thresholds of the RED gateways' 10-packet queues, packets",
        {"5/15": Reading(
            (5.0, 15.0),
            "§IV: 'We implemented the BCFS network service and Rainbow/Digital Fountain on the network "
            "simulator ns-2' and §IV-A.2: 'All routers are RED gateways with a queue size of 10 packets', "
            "with no thresholds: ns-2's defaults of the time (thresh_ 5, maxthresh_ 15, linterm_ 10, "
            "q_weight_ 0.002) are what such a run gets"),
         "3/9": Reading((3.0, 9.0), "min_th a third of the 10-packet buffer, max_th = 3·min_th (Floyd's rule "
                        "of thumb): RED that drops early in that buffer"),
         "2/6": Reading((2.0, 6.0), "min_th a fifth of the buffer, max_th = 3·min_th")}),
}

# Set-ups the paper does not use, reported beside its claims as kind ``variant``.
VARIANTS: dict[str, Reading] = {
    "TRQ loss after 3 later answers": Reading(
        {"reorder_threshold": 3},
        "TCP's duplicate-ACK threshold ('the window control algorithm mirrors that in TCP', §III-C); the "
        "Rust default, chosen with A-(i)'s result in view, so not a reading of the paper's rule"),
    "every declared loss halves": Reading(
        {"halve_once_per_window": False},
        "the audit's R2 ablation: castlab's receiver treats losses of TRQs sent before a halving as the same "
        "loss event, as TCP's fast recovery does; the paper says only 'the window size is halved' (§III-C)"),
    "equal 10 ms fast delays": Reading(
        [0.010, 0.010, 0.010, 0.010], "not 'different transmission delay': reported, not a reading"),
    "DropTail": Reading({"queue": "droptail"}, "not a RED gateway: reported beside the RED readings"),
}


def declared(*settings: str) -> dict:
    """What an experiment's ``params`` record of the settings it reads: each one's primary
    reading and value and the readings declared for it (``READINGS``)."""
    return {s: {"primary": READINGS[s].primary, "value": READINGS[s].value, "readings": list(READINGS[s].readings)}
            for s in settings}
