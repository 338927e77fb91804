"""The webrc experiment's set-ups as scenarios, and the readings taken from one run.

Declared before any run (the rules and tolerances are in ``figures``):

- A, ``dumbbell``: a WEBRC session with four receivers and K TCP flows (NewReno, or CUBIC as a
  variant) through one DropTail bottleneck: TFMCC's dumbbell (experiments/tfmcc/topology.py),
  so that the multi-rate and the single-rate schemes are measured on one set-up.
- B, ``paths``: three receivers behind last hops of different random loss and delay (no
  congestion: 100 Mb/s everywhere), and a NewReno flow from the sender's node to each receiver's
  node on its very path.
- C, ``change``: one receiver whose path is clean-ish (``CHANGE["before"]`` loss) until
  half-time, when its direct hop goes down and its packets take a longer detour of two hops
  that loses ``CHANGE["after"]``: its target rate must follow the longer MRTT and the higher
  loss.
"""

from __future__ import annotations

import numpy as np

from castlab.experiments import streams
from castlab.experiments.tfmcc.topology import DUMBBELL as TFMCC_DUMBBELL
from castlab.scenario import Scenario

PACKET_BYTES = 1000  # LENP_B and TCP's MSS alike

DUMBBELL = dict(TFMCC_DUMBBELL)

PATHS = {
    # (random loss, one-way delay of the last hop) per receiver
    "loss": [0.005, 0.02, 0.02],
    "delay_s": [0.010, 0.010, 0.040],
    "access_bps": 100e6,
    "hub_delay_s": 0.010,
}

CHANGE = {
    "before": 0.005,
    "after": 0.03,
    "access_bps": 100e6,
    "delay_s": 0.010,
    # the direct hop is a hair shorter than the detour's first hop, so routes prefer it while it
    # is up; the detour's second hop adds 30 ms each way: RTT 40 ms -> 100 ms
    "direct_delay_s": 0.0095,
    "detour_delay_s": 0.040,
}


def _link(name, a, b, rate, delay, **kw) -> dict:
    return {"name": name, "a": a, "b": b, "rate": rate, "delay": delay, **kw}


def _session(config: dict | None = None) -> dict:
    return {"name": "webrc", "kind": "webrc", "source": "src",
            "config": {"packet_size": PACKET_BYTES, **(config or {})}}


def _rx(name: str) -> dict:
    return {"name": name, "node": name, "session": "webrc", "protocol": "webrc"}


def dumbbell(k_tcp: int, variant: str, seed: int, duration: float) -> Scenario:
    """src -> r1 -> r2 -> rx_i (WEBRC), ts_j -> r1 -> r2 -> td_j (TCP `variant`, started at
    random in the first seconds)."""
    d = DUMBBELL
    starts = streams.rng(seed, "webrc-starts", 0, k_tcp).uniform(0.0, d["tcp_start_window_s"], k_tcp)
    nodes = ["src", "r1", "r2"]
    links = [_link("up", "src", "r1", d["access_bps"], d["access_delay_s"], queue_limit=10_000),
             _link("bottleneck", "r1", "r2", d["bottleneck_bps"], d["bottleneck_delay_s"],
                   queue_limit=d["queue_limit_pkts"])]
    receivers = []
    for i in range(d["receivers"]):
        nodes.append(f"rx{i}")
        links.append(_link(f"down{i}", "r2", f"rx{i}", d["access_bps"], d["access_delay_s"], queue_limit=10_000))
        receivers.append(_rx(f"rx{i}"))
    tcp = []
    for j in range(k_tcp):
        nodes += [f"ts{j}", f"td{j}"]
        links += [_link(f"tin{j}", f"ts{j}", "r1", d["access_bps"], d["access_delay_s"], queue_limit=10_000),
                  _link(f"tout{j}", "r2", f"td{j}", d["access_bps"], d["access_delay_s"], queue_limit=10_000)]
        tcp.append({"name": f"tcp{j}", "src": f"ts{j}", "dst": f"td{j}", "variant": variant,
                    "start": float(starts[j]), "config": {"mss_bytes": PACKET_BYTES}})
    return Scenario.from_dict({
        "name": f"webrc-dumbbell K={k_tcp} {variant}", "duration": duration, "nodes": nodes, "links": links,
        "sessions": [_session()], "receivers": receivers, "tcp": tcp,
    })


def paths(duration: float) -> Scenario:
    """src -> hub -> rx_i, the hop to rx_i losing PATHS["loss"][i] with PATHS["delay_s"][i]; a
    NewReno flow src -> rx_i on each path."""
    p = PATHS
    nodes = ["src", "hub"]
    links = [_link("up", "src", "hub", p["access_bps"], p["hub_delay_s"], queue_limit=10_000)]
    tcp = []
    for i, (loss, delay) in enumerate(zip(p["loss"], p["delay_s"])):
        nodes.append(f"rx{i}")
        links.append(_link(f"down{i}", "hub", f"rx{i}", p["access_bps"], delay, queue_limit=10_000, loss_ab=loss))
        tcp.append({"name": f"tcp{i}", "src": "src", "dst": f"rx{i}", "variant": "newreno",
                    "config": {"mss_bytes": PACKET_BYTES}})
    return Scenario.from_dict({
        "name": "webrc-paths", "duration": duration, "nodes": nodes, "links": links,
        "sessions": [_session()], "receivers": [_rx(f"rx{i}") for i in range(len(p["loss"]))], "tcp": tcp,
    })


def change_build(duration: float, seed: int):
    """src -> hub -> rx directly (CHANGE["before"] loss) or through ``alt`` (hub -> alt -> rx,
    the last hop losing CHANGE["after"]); the direct hop goes down at half-time."""
    p = CHANGE
    links = [_link("up", "src", "hub", p["access_bps"], p["delay_s"], queue_limit=10_000),
             _link("direct", "hub", "rx", p["access_bps"], p["direct_delay_s"], queue_limit=10_000,
                   loss_ab=p["before"]),
             _link("detour", "hub", "alt", p["access_bps"], p["delay_s"], queue_limit=10_000),
             _link("lossy", "alt", "rx", p["access_bps"], p["detour_delay_s"], queue_limit=10_000,
                   loss_ab=p["after"])]
    sim = Scenario.from_dict({
        "name": "webrc-change", "duration": duration, "nodes": ["src", "hub", "alt", "rx"], "links": links,
        "sessions": [_session()], "receivers": [_rx("rx")],
    }).build(seed)
    sim.link_down(duration / 2, "hub", "rx")
    return sim


def receiver_of(sim, name: str) -> int:
    return sim.scenario_handles.receivers[name]


def epochs_between(rec: dict, column: str, start_s: float, end_s: float) -> np.ndarray:
    """The receiver's per-epoch ``column`` in [start_s, end_s)."""
    t = rec["epoch_time_ns"] / 1e9
    return np.asarray(rec[column])[(t >= start_s) & (t < end_s)]
