"""The tfmcc experiment: three set-ups over seeds, their CSVs, the figure and the claims.

Rules and tolerances, fixed before any run:
- RFC 4654 §1: "A multicast flow is 'reasonably fair' if its sending rate is generally within a
  factor of two of the sending rate of a TCP flow from the sender to the slowest receiver of
  the multicast group under the same network conditions." Checked twice: TFMCC's goodput over
  the mean TCP goodput on a shared DropTail dumbbell (K = 1..8 TCP flows), and over the goodput
  of a TCP flow on the slowest receiver's own lossy path; each in [0.5, 2] on the mean over seeds.
- §2: "The sending rate of the multicast transmission is adapted to the receiver experiencing
  the worst network conditions." Ours: the receiver behind the lossiest path is the CLR for at
  least 75 % of the measured time.
- §3.4/§4.5 (feedback suppression): ours, as numbers the RFC does not give: with N receivers the
  mean number of non-CLR reports per feedback round stays at most 10 at the largest N, and grows
  at most threefold from N = 10 to the largest N (an implosion would grow with N).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from castlab.experiments.common import at_least, at_most, claim_over_seeds, in_range
from castlab.experiments.figure import Case, Figure
from castlab.experiments.plotting import figure, save
from castlab.experiments.tcp.scenarios import HEADER_BYTES
from castlab.experiments.tfmcc.declared import declared_readings
from castlab.experiments.tfmcc.topology import (DUMBBELL, PACKET_BYTES, PATHS, STAR, bottleneck_queue, clr_share,
                                                dumbbell, paths, rate_at, reports_per_round, sender_of, star)


def _receiver_bytes(sim, names) -> list[int]:
    return [sim.tfmcc_receiver_records(sim.scenario_handles.receivers[n])["bytes"] for n in names]


def dumbbell_run(k: int, seed: int, duration: float, warmup: float, keep_series: bool = False,
                 queue: str = "droptail") -> dict:
    """TFMCC against K TCP flows: goodputs over (warmup, duration], and the share of each one's
    packets the bottleneck dropped."""
    sim = dumbbell(k, seed, duration, queue).build(seed)
    rx = [f"rx{i}" for i in range(DUMBBELL["receivers"])]
    tcps = [sim.scenario_handles.tcp[f"tcp{j}"] for j in range(k)]
    sim.run(warmup)
    b0, t0 = _receiver_bytes(sim, rx), [sim.tcp_stats(a)["received_bytes"] for a in tcps]
    sim.run(duration)
    b1, t1 = _receiver_bytes(sim, rx), [sim.tcp_stats(a)["received_bytes"] for a in tcps]
    span = duration - warmup
    tf = float(np.mean([(b - a) * 8 / span for a, b in zip(b0, b1)]))
    tcp = [(b - a) * 8 / span for a, b in zip(t0, t1)]
    rec = sim.tfmcc_sender_records(sender_of(sim))
    st = [sim.tfmcc_receiver_status(sim.scenario_handles.receivers[n]) for n in rx]
    rx_rec = [sim.tfmcc_receiver_records(sim.scenario_handles.receivers[n]) for n in rx]
    lost, got = sum(r["lost"] for r in rx_rec), sum(r["received"] for r in rx_rec)
    tstats = [sim.tcp_stats(a) for a in tcps]
    out = {"queue": queue, "k_tcp": k, "seed": seed,
           "tfmcc_packet_loss": lost / max(lost + got, 1),
           "tcp_retransmitted": sum(x["retransmissions"] for x in tstats) / max(sum(x["segments_sent"] for x in tstats), 1), "tfmcc_bps": tf, "tcp_mean_bps": float(np.mean(tcp)),
           "ratio": tf / float(np.mean(tcp)), "share": tf / (tf + float(np.sum(tcp))),
           "utilisation": (tf + float(np.sum(tcp))) / DUMBBELL["bottleneck_bps"],
           "loss_event_rate": float(np.mean([s["loss_event_rate"] for s in st])),
           "halvings": int(rec["halvings"]), "slowstart_end_s": rec["slowstart_end_s"]}
    if keep_series:
        t = np.arange(0.0, duration, 1.0)
        out["_t"], out["_rate"] = t, rate_at(rec, t + 0.5)
        out["_tcp"] = []
        for a in tcps:
            tr = sim.tcp_trace(a)
            tt, cum = tr["rx_time_ns"], tr["rx_bytes"]
            idx = np.searchsorted(tt / 1e9, np.append(t, duration), side="right") - 1
            c = np.where(idx >= 0, cum[np.clip(idx, 0, None)], 0).astype(float)
            out["_tcp"].append(np.diff(c) * 8.0)
    return out


def paths_run(seed: int, duration: float, warmup: float) -> dict:
    """The CLR on paths of different loss, and TCP on the worst path."""
    sim = paths(duration).build(seed)
    worst = f"rx{int(np.argmax(PATHS['loss']))}"
    a = sim.scenario_handles.tcp["tcp"]
    sim.run(warmup)
    b0, t0 = _receiver_bytes(sim, [worst])[0], sim.tcp_stats(a)["received_bytes"]
    sim.run(duration)
    b1, t1 = _receiver_bytes(sim, [worst])[0], sim.tcp_stats(a)["received_bytes"]
    span = duration - warmup
    rec = sim.tfmcc_sender_records(sender_of(sim))
    rows = {}
    for i, loss in enumerate(PATHS["loss"]):
        s = sim.tfmcc_receiver_status(sim.scenario_handles.receivers[f"rx{i}"])
        rows[f"p_rx{i}"] = s["loss_event_rate"]
        rows[f"clr_share_rx{i}"] = clr_share(rec, f"rx{i}", warmup, duration)
    tf, tcp = (b1 - b0) * 8 / span, (t1 - t0) * 8 / span
    return {"seed": seed, "tfmcc_bps": tf, "tcp_worst_bps": tcp, "ratio": tf / tcp,
            "clr_share_worst": clr_share(rec, worst, warmup, duration), **rows}


def star_run(n: int, seed: int, duration: float, warmup: float) -> dict:
    sim = star(n, duration).build(seed)
    sim.run(duration)
    rec = sim.tfmcc_sender_records(sender_of(sim))
    return {"n": n, "seed": seed, "reports_per_round": reports_per_round(rec, warmup),
            "rounds": int(np.sum(rec["round_time_ns"] >= warmup * 1e9)),
            "clr_reports": int(np.sum(rec["fb_from_clr"])), "reports": int(rec["fb_time_ns"].size)}


def _sizes(quick: bool) -> dict:
    if quick:
        return {"seeds": 1, "ks": [1, 4], "ns": [2, 10, 25], "duration": 60.0, "warmup": 20.0}
    return {"seeds": 3, "ks": [1, 2, 4, 8], "ns": [2, 10, 30, 100], "duration": 300.0, "warmup": 60.0}


def _cases(quick: bool) -> list[Case]:
    """The dumbbell (DropTail, then RED) per K and seed, the paths per seed, the star per N and
    seed; the first seed's DropTail run at the largest K keeps its rate series (rates.csv)."""
    z = _sizes(quick)
    d, w = z["duration"], z["warmup"]
    out = [Case({"setup": "dumbbell", "k": k, "queue": q, "duration": d, "warmup": w,
                 "keep_series": k == z["ks"][-1] and s == 0 and q == "droptail"}, seed=s)
           for q in ("droptail", "red") for k in z["ks"] for s in range(z["seeds"])]
    out += [Case({"setup": "paths", "duration": d, "warmup": w}, seed=s) for s in range(z["seeds"])]
    out += [Case({"setup": "star", "n": n, "duration": d, "warmup": w}, seed=s)
            for n in z["ns"] for s in range(z["seeds"])]
    return out


def _measure(seed: int, setup: str, duration: float, warmup: float, k: int = 0, n: int = 0,
             queue: str = "droptail", keep_series: bool = False) -> dict:
    if setup == "dumbbell":
        row = dumbbell_run(k, seed, duration, warmup, keep_series, queue)
    elif setup == "paths":
        row = paths_run(seed, duration, warmup)
    else:
        row = star_run(n, seed, duration, warmup)
    return {"setup": setup, "warmup": warmup, "row": row}


def _table(rows: list[dict]) -> dict:
    """dumbbell.csv, paths.csv, star.csv and rates.csv (the kept series), and the warm-up the
    claims name."""
    by = {s: [r["row"] for r in rows if r["setup"] == s] for s in ("dumbbell", "paths", "star")}
    series = next(r for r in by["dumbbell"] if "_t" in r)
    both = pd.DataFrame([{k: v for k, v in r.items() if not k.startswith("_")} for r in by["dumbbell"]])
    rates = pd.DataFrame({"time_s": series["_t"], "tfmcc_rate_bps": series["_rate"],
                          **{f"tcp{j}_bps": x for j, x in enumerate(series["_tcp"])}})
    return {"dumbbell.csv": both, "paths.csv": pd.DataFrame(by["paths"]), "star.csv": pd.DataFrame(by["star"]),
            "rates.csv": rates, "warmup": rows[0]["warmup"], "series_k": int(series["k_tcp"])}


def _plot(t: dict, out: Path) -> list[str]:
    both, c, rates = t["dumbbell.csv"], t["star.csv"], t["rates.csv"]
    a, red = both[both["queue"] == "droptail"], both[both["queue"] == "red"]
    fig, axes = figure(10.0, 3.6)
    fig.clf()
    ax1, ax2, ax3 = fig.subplots(1, 3)
    for ax in (ax1, ax2, ax3):
        ax.grid(True, alpha=0.3)
    ax1.plot(rates["time_s"], rates["tfmcc_rate_bps"] / 1e6, label="TFMCC sending rate", lw=1.5)
    for j, col in enumerate(name for name in rates.columns if name.startswith("tcp")):
        ax1.plot(rates["time_s"], rates[col] / 1e6, lw=0.6, alpha=0.7, label="TCP goodput (1 s)" if j == 0 else None)
    ax1.set_xlabel("time (s)")
    ax1.set_ylabel("Mb/s")
    ax1.set_title(f"{DUMBBELL['bottleneck_bps'] / 1e6:g} Mb/s dumbbell, K = {t['series_k']}", fontsize=9)
    ax1.legend(fontsize=7)
    for df, fmt, lab in [(a, "o-", "DropTail"), (red, "s--", "RED (variant)")]:
        g = df.groupby("k_tcp")["ratio"]
        ax2.errorbar(g.mean().index, g.mean(), yerr=[g.mean() - g.min(), g.max() - g.mean()], fmt=fmt, capsize=3,
                     label=lab)
    ax2.axhspan(0.5, 2.0, color="0.9", zorder=0, label="RFC 4654 §1: within 2x")
    ax2.set_xscale("log", base=2)
    ax2.set_xlabel("TCP flows K")
    ax2.set_ylabel("TFMCC / mean TCP goodput")
    ax2.legend(fontsize=7)
    h = c.groupby("n")["reports_per_round"]
    ax3.plot(h.mean().index, h.mean(), "s-", label="non-CLR reports per round")
    ax3.plot(h.mean().index, h.mean().index, ":", color="0.5", label="one per receiver")
    ax3.set_xscale("log")
    ax3.set_yscale("log")
    ax3.set_xlabel("receivers N")
    ax3.legend(fontsize=7)
    return save(fig, out, "tfmcc")


def _claims(t: dict) -> list:
    both, b, c, warmup = t["dumbbell.csv"], t["paths.csv"], t["star.csv"], t["warmup"]
    a, red = both[both["queue"] == "droptail"], both[both["queue"] == "red"]
    ks, ns = sorted(a["k_tcp"].unique()), sorted(c["n"].unique())
    claims = []
    for k in ks:
        rows = a[a["k_tcp"] == k]
        cl = claim_over_seeds(
            in_range, rows["ratio"], f"tcp-friendly-dumbbell-k{k}",
            f"RFC 4654 §1: TFMCC's rate is 'within a factor of two' of a TCP flow's under the same "
            f"conditions: TFMCC goodput over the mean of {k} NewReno flows' on the shared "
            f"{DUMBBELL['bottleneck_bps'] / 1e6:g} Mb/s DropTail bottleneck, after {warmup:g} s", 0.5, 2.0, None,
            "ratio", kind="paper")
        if k == 8:
            # the phase rule decides this claim (randomised runs); the deterministic verdict is shown
            # beside it by the driver (run_phase), and the real network's measurement is elsewhere
            cl.statement += (" [the deterministic run, in which TFMCC's paced packets lock into the phase where "
                             "the DropTail queue is full, is shown beside the randomised verdict; castlab's TFMCC "
                             "against one kernel TCP flow on the testbed: docs/real-network.md, net-tfmcc-uftp]")
        if not cl.holds:
            tl, tr = float(rows["tfmcc_packet_loss"].mean()), float(rows["tcp_retransmitted"].mean())
            cl.explanation = (f"dumbbell.csv: the DropTail queue dropped {tl:.1%} of TFMCC's packets against "
                             f"{tr:.1%} of TCP's (retransmitted share); "
                             + ("TFMCC's paced packets meet a full queue far more often than ACK-clocked TCP's, the "
                                "phase effect of DropTail in a deterministic simulator (Floyd and Jacobson 1992); the "
                                "RED variant below removes it" if tl > 2 * tr else
                                "with one TCP flow TFMCC's smoother rate sees fewer loss events than TCP's "
                                "window halvings, and equation (1) then allows more than TCP takes"))
        claims.append(cl)
    for k in ks:
        claims.append(claim_over_seeds(
            in_range, red[red["k_tcp"] == k]["ratio"], f"tcp-friendly-red-k{k}",
            f"variant (RED bottleneck, tcp-fairness's RED rule; same band as RFC 4654 §1's factor of two): TFMCC "
            f"goodput over the mean of {k} NewReno flows'", 0.5, 2.0, None, "ratio", kind="variant"))
    claims.append(claim_over_seeds(
        in_range, b["ratio"], "tcp-friendly-slowest-path",
        "RFC 4654 §1: within a factor of two of 'a TCP flow from the sender to the slowest receiver': TFMCC "
        f"goodput at the receiver behind {max(PATHS['loss']):g} random loss over a NewReno flow's on that path",
        0.5, 2.0, None, "ratio", kind="paper"))
    claims.append(claim_over_seeds(
        at_least, b["clr_share_worst"], "clr-is-the-worst-receiver",
        "RFC 4654 §2: the rate 'is adapted to the receiver experiencing the worst network conditions': the "
        f"receiver behind {max(PATHS['loss']):g} random loss (others {sorted(PATHS['loss'])[:-1]}) is the CLR for "
        ">= 75 % of the measured time (the threshold is ours)", 0.75, None, "fraction", kind="derived"))
    big, ten = ns[-1], 10
    per_n = c.groupby("n")["reports_per_round"].mean()
    claims.append(claim_over_seeds(
        at_most, c[c["n"] == big]["reports_per_round"], "feedback-bounded",
        f"RFC 4654 §3.4/§4.5, feedback suppression: with {big} receivers the mean number of non-CLR reports per "
        "feedback round is at most 10 (ours: the RFC gives no number)", 10.0, None, "reports", kind="derived"))
    claims.append(at_most(
        "feedback-grows-slowly",
        f"ours: non-CLR reports per round grow at most 3x from N = {ten} to N = {big} receivers "
        f"({per_n[ten]:.2f} -> {per_n[big]:.2f}, mean over {c['seed'].nunique()} seed(s))", 3.0,
        float(per_n[big] / per_n[ten]), "ratio", kind="derived"))

    return claims


def _params(quick: bool, seed: int) -> dict:
    z = _sizes(quick)
    return {"declared_readings": declared_readings(), "dumbbell": DUMBBELL, "red_queue": bottleneck_queue("red"), "paths": PATHS,
            "star": STAR, "k_tcp": z["ks"], "n_receivers": z["ns"], "seeds": [seed + k for k in range(z["seeds"])],
            "duration_s": z["duration"], "warmup_s": z["warmup"], "tcp": "NewReno, MSS 1000 B",
            "tfmcc_packet_bytes": 1000}


#: docs/fidelity/phase.md's overhead: one packet (TFMCC's and TCP's, headers included) at the
#: slowest bottleneck, the dumbbell's (the dumbbell is phase-sensitive: its TCP-friendliness at
#: K = 1 and K = 8 changes verdict with phase randomisation on).
PHASE_S = (PACKET_BYTES + HEADER_BYTES) * 8 / DUMBBELL["bottleneck_bps"]

TFMCC_FIGURE = Figure("tfmcc", "RFC 4654 (TFMCC)", "§1, §3.3-§3.4, §4.5",
                      "TFMCC against TCP on a dumbbell and on the slowest receiver's path, the CLR following the "
                      "worst receiver, and reports per feedback round as receivers are added",
                      _cases, _measure, _table, _claims, _plot, "", _params, phase_s=PHASE_S)
