"""The pgmcc experiment's set-ups as scenarios, and the readings taken from one run.

Declared before any run (the rules and tolerances are in ``figures``):

- A, ``dumbbell``: PGMCC with four receivers and K TCP flows (NewReno, or CUBIC as a variant)
  through one DropTail bottleneck: TFMCC's dumbbell (experiments/tfmcc/topology.py), so that the
  two single-rate schemes are measured on one set-up.
- B, ``paths``: receivers behind last hops that lose packets at random (no congestion: 100 Mb/s
  everywhere), and a NewReno flow from the sender's node to the worst receiver's node on its
  very path.
- C, ``lossier``: the same three receivers, but the worst one's path is clean until half-time,
  when its direct hop goes down and its packets take a parallel path of two hops that loses
  ``LOSSIER["after"]`` at random: the acker must move to it.
"""

from __future__ import annotations

import numpy as np

from castlab.experiments import streams
from castlab.experiments.tfmcc.topology import DUMBBELL as TFMCC_DUMBBELL
from castlab.scenario import Scenario

PACKET_BYTES = 1000  # PGMCC's data packet and TCP's MSS alike

DUMBBELL = dict(TFMCC_DUMBBELL)

PATHS = {
    "loss": [0.002, 0.01, 0.03],
    "access_bps": 100e6,
    "delay_s": 0.010,  # one way per hop, two hops: RTT 40 ms
}

LOSSIER = {
    # rx0 and rx1 keep these losses throughout; rx2 is clean, then loses "after" from half-time
    "loss": [0.002, 0.01],
    "after": 0.03,
    "access_bps": 100e6,
    "delay_s": 0.010,
    # the direct hop to rx2 is a hair shorter than the two-hop detour (2 x delay_s), so that
    # routes prefer it while it is up and the RTT barely changes when it goes down
    "direct_delay_s": 0.0195,
}


def _link(name, a, b, rate, delay, **kw) -> dict:
    return {"name": name, "a": a, "b": b, "rate": rate, "delay": delay, **kw}


def _session(config: dict | None = None) -> dict:
    return {"name": "pgmcc", "kind": "pgmcc", "source": "src", "config": {"packet_size": PACKET_BYTES, **(config or {})}}


def _rx(name: str) -> dict:
    return {"name": name, "node": name, "session": "pgmcc", "protocol": "pgmcc"}


def dumbbell(k_tcp: int, variant: str, seed: int, duration: float) -> Scenario:
    """src -> r1 -> r2 -> rx_i (PGMCC), ts_j -> r1 -> r2 -> td_j (TCP `variant`, started at
    random in the first seconds)."""
    return session_dumbbell(_session(), "pgmcc", "pgmcc-starts", k_tcp, variant, seed, duration)


def session_dumbbell(session: dict, protocol: str, stream: str, k_tcp: int, variant: str, seed: int,
                     duration: float) -> Scenario:
    """TFMCC's dumbbell with the multicast `session` (its source on node "src") and its
    receivers of `protocol` on rx_i, and K TCP flows of `variant` (MSS PACKET_BYTES) whose start
    times come from `stream`: the one set-up the single- and multi-rate schemes share."""
    d = DUMBBELL
    starts = streams.rng(seed, stream, 0, k_tcp).uniform(0.0, d["tcp_start_window_s"], k_tcp)
    nodes = ["src", "r1", "r2"]
    links = [_link("up", "src", "r1", d["access_bps"], d["access_delay_s"], queue_limit=10_000),
             _link("bottleneck", "r1", "r2", d["bottleneck_bps"], d["bottleneck_delay_s"],
                   queue_limit=d["queue_limit_pkts"])]
    receivers = []
    for i in range(d["receivers"]):
        nodes.append(f"rx{i}")
        links.append(_link(f"down{i}", "r2", f"rx{i}", d["access_bps"], d["access_delay_s"], queue_limit=10_000))
        receivers.append({"name": f"rx{i}", "node": f"rx{i}", "session": session["name"], "protocol": protocol})
    tcp = []
    for j in range(k_tcp):
        nodes += [f"ts{j}", f"td{j}"]
        links += [_link(f"tin{j}", f"ts{j}", "r1", d["access_bps"], d["access_delay_s"], queue_limit=10_000),
                  _link(f"tout{j}", "r2", f"td{j}", d["access_bps"], d["access_delay_s"], queue_limit=10_000)]
        tcp.append({"name": f"tcp{j}", "src": f"ts{j}", "dst": f"td{j}", "variant": variant,
                    "start": float(starts[j]), "config": {"mss_bytes": PACKET_BYTES}})
    return Scenario.from_dict({
        "name": f"{protocol}-dumbbell K={k_tcp} {variant}", "duration": duration, "nodes": nodes, "links": links,
        "sessions": [session], "receivers": receivers, "tcp": tcp,
    })


def paths(duration: float) -> Scenario:
    """src -> hub -> rx_i, the hop to rx_i losing PATHS["loss"][i] of its packets; a NewReno flow
    src -> rx_worst on the same hops."""
    p = PATHS
    nodes = ["src", "hub"]
    links = [_link("up", "src", "hub", p["access_bps"], p["delay_s"], queue_limit=10_000)]
    for i, loss in enumerate(p["loss"]):
        nodes.append(f"rx{i}")
        links.append(_link(f"down{i}", "hub", f"rx{i}", p["access_bps"], p["delay_s"], queue_limit=10_000,
                           loss_ab=loss))
    worst = f"rx{int(np.argmax(p['loss']))}"
    return Scenario.from_dict({
        "name": "pgmcc-paths", "duration": duration, "nodes": nodes, "links": links,
        "sessions": [_session()], "receivers": [_rx(f"rx{i}") for i in range(len(p["loss"]))],
        "tcp": [{"name": "tcp", "src": "src", "dst": worst, "variant": "newreno",
                 "config": {"mss_bytes": PACKET_BYTES}}],
    })


def lossier(duration: float) -> Scenario:
    """src -> hub -> rx0, rx1 (lossy hops) and hub -> rx2 directly (clean) or through `alt`
    (hub -> alt -> rx2, the last hop losing LOSSIER["after"]); the simulator takes the direct
    hop down at half-time (``lossier_build``)."""
    p = LOSSIER
    nodes = ["src", "hub", "rx0", "rx1", "rx2", "alt"]
    links = [_link("up", "src", "hub", p["access_bps"], p["delay_s"], queue_limit=10_000)]
    for i, loss in enumerate(p["loss"]):
        links.append(_link(f"down{i}", "hub", f"rx{i}", p["access_bps"], p["delay_s"], queue_limit=10_000,
                           loss_ab=loss))
    links += [_link("direct2", "hub", "rx2", p["access_bps"], p["direct_delay_s"], queue_limit=10_000),
              _link("detour", "hub", "alt", p["access_bps"], p["delay_s"], queue_limit=10_000),
              _link("lossy2", "alt", "rx2", p["access_bps"], p["delay_s"], queue_limit=10_000, loss_ab=p["after"])]
    return Scenario.from_dict({
        "name": "pgmcc-lossier", "duration": duration, "nodes": nodes, "links": links,
        "sessions": [_session()], "receivers": [_rx(f"rx{i}") for i in range(3)],
    })


def lossier_build(duration: float, seed: int):
    """The ``lossier`` simulator, its direct hop to rx2 going down at half-time."""
    sim = lossier(duration).build(seed)
    sim.link_down(duration / 2, "hub", "rx2")
    return sim


def sender_of(sim) -> int:
    return sim.scenario_handles.sessions["pgmcc"]["source"]


def acker_share(rec: dict, node: str, start_s: float, end_s: float) -> float:
    """The fraction of [start_s, end_s] in which receiver `node` was the acker."""
    names = list(rec["receivers"])
    if node not in names:
        return 0.0
    who = names.index(node)
    t = np.append(rec["acker_time_ns"] / 1e9, end_s)
    held = 0.0
    for k in range(len(t) - 1):
        a, b = max(t[k], start_s), min(t[k + 1], end_s)
        if b > a and rec["acker_receiver"][k] == who:
            held += b - a
    return held / (end_s - start_s)


def first_acker_after(rec: dict, node: str, t_s: float) -> float:
    """When receiver `node` first became the acker at or after `t_s` (s); NaN: never."""
    names = list(rec["receivers"])
    if node not in names:
        return float("nan")
    who = names.index(node)
    t = rec["acker_time_ns"] / 1e9
    hit = np.nonzero((t >= t_s) & (rec["acker_receiver"] == who))[0]
    return float(t[hit[0]]) if hit.size else float("nan")
