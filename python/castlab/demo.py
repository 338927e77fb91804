"""The built-in demo of ``castlab run``: one layered source, a shared bottleneck, a few sinks."""

from __future__ import annotations

from castlab import Simulator

LAYERS_BPS = [32e3 * 2**m for m in range(6)]  # McCanne et al. §4: 32·2^m kb/s, m = 0..5


def build(seed: int = 1, bottleneck_bps: float = 1.5e6, access_bps=(256e3, 512e3, 1e6, 2e6),
          levels=(3, 4, 5, 6)):
    """A source behind a 1.5 Mb/s bottleneck; receiver i sits behind an access link of
    access_bps[i] and subscribes to levels[i] layers from t = 1 s."""
    sim = Simulator(seed=seed)
    for n in ("src", "r1", "r2"):
        sim.add_node(n)
    sim.add_link("src", "r1", 100e6, 0.001, queue_limit_pkts=100)
    sim.add_link("r1", "r2", bottleneck_bps, 0.010, queue_limit_pkts=20)
    groups = [sim.add_group("src") for _ in LAYERS_BPS]
    sim.add_layered_source("src", groups, LAYERS_BPS, packet_size=1000)
    sinks = []
    for i, (acc, lvl) in enumerate(zip(access_bps, levels)):
        name = f"rcv{i + 1}"
        sim.add_node(name)
        sim.add_link("r2", name, acc, 0.005, queue_limit_pkts=20)
        sinks.append((name, acc, lvl, sim.add_sink(name, groups=groups, schedule=[(1.0, lvl)], record="arrivals")))
    return sim, sinks


def main(duration: float = 60.0, seed: int = 1) -> list[dict]:
    sim, sinks = build(seed)
    sim.run(duration)
    rows = []
    for name, acc, lvl, agent in sinks:
        arr = sim.sink_arrivals(agent)
        lost = int(sim.sink_losses(agent)["count"].sum())
        got = len(arr["time_ns"])
        t = arr["time_ns"] / 1e9
        keep = t >= 5.0
        thr = arr["size"][keep].sum() * 8 / (duration - 5.0)
        rows.append({"receiver": name, "access_kbps": acc / 1e3, "level": lvl,
                     "offered_kbps": sum(LAYERS_BPS[:lvl]) / 1e3, "throughput_kbps": thr / 1e3,
                     "received": got, "lost": lost, "loss": lost / max(got + lost, 1),
                     "worst_loss_1s": sim.sink_worst_window_loss(agent, 1.0)})
    return rows
