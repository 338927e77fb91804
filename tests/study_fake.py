"""A small scenario that follows the scenario contract (castlab.scenario lands on another
branch): CBR through one bottleneck, a few simulated seconds. Used by tests/scenario/test_sweep.py."""

from __future__ import annotations

import copy
import json
import time
from pathlib import Path

import castlab
from castlab.units import parse_rate, parse_time

DEFAULTS = {"link.rate": "1Mbps", "link.delay": "10ms", "link.queue": 10, "cbr.load": 1.2, "duration": 4.0,
            "sleep": 0.0, "fail_seed": -1, "pad_kb": 0}


class FakeScenario:
    def __init__(self, name: str = "fake-bottleneck", values: dict | None = None):
        self.name = name
        self.values = dict(DEFAULTS if values is None else values)

    def to_dict(self) -> dict:
        return {"name": self.name, **self.values}

    def with_params(self, params: dict) -> "FakeScenario":
        v = copy.deepcopy(self.values)
        for k, x in params.items():
            if k not in v:
                raise ValueError(f"unknown scenario key {k!r}")
            v[k] = x
        return FakeScenario(self.name, v)

    def run(self, seed: int, out: Path | None = None) -> dict:
        v = self.values
        if seed == v["fail_seed"]:
            raise RuntimeError(f"seed {seed} fails on purpose")
        time.sleep(float(v["sleep"]))
        rate = parse_rate(v["link.rate"])
        sim = castlab.Simulator(seed=seed)
        for n in ("src", "r1", "dst"):
            sim.add_node(n)
        sim.add_link("src", "r1", 100e6, 0.001, queue_limit_pkts=1000)
        sim.add_link("r1", "dst", rate, parse_time(v["link.delay"]), queue_limit_pkts=int(v["link.queue"]))
        sink = sim.add_sink("dst", port=5)
        sim.add_cbr("src", "dst", 5, float(v["cbr.load"]) * rate, packet_size=1000, jitter=True)
        sim.run(float(v["duration"]))
        s = sim.sink_summary(sink)
        ch = sim.channel_stats(sim.channel("r1", "dst"))
        metrics = {"received": int(s["received"]), "drops": int(ch["drops_forced"]),
                   "loss": ch["drops_forced"] / max(ch["arrivals"], 1),
                   "throughput_bps": s["received"] * 8000 / float(v["duration"])}
        if out is not None:
            Path(out, "metrics.json").write_text(json.dumps(metrics))
            if v["pad_kb"]:  # bulky outputs, for the tests of a store whose disk fills
                Path(out, "pad.bin").write_bytes(bytes([seed % 256]) * (int(v["pad_kb"]) * 1024))
        print(f"fake run seed {seed}: {metrics}")
        return metrics
