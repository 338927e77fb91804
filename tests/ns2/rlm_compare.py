"""ns-2's own RLM (McCanne's MMG/ns, run by tests/ns2/rlm.tcl) against castlab's RLM on RLM
topology (1) of McCanne, Jacobson and Vetterli (SIGCOMM 1996, §4): the same link, queue,
layered source, receiver start time and measurement, for the comparison table in docs/fidelity/rlm.md and for
tests/protocols/test_rlm.py.

    python tests/ns2/rlm_compare.py [--delays 0.01,0.1,1] [--seeds 1-5] [--duration 600]
                                    [--variants ns2,castlab,...] [--pairs 1,4,16] [--csv F]
                                    [--topo2 1,10,50] [--topo3 5+5,25+25]

Variants: ns2 (ns-2's rlm_param as shipped, with rlm.tcl's rearm=1), ns2-paper (ns-2 with the
paper's β and T_max), castlab (its defaults), castlab-ns2const (castlab with ns-2's constants),
ns2-red and castlab-red (rlm-red's RED on the bottleneck). --pairs runs topology (4) instead;
--topo2 runs topology (2) with that many receivers behind the shared link, --topo3 topology (3)
with H receivers at B and L behind the B/2 link (H+L), as castlab's topology2 / topology3.

Each run is reduced to the same numbers: the time from the receiver's start to its first reach
of the optimal level (5), the join-experiments to level 6 after that, how long each lasted,
the worst-case loss over 1, 10 and 100 s windows (§4.2's metric, computed by castlab's
``worst_window_loss`` on both runs' arrival and loss processes) and the overall loss fraction.
"""

from __future__ import annotations

import argparse
import subprocess
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

import castlab
from castlab.experiments.rlm import levels as XL
from castlab.experiments.rlm import topology as XT

SCRIPT = Path(__file__).with_name("rlm.tcl")
WINDOWS_S = (1.0, 10.0, 100.0)
OPTIMAL = XT.optimal_level(XT.LINK_BPS)  # 5 layers (992 kb/s) fit in 1.5 Mb/s

# castlab's RlmConfig fields set to ns-2's shipped rlm_param (alpha 2, beta 0.75, init-tj 5,
# max 60, init-td 5, init-td-var 2, g1 = g2 = 0.25), for the "castlab-ns2const" variant; and the
# paper's β and T_max for ns-2 ("ns2-paper").
PAPER_FOR_NS2 = {"max": 600, "beta": 2 / 3}
# ns-2's T_max is a fixed 60 s, so castlab's scaling of T_max with the estimated group size is
# off (it changes nothing on topology (1), where the estimate is 1).
CASTLAB_WITH_NS2_CONSTANTS = {"beta": 0.75, "t_max": 60.0, "scale_t_max": False, "detection_init": 5.0,
                              "detection_dev_init": 2.0}


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


def _ns2(delay_s: float, duration_s: float, seed: int, start_s: float, rearm: bool, params: dict | None,
         options: dict, timeout_s: float) -> dict[int, Run]:
    extra_args = [f"{k}={v}" for k, v in {**(params or {}), **options}.items()] + [f"rearm={int(rearm)}"]
    with tempfile.TemporaryDirectory() as d:
        trace = Path(d) / "links.tr"
        cmd = ["ns", str(SCRIPT), repr(float(delay_s)), repr(float(duration_s)), str(seed), repr(float(start_s)),
               str(trace), *extra_args]
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout_s, cwd=d)
        if p.returncode != 0 or "\nend " not in p.stdout:
            raise RuntimeError(f"ns failed ({p.returncode}): {p.stderr[-2000:]}")
        order, start, lv, loss, par = [], {}, {}, {}, {}
        for line in p.stdout.splitlines():
            f = line.split()
            if not f:
                continue
            if f[0] == "rx":
                n = int(f[1])
                order.append(n)
                lv[n], loss[n] = [], []
            elif f[0] == "start":
                start[int(f[1])] = float(f[2])
            elif f[0] == "level":
                lv[int(f[1])].append((float(f[2]), int(f[3])))
            elif f[0] == "loss":
                loss[int(f[1])].append((float(f[2]), int(f[4])))
            elif f[0] == "param":
                par[f[1]] = float(f[2])
        # data packets received over the links into the receivers: (time, node, layer 1..6)
        rt, rn, rf, drops = [], [], [], 0
        with open(trace) as fh:
            for line in fh:
                if line[0] == "r":
                    f = line.split(None, 8)
                    if f[4] == "cbr":
                        rt.append(float(f[1]))
                        rn.append(int(f[3]))
                        rf.append(int(f[7]))
                elif line[0] == "d":
                    drops += 1
    rt, rn, rf = np.array(rt), np.array(rn, dtype=np.int64), np.array(rf, dtype=np.int64)
    runs = {}
    for n in order:
        if n not in start:
            continue  # not started within the run
        lt = np.array([x[0] for x in lv[n]])
        lvl = np.array([x[1] for x in lv[n]], dtype=np.int64)
        # a packet reaches the receiver's loss monitor only while its layer is joined (§4.2: the
        # arrival process *at the receiver*); the node discards the tail of a left layer
        m = rn == n
        t, fid = rt[m], rf[m]
        i = np.searchsorted(lt, t, side="right") - 1
        level_then = np.where(i >= 0, lvl[np.clip(i, 0, None)], 0)
        arr = t[(fid <= level_then) & (t >= start[n])]
        keep = lvl > 0
        ls = np.array(loss[n]) if loss[n] else np.zeros((0, 2))
        runs[n] = Run(start[n], lt[keep], lvl[keep], arr, ls[:, 0], ls[:, 1].astype(np.int64), duration_s,
                      {"params": par, "drops_on_traced_links": drops})
    return runs


def run_ns2(delay_s: float, duration_s: float, seed: int, start_s: float = -1.0, rearm: bool = True,
            params: dict | None = None, timeout_s: float = 120.0) -> Run:
    """ns-2's RLM on topology (1). ``params`` overrides rlm_param; ``rearm`` re-arms the
    join-timer after a drop (see rlm.tcl: without it ns-2's MMG never re-probes the top layer)."""
    (run,) = _ns2(delay_s, duration_s, seed, start_s, rearm, params, {}, timeout_s).values()
    return run


def run_ns2_pairs(pairs: int, duration_s: float, seed: int, rearm: bool = True, params: dict | None = None,
                  timeout_s: float = 300.0) -> list[Run]:
    """ns-2's RLM on topology (4), castlab's version of it (10 ms links, 10 Mb/s access links,
    shared link pairs x 1.5 Mb/s with a queue of twice its bandwidth-delay product)."""
    runs = _ns2(XT.LINK_DELAY_S, duration_s, seed, -1.0, rearm, params,
                {"pairs": pairs, "queue": XT.topology4_queue_pkts(pairs)}, timeout_s)
    return list(runs.values())


def run_ns2_tree(high: int, low: int, duration_s: float, seed: int, rearm: bool = True, params: dict | None = None,
                 timeout_s: float = 600.0) -> list[Run]:
    """ns-2's RLM on topology (2) (``low`` 0: ``high`` receivers behind the shared 1.5 Mb/s link)
    or (3) (``high`` at B, ``low`` behind the B/2 link), 10 ms links, 20-packet DropTail
    queues, receivers starting uniformly on [30, 120] s; receivers in creation order (the ``high``
    ones first)."""
    runs = _ns2(XT.LINK_DELAY_S, duration_s, seed, -1.0, rearm, params, {"high": high, "low": low}, timeout_s)
    return list(runs.values())


def run_castlab_tree(high: int, low: int, duration_s: float, seed: int, starts: list[float], **cfg) -> list[Run]:
    """castlab's topology (2) / (3), built as ``castlab.experiments.rlm.topology.topology2`` /
    ``topology3`` but with given start times and RlmConfig fields ``cfg``."""
    net = XT.Net(seed)
    net.nodes("S", "X")
    net.link("S", "X")
    if low:
        net.nodes("Y")
        net.link("X", "Y", rate_bps=XT.LINK_BPS / 2)
    groups, control = net.sessions[net.session("S")]
    agents = []
    for i, (name, up) in enumerate([(f"H{i}", "X") for i in range(high)] + [(f"L{j}", "Y") for j in range(low)]):
        net.nodes(name)
        net.link(up, name)
        a = net.sim.add_rlm_receiver(name, groups, control, start=starts[i], **{"record": "arrivals", **cfg})
        agents.append((a, starts[i]))
    return _castlab_runs(net, agents, duration_s)


def _castlab_runs(net, agents, duration_s) -> list[Run]:
    net.sim.run(duration_s)
    out = []
    for a, st in agents:
        r = net.sim.rlm_records(a)
        out.append(Run(st, r["level_time_ns"] / 1e9, r["level"].astype(int), r["arr_time_ns"] / 1e9,
                       r["loss_time_ns"] / 1e9, r["loss_count"].astype(np.int64), duration_s))
    return out


def run_castlab(delay_s: float, duration_s: float, seed: int, start_s: float, queue: str = "droptail", **cfg) -> Run:
    """castlab's RLM on the same topology (1) (``castlab.experiments.rlm``'s set-up) with the
    receiver starting at ``start_s``; ``queue`` "red" uses rlm-red's RED; ``cfg`` are RlmConfig
    fields."""
    net = XT.Net(seed, queue)
    net.nodes("S", "R")
    net.link("S", "R", delay_s=delay_s)
    groups, control = net.sessions[net.session("S")]
    a = net.sim.add_rlm_receiver("R", groups, control, start=start_s, **{"record": "arrivals", **cfg})
    return _castlab_runs(net, [(a, start_s)], duration_s)[0]


def run_castlab_pairs(pairs: int, duration_s: float, seed: int, starts: list[float], **cfg) -> list[Run]:
    """castlab's topology (4) (as ``castlab.experiments.rlm.topology.topology4``) with given start times."""
    net = XT.Net(seed)
    net.nodes("X", "Y")
    net.link("X", "Y", rate_bps=pairs * XT.PAIR_SHARE_BPS, limit_pkts=XT.topology4_queue_pkts(pairs))
    agents = []
    for i in range(pairs):
        net.nodes(f"S{i}", f"R{i}")
        net.link(f"S{i}", "X", rate_bps=XT.ACCESS_BPS)
        net.link("Y", f"R{i}", rate_bps=XT.ACCESS_BPS)
        groups, control = net.sessions[net.session(f"S{i}")]
        a = net.sim.add_rlm_receiver(f"R{i}", groups, control, start=starts[i], **{"record": "arrivals", **cfg})
        agents.append((a, starts[i]))
    return _castlab_runs(net, agents, duration_s)


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
    settle = XL.settle_time_s(t, lv, OPTIMAL)
    # excursions above the optimum after first reaching it: the join-experiments to level 6
    above = []
    if reach_i.size:
        for i in range(reach_i[0], len(t)):
            if lv[i] > OPTIMAL:
                end = t[i + 1] if i + 1 < len(t) else run.duration_s
                above.append(end - t[i])
    held = XL.modal_level(t, lv, run.start_s, run.duration_s) if len(t) else 0
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
    # rlm-red's RED (min_th 5, max_th 15, max_p 0.1, its chosen w_q) on the bottleneck
    "ns2-red": lambda d, T, s, st: run_ns2(d, T, s, st, params={"red": XT.RED_PARAMS["red_w_q"]}),
    "castlab-red": lambda d, T, s, st: run_castlab(d, T, s, st, queue="red"),
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


def compare_pairs(pair_counts, seeds, duration_s, variants=("ns2", "ns2-paper", "castlab")):
    """Topology (4): per run, the max over receivers of each worst-case windowed loss, the
    overall loss fraction, and the pairs' rates over the second half of the run."""
    import pandas as pd

    rows = []
    for p in pair_counts:
        for s in seeds:
            base = run_ns2_pairs(p, duration_s, s)
            starts = [r.start_s for r in base]
            for v in variants:
                if v == "ns2":
                    runs = base
                elif v == "ns2-paper":
                    runs = run_ns2_pairs(p, duration_s, s, params=PAPER_FOR_NS2)
                elif v == "castlab":
                    runs = run_castlab_pairs(p, duration_s, s, starts)
                else:
                    raise ValueError(f"variant {v!r} not available for topology (4)")
                sums = [summarize(r) for r in runs]
                rates = np.array([np.count_nonzero(r.arr_t >= duration_s / 2) * XT.PACKET_BYTES * 8 / (duration_s / 2)
                                  for r in runs])
                row = {"variant": v, "pairs": p, "seed": s,
                       "loss_frac": sum(x["lost"] for x in sums) / max(sum(x["lost"] + x["received"] for x in sums), 1),
                       "utilisation": rates.sum() / (p * XT.PAIR_SHARE_BPS), "min_pair_kbps": rates.min() / 1e3,
                       "max_pair_kbps": rates.max() / 1e3}
                for w in WINDOWS_S:
                    row[f"worst_{w:g}s"] = max(x[f"worst_{w:g}s"] for x in sums)
                rows.append(row)
    return pd.DataFrame(rows)


def summarize_receiver(run: Run, optimal: int) -> dict:
    """Per receiver on topologies (2) and (3): the worst-case windowed losses, the convergence
    time (castlab's fig11 measure: from the start to reaching the optimum and never going below
    it again, NaN if never) and the level held longest over the second half of the run (fig10,
    fig12: "at the optimum")."""
    t, lv = run.level_t, run.level
    settle = XL.settle_time_s(t, lv, optimal) if len(t) else float("nan")
    held = XL.modal_level(t, lv, run.duration_s / 2, run.duration_s) if len(t) else 0
    lost, rec = int(run.loss_n.sum()), len(run.arr_t)
    row = {"start_s": run.start_s, "optimal": optimal, "convergence_s": settle - run.start_s, "held_level": held,
           "received": rec, "lost": lost}
    for w, v in worst_windows(run).items():
        row[f"worst_{w:g}s"] = v
    return row


TREE_VARIANTS = ("ns2", "castlab", "castlab-ns2const")


def compare_tree(splits, seeds, duration_s, variants=TREE_VARIANTS):
    """Topologies (2) and (3): ``splits`` are (high, low) receiver counts. Returns one row per
    receiver (variant, high, low, seed, set "B" or "B/2", and :func:`summarize_receiver`'s
    numbers) and one row per run: the max over receivers of each worst-case windowed loss
    (§4.3's aggregate), the median convergence time over receivers, the fraction of receivers
    converged and at their optimum, and the overall loss fraction."""
    import pandas as pd

    per_rx, per_run = [], []
    opt_b, opt_half = XT.optimal_level(XT.LINK_BPS), XT.optimal_level(XT.LINK_BPS / 2)
    for high, low in splits:
        for s in seeds:
            base = run_ns2_tree(high, low, duration_s, s)
            if len(base) != high + low:
                raise RuntimeError(f"ns-2 started {len(base)} of {high + low} receivers (start after the run's end?)")
            starts = [r.start_s for r in base]
            for v in variants:
                if v == "ns2":
                    runs = base
                elif v == "ns2-paper":
                    runs = run_ns2_tree(high, low, duration_s, s, params=PAPER_FOR_NS2)
                elif v == "castlab":
                    runs = run_castlab_tree(high, low, duration_s, s, starts)
                elif v == "castlab-ns2const":
                    runs = run_castlab_tree(high, low, duration_s, s, starts, **CASTLAB_WITH_NS2_CONSTANTS)
                else:
                    raise ValueError(f"variant {v!r} not available for topologies (2) and (3)")
                rows = []
                for i, r in enumerate(runs):
                    grp = "B" if i < high else "B/2"
                    rows.append({"variant": v, "high": high, "low": low, "seed": s, "set": grp,
                                 **summarize_receiver(r, opt_b if grp == "B" else opt_half)})
                per_rx += rows
                d = pd.DataFrame(rows)
                row = {"variant": v, "high": high, "low": low, "seed": s, "receivers": len(d),
                       "conv_median_s": d["convergence_s"].median(), "conv_max_s": d["convergence_s"].max(),
                       "converged": float(np.isfinite(d["convergence_s"]).mean()),
                       "at_optimum": float((d["held_level"] == d["optimal"]).mean()),
                       "loss_frac": d["lost"].sum() / max(int((d["lost"] + d["received"]).sum()), 1)}
                for w in WINDOWS_S:
                    row[f"worst_{w:g}s"] = d[f"worst_{w:g}s"].max()
                per_run.append(row)
    return pd.DataFrame(per_rx), pd.DataFrame(per_run)


def _print_tree(rx, runs):
    cols = ["worst_1s", "worst_10s", "worst_100s", "loss_frac", "conv_median_s", "conv_max_s", "converged",
            "at_optimum"]
    key = ["high", "low", "variant"]
    print("per run, median over seeds:\n", runs.groupby(key)[cols].median().to_string(float_format=lambda v: f"{v:.4g}"))
    print("per receiver, pooled over seeds (convergence median / fraction at optimum by set):")
    g = rx.assign(at_opt=rx["held_level"] == rx["optimal"]).groupby(key + ["set"])
    out = g.agg(conv_median_s=("convergence_s", "median"), at_optimum=("at_opt", "mean"), n=("at_opt", "size"))
    print(out.to_string(float_format=lambda v: f"{v:.4g}"))


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
    ap.add_argument("--variants", default="ns2,ns2-paper,castlab,castlab-ns2const")
    ap.add_argument("--pairs", help="topology (4) with these pair counts instead of topology (1)")
    ap.add_argument("--topo2", help="topology (2) with these receiver counts")
    ap.add_argument("--topo3", help="topology (3) with these H+L splits (H at B, L behind B/2), e.g. 5+5,25+25")
    ap.add_argument("--csv", help="per-run rows (per-receiver rows too, as F with .rx before the suffix, for "
                    "--topo2/--topo3)")
    a = ap.parse_args(argv)
    if a.topo2 or a.topo3:
        splits = [(int(n), 0) for n in a.topo2.split(",")] if a.topo2 else []
        if a.topo3:
            splits += [tuple(int(v) for v in x.split("+")) for x in a.topo3.split(",")]
        variants = a.variants.split(",") if a.variants != ap.get_default("variants") else TREE_VARIANTS
        rx, runs = compare_tree(splits, _parse_seeds(a.seeds), a.duration, variants)
        if a.csv:
            runs.to_csv(a.csv, index=False)
            p = Path(a.csv)
            rx.to_csv(p.with_name(p.stem + ".rx" + p.suffix), index=False)
        _print_tree(rx, runs)
        return
    if a.pairs:
        variants = [v for v in a.variants.split(",") if v != "castlab-ns2const"]
        df = compare_pairs([int(x) for x in a.pairs.split(",")], _parse_seeds(a.seeds), a.duration, variants)
        if a.csv:
            df.to_csv(a.csv, index=False)
        cols = ["worst_1s", "worst_10s", "worst_100s", "loss_frac", "utilisation", "min_pair_kbps", "max_pair_kbps"]
        print("median over seeds:\n", df.groupby(["pairs", "variant"])[cols].median().to_string(
            float_format=lambda v: f"{v:.4g}"))
        return
    df = compare([float(x) for x in a.delays.split(",")], _parse_seeds(a.seeds), a.duration, a.variants.split(","))
    if a.csv:
        df.to_csv(a.csv, index=False)
    cols = ["reach_opt_s", "exps_above", "mean_above_s", "max_above_s", "worst_1s", "worst_10s", "worst_100s",
            "loss_frac"]
    med = df.groupby(["delay_s", "variant"])[cols].median()
    mx = df.groupby(["delay_s", "variant"])[["worst_1s", "worst_10s", "worst_100s"]].max()
    print("median over seeds:\n", med.to_string(float_format=lambda v: f"{v:.4g}"))
    print("max over seeds:\n", mx.to_string(float_format=lambda v: f"{v:.4g}"))


if __name__ == "__main__":
    main()
