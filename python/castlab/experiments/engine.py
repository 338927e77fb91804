"""Engine checks against theory (not from a paper): the simulator must get these right before
any protocol result built on it can be trusted."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from castlab import Simulator, run_with_progress
from castlab.experiments.common import at_most
from castlab.experiments.figure import Case, Figure, experiment
from castlab.experiments.plotting import figure, save
from castlab.scenario import Scenario


def _bottleneck_run(offered_bps: float, capacity_bps: float, seed: int, duration: float) -> dict:
    sim = Simulator(seed=seed)
    for n in ("src", "r1", "dst"):
        sim.add_node(n)
    sim.add_link("src", "r1", 100e6, 0.001, queue_limit_pkts=1000)
    sim.add_link("r1", "dst", capacity_bps, 0.010, queue_limit_pkts=20)
    sink = sim.add_sink("dst", port=5, record="arrivals")
    # Exact CBR (no jitter): the check is against a deterministic formula, so the source adds
    # no randomness of its own (a jittered source's count in a window wanders by ~sqrt(N/12)).
    sim.add_cbr("src", "dst", 5, offered_bps, packet_size=1000, jitter=False)
    warm = 5.0
    sim.run(warm)
    ch = sim.channel("r1", "dst")
    before = sim.channel_stats(ch)
    sim.run(duration)
    after = sim.channel_stats(ch)
    arr = sim.sink_arrivals(sink)
    keep = arr["time_ns"] / 1e9 > warm
    thr = arr["size"][keep].sum() * 8 / (duration - warm)
    arrivals = after["arrivals"] - before["arrivals"]
    loss = (after["drops_forced"] - before["drops_forced"]) / max(arrivals, 1)
    return {"offered_bps": offered_bps, "capacity_bps": capacity_bps, "throughput_bps": thr, "loss": loss,
            "events": sim.engine_stats()["events"]}


BOTTLENECK_BPS = 1.5e6
BOTTLENECK_RATIOS = [0.1, 0.25, 0.5, 0.75, 0.9, 0.97, 1.0, 1.03, 1.1, 1.25, 1.5, 2.0]


def _bottleneck_cases(quick: bool) -> list[Case]:
    duration = 30.0 if quick else 120.0
    return [Case({"offered_bps": r * BOTTLENECK_BPS, "capacity_bps": BOTTLENECK_BPS, "duration": duration})
            for r in BOTTLENECK_RATIOS]


def _bottleneck_measure(seed: int, offered_bps: float, capacity_bps: float, duration: float) -> dict:
    return _bottleneck_run(offered_bps, capacity_bps, seed, duration)


def _bottleneck_table(rows: list[dict]) -> pd.DataFrame:
    df = pd.DataFrame(rows)
    df["expected_bps"] = np.minimum(df["offered_bps"], df["capacity_bps"])
    df["rel_error"] = df["throughput_bps"] / df["expected_bps"] - 1
    df["expected_loss"] = np.maximum(0.0, 1 - df["capacity_bps"] / df["offered_bps"])
    return df


def _bottleneck_plot(df: pd.DataFrame, out: Path) -> list[str]:
    fig, ax = figure()
    ax.plot(df["offered_bps"] / 1e6, df["expected_bps"] / 1e6, "-", color="0.6", label="min(offered, capacity)")
    ax.plot(df["offered_bps"] / 1e6, df["throughput_bps"] / 1e6, "o", label="measured")
    ax.set_xlabel("offered load (Mb/s)")
    ax.set_ylabel("throughput (Mb/s)")
    ax.set_title("CBR through a 1.5 Mb/s DropTail bottleneck")
    ax.legend()
    return save(fig, out, "bottleneck")


def _bottleneck_claims(df: pd.DataFrame) -> list:
    return [
        at_most("throughput-within-1pct", "throughput = min(offered, capacity) within 1 % at every load",
                0.01, float(df["rel_error"].abs().max()), "relative error", kind="sanity"),
        at_most("loss-matches-excess", "loss fraction = max(0, 1 - C/offered) within 0.005 at every load",
                0.005, float((df["loss"] - df["expected_loss"]).abs().max()), "absolute error", kind="sanity"),
    ]


def _bottleneck_params(quick: bool, seed: int) -> dict:
    return {"capacity_bps": BOTTLENECK_BPS, "duration_s": 30.0 if quick else 120.0, "ratios": BOTTLENECK_RATIOS,
            "packet_size": 1000, "queue_limit_pkts": 20}


BOTTLENECK = Figure("engine-bottleneck", "theory", "engine check",
                    "CBR through a bottleneck: throughput = min(offered, capacity)", _bottleneck_cases,
                    _bottleneck_measure, _bottleneck_table, _bottleneck_claims, _bottleneck_plot, "bottleneck.csv",
                    _bottleneck_params)


def red_theory_fraction(pb: float) -> float:
    """Long-run early-drop fraction at a fixed p_b under Floyd and Jacobson's count-based
    spacing (p_a = p_b / (1 - count p_b)): one over the mean gap between drops."""
    if pb <= 0:
        return 0.0
    if pb >= 1:
        return 1.0
    survive, mean_gap, n = 1.0, 0.0, 1
    while survive > 1e-15:
        denom = 1 - n * pb
        p = 1.0 if denom <= 0 else min(1.0, pb / denom)
        mean_gap += n * survive * p
        survive *= 1 - p
        n += 1
    return 1 / mean_gap


def red_scenario(load: float, capacity_bps: float, red: tuple[float, float, float, float], duration: float) -> Scenario:
    """engine-red's set-up as a scenario: jittered CBR at `load` times the capacity into a RED
    queue (`red`: min_th, max_th, max_p, w_q) on the way to its sink."""
    min_th, max_th, max_p, w_q = red
    return Scenario.from_dict({
        "name": f"engine-red load {load:g}", "duration": duration, "nodes": ["src", "r1", "dst"],
        "links": [{"name": "access", "a": "src", "b": "r1", "rate": 1e9, "delay": 0.001, "queue_limit": 10_000},
                  {"name": "red", "a": "r1", "b": "dst", "rate": capacity_bps, "delay": 0.005, "queue": "red",
                   "queue_limit": 500, "red_min_th": min_th, "red_max_th": max_th, "red_max_p": max_p,
                   "red_w_q": w_q}],
        "cbr": [{"name": "load", "src": "src", "dst": "dst", "port": 5, "rate": load * capacity_bps,
                 "packet_size": 1000, "jitter": True}],
    })


RED_BPS = 10e6
RED_PARAMS = (5.0, 15.0, 0.1, 0.002)  # min_th, max_th, max_p, w_q
RED_WARM_S = 10.0
RED_LOADS = [1.01, 1.03, 1.06, 1.1, 1.14, 1.18]


def _red_cases(quick: bool) -> list[Case]:
    duration = 40.0 if quick else 150.0
    return [Case({"load": load, "duration": duration}) for load in RED_LOADS]


def _red_measure(seed: int, load: float, duration: float) -> dict:
    min_th, max_th, max_p, _ = RED_PARAMS
    sim = red_scenario(load, RED_BPS, RED_PARAMS, duration).build(seed)
    ch, _ = sim.scenario_handles.channels["red"]
    sim.run(RED_WARM_S)
    before = sim.channel_stats(ch)
    sim.monitor_channel(ch, 0.01)
    run_with_progress(sim, duration, label=f"red load {load}")
    after = sim.channel_stats(ch)
    series = sim.channel_series(ch)
    arrivals = after["arrivals"] - before["arrivals"]
    early = after["drops_early"] - before["drops_early"]
    forced = after["drops_forced"] - before["drops_forced"]
    mean_avg = float(np.mean(series["qavg"]))
    pb = max_p * (mean_avg - min_th) / (max_th - min_th)
    # The average wanders; the formula is non-linear near min_th, so the reference is the
    # formula averaged over the sampled averages (every 10 ms).
    pbs = np.clip(max_p * (series["qavg"] - min_th) / (max_th - min_th), 0.0, None)
    theory = float(np.mean([red_theory_fraction(p) for p in pbs]))
    return {"load": load, "arrivals": arrivals, "early_drops": early, "forced_drops": forced,
            "measured": early / arrivals, "mean_avg": mean_avg, "p_b": pb,
            "theory_at_mean_avg": red_theory_fraction(pb), "theory": theory, "conservation": 1 - load ** -1}


def _red_plot(df: pd.DataFrame, out: Path) -> list[str]:
    min_th, max_th, max_p, w_q = RED_PARAMS
    fig, ax = figure()
    grid = np.linspace(min_th, max_th, 200)
    ax.plot(grid, [red_theory_fraction(max_p * (a - min_th) / (max_th - min_th)) for a in grid], "-",
            color="0.5", label="theory (count-spaced $p_a$)")
    ax.plot(df["mean_avg"], df["measured"], "o", label="measured early-drop fraction")
    ax.set_xlabel("average queue (packets)")
    ax.set_ylabel("drop probability")
    ax.set_title(f"RED: min_th={min_th:g}, max_th={max_th:g}, max_p={max_p:g}, w_q={w_q:g}")
    ax.legend()
    return save(fig, out, "red")


def _red_claims(df: pd.DataFrame) -> list:
    rel = ((df["measured"] - df["theory"]) / df["theory"]).abs()
    return [
        at_most("red-drop-vs-formula", "measured early-drop fraction within 10 % of the formula applied to the "
                "sampled average queue, at every load", 0.10, float(rel.max()), "relative error", kind="derived"),
        at_most("red-no-forced-drops", "RED keeps the average below max_th: no forced drops", 0,
                int(df["forced_drops"].sum()), "packets", kind="sanity"),
    ]


def _red_params(quick: bool, seed: int) -> dict:
    min_th, max_th, max_p, w_q = RED_PARAMS
    return {"capacity_bps": RED_BPS, "min_th": min_th, "max_th": max_th, "max_p": max_p, "w_q": w_q,
            "duration_s": 40.0 if quick else 150.0, "warmup_s": RED_WARM_S, "loads": RED_LOADS}


RED = Figure("engine-red", "Floyd & Jacobson 1993", "engine check",
             "RED's measured drop probability against its formula", _red_cases, _red_measure, pd.DataFrame,
             _red_claims, _red_plot, "red.csv", _red_params)


EXPERIMENTS = [experiment(BOTTLENECK), experiment(RED)]
