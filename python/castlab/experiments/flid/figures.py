"""The flid-dl experiment: three set-ups (``topology``) over seeds, one table, the figure and the
claims.

Rules and tolerances, fixed before any run. The paper (Byers, Horn, Luby, Mitzenmacher, Shaver,
NGC 2000 / IEEE JSAC 2002) could not be read here: its claims are taken from its abstract's
sentences, and every band is ours:

- Abstract: "FLID-DL congestion control coexists with TCP flows". Ours, as a number: the mean
  FLID-DL receiver's goodput over the mean TCP goodput is within a factor of two, [0.5, 2], on
  the mean over seeds, (a) on a shared DropTail dumbbell against K = 1..8 NewReno flows
  (castlab's TFMCC dumbbell); (b) as a variant, against CUBIC flows, which the paper predates.
- Abstract: dynamic layering "mitigates the negative impact of long IGMP leave latencies", "We
  use DL to respond to congestion much faster than IGMP leave operations". Ours: when a CBR
  flow takes 60 % of a 1 Mb/s bottleneck, the receiver sheds 3 levels (a factor 2.2 of rate)
  (c) within the leave latency, 2 s, with that leave latency, on every seed; (d) no more than
  one slot (0.5 s) later than with no leave latency, on every seed.
- Abstract: "a new multirate congestion control algorithm", "receivers add layers at
  sender-initiated synchronization points and leave layers when they experience congestion".
  Ours: (e) each of three receivers behind last hops of 1, 2 and 4 Mb/s receives between half
  of its last hop and all of it, on the mean over seeds.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from castlab.experiments.common import at_most, claim_over_seeds, in_range
from castlab.experiments.figure import Case, Figure
from castlab.experiments.friendly import plot_tcp_friendly, tcp_friendly_claims
from castlab.experiments.flid.topology import (DUMBBELL, DYNAMICS, HETERO, PACKET_BYTES, dumbbell, dynamics, hetero,
                                               level_at, rx_bytes, time_to_shed)
from castlab.experiments.plotting import figure, save
from castlab.experiments.tcp.scenarios import HEADER_BYTES

#: The TCP-friendliness band (ours: the factor of two of RFC 4654 §1 and RFC 5033 §3.1's
#: "reasonably fair").
BAND = (0.5, 2.0)
#: A receiver's share of its own last hop (ours).
HETERO_BAND = (0.5, 1.0)
#: One slot: how much later the reaction may be with a leave latency than without (ours).
SLOT_S = 0.5


def _sizes(quick: bool) -> dict:
    if quick:
        return {"seeds": 1, "ks": [1], "cubic_ks": [1], "duration": 30.0, "warmup": 10.0,
                "dynamics_duration": 40.0, "hetero_duration": 30.0}
    return {"seeds": 3, "ks": [1, 2, 4, 8], "cubic_ks": [1, 2, 4, 8], "duration": 200.0, "warmup": 40.0,
            "dynamics_duration": 120.0, "hetero_duration": 120.0}


def _cases(quick: bool) -> list[Case]:
    z = _sizes(quick)
    out = []
    for s in range(z["seeds"]):
        for variant, ks in (("newreno", z["ks"]), ("cubic", z["cubic_ks"])):
            out += [Case({"setup": "dumbbell", "k": k, "variant": variant, "leave": 0.0, "duration": z["duration"],
                          "warmup": z["warmup"]}, seed=s) for k in ks]
        out += [Case({"setup": "dynamics", "k": 0, "variant": "", "leave": leave,
                      "duration": z["dynamics_duration"], "warmup": z["warmup"]}, seed=s)
                for leave in DYNAMICS["leave_latencies_s"]]
        out.append(Case({"setup": "hetero", "k": 0, "variant": "", "leave": 0.0, "duration": z["hetero_duration"],
                         "warmup": z["warmup"]}, seed=s))
    return out


def _dumbbell(seed: int, k: int, variant: str, duration: float, warmup: float) -> dict:
    sim = dumbbell(k, variant, seed, duration).build(seed)
    rx = [f"rx{i}" for i in range(DUMBBELL["receivers"])]
    tcps = [sim.scenario_handles.tcp[f"tcp{j}"] for j in range(k)]
    sim.run(warmup)
    b0, t0 = rx_bytes(sim, rx), [sim.tcp_stats(a)["received_bytes"] for a in tcps]
    sim.run(duration)
    b1, t1 = rx_bytes(sim, rx), [sim.tcp_stats(a)["received_bytes"] for a in tcps]
    span = duration - warmup
    fl = float(np.mean([(b - a) * 8 / span for a, b in zip(b0, b1)]))
    tcp = float(np.mean([(b - a) * 8 / span for a, b in zip(t0, t1)]))
    rec = sim.flid_records(sim.scenario_handles.receivers["rx0"])
    lost, got = int(np.sum(rec["lost"])), int(np.sum(rec["received"]))
    return {"flid_bps": fl, "tcp_bps": tcp, "ratio": fl / tcp,
            "utilisation": (fl + k * tcp) / DUMBBELL["bottleneck_bps"],
            "flid_loss": lost / max(lost + got, 1), "loss_slots": int(rec["loss_slots"]), "slots": int(rec["slots"])}


def _dynamics(seed: int, leave: float, duration: float) -> dict:
    sim = dynamics(leave, duration).build(seed)
    sim.run(duration)
    rec = sim.flid_records(sim.scenario_handles.receivers["rx"])
    onset = duration / 2
    return {"leave_s": leave, "level_before": level_at(rec, onset),
            "shed_s": time_to_shed(rec, onset, DYNAMICS["levels_shed"]),
            "level_after": level_at(rec, duration), "slots": int(rec["slots"]), "loss_slots": int(rec["loss_slots"])}


def _hetero(seed: int, duration: float, warmup: float) -> dict:
    sim = hetero(duration).build(seed)
    rx = [f"rx{i}" for i in range(len(HETERO["last_hop_bps"]))]
    sim.run(warmup)
    b0 = rx_bytes(sim, rx)
    sim.run(duration)
    b1 = rx_bytes(sim, rx)
    span = duration - warmup
    row = {}
    for i, (a, b) in enumerate(zip(b0, b1)):
        row[f"rx{i}_bps"] = (b - a) * 8 / span
        row[f"rx{i}_share"] = (b - a) * 8 / span / HETERO["last_hop_bps"][i]
    return row


def _measure(seed: int, setup: str, k: int, variant: str, leave: float, duration: float, warmup: float) -> dict:
    row = {"setup": setup, "k_tcp": k, "variant": variant, "seed": seed}
    if setup == "dumbbell":
        row.update(_dumbbell(seed, k, variant, duration, warmup))
    elif setup == "dynamics":
        row.update(_dynamics(seed, leave, duration))
    else:
        row.update(_hetero(seed, duration, warmup))
    return row


def _claims(df: pd.DataFrame) -> list:
    claims = tcp_friendly_claims(df, lambda variant, k: (
        "abstract: 'FLID-DL congestion control coexists with TCP flows'; ours, the band: the mean FLID-DL "
        f"receiver's goodput over the mean of {k} {variant} flows' on the shared "
        f"{DUMBBELL['bottleneck_bps'] / 1e6:g} Mb/s DropTail bottleneck is in [0.5, 2]"
        + (" (CUBIC postdates the paper: a variant)" if variant == "cubic" else "")), BAND)
    dy = df[df["setup"] == "dynamics"]
    long_leave = max(DYNAMICS["leave_latencies_s"])
    slow = dy[dy["leave_s"] == long_leave].sort_values("seed")
    fast = dy[dy["leave_s"] == 0.0].sort_values("seed")
    shed = DYNAMICS["levels_shed"]
    claims.append(claim_over_seeds(
        at_most, slow["shed_s"], "reacts-faster-than-an-igmp-leave",
        "abstract: 'We use DL to respond to congestion much faster than IGMP leave operations'; ours: when a CBR "
        f"flow takes {DYNAMICS['cbr_bps'] / DYNAMICS['bottleneck_bps']:.0%} of the bottleneck, the receiver sheds "
        f"{shed} levels within the IGMP leave latency ({long_leave:g} s) on every seed",
        long_leave, None, "s", kind="derived", worst="max"))
    claims.append(claim_over_seeds(
        at_most, slow["shed_s"].to_numpy() - fast["shed_s"].to_numpy(), "reaction-independent-of-leave-latency",
        "abstract: DL 'mitigates the negative impact of long IGMP leave latencies'; ours: with a "
        f"{long_leave:g} s leave latency the receiver sheds {shed} levels at most one slot ({SLOT_S:g} s) later "
        "than with none, on every seed", SLOT_S, None, "s", kind="derived", worst="max"))
    he = df[df["setup"] == "hetero"]
    for i, rate in enumerate(HETERO["last_hop_bps"]):
        claims.append(claim_over_seeds(
            in_range, he[f"rx{i}_share"], f"multirate-rx{i}",
            "abstract: 'a new multirate congestion control algorithm' in which 'receivers add layers ... and leave "
            f"layers when they experience congestion'; ours: the receiver behind a {rate / 1e6:g} Mb/s last hop "
            "(others: " + ", ".join(f"{r / 1e6:g}" for j, r in enumerate(HETERO["last_hop_bps"]) if j != i)
            + " Mb/s) receives between half of it and all of it", *HETERO_BAND, None, "fraction", kind="derived"))
    return claims


def _plot(df: pd.DataFrame, out: Path) -> list[str]:
    fig, _ = figure(10.0, 3.4)
    fig.clf()
    ax1, ax2, ax3 = fig.subplots(1, 3)
    for ax in (ax1, ax2, ax3):
        ax.grid(True, alpha=0.3)
    plot_tcp_friendly(ax1, df, BAND, "FLID-DL / mean TCP goodput", DUMBBELL["bottleneck_bps"])
    dy = df[df["setup"] == "dynamics"]
    leaves = DYNAMICS["leave_latencies_s"]
    ax2.bar(np.arange(len(leaves)), [dy[dy["leave_s"] == x]["shed_s"].mean() for x in leaves], color="C0")
    ax2.plot(np.arange(len(leaves)), leaves, "k_", markersize=20, label="leave latency")
    ax2.set_xticks(np.arange(len(leaves)), [f"leave {x:g} s" for x in leaves])
    ax2.set_ylabel(f"s to shed {DYNAMICS['levels_shed']} levels")
    ax2.set_title("CBR takes 60 % at half-time", fontsize=9)
    ax2.legend(fontsize=7)
    he = df[df["setup"] == "hetero"]
    rates = HETERO["last_hop_bps"]
    xs = np.arange(len(rates))
    ax3.bar(xs, [he[f"rx{i}_bps"].mean() / 1e6 for i in xs], color="C1", label="goodput")
    ax3.plot(xs, [r / 1e6 for r in rates], "k_", markersize=20, label="last hop")
    ax3.set_xticks(xs, [f"{r / 1e6:g} Mb/s" for r in rates])
    ax3.set_ylabel("Mb/s")
    ax3.set_title("heterogeneous receivers", fontsize=9)
    ax3.legend(fontsize=7)
    return save(fig, out, "flid-dl")


def _params(quick: bool, seed: int) -> dict:
    return {"declared_readings": {}, "dumbbell": DUMBBELL, "dynamics": DYNAMICS, "hetero": HETERO,
            "sizes": _sizes(quick), "packet_bytes": PACKET_BYTES, "band": BAND, "hetero_band": HETERO_BAND,
            "slot_s": SLOT_S, "tcp": "MSS 1000 B"}


#: docs/fidelity/phase.md's overhead: one of the largest packets at the slowest bottleneck.
PHASE_S = (PACKET_BYTES + HEADER_BYTES) * 8 / min(DYNAMICS["bottleneck_bps"], *HETERO["last_hop_bps"])

FLID_FIGURE = Figure("flid-dl", "Byers et al. 2000/2002 (FLID-DL)", "abstract",
                     "FLID-DL against NewReno and CUBIC on a dumbbell, its reaction to a capacity fall with and "
                     "without IGMP leave latency, and receivers behind 1, 2 and 4 Mb/s last hops", _cases, _measure,
                     pd.DataFrame, _claims, _plot, "flid-dl.csv", _params, phase_s=PHASE_S)
