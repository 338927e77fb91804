"""RLM experiments (issue 4): McCanne, Jacobson and Vetterli, *Receiver-driven Layered
Multicast*, SIGCOMM 1996, §4 (Figures 8-13) and §5 (RED).

The set-up of §4, shared by every experiment here:
- links 1.5 Mb/s with DropTail queues of 20 packets, 1000-byte packets;
- a six-layer CBR source at 32·2^m kb/s (m = 0..5) with the §4 jitter (``add_layered_source``);
- receivers start uniformly on [30, 120] s (drawn from the run's seed), 10 simulated minutes;
- the RLM constants of §4 (the ``add_rlm_receiver`` defaults);
- multicast join and leave latency 0: a join grafts at once and a leave prunes at once, each
  then taking one link delay per hop to travel (ns-2's prune timing is not stated in the paper).

The topologies of Figure 7 are built by :func:`topology1` ... :func:`topology4`, all through
:class:`Net`, and every per-receiver metric comes from :meth:`Net.receiver_table`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Optional

import numpy as np
import pandas as pd

from castlab import Simulator, run_with_progress
from castlab.experiments.common import Claim, Experiment, Result, at_least, at_most, in_range, within
from castlab.experiments.plotting import figure, save

PAPER = "McCanne et al. 1996"
LAYER_RATES_BPS = [32e3 * 2**m for m in range(6)]  # §4: 32·2^m kb/s, m = 0..5
LINK_BPS = 1.5e6  # §4: "the link bandwidths are 1.5 Mb/s"
QUEUE_PKTS = 20  # §4: router queue size 20 packets
PACKET_BYTES = 1000  # §4: 1 KB packets
DURATION_S = 600.0  # §4.3: 10 simulated minutes
START_RANGE_S = (30.0, 120.0)  # §4: receivers start uniformly on [30, 120] s
LINK_DELAY_S = 0.010  # §4.3: 10 ms links
WINDOWS_S = (1.0, 10.0, 100.0)  # §4.3: 1, 10 and 100 s measurement windows
JOIN_LATENCY_S = 0.0
LEAVE_LATENCY_S = 0.0
# §5 RED: Floyd & Jacobson's recommended thresholds (min_th 5, max_th 15, max_p 0.1) in the
# same 20-packet buffer. w_q is the one value we scale: RED's 0.002 is tuned for fast links
# (a memory of 500 packets is 2.7 s at 1.5 Mb/s, longer than a join-experiment), so we use
# 0.02 (~27 ms at 1.5 Mb/s). The plain 0.002 is run as well and reported.
RED_PARAMS = {"red_min_th": 5.0, "red_max_th": 15.0, "red_max_p": 0.1, "red_w_q": 0.02}


def cumulative_rate_bps(level: int) -> float:
    return float(sum(LAYER_RATES_BPS[:level]))


def optimal_level(capacity_bps: float) -> int:
    """The highest level whose cumulative rate fits in ``capacity_bps`` (§4.1's optimum)."""
    return max(n for n in range(1, len(LAYER_RATES_BPS) + 1) if n == 1 or cumulative_rate_bps(n) <= capacity_bps)


def settle_time_s(times_s: np.ndarray, levels: np.ndarray, opt: int) -> float:
    """First time the receiver reaches ``opt`` and afterwards never goes below it (brief
    excursions above it, the join-experiments, do not count); NaN if it never does."""
    below = np.nonzero(levels < opt)[0]
    first = below[-1] + 1 if below.size else 0
    at = np.nonzero(levels[first:] >= opt)[0]
    return float(times_s[first + at[0]]) if at.size else float("nan")


@dataclass
class Rx:
    agent: int
    node: str
    start_s: float
    optimal: int
    group: str  # which set the receiver belongs to (e.g. "B", "B/2", "pair 3")
    session: int


@dataclass
class Net:
    """A simulation of the §4 set-up: nodes, links with the chosen queue, layered sessions and
    RLM receivers. ``queue`` is "droptail" or "red" (with :data:`RED_PARAMS` unless ``red``
    overrides them)."""

    seed: int
    queue: str = "droptail"
    red: Optional[dict] = None
    sim: Simulator = field(init=False)
    rxs: list[Rx] = field(default_factory=list)
    sessions: list[tuple[list[int], int]] = field(default_factory=list)

    def __post_init__(self):
        self.sim = Simulator(seed=self.seed, join_latency=JOIN_LATENCY_S, leave_latency=LEAVE_LATENCY_S)
        # start times: their own stream, so they depend on the seed only
        self._starts = np.random.default_rng([self.seed, 0x524C4D])

    def nodes(self, *names: str) -> None:
        for n in names:
            self.sim.add_node(n)

    def link(self, a: str, b: str, rate_bps: float = LINK_BPS, delay_s: float = LINK_DELAY_S,
             limit_pkts: int = QUEUE_PKTS) -> None:
        kw = {}
        if self.queue == "red":
            kw = {"queue": "red", **RED_PARAMS, **(self.red or {}), "mean_pkt_bytes": PACKET_BYTES}
        self.sim.add_link(a, b, rate_bps, delay_s, queue_limit_pkts=limit_pkts, **kw)

    def session(self, src: str) -> int:
        """Six data groups and a control group rooted at ``src``, and the §4 source there."""
        groups = [self.sim.add_group(src) for _ in LAYER_RATES_BPS]
        control = self.sim.add_group(src)
        self.sim.add_layered_source(src, groups, LAYER_RATES_BPS, packet_size=PACKET_BYTES, jitter=True)
        self.sessions.append((groups, control))
        return len(self.sessions) - 1

    def receiver(self, node: str, session: int, optimal: int, group: str = "", start_s: Optional[float] = None) -> Rx:
        start = float(self._starts.uniform(*START_RANGE_S)) if start_s is None else start_s
        groups, control = self.sessions[session]
        # receiver_table reads the arrival times (its tail rate) and the §4.1 windows (online)
        a = self.sim.add_rlm_receiver(node, groups, control, start=start, record="arrivals",
                                      windows=list(WINDOWS_S))
        rx = Rx(a, node, start, optimal, group, session)
        self.rxs.append(rx)
        return rx

    def run(self, until: float = DURATION_S, label: str = "") -> None:
        run_with_progress(self.sim, until, label=label)

    def receiver_table(self, windows=WINDOWS_S, tail_from_s: float = 300.0) -> pd.DataFrame:
        """One row per receiver: start, optimum, final level, level held longest over the
        second half of the run, convergence time (s after its
        start), worst-case loss per window, packets received and lost, mean rate over
        [tail_from_s, now], experiments run."""
        rows = []
        now = self.sim.now
        for rx in self.rxs:
            r = self.sim.rlm_records(rx.agent)
            t = r["level_time_ns"] / 1e9
            settle = settle_time_s(t, r["level"], rx.optimal)
            arr = r["arr_time_ns"] / 1e9
            tail = int(np.count_nonzero(arr >= tail_from_s))
            row = {"agent": rx.agent, "node": rx.node, "group": rx.group, "session": rx.session,
                   "start_s": rx.start_s, "optimal": rx.optimal, "final_level": int(r["level"][-1]),
                   "held_level": _modal_level(t, r["level"].astype(int), now / 2, now),
                   "convergence_s": settle - rx.start_s, "received": int(r["received"]), "lost": int(r["lost"]),
                   "tail_rate_bps": tail * PACKET_BYTES * 8 / max(now - tail_from_s, 1e-9),
                   "experiments": len(r["exp_start_ns"])}
            for w in windows:
                row[f"worst_{w:g}s"] = self.sim.rlm_worst_window_loss(rx.agent, w)
            rows.append(row)
        return pd.DataFrame(rows)


# ---------------------------------------------------------------- the topologies of Figure 7


def topology1(seed: int, delay_s: float = LINK_DELAY_S, queue: str = "droptail", red: Optional[dict] = None) -> Net:
    """(1): source S and receiver R on either side of one 1.5 Mb/s bottleneck link."""
    net = Net(seed, queue, red)
    net.nodes("S", "R")
    net.link("S", "R", delay_s=delay_s)
    s = net.session("S")
    net.receiver("R", s, optimal_level(LINK_BPS), "R")
    return net


def topology2(seed: int, n: int, queue: str = "droptail", red: Optional[dict] = None) -> Net:
    """(2): S –bottleneck– X, and n receivers each on its own link from X (all 1.5 Mb/s, 10 ms)."""
    net = Net(seed, queue, red)
    net.nodes("S", "X")
    net.link("S", "X")
    s = net.session("S")
    for i in range(n):
        net.nodes(f"R{i}")
        net.link("X", f"R{i}")
        net.receiver(f"R{i}", s, optimal_level(LINK_BPS), "B")
    return net


def topology3(seed: int, n_high: int, n_low: int, queue: str = "droptail") -> Net:
    """(3): S –B– X; n_high receivers on links from X (rate B); a B/2 link X–Y with n_low
    receivers behind Y. B = 1.5 Mb/s, 10 ms links. Optima: level 5 at B (992 kb/s), level 4
    at B/2 = 750 kb/s (480 kb/s)."""
    net = Net(seed, queue)
    net.nodes("S", "X", "Y")
    net.link("S", "X")
    net.link("X", "Y", rate_bps=LINK_BPS / 2)
    s = net.session("S")
    for i in range(n_high):
        net.nodes(f"H{i}")
        net.link("X", f"H{i}")
        net.receiver(f"H{i}", s, optimal_level(LINK_BPS), "B")
    for i in range(n_low):
        net.nodes(f"L{i}")
        net.link("Y", f"L{i}")
        net.receiver(f"L{i}", s, optimal_level(LINK_BPS / 2), "B/2")
    return net


PAIR_SHARE_BPS = LINK_BPS  # topology (4): bottleneck = pairs × 1.5 Mb/s
ACCESS_BPS = 10e6  # topology (4): access links fast enough that only the shared link binds


def topology4_queue_pkts(pairs: int) -> int:
    """§4.3: the queue limit is twice the bandwidth-delay product of the bottleneck; the delay
    is the path's round trip (three 10 ms hops each way)."""
    rtt = 2 * 3 * LINK_DELAY_S
    return max(QUEUE_PKTS, int(round(2 * pairs * PAIR_SHARE_BPS * rtt / (8 * PACKET_BYTES))))


def topology4(seed: int, pairs: int, queue: str = "droptail") -> Net:
    """(4): ``pairs`` independent sessions S_i → R_i sharing X–Y, whose rate is pairs × 1.5
    Mb/s and whose queue is twice its bandwidth-delay product (§4.3). Access links S_i–X and
    Y–R_i are 10 Mb/s (our choice: with 1.5 Mb/s access links the shared link could never be
    the bottleneck)."""
    net = Net(seed, queue)
    net.nodes("X", "Y")
    net.link("X", "Y", rate_bps=pairs * PAIR_SHARE_BPS, limit_pkts=topology4_queue_pkts(pairs))
    for i in range(pairs):
        net.nodes(f"S{i}", f"R{i}")
        net.link(f"S{i}", "X", rate_bps=ACCESS_BPS)
        net.link("Y", f"R{i}", rate_bps=ACCESS_BPS)
        s = net.session(f"S{i}")
        # the fair share is 1.5 Mb/s: level 5; a pair may reach 6 only at others' expense
        net.receiver(f"R{i}", s, optimal_level(PAIR_SHARE_BPS), f"pair {i}")
    return net


# ---------------------------------------------------------------- helpers for the figures


def _modal_level(t: np.ndarray, lv: np.ndarray, t0: float, t1: float) -> int:
    """The level held for the longest total time over [t0, t1]."""
    ends = np.append(t[1:], t1)
    dur = np.clip(np.minimum(ends, t1) - np.maximum(t, t0), 0, None)
    per = np.bincount(lv, weights=dur)
    return int(np.argmax(per))


def _common_params(**extra) -> dict:
    return {"link_bps": LINK_BPS, "queue_pkts": QUEUE_PKTS, "packet_bytes": PACKET_BYTES,
            "layer_rates_bps": LAYER_RATES_BPS, "start_range_s": list(START_RANGE_S),
            "join_latency_s": JOIN_LATENCY_S, "leave_latency_s": LEAVE_LATENCY_S, **extra}


def _loss_axes(ax, xlabel: str, log_x: bool = True):
    if log_x:
        ax.set_xscale("log")
    ax.set_xlabel(xlabel)
    ax.set_ylabel("Loss Rate")
    ax.legend(title="window")


WINDOW_STYLES = {1.0: ("o-", "1 sec"), 10.0: ("s--", "10 sec"), 100.0: ("^:", "100 sec")}


def _worst_by(df: pd.DataFrame, key: str) -> pd.DataFrame:
    """Per (key, seed): the maximum over receivers of each receiver's worst-case loss (§4.3:
    "the maximum across the worst-case loss rates for each receiver"); then the median over
    seeds."""
    cols = [f"worst_{w:g}s" for w in WINDOWS_S]
    per_run = df.groupby([key, "seed"])[cols].max().reset_index()
    return per_run.groupby(key)[cols].median().reset_index()


def _plot_worst(out: Path, stem: str, worst: pd.DataFrame, key: str, xlabel: str, title: str,
                ref: Optional[pd.DataFrame] = None, ref_label: str = "") -> list[str]:
    fig, ax = figure()
    for w in WINDOWS_S:
        style, lab = WINDOW_STYLES[w]
        ax.plot(worst[key], worst[f"worst_{w:g}s"], style, label=lab)
        if ref is not None:
            ax.plot(ref[key], ref[f"worst_{w:g}s"], style, color="0.6", alpha=0.6, lw=0.8,
                    label=f"{lab} ({ref_label})")
    ax.set_title(title)
    _loss_axes(ax, xlabel)
    return save(fig, out, stem)


# ---------------------------------------------------------------- Figure 8


def run_fig8(out: Path, seed: int, quick: bool = False) -> Result:
    duration = 300.0 if quick else DURATION_S
    net = topology1(seed)
    net.run(duration, "rlm-fig8")
    rx = net.rxs[0]
    r = net.sim.rlm_records(rx.agent)
    t = r["level_time_ns"] / 1e9
    lv = r["level"].astype(int)
    pd.DataFrame({"time_s": t, "level": lv}).to_csv(out / "level.csv", index=False)
    ex = pd.DataFrame({"start_s": r["exp_start_ns"] / 1e9, "level": r["exp_level"], "outcome": r["exp_outcome"],
                       "end_s": np.where(r["exp_end_ns"] == np.iinfo(np.uint64).max, np.nan, r["exp_end_ns"] / 1e9)})
    ex.to_csv(out / "experiments.csv", index=False)

    opt = rx.optimal
    settle = settle_time_s(t, lv, opt)
    reach = float(t[np.argmax(lv >= opt)]) if (lv >= opt).any() else float("nan")
    # time spent above the optimum in each excursion after settling: the join-experiments
    above = []
    for i in range(len(t)):
        if t[i] >= settle and lv[i] > opt:
            end = t[i + 1] if i + 1 < len(t) else duration
            above.append(end - t[i])
    after = ex[ex["start_s"] > settle].sort_values("start_s")
    gaps = np.diff(after["start_s"].to_numpy())

    fig, ax = figure(6.0, 3.2)
    ax.step(np.append(t, duration), np.append(lv, lv[-1]), where="post", color="k", lw=1.0)
    ax.set_xlim(0, duration)
    ax.set_ylim(0, len(LAYER_RATES_BPS) + 1)
    ax.set_xlabel("Time (sec)")
    ax.set_ylabel("Layer #")
    ax.set_title("RLM sample path, topology (1), 10 ms")
    files = save(fig, out, "fig8")

    claims: list[Claim] = [
        within("reaches-optimal", "the receiver settles at the optimal level, 5 layers (992 kb/s fits in 1.5 Mb/s, "
               "2016 kb/s does not): the level it holds longest after its start", opt,
               _modal_level(t, lv, rx.start_s, duration), "layers", abs_tol=0),
        within("time-to-optimal", "time from the receiver's start to first reaching the optimal level: "
               "'about half a minute'", 30.0, reach - rx.start_s, "s", abs_tol=15.0),
        at_most("experiment-under-1s", "each join-experiment after settling lasts less than a second "
                "(longest time spent above the optimal level)", 1.0, max(above) if above else float("nan"), "s"),
        at_least("intervals-grow", "join-experiments at progressively larger intervals: last gap between "
                 "experiments over the first", 1.0, gaps[-1] / gaps[0] if len(gaps) >= 2 else float("nan"), "ratio"),
    ]
    params = _common_params(topology=1, link_delay_s=LINK_DELAY_S, duration_s=duration, receiver_start_s=rx.start_s,
                            settle_s=settle, experiments_after_settling=int(len(after)))
    return Result(params, claims, ["level.csv", "experiments.csv", *files])


# ---------------------------------------------------------------- Figure 9

FIG9_DELAYS_S = [0.001, 0.01, 0.1, 0.2, 0.5, 1.0, 2.0, 5.0, 10.0, 20.0]
FIG9_DELAYS_QUICK_S = [0.001, 0.01, 0.1, 1.0, 5.0]


def knee_latency(delays: np.ndarray, loss: np.ndarray) -> float:
    """The knee of a worst-case-loss curve on log-log axes: the inner point where the slope
    falls the most (steep before, flat after). NaN with fewer than three positive points."""
    ok = loss > 0
    x, y = np.log(delays[ok]), np.log(loss[ok])
    if len(x) < 3:
        return float("nan")
    slope = np.diff(y) / np.diff(x)
    drop = slope[:-1] - slope[1:]
    return float(np.exp(x[1 + int(np.argmax(drop))]))


def run_fig9(out: Path, seed: int, quick: bool = False) -> Result:
    delays = FIG9_DELAYS_QUICK_S if quick else FIG9_DELAYS_S
    seeds = [seed] if quick else [seed + k for k in range(3)]
    duration = 300.0 if quick else DURATION_S
    frames = []
    for d in delays:
        for s in seeds:
            net = topology1(s, delay_s=d)
            net.run(duration, f"rlm-fig9 delay {d:g} s seed {s}")
            df = net.receiver_table()
            df["delay_s"], df["seed"] = d, s
            frames.append(df)
    data = pd.concat(frames, ignore_index=True)
    data.to_csv(out / "fig9_runs.csv", index=False)
    worst = _worst_by(data, "delay_s")
    worst.to_csv(out / "fig9.csv", index=False)
    files = _plot_worst(out, "fig9", worst, "delay_s", "Link Latency (sec)", "Latency scalability, topology (1)")

    dl = worst["delay_s"].to_numpy()
    l100_low = worst.loc[dl < 1.0, "worst_100s"].max()
    l1_low = worst.loc[dl <= 0.1, "worst_1s"]
    claims = [
        at_most("w100-under-1pct", "100 s window, link delays under 1 s: worst-case loss under 1 % (max over those "
                "delays)", 0.01, l100_low, "loss fraction"),
        in_range("w1-10-20pct-low-delay", "1 s window, delays up to 100 ms: worst-case loss 10-20 % (smallest of "
                 "those delays)", 0.10, 0.20, float(l1_low.min()), "loss fraction"),
        in_range("w1-10-20pct-low-delay-max", "1 s window, delays up to 100 ms: worst-case loss 10-20 % (largest of "
                 "those delays)", 0.10, 0.20, float(l1_low.max()), "loss fraction"),
    ]
    # the knee: "roughly where measurement window size is twice the link latency"; our
    # computed knee (80 % of the curve's top) must lie within a factor 4 of W/2.
    knees = {}
    for w in WINDOWS_S:
        k = knee_latency(dl, worst[f"worst_{w:g}s"].to_numpy())
        knees[w] = k
        if w / 2 <= max(delays) / 2:  # the 100 s curve's knee (50 s) lies beyond the sweep
            claims.append(in_range(f"knee-{w:g}s", f"{w:g} s window: the knee (largest fall of the log-log slope) "
                                   f"lies within a factor 4 of W/2 = {w / 2:g} s", w / 8, 2 * w, k, "s"))
    claims.append(at_least("loss-grows-with-latency", "loss grows with latency: 10 s window worst-case loss at the "
                           "largest latency over that at 10 ms", 2.0,
                           float(worst["worst_10s"].iloc[-1] / max(worst.loc[dl == 0.01, "worst_10s"].iloc[0], 1e-9)),
                           "ratio"))
    params = _common_params(topology=1, delays_s=delays, seeds=seeds, duration_s=duration,
                            aggregate="median over seeds of the receiver's worst-case loss",
                            knees_s={f"{w:g}": v for w, v in knees.items()})
    return Result(params, claims, ["fig9_runs.csv", "fig9.csv", *files])


# ---------------------------------------------------------------- Figures 10 and 11

FIG10_SIZES = [1, 2, 5, 10, 20, 50, 100]
FIG10_SIZES_QUICK = [1, 5, 20]


def _topology2_runs(sizes, seeds, duration, label, queue: str = "droptail", red: Optional[dict] = None) -> pd.DataFrame:
    frames = []
    for n in sizes:
        for s in seeds:
            net = topology2(s, n, queue=queue, red=red)
            net.run(duration, f"{label} n={n} seed {s}")
            df = net.receiver_table()
            df["size"], df["seed"] = n, s
            frames.append(df)
    return pd.concat(frames, ignore_index=True)


def run_fig10(out: Path, seed: int, quick: bool = False) -> Result:
    sizes = FIG10_SIZES_QUICK if quick else FIG10_SIZES
    seeds = [seed] if quick else [seed + k for k in range(3)]
    duration = 300.0 if quick else DURATION_S
    data = _topology2_runs(sizes, seeds, duration, "rlm-fig10")
    data.to_csv(out / "fig10_receivers.csv", index=False)
    worst = _worst_by(data, "size")
    worst.to_csv(out / "fig10.csv", index=False)
    files = _plot_worst(out, "fig10", worst, "size", "Session Size", "Session-size scalability, topology (2)")
    big, one = worst.iloc[-1], worst.iloc[0]
    claims = [
        within("w100-about-1pct-largest", f"long-term (100 s) worst-case loss at the largest session "
               f"({sizes[-1]}) is about 1 %", 0.01, big["worst_100s"], "loss fraction", abs_tol=0.01),
    ]
    for w in WINDOWS_S:
        col = f"worst_{w:g}s"
        claims.append(at_most(f"size-independent-{w:g}s", f"{w:g} s window: worst-case loss essentially independent "
                              f"of session size: loss at {sizes[-1]} receivers over loss at 1 (factor at most 3)",
                              3.0, big[col] / max(one[col], 1e-4), "ratio"))
    claims.append(at_least("all-reach-optimum", "every receiver reaches the optimal level (§4.1): fraction of "
                           "receivers whose level held longest over the second half of the run is the optimum",
                           1.0, float((data["held_level"] == data["optimal"]).mean()), "fraction"))
    params = _common_params(topology=2, sizes=sizes, seeds=seeds, duration_s=duration, link_delay_s=LINK_DELAY_S,
                            aggregate="per run the max over receivers of their worst-case loss; median over seeds")
    return Result(params, claims, ["fig10_receivers.csv", "fig10.csv", *files])


# ---------------------------------------------------------------- Figure 11

FIG11_SIZES = FIG10_SIZES
FIG11_SIZES_QUICK = [1, 5, 20]


def _r2(x: np.ndarray, y: np.ndarray) -> float:
    """Coefficient of determination of the least-squares line y ~ a + b x."""
    b, a = np.polyfit(x, y, 1)
    res = y - (a + b * x)
    return float(1 - np.sum(res**2) / np.sum((y - y.mean()) ** 2))


def run_fig11(out: Path, seed: int, quick: bool = False) -> Result:
    sizes = FIG11_SIZES_QUICK if quick else FIG11_SIZES
    seeds = [seed + k for k in range(2 if quick else 4)]
    duration = 300.0 if quick else DURATION_S
    data = _topology2_runs(sizes, seeds, duration, "rlm-fig11")
    data.to_csv(out / "fig11.csv", index=False)
    conv = data[np.isfinite(data["convergence_s"])]
    med = conv.groupby("size")["convergence_s"].median()

    fig, ax = figure()
    jitter = np.random.default_rng(0).uniform(0.92, 1.08, len(conv))  # spread the points only
    ax.plot(conv["size"] * jitter, conv["convergence_s"], "o", ms=2.5, mfc="none", color="k", alpha=0.6)
    ax.plot(med.index, med.values, "-", color="C3", label="median")
    ax.set_xscale("log")
    ax.set_xlabel("Session Size")
    ax.set_ylabel("Convergence Time (sec)")
    ax.set_title("Rate of convergence, topology (2)")
    ax.legend()
    files = save(fig, out, "fig11")

    x, y = conv["size"].to_numpy(float), conv["convergence_s"].to_numpy(float)
    slope = np.polyfit(np.log10(x), y, 1)[0]
    claims = [
        at_least("grows-with-size", "convergence time grows with session size: slope of the least-squares line of "
                 "convergence time on log10(size), over every receiver", 0.0, slope, "s per decade"),
        at_least("log-not-linear", "'linear trend in the log plot': the line on log10(size) fits better than a line on "
                 "size (R² difference)", 0.0, _r2(np.log10(x), y) - _r2(x, y), "R²"),
        at_most("sublinear", f"far from linear growth: median convergence at {sizes[-1]} receivers over that at 1, "
                f"at most sqrt({sizes[-1]}) (a linear dependence would give {sizes[-1]})", float(np.sqrt(sizes[-1])),
                med.iloc[-1] / med.iloc[0], "ratio"),
        at_least("all-converge", "every receiver converges within the run (fraction)", 1.0,
                 float(np.isfinite(data["convergence_s"]).mean()), "fraction"),
    ]
    params = _common_params(topology=2, sizes=sizes, seeds=seeds, duration_s=duration,
                            convergence="time after the receiver's start when it reaches the optimal level and never "
                            "goes below it again (excursions above, the join-experiments, allowed)",
                            median_convergence_s={int(k): float(v) for k, v in med.items()},
                            slope_s_per_decade=float(slope))
    return Result(params, claims, ["fig11.csv", *files])


# ---------------------------------------------------------------- Figure 12

FIG12_SIZES = [2, 4, 10, 20, 50, 100]
FIG12_SIZES_QUICK = [2, 10]


def run_fig12(out: Path, seed: int, quick: bool = False) -> Result:
    sizes = FIG12_SIZES_QUICK if quick else FIG12_SIZES
    seeds = [seed] if quick else [seed + k for k in range(3)]
    duration = 300.0 if quick else DURATION_S
    frames = []
    for n in sizes:
        for s in seeds:
            net = topology3(s, n // 2, n - n // 2)
            net.run(duration, f"rlm-fig12 n={n} seed {s}")
            df = net.receiver_table()
            df["size"], df["seed"] = n, s
            frames.append(df)
    data = pd.concat(frames, ignore_index=True)
    data.to_csv(out / "fig12_receivers.csv", index=False)
    worst = _worst_by(data, "size")
    worst.to_csv(out / "fig12.csv", index=False)
    homo = _worst_by(_topology2_runs(sizes, seeds, duration, "rlm-fig12 homogeneous"), "size")
    homo.to_csv(out / "fig12_homogeneous.csv", index=False)
    files = _plot_worst(out, "fig12", worst, "size", "Session Size", "Bandwidth heterogeneity, topology (3)",
                        ref=homo, ref_label="homogeneous")
    claims = []
    for w in WINDOWS_S:
        col = f"worst_{w:g}s"
        claims.append(in_range(f"comparable-a-bit-above-{w:g}s", f"{w:g} s window: worst-case loss comparable to, "
                               "somewhat above, the homogeneous case (topology 2, same sizes and seeds): ratio of the "
                               "means over sizes", 1.0, 3.0, worst[col].mean() / max(homo[col].mean(), 1e-9), "ratio"))
    for g in ("B", "B/2"):
        sub = data[data["group"] == g]
        claims.append(at_least(f"set-{g}-optimum", f"receivers at {g} settle at their own optimum (level "
                               f"{int(sub['optimal'].iloc[0])}): fraction whose level held longest over the second half "
                               "is the optimum", 1.0, float((sub["held_level"] == sub["optimal"]).mean()), "fraction"))
    params = _common_params(topology=3, sizes=sizes, split="half at B = 1.5 Mb/s, half behind a B/2 link",
                            seeds=seeds, duration_s=duration,
                            aggregate="per run the max over receivers of their worst-case loss; median over seeds")
    return Result(params, claims, ["fig12_receivers.csv", "fig12.csv", "fig12_homogeneous.csv", *files])


# ---------------------------------------------------------------- Figure 13

FIG13_PAIRS = [1, 2, 4, 8, 16, 32]
FIG13_PAIRS_QUICK = [1, 4]


def best_packing_bps(pairs: int, capacity_bps: float) -> float:
    """The largest aggregate of ``pairs`` cumulative layer rates (one level per pair, each
    at least 1) that fits in ``capacity_bps``: what perfect discrete allocation would carry."""
    unit = LAYER_RATES_BPS[0]
    cap = int(capacity_bps // unit)
    sizes = [int(round(cumulative_rate_bps(n) / unit)) for n in range(1, len(LAYER_RATES_BPS) + 1)]
    reach = np.zeros(cap + 1, bool)
    reach[0] = True
    for _ in range(pairs):  # exactly one level per pair
        nxt = np.zeros_like(reach)
        for sz in sizes:
            if sz <= cap:
                nxt[sz:] |= reach[: cap + 1 - sz]
        reach = nxt
    return float(np.nonzero(reach)[0].max() * unit) if reach.any() else 0.0


def run_fig13(out: Path, seed: int, quick: bool = False) -> Result:
    pair_counts = FIG13_PAIRS_QUICK if quick else FIG13_PAIRS
    seeds = [seed] if quick else [seed + k for k in range(2)]
    duration = 300.0 if quick else DURATION_S
    tail_from = duration / 2
    frames, runs = [], []
    for p in pair_counts:
        for s in seeds:
            net = topology4(s, p)
            net.run(duration, f"rlm-fig13 pairs={p} seed {s}")
            df = net.receiver_table(tail_from_s=tail_from)
            df["pairs"], df["seed"] = p, s
            frames.append(df)
            rates = df["tail_rate_bps"].to_numpy()
            cap = p * PAIR_SHARE_BPS
            runs.append({"pairs": p, "seed": s, "capacity_bps": cap, "aggregate_bps": rates.sum(),
                         "best_packing_bps": best_packing_bps(p, cap), "min_pair_bps": rates.min(),
                         "max_pair_bps": rates.max(), "jain": rates.sum() ** 2 / (p * np.sum(rates**2)),
                         "queue_pkts": topology4_queue_pkts(p)})
    data = pd.concat(frames, ignore_index=True)
    data.to_csv(out / "fig13_receivers.csv", index=False)
    runs_df = pd.DataFrame(runs)
    runs_df["utilisation"] = runs_df["aggregate_bps"] / runs_df["capacity_bps"]
    runs_df["of_best_packing"] = runs_df["aggregate_bps"] / runs_df["best_packing_bps"]
    runs_df["max_over_min"] = runs_df["max_pair_bps"] / runs_df["min_pair_bps"]
    runs_df.to_csv(out / "fig13_shares.csv", index=False)
    worst = _worst_by(data, "pairs")
    worst.to_csv(out / "fig13.csv", index=False)
    files = _plot_worst(out, "fig13", worst, "pairs", "Number of Source/Receiver Pairs", "Superposition, topology (4)")

    fig, ax = figure()
    ax.plot(data["pairs"], data["tail_rate_bps"] / 1e3, "o", mfc="none", color="k", ms=3, label="per-pair rate")
    ax.axhline(PAIR_SHARE_BPS / 1e3, color="0.5", ls="--", label="fair share")
    ax.set_xscale("log")
    ax.set_xlabel("Number of Source/Receiver Pairs")
    ax.set_ylabel(f"rate over the last {duration - tail_from:g} s (kb/s)")
    ax.set_title("Per-pair shares, topology (4)")
    ax.legend()
    files += save(fig, out, "fig13_shares")

    multi = runs_df[runs_df["pairs"] > 1]
    claims = [
        at_most("w100-under-1pct", "long-term (100 s) worst-case loss under 1 % at every number of pairs", 0.01,
                worst["worst_100s"].max(), "loss fraction"),
        in_range("w10-few-pct", "medium-term (10 s) worst-case loss 'a few percent' (largest over pair counts)",
                 0.01, 0.05, worst["worst_10s"].max(), "loss fraction"),
        at_least("utilisation", "aggregate close to what the link can carry in whole layers: aggregate rate over the "
                 "best packing of levels into the bottleneck (smallest over runs)", 0.9,
                 runs_df["of_best_packing"].min(), "fraction"),
        at_least("no-pair-starved", "no pair is starved: smallest pair's rate over the rate of 3 layers (224 kb/s), "
                 "smallest over runs", 1.0, runs_df["min_pair_bps"].min() / cumulative_rate_bps(3), "ratio"),
    ]
    if len(multi):
        claims.append(at_least("often-unfair", "the allocation is often unfair: fraction of runs with 2+ pairs where "
                               "the best-served pair gets over 1.5x the worst-served", 0.5,
                               float((multi["max_over_min"] > 1.5).mean()), "fraction"))
    params = _common_params(topology=4, pairs=pair_counts, seeds=seeds, duration_s=duration,
                            bottleneck_bps_per_pair=PAIR_SHARE_BPS, access_bps=ACCESS_BPS,
                            queue="2 x bandwidth x 60 ms round trip, at least 20 packets",
                            shares_window_s=[tail_from, duration])
    return Result(params, claims, ["fig13_receivers.csv", "fig13_shares.csv", "fig13.csv", *files])


# ---------------------------------------------------------------- §5: RED

RED_SIZES = [1, 5, 20, 50]
RED_SIZES_QUICK = [1, 5]


def run_red(out: Path, seed: int, quick: bool = False) -> Result:
    sizes = RED_SIZES_QUICK if quick else RED_SIZES
    seeds = [seed] if quick else [seed + k for k in range(3)]
    duration = 300.0 if quick else DURATION_S
    variants = {"droptail": ("droptail", None), "red": ("red", None)}
    if not quick:
        variants["red_wq_0.002"] = ("red", {"red_w_q": 0.002})
    worst = {}
    frames = []
    for name, (q, red) in variants.items():
        d = _topology2_runs(sizes, seeds, duration, f"rlm-red {name}", queue=q, red=red)
        d["queue"] = name
        frames.append(d)
        worst[name] = _worst_by(d, "size")
        worst[name]["queue"] = name
    pd.concat(frames, ignore_index=True).to_csv(out / "red_receivers.csv", index=False)
    pd.concat(worst.values(), ignore_index=True).to_csv(out / "red.csv", index=False)
    files = _plot_worst(out, "red", worst["red"], "size", "Session Size",
                        f"RED (w_q {RED_PARAMS['red_w_q']:g}) vs DropTail, topology (2)",
                        ref=worst["droptail"], ref_label="DropTail")
    claims = []
    for w in WINDOWS_S:
        col = f"worst_{w:g}s"
        claims.append(at_most(f"red-improves-{w:g}s", f"{w:g} s window: RED's worst-case loss below DropTail's: ratio "
                              "of the means over session sizes", 1.0,
                              worst["red"][col].mean() / max(worst["droptail"][col].mean(), 1e-9), "ratio"))
    params = _common_params(topology=2, sizes=sizes, seeds=seeds, duration_s=duration, red=RED_PARAMS,
                            red_queue_limit_pkts=QUEUE_PKTS, variants=list(variants),
                            red_on="every link (the bottleneck S-X is the only one that congests)")
    if "red_wq_0.002" in worst:
        params["red_wq_0.002_over_droptail"] = {
            f"{w:g}s": float(worst["red_wq_0.002"][f"worst_{w:g}s"].mean() / worst["droptail"][f"worst_{w:g}s"].mean())
            for w in WINDOWS_S}
    return Result(params, claims, ["red_receivers.csv", "red.csv", *files])


EXPERIMENTS: list[Experiment] = [
    Experiment("rlm-fig8", PAPER, "Figure 8", "RLM subscription level over time, topology (1), 10 ms", run_fig8),
    Experiment("rlm-fig9", PAPER, "Figure 9", "worst-case loss (1/10/100 s windows) against link latency", run_fig9),
    Experiment("rlm-fig10", PAPER, "Figure 10", "worst-case loss against session size, topology (2)", run_fig10),
    Experiment("rlm-fig11", PAPER, "Figure 11", "convergence time of each receiver against session size", run_fig11),
    Experiment("rlm-fig12", PAPER, "Figure 12", "worst-case loss with receivers at B and B/2, topology (3)", run_fig12),
    Experiment("rlm-fig13", PAPER, "Figure 13", "independent pairs sharing a scaled bottleneck, topology (4)",
               run_fig13),
    Experiment("rlm-red", PAPER, "§5 (RED)", "RED instead of DropTail on topology (2): loss improves", run_red),
]
