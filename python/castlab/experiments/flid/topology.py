"""The flid-dl experiment's set-ups as scenarios, and the readings taken from one run.

Declared before any run (the rules and tolerances are in ``figures``):

- A, ``dumbbell``: one FLID-DL session with four receivers and K TCP flows (NewReno, or CUBIC as
  a variant) through one DropTail bottleneck: TFMCC's dumbbell (experiments/tfmcc/topology.py),
  the one PGMCC is measured on too.
- B, ``dynamics``: one receiver behind a 1 Mb/s bottleneck; at half-time a CBR flow of 600 kb/s
  starts through it, leaving 400 kb/s. Run with the simulator's IGMP leave latency 0 s and 2 s
  (IGMPv2's last-member query time with its defaults, two queries 1 s apart), the session's
  quiescent rest (5 slots, 2.5 s) covering the longer one.
- C, ``hetero``: three receivers of one session behind last hops of 1, 2 and 4 Mb/s, no other
  traffic.

Packets: FLID-DL data 1000 B (PGMCC's ``PACKET_BYTES``), TCP's MSS and the CBR's packets alike.
The FLID-DL constants are ``FlidConfig``'s defaults (c = 1.3, 0.5 s slots, base 64 kb/s) but
for ``packet_size``.
"""

from __future__ import annotations

import numpy as np

from castlab.experiments.pgmcc.topology import DUMBBELL, PACKET_BYTES, session_dumbbell
from castlab.scenario import Scenario

DYNAMICS = {
    "bottleneck_bps": 1e6,
    "bottleneck_delay_s": 0.020,
    "queue_limit_pkts": 30,
    "access_bps": 100e6,
    "access_delay_s": 0.002,
    "cbr_bps": 600e3,
    "leave_latencies_s": [0.0, 2.0],
    # quiescent slots covering the longer leave latency: 5 × 0.5 s = 2.5 s ≥ 2 s
    "config": {"layers": 23, "quiescent_slots": 5},
    # the levels a reaction must shed: 1.3^3 = 2.2, the least whole number of levels that
    # cuts the rate by the capacity's fall (1 Mb/s to 0.4 Mb/s: 2.5 = 1.3^3.5) rounded down
    "levels_shed": 3,
}

HETERO = {
    "last_hop_bps": [1e6, 2e6, 4e6],
    "last_hop_delay_s": 0.010,
    "queue_limit_pkts": 30,
    "access_bps": 100e6,
    "access_delay_s": 0.002,
}


def _link(name, a, b, rate, delay, **kw) -> dict:
    return {"name": name, "a": a, "b": b, "rate": rate, "delay": delay, **kw}


def _session(config: dict | None = None) -> dict:
    return {"name": "flid", "kind": "flid", "source": "src", "config": {"packet_size": PACKET_BYTES, **(config or {})}}


def _rx(name: str) -> dict:
    return {"name": name, "node": name, "session": "flid", "protocol": "flid"}


def dumbbell(k_tcp: int, variant: str, seed: int, duration: float) -> Scenario:
    """src -> r1 -> r2 -> rx_i (FLID-DL), ts_j -> r1 -> r2 -> td_j (TCP `variant`, started at
    random in the first seconds): PGMCC's dumbbell with a FLID-DL session."""
    return session_dumbbell(_session(), "flid", "flid-starts", k_tcp, variant, seed, duration)


def dynamics(leave_latency_s: float, duration: float) -> Scenario:
    """src -> r1 -> r2 -> rx (FLID-DL), cs -> r1 -> r2 -> cd (CBR from half-time)."""
    d = DYNAMICS
    nodes = ["src", "r1", "r2", "rx", "cs", "cd"]
    links = [_link("up", "src", "r1", d["access_bps"], d["access_delay_s"], queue_limit=10_000),
             _link("bottleneck", "r1", "r2", d["bottleneck_bps"], d["bottleneck_delay_s"],
                   queue_limit=d["queue_limit_pkts"]),
             _link("down", "r2", "rx", d["access_bps"], d["access_delay_s"], queue_limit=10_000),
             _link("cin", "cs", "r1", d["access_bps"], d["access_delay_s"], queue_limit=10_000),
             _link("cout", "r2", "cd", d["access_bps"], d["access_delay_s"], queue_limit=10_000)]
    return Scenario.from_dict({
        "name": f"flid-dynamics leave {leave_latency_s:g} s", "duration": duration, "nodes": nodes, "links": links,
        "simulator": {"leave_latency": leave_latency_s},
        "sessions": [_session(d["config"])], "receivers": [_rx("rx")],
        "cbr": [{"src": "cs", "dst": "cd", "rate": d["cbr_bps"], "packet_size": PACKET_BYTES,
                 "start": duration / 2}],
    })


def hetero(duration: float) -> Scenario:
    """src -> hub -> rx_i over a last hop of HETERO["last_hop_bps"][i]."""
    h = HETERO
    nodes = ["src", "hub"]
    links = [_link("up", "src", "hub", h["access_bps"], h["access_delay_s"], queue_limit=10_000)]
    for i, rate in enumerate(h["last_hop_bps"]):
        nodes.append(f"rx{i}")
        links.append(_link(f"last{i}", "hub", f"rx{i}", rate, h["last_hop_delay_s"],
                           queue_limit=h["queue_limit_pkts"]))
    return Scenario.from_dict({
        "name": "flid-hetero", "duration": duration, "nodes": nodes, "links": links,
        "sessions": [_session()], "receivers": [_rx(f"rx{i}") for i in range(len(h["last_hop_bps"]))],
    })


def rx_bytes(sim, names) -> list[int]:
    return [int(sim.flid_records(sim.scenario_handles.receivers[n])["bytes"]) for n in names]


def level_at(rec: dict, t_s: float) -> int:
    """The receiver's level at time `t_s` (its last change at or before it)."""
    t = np.asarray(rec["level_time_ns"]) / 1e9
    i = int(np.searchsorted(t, t_s, side="right")) - 1
    return int(rec["level"][max(i, 0)])


def time_to_shed(rec: dict, onset_s: float, levels: int) -> float:
    """Seconds from `onset_s` until the level is first `levels` below its level at the onset;
    inf: never."""
    l0 = level_at(rec, onset_s)
    t = np.asarray(rec["level_time_ns"]) / 1e9
    hit = np.nonzero((t >= onset_s) & (np.asarray(rec["level"]) <= l0 - levels))[0]
    return float(t[hit[0]] - onset_s) if hit.size else float("inf")
