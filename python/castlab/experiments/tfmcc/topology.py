"""The TFMCC experiment's set-ups as scenarios, and the readings taken from one run."""

from __future__ import annotations

import numpy as np

from castlab.experiments import streams
from castlab.scenario import Scenario

PACKET_BYTES = 1000  # TFMCC's s and TCP's MSS alike

# A: TFMCC with four receivers and K TCP NewReno flows through one DropTail bottleneck.
DUMBBELL = {
    "bottleneck_bps": 4e6,
    "bottleneck_delay_s": 0.020,
    "access_bps": 100e6,
    "access_delay_s": 0.002,
    # two bandwidth-delay products at the base RTT (48 ms: 24 packets): our choice; RFC 4654
    # §1.2 warns that a severely under-provisioned buffer favours TFMCC's paced packets
    "queue_limit_pkts": 50,
    "receivers": 4,
    "tcp_start_window_s": 5.0,
}

# B: receivers behind paths that lose packets at random (no congestion: 100 Mb/s everywhere),
# and a TCP flow from the sender's node to the worst receiver's node on its very path.
PATHS = {
    "loss": [0.002, 0.01, 0.03],
    "access_bps": 100e6,
    "delay_s": 0.010,  # one way per hop, two hops: RTT 40 ms
}

# C: a star of N receivers, each behind a path with random loss, to count reports per round.
STAR = {"loss": 0.01, "access_bps": 100e6, "delay_s": 0.010}


def _link(name, a, b, rate, delay, **kw) -> dict:
    return {"name": name, "a": a, "b": b, "rate": rate, "delay": delay, **kw}


def bottleneck_queue(queue: str) -> dict:
    """The dumbbell's bottleneck queue keys: DropTail of DUMBBELL's limit, or RED set by
    tcp-fairness's rule for the dumbbell's bandwidth-delay product (a variant: RED breaks the
    phase effects of DropTail in a deterministic simulator, Floyd and Jacobson 1992)."""
    d = DUMBBELL
    if queue == "droptail":
        return {"queue_limit": d["queue_limit_pkts"]}
    from castlab.experiments.tcp.scenarios import HEADER_BYTES, fair_queue

    base_rtt = 2 * (2 * d["access_delay_s"] + d["bottleneck_delay_s"])
    bdp = d["bottleneck_bps"] * base_rtt / 8 / (PACKET_BYTES + HEADER_BYTES)
    q = fair_queue("red", bdp)
    return {("queue_limit" if k == "queue_limit_pkts" else k): v for k, v in q.items()}


def dumbbell(k_tcp: int, seed: int, duration: float, queue: str = "droptail") -> Scenario:
    """src -> r1 -> r2 -> rx_i (TFMCC), ts_j -> r1 -> r2 -> td_j (TCP NewReno, started at random
    in the first seconds)."""
    d = DUMBBELL
    starts = streams.rng(seed, "tfmcc-starts", 0, k_tcp).uniform(0.0, d["tcp_start_window_s"], k_tcp)
    nodes = ["src", "r1", "r2"]
    links = [_link("up", "src", "r1", d["access_bps"], d["access_delay_s"], queue_limit=10_000),
             _link("bottleneck", "r1", "r2", d["bottleneck_bps"], d["bottleneck_delay_s"], **bottleneck_queue(queue))]
    receivers = []
    for i in range(d["receivers"]):
        nodes.append(f"rx{i}")
        links.append(_link(f"down{i}", "r2", f"rx{i}", d["access_bps"], d["access_delay_s"], queue_limit=10_000))
        receivers.append({"name": f"rx{i}", "node": f"rx{i}", "session": "tfmcc", "protocol": "tfmcc"})
    tcp = []
    for j in range(k_tcp):
        nodes += [f"ts{j}", f"td{j}"]
        links += [_link(f"tin{j}", f"ts{j}", "r1", d["access_bps"], d["access_delay_s"], queue_limit=10_000),
                  _link(f"tout{j}", "r2", f"td{j}", d["access_bps"], d["access_delay_s"], queue_limit=10_000)]
        tcp.append({"name": f"tcp{j}", "src": f"ts{j}", "dst": f"td{j}", "variant": "newreno",
                    "start": float(starts[j]), "config": {"mss_bytes": PACKET_BYTES}})
    return Scenario.from_dict({
        "name": f"tfmcc-dumbbell K={k_tcp} {queue}", "duration": duration, "nodes": nodes, "links": links,
        "sessions": [{"name": "tfmcc", "kind": "tfmcc", "source": "src",
                      "config": {"packet_size": PACKET_BYTES}}],
        "receivers": receivers, "tcp": tcp,
    })


def paths(duration: float) -> Scenario:
    """src -> hub -> rx_i, the hop to rx_i losing PATHS["loss"][i] of its packets; a TCP flow
    src -> rx_worst on the same hops."""
    p = PATHS
    nodes = ["src", "hub"]
    links = [_link("up", "src", "hub", p["access_bps"], p["delay_s"], queue_limit=10_000)]
    receivers = []
    for i, loss in enumerate(p["loss"]):
        nodes.append(f"rx{i}")
        links.append(_link(f"down{i}", "hub", f"rx{i}", p["access_bps"], p["delay_s"], queue_limit=10_000,
                           loss_ab=loss))
        receivers.append({"name": f"rx{i}", "node": f"rx{i}", "session": "tfmcc", "protocol": "tfmcc"})
    worst = f"rx{int(np.argmax(p['loss']))}"
    return Scenario.from_dict({
        "name": "tfmcc-paths", "duration": duration, "nodes": nodes, "links": links,
        "sessions": [{"name": "tfmcc", "kind": "tfmcc", "source": "src",
                      "config": {"packet_size": PACKET_BYTES}}],
        "receivers": receivers,
        "tcp": [{"name": "tcp", "src": "src", "dst": worst, "variant": "newreno",
                 "config": {"mss_bytes": PACKET_BYTES}}],
    })


def star(n: int, duration: float) -> Scenario:
    """src -> hub -> rx_i for N receivers, each last hop losing STAR["loss"] at random."""
    s = STAR
    nodes = ["src", "hub"] + [f"rx{i}" for i in range(n)]
    links = [_link("up", "src", "hub", s["access_bps"], s["delay_s"], queue_limit=10_000)]
    links += [_link(f"down{i}", "hub", f"rx{i}", s["access_bps"], s["delay_s"], queue_limit=10_000,
                    loss_ab=s["loss"]) for i in range(n)]
    return Scenario.from_dict({
        "name": f"tfmcc-star N={n}", "duration": duration, "nodes": nodes, "links": links,
        "sessions": [{"name": "tfmcc", "kind": "tfmcc", "source": "src", "config": {"packet_size": PACKET_BYTES}}],
        "receivers": [{"name": f"rx{i}", "node": f"rx{i}", "session": "tfmcc", "protocol": "tfmcc"}
                      for i in range(n)],
    })


def sender_of(sim) -> int:
    return sim.scenario_handles.sessions["tfmcc"]["source"]


def rate_at(rec: dict, t_s: np.ndarray) -> np.ndarray:
    """The sender's rate (b/s) at times `t_s`, from its rate changes."""
    t = rec["rate_time_ns"] / 1e9
    i = np.searchsorted(t, t_s, side="right") - 1
    return np.where(i >= 0, rec["rate_bps"][np.clip(i, 0, None)], np.nan)


def clr_share(rec: dict, node: str, start_s: float, end_s: float) -> float:
    """The fraction of [start_s, end_s] in which receiver `node` was the CLR."""
    names = list(rec["receivers"])
    if node not in names:
        return 0.0
    who = names.index(node)
    t = np.append(rec["clr_time_ns"] / 1e9, end_s)
    held = 0.0
    for k in range(len(t) - 1):
        a, b = max(t[k], start_s), min(t[k + 1], end_s)
        if b > a and rec["clr_receiver"][k] == who:
            held += b - a
    return held / (end_s - start_s)


def reports_per_round(rec: dict, start_s: float) -> float:
    """Mean number of non-CLR reports per feedback round, over the whole rounds that begin at or
    after `start_s` (the CLR's own reports, once per RTT, are apart: §4.5)."""
    ends = rec["round_time_ns"][rec["round_time_ns"] >= start_s * 1e9]
    if ends.size < 2:
        return float("nan")
    t = rec["fb_time_ns"]
    keep = (t >= ends[0]) & (t < ends[-1]) & ~rec["fb_from_clr"].astype(bool)
    return float(keep.sum() / (ends.size - 1))
