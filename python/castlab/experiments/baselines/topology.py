"""The baselines comparison's set-ups as scenarios, and the readings taken from one run.

Declared before any run (the claims and their bands are in ``figures``):

- The six schemes, each with its declared default configuration (``config_defaults``; nothing
  overridden): TFMCC and PGMCC (single-rate), RLM, RLC, FLID-DL and WEBRC (multi-rate). RLM's
  layers are the session's, not its ``Config``'s: RLM §4's six layers of 32·2^m kb/s with 1 KB
  packets (``experiments/rlm/topology.py``). Packet sizes are therefore the schemes' own:
  1000 B for TFMCC, PGMCC, WEBRC and RLM, 512 B for RLC and FLID-DL.
- The TCP flavours as the tcp-vs-sim twins run a kernel's (``tcp/net.py``'s
  ``linux_twin_flow``): ``reno`` is the ``sack`` variant with Linux's settings, ``cubic`` and
  ``bbr`` the variants of those names from ``TcpConfig::linux()`` (1448-byte segments).
- A, ``dumbbell``: TFMCC's dumbbell (``pgmcc/topology.py``'s ``session_dumbbell``: 4 Mb/s,
  20 ms, DropTail of 50 packets, four receivers) with K = 1 or 4 TCP flows of one flavour,
  started at random in the first 5 s.
- B, ``tree``: the source behind a 100 Mb/s access link to a hub; four receivers behind last
  hops of 0.5, 1, 2 and 4 Mb/s with one-way delays of 40, 20, 10 and 5 ms (so neither the rate
  nor the round trip orders the receivers alone), each hop's DropTail one bandwidth-delay
  product at its base round trip, at least 10 packets; on each last hop one TCP flow of the
  flavour, from a node of its own behind the hub to the receiver's node.

Phase (docs/fidelity/phase.md): the overhead is one of the largest packets (a Linux TCP
segment, 1448 + 52 bytes) at the set-up's slowest bottleneck: 3 ms on the dumbbell (4 Mb/s),
24 ms on the tree (0.5 Mb/s). Each set-up gets its own, so that the randomisation spans one
queue slot of its own bottleneck; the figure's declared overhead is the dumbbell's.
"""

from __future__ import annotations

import math

import numpy as np

from castlab.experiments import streams
from castlab.experiments.pgmcc.topology import DUMBBELL, session_dumbbell
from castlab.experiments.rlm.topology import LAYER_RATES_BPS as RLM_LAYER_RATES_BPS
from castlab.experiments.rlm.topology import PACKET_BYTES as RLM_PACKET_BYTES
from castlab.experiments.tcp.net import LINUX_SETTINGS, linux_twin_flow
from castlab.scenario import Scenario
from castlab.simulator import default_phase_overhead

#: The schemes in the figure's order: name -> (label, single-rate?, session keys, receivers' protocol).
SCHEMES = {
    "tfmcc": ("TFMCC", True, {"kind": "tfmcc"}, "tfmcc"),
    "pgmcc": ("PGMCC", True, {"kind": "pgmcc"}, "pgmcc"),
    "rlm": ("RLM", False, {"kind": "layered", "rates": list(RLM_LAYER_RATES_BPS), "packet_size": RLM_PACKET_BYTES},
            "rlm"),
    "rlc": ("RLC", False, {"kind": "rlc"}, "rlc"),
    "flid": ("FLID-DL", False, {"kind": "flid"}, "flid"),
    "webrc": ("WEBRC", False, {"kind": "webrc"}, "webrc"),
}

#: The TCP flavours, by the kernel's name (the simulator's variant: ``linux_twin_flow``).
FLAVOURS = ("reno", "cubic", "bbr")

#: Ks of the dumbbell.
KS = (1, 4)

TREE = {
    "last_hop_bps": [0.5e6, 1e6, 2e6, 4e6],
    "last_hop_delay_s": [0.040, 0.020, 0.010, 0.005],
    "access_bps": 100e6,
    "access_delay_s": 0.002,
    "min_queue_pkts": 10,
}

#: The largest packet of any run: a Linux TCP segment with its headers.
LARGEST_PACKET_BYTES = LINUX_SETTINGS["mss_bytes"] + LINUX_SETTINGS["header_bytes"]

#: docs/fidelity/phase.md's overhead per set-up: the largest packet at its slowest bottleneck.
PHASE_S = {"dumbbell": LARGEST_PACKET_BYTES * 8 / DUMBBELL["bottleneck_bps"],
           "tree": LARGEST_PACKET_BYTES * 8 / min(TREE["last_hop_bps"])}


def tree_queue_pkts(i: int) -> int:
    """Last hop i's DropTail: one bandwidth-delay product of the largest packet at its base
    round trip (every hop of the path both ways), at least ``min_queue_pkts``."""
    t = TREE
    rtt = 2 * (2 * t["access_delay_s"] + t["last_hop_delay_s"][i])
    return max(t["min_queue_pkts"], math.ceil(t["last_hop_bps"][i] * rtt / 8 / LARGEST_PACKET_BYTES))


def fair_share_bps(i: int) -> float:
    """Receiver i's fair share on the tree: its last hop split with the one TCP flow on it."""
    return TREE["last_hop_bps"][i] / 2


def _session(scheme: str) -> dict:
    return {"name": "m", "source": "src", **SCHEMES[scheme][2]}


def _phase(setup: str) -> dict:
    """The scenario's ``[simulator]`` phase key: the set-up's own overhead when the run is
    phase-randomised at the figure's declared one, an explicit other overhead as given, none
    when deterministic."""
    ov = default_phase_overhead()
    if ov <= 0:
        return {}
    return {"phase_overhead": PHASE_S[setup] if math.isclose(ov, PHASE_S["dumbbell"]) else ov}


def _tcp(name: str, src: str, dst: str, flavour: str, start: float) -> dict:
    return {"name": name, "src": src, "dst": dst, "start": float(start), **linux_twin_flow(flavour)}


def dumbbell(scheme: str, k_tcp: int, flavour: str, seed: int, duration: float) -> Scenario:
    """TFMCC's dumbbell (``session_dumbbell``) with the scheme's session and K TCP flows of
    ``flavour`` as Linux runs them, started at random in the first seconds."""
    d = session_dumbbell(_session(scheme), SCHEMES[scheme][3], "baselines-starts", k_tcp, "newreno", seed,
                         duration).to_dict()
    d["tcp"] = [_tcp(t["name"], t["src"], t["dst"], flavour, t["start"]) for t in d["tcp"]]
    d["name"] = f"baselines {scheme} dumbbell K={k_tcp} {flavour}"
    d["simulator"] = {**d["simulator"], **_phase("dumbbell")}
    return Scenario.from_dict(d)


def tree(scheme: str, flavour: str, seed: int, duration: float) -> Scenario:
    """src -> hub -> rx_i over last hop i; ts_i -> hub -> rx_i a TCP flow of ``flavour`` on each
    last hop, started at random in the first seconds."""
    t = TREE
    n = len(t["last_hop_bps"])
    starts = streams.rng(seed, "baselines-starts", 1, n).uniform(0.0, DUMBBELL["tcp_start_window_s"], n)
    link = lambda name, a, b, rate, delay, q: {"name": name, "a": a, "b": b, "rate": rate, "delay": delay,  # noqa: E731
                                                "queue_limit": q}
    nodes = ["src", "hub"]
    links = [link("up", "src", "hub", t["access_bps"], t["access_delay_s"], 10_000)]
    receivers, tcp = [], []
    for i, (rate, delay) in enumerate(zip(t["last_hop_bps"], t["last_hop_delay_s"])):
        nodes += [f"rx{i}", f"ts{i}"]
        links += [link(f"last{i}", "hub", f"rx{i}", rate, delay, tree_queue_pkts(i)),
                  link(f"tin{i}", f"ts{i}", "hub", t["access_bps"], t["access_delay_s"], 10_000)]
        receivers.append({"name": f"rx{i}", "node": f"rx{i}", "session": "m", "protocol": SCHEMES[scheme][3]})
        tcp.append(_tcp(f"tcp{i}", f"ts{i}", f"rx{i}", flavour, starts[i]))
    return Scenario.from_dict({
        "name": f"baselines {scheme} tree {flavour}", "duration": duration, "nodes": nodes, "links": links,
        "simulator": _phase("tree"), "sessions": [_session(scheme)], "receivers": receivers, "tcp": tcp,
    })


def run_sampled(sc: Scenario, sim, duration: float, bin_s: float = 1.0) -> dict:
    """Run ``sim`` to ``duration``, reading every ``bin_s`` seconds each receiver's and each TCP
    flow's cumulative bits and each receiver's packets received and lost (the flow table's
    rows): arrays of shape (bins + 1, flows), the first row at time 0."""
    times = np.arange(0.0, duration + 1e-9, bin_s)
    d = sc.to_dict()
    names = [r["name"] for r in d["receivers"]] + [t["name"] for t in d["tcp"]]
    starts = {**{t["name"]: float(t["start"]) for t in d["tcp"]}, **sim.scenario_handles.starts}
    bits = np.zeros((times.size, len(names)))
    rcv = np.zeros((times.size, len(names)))
    lost = np.zeros((times.size, len(names)))
    for k, t in enumerate(times):
        if t > 0:
            sim.run(until=float(t))
        rows = {r["name"]: r for r in sc.flow_table(sim)}
        for j, n in enumerate(names):
            r, start = rows[n], starts[n]
            rate = r["mean_rate_bps"]
            # the flow table's mean rate times its span is a whole number of bits
            bits[k, j] = round(rate * (t - start)) if t > start and np.isfinite(rate) else 0.0
            rcv[k, j], lost[k, j] = r["received"], r["lost"]
    return {"time_s": times, "names": names, "bits": bits, "received": rcv, "lost": lost}
