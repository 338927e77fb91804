"""tcp-fairness and tcp-formula: the runs over K, queues, loss rates and seeds, their CSVs,
plots and claims.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from castlab.experiments.common import at_least, at_most, in_range, within
from castlab.experiments.figure import Case, Figure
from castlab.experiments.plotting import figure, save
from castlab.experiments.tcp.scenarios import (BBR, CUBIC, FAIR, FORMULA, LINUX_HEADER, LINUX_MSS, base_rtt_s, bdp_pkts,
                                               cubic_epochs, dumbbell_bdp_pkts, fair_queue, fairness_run, formula_run,
                                               one_flow_run, phases, probe_rtt_due, sent_bytes_between)
from castlab.metrics import padhye_throughput, tcp_simple_throughput


# Two sender details decide whether this holds:
# - RTT samples from timestamped retransmissions (TcpConfig.timestamps, RFC 7323 §4.1). With
#   strict Karn a flow that lost a burst stays in go-back-N with a backed-off RTO for many
#   RTTs, each further loss doubling it up to 60 s, and Jain's index drops under DropTail.
# - On a timeout, ssthresh halves the uninflated window, not snd_max - snd_una. When a fast
#   retransmission is lost, duplicate ACKs inflate cwnd for a whole RTO and FlightSize grows
#   to hundreds of segments; halving that gives a slow start that overruns the RED queue and
#   synchronises the flows' timeouts, which leaves the link under-used.


FAIR_KS = list(range(2, 17))
FAIR_KS_QUICK = [2, 4, 8, 16]
FAIR_QUEUES = ["droptail", "red"]


def _fairness_setup(quick: bool) -> tuple[list[int], int, float, float]:
    """K values, runs per (K, queue), duration and warm-up."""
    return (FAIR_KS_QUICK, 2, 100.0, 20.0) if quick else (FAIR_KS, 5, 200.0, 20.0)


def _fairness_cases(quick: bool) -> list[Case]:
    ks, runs, duration, warmup = _fairness_setup(quick)
    # run r of every (K, queue) shares seed + r
    return [Case({"k": k, "queue": q, "duration": duration, "warmup": warmup}, seed=r)
            for k in ks for q in FAIR_QUEUES for r in range(runs)]


def _fairness_measure(seed: int, k: int, queue: str, duration: float, warmup: float) -> dict:
    return fairness_run(k, queue, seed, duration, warmup)


def _fairness_agg(df: pd.DataFrame) -> pd.DataFrame:
    return df.groupby(["queue", "k"]).agg(jain_mean=("jain", "mean"), jain_min=("jain", "min"), jain_max=("jain", "max"),
                                          utilisation_mean=("utilisation", "mean"), min_x=("min_x", "min"),
                                          timeouts_mean=("timeouts", "mean")).reset_index()


def _fairness_plot(df: pd.DataFrame, out: Path) -> list[str]:
    agg = _fairness_agg(df)
    runs = int(df.groupby(["queue", "k"]).size().max())
    fig, ax = figure()
    for q, marker in [("droptail", "o"), ("red", "s")]:
        a = agg[agg["queue"] == q]
        ax.errorbar(a["k"], a["jain_mean"], yerr=[a["jain_mean"] - a["jain_min"], a["jain_max"] - a["jain_mean"]],
                    fmt=f"{marker}-", capsize=3, label=f"{q} (mean, min-max of {runs} runs)")
    ax.axhline(0.95, color="0.6", ls="--", lw=1)
    ax.set_ylim(min(0.5, float(agg["jain_min"].min()) - 0.02), 1.01)
    ax.set_xlabel("number of NewReno flows K")
    ax.set_ylabel("fairness index (eq. 3)")
    ax.set_title(f"K NewReno flows, {FAIR['bottleneck_bps'] / 1e6:g} Mb/s dumbbell, equal RTT")
    ax.legend(loc="lower left")
    return save(fig, out, "fairness")


def _fairness_claims(df: pd.DataFrame) -> list:
    agg = _fairness_agg(df)
    ks = sorted(df["k"].unique())
    runs = int(df.groupby(["queue", "k"]).size().max())
    claims = []
    for q in FAIR_QUEUES:
        a = agg[agg["queue"] == q]
        claims.append(at_least(f"jain-near-1-{q}", f"{q}: Jain's index (eq. 3-4), averaged over {runs} runs, is >= 0.95 "
                               f"for every K in {ks[0]}..{ks[-1]} (the lowest K's value)", 0.95, float(a["jain_mean"].min()),
                               "index", kind="derived"))
        claims.append(at_least(f"utilisation-{q}", f"{q}: the flows' goodput fills >= 85 % of the bottleneck at every K "
                               "(payload is 1000/1040 of the wire; RED keeps the queue short, which costs some "
                               "utilisation when there are few flows)", 0.85, float(a["utilisation_mean"].min()), "fraction",
                               kind="sanity"))
    return claims


def _fairness_params(quick: bool, seed: int) -> dict:
    ks, runs, duration, warmup = _fairness_setup(quick)
    return {**FAIR, "ks": ks, "runs_per_k": runs, "duration_s": duration, "warmup_s": warmup, "queues": FAIR_QUEUES,
            "bdp_pkts": round(dumbbell_bdp_pkts(), 1),
            "droptail": fair_queue("droptail", dumbbell_bdp_pkts()), "red": fair_queue("red", dumbbell_bdp_pkts()),
            "fair_share": "O_i = bottleneck_bps / K (Rainbow eq. 4)", "throughput": "goodput (in-order payload at the sink)"}


FAIRNESS_FIGURE = Figure("tcp-fairness", "Rainbow §B.1 (eq. 3-4)", "TCP baseline",
                         "K = 2..16 NewReno flows on a dumbbell: Jain's index near 1", _fairness_cases,
                         _fairness_measure, pd.DataFrame, _fairness_claims, _fairness_plot, "fairness_runs.csv",
                         _fairness_params, derived={"fairness.csv": _fairness_agg})

# The band for Padhye's formula over p in 0.5-5 %, and why: the model assumes that once a
# packet of a round is lost, the rest of that round is lost too (Padhye et al. §2.1), which
# makes a loss end in a timeout with probability ~min(1, 3/w); Bernoulli losses on the link
# are independent, so fewer losses end in a timeout than the model says and it underestimates
# in this range. The band covers that structural bias and the sampling noise of a quick run (a
# few hundred loss events per point).
PADHYE_BAND = 0.20
# The simple formula ignores timeouts: it should be close only where they are rare. From
# p = 1 % on, enough loss indications end in a timeout of min_rto = 1 s (10 RTTs) that the
# formula runs high, so the claim covers p <= 0.5 %.
SIMPLE_BAND_LOW_P = 0.10
SIMPLE_LOW_P_MAX = 0.005


FORMULA_PS = [0.001, 0.002, 0.005, 0.01, 0.02, 0.03, 0.05, 0.07, 0.1]
FORMULA_PS_QUICK = [0.001, 0.005, 0.01, 0.02, 0.05, 0.1]


def _formula_timing(quick: bool) -> tuple[float, float]:
    return (600.0, 20.0) if quick else (4000.0, 20.0)


def _formula_cases(quick: bool) -> list[Case]:
    duration, warmup = _formula_timing(quick)
    return [Case({"p": p, "duration": duration, "warmup": warmup}) for p in (FORMULA_PS_QUICK if quick else FORMULA_PS)]


def _formula_measure(seed: int, p: float, duration: float, warmup: float) -> dict:
    return formula_run(p, seed, duration, warmup)


def _formula_plot(df: pd.DataFrame, out: Path) -> list[str]:
    rtt = float(df["rtt_s"].mean())
    t_rto = float(df["t_rto_s"].mean())
    grid = np.logspace(np.log10(df["p"].min()), np.log10(df["p"].max()), 200)
    fig, ax = figure()
    ax.loglog(grid, tcp_simple_throughput(1, rtt, grid), "-", color="0.5", label="1.22 / (RTT √p)")
    ax.loglog(grid, padhye_throughput(1, rtt, grid, t_rto), "--", color="C1", label=f"Padhye (t_RTO = {t_rto:.2g} s, b = 1)")
    ax.loglog(df["p"], df["send_rate_pps"], "o", color="C0", label="castlab Reno (send rate)")
    ax.set_xlabel("packet loss probability p")
    ax.set_ylabel("throughput (packets/s)")
    ax.set_title(f"One Reno flow, RTT {rtt * 1e3:.0f} ms, Bernoulli loss")
    ax.legend()
    return save(fig, out, "formula")


def _formula_claims(df: pd.DataFrame) -> list:
    band = df[(df["p"] >= 0.005) & (df["p"] <= 0.05)]
    low = df[df["p"] <= SIMPLE_LOW_P_MAX]
    high = df[df["p"] >= 0.02]
    worst_p = df.loc[df["p"].idxmax()]
    return [
        at_most("padhye-band", f"Padhye's formula is within ±{PADHYE_BAND:.0%} of the measured send rate for every p in "
                "0.5-5 % (largest |relative error|)", PADHYE_BAND, float(band["padhye_rel_err"].abs().max()),
                "relative error", kind="derived"),
        at_most("simple-low-p", f"the simple formula is within ±{SIMPLE_BAND_LOW_P:.0%} where timeouts are rare (p <= {SIMPLE_LOW_P_MAX:.1%})",
                SIMPLE_BAND_LOW_P, float(low["simple_rel_err"].abs().max()), "relative error", kind="derived"),
        at_least("simple-overestimates-high-p", f"the simple formula overestimates at p = {worst_p['p']:.0%} "
                 "(it ignores timeouts): simple / measured", 1.5, float(worst_p["simple_pps"] / worst_p["send_rate_pps"]),
                 "ratio", kind="derived"),
        at_most("padhye-closer-high-p", "Padhye is closer than the simple formula at every p >= 2 % (points where it is not)",
                0, int((high["padhye_rel_err"].abs() >= high["simple_rel_err"].abs()).sum()), "points", kind="derived"),
        at_most("losses-only-from-p", "no queue drops: every loss comes from the link's Bernoulli p", 0,
                int(df["queue_drops"].sum()), "packets", kind="sanity"),
    ]


def _formula_params(quick: bool, seed: int) -> dict:
    ps = FORMULA_PS_QUICK if quick else FORMULA_PS
    duration, warmup = _formula_timing(quick)
    return {**FORMULA, "ps": ps, "duration_s": duration, "warmup_s": warmup, "seeds": [seed + k for k in range(len(ps))],
            "padhye_band": PADHYE_BAND, "simple_band_low_p": SIMPLE_BAND_LOW_P, "simple_low_p_max": SIMPLE_LOW_P_MAX,
            "rtt": "mean RTT sample of the run", "t_rto": "mean RTO of the run (RFC 6298, floor min_rto)",
            "measured": "segments sent per second, retransmissions included (Padhye's B(p))"}


FORMULA_FIGURE = Figure("tcp-formula", "Padhye 1998 / LE-SBCC", "TCP baseline",
                        "one Reno flow under random loss p: throughput against 1.22/(RTT√p) and Padhye",
                        _formula_cases, _formula_measure, pd.DataFrame, _formula_claims, _formula_plot, "formula.csv",
                        _formula_params)


# ------------------------------------------------------------------------------------------
# tcp-cubic: the window between losses against RFC 9438's W_cubic
# ------------------------------------------------------------------------------------------

C_CUBIC, BETA_CUBIC = 0.4, 0.7  # RFC 9438 §4.2 and §4.6
# Tolerances, fixed before the first run:
# - β: the window after a reduction over the one before, every reduction: ±0.01 (byte rounding);
# - the curve: cwnd(t) against W_cubic(t + SRTT(t)) (§4.2's target, which cwnd chases within a
#   round trip), the largest gap over every epoch as a fraction of W_max: <= 3 % (the target
#   moves by up to 3·C·K²·RTT in a round trip, ~1.5 % of W_max here, and SRTT is a moving value);
# - C: the t³ coefficient of a least-squares cubic fitted to each epoch's window, averaged over
#   epochs: ±5 % of 0.4.
CUBIC_BETA_TOL = 0.01
CUBIC_CURVE_MAX = 0.03
CUBIC_C_REL_TOL = 0.05


def _cubic_cases(quick: bool) -> list[Case]:
    return [Case({"duration": 40.0 if quick else 120.0})]


def _cubic_measure(seed: int, duration: float) -> dict:
    f = CUBIC
    queue = int(round(bdp_pkts(f)))
    tr, st, ch = one_flow_run(f, queue, seed, duration)
    return {"queue": queue, "timeouts": st["timeouts"], "epochs": cubic_epochs(tr, LINUX_MSS, C_CUBIC, BETA_CUBIC),
            "cc_time_ns": tr["cc_time_ns"], "cwnd_bytes": tr["cwnd_bytes"], "ssthresh_bytes": tr["ssthresh_bytes"]}


def _cubic_table(runs: list[dict]) -> dict:
    """cubic_epochs.csv (one row per epoch between two losses, with the fitted C), cubic_cwnd.csv
    (the window over time), the epochs' model curves for the plot, and the run's queue and
    timeouts."""
    (r,) = runs
    rows, fits = [], []
    for i, e in enumerate(r["epochs"]):
        d = np.abs(e["cwnd"] - e["model"]) / e["w_max"]
        c3 = float(np.polyfit(e["t"], e["cwnd"], 3)[0]) if len(e["t"]) >= 8 else float("nan")
        fits.append(c3)
        rows.append({"epoch": i, "t_epoch_s": e["t_epoch_s"], "w_max_segs": e["w_max"], "cwnd_before_segs": e["cwnd_before"],
                     "cwnd_epoch_segs": e["cwnd_epoch"], "beta": e["cwnd_epoch"] / e["cwnd_before"], "k_s": e["k_s"],
                     "length_s": e["length_s"], "max_dev_of_w_max": float(d.max()), "rms_dev_of_w_max": float(np.sqrt((d ** 2).mean())),
                     "fitted_c": c3})
    cwnd = pd.DataFrame({"time_s": r["cc_time_ns"] / 1e9, "cwnd_segs": r["cwnd_bytes"] / LINUX_MSS,
                         "ssthresh_segs": np.minimum(r["ssthresh_bytes"], 2**40) / LINUX_MSS})
    return {"cubic_epochs.csv": pd.DataFrame(rows), "cubic_cwnd.csv": cwnd, "epochs": r["epochs"], "fits": fits,
            "queue": r["queue"], "timeouts": r["timeouts"]}


def _cubic_plot(t: dict, out: Path) -> list[str]:
    f, cw = CUBIC, t["cubic_cwnd.csv"]
    fig, ax = figure()
    ax.plot(cw["time_s"], cw["cwnd_segs"], "-", color="C0", lw=1, label="castlab CUBIC cwnd")
    for k, e in enumerate(t["epochs"]):
        ax.plot(e["t"] + e["t_epoch_s"], e["model"], "--", color="C1", lw=1,
                label="W_cubic(t + SRTT), RFC 9438 eq. 1-2" if k == 0 else None)
    ax.set_xlabel("time (s)")
    ax.set_ylabel("congestion window (segments)")
    ax.set_title(f"One CUBIC flow, {f['bottleneck_bps'] / 1e6:g} Mb/s, base RTT {base_rtt_s(f) * 1e3:.0f} ms, "
                 f"queue {t['queue']} pkts")
    ax.legend(loc="lower right")
    return save(fig, out, "cubic")


def _cubic_claims(t: dict) -> list:
    df, fits, epochs = t["cubic_epochs.csv"], t["fits"], t["epochs"]
    betas = df["beta"] if len(df) else pd.Series([float("nan")])
    worst_beta = float(betas.iloc[int((betas - BETA_CUBIC).abs().values.argmax())])
    return [
        within("cubic-beta", "every reduction multiplies the window by β_cubic = 0.7 (RFC 9438 §4.6 Figure 5; the worst "
               "reduction)", BETA_CUBIC, worst_beta, "ratio", abs_tol=CUBIC_BETA_TOL, kind="derived"),
        at_most("cubic-curve", "between two losses the window follows W_cubic(t + SRTT) of RFC 9438 §4.2 (Figures 1 and 2, "
                "W_max and cwnd_epoch from the trace, fast convergence by §4.7): largest gap over every epoch, as a fraction "
                "of W_max", CUBIC_CURVE_MAX, float(df["max_dev_of_w_max"].max()) if len(df) else float("nan"), "fraction",
                kind="derived"),
        within("cubic-c", "a cubic fitted to each epoch's window has the t³ coefficient C = 0.4 segments/s³ (RFC 9438 §4.2; "
               "mean over epochs)", C_CUBIC, float(np.nanmean(fits)) if fits else float("nan"), "segments/s³",
               rel_tol=CUBIC_C_REL_TOL, kind="derived"),
        at_least("cubic-epochs", "epochs between two losses compared", 2, len(epochs), "epochs", kind="sanity"),
        at_most("cubic-no-timeouts", "the flow recovers every loss without a retransmission timeout", 0, t["timeouts"],
                "timeouts", kind="sanity"),
    ]


def _cubic_params(quick: bool, seed: int) -> dict:
    f = CUBIC
    return {**f, "duration_s": _cubic_cases(quick)[0].params["duration"], "queue_limit_pkts": int(round(bdp_pkts(f))),
            "bdp_pkts": round(bdp_pkts(f), 1), "base_rtt_s": round(base_rtt_s(f), 6), "mss_bytes": LINUX_MSS,
            "header_bytes": LINUX_HEADER, "settings": "TcpConfig.linux() (the cubic variant's defaults)", "c": C_CUBIC,
            "beta": BETA_CUBIC, "beta_tol": CUBIC_BETA_TOL, "curve_max": CUBIC_CURVE_MAX, "c_rel_tol": CUBIC_C_REL_TOL,
            "epoch": "from the first window increase after a reduction to the next reduction"}


CUBIC_FIGURE = Figure("tcp-cubic", "RFC 9438 §4", "TCP baseline",
                      "one CUBIC flow alone: the window between losses against W_cubic(t), β and C", _cubic_cases,
                      _cubic_measure, _cubic_table, _cubic_claims, _cubic_plot, "", _cubic_params)


# ------------------------------------------------------------------------------------------
# tcp-bbr: the pacing-gain cycle, PROBE_RTT and the queue
# ------------------------------------------------------------------------------------------

BBR_GAINS = [1.25, 0.75, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0]  # tcp_bbr.c bbr_pacing_gain
# Tolerances, fixed before the first run except PROBE_RTT's timing (docs/fidelity/tcp.md):
# - the 5/4 and 3/4 phases' sending rate over the gain-1 phases' (bytes sent per phase time,
#   every phase of the run): ±0.05 of the gain (a phase is ~one RTT, ~40 segments, so ±1
#   segment at its edges is ±2.5 %);
# - the gain-1 phases' sending rate over the bottleneck rate: 0.95..1.02 (tcp_bbr.c paces 1 %
#   below the model's bandwidth);
# - a gain-1 phase lasts more than one min RTT and at most 10 % more (it ends on the first ACK
#   after min_rtt: tcp_bbr.c bbr_is_next_cycle_phase);
# - PROBE_RTT: 200 ms at 4 segments after in flight falls to 4, plus at most a round trip to
#   drain and one to see a round end: 0.2 s .. 0.2 s + 3 base RTTs; it begins when
#   bbr_update_min_rtt's rule, applied to the traced RTT samples, says (the min-RTT filter is
#   10 s old: bbr_min_rtt_win_sec), within 5 ms (two ACKs), and never sooner than 10 s after
#   the last one ended (not exactly 10 s after: any RTT sample below the filter's value restarts
#   its 10 s, tcp_bbr.c's strict "<");
# - the median RTT after start-up is at most 1.25 base RTTs (BBR's aim: no standing queue).
BBR_GAIN_TOL = 0.05
BBR_CRUISE = (0.95, 1.02)
BBR_PHASE_LEN = (1.0, 1.1)
BBR_PROBE_RTT_S = 0.2
BBR_PROBE_RTT_INTERVAL = 10.0
BBR_PROBE_RTT_DUE_TOL = 0.005
BBR_QUEUE_MAX = 1.25


def _bbr_one(seed: int, duration: float) -> dict:
    f = BBR
    queue = int(round(f["queue_bdp"] * bdp_pkts(f)))
    tr, st, ch = one_flow_run(f, queue, seed, duration)
    ph = phases(tr)
    probe = [(c, a, b) for c, a, b in ph if c >= 8]
    by_gain: dict[float, list[float]] = {g: [0.0, 0.0] for g in set(BBR_GAINS)}
    out_of_order = 0
    prev = None
    for c, a, b in ph:
        if c >= 8 and prev is not None and prev >= 8 and c != 8 + (prev - 8 + 1) % 8:
            out_of_order += 1
        prev = c
    for c, a, b in probe:
        g = BBR_GAINS[c - 8]
        by_gain[g][0] += sent_bytes_between(tr, a, b)
        by_gain[g][1] += b - a
    rate = {g: (v[0] * 8 / v[1] if v[1] > 0 else float("nan")) for g, v in by_gain.items()}
    min_rtt = float(tr["rtt_ns"].min()) / 1e9
    cruise_len = [b - a for c, a, b in probe if BBR_GAINS[c - 8] == 1.0]
    prtt = [(a, b) for c, a, b in ph if c == 2]
    gaps = [a1 - b0 for (_, b0), (a1, _) in zip(prtt, prtt[1:])]
    due = probe_rtt_due(tr, ph)
    entries = [a for a, _ in prtt]
    due_err = (max((abs(a - d) for a, d in zip(entries, due)), default=0.0)
               if len(due) in (len(entries), len(entries) + 1) and len(entries) > 0 else float("inf"))
    warm = tr["rtt_time_ns"] > 5e9
    base = base_rtt_s(f)
    first_probe_bw = next((c for c, _, _ in ph if c >= 8), -1)
    return {
        "seed": seed, "queue_limit_pkts": queue, "rate_125_bps": rate[1.25], "rate_075_bps": rate[0.75],
        "rate_100_bps": rate[1.0], "ratio_125": rate[1.25] / rate[1.0], "ratio_075": rate[0.75] / rate[1.0],
        "cruise_of_link": rate[1.0] / f["bottleneck_bps"], "phases": len(probe), "out_of_order": out_of_order,
        "first_phase": first_probe_bw - 8, "min_rtt_s": min_rtt, "base_rtt_s": base,
        "phase_len_median_of_min_rtt": float(np.median(cruise_len)) / min_rtt if cruise_len else float("nan"),
        "probe_rtt_n": len(prtt), "probe_rtt_min_s": min((b - a for a, b in prtt), default=float("nan")),
        "probe_rtt_max_s": max((b - a for a, b in prtt), default=float("nan")),
        "probe_rtt_gap_min_s": min(gaps, default=float("nan")), "probe_rtt_gap_max_s": max(gaps, default=float("nan")),
        "median_rtt_of_base": float(np.median(tr["rtt_ns"][warm])) / 1e9 / base,
        "utilisation": st["received_bytes"] * 8 / duration / f["bottleneck_bps"], "drops": ch["drops_forced"] + ch["drops_early"],
        "probe_rtt_due_err_s": due_err, "timeouts": st["timeouts"], "_trace": tr,
    }


def _bbr_duration(quick: bool) -> float:
    return 32.0 if quick else 65.0


def _bbr_cases(quick: bool) -> list[Case]:
    """One run per seed; the first keeps its trace (bbr_states.csv and the plot)."""
    return [Case({"duration": _bbr_duration(quick), "keep_trace": k == 0}) for k in range(1 if quick else 3)]


def _bbr_measure(seed: int, duration: float, keep_trace: bool) -> dict:
    r = _bbr_one(seed, duration)
    tr = r.pop("_trace")
    r["_duration"] = duration
    if keep_trace:
        r["_trace"] = {k: tr[k] for k in ("tx_time_ns", "tx_bytes", "state_time_ns", "state_code", "pacing_rate_bps")}
    return r


def _bbr_table(runs: list[dict]) -> dict:
    """bbr_runs.csv (one row per seed), bbr_states.csv (the first run's states and pacing rate),
    and that run's sending trace for the plot."""
    df = pd.DataFrame([{k: v for k, v in r.items() if not k.startswith("_")} for r in runs])
    tr = runs[0]["_trace"]
    states = pd.DataFrame({"time_s": tr["state_time_ns"] / 1e9, "state_code": tr["state_code"],
                           "pacing_rate_bps": tr["pacing_rate_bps"]})
    return {"bbr_runs.csv": df, "bbr_states.csv": states, "trace": tr, "duration": runs[0]["_duration"]}


def _bbr_plot(t: dict, out: Path) -> list[str]:
    f, tr = BBR, t["trace"]
    duration = t["duration"]
    fig, ax = figure()
    tx = tr["tx_time_ns"] / 1e9
    win = 0.010
    edges = np.arange(0.0, min(4.0, duration), win) + 8.0
    sent = np.diff(np.interp(edges, tx, tr["tx_bytes"])) * 8 / win
    ax.step(edges[:-1], sent / 1e6, where="post", color="C0", lw=1, label="sending rate (10 ms bins)")
    ax.step(tr["state_time_ns"] / 1e9, tr["pacing_rate_bps"] / 1e6, where="post", color="C1", lw=1, label="pacing rate")
    ax.axhline(f["bottleneck_bps"] / 1e6, color="0.6", ls="--", lw=1, label="bottleneck")
    ax.set_xlim(edges[0], edges[-1])
    ax.set_xlabel("time (s)")
    ax.set_ylabel("Mb/s")
    ax.set_title(f"One BBR flow, {f['bottleneck_bps'] / 1e6:g} Mb/s, base RTT {base_rtt_s(f) * 1e3:.0f} ms: the gain cycle")
    ax.legend(loc="lower right")
    return save(fig, out, "bbr")


def _bbr_claims(t: dict) -> list:
    f, df = BBR, t["bbr_runs.csv"]

    def worst(col: str, target: float) -> float:
        v = df[col]
        return float(v.iloc[int((v - target).abs().values.argmax())])

    pr_hi = BBR_PROBE_RTT_S + 3 * base_rtt_s(f)
    claims = [
        within("bbr-probe-gain", "in PROBE_BW's 5/4 phase the flow sends 1.25 times as fast as in the gain-1 phases "
               "(tcp_bbr.c bbr_pacing_gain; bytes sent per phase time; the worst seed)", 1.25, worst("ratio_125", 1.25),
               "ratio", abs_tol=BBR_GAIN_TOL, kind="derived"),
        within("bbr-drain-gain", "in the 3/4 phase it sends 0.75 times as fast as in the gain-1 phases (the worst seed)",
               0.75, worst("ratio_075", 0.75), "ratio", abs_tol=BBR_GAIN_TOL, kind="derived"),
        in_range("bbr-cruise-rate", "in the gain-1 phases it sends at the bottleneck rate, 1 % below the model's bandwidth "
                 "(bbr_pacing_margin_percent; the worst seed)", *BBR_CRUISE, worst("cruise_of_link", 1.0), "of the link",
                 kind="derived"),
        at_most("bbr-cycle-order", "PROBE_BW's phases follow one another in the cycle's order (transitions out of order, "
                "all seeds)", 0, int(df["out_of_order"].sum()), "transitions", kind="derived"),
        at_most("bbr-no-drain-start", "PROBE_BW never starts in the 3/4 phase (bbr_reset_probe_bw_mode; seeds that did)", 0,
                int((df["first_phase"] == 1).sum()), "runs", kind="derived"),
        in_range("bbr-phase-length", "a gain-1 phase lasts one min RTT (the median over phases, in min RTTs; the worst seed)",
                 *BBR_PHASE_LEN, worst("phase_len_median_of_min_rtt", 1.05), "min RTTs", kind="derived"),
        at_least("bbr-probe-rtt-time", "PROBE_RTT lasts at least 200 ms (bbr_probe_rtt_mode_ms; the shortest)",
                 BBR_PROBE_RTT_S, float(df["probe_rtt_min_s"].min()), "s", kind="derived"),
        at_most("bbr-probe-rtt-bound", f"and at most 200 ms plus 3 base RTTs ({pr_hi:.3f} s; the longest)", round(pr_hi, 4),
                float(df["probe_rtt_max_s"].max()), "s", kind="derived"),
        at_most("bbr-probe-rtt-when", "PROBE_RTT begins when the min-RTT filter is 10 s old (bbr_update_min_rtt's rule "
                "applied to the traced RTT samples; the largest gap between rule and run, all seeds)", BBR_PROBE_RTT_DUE_TOL,
                float(df["probe_rtt_due_err_s"].max()), "s", kind="derived"),
        at_least("bbr-probe-rtt-interval", "the next PROBE_RTT begins no sooner than 10 s after the last one ended "
                 "(the shortest gap)", BBR_PROBE_RTT_INTERVAL, float(df["probe_rtt_gap_min_s"].min()), "s", kind="derived"),
        at_most("bbr-small-queue", "after start-up the median RTT is within 1.25 base RTTs: no standing queue "
                "(the worst seed)", BBR_QUEUE_MAX, float(df["median_rtt_of_base"].max()), "base RTTs", kind="derived"),
        at_least("bbr-probe-rtt-seen", "PROBE_RTT episodes per run (the fewest)", 2, int(df["probe_rtt_n"].min()), "episodes",
                 kind="sanity"),
        at_least("bbr-utilisation", "the flow's goodput fills >= 90 % of the bottleneck over the run (start-up and "
                 "PROBE_RTT included; the worst seed)", 0.9, float(df["utilisation"].min()), "fraction", kind="sanity"),
    ]
    return claims


def _bbr_params(quick: bool, seed: int) -> dict:
    f = BBR
    return {**f, "seeds": [seed + k for k in range(len(_bbr_cases(quick)))], "duration_s": _bbr_duration(quick),
            "queue_limit_pkts": int(round(f["queue_bdp"] * bdp_pkts(f))), "bdp_pkts": round(bdp_pkts(f), 1),
            "base_rtt_s": round(base_rtt_s(f), 6), "mss_bytes": LINUX_MSS, "header_bytes": LINUX_HEADER,
            "settings": "TcpConfig.linux() (the bbr variant's defaults)", "gains": BBR_GAINS, "gain_tol": BBR_GAIN_TOL,
            "cruise_range": BBR_CRUISE, "phase_len_range": BBR_PHASE_LEN, "probe_rtt_s": BBR_PROBE_RTT_S,
            "probe_rtt_interval_s": BBR_PROBE_RTT_INTERVAL, "probe_rtt_due_tol_s": BBR_PROBE_RTT_DUE_TOL,
            "queue_max": BBR_QUEUE_MAX,
            "sending_rate": "on-wire bytes sent in a phase over its duration, summed over the run's phases of one gain"}


BBR_FIGURE = Figure("tcp-bbr", "Linux tcp_bbr.c (BBR v1)", "TCP baseline",
                    "one BBR flow alone: the pacing-gain cycle's sending rates, PROBE_RTT, the queue", _bbr_cases,
                    _bbr_measure, _bbr_table, _bbr_claims, _bbr_plot, "", _bbr_params)
