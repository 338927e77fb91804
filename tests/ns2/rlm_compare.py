"""ns-2's own RLM (McCanne's MMG/ns, run by tests/ns2/rlm.tcl) against castlab's RLM on RLM
topology (1) of McCanne, Jacobson and Vetterli (SIGCOMM 1996, §4): the same link, queue,
layered source, receiver start time and measurement, for the README's comparison table and for
tests/test_rlm.py.

    python tests/ns2/rlm_compare.py [--delays 0.01,0.1,1] [--seeds 1-5] [--duration 600] [--csv F]

Each run is reduced to the same numbers: the time from the receiver's start to its first reach
of the optimal level (5), the join-experiments to level 6 after that, how long each lasted,
the worst-case loss over 1, 10 and 100 s windows (§4.2's metric, computed by castlab's
``worst_window_loss`` on both runs' arrival and loss processes) and the overall loss fraction.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

import castlab
from castlab.experiments import rlm as X

SCRIPT = Path(__file__).with_name("rlm.tcl")
WINDOWS_S = (1.0, 10.0, 100.0)
OPTIMAL = X.optimal_level(X.LINK_BPS)  # 5 layers (992 kb/s) fit in 1.5 Mb/s

# ns-2's rlm_param values as shipped, and castlab's RlmConfig fields set to them (for the
# "castlab with ns-2's constants" variant). ns-2's relaxation floor init-tj is T_min = 5 s in both.
NS2_AS_SHIPPED = {"alpha": 2.0, "beta": 0.75, "init-tj": 5.0, "max": 60.0, "init-td": 5.0, "init-td-var": 2.0}
PAPER_FOR_NS2 = {"max": 600, "beta": 2 / 3}
CASTLAB_WITH_NS2_CONSTANTS = {"beta": 0.75, "t_max": 60.0, "detection_init": 5.0, "detection_dev_init": 2.0}


@dataclass
class Run:
    """One receiver's trace: start, level changes, arrivals and detected losses (seconds)."""

    start_s: float
    level_t: np.ndarray
    level: np.ndarray
    arr_t: np.ndarray
    loss_t: np.ndarray
    loss_n: np.ndarray
    duration_s: float
    extra: dict = field(default_factory=dict)


def run_ns2(delay_s: float, duration_s: float, seed: int, start_s: float = -1.0, rearm: bool = True,
            params: dict | None = None, timeout_s: float = 120.0) -> Run:
    """ns-2's RLM on topology (1). ``params`` overrides rlm_param; ``rearm`` re-arms the
    join-timer after a drop (see rlm.tcl: without it ns-2's MMG never re-probes the top layer)."""
    extra_args = [f"{k}={v}" for k, v in (params or {}).items()] + [f"rearm={int(rearm)}"]
    with tempfile.TemporaryDirectory() as d:
        trace = Path(d) / "link.tr"
        cmd = ["ns", str(SCRIPT), repr(float(delay_s)), repr(float(duration_s)), str(seed), repr(float(start_s)),
               str(trace), *extra_args]
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout_s, cwd=d)
        if p.returncode != 0 or "\nend " not in p.stdout:
            raise RuntimeError(f"ns failed ({p.returncode}): {p.stderr[-2000:]}")
        start, lt, lv, ls_t, ls_n, par = None, [], [], [], [], {}
        for line in p.stdout.splitlines():
            f = line.split()
            if not f:
                continue
            if f[0] == "start":
                start = float(f[1])
            elif f[0] == "level" and int(f[2]) > 0:
                lt.append(float(f[1]))
                lv.append(int(f[2]))
            elif f[0] == "loss":
                ls_t.append(float(f[1]))
                ls_n.append(int(f[3]))
            elif f[0] == "param":
                par[f[1]] = float(f[2])
        if start is None:
            raise RuntimeError("ns run printed no receiver start")
        # arrivals: data packets received at R (node 1) over the bottleneck after the start
        arr, drops = [], 0
        with open(trace) as fh:
            for line in fh:
                if line[0] == "r":
                    f = line.split(None, 5)
                    if f[4] == "cbr" and f[3] == "1":
                        t = float(f[1])
                        if t >= start:
                            arr.append(t)
                elif line[0] == "d":
                    drops += 1
    return Run(start, np.array(lt), np.array(lv), np.array(arr), np.array(ls_t), np.array(ls_n, dtype=np.int64),
               duration_s, {"params": par, "bottleneck_drops": drops})


def run_castlab(delay_s: float, duration_s: float, seed: int, start_s: float, **cfg) -> Run:
    """castlab's RLM on the same topology (1) (``castlab.experiments.rlm``'s set-up) with the
    receiver starting at ``start_s``; ``cfg`` are RlmConfig fields."""
    net = X.Net(seed)
    net.nodes("S", "R")
    net.link("S", "R", delay_s=delay_s)
    s = net.session("S")
    groups, control = net.sessions[s]
    a = net.sim.add_rlm_receiver("R", groups, control, start=start_s, **cfg)
    net.sim.run(duration_s)
    r = net.sim.rlm_records(a)
    return Run(start_s, r["level_time_ns"] / 1e9, r["level"].astype(int), r["arr_time_ns"] / 1e9,
               r["loss_time_ns"] / 1e9, r["loss_count"].astype(np.int64), duration_s)


def worst_windows(run: Run) -> dict[float, float]:
    """§4.2's worst-case windowed loss over the merged arrival and loss processes."""
    t = np.concatenate([run.loss_t, run.arr_t])
    rec = np.concatenate([np.zeros(len(run.loss_t), np.int64), np.ones(len(run.arr_t), np.int64)])
    lost = np.concatenate([run.loss_n, np.zeros(len(run.arr_t), np.int64)])
    tn = np.round(t * 1e9).astype(np.int64)
    o = np.lexsort((rec, tn))  # a loss before the arrival that revealed it, as castlab does
    return {w: castlab.worst_window_loss(tn[o].tolist(), rec[o].tolist(), lost[o].tolist(), w) for w in WINDOWS_S}


def summarize(run: Run) -> dict:
    t, lv = run.level_t, run.level
    reach_i = np.nonzero(lv >= OPTIMAL)[0]
    reach = float(t[reach_i[0]] - run.start_s) if reach_i.size else float("nan")
    settle = X.settle_time_s(t, lv, OPTIMAL)
    # excursions above the optimum after first reaching it: the join-experiments to level 6
    above = []
    if reach_i.size:
        for i in range(reach_i[0], len(t)):
            if lv[i] > OPTIMAL:
                end = t[i + 1] if i + 1 < len(t) else run.duration_s
                above.append(end - t[i])
    held = X._modal_level(t, lv, run.start_s, run.duration_s) if len(t) else 0
    lost, rec = int(run.loss_n.sum()), len(run.arr_t)
    row = {"start_s": run.start_s, "reach_opt_s": reach, "settle_s": settle - run.start_s, "held_level": held,
           "exps_above": len(above), "max_above_s": max(above) if above else float("nan"),
           "mean_above_s": float(np.mean(above)) if above else float("nan"),
           "received": rec, "lost": lost, "loss_frac": lost / max(lost + rec, 1)}
    for w, v in worst_windows(run).items():
        row[f"worst_{w:g}s"] = v
    return row


VARIANTS = {
    "ns2": lambda d, T, s, st: run_ns2(d, T, s, st),
    "ns2-paper": lambda d, T, s, st: run_ns2(d, T, s, st, params=PAPER_FOR_NS2),
    "castlab": lambda d, T, s, st: run_castlab(d, T, s, st),
    "castlab-ns2const": lambda d, T, s, st: run_castlab(d, T, s, st, **CASTLAB_WITH_NS2_CONSTANTS),
}


def compare(delays, seeds, duration_s, variants=tuple(VARIANTS)):
    import pandas as pd

    rows = []
    for d in delays:
        for s in seeds:
            # the start time: drawn once per (seed) by ns-2's script, reused by every variant
            base = run_ns2(d, duration_s, s)
            for v in variants:
                run = base if v == "ns2" else VARIANTS[v](d, duration_s, s, base.start_s)
                rows.append({"variant": v, "delay_s": d, "seed": s, **summarize(run)})
    return pd.DataFrame(rows)


def _parse_seeds(x: str) -> list[int]:
    if "-" in x:
        a, b = x.split("-")
        return list(range(int(a), int(b) + 1))
    return [int(v) for v in x.split(",")]


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--delays", default="0.01,0.1,1")
    ap.add_argument("--seeds", default="1-5")
    ap.add_argument("--duration", type=float, default=600.0)
    ap.add_argument("--variants", default=",".join(VARIANTS))
    ap.add_argument("--csv")
    a = ap.parse_args(argv)
    df = compare([float(x) for x in a.delays.split(",")], _parse_seeds(a.seeds), a.duration, a.variants.split(","))
    if a.csv:
        df.to_csv(a.csv, index=False)
    cols = ["reach_opt_s", "exps_above", "max_above_s", "worst_1s", "worst_10s", "worst_100s", "loss_frac"]
    med = df.groupby(["delay_s", "variant"])[cols].median()
    mx = df.groupby(["delay_s", "variant"])[["worst_1s", "worst_10s", "worst_100s"]].max()
    with np.printoptions(precision=4):
        print("median over seeds:\n", med.to_string(float_format=lambda v: f"{v:.4g}"), file=sys.stdout)
        print("max over seeds:\n", mx.to_string(float_format=lambda v: f"{v:.4g}"), file=sys.stdout)


if __name__ == "__main__":
    main()
