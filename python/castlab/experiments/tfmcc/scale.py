"""tfmcc-scale: TFMCC's feedback suppression and CLR selection with 10^2 to 10^5 receivers.

The set-up (castlab's own; RFC 4654 describes no network): a star, src -> hub over a fast core
link, and each receiver on its own access link from the hub with a rate, one-way delay and
random loss drawn per receiver (``SCALE``; the stream ``tfmcc-scale-links``). A few receivers
(``SCALE["worst"]``) sit behind clearly worse paths (higher loss, longest delay). One more
receiver, the *victim*, starts on a clean direct link; at ``SCALE["onset_s"]`` that link goes
down and its traffic takes a detour through a lossier hop, so its path gets worse mid-run and it
becomes the receiver with the worst conditions (pgmcc's ``lossier`` set-up, at scale). No queue
is shared by two flows and no link is loaded near its rate, so there is no traffic phase to lock
(docs/fidelity/phase.md): the runs are deterministic, decided without phase randomisation.

The session runs TFMCC's declared reading (``tfmcc.declared``: the receive rate over k RTTs of
the receiver's own R, RFC 4654 §4.3.4 as written), and every claim reads those runs alone. Below
10^5 receivers the same set-ups and seeds also run the ablation ``windows_over_rmax`` (the
windows over max(R, R_max), not a reading), beside it in the table (column ``window``) and the
plot, to show what the window does; a failing claim's explanation names both.

Measured per run, after ``SCALE["warmup_s"]``: the non-CLR reports of each whole feedback round
(mean and max), the time from the onset to the victim's becoming CLR, the fractions of time the
CLR is one of the worst before the onset and the victim after it, the sending rate (time-weighted
mean before the onset and from 10 s after it, lowest, peak), R_max's largest value, the reports
at §4.4's floor of one packet per 8 s and the time the rate spent near it (twice the floor): a
receiver whose k·R window holds no packet reports that floor (§4.4: twice a receive rate of 0),
and below the sending rate such a report takes the CLR (§3.3).

The RFC's expectation of reports per round (``expected_reports``), computed from §4.5's timer
t = max(T(1 + ln x / ln N), 0) with N the configured bound (10,000, §4.5's recommendation): n
non-CLR receivers draw timers; the first report suppresses (§3.4: X_supp = (1-g)X_r) every
receiver whose timer has not fired by the time the lowered X_supp reaches it, one RTT later with
unicast feedback; the RFC's T = 6 R_max for unicast (4 R_max with ASM) reserves that RTT, so the
delay is taken as T/6. A receiver reports when its timer fires no later than the first timer
plus T/6:

    E[M](n) = n (1/N + integral_0^1 P(t > s - 1/6)^(n-1) f(s) ds),

f the density of t/T (ln N · N^(s-1) on (0, 1], and an atom 1/N at 0). Above n = N the atom
(x <= 1/N: t = 0) alone gives n/N reports at the round's start, before any suppression can act,
so the count grows linearly in n: the RFC's reason to limit a session to N receivers.

Claims and their tolerances, declared before the first run:
- ``reports-per-round-N{n}`` (n = 10^2, 10^3, 10^4): the mean non-CLR reports per round is at
  most 3 E[M](n). The model suppresses every receiver with the first report; with heterogeneous
  rates a report suppresses only receivers whose rate is above (1-g) times its rate (§3.4), and
  rates change within a round (§4.5's X_fbr), so the count is above the model's: the factor 3 is
  ours (the 1 % star of the tfmcc experiment measured 2.0 E[M] at N = 100).
- ``reports-grow-slowly``: from 10^2 to 10^4 receivers the mean grows at most 3-fold (the model:
  1.37-fold; one report per receiver: 100-fold).
- ``reports-above-the-bound``: from 10^4 to 10^5 receivers (above N) the mean grows at least
  2-fold (the model: 7.3-fold, the atom's n/N).
- ``clr-follows-the-worsened-path``: the victim is CLR within 10 s of the onset at every size
  (ours: the RFC bounds nothing here; a report of a rate below every other is never suppressed,
  §3.4, so it arrives within one round once the victim's loss event rate has risen, §5).
- ``clr-is-the-worst``: the CLR is one of the worst receivers at least 75 % of the time before
  the onset and the victim at least 75 % of the time from 10 s after the onset (§2: "the
  receiver experiencing the worst network conditions"; 75 % is the tfmcc experiment's).
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import time

import numpy as np
import pandas as pd

from castlab.experiments import streams
from castlab.experiments.common import at_least, at_most, claim_over_seeds
from castlab.experiments.figure import Case, Figure, experiment
from castlab.experiments.plotting import figure, save
from castlab.experiments.tfmcc.declared import WINDOW_SETTING, ablation_config, primary, reading_config
from castlab.experiments.tfmcc.topology import PACKET_BYTES, clr_share, sender_of
from castlab.scenario import Scenario

SCALE = {
    "core_bps": 1e9,
    "core_delay_s": 0.005,
    # each regular receiver's access link: rate from this list, one-way delay and random loss
    # uniform in these ranges (our choice: a spread of residential to campus links)
    "access_bps": [2e6, 5e6, 10e6, 20e6, 50e6, 100e6],
    "delay_s": (0.005, 0.040),
    "loss": (0.0005, 0.005),
    # the clearly worst receivers: ten times the largest regular loss, the longest delay
    "worst": 3,
    "worst_loss": 0.05,
    "worst_delay_s": 0.040,
    "worst_bps": 2e6,
    # the victim: clean direct link, then a detour whose last hop loses this much
    "victim_bps": 10e6,
    "victim_delay_s": 0.010,
    "victim_loss_after": 0.15,
    "onset_s": 30.0,
    "duration_s": 60.0,
    "warmup_s": 15.0,
    "follow_within_s": 10.0,
    # DropTail limits in packets (our choice, as declared before the first run)
    "queue_limit": 1000,
    "core_queue_limit": 1000,
}

#: The session's configuration: RFC 4654's defaults under TFMCC's declared reading (``declared``:
#: the receive rate over k RTTs of the receiver's own R, §4.3.4), 1000-byte packets.
TFMCC_CONFIG = {"packet_size": PACKET_BYTES, **reading_config(WINDOW_SETTING)}
#: The ablation run beside it (not a reading; no claim reads it): the windows over max(R, R_max).
ABLATION = "windows over max(R, R_max)"
ABLATION_CONFIG = {**TFMCC_CONFIG, **ablation_config(ABLATION)}

#: The `window` column: the declared reading's rows (every claim reads these alone) and the ablation's.
DECLARED = primary(WINDOW_SETTING)
#: Sizes that run the ablation beside the declared reading (10^5 runs the declared reading only:
#: one such run is the issue's whole time budget).
ABLATION_BELOW = 100_000

SIZES = [100, 1_000, 10_000, 100_000]
QUICK_SIZES = [100, 1_000]
#: Seeds per size; sizes from ONE_SEED_AT run one (such a run is the issue's whole time budget).
SEEDS = 3
ONE_SEED_AT = 100_000
#: §4.5's N, the receivers' configured bound (TfmccConfig::receivers_bound's default).
RECEIVERS_BOUND = 10_000.0
#: The suppression delay over T: one RTT of T = 6 R_max (§3.4, unicast feedback).
SUPPRESSION_DELAY = 1.0 / 6.0


def expected_reports(n: int, bound: float = RECEIVERS_BOUND, delay: float = SUPPRESSION_DELAY,
                     points: int = 200_001) -> float:
    """E[M](n) of the module's docstring: the expected reports of a round among `n` receivers
    whose timers follow RFC 4654 §4.5 with bound N = `bound`, each suppressed unless its timer
    fires within `delay` (in units of T) of the first."""
    if n < 1:
        return 0.0
    s = np.linspace(0.0, 1.0, points)
    u = s - delay
    # P(t/T > u): 1 below 0, 1 - N^(u-1) on [0, 1)
    tail = np.where(u < 0.0, 1.0, 1.0 - bound ** (np.clip(u, 0.0, 1.0) - 1.0))
    dens = np.log(bound) * bound ** (s - 1.0)
    y = tail ** (n - 1) * dens
    return float(n * (1.0 / bound + np.sum((y[1:] + y[:-1]) * np.diff(s)) / 2.0))


def _link(name, a, b, rate, delay, **kw) -> dict:
    return {"name": name, "a": a, "b": b, "rate": rate, "delay": delay, "queue_limit": SCALE["queue_limit"], **kw}


def _core(name, a, b) -> dict:
    return {**_link(name, a, b, SCALE["core_bps"], SCALE["core_delay_s"]), "queue_limit": SCALE["core_queue_limit"]}


def star(n: int, seed: int, duration: float, config: dict = TFMCC_CONFIG) -> Scenario:
    """src -> hub -> rx_i for n receivers: rx0 .. rx{w-1} the worst, rx{w} the victim (direct
    link ``direct``, and the detour hub -> alt -> victim), the rest regular."""
    c = SCALE
    w = c["worst"]
    g = streams.rng(seed, "tfmcc-scale-links", n)
    regular = n - w - 1
    rates = g.choice(np.asarray(c["access_bps"]), regular)
    delays = g.uniform(*c["delay_s"], regular)
    losses = g.uniform(*c["loss"], regular)
    victim = f"rx{w}"
    nodes = ["src", "hub", "alt"] + [f"rx{i}" for i in range(n)]
    links = [_core("core", "src", "hub")]
    links += [_link(f"a{i}", "hub", f"rx{i}", c["worst_bps"], c["worst_delay_s"], loss_ab=c["worst_loss"])
              for i in range(w)]
    links += [_link("direct", "hub", victim, c["victim_bps"], c["victim_delay_s"]),
              _link("detour", "hub", "alt", c["victim_bps"], c["victim_delay_s"]),
              _link("lossy", "alt", victim, c["victim_bps"], c["victim_delay_s"], loss_ab=c["victim_loss_after"])]
    links += [_link(f"a{w + 1 + j}", "hub", f"rx{w + 1 + j}", float(rates[j]), float(delays[j]),
                    loss_ab=float(losses[j])) for j in range(regular)]
    return Scenario.from_dict({
        "name": f"tfmcc-scale N={n}", "duration": duration, "nodes": nodes, "links": links,
        "sessions": [{"name": "tfmcc", "kind": "tfmcc", "source": "src", "config": dict(config)}],
        "receivers": [{"name": f"rx{i}", "node": f"rx{i}", "session": "tfmcc", "protocol": "tfmcc"}
                      for i in range(n)],
    })


def build(n: int, seed: int, duration: float, config: dict = TFMCC_CONFIG):
    """The star's simulator, the victim's direct link going down at the onset."""
    sim = star(n, seed, duration, config).build(seed)
    sim.link_down(SCALE["onset_s"], "hub", f"rx{SCALE['worst']}")
    return sim


def round_counts(rec: dict, start_s: float) -> np.ndarray:
    """Non-CLR reports in each whole feedback round that begins at or after `start_s` (a
    report's round is the one open when it arrives; the CLR's reports, §4.5, are apart)."""
    ends = rec["round_time_ns"][rec["round_time_ns"] >= start_s * 1e9]
    if ends.size < 2:
        return np.zeros(0, dtype=np.int64)
    t = rec["fb_time_ns"][~rec["fb_from_clr"].astype(bool)]
    t = t[(t >= ends[0]) & (t < ends[-1])]
    return np.bincount(np.searchsorted(ends, t, side="right") - 1, minlength=ends.size - 1).astype(np.int64)


def first_clr_after(rec: dict, node: str, after_s: float) -> float:
    """The first time at or after `after_s` that `node` is chosen CLR (inf if never)."""
    names = list(rec["receivers"])
    if node not in names:
        return float("inf")
    who = names.index(node)
    t = rec["clr_time_ns"] / 1e9
    hit = np.nonzero((rec["clr_receiver"] == who) & (t >= after_s))[0]
    return float(t[hit[0]]) if hit.size else float("inf")


def _rate_steps(rec: dict, t0: float, t1: float) -> tuple[np.ndarray, np.ndarray]:
    """The sending rate as a step function on [t0, t1): the start of each step (s) and its rate."""
    t = rec["rate_time_ns"] / 1e9
    x = rec["rate_bps"].astype(float)
    if t.size == 0 or t1 <= t0:
        return np.zeros(0), np.zeros(0)
    k = max(int(np.searchsorted(t, t0, side="right")) - 1, 0)
    inside = (t > t0) & (t < t1)
    return np.concatenate([[t0], t[inside]]), np.concatenate([[x[k]], x[inside]])


def mean_rate(rec: dict, t0: float, t1: float) -> float:
    """The sender's time-weighted mean rate over [t0, t1), b/s (nan without a rate)."""
    starts, x = _rate_steps(rec, t0, t1)
    if starts.size == 0:
        return float("nan")
    return float(np.sum(x * np.diff(np.append(starts, t1))) / (t1 - t0))


def min_rate(rec: dict, t0: float, t1: float) -> float:
    """The sender's lowest rate over [t0, t1), b/s."""
    _, x = _rate_steps(rec, t0, t1)
    return float(x.min()) if x.size else float("nan")


#: §4.4's floor, one packet per 8 s (b/s): what a receiver reports when twice its receive rate
#: (no loss event yet, or have_loss cleared by §4.3.1's 10 RTTs without data) reads 0.
FLOOR_BPS = 8.0 * PACKET_BYTES / 8.0


def floor_reports(rec: dict, start_s: float) -> int:
    """Reports from `start_s` on (any receiver) whose rate is at §4.4's floor."""
    late = rec["fb_time_ns"] >= start_s * 1e9
    return int(np.count_nonzero(late & (rec["fb_rate_bps"] <= FLOOR_BPS * (1 + 1e-9))))


def time_near_floor(rec: dict, t0: float, t1: float) -> float:
    """Seconds of [t0, t1) the sending rate spent at or below twice §4.4's floor."""
    starts, x = _rate_steps(rec, t0, t1)
    if starts.size == 0:
        return 0.0
    return float(np.sum(np.diff(np.append(starts, t1))[x <= 2 * FLOOR_BPS]))


def _peak_rss_mb() -> float:
    """The process's peak resident set (VmHWM), MB; nan where /proc has none."""
    try:
        with open("/proc/self/status") as f:
            return next(int(l.split()[1]) / 1024 for l in f if l.startswith("VmHWM"))
    except (OSError, StopIteration):
        return float("nan")


#: Runs of at least this many receivers run each in a Python process of its own, started by
#: ``measure`` (which reads the run's row back from it): the process holds that one simulator,
#: so its peak memory, printed with the run's cost, is the run's, and the memory goes back to
#: the system when it ends.
OWN_PROCESS_FROM = 10_000
#: Set in such a process: it measures in place.
_CHILD_ENV = "CASTLAB_TFMCC_SCALE_CHILD"


def measure(seed: int, n: int, duration: float, window: str = DECLARED) -> dict:
    """One run of `n` receivers under the declared window (`window` = DECLARED) or the ablation;
    in a process of its own from ``OWN_PROCESS_FROM`` receivers (the row is the same either way:
    a run is a function of its arguments)."""
    if n >= OWN_PROCESS_FROM and not os.environ.get(_CHILD_ENV):
        return _measure_in_own_process(seed, n, duration, window)
    return _measure_here(seed, n, duration, window)


def _measure_in_own_process(seed: int, n: int, duration: float, window: str) -> dict:
    """``_measure_here`` in a child Python process (the same interpreter and environment); its
    row comes back as JSON on its stdout, its cost line on the shared stderr."""
    code = ("import sys; from castlab.experiments.tfmcc.scale import _child_main; "
            "_child_main(int(sys.argv[1]), int(sys.argv[2]), float(sys.argv[3]), sys.argv[4])")
    r = subprocess.run([sys.executable, "-c", code, str(seed), str(n), repr(float(duration)), window],
                       stdout=subprocess.PIPE, text=True, env={**os.environ, _CHILD_ENV: "1"})
    if r.returncode != 0:
        raise RuntimeError(f"tfmcc-scale: the run of {n:,} receivers (seed {seed}, {window}) in its own process "
                           f"ended with exit status {r.returncode}")
    return json.loads(r.stdout)


def _child_main(seed: int, n: int, duration: float, window: str) -> None:
    """The child process's side of ``_measure_in_own_process``: one run, its row as JSON."""
    row = _measure_here(seed, n, duration, window)
    # numpy scalars as Python numbers; inf and nan as JSON's Infinity and NaN (read back alike)
    json.dump(row, sys.stdout, default=lambda v: v.item())
    sys.stdout.flush()


def _measure_here(seed: int, n: int, duration: float, window: str = DECLARED) -> dict:
    """One run in this process."""
    c = SCALE
    wall, cpu = time.perf_counter(), time.process_time()
    sim = build(n, seed, duration, TFMCC_CONFIG if window == DECLARED else ABLATION_CONFIG)
    sim.run(duration)
    events = int(sim.engine_stats()["events"])
    # the cost goes to stderr, not the CSV: the CSV is a function of the scenario and seed alone
    print(f"  tfmcc-scale N={n} seed {seed} ({window}): {events:,} events, wall {time.perf_counter() - wall:.1f} s, "
          f"CPU {time.process_time() - cpu:.1f} s, peak RSS {_peak_rss_mb():.0f} MB, "
          f"load {os.getloadavg()[0]:.1f}", file=sys.stderr, flush=True)
    rec = sim.tfmcc_sender_records(sender_of(sim))
    onset, warm = c["onset_s"], c["warmup_s"]
    counts = round_counts(rec, warm)
    victim = f"rx{c['worst']}"
    first = first_clr_after(rec, victim, onset)
    worst_share = sum(clr_share(rec, f"rx{i}", warm, onset) for i in range(c["worst"]))
    victim_share = clr_share(rec, victim, onset + c["follow_within_s"], duration)
    fb = ~rec["fb_from_clr"].astype(bool)
    after = onset + c["follow_within_s"]
    return {"n": n, "seed": seed, "window": window, "events": events, "rounds": int(counts.size),
            "reports_per_round": float(counts.mean()) if counts.size else float("nan"),
            "max_reports_per_round": int(counts.max()) if counts.size else 0,
            "expected_reports": expected_reports(n - 1),
            "non_clr_reports": int(fb.sum()), "clr_reports": int((~fb).sum()),
            "clr_changes": int(rec["clr_time_ns"].size),
            "follow_s": first - onset if np.isfinite(first) else float("inf"),
            "worst_share_before": worst_share, "victim_share_after": victim_share,
            "rate_before_bps": mean_rate(rec, warm, onset), "rate_after_bps": mean_rate(rec, after, duration),
            "min_rate_bps": min_rate(rec, warm, duration),
            "peak_rate_bps": float(rec["rate_bps"].max()) if rec["rate_bps"].size else float("nan"),
            "max_rmax_s": float(rec["round_rmax_s"].max()) if rec["round_rmax_s"].size else float("nan"),
            "floor_reports": floor_reports(rec, warm), "near_floor_s": time_near_floor(rec, warm, duration)}


def _cases(quick: bool) -> list[Case]:
    sizes = QUICK_SIZES if quick else SIZES
    seeds = 1 if quick else SEEDS
    declared = [Case({"n": n, "duration": SCALE["duration_s"], "window": DECLARED}, seed=k) for n in sizes
                for k in range(1 if n >= ONE_SEED_AT else seeds)]
    # the ablation beside it, the same set-ups and seeds, below ABLATION_BELOW receivers
    ablation = [Case({"n": n, "duration": SCALE["duration_s"], "window": ABLATION}, seed=k) for n in sizes
                if n < ABLATION_BELOW for k in range(seeds)]
    return declared + ablation


def _latest(follow: pd.Series) -> str:
    """The worst seed's time from the onset to the victim's becoming CLR, as text."""
    worst = float(follow.max())
    return f"{worst:.2f} s" if np.isfinite(worst) else "never"


def _why(t: pd.DataFrame, n: int) -> str:
    """A failing claim's explanation at `n` receivers: the outputs (scale.csv's columns) that show
    whether the declared window's collapse is the cause, declared rows beside the ablation's."""
    d = t[(t["n"] == n) & (t["window"] == DECLARED)]
    a = t[(t["n"] == n) & (t["window"] == ABLATION)]
    text = (f"scale.csv, n = {n}, window = declared: {d['floor_reports'].mean():.1f} reports at §4.4's floor of one "
            f"packet per 8 s (twice a k·R receive rate of 0, §4.3.4, from a receiver without a loss event or whose "
            f"have_loss §4.3.1 cleared after 10 R without data), the sending rate at most twice that floor for "
            f"{d['near_floor_s'].mean():.1f} s of the {SCALE['duration_s'] - SCALE['warmup_s']:g} s measured; it "
            f"averages {d['rate_before_bps'].mean() / 1e3:,.1f} kb/s before the onset and "
            f"{d['rate_after_bps'].mean() / 1e3:,.1f} kb/s after it, its peak {d['peak_rate_bps'].mean() / 1e6:,.2f} "
            f"Mb/s, R_max up to {d['max_rmax_s'].max():.2f} s, {d['rounds'].mean():.1f} whole rounds after the warm-up, "
            f"the victim's time from the onset to CLR on the worst seed {_latest(d['follow_s'])}")
    if len(a):
        text += (f"; the ablation's rows (window = {ABLATION}, not a reading): {a['floor_reports'].mean():.1f} floor "
                 f"reports, {a['near_floor_s'].mean():.1f} s near the floor, {a['rate_before_bps'].mean() / 1e3:,.1f} "
                 f"and {a['rate_after_bps'].mean() / 1e3:,.1f} kb/s, peak {a['peak_rate_bps'].mean() / 1e6:,.2f} Mb/s, "
                 f"R_max up to {a['max_rmax_s'].max():.2f} s, {a['rounds'].mean():.1f} rounds, the victim's time to "
                 f"CLR on the worst seed {_latest(a['follow_s'])}, CLR a worst {a['worst_share_before'].mean():.2f} "
                 f"before and the victim {a['victim_share_after'].mean():.2f} after")
    return text


def _claims(table: pd.DataFrame) -> list:
    # every claim reads the declared reading's rows; the ablation's appear only in explanations
    t = table[table["window"] == DECLARED]
    out = []
    per_n = t.groupby("n")["reports_per_round"].mean()
    for n in [m for m in SIZES[:3] if m in per_n.index]:
        e = expected_reports(n - 1)
        out.append(claim_over_seeds(
            at_most, t[t["n"] == n]["reports_per_round"], f"reports-per-round-N{n}",
            f"RFC 4654 §3.4/§4.5 with N = {RECEIVERS_BOUND:,.0f}: with {n:,} receivers the mean non-CLR reports per "
            f"feedback round is at most 3x the timer's expectation E[M] = {e:.2f} (suppression one RTT = T/6 after the "
            "first report; the factor 3 is ours)", 3 * e, None, "reports", kind="derived"))
    if 100 in per_n.index and 10_000 in per_n.index:
        out.append(at_most(
            "reports-grow-slowly",
            f"RFC 4654 §4.5: non-CLR reports per round grow at most 3x from 100 to 10,000 receivers "
            f"({per_n[100]:.2f} -> {per_n[10_000]:.2f}; E[M]: {expected_reports(99):.2f} -> "
            f"{expected_reports(9_999):.2f}; one report per receiver would be 100x)", 3.0,
            float(per_n[10_000] / per_n[100]), "ratio", kind="derived"))
    if 10_000 in per_n.index and 100_000 in per_n.index:
        out.append(at_least(
            "reports-above-the-bound",
            f"RFC 4654 §4.5: above N = {RECEIVERS_BOUND:,.0f} the timers at t = 0 (x <= 1/N) report before any "
            f"suppression: reports per round grow at least 2x from 10,000 to 100,000 receivers ({per_n[10_000]:.2f} "
            f"-> {per_n[100_000]:.2f}; E[M]: {expected_reports(9_999):.2f} -> {expected_reports(99_999):.2f})", 2.0,
            float(per_n[100_000] / per_n[10_000]), "ratio", kind="derived"))
    within = SCALE["follow_within_s"]
    for n in sorted(per_n.index):
        rows = t[t["n"] == n]
        follows = claim_over_seeds(
            at_most, rows["follow_s"], f"clr-follows-the-worsened-path-N{n}",
            f"RFC 4654 §2/§3.4: with {n:,} receivers the receiver whose path gets lossier at "
            f"{SCALE['onset_s']:g} s is CLR within {within:g} s (ours)", within, None, "s", kind="derived",
            worst="max")
        share = np.minimum(rows["worst_share_before"].to_numpy(float), rows["victim_share_after"].to_numpy(float))
        worst = claim_over_seeds(
            at_least, share, f"clr-is-the-worst-N{n}",
            f"RFC 4654 §2: with {n:,} receivers the CLR is one of the {SCALE['worst']} worst receivers for >= 75 % of "
            f"[{SCALE['warmup_s']:g}, {SCALE['onset_s']:g}) s and the worsened receiver for >= 75 % of the time from "
            f"{within:g} s after the onset (the smaller of the two; 75 % ours)", 0.75, None, "fraction",
            kind="derived")
        out += [follows, worst]
    for c in out:
        # a claim that does not hold names the outputs that show why, at its size (the largest
        # size it compares for the growth claims)
        if not c.holds:
            m = re.search(r"-N(\d+)$", c.id)
            n = int(m.group(1)) if m else (10_000 if c.id == "reports-grow-slowly" else int(max(per_n.index)))
            c.explanation = _why(table, n)
    return out


def _plot(table: pd.DataFrame, out) -> list[str]:
    t = table[table["window"] == DECLARED]
    abl = table[table["window"] == ABLATION].groupby("n")
    fig, _ = figure(8.0, 3.4)
    fig.clf()
    ax1, ax2 = fig.subplots(1, 2)
    g = t.groupby("n")
    ns = np.asarray(sorted(g.groups), dtype=float)
    ax1.plot(ns, g["reports_per_round"].mean().to_numpy(), "o-", label="mean per round (measured)")
    ax1.plot(ns, g["max_reports_per_round"].max().to_numpy(), "^:", label="max per round (measured)")
    if len(abl):
        ax1.plot(np.asarray(sorted(abl.groups), dtype=float), abl["reports_per_round"].mean().to_numpy(), "x--",
                 color="0.5", label="mean per round, ablation (windows over R_max)")
    fine = np.logspace(np.log10(ns.min()), np.log10(ns.max()), 40)
    ax1.plot(fine, [expected_reports(int(m) - 1) for m in fine], "-", color="0.4",
             label="E[M]: RFC 4654 §4.5's timer")
    ax1.axvline(RECEIVERS_BOUND, color="0.7", ls="--", lw=0.8, label="N (timer bound)")
    ax1.set_xscale("log")
    ax1.set_yscale("log")
    ax1.set_xlabel("receivers")
    ax1.set_ylabel("non-CLR reports per feedback round")
    ax1.legend(fontsize=7)
    ax1.grid(True, alpha=0.3)
    ax2.plot(ns, g["follow_s"].mean().to_numpy(), "o-", label="onset -> victim is CLR (s)")
    ax2.set_xscale("log")
    ax2.set_xlabel("receivers")
    ax2.set_ylabel("seconds")
    ax3 = ax2.twinx()
    ax3.plot(ns, g["worst_share_before"].mean().to_numpy(), "s--", color="C1", label="CLR is a worst (before)")
    ax3.plot(ns, g["victim_share_after"].mean().to_numpy(), "d--", color="C2", label="CLR is the victim (after)")
    if len(abl):
        na = np.asarray(sorted(abl.groups), dtype=float)
        ax3.plot(na, abl["worst_share_before"].mean().to_numpy(), "s:", color="C1", alpha=0.5,
                 label="a worst (before), ablation")
        ax3.plot(na, abl["victim_share_after"].mean().to_numpy(), "d:", color="C2", alpha=0.5,
                 label="the victim (after), ablation")
    ax3.set_ylim(0, 1.05)
    ax3.set_ylabel("fraction of time")
    h1, l1 = ax2.get_legend_handles_labels()
    h3, l3 = ax3.get_legend_handles_labels()
    ax2.legend(h1 + h3, l1 + l3, fontsize=7, loc="center right")
    ax2.grid(True, alpha=0.3)
    return save(fig, out, "tfmcc_scale")


def _params(quick: bool, seed: int) -> dict:
    return {"scale": SCALE, "sizes": QUICK_SIZES if quick else SIZES, "seeds": 1 if quick else SEEDS,
            "receivers_bound": RECEIVERS_BOUND, "suppression_delay_T": SUPPRESSION_DELAY,
            "tfmcc_config": TFMCC_CONFIG, "window": {"setting": WINDOW_SETTING, "declared": DECLARED},
            "ablation": {"name": ABLATION, "config": ABLATION_CONFIG, "sizes_below": ABLATION_BELOW,
                         "note": "beside the declared reading; no claim reads it"},
            "phase_randomisation": "off (no shared queue, no loaded link)"}


SCALE_FIGURE = Figure("tfmcc-scale", "RFC 4654 (TFMCC)", "§2, §3.4, §4.5",
                      "feedback per round and the CLR following the worst receiver with 10^2 to 10^5 receivers "
                      "behind heterogeneous links, against §4.5's timer", _cases, measure, pd.DataFrame, _claims,
                      _plot, "scale.csv", _params)
EXPERIMENT = experiment(SCALE_FIGURE)
