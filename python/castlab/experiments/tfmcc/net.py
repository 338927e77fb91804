"""castlab's TFMCC (RFC 4654) against a real one, UFTP's (``uftp -C tfmcc``): ``net-tfmcc-uftp``.

On the ``net-peers`` bottleneck (``peers.topology``: kernel tbf + pfifo, no propagation delay;
why kernel routers, see ``peers``), castlab's TFMCC and UFTP's each run against one kernel TCP
flow per algorithm (reno, cubic, bbr: a run each), measured at the same receiver interface, with
the simulated twin beside them: castlab's TFMCC against one TCP flow per algorithm as Linux runs it
(``peers.twin``: reno as the sack variant with Linux's settings, cubic and bbr from
TcpConfig::linux()) on the same rates and queue.

Where the two TFMCCs differ, the reasons are in their readings: castlab's rate log is every rate
change of its sender, UFTP's (``-x 4``) the rate it computes at each feedback; UFTP's log carries
no loss event rate, so its loss is the counters' packet loss only.

Single runs vary by large factors, so the full form runs ``seeds`` seeds (default
``FULL_SEEDS``) and decides every claim on the mean over them, with the 95 % t interval in the
statement (``claim_over_seeds``, the project's one rule for claims over seeds, fixed before the
first multi-seed run); the quick form stays one short run.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import numpy as np
import pandas as pd

from castlab.experiments.common import Result, claim_over_seeds, in_range
from castlab.experiments.net_common import _skip, _unavailable
from castlab.experiments.tfmcc.peers import (FAIR_HI, FAIR_LO, LINK_BPS, QUEUE_PKTS, TCP_ALGOS, WARM_S, run_case,
                                           topology, twin, uftp_rate_log)

# castlab's TFMCC rate within this factor of UFTP's, against the same TCP flow: decided before the
# first run (two implementations of one RFC, different packet sizes and timer details)
BAND = 2.0
# Seeds of the full form: six 60 s testbed runs a seed; three keep the full form within about
# half an hour on the 2-core machine (docs/real-network.md gives the measured wall time).
FULL_SEEDS = 3


def _loss_event_rate(case_dir: Path) -> float:
    """castlab's TFMCC: the mean loss event rate its CLR reported after the warm-up."""
    p = case_dir / "source" / "tfmcc_fb.csv"
    if not p.exists():
        return float("nan")
    d = pd.read_csv(p)
    d = d[(d["time_s"] >= WARM_S) & d["from_clr"].astype(str).str.lower().eq("true")]
    return float(d["loss_event_rate"].mean()) if len(d) else float("nan")


def tfmcc_uftp_table(out: Path, seed: int, duration: float, algos: tuple[str, ...]) -> pd.DataFrame:
    rows = []
    for algo in algos:
        for impl in ("tfmcc", "uftp"):
            r = run_case(out / f"{impl}_{algo}", seed, duration, impl, (algo,))
            rows.append({"impl": "castlab" if impl == "tfmcc" else "uftp", "tcp": algo,
                         "rate_bps": r["scheme_mean_bps"], "tcp_bps": r["tcp_mean_bps"], "share": r["share"],
                         "loss": r["loss"], "lowest_10s_bps": r["lowest_10s_bps"],
                         "sender_rate_mean_bps": r["sender_rate_mean_bps"],
                         "loss_event_rate": _loss_event_rate(out / f"{impl}_{algo}") if impl == "tfmcc" else float("nan"),
                         "tcp_errors": "; ".join(r["tcp_errors"])})
        t = twin("tfmcc", seed, duration, (algo,))
        rows.append({"impl": "castlab (simulated)", "tcp": algo, "rate_bps": t["scheme_mean_bps"],
                     "tcp_bps": t["tcp_mean_bps"], "share": t["share"], "loss": t["loss"]})
    df = pd.DataFrame(rows)
    df.to_csv(out / "tfmcc_uftp.csv", index=False)
    return df


def tfmcc_uftp_figure(out: Path, algos: tuple[str, ...]) -> list[str]:
    import matplotlib.pyplot as plt

    from castlab.experiments.plotting import save

    fig, axes = plt.subplots(len(algos), 1, figsize=(6.5, 1.9 * len(algos) + 0.5), dpi=120, sharex=True, squeeze=False)
    for ax, algo in zip(axes[:, 0], algos):
        for impl, color, label in (("tfmcc", "k", "castlab TFMCC"), ("uftp", "tab:red", "UFTP TFMCC")):
            d = out / f"{impl}_{algo}"
            if not (d / "series.csv").exists():
                continue
            s = pd.read_csv(d / "series.csv")
            ax.plot(s["second"], s["scheme_bps"] / 1e3, color=color, lw=1.2, label=f"{label} (at rcv1)")
            ax.plot(s["second"], s[f"tcp0_{algo}_bps"] / 1e3, color=color, lw=0.8, ls=":", label=f"TCP {algo} beside it")
            if (d / "sender_rates.csv").exists():
                r = pd.read_csv(d / "sender_rates.csv")
                ax.step(r["time_s"], r["rate_bps"] / 1e3, where="post", color=color, lw=0.6, alpha=0.5,
                        label=f"{label} sender's rate")
        ax.set_ylabel("kb/s", fontsize=8)
        ax.set_title(f"against one TCP {algo} flow", fontsize=8)
        ax.set_ylim(0, LINK_BPS * 1.6 / 1e3)
        ax.grid(True, alpha=0.3)
        ax.tick_params(labelsize=7)
    axes[0, 0].legend(fontsize=6, ncol=2)
    axes[-1, 0].set_xlabel("time (s)", fontsize=8)
    return save(fig, out, "tfmcc_uftp")


def run_net_tfmcc_uftp(out: Path, seed: int, quick: bool = False, seeds: int = FULL_SEEDS) -> Result:
    """The quick form: one 30 s run of each case at `seed`. The full form: 60 s runs at seeds
    `seed` .. `seed` + `seeds` - 1, each seed's cases in ``seed-N/`` (the figure is the first
    seed's), every claim decided on the mean over the seeds."""
    from castlab.experiments.tfmcc.peers import missing

    reason = _unavailable() or (None if shutil.which("iperf3") else "needs iperf3 (make setup installs it with apt)") \
        or missing("uftp")
    if reason:
        return _skip(reason)
    if not quick and seeds < 1:
        raise ValueError(f"seeds: must be at least 1 (got {seeds})")
    duration = 30.0 if quick else 60.0
    algos = TCP_ALGOS
    run_seeds = [seed] if quick else list(range(seed, seed + seeds))
    frames = []
    for s in run_seeds:
        where = out if quick else out / f"seed-{s}"
        where.mkdir(parents=True, exist_ok=True)
        frames.append(tfmcc_uftp_table(where, s, duration, algos).assign(seed=s))
    df = pd.concat(frames, ignore_index=True)
    df.to_csv(out / "tfmcc_uftp.csv", index=False)
    files = tfmcc_uftp_figure(out if quick else out / f"seed-{run_seeds[0]}", algos)
    if not quick:
        files = [f"seed-{run_seeds[0]}/{f}" for f in files]

    def per_seed(impl: str, tcp: str, col: str) -> list[float]:
        return [float(df[(df["seed"] == s) & (df["impl"] == impl) & (df["tcp"] == tcp)][col].iloc[0])
                for s in run_seeds]

    claims = []
    for a in algos:
        c, u = per_seed("castlab", a, "rate_bps"), per_seed("uftp", a, "rate_bps")
        ratios = [x / y if y > 0 else float("nan") for x, y in zip(c, u)]
        claims.append(claim_over_seeds(
            in_range, ratios, f"castlab-vs-uftp-{a}", f"(derived) castlab's TFMCC rate at the receiver is within a "
            f"factor of {BAND:g} of UFTP's TFMCC beside the same TCP {a} flow", 1 / BAND, BAND, None, "ratio",
            kind="derived", explanation=f"tfmcc_uftp.csv rate_bps per seed; tfmcc_{a}/ and uftp_{a}/series.csv"))
        for impl in ("castlab", "uftp"):
            claims.append(claim_over_seeds(
                in_range, per_seed(impl, a, "share"), f"tcp-friendly-{impl}-{a}", f"(RFC 4654 §1) {impl}'s TFMCC is "
                f"'reasonably fair': its rate within a factor of two of the TCP {a} flow's under the same conditions",
                FAIR_LO, FAIR_HI, None, "ratio", kind="paper", explanation=f"tfmcc_uftp.csv share ({impl}, {a})"))
        claims.append(claim_over_seeds(
            in_range, per_seed("castlab (simulated)", a, "share"), f"tcp-friendly-castlab-simulated-{a}",
            f"(RFC 4654 §1) the simulated twin: castlab's TFMCC against one TCP {a} flow as Linux runs it, on the same "
            "rates and queue, within a factor of two", FAIR_LO, FAIR_HI, None, "ratio", kind="paper",
            explanation=f"tfmcc_uftp.csv, castlab (simulated), {a}"))
    params = {"network": "real", "topology": topology().description, "routers": "kernel (tbf + pfifo, igmpproxy)",
              "propagation_delay_s": 0.0, "duration_s": duration, "warm_up_s": WARM_S, "bottleneck_bps": LINK_BPS,
              "queue_pkts": QUEUE_PKTS, "seeds": run_seeds,
              "decided_on": "one run" if quick else f"the mean over {len(run_seeds)} seeds (95 % t interval)",
              "uftp": "uftp -C tfmcc -x 4 -L (rate per feedback), -t hop count + 1, "
              "-M/-P in 239/8, 3 MB/min file never finished inside the run; uftpd -d on rcv1 and rcv2",
              "uftp_loss_event_rate": "not in UFTP's log: loss is the counters' packet loss",
              "tcp": "one kernel flow per run, iperf3 -C ALGO, the namespace's default named reno",
              "rows": df.to_dict("records")}
    return Result(params, claims, ["tfmcc_uftp.csv", *files])


__all__ = ["run_net_tfmcc_uftp", "uftp_rate_log"]
