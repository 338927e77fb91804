"""The webrc experiment: three set-ups (``topology``) over seeds, one table, the figure and the
claims.

Rules and tolerances, fixed before any run. Luby and Goyal's paper and technical report on WEBRC
could not be read here (no copy in the sources available to castlab); the claims are taken from
the sentences of RFC 3738, which its authors wrote as the protocol's specification:

- §1: WEBRC "is designed to be reasonably fair when competing for bandwidth with TCP flows, where
  a flow is 'reasonably fair' if its reception rate is generally within a factor of two of the
  reception rate of a TCP flow under the same conditions". The band is the RFC's own, [0.5, 2]:
  a WEBRC receiver's goodput over the mean TCP goodput, on the mean over seeds, (a) on a shared
  DropTail dumbbell against K = 1, 2, 4 NewReno flows (castlab's TFMCC dumbbell); (b) as a
  variant, against CUBIC flows, which the RFC predates; (c) at each receiver of set-up B
  against a NewReno flow on that receiver's own lossy path.
- Abstract: "different receivers joined to the same session may be receiving packets at
  different rates depending on the bandwidths of their individual connections"; §2: "a receiver
  with a slow connection to the sender does not slow down the receivers with faster
  connections". Ours, as numbers: in set-up B the receivers' rates are ordered as their paths'
  TCP throughputs, each at least 1.25 times the next (the equation gives 2 between 0.5 % and
  2 % loss, 2.2 between 40 ms and 100 ms RTT).
- §3.2.2: the target rate is "continually updated based on a set of measured parameters" (ARTT
  and LOSSP). Ours: in set-up C, when the path's RTT goes from 39 ms to 120 ms (3.08 times) and
  its loss from 0.5 % to 3 %, the receiver's ARTT grows by a factor within two of 3.08, and its
  reception rate falls to at most half (the equation at the paths' values: 0.13).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from castlab.experiments.common import at_least, at_most, claim_over_seeds, in_range
from castlab.experiments.figure import Case, Figure
from castlab.experiments.friendly import plot_tcp_friendly, tcp_friendly_claims
from castlab.experiments.plotting import figure, save
from castlab.experiments.tcp.scenarios import HEADER_BYTES
from castlab.experiments.webrc.topology import (CHANGE, DUMBBELL, PACKET_BYTES, PATHS, change_build, dumbbell,
                                                epochs_between, paths, receiver_of)

#: RFC 3738 §1's "reasonably fair": within a factor of two.
BAND = (0.5, 2.0)
#: Set-up B: each receiver's rate over the next's (ours).
ORDER_FACTOR = 1.25
#: Set-up C: the path's RTT before and after the change (two hops each way, then three).
RTT_BEFORE_S = 2 * (CHANGE["delay_s"] + CHANGE["direct_delay_s"])
RTT_AFTER_S = 2 * (CHANGE["delay_s"] + CHANGE["delay_s"] + CHANGE["detour_delay_s"])
#: Set-up C: the rate after the change over the rate before, at most (ours).
RATE_DROP = 0.5


def _sizes(quick: bool) -> dict:
    if quick:
        return {"seeds": 1, "ks": [1], "cubic_ks": [1], "duration": 30.0, "warmup": 10.0}
    return {"seeds": 3, "ks": [1, 2, 4], "cubic_ks": [1, 2, 4], "duration": 400.0, "warmup": 100.0}


def _cases(quick: bool) -> list[Case]:
    z = _sizes(quick)
    out = []
    for s in range(z["seeds"]):
        for variant, ks in (("newreno", z["ks"]), ("cubic", z["cubic_ks"])):
            out += [Case({"setup": "dumbbell", "k": k, "variant": variant, "duration": z["duration"],
                          "warmup": z["warmup"]}, seed=s) for k in ks]
        out.append(Case({"setup": "paths", "k": len(PATHS["loss"]), "variant": "newreno",
                         "duration": z["duration"], "warmup": z["warmup"]}, seed=s))
        out.append(Case({"setup": "change", "k": 0, "variant": "", "duration": z["duration"],
                         "warmup": z["warmup"]}, seed=s))
    return out


def _rx_bytes(sim, names) -> list[int]:
    return [sim.webrc_receiver_records(receiver_of(sim, n))["bytes"] for n in names]


def _dumbbell(seed: int, k: int, variant: str, duration: float, warmup: float) -> dict:
    sim = dumbbell(k, variant, seed, duration).build(seed)
    rx = [f"rx{i}" for i in range(DUMBBELL["receivers"])]
    tcps = [sim.scenario_handles.tcp[f"tcp{j}"] for j in range(k)]
    sim.run(warmup)
    b0, t0 = _rx_bytes(sim, rx), [sim.tcp_stats(a)["received_bytes"] for a in tcps]
    sim.run(duration)
    b1, t1 = _rx_bytes(sim, rx), [sim.tcp_stats(a)["received_bytes"] for a in tcps]
    span = duration - warmup
    per_rx = [(b - a) * 8 / span for a, b in zip(b0, b1)]
    w, tcp = float(np.mean(per_rx)), float(np.mean([(b - a) * 8 / span for a, b in zip(t0, t1)]))
    rec = sim.webrc_receiver_records(receiver_of(sim, "rx0"))
    nwc = epochs_between(rec, "epoch_nwc", warmup, duration)
    return {"webrc_bps": w, "tcp_bps": tcp, "ratio": w / tcp, "rx_spread": max(per_rx) / max(min(per_rx), 1.0),
            "utilisation": (w + k * tcp) / DUMBBELL["bottleneck_bps"],
            "nwc_mean": float(nwc.mean()) if nwc.size else float("nan"),
            "loss_events": int(rec["loss_event_ns"].size), "join_timeouts": int(rec["join_timeouts"])}


def _paths(seed: int, duration: float, warmup: float) -> dict:
    sim = paths(duration).build(seed)
    n = len(PATHS["loss"])
    rx = [f"rx{i}" for i in range(n)]
    tcps = [sim.scenario_handles.tcp[f"tcp{i}"] for i in range(n)]
    sim.run(warmup)
    b0, t0 = _rx_bytes(sim, rx), [sim.tcp_stats(a)["received_bytes"] for a in tcps]
    sim.run(duration)
    b1, t1 = _rx_bytes(sim, rx), [sim.tcp_stats(a)["received_bytes"] for a in tcps]
    span = duration - warmup
    row = {}
    for i in range(n):
        w, tcp = (b1[i] - b0[i]) * 8 / span, (t1[i] - t0[i]) * 8 / span
        st = sim.webrc_receiver_status(receiver_of(sim, rx[i]))
        row.update({f"webrc_bps_rx{i}": w, f"tcp_bps_rx{i}": tcp, f"ratio_rx{i}": w / tcp,
                    f"artt_rx{i}": st["artt_s"], f"lossp_rx{i}": st["lossp"]})
    for i in range(n - 1):
        row[f"order_rx{i}"] = row[f"webrc_bps_rx{i}"] / row[f"webrc_bps_rx{i + 1}"]
    return row


def _change(seed: int, duration: float, warmup: float) -> dict:
    sim = change_build(duration, seed)
    sim.run(duration)
    rec = sim.webrc_receiver_records(receiver_of(sim, "rx"))
    half = duration / 2
    settle = (half - warmup)
    before = (warmup, half)
    after = (half + settle / 2, duration) if settle > 0 else (half, duration)
    rr_b, rr_a = (epochs_between(rec, "epoch_rr", *w) for w in (before, after))
    artt_b, artt_a = (epochs_between(rec, "epoch_artt", *w) for w in (before, after))
    lossp_b, lossp_a = (epochs_between(rec, "epoch_lossp", *w) for w in (before, after))
    mean = lambda v: float(np.nanmean(v)) if v.size else float("nan")  # noqa: E731
    return {"rate_before": mean(rr_b) * 8 * PACKET_BYTES, "rate_after": mean(rr_a) * 8 * PACKET_BYTES,
            "rate_drop": mean(rr_a) / mean(rr_b), "artt_before": mean(artt_b), "artt_after": mean(artt_a),
            "artt_growth": mean(artt_a) / mean(artt_b), "lossp_before": mean(lossp_b),
            "lossp_after": mean(lossp_a)}


def _measure(seed: int, setup: str, k: int, variant: str, duration: float, warmup: float) -> dict:
    row = {"setup": setup, "k_tcp": k, "variant": variant, "seed": seed}
    if setup == "dumbbell":
        row.update(_dumbbell(seed, k, variant, duration, warmup))
    elif setup == "paths":
        row.update(_paths(seed, duration, warmup))
    else:
        row.update(_change(seed, duration, warmup))
    return row


def _claims(df: pd.DataFrame) -> list:
    claims = []
    fair = ("RFC 3738 §1: 'reasonably fair if its reception rate is generally within a factor of two of the "
            "reception rate of a TCP flow under the same conditions'")
    claims += tcp_friendly_claims(df, lambda variant, k: (
        f"{fair}; a WEBRC receiver's goodput over the mean of {k} {variant} flows' on the shared "
        f"{DUMBBELL['bottleneck_bps'] / 1e6:g} Mb/s DropTail bottleneck is in [0.5, 2]"
        + (" (CUBIC postdates the RFC: a variant)" if variant == "cubic" else "")), BAND)
    p = df[df["setup"] == "paths"]
    for i, (loss, delay) in enumerate(zip(PATHS["loss"], PATHS["delay_s"])):
        claims.append(claim_over_seeds(
            in_range, p[f"ratio_rx{i}"], f"tcp-friendly-path-rx{i}",
            f"{fair}; at the receiver behind {loss:g} random loss and a {delay * 1e3:g} ms last hop, WEBRC's "
            "goodput over a NewReno flow's on that very path is in [0.5, 2]", *BAND, None, "ratio", kind="derived"))
    for i in range(len(PATHS["loss"]) - 1):
        claims.append(claim_over_seeds(
            at_least, p[f"order_rx{i}"], f"heterogeneous-rx{i}-over-rx{i + 1}",
            "abstract: receivers of one session 'may be receiving packets at different rates depending on the "
            "bandwidths of their individual connections'; §2: a slow receiver 'does not slow down the receivers "
            f"with faster connections'; ours: rx{i} (loss {PATHS['loss'][i]:g}, {PATHS['delay_s'][i] * 1e3:g} ms) "
            f"receives at least {ORDER_FACTOR:g} times rx{i + 1}'s rate (loss {PATHS['loss'][i + 1]:g}, "
            f"{PATHS['delay_s'][i + 1] * 1e3:g} ms)", ORDER_FACTOR, None, "ratio", kind="derived"))
    c = df[df["setup"] == "change"]
    growth = RTT_AFTER_S / RTT_BEFORE_S
    claims.append(claim_over_seeds(
        in_range, c["artt_growth"], "artt-follows-the-path",
        "§3.2.2: the target rate is 'continually updated based on a set of measured parameters' (ARTT from "
        f"join-to-first-packet times, §3.2.2.2); ours: when the path's RTT goes from {RTT_BEFORE_S * 1e3:g} ms to "
        f"{RTT_AFTER_S * 1e3:g} ms ({growth:.2f} times), the receiver's mean ARTT grows by a factor within two of it",
        growth / 2, growth * 2, None, "ratio", kind="derived"))
    claims.append(claim_over_seeds(
        at_most, c["rate_drop"], "rate-follows-loss-and-mrtt",
        "§3.2.2 (as above); ours: when its path's loss goes from "
        f"{CHANGE['before']:g} to {CHANGE['after']:g} and its RTT grows {growth:.2f} times, the receiver's reception "
        f"rate falls to at most {RATE_DROP:g} of its rate before", RATE_DROP, None, "ratio", kind="derived"))
    return claims


def _plot(df: pd.DataFrame, out: Path) -> list[str]:
    fig, _ = figure(10.0, 3.4)
    fig.clf()
    ax1, ax2, ax3 = fig.subplots(1, 3)
    for ax in (ax1, ax2, ax3):
        ax.grid(True, alpha=0.3)
    plot_tcp_friendly(ax1, df, BAND, "WEBRC receiver / mean TCP goodput", DUMBBELL["bottleneck_bps"])
    p = df[df["setup"] == "paths"]
    n = len(PATHS["loss"])
    xs = np.arange(n)
    ax2.bar(xs - 0.2, [p[f"webrc_bps_rx{i}"].mean() / 1e6 for i in xs], 0.4, label="WEBRC", color="C0")
    ax2.bar(xs + 0.2, [p[f"tcp_bps_rx{i}"].mean() / 1e6 for i in xs], 0.4, label="NewReno", color="C1")
    ax2.set_xticks(xs, [f"{PATHS['loss'][i]:g}, {PATHS['delay_s'][i] * 1e3:g} ms" for i in xs], fontsize=7)
    ax2.set_ylabel("goodput (Mb/s)")
    ax2.set_title("heterogeneous receivers", fontsize=9)
    ax2.legend(fontsize=7)
    c = df[df["setup"] == "change"]
    ax3.bar([0, 1], [c["rate_before"].mean() / 1e6, c["rate_after"].mean() / 1e6], color="C2")
    ax3.set_xticks([0, 1], [f"loss {CHANGE['before']:g}, {RTT_BEFORE_S * 1e3:g} ms",
                            f"loss {CHANGE['after']:g}, {RTT_AFTER_S * 1e3:g} ms"], fontsize=7)
    ax3.set_ylabel("reception rate (Mb/s)")
    ax3.set_title(f"path change: ARTT x{c['artt_growth'].mean():.2f}", fontsize=9)
    return save(fig, out, "webrc")


def _params(quick: bool, seed: int) -> dict:
    return {"declared_readings": {}, "dumbbell": DUMBBELL, "paths": PATHS, "change": CHANGE,
            "sizes": _sizes(quick), "packet_bytes": PACKET_BYTES, "band": BAND, "order_factor": ORDER_FACTOR,
            "rate_drop": RATE_DROP, "webrc": "RFC 3738 defaults (config_defaults('webrc'))", "tcp": "MSS 1000 B"}


#: docs/fidelity/phase.md's overhead: one of the largest packets (TCP's, headers included) at the
#: slowest bottleneck, the dumbbell's.
PHASE_S = (max(PACKET_BYTES, PACKET_BYTES + HEADER_BYTES)) * 8 / DUMBBELL["bottleneck_bps"]

WEBRC_FIGURE = Figure("webrc", "Luby and Goyal, RFC 3738 (WEBRC)", "§1, §2, §3.2.2",
                      "WEBRC against NewReno and CUBIC on a dumbbell and on each receiver's own path, receivers of "
                      "different paths at different rates, and the target rate following a path's RTT and loss",
                      _cases, _measure, pd.DataFrame, _claims, _plot, "webrc.csv", _params, phase_s=PHASE_S)
