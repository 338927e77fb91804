"""RLM receivers on a custom tree against a TCP flow, over three seeds, with plots.

The scenario is built in Python (the same schema as a TOML file, see examples/tree.toml): a
six-layer source at 32·2^m kb/s (RLM §4) and a TCP NewReno transfer share a 1.5 Mb/s
bottleneck; below it, RLM receivers sit behind access links of 128 kb/s to 1 Mb/s. Each seed
draws the receivers' start times on [30, 120] s (§4); a run shorter than 240 s scales that
window to [duration / 8, duration / 2] and says so, so that every receiver has half the run at
least to climb (at 60 s most would otherwise never start). The script writes, into --out:

- seed-N/: each run's summary.json and CSVs (as `castlab scenario run` writes them);
- flows.csv: the per-receiver / per-flow table of every seed;
- levels.png: each RLM receiver's subscription level over time, one panel per seed;
- rates.png: mean rate of each receiver and of TCP, mean over seeds with a 95 % Student-t
  interval, beside the rate of the level that would fit each access link without TCP.

Run:  python examples/rlm_vs_tcp_tree.py --out out/rlm_vs_tcp
Short (as the tests do): python examples/rlm_vs_tcp_tree.py --duration 60 --out /tmp/x
(durations under 20 s are refused: TCP starts at 10 s)
"""

from __future__ import annotations

import argparse
import csv
from pathlib import Path

from castlab import Scenario
from castlab.seeds import parse_seeds

LAYERS = 6
BASE_BPS = 32e3  # RLM §4: layer m carries 32·2^m kb/s
ACCESS = {"r128": "128kbps", "r256": "256kbps", "r512": "512kbps", "r1M": "1Mbps"}
START_S = (30.0, 120.0)  # RLM §4: receivers start at uniform times on [30, 120] s
TCP_START_S = 10.0
MIN_DURATION_S = 2 * TCP_START_S


def start_window(duration_s: float) -> tuple[float, float]:
    """The receivers' start window: §4's [30, 120] s when the run leaves them as long again
    after the last start (240 s or more), else scaled to [duration / 8, duration / 2]."""
    if duration_s >= 2 * START_S[1]:
        return START_S
    return (duration_s / 8, duration_s / 2)


def scenario(duration_s: float) -> Scenario:
    if duration_s < MIN_DURATION_S:
        raise ValueError(f"--duration {duration_s:g}: at least {MIN_DURATION_S:g} s (TCP starts at "
                         f"{TCP_START_S:g} s, the receivers after it)")
    lo, hi = start_window(duration_s)
    nodes = ["src", "core", "sink", *ACCESS]
    links = [
        {"name": "bottleneck", "a": "src", "b": "core", "rate": "1.5Mbps", "delay": "10ms", "queue_limit": 20},
        {"a": "core", "b": "sink", "rate": "10Mbps", "delay": "2ms", "queue_limit": 50},
    ]
    links += [{"a": "core", "b": n, "rate": rate, "delay": "10ms", "queue_limit": 20} for n, rate in ACCESS.items()]
    return Scenario.from_dict({
        "name": "rlm-vs-tcp-tree",
        "duration": duration_s,
        "windows": ["1s", "10s"],
        "nodes": nodes,
        "links": links,
        "sessions": [{"name": "video", "source": "src", "layers": LAYERS, "base_rate": BASE_BPS,
                      "packet_size": 1000}],
        "receivers": [{"name": n, "node": n, "session": "video", "start": [lo, hi]} for n in ACCESS],
        "tcp": [{"name": "tcp", "src": "src", "dst": "sink", "start": TCP_START_S}],
        "monitors": [{"name": "bottleneck", "link": "bottleneck", "interval": "500ms"}],
    })


def best_rate_bps(capacity_bps: float) -> float:
    """The cumulative rate of the highest level that fits in `capacity_bps` (§4.1's optimum)."""
    rates = [BASE_BPS * 2**m for m in range(LAYERS)]
    total = 0.0
    for r in rates:
        if total + r > capacity_bps:
            break
        total += r
    return total or rates[0]


def main(argv: list[str] | None = None) -> dict:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--duration", type=float, default=600.0, help="simulated seconds per run (§4: 600)")
    p.add_argument("--seeds", default="1-3")
    p.add_argument("--out", default="out/rlm_vs_tcp_tree")
    args = p.parse_args(argv)

    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from castlab.stats import mean_interval
    from castlab.units import parse_rate

    out = Path(args.out)
    seeds = parse_seeds(args.seeds)
    try:
        sc = scenario(args.duration)
    except ValueError as e:
        p.error(str(e))
    if start_window(args.duration) != START_S:
        lo, hi = start_window(args.duration)
        print(f"note: {args.duration:g} s is shorter than 240 s: the receivers start on [{lo:g}, {hi:g}] s, not "
              f"§4's [{START_S[0]:g}, {START_S[1]:g}] s")
    flows: list[dict] = []
    fig, axes = plt.subplots(len(seeds), 1, figsize=(8, 2.2 * len(seeds)), sharex=True, squeeze=False)
    for ax, seed in zip(axes[:, 0], seeds):
        metrics = sc.run(seed, out / f"seed-{seed}")
        with open(out / f"seed-{seed}" / "flows.csv") as f:
            flows += [{"seed": seed, **r} for r in csv.DictReader(f)]
        with open(out / f"seed-{seed}" / "levels.csv") as f:
            levels = [r for r in csv.DictReader(f) if r["name"] in ACCESS]
        for name in ACCESS:
            pts = [(float(r["time_s"]), int(r["level"])) for r in levels if r["name"] == name]
            if pts:
                t, lv = zip(*(pts + [(args.duration, pts[-1][1])]))
                ax.step(t, lv, where="post", label=f"{name} ({ACCESS[name]})")
        ax.set_ylabel(f"level\nseed {seed}")
        ax.set_ylim(0, LAYERS + 0.5)
        print(f"seed {seed}: tcp {metrics['tcp.mean_rate_bps'] / 1e3:.0f} kb/s, "
              + ", ".join(f"{n} level {metrics[f'{n}.final_level']:.0f}" if metrics[f"{n}.final_level"] >= 1
                          else f"{n} not started" for n in ACCESS))
    axes[0, 0].legend(loc="upper left", fontsize=7, ncol=2)
    axes[-1, 0].set_xlabel("time (s)")
    fig.suptitle("RLM subscription levels beside a TCP transfer")
    fig.tight_layout()
    fig.savefig(out / "levels.png", dpi=110)
    plt.close(fig)

    with open(out / "flows.csv", "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(flows[0]))
        w.writeheader()
        w.writerows(flows)

    names = [*ACCESS, "tcp"]
    means, errs = [], []
    for n in names:
        m, lo, hi, _ = mean_interval([float(r["mean_rate_bps"]) for r in flows if r["name"] == n], nonnegative=True)
        means.append(m / 1e3)
        errs.append(((m - lo) / 1e3, (hi - m) / 1e3) if len(seeds) > 1 else (0.0, 0.0))
    fig, ax = plt.subplots(figsize=(7, 3.5))
    x = range(len(names))
    ax.bar(x, means, yerr=list(zip(*errs)), capsize=4, color=["tab:blue"] * len(ACCESS) + ["tab:orange"])
    ax.scatter(range(len(ACCESS)), [best_rate_bps(parse_rate(r)) / 1e3 for r in ACCESS.values()],
               marker="_", s=400, color="k", label="best level for the access link alone")
    ax.set_xticks(list(x), [f"{n}\n{ACCESS.get(n, 'bulk')}" for n in names])
    ax.set_ylabel("mean rate (kb/s)")
    ax.set_title(f"Mean rate over {len(seeds)} seeds (95 % t interval)" if len(seeds) > 1
                 else f"Mean rate, seed {seeds[0]} (one seed: no interval)")
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(out / "rates.png", dpi=110)
    plt.close(fig)
    print(f"wrote {out / 'levels.png'}, {out / 'rates.png'}, {out / 'flows.csv'}")
    return {"flows": flows, "out": out}


if __name__ == "__main__":
    main()
