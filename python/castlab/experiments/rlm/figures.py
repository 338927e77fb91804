"""Figures 8-13 and §5 (RED) of the RLM paper, each a :class:`~castlab.experiments.figure.Figure`:
its cases (topology, sizes, seeds) as data, a measure of one run, the tables written as CSVs,
the claims decided from them on the mean over seeds (``claim_over_seeds``) and the plot. The
readings of the settings the paper leaves open come from ``rlm.declared``; the driver runs each
figure under every one of them and, for a phase-sensitive figure, deterministic and randomised.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Callable, Optional

import numpy as np
import pandas as pd

from castlab.experiments import streams
from castlab.experiments.common import (Claim, at_least, at_most, claim_over_seeds, in_range, reading_claim,
                                        t_interval, within)
from castlab.experiments.figure import Case, Figure, Measured
from castlab.experiments.plotting import figure, save
from castlab.experiments.rlm.levels import excursions_above_s, modal_level, settle_time_s
from castlab.experiments.rlm.metrics import (best_packing_bps, knee_latency, predicted_experiment_s, r_squared,
                                             worst_by, worst_per_run)
from castlab.experiments.rlm.topology import (ACCESS_BPS, DURATION_S, JOIN_LATENCY_S, LAYER_RATES_BPS, LEAVE_LATENCY_S,
                                              LINK_BPS, LINK_DELAY_S, PACKET_BYTES, PAIR_SHARE_BPS, QUEUE_PKTS,
                                              RED_MEMORY_S, RED_PARAMS, RED_W_Q, START_RANGE_S, WINDOWS_S,
                                              cumulative_rate_bps, topology1, topology2, topology3, topology4,
                                              topology4_queue_pkts)

from castlab.experiments.rlm.declared import (DETECTION_READINGS, DETECTION_SETTING, JOIN_TIMER_READINGS,
                                              JOIN_TIMER_SETTING, LEAVE_READINGS, LEAVE_SETTING, RED_WQ_READINGS,
                                              RED_WQ_SETTING)

PAPER = "McCanne et al. 1996"


def _common_params(**extra) -> dict:
    return {"link_bps": LINK_BPS, "queue_pkts": QUEUE_PKTS, "packet_bytes": PACKET_BYTES,
            "layer_rates_bps": LAYER_RATES_BPS, "start_range_s": list(START_RANGE_S),
            "join_latency_s": JOIN_LATENCY_S, "leave_latency_s": LEAVE_LATENCY_S, **extra}


def _loss_axes(ax, xlabel: str, log_x: bool = True):
    if log_x:
        ax.set_xscale("log")
    ax.set_yscale("log")  # as the paper draws its loss plots: the sub-1 % values stay readable
    ax.set_xlabel(xlabel)
    ax.set_ylabel("Loss Rate")
    ax.legend(title="window", fontsize=7)


WINDOW_STYLES = {1.0: ("o-", "1 sec"), 10.0: ("s--", "10 sec"), 100.0: ("^:", "100 sec")}


SEEDS_FULL = 5  # every claim on the mean over this many seeds, with a Student-t interval
SEEDS_QUICK = 1  # --quick: one seed, as before (its "interval" is that one value)


def _in_order(col: pd.Series) -> list:
    """The distinct values of a table's column, in the order of the cases that made them."""
    return list(dict.fromkeys(col.tolist()))


def _plot_worst(out: Path, stem: str, worst: pd.DataFrame, key: str, xlabel: str, title: str, n_seeds: int,
                ref: Optional[pd.DataFrame] = None, ref_label: str = "",
                paper: Optional[dict] = None) -> list[str]:
    """The worst-case loss per window against ``key``, on log-log axes. ``paper`` maps a window
    (s) to the paper's number for it, {"y": value or (lo, hi), "x": (from, to)} (x: where the
    paper states it; default the whole sweep), drawn in that window's colour."""
    fig, ax = figure()
    for k, w in enumerate(WINDOWS_S):
        style, lab = WINDOW_STYLES[w]
        y = np.where(worst[f"worst_{w:g}s"] > 0, worst[f"worst_{w:g}s"], np.nan)  # 0 has no place on a log axis
        ax.plot(worst[key], y, style, color=f"C{k}", label=lab)
        if ref is not None:
            ax.plot(ref[key], ref[f"worst_{w:g}s"].where(ref[f"worst_{w:g}s"] > 0), style, color=f"C{k}", alpha=0.35,
                    lw=0.8, label=f"{lab} ({ref_label})")
        v = (paper or {}).get(w)
        if v is not None:
            y, (x0, x1) = v["y"], v.get("x", (worst[key].min(), worst[key].max()))
            if isinstance(y, tuple):
                ax.fill_between([x0, x1], [y[0]] * 2, [y[1]] * 2, color=f"C{k}", alpha=0.12, label=f"paper, {lab}")
            else:
                ax.plot([x0, x1], [y, y], "-.", color=f"C{k}", lw=0.9, label=f"paper, {lab}")
    ax.set_title(title)
    _loss_axes(ax, xlabel)
    # two lines: on one, the label is taller than the axes and loses both ends
    ax.set_ylabel(f"Loss Rate\n(worst over receivers, mean of {n_seeds} seed{'s' if n_seeds > 1 else ''})")
    return save(fig, out, stem)


# ---------------------------------------------------------------- Figure 8


FIG8_SEEDS = 5  # the paper shows one run; the claims use this many seeds (the plot: the first)


def _fig8_run(seed: int, duration: float, reading: Optional[dict] = None) -> dict:
    net = topology1(seed, reading=reading)
    net.run(duration, f"rlm-fig8 seed {seed}")
    rx = net.rxs[0]
    r = net.sim.rlm_records(rx.agent)
    t = r["level_time_ns"] / 1e9
    lv = r["level"].astype(int)
    opt = rx.optimal
    settle = settle_time_s(t, lv, opt)
    reach = float(t[np.argmax(lv >= opt)]) if (lv >= opt).any() else float("nan")
    above = excursions_above_s(t, lv, opt, settle, duration)
    ex = pd.DataFrame({"start_s": r["exp_start_ns"] / 1e9, "level": r["exp_level"], "outcome": r["exp_outcome"],
                       "end_s": np.where(r["exp_end_ns"] == np.iinfo(np.uint64).max, np.nan, r["exp_end_ns"] / 1e9)})
    after = ex[ex["start_s"] > settle].sort_values("start_s")
    gaps = np.diff(after["start_s"].to_numpy())
    return {"seed": seed, "start_s": rx.start_s, "optimal": opt, "settle_s": settle,
            "held_level": modal_level(t, lv, rx.start_s, duration), "time_to_optimal_s": reach - rx.start_s,
            "longest_experiment_s": max(above) if above else float("nan"),
            "mean_experiment_s": float(np.mean(above)) if above else float("nan"),
            "experiments_after_settling": int(len(after)),
            "last_over_first_gap": gaps[-1] / gaps[0] if len(gaps) >= 2 else float("nan"),
            "_t": t, "_lv": lv, "_ex": ex}


def _fig8_cases(quick: bool) -> list[Case]:
    duration = 300.0 if quick else DURATION_S
    # the first seed's run also gives the sample path the figure draws (its trace files)
    return [Case({"duration": duration, "trace": k == 0}) for k in range(2 if quick else FIG8_SEEDS)]


def _fig8_measure(seed: int, duration: float, trace: bool, reading: Optional[dict] = None) -> Any:
    run = _fig8_run(seed, duration, reading)
    if not trace:
        return run
    return Measured({**run, "_duration": duration},
                    {"level.csv": pd.DataFrame({"time_s": run["_t"], "level": run["_lv"]}),
                     "experiments.csv": run["_ex"]})


def _fig8_table(rows: list[dict]) -> dict:
    per_seed = pd.DataFrame([{k: v for k, v in r.items() if not k.startswith("_")} for r in rows])
    return {"fig8_seeds.csv": per_seed, "first": rows[0]}


def _fig8_plot(tables: dict, out: Path) -> list[str]:
    first = tables["first"]
    t, lv, duration = first["_t"], first["_lv"], first["_duration"]
    fig, ax = figure(6.0, 3.2)
    ax.step(np.append(t, duration), np.append(lv, lv[-1]), where="post", color="k", lw=1.0)
    ax.set_xlim(0, duration)
    ax.set_ylim(0, len(LAYER_RATES_BPS) + 1)
    ax.set_xlabel("Time (sec)")
    ax.set_ylabel("Layer #")
    ax.set_title(f"RLM sample path, topology (1), 10 ms (seed {first['seed']})")
    return save(fig, out, "fig8")


def _fig8_claims(tables: dict) -> list[Claim]:
    per_seed, opt = tables["fig8_seeds.csv"], tables["first"]["optimal"]
    return [
        at_least("reaches-optimal", "the receiver 'ramps up to the number of layers supported by the link', 5 layers "
                 "(992 kb/s fits in 1.5 Mb/s, 2016 kb/s does not): fraction of seeds whose level held longest after "
                 "the receiver's start is 5", 1.0, float((per_seed["held_level"] == opt).mean()), "fraction",
                 kind="paper"),
        claim_over_seeds(within, per_seed["time_to_optimal_s"], "time-to-optimal", "time from the receiver's start "
                         "to first reaching the optimal level: 'about half a minute'", 30.0, None, "s", abs_tol=15.0,
                         kind="paper",
               explanation="a new level is tried only after the last experiment's detection time; with the initial "
               "estimate 5 s ± 2 s (a 9 s timer) four steps take about 50 s, and ns-2's own RLM takes 49 s "
               "(docs/fidelity/rlm.md, 'reach level 5'); per seed: fig8_seeds.csv time_to_optimal_s"),
        at_most("experiment-under-1s", "'each join-experiment lasts less than a second': longest stay above the "
                "optimal level after settling, largest over seeds", 1.0, float(per_seed["longest_experiment_s"].max()),
                "s", kind="paper"),
        at_least("intervals-grow", "join-experiments 'at progressively larger time intervals': last gap between "
                 "experiments after settling over the first, smallest over seeds", 1.0,
                 float(per_seed["last_over_first_gap"].min()), "ratio", kind="paper"),
    ]


def _fig8_params(quick: bool, seed: int) -> dict:
    return _common_params(topology=1, link_delay_s=LINK_DELAY_S, duration_s=300.0 if quick else DURATION_S,
                          seeds=[seed + k for k in range(2 if quick else FIG8_SEEDS)])


def _fig8_summary(tables: dict) -> dict:
    first = tables["first"]
    return {"receiver_start_s": first["start_s"], "settle_s": first["settle_s"],
            "experiments_after_settling": first["experiments_after_settling"]}


FIG8 = Figure("rlm-fig8", PAPER, "Figure 8", "RLM subscription level over time, topology (1), 10 ms", _fig8_cases,
              _fig8_measure, _fig8_table, _fig8_claims, _fig8_plot, "", _fig8_params, summary=_fig8_summary,
              readings=DETECTION_READINGS, setting=DETECTION_SETTING)


# ---------------------------------------------------------------- Figure 9

FIG9_DELAYS_S = [0.001, 0.01, 0.1, 0.2, 0.5, 1.0, 2.0, 5.0, 10.0, 20.0]
FIG9_DELAYS_QUICK_S = [0.001, 0.01, 0.1, 1.0, 5.0]


def _loglog_slope(x: np.ndarray, y: np.ndarray) -> float:
    """Least-squares slope of log10(y) on log10(x) (a loss of 0 counts as 1e-6); NaN with fewer
    than two points."""
    if len(x) < 2:
        return float("nan")
    return float(np.polyfit(np.log10(x), np.log10(np.maximum(y, 1e-6)), 1)[0])


def _fig9_seed_stats(run: pd.DataFrame, delays: list[float]) -> dict:
    """One seed's statistics of Fig. 9: ``run`` holds that seed's runs, one row per delay (a
    single receiver, so its worst-case losses are the run's)."""
    r = run.set_index("delay_s").reindex(delays)
    dl = np.asarray(delays, float)
    row = {"w100_max_below_1s": float(r.loc[dl < 1.0, "worst_100s"].max()),
           "w1_min_to_100ms": float(r.loc[dl <= 0.1, "worst_1s"].min()),
           "w10_largest_over_10ms": float(r["worst_10s"].iloc[-1] / max(r.loc[0.01, "worst_10s"], 1e-9))
           if 0.01 in delays else float("nan"),
           "w10_loglog_slope": _loglog_slope(dl[dl >= 0.01], r.loc[dl >= 0.01, "worst_10s"].to_numpy(float))}
    for w in WINDOWS_S:
        row[f"knee_{w:g}s"] = knee_latency(dl, r[f"worst_{w:g}s"].to_numpy(float))
    low = [float(r.loc[d, "above_mean_s"] / predicted_experiment_s(d)) for d in delays if d < 1.0]
    row["experiment_max_dev"] = max(abs(x - 1.0) for x in low) if low and all(np.isfinite(low)) else float("nan")
    for d in delays:
        row[f"experiment_over_predicted_{d:g}s"] = float(r.loc[d, "above_mean_s"] / predicted_experiment_s(d))
    return row


def _fig9_setup(quick: bool) -> tuple[list[float], int, float]:
    """Delays, seeds and duration."""
    return (FIG9_DELAYS_QUICK_S if quick else FIG9_DELAYS_S), (SEEDS_QUICK if quick else SEEDS_FULL), \
        (300.0 if quick else DURATION_S)


def _fig9_cases(quick: bool) -> list[Case]:
    delays, n_seeds, duration = _fig9_setup(quick)
    return [Case({"delay_s": d, "duration": duration}, seed=k) for d in delays for k in range(n_seeds)]


def _fig9_measure(seed: int, delay_s: float, duration: float, reading: Optional[dict] = None) -> pd.DataFrame:
    df = _receiver_table_run(topology1, (seed,), {"delay_s": delay_s, "reading": reading}, duration,
                             f"rlm-fig9 delay {delay_s:g} s seed {seed}")
    df["delay_s"], df["seed"] = delay_s, seed
    return df


def _fig9_table(rows: list[pd.DataFrame]) -> dict:
    data = pd.concat(rows, ignore_index=True)
    delays, seeds = _in_order(data["delay_s"]), _in_order(data["seed"])
    # Every statistic below is computed per seed over that seed's sweep (fig9_seeds.csv); each
    # claim is decided on the mean over seeds (rules and tolerances as for one seed).
    ps = pd.DataFrame([{"seed": s, **_fig9_seed_stats(data[data["seed"] == s], delays)} for s in seeds])
    return {"fig9_runs.csv": data, "fig9.csv": worst_by(data, "delay_s"), "fig9_seeds.csv": ps}


def _fig9_plot(tables: dict, out: Path) -> list[str]:
    data = tables["fig9_runs.csv"]
    delays = _in_order(data["delay_s"])
    return _plot_worst(out, "fig9", tables["fig9.csv"], "delay_s", "Link Latency (sec)",
                       "Latency scalability, topology (1)", len(_in_order(data["seed"])),
                       paper={1.0: {"y": (0.10, 0.20), "x": (min(delays), 0.1)},
                              100.0: {"y": 0.01, "x": (min(delays), 0.5)}})


def _fig9_claims(tables: dict) -> list[Claim]:
    ps, delays = tables["fig9_seeds.csv"], _in_order(tables["fig9_runs.csv"]["delay_s"])
    claims = [
        claim_over_seeds(at_most, ps["w100_max_below_1s"], "w100-under-1pct", "'for the large measurement window "
                          "(100 sec) and low delays (< 1 sec), the worst-case loss rates are under 1%' (per seed the "
                          "max over those delays)", 0.01, None, "loss fraction", kind="paper", worst="max",
                          explanation="the 500 ms point is the largest in every seed, 1.0-1.5 % (fig9_runs.csv "
                          "worst_100s at delay_s 0.5; fig9_seeds.csv w100_max_below_1s), 0.2-0.7 % below it; ns-2's "
                          "own RLM on the same set-up gives 1.5 % there (docs/fidelity/rlm.md, the ns-2 table)"),
        claim_over_seeds(in_range, ps["w1_min_to_100ms"], "w1-10-20pct-low-delay", "'the short-term worst-case loss "
                          "rate (window of 1 sec) ranges from 10 to 20% even for latencies below 100 ms' (per seed the "
                          "smallest of the delays up to 100 ms)", 0.10, 0.20, None, "loss fraction", kind="paper",
                          explanation="an experiment costs about 20 drops (one queue) against 120-250 packets a "
                          "second, which caps the 1 s window near 6-7.5 % at 1-10 ms (fig9.csv worst_1s, mean of the "
                          "seeds; fig9_seeds.csv w1_min_to_100ms); ns-2's own RLM gives 5.8 % and 6.7 % there "
                          "(docs/fidelity/rlm.md)"),
    ]
    # The knee: "roughly where measurement window size is twice the link latency". Rule, fixed
    # before looking at the sweep: the computed knee (largest fall of the log-log slope) lies
    # within a factor 2 of W/2, i.e. in [W/4, W]: for W = 1 s that admits 0.5 and 1 s, for
    # W = 10 s 5 and 10 s, two of the ten sweep points each. Per seed, then the mean.
    for w in WINDOWS_S:
        if w / 2 <= max(delays) / 2:  # the 100 s curve's knee (50 s) lies beyond the sweep
            claims.append(claim_over_seeds(
                in_range, ps[f"knee_{w:g}s"], f"knee-{w:g}s", f"{w:g} s window: 'each curve has a knee that occurs "
                "roughly where measurement window size is twice the link latency': the knee (largest fall of the "
                f"log-log slope, per seed) lies within a factor 2 of W/2 = {w / 2:g} s", w / 4, w, None, "s",
                kind="paper"))
    claims.append(claim_over_seeds(at_least, ps["w10_loglog_slope"], "loss-grows-with-latency", "'the impact of "
                                    "packet loss is ... proportional to the link latency': slope of log10(10 s window "
                                    "worst-case loss) on log10(latency) from 10 ms up, per seed (at least 0.5; "
                                    "proportional is 1)", 0.5, None, "slope", kind="paper",
                                    explanation="the 10 s worst-case loss grows more slowly than in proportion to the "
                                    "latency over the sweep (fig9_seeds.csv w10_loglog_slope; per delay fig9.csv "
                                    "worst_10s)"))
    # §4.3: "the duration of the join-experiment is roughly twice the link latency plus the queue
    # build-up time". Rule, fixed before looking: per delay, the run's mean stay above the optimum
    # after settling, over predicted_experiment_s(delay); "roughly" is within 25 %, at every
    # delay under 1 s (the range Fig. 9's text calls low delays): per seed the largest
    # deviation over those delays, then the mean over seeds.
    claims.append(claim_over_seeds(at_most, ps["experiment_max_dev"], "experiment-twice-latency-plus-queue", "'the "
                                    "duration of the join-experiment is roughly twice the link latency plus the queue "
                                    "build-up time': largest relative deviation (per seed, over the delays under 1 s) "
                                    "of the mean time above the optimum from 2 x latency + 20-packet fill at 516 kb/s "
                                    "excess + one full queue's delay", 0.25, None, "fraction", kind="paper"))
    return claims


def _fig9_params(quick: bool, seed: int) -> dict:
    delays, n_seeds, duration = _fig9_setup(quick)
    return _common_params(topology=1, delays_s=delays, seeds=[seed + k for k in range(n_seeds)], duration_s=duration,
                          aggregate="claims: each statistic per seed (fig9_seeds.csv), mean over seeds with a 95 % "
                          "Student-t interval; fig9.csv and the plot: per delay the mean over seeds")


def _fig9_summary(tables: dict) -> dict:
    data, ps = tables["fig9_runs.csv"], tables["fig9_seeds.csv"]
    delays = _in_order(data["delay_s"])
    dur = data.groupby("delay_s")["above_mean_s"].mean()
    return {"knees_s_mean_over_seeds": {f"{w:g}": float(ps[f"knee_{w:g}s"].mean()) for w in WINDOWS_S},
            "experiment_mean_s": {f"{d:g}": float(dur.get(d, np.nan)) for d in delays},
            "experiment_predicted_s": {f"{d:g}": predicted_experiment_s(d) for d in delays},
            "experiment_over_predicted_mean_over_seeds": {
                f"{d:g}": float(ps[f"experiment_over_predicted_{d:g}s"].mean()) for d in delays}}


FIG9 = Figure("rlm-fig9", PAPER, "Figure 9", "worst-case loss (1/10/100 s windows) against link latency", _fig9_cases,
              _fig9_measure, _fig9_table, _fig9_claims, _fig9_plot, "", _fig9_params, summary=_fig9_summary,
              readings=LEAVE_READINGS, setting=LEAVE_SETTING)


# ---------------------------------------------------------------- Figures 10 and 11

FIG10_SIZES = [1, 2, 5, 10, 20, 50, 100]
FIG10_SIZES_QUICK = [1, 5, 20]


def _receiver_table_run(build: Callable, args: tuple, kw: dict, duration: float, label: str,
                        table_kw: Optional[dict] = None) -> pd.DataFrame:
    """One run of the experiments' seed loops, as map_runs hands it to a worker: build the
    topology, run it, return its receiver table."""
    net = build(*args, **kw)
    net.run(duration, label)
    return net.receiver_table(**(table_kw or {}))


def _topology2_measure(seed: int, size: int, duration: float, label: str, queue: str = "droptail",
                       red: Optional[dict] = None, reading: Optional[dict] = None) -> pd.DataFrame:
    """One run of topology (2) with ``size`` receivers: its receiver table, with the size and seed."""
    df = _receiver_table_run(topology2, (seed, size), {"queue": queue, "red": red, "reading": reading}, duration,
                             f"{label} n={size} seed {seed}")
    df["size"], df["seed"] = size, seed
    return df


def _size_cases(sizes: list[int], n_seeds: int, duration: float, **params) -> list[Case]:
    """Every size under every seed (run k of each size under seed + k)."""
    return [Case({"size": n, "duration": duration, **params}, seed=k) for n in sizes for k in range(n_seeds)]


def _fig10_setup(quick: bool) -> tuple[list[int], int, float]:
    return (FIG10_SIZES_QUICK if quick else FIG10_SIZES), (SEEDS_QUICK if quick else SEEDS_FULL), \
        (300.0 if quick else DURATION_S)


def _fig10_cases(quick: bool) -> list[Case]:
    return _size_cases(*_fig10_setup(quick), label="rlm-fig10")


def _fig10_table(rows: list[pd.DataFrame]) -> dict:
    data = pd.concat(rows, ignore_index=True)
    sizes, seeds = _in_order(data["size"]), _in_order(data["seed"])
    # Per seed (fig10_seeds.csv): the run's worst-case loss at the largest session, its ratio to
    # the 1-receiver run's, and the fraction of receivers at the optimum; claims on the mean.
    runs = worst_per_run(data, "size").set_index(["seed", "size"])
    per_seed = []
    for s in seeds:
        big, one = runs.loc[(s, sizes[-1])], runs.loc[(s, sizes[0])]
        sub = data[data["seed"] == s]
        per_seed.append({"seed": s, "w100_largest": float(big["worst_100s"]),
                         **{f"ratio_{w:g}s": float(big[f"worst_{w:g}s"] / max(one[f"worst_{w:g}s"], 1e-4))
                            for w in WINDOWS_S},
                         "at_optimum": float((sub["held_level"] == sub["optimal"]).mean())})
    return {"fig10_receivers.csv": data, "fig10.csv": worst_by(data, "size"), "fig10_seeds.csv": pd.DataFrame(per_seed)}


def _fig10_plot(tables: dict, out: Path) -> list[str]:
    return _plot_worst(out, "fig10", tables["fig10.csv"], "size", "Session Size",
                       "Session-size scalability, topology (2)", len(tables["fig10_seeds.csv"]),
                       paper={100.0: {"y": 0.01}})


def _fig10_claims(tables: dict) -> list[Claim]:
    ps, sizes = tables["fig10_seeds.csv"], _in_order(tables["fig10_receivers.csv"]["size"])
    # "Even for the largest sessions the long-term loss rate is only about 1%". Rule, fixed
    # before looking: "about 1 %" is within a factor 2 either way, 0.5-2 % (the old ±1 point
    # accepted no loss at all).
    claims = [
        claim_over_seeds(in_range, ps["w100_largest"], "w100-about-1pct-largest", "'even for the largest sessions "
                          "the long-term loss rate is only about 1%': 100 s window worst-case loss at the largest "
                          f"session ({sizes[-1]}), within a factor 2 of 1 %", 0.005, 0.02, None, "loss fraction",
                          kind="paper",
                          explanation="our long-term loss is lower than the paper's (fig10_seeds.csv w100_largest, "
                          "fig10.csv worst_100s); ns-2's own RLM gives 0.56 % at 100 receivers against our 0.3 %: its "
                          "join-timer keeps running outside the steady state, so it runs more experiments to level 6 "
                          "(docs/fidelity/rlm.md, topologies 2 and 3)"),
    ]
    for w in WINDOWS_S:
        claims.append(claim_over_seeds(at_most, ps[f"ratio_{w:g}s"], f"size-independent-{w:g}s", f"{w:g} s window: "
                                        "'the worst-case loss rates are essentially independent of the session "
                                        f"size': loss at {sizes[-1]} receivers over loss at 1, per seed (factor at "
                                        "most 3)", 3.0, None, "ratio", kind="paper"))
    claims.append(claim_over_seeds(at_least, ps["at_optimum"], "all-reach-optimum", "'in all of the single-source "
                                    "simulations, each receiver eventually reaches the optimal level': fraction of "
                                    "receivers (per seed) whose level held longest over the second half of the run is "
                                    "the optimum, on the worst seed", 1.0, None, "fraction", kind="paper",
                                    worst="min", explanation="in the worst seed some receiver holds another level "
                                    "longest over the second half (fig10_seeds.csv at_optimum; per receiver "
                                    "fig10.csv held_level against optimal)"))
    return claims


def _fig10_params(quick: bool, seed: int) -> dict:
    sizes, n_seeds, duration = _fig10_setup(quick)
    return _common_params(topology=2, sizes=sizes, seeds=[seed + k for k in range(n_seeds)], duration_s=duration,
                          link_delay_s=LINK_DELAY_S,
                          aggregate="per run the max over receivers of their worst-case loss; claims: each "
                          "statistic per seed (fig10_seeds.csv), mean over seeds with a 95 % Student-t interval; "
                          "fig10.csv and the plot: per size the mean over seeds")


FIG10 = Figure("rlm-fig10", PAPER, "Figure 10", "worst-case loss against session size, topology (2)", _fig10_cases,
               _topology2_measure, _fig10_table, _fig10_claims, _fig10_plot, "", _fig10_params,
               readings=JOIN_TIMER_READINGS, setting=JOIN_TIMER_SETTING)


# ---------------------------------------------------------------- Figure 11

FIG11_SIZES = FIG10_SIZES
FIG11_SIZES_QUICK = [1, 5, 20]


def _log_fit_gain(conv: pd.DataFrame) -> float:
    """R² of the line of convergence time on log10(size) minus R² of the line on size."""
    x, y = conv["size"].to_numpy(float), conv["convergence_s"].to_numpy(float)
    if len(np.unique(x)) < 2:
        return float("nan")
    return float(r_squared(np.log10(x), y) - r_squared(x, y))


def _fig11_setup(quick: bool) -> tuple[list[int], int, float]:
    return (FIG11_SIZES_QUICK if quick else FIG11_SIZES), (2 if quick else 4), (300.0 if quick else DURATION_S)


def _fig11_cases(quick: bool) -> list[Case]:
    return _size_cases(*_fig11_setup(quick), label="rlm-fig11")


def _fig11_table(rows: list[pd.DataFrame]) -> pd.DataFrame:
    return pd.concat(rows, ignore_index=True)


def _converged(data: pd.DataFrame) -> tuple[pd.DataFrame, pd.Series]:
    """The receivers that converge, and the median convergence time per size."""
    conv = data[np.isfinite(data["convergence_s"])]
    return conv, conv.groupby("size")["convergence_s"].median()


def _fig11_slope(conv: pd.DataFrame) -> float:
    x, y = conv["size"].to_numpy(float), conv["convergence_s"].to_numpy(float)
    return np.polyfit(np.log10(x), y, 1)[0]


def _fig11_plot(data: pd.DataFrame, out: Path) -> list[str]:
    conv, med = _converged(data)
    fig, ax = figure()
    jitter = streams.rng(0, "plot-jitter").uniform(0.92, 1.08, len(conv))  # spread the points only
    ax.plot(conv["size"] * jitter, conv["convergence_s"], "o", ms=2.5, mfc="none", color="k", alpha=0.6)
    ax.plot(med.index, med.values, "-", color="C3", label="median")
    ax.set_xscale("log")
    ax.set_xlabel("Session Size")
    ax.set_ylabel("Convergence Time (sec)")
    ax.set_title("Rate of convergence, topology (2)")
    ax.legend()
    return save(fig, out, "fig11")


def _fig11_claims(data: pd.DataFrame) -> list[Claim]:
    conv, med = _converged(data)
    sizes, seeds = _in_order(data["size"]), _in_order(data["seed"])
    slope = _fig11_slope(conv)
    return [
        at_least("grows-with-size", "'we expect longer convergence times' as the session grows: slope of the "
                 "least-squares line of convergence time on log10(size), over every receiver", 0.0, slope,
                 "s per decade", kind="paper"),
        claim_over_seeds(at_least, [_log_fit_gain(conv[conv["seed"] == sd]) for sd in seeds], "log-not-linear",
                         "'linear trend in the log plot': the line on log10(size) fits better than a line on size "
                         "(R² difference, per seed)", 0.0, None, "R²", kind="paper",
                         explanation="the two fits are close: the R² difference's interval over seeds reaches "
                         "both signs (fig11.csv, one row per receiver and seed)"),
        at_most("sublinear", f"far from linear growth: median convergence at {sizes[-1]} receivers over that at 1, "
                f"at most sqrt({sizes[-1]}) (a linear dependence would give {sizes[-1]})", float(np.sqrt(sizes[-1])),
                med.iloc[-1] / med.iloc[0], "ratio", kind="derived"),
        at_least("all-converge", "'each receiver eventually reaches the optimal level': fraction of receivers that "
                 "converge within the run", 1.0, float(np.isfinite(data["convergence_s"]).mean()), "fraction",
                 kind="paper"),
    ]


def _fig11_params(quick: bool, seed: int) -> dict:
    sizes, n_seeds, duration = _fig11_setup(quick)
    return _common_params(topology=2, sizes=sizes, seeds=[seed + k for k in range(n_seeds)], duration_s=duration,
                          convergence="time after the receiver's start when it reaches the optimal level and never "
                          "goes below it again (excursions above, the join-experiments, allowed)")


def _fig11_summary(data: pd.DataFrame) -> dict:
    conv, med = _converged(data)
    return {"median_convergence_s": {int(k): float(v) for k, v in med.items()},
            "slope_s_per_decade": float(_fig11_slope(conv))}


# Figure 11 is phase-sensitive (docs/fidelity/phase.md): its claims are decided over
# phase-randomised runs, the overhead one 1000-byte packet at topology (2)'s 1.5 Mb/s.
FIG11_PHASE_S = PACKET_BYTES * 8 / LINK_BPS

FIG11 = Figure("rlm-fig11", PAPER, "Figure 11", "convergence time of each receiver against session size",
               _fig11_cases, _topology2_measure, _fig11_table, _fig11_claims, _fig11_plot, "fig11.csv", _fig11_params,
               summary=_fig11_summary, phase_s=FIG11_PHASE_S)


# ---------------------------------------------------------------- Figure 12

FIG12_SIZES = [2, 4, 10, 20, 50, 100]
FIG12_SIZES_QUICK = [2, 10]


def _size_slopes(run: pd.DataFrame) -> dict:
    """Least-squares slope of log10(worst-case loss) on log10(session size), per window, over one
    seed's sweep (``run``: one row per size); NaN with fewer than two sizes."""
    lx = np.log10(run["size"].to_numpy(float))
    if len(lx) < 2:
        return {w: float("nan") for w in WINDOWS_S}
    return {w: float(np.polyfit(lx, np.log10(np.maximum(run[f"worst_{w:g}s"].to_numpy(float), 1e-6)), 1)[0])
            for w in WINDOWS_S}


def _shown_positive(per_seed: pd.Series, id: str, statement: str, unit: str, explanation: str = "") -> Claim:
    """A sign claim over seeds: decided on the mean (>= 0), ``undecided`` when the mean's 95 %
    t interval reaches both signs (``claim_over_seeds``)."""
    vals = per_seed.to_numpy(float)
    vals = vals[np.isfinite(vals)]
    return claim_over_seeds(at_least, vals, id, statement, 0.0, None, unit, kind="paper", explanation=explanation)


# Figure 12 is phase-sensitive by the rule of docs/fidelity/phase.md (two verdicts moved with
# phase randomisation on), so its claims are decided over phase-randomised runs, the overhead
# one packet time of the slowest bottleneck (the B/2 link), for every sender, the homogeneous
# reference's too; the deterministic runs go to phase-off/, their values beside the verdicts.
FIG12_PHASE_S = 8 * PACKET_BYTES / (LINK_BPS / 2)


def _fig12_setup(quick: bool) -> tuple[list[int], int, float]:
    return (FIG12_SIZES_QUICK if quick else FIG12_SIZES), (SEEDS_QUICK if quick else SEEDS_FULL), \
        (300.0 if quick else DURATION_S)


def _fig12_cases(quick: bool) -> list[Case]:
    """Topology (3) at every size and seed, then the homogeneous reference (topology (2)) at the
    same sizes and seeds."""
    sizes, n_seeds, duration = _fig12_setup(quick)
    return [Case({"size": n, "duration": duration, "homogeneous": h}, seed=k)
            for h in (False, True) for n in sizes for k in range(n_seeds)]


def _fig12_measure(seed: int, size: int, duration: float, homogeneous: bool) -> dict:
    if homogeneous:
        df = _topology2_measure(seed, size, duration, "rlm-fig12 homogeneous")
    else:
        df = _receiver_table_run(topology3, (seed, size // 2, size - size // 2), {}, duration,
                                 f"rlm-fig12 n={size} seed {seed}")
        df["size"], df["seed"] = size, seed
    return {"homogeneous": homogeneous, "receivers": df}


def _fig12_table(rows: list[dict]) -> dict:
    data = pd.concat([r["receivers"] for r in rows if not r["homogeneous"]], ignore_index=True)
    homo_data = pd.concat([r["receivers"] for r in rows if r["homogeneous"]], ignore_index=True)
    seeds = _in_order(data["seed"])
    # Per seed (fig12_seeds.csv): the ratio to the homogeneous runs of the same seed and sizes,
    # the size slopes of that seed's sweep, and each set's fraction at its optimum.
    het_runs, homo_runs = worst_per_run(data, "size"), worst_per_run(homo_data, "size")
    rows = []
    for s in seeds:
        h, o = het_runs[het_runs["seed"] == s].sort_values("size"), homo_runs[homo_runs["seed"] == s]
        sub = data[data["seed"] == s]
        sl = _size_slopes(h)
        row = {"seed": s}
        for w in WINDOWS_S:
            col = f"worst_{w:g}s"
            row[f"over_homogeneous_{w:g}s"] = float(h[col].mean() / max(o[col].mean(), 1e-9))
        for w in WINDOWS_S:
            row[f"size_slope_{w:g}s"] = sl[w]
        row["slope_1s_minus_100s"] = sl[1.0] - sl[100.0]
        for g in ("B", "B/2"):
            gs = sub[sub["group"] == g]
            row[f"at_optimum_{g}"] = float((gs["held_level"] == gs["optimal"]).mean())
            row[f"above_mean_s_{g}"] = float(gs["above_mean_s"].median())
        rows.append(row)
    return {"fig12_receivers.csv": data, "fig12.csv": worst_by(data, "size"),
            "fig12_homogeneous.csv": worst_by(homo_data, "size"), "fig12_seeds.csv": pd.DataFrame(rows)}


def _fig12_plot(tables: dict, out: Path) -> list[str]:
    return _plot_worst(out, "fig12", tables["fig12.csv"], "size", "Session Size",
                       "Bandwidth heterogeneity, topology (3)", len(tables["fig12_seeds.csv"]),
                       ref=tables["fig12_homogeneous.csv"], ref_label="homogeneous")


def _fig12_claims(tables: dict) -> list[Claim]:
    ps, data = tables["fig12_seeds.csv"], tables["fig12_receivers.csv"]
    # "The worst-case loss rates are comparable though somewhat higher than the homogeneous
    # cases". Rule, fixed before looking: per window, the ratio of the means over sizes lies in
    # [1, 2]: above 1 ("higher"), and at most double ("comparable", "somewhat"); the old ×1-×3
    # admitted three times the loss. Per seed, then the mean.
    claims = []
    for w in WINDOWS_S:
        claims.append(claim_over_seeds(
            in_range, ps[f"over_homogeneous_{w:g}s"], f"comparable-a-bit-above-{w:g}s", f"{w:g} s window: worst-case "
            "loss 'comparable though somewhat higher than the homogeneous cases' (topology 2, same sizes and seed): "
            "ratio of the means over sizes, per seed, 1 to 2", 1.0, 2.0, None, "ratio", kind="paper",
            explanation="the B/2 set lifts it (×1.8-2.2 the homogeneous loss, mean of the seeds), the B set alone "
            "is ×0.92-0.94 (fig12_receivers.csv by group): an experiment to level 5 overloads the 750 kb/s link by 242 kb/s only, so its 20-packet queue "
            "takes 0.66 s to fill instead of 0.31 s and the failed experiment lasts about twice as long "
            "(fig12_seeds.csv above_mean_s_B/2 against above_mean_s_B, medians over receivers); ns-2's own RLM on "
            "topology 3 is 1.6-4.3 times its homogeneous loss too (docs/fidelity/rlm.md, topologies 2 and 3)"))
    # "The dependence on session size is more notable on short-term time scales". Rule, fixed
    # before looking: the least-squares slope of log10(worst-case loss) on log10(size) over the
    # sweep is larger for the 1 s window than for the 100 s window, and positive. Per seed's
    # sweep; decided on the mean over seeds, undecided while its 95 % t interval reaches 0.
    claims.append(_shown_positive(ps["size_slope_1s"], "short-term-grows-with-size", "'the dependence on "
                                  "session size is more notable on short-term time scales': slope of log worst-case "
                                  "loss on log session size, 1 s window, per seed", "decades per decade",
                                  explanation="the 1 s worst-case loss barely moves with the session size: the "
                                  "seeds' slopes straddle 0 (fig12_seeds.csv size_slope_1s; per size fig12.csv "
                                  "worst_1s)"))
    claims.append(_shown_positive(ps["slope_1s_minus_100s"], "short-term-more-size-dependent", "'the "
                                  "dependence on session size is more notable on short-term time scales': slope (log "
                                  "loss on log size) of the 1 s window minus that of the 100 s window, per seed",
                                  "decades per decade",
                                    explanation="both windows grow alike with the session size (fig12_seeds.csv "
                                    "size_slope_1s, size_slope_100s); ns-2's own RLM on topology 3 does not show it "
                                    "either: from 5+5 to 50+50 receivers its 1 s window grows 1.5 times, its 100 s "
                                    "window 2.3 times (docs/fidelity/rlm.md, topologies 2 and 3)"))
    for g in ("B", "B/2"):
        opt = int(data.loc[data["group"] == g, "optimal"].iloc[0])
        claims.append(claim_over_seeds(at_least, ps[f"at_optimum_{g}"], f"set-{g}-optimum", f"receivers at {g} "
                                        f"settle at their own optimum (level {opt}), 'the algorithm works well even "
                                        "in the presence of large sets of receivers with different bandwidth "
                                        "constraints': fraction (per seed) whose level held longest over the second "
                                        "half is the optimum, on the worst seed", 1.0, None, "fraction",
                                        kind="paper", worst="min",
                                        explanation=f"in the worst seed some receiver at {g} holds another level "
                                        f"longest over the second half (fig12_seeds.csv at_optimum_{g}; per "
                                        "receiver fig12_receivers.csv held_level against optimal)"))
    return claims


def _fig12_params(quick: bool, seed: int) -> dict:
    sizes, n_seeds, duration = _fig12_setup(quick)
    return _common_params(topology=3, sizes=sizes,
                          split="half at B = 1.5 Mb/s, half behind a B/2 link",
                          seeds=[seed + k for k in range(n_seeds)], duration_s=duration,
                          aggregate="per run the max over receivers of their worst-case loss; claims: each "
                          "statistic per seed (fig12_seeds.csv), mean over seeds with a 95 % Student-t interval; "
                          "fig12.csv, fig12_homogeneous.csv and the plot: per size the mean over seeds")


def _fig12_summary(tables: dict) -> dict:
    ps = tables["fig12_seeds.csv"]
    return {"size_slopes_mean_over_seeds": {f"{w:g}s": float(ps[f"size_slope_{w:g}s"].mean()) for w in WINDOWS_S}}


FIG12 = Figure("rlm-fig12", PAPER, "Figure 12", "worst-case loss with receivers at B and B/2, topology (3)",
               _fig12_cases, _fig12_measure, _fig12_table, _fig12_claims, _fig12_plot, "", _fig12_params,
               summary=_fig12_summary, phase_s=FIG12_PHASE_S)


# ---------------------------------------------------------------- Figure 13

FIG13_PAIRS = [1, 2, 4, 8, 16, 32]
FIG13_PAIRS_QUICK = [1, 4]


def _fig13_setup(quick: bool) -> tuple[list[int], int, float]:
    return (FIG13_PAIRS_QUICK if quick else FIG13_PAIRS), (SEEDS_QUICK if quick else SEEDS_FULL), \
        (300.0 if quick else DURATION_S)


def _fig13_cases(quick: bool) -> list[Case]:
    pair_counts, n_seeds, duration = _fig13_setup(quick)
    return [Case({"pairs": p, "duration": duration}, seed=k) for p in pair_counts for k in range(n_seeds)]


def _fig13_measure(seed: int, pairs: int, duration: float, reading: Optional[dict] = None) -> dict:
    """One run of topology (4): its receiver table (each pair's rate over the run's second half)
    and the run's shares."""
    df = _receiver_table_run(topology4, (seed, pairs), {"reading": reading}, duration,
                             f"rlm-fig13 pairs={pairs} seed {seed}", {"tail_from_s": duration / 2})
    df["pairs"], df["seed"] = pairs, seed
    rates = df["tail_rate_bps"].to_numpy()
    cap = pairs * PAIR_SHARE_BPS
    run = {"pairs": pairs, "seed": seed, "capacity_bps": cap, "aggregate_bps": rates.sum(),
           "best_packing_bps": best_packing_bps(pairs, cap), "min_pair_bps": rates.min(),
           "max_pair_bps": rates.max(), "jain": rates.sum() ** 2 / (pairs * np.sum(rates**2)),
           "queue_pkts": topology4_queue_pkts(pairs)}
    return {"receivers": df, "run": run, "duration": duration}


def _fig13_table(rows: list[dict]) -> dict:
    data = pd.concat([r["receivers"] for r in rows], ignore_index=True)
    runs_df = pd.DataFrame([r["run"] for r in rows])
    runs_df["utilisation"] = runs_df["aggregate_bps"] / runs_df["capacity_bps"]
    runs_df["of_best_packing"] = runs_df["aggregate_bps"] / runs_df["best_packing_bps"]
    runs_df["max_over_min"] = runs_df["max_pair_bps"] / runs_df["min_pair_bps"]
    seeds = _in_order(data["seed"])
    # "No pair was ever starved of bandwidth": a pair is starved when its rate is below the
    # nominal rate of 3 layers (224 kb/s); the universal statement is decided on the worst seed.
    starve_bps = cumulative_rate_bps(3)
    # Per seed (fig13_seeds.csv) over that seed's pair counts; claims on the mean over seeds.
    per_run = worst_per_run(data, "pairs")
    per_seed = []
    for s in seeds:
        r, w = runs_df[runs_df["seed"] == s], per_run[per_run["seed"] == s]
        m = r[r["pairs"] > 1]
        per_seed.append({"seed": s, "w100_max": float(w["worst_100s"].max()), "w10_max": float(w["worst_10s"].max()),
                         "of_best_packing_min": float(r["of_best_packing"].min()),
                         "min_pair_over_bar": float(r["min_pair_bps"].min() / starve_bps),
                         "unfair_fraction": float((m["max_over_min"] > 1.5).mean()) if len(m) else float("nan")})
    return {"fig13_receivers.csv": data, "fig13_shares.csv": runs_df, "fig13.csv": worst_by(data, "pairs"),
            "fig13_seeds.csv": pd.DataFrame(per_seed), "duration_s": rows[0]["duration"]}


def _fig13_plot(tables: dict, out: Path) -> list[str]:
    data, duration = tables["fig13_receivers.csv"], tables["duration_s"]
    n_seeds = len(_in_order(data["seed"]))
    files = _plot_worst(out, "fig13", tables["fig13.csv"], "pairs", "Number of Source/Receiver Pairs",
                        "Superposition, topology (4)", n_seeds, paper={100.0: {"y": 0.01}})
    fig, ax = figure()
    ax.plot(data["pairs"], data["tail_rate_bps"] / 1e3, "o", mfc="none", color="k", ms=3,
            label=f"per-pair rate (every pair of {n_seeds} seed{'s' if n_seeds > 1 else ''})")
    ax.axhline(PAIR_SHARE_BPS / 1e3, color="0.5", ls="--", label="fair share")
    ax.set_xscale("log")
    ax.set_xlabel("Number of Source/Receiver Pairs")
    ax.set_ylabel(f"rate over the last {duration - duration / 2:g} s (kb/s)")
    ax.set_title("Per-pair shares, topology (4)")
    ax.legend()
    return files + save(fig, out, "fig13_shares")


def _fig13_claims(tables: dict) -> list[Claim]:
    ps, runs_df = tables["fig13_seeds.csv"], tables["fig13_shares.csv"]
    claims = [
        claim_over_seeds(at_most, ps["w100_max"], "w100-under-1pct", "'long-term loss rates are under 1%': 100 s "
                          "window worst-case loss at every number of pairs (per seed the largest)", 0.01, None,
                          "loss fraction", kind="paper", worst="max",
                          explanation="the largest 100 s worst-case loss over pair counts exceeds 1 % in the worst "
                          "seed (fig13_seeds.csv w100_max; per run fig13.csv)"),
        claim_over_seeds(in_range, ps["w10_max"], "w10-few-pct", "'medium-term rates are a few percent': 10 s window "
                          "worst-case loss (per seed the largest over pair counts) in 1-5 %", 0.01, 0.05, None,
                          "loss fraction", kind="paper",
                          explanation="with the 5 s initial detection timer the 10 s worst-case loss sits near 4 % "
                          "and its interval over seeds reaches past 5 % (reading-initial-detection-timer-5-s/"
                          "fig13_seeds.csv w10_max)"),
        claim_over_seeds(at_least, ps["of_best_packing_min"], "utilisation", "'each simulation converged to an "
                          "aggregate link utilization close to one': aggregate rate over the best packing of whole "
                          "levels into the bottleneck (per seed the smallest over pair counts)", 0.9, None, "fraction",
                          kind="paper"),
        claim_over_seeds(at_least, ps["min_pair_over_bar"], "no-pair-starved", "'no pair was ever starved of "
                          "bandwidth': smallest pair's rate over 224 kb/s, the nominal rate of 3 layers, per seed the "
                          "smallest over pair counts, on the worst seed", 1.0, None, "ratio", kind="paper",
                          worst="min", explanation="in the worst seed some pair holds fewer than 3 layers' nominal "
                          "rate over the last part of the run (fig13_seeds.csv min_pair_over_bar; per pair "
                          "fig13_shares.csv)"),
    ]
    if len(runs_df[runs_df["pairs"] > 1]):
        claims.append(claim_over_seeds(at_least, ps["unfair_fraction"], "often-unfair", "'the bandwidth allocation "
                                        "to each pair was often unfair': fraction of a seed's runs with 2+ pairs where "
                                        "the best-served pair gets over 1.5x the worst-served", 0.5, None, "fraction",
                                        kind="paper"))
    return claims


def _fig13_params(quick: bool, seed: int) -> dict:
    pair_counts, n_seeds, duration = _fig13_setup(quick)
    return _common_params(topology=4, pairs=pair_counts, seeds=[seed + k for k in range(n_seeds)], duration_s=duration,
                          bottleneck_bps_per_pair=PAIR_SHARE_BPS, access_bps=ACCESS_BPS,
                          queue="2 x bandwidth x 60 ms round trip, at least 20 packets",
                          shares_window_s=[duration / 2, duration],
                          aggregate="per run the max over receivers of their worst-case loss; claims: each "
                          "statistic per seed (fig13_seeds.csv), mean over seeds with a 95 % Student-t interval; "
                          "fig13.csv and the loss plot: per pair count the mean over seeds")


FIG13 = Figure("rlm-fig13", PAPER, "Figure 13", "independent pairs sharing a scaled bottleneck, topology (4)",
               _fig13_cases, _fig13_measure, _fig13_table, _fig13_claims, _fig13_plot, "", _fig13_params,
               readings=DETECTION_READINGS, setting=DETECTION_SETTING)


# ---------------------------------------------------------------- §5: RED

RED_SIZES = [1, 5, 20, 50]
RED_SIZES_QUICK = [1, 5]


def _red_setup(quick: bool) -> tuple[list[int], int, float, list[float]]:
    """Sizes, seeds, duration and the w_q readings run (quick: the primary only)."""
    return (RED_SIZES_QUICK if quick else RED_SIZES), (SEEDS_QUICK if quick else SEEDS_FULL), \
        (300.0 if quick else DURATION_S), ([RED_W_Q] if quick else sorted(set(RED_WQ_READINGS) | {RED_W_Q}))


def _red_variant(w_q: Optional[float]) -> str:
    """A queue's name in the tables: "droptail", "red" (RED at the primary weight) or
    "red_wq_<w_q>" (the other readings)."""
    return "droptail" if w_q is None else "red" if w_q == RED_W_Q else f"red_wq_{w_q:g}"


def _red_cases(quick: bool) -> list[Case]:
    """DropTail, then RED at every weight, each at every size and seed (same seeds)."""
    sizes, n_seeds, duration, weights = _red_setup(quick)
    return [Case({"size": n, "duration": duration, "w_q": w_q}, seed=k)
            for w_q in [None, *weights] for n in sizes for k in range(n_seeds)]


def _red_measure(seed: int, size: int, duration: float, w_q: Optional[float]) -> dict:
    name = _red_variant(w_q)
    df = _topology2_measure(seed, size, duration, f"rlm-red {name}", queue="droptail" if w_q is None else "red",
                            red=None if w_q is None else {"red_w_q": w_q})
    df["queue"] = name
    return {"receivers": df, "w_q": w_q}


def _red_table(rows: list[dict]) -> dict:
    data = pd.concat([r["receivers"] for r in rows], ignore_index=True)
    weights = [w for w in dict.fromkeys(r["w_q"] for r in rows) if w is not None]
    names, seeds = _in_order(data["queue"]), _in_order(data["seed"])
    worst, runs = {}, {}
    for name in names:
        d = data[data["queue"] == name]
        runs[name] = worst_per_run(d, "size")
        worst[name] = worst_by(d, "size")
        worst[name]["queue"] = name
    # Per seed (red_seeds.csv): each RED variant's mean over sizes over DropTail's, same seed.
    per_seed = []
    for s in seeds:
        dt = runs["droptail"][runs["droptail"]["seed"] == s]
        row = {"seed": s}
        for name in names:
            if name == "droptail":
                continue
            v = runs[name][runs[name]["seed"] == s]
            for w in WINDOWS_S:
                col = f"worst_{w:g}s"
                row[f"{name}_over_droptail_{w:g}s"] = float(v[col].mean() / max(dt[col].mean(), 1e-9))
        per_seed.append(row)
    ps = pd.DataFrame(per_seed)
    # The w_q band (red_wq.csv): per weight and window, the ratio's mean over seeds, its 95 % t
    # interval and how many seeds have RED at or below DropTail.
    band = []
    for wq in weights:
        for w in WINDOWS_S:
            v = ps[f"{_red_variant(wq)}_over_droptail_{w:g}s"].to_numpy(float)
            mean, lo, hi = t_interval(list(v)) if v.size >= 2 else (float(v[0]),) * 3
            band.append({"w_q": wq, "memory_s": 8 * PACKET_BYTES / LINK_BPS / wq, "window_s": w,
                         "red_over_droptail_mean": mean, "t95_lo": lo, "t95_hi": hi,
                         "seeds_red_not_worse": int((v <= 1.0).sum()), "seeds": int(v.size)})
    return {"red_receivers.csv": data, "red.csv": pd.concat(worst.values(), ignore_index=True),
            "red_seeds.csv": ps, "red_wq.csv": pd.DataFrame(band), "worst": worst, "weights": weights}


def _red_plot(tables: dict, out: Path) -> list[str]:
    worst, band, n_seeds = tables["worst"], tables["red_wq.csv"], len(tables["red_seeds.csv"])
    files = _plot_worst(out, "red", worst["red"], "size", "Session Size",
                        f"RED (w_q {RED_W_Q:g}) vs DropTail, topology (2)", n_seeds,
                        ref=worst["droptail"], ref_label="DropTail")
    fig, ax = figure()
    for k, w in enumerate(WINDOWS_S):
        b = band[band["window_s"] == w]
        ax.errorbar(b["w_q"], b["red_over_droptail_mean"], yerr=[b["red_over_droptail_mean"] - b["t95_lo"],
                    b["t95_hi"] - b["red_over_droptail_mean"]], fmt="o-", color=f"C{k}", capsize=3,
                    label=f"{w:g} s window")
    ax.axhline(1.0, color="0.4", ls="--", lw=1, label="DropTail")
    ax.axvline(RED_W_Q, color="0.6", ls=":", lw=1, label=f"chosen w_q {RED_W_Q:g}")
    ax.set_xscale("log")
    ax.set_xlabel("RED averaging weight w_q")
    ax.set_ylabel(f"RED / DropTail worst-case loss (mean of {n_seeds} seeds, 95 % t)")
    ax.set_title("RED's averaging weight, topology (2)")
    ax.legend(fontsize=8)
    return files + save(fig, out, "red_wq")


def _red_claims(tables: dict) -> list[Claim]:
    """The paper gives no RED parameters: every weight of RED_WQ_READINGS is a reading it allows,
    RED_W_Q the primary; the claim holds only when RED improves at every weight."""
    ps, band, weights = tables["red_seeds.csv"], tables["red_wq.csv"], tables["weights"]
    order = [RED_W_Q] + [x for x in weights if x != RED_W_Q]
    claims = []
    for w in WINDOWS_S:
        b = band[band["window_s"] == w]
        by_wq = ", ".join(f"w_q {r.w_q:g} ×{r.red_over_droptail_mean:.2f}" for r in b.itertuples())
        # one row per (reading, seed): the reading's ratio in that seed
        runs = pd.concat([pd.DataFrame({"reading": f"w_q {wq:g}", "seed": ps["seed"],
                                        "ratio": ps[f"{_red_variant(wq)}_over_droptail_{w:g}s"]}) for wq in order],
                         ignore_index=True)
        claims.append(reading_claim(
            f"red-improves-{w:g}s", f"{w:g} s window: 'using RED gateways ... the loss rate performance indeed "
            "improves': RED's worst-case loss over DropTail's, ratio of the means over session sizes, per seed",
            "at_most", (1.0,), runs, "ratio", "ratio", setting=RED_WQ_SETTING,
            explanation=f"§5 gives no RED parameters and the result turns on w_q: RED over DropTail by weight "
            f"{by_wq} (red_wq.csv, red_wq.png; per seed red_seeds.csv). With a long memory the average lags the "
            "queue a join-experiment fills in a fraction of a second, so RED drops late or not at all"))
    return claims


def _red_params(quick: bool, seed: int) -> dict:
    sizes, n_seeds, duration, weights = _red_setup(quick)
    return _common_params(topology=2, sizes=sizes, seeds=[seed + k for k in range(n_seeds)], duration_s=duration,
                          red=RED_PARAMS, red_memory_s=RED_MEMORY_S, red_wq_readings=weights,
                          red_queue_limit_pkts=QUEUE_PKTS, variants=[_red_variant(w) for w in [None, *weights]],
                          red_on="every link (the bottleneck S-X is the only one that congests)",
                          aggregate="per run the max over receivers of their worst-case loss; claims: the ratio "
                          "per seed (red_seeds.csv), mean over seeds with a 95 % Student-t interval; red.csv and the "
                          "plot: per size the mean over seeds")


def _red_summary(tables: dict) -> dict:
    band = tables["red_wq.csv"]
    return {"red_over_droptail_band_over_wq": {
        f"{w:g}s": [float(band.loc[band["window_s"] == w, "red_over_droptail_mean"].min()),
                    float(band.loc[band["window_s"] == w, "red_over_droptail_mean"].max())] for w in WINDOWS_S}}


# §5: "using RED gateways ... the loss rate performance indeed improves". Topology (2) with RED
# on every link against DropTail, same seeds and session sizes. The paper gives no RED
# parameters, and the answer turns on the averaging weight w_q: every weight of RED_WQ_READINGS
# is a reading the paper allows, RED_W_Q (a memory of about 27 ms, RED_MEMORY_S) the primary. A
# paper claim (one per window) holds when RED's worst-case loss over DropTail's (per seed, the
# ratio of the means over session sizes; the claim on the mean over seeds) is at most 1 at every
# weight (red_wq.csv, red_wq.png); quick mode runs the primary weight only.
RED = Figure("rlm-red", PAPER, "§5 (RED)", "RED instead of DropTail on topology (2): loss improves", _red_cases,
             _red_measure, _red_table, _red_claims, _red_plot, "", _red_params, summary=_red_summary)

FIGURES = [FIG8, FIG9, FIG10, FIG11, FIG12, FIG13, RED]
