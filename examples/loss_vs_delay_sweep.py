"""Loss against link delay for one RLM receiver, as a sweep with a results store.

The set-up is RLM's topology (1) (McCanne et al. 1996, §4): a six-layer source (32·2^m kb/s)
and one RLM receiver on either side of a 1.5 Mb/s bottleneck with a 20-packet DropTail queue.
The sweep varies the bottleneck's delay; each (delay, seed) is one run, stored the moment it
finishes, so running the script again only runs what is missing. The plot shows the mean loss
and its 95 % Student-t interval over the seeds.

    python examples/loss_vs_delay_sweep.py --store out/loss-vs-delay --jobs 2
    python examples/loss_vs_delay_sweep.py --duration 60 --seeds 1-2 --delays 10ms,100ms   # quick

The scenario is built in code here: any object with ``name``, ``to_dict()``,
``with_params({key: value})`` and ``run(seed, out) -> {metric: scalar}`` can be swept, and so
can a scenario file or a built-in experiment (``castlab sweep rlm-fig9 --seeds 1-5``).
"""

from __future__ import annotations

import argparse
from pathlib import Path

import castlab
from castlab.units import parse_time

LAYERS_BPS = [32e3 * 2**m for m in range(6)]  # §4: 32·2^m kb/s, m = 0..5


class RlmBottleneck:
    """Topology (1) of RLM §4 with its bottleneck delay, queue and run length as parameters."""

    name = "rlm-bottleneck"

    def __init__(self, delay="10ms", rate_bps: float = 1.5e6, queue_pkts: int = 20, duration: float = 600.0,
                 start: float = 1.0):
        self.params = {"delay": delay, "rate_bps": rate_bps, "queue_pkts": queue_pkts, "duration": duration,
                       "start": start}

    def to_dict(self) -> dict:
        return {"name": self.name, **self.params}

    def with_params(self, params: dict) -> "RlmBottleneck":
        unknown = set(params) - set(self.params)
        if unknown:
            raise ValueError(f"{self.name}: unknown parameter(s) {sorted(unknown)} (known: {sorted(self.params)})")
        return RlmBottleneck(**{**self.params, **params})

    def run(self, seed: int, out: Path | None = None) -> dict:
        p = self.params
        sim = castlab.Simulator(seed=seed)
        sim.add_node("S")
        sim.add_node("R")
        sim.add_link("S", "R", float(p["rate_bps"]), parse_time(p["delay"], key="delay"),
                     queue_limit_pkts=int(p["queue_pkts"]))
        groups = [sim.add_group("S") for _ in LAYERS_BPS]
        control = sim.add_group("S")
        sim.add_layered_source("S", groups, LAYERS_BPS, packet_size=1000)
        rx = sim.add_rlm_receiver("R", groups, control, start=float(p["start"]), windows=[10.0])
        sim.run(float(p["duration"]))
        r = sim.rlm_records(rx)
        received, lost = int(r["received"]), int(r["lost"])
        return {"loss": lost / max(received + lost, 1), "received": received, "lost": lost,
                "final_level": int(r["level"][-1]), "worst_loss_10s": sim.rlm_worst_window_loss(rx, 10.0)}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--delays", default="5ms,10ms,20ms,40ms,80ms,160ms,320ms", help="bottleneck delays, comma-separated")
    ap.add_argument("--seeds", default="1-10")
    ap.add_argument("--duration", type=float, default=600.0, help="simulated seconds per run (§4: 10 minutes)")
    ap.add_argument("--jobs", type=int, default=None, help="worker processes (default: one per core)")
    ap.add_argument("--store", default="out/loss-vs-delay", help="results store")
    ap.add_argument("--plot", default=None, help="plot file (default: STORE/loss_vs_delay.png)")
    args = ap.parse_args(argv)

    delays = [d.strip() for d in args.delays.split(",")]
    rows = castlab.sweep(RlmBottleneck(duration=args.duration), {"delay": delays}, args.seeds,
                         store=args.store, jobs=args.jobs)
    failed = rows[rows["status"] != "ok"]
    if len(failed):
        print(failed[["delay", "seed", "error"]].to_string(index=False))
    agg = castlab.aggregate(rows, by=["delay"], metrics=["loss"])
    agg["delay_s"] = [parse_time(d) for d in agg["delay"]]
    agg = agg.sort_values("delay_s")
    print(agg[["delay", "n", "mean", "lo", "hi"]].to_string(index=False))

    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(5, 3.5))
    ax.errorbar(agg["delay_s"] * 1e3, agg["mean"] * 100, yerr=[(agg["mean"] - agg["lo"]) * 100,
                (agg["hi"] - agg["mean"]) * 100], fmt="o-", capsize=3)
    ax.set_xscale("log")
    ax.set_xlabel("bottleneck delay (ms)")
    ax.set_ylabel("loss (%)")
    ax.set_title(f"RLM, 1.5 Mb/s bottleneck: mean and 95 % CI, {int(agg['n'].max())} seeds", fontsize=9)
    fig.tight_layout()
    plot = Path(args.plot) if args.plot else Path(args.store) / "loss_vs_delay.png"
    plot.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(plot, dpi=120)
    print(f"plot: {plot}")
    return 1 if len(failed) else 0


if __name__ == "__main__":
    raise SystemExit(main())
