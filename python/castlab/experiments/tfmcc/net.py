"""castlab's TFMCC (RFC 4654) against a real one, UFTP's (``uftp -C tfmcc``): ``net-tfmcc-uftp``.

On the ``net-peers`` bottleneck (``peers.topology``: kernel tbf + pfifo, no propagation delay;
why kernel routers, see ``peers``), castlab's TFMCC and UFTP's each run against one kernel TCP
flow per algorithm (reno, cubic, bbr: a run each), measured at the same receiver interface, with
the simulated twin beside them: castlab's TFMCC against one TCP flow per algorithm as Linux runs it
(``peers.twin``: reno as the sack variant with Linux's settings, cubic and bbr from
TcpConfig::linux()) on the same rates, queue and token bucket.

Both TFMCCs meet their TCP flow in the same relation, in both start orders (``peers.ORDERS``:
the TFMCC ``LEAD_S`` before the TCP flow, or the TCP flow ``LEAD_S`` before the TFMCC), measured
from the moment both run; the twin runs the same orders. The full form runs FULL_DURATION_S per
case with the share per SHARE_WINDOW_S window (``windows.csv``; a start-up trap shows as a share
that rises from window to window).

Where the two TFMCCs differ, the reasons are in their readings: castlab's rate log is every rate
change of its sender, UFTP's (``-x 4``) the rate it computes at each feedback; UFTP's log carries
no loss event rate, so its loss is the counters' packet loss only.

Single runs vary by large factors, so the full form runs ``seeds`` seeds (default
``FULL_SEEDS``) and decides every claim per order on the mean over them, with the 95 % t interval
in the statement (``claim_over_seeds``, the project's one rule for claims over seeds, fixed before
the first multi-seed run); the quick form stays one short run in one order.
"""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Optional

import numpy as np
import pandas as pd

from castlab.experiments.common import Result, claim_over_seeds, in_range
from castlab.experiments.net_common import _skip, _unavailable
from castlab.experiments.tfmcc.peers import (FAIR_HI, FAIR_LO, FULL_DURATION_S, LEAD_S, LINK_BPS, NET_VS_SIM,
                                           ORDERS, QUEUE_PKTS, QUICK_DURATION_S, QUICK_ORDERS, SHARE_WINDOW_S,
                                           TCP_ALGOS, TESTBED_TBF_BURST_BYTES, WARM_S, _read_seed, case_handshakes,
                                           falls_cols, falls_phrase, run_case, shares_figure, told_twin, topology,
                                           twin, uftp_rate_log)

# castlab's TFMCC rate within this factor of UFTP's, against the same TCP flow: decided before the
# first run (two implementations of one RFC, different packet sizes and timer details)
BAND = 2.0
# Seeds of the full form (docs/real-network.md gives the measured wall time).
FULL_SEEDS = 3


def _loss_event_rate(case_dir: Path) -> float:
    """castlab's TFMCC: the mean loss event rate its CLR reported after the warm-up."""
    p = case_dir / "source" / "tfmcc_fb.csv"
    if not p.exists():
        return float("nan")
    d = pd.read_csv(p)
    d = d[(d["time_s"] >= WARM_S) & d["from_clr"].astype(str).str.lower().eq("true")]
    return float(d["loss_event_rate"].mean()) if len(d) else float("nan")


def tfmcc_uftp_table(out: Path, seed: int, duration: float, algos: tuple[str, ...],
                     orders: tuple[str, ...] = ORDERS, lead: float = LEAD_S,
                     impls: tuple[str, ...] = ("tfmcc", "uftp")) -> pd.DataFrame:
    """Per start order and TCP algorithm: castlab's TFMCC and UFTP's on the testbed (each in
    ``ORDER/IMPL_ALGO/``; `impls` of them) and castlab's twin (with castlab's). Writes
    ``tfmcc_uftp.csv`` (a row per order, algorithm and implementation; ``share_wK`` the share per
    SHARE_WINDOW_S) and ``windows.csv``."""
    rows, wins = [], []
    for order in orders:
        for algo in algos:
            for impl in impls:
                d = out / order / f"{impl}_{algo}"
                r = run_case(d, seed, duration, impl, (algo,), order=order, lead=lead)
                name = "castlab" if impl == "tfmcc" else "uftp"
                rows.append({"impl": name, "tcp": algo, "order": order, "duration_s": duration,
                             "rate_bps": r["scheme_mean_bps"], "tcp_bps": r["tcp_mean_bps"], "share": r["share"],
                             "loss": r["loss"], "lowest_10s_bps": r["lowest_10s_bps"],
                             "sender_rate_mean_bps": r["sender_rate_mean_bps"], "lead_s": r["lead_s"],
                             "startup_s": r["startup_s"],
                             "loss_event_rate": _loss_event_rate(d) if impl == "tfmcc" else float("nan"),
                             **(falls_cols(d) if impl == "tfmcc" else {}),
                             **{f"share_w{k}": v for k, v in enumerate(r["window_shares"])},
                             "tcp_errors": "; ".join(r["tcp_errors"])})
                wins += [{"impl": name, "tcp": algo, "order": order, "side": name, "window": k,
                          "window_start_s": k * SHARE_WINDOW_S, "share": v} for k, v in enumerate(r["window_shares"])]
            if "tfmcc" not in impls:
                continue
            row, w = _twin_row(seed, duration, algo, order, lead, case_dir=out / order / f"tfmcc_{algo}")
            rows.append(row)
            wins += w
    df = pd.DataFrame(rows)
    pd.DataFrame(wins, columns=WINDOW_COLS).to_csv(out / "windows.csv", index=False)
    df.to_csv(out / "tfmcc_uftp.csv", index=False)
    return df


TWIN = "castlab (simulated)"
WINDOW_COLS = ["impl", "tcp", "order", "side", "window", "window_start_s", "share"]


def _twin_row(seed: int, duration: float, algo: str, order: str, lead: float,
              tbf_burst: Optional[int] = TESTBED_TBF_BURST_BYTES,
              case_dir: Optional[Path] = None) -> tuple[dict, list[dict]]:
    """castlab's TFMCC twin against one TCP `algo` flow (``peers.twin``, its last hops the token
    bucket `tbf_burst`): its row of tfmcc_uftp.csv and its rows of windows.csv. With `case_dir`
    (castlab's testbed run beside it) the row also holds the kernel flow's handshake RTT
    (``handshake_ms``, ``peers.case_handshakes``) and the share of the twin told it
    (``told_share``, ``told_rate_bps``: ``peers.told_twin``), an output beside the
    claims, which stay on the default twin; the twin's own records go to `case_dir`/``twin/``,
    and its falls to the floor (``peers.falls_cols``) are in the row as the testbed run's are in
    castlab's."""
    records = case_dir / "twin" if case_dir is not None else None
    t = twin("tfmcc", seed, duration, (algo,), order, lead, records_dir=records, tbf_burst=tbf_burst)
    row = {"impl": TWIN, "tcp": algo, "order": order, "duration_s": duration, "rate_bps": t["scheme_mean_bps"],
           "tcp_bps": t["tcp_mean_bps"], "share": t["share"], "loss": t["loss"],
           **{f"share_w{k}": v for k, v in enumerate(t["window_shares"])},
           **(falls_cols(records) if records is not None else {})}
    hs = case_handshakes(case_dir, (algo,)) if case_dir is not None else {}
    row["handshake_ms"] = hs.get(algo, float("nan")) * 1e3
    told = told_twin("tfmcc", seed, duration, (algo,), order, lead, hs, tbf_burst)
    if told:
        row.update(told_share=told["share"], told_rate_bps=told["scheme_mean_bps"])
    wins = [{"impl": TWIN, "tcp": algo, "order": order, "side": "twin", "window": k,
             "window_start_s": k * SHARE_WINDOW_S, "share": v} for k, v in enumerate(t["window_shares"])]
    return row, wins


def refresh_twins(where: Path, seed: int, duration: float, lead: float = LEAD_S,
                  tbf_burst: Optional[int] = TESTBED_TBF_BURST_BYTES) -> pd.DataFrame:
    """Recompute the simulated twins of a seed's table in `where` (``tfmcc_uftp.csv`` and
    ``windows.csv`` as tfmcc_uftp_table left them) without the testbed: each twin row (impl
    ``castlab (simulated)``, in its place) and the twin's rows of windows.csv are replaced by
    ``peers.twin``'s readings for the row's TCP flavour and order; the testbed's rows are kept as
    they are, and each twin row's told twin is recomputed from castlab's run beside it
    (``_twin_row``). `tbf_burst`: the twins' token bucket (None: the serialising twins, an
    ablation). Writes both tables back and returns tfmcc_uftp.csv's."""
    df = pd.read_csv(where / "tfmcc_uftp.csv")
    wpath = where / "windows.csv"
    wins = pd.read_csv(wpath) if wpath.exists() else pd.DataFrame(columns=WINDOW_COLS)
    wins = wins[wins["side"] != "twin"].to_dict("records")
    rows = []
    for row in df.to_dict("records"):
        if row["impl"] == TWIN:
            fresh, w = _twin_row(seed, duration, row["tcp"], row["order"], lead, tbf_burst,
                                 where / row["order"] / f"tfmcc_{row['tcp']}")
            row = {**{k: float("nan") for k in row}, **fresh}
            wins += w
        elif row["impl"] == "castlab":
            row.update(falls_cols(where / row["order"] / f"tfmcc_{row['tcp']}"))
        rows.append(row)
    out = pd.DataFrame(rows, columns=list(dict.fromkeys([*df.columns, *(k for r in rows for k in r)])))
    pd.DataFrame(wins, columns=WINDOW_COLS).to_csv(wpath, index=False)
    out.to_csv(where / "tfmcc_uftp.csv", index=False)
    return out


def tfmcc_uftp_figure(out: Path, algos: tuple[str, ...], orders: tuple[str, ...]) -> list[str]:
    """Rates over time at rcv1 per TCP algorithm (a row each) and start order (a column each):
    both TFMCCs, the TCP flow beside each, and each sender's own rate."""
    import matplotlib.pyplot as plt

    from castlab.experiments.plotting import save

    fig, axes = plt.subplots(len(algos), len(orders), figsize=(4.6 * len(orders) + 0.4, 1.9 * len(algos) + 0.5),
                             dpi=120, sharex=True, squeeze=False)
    for i, algo in enumerate(algos):
        for j, order in enumerate(orders):
            ax = axes[i, j]
            for impl, color, label in (("tfmcc", "k", "castlab TFMCC"), ("uftp", "tab:red", "UFTP TFMCC")):
                d = out / order / f"{impl}_{algo}"
                if not (d / "series.csv").exists():
                    continue
                s = pd.read_csv(d / "series.csv")
                ax.plot(s["second"], s["scheme_bps"] / 1e3, color=color, lw=1.0, label=f"{label} (at rcv1)")
                ax.plot(s["second"], s[f"tcp0_{algo}_bps"] / 1e3, color=color, lw=0.6, ls=":",
                        label=f"TCP beside it")
                if (d / "sender_rates.csv").exists():
                    r = pd.read_csv(d / "sender_rates.csv")
                    ax.step(r["time_s"], r["rate_bps"] / 1e3, where="post", color=color, lw=0.5, alpha=0.4,
                            label=f"{label} sender's rate")
            ax.axvline(0, color="0.5", lw=0.6, ls=":")
            ax.set_ylabel("kb/s", fontsize=7)
            ax.set_title(f"against one TCP {algo} flow, {order}", fontsize=7)
            ax.set_ylim(0, LINK_BPS * 1.6 / 1e3)
            ax.grid(True, alpha=0.3)
            ax.tick_params(labelsize=6)
    axes[0, 0].legend(fontsize=5, ncol=2)
    for ax in axes[-1]:
        ax.set_xlabel("time from when both run (s)", fontsize=7)
    return save(fig, out, "tfmcc_uftp")


def tfmcc_uftp_claims(df: pd.DataFrame, run_seeds: list[int], algos: tuple[str, ...],
                      orders: tuple[str, ...]) -> list:
    """Per start order and TCP algorithm, each on the mean over seeds with its t interval: castlab's
    rate within BAND of UFTP's (derived); each TFMCC and the twin within RFC 4654 §1's factor of two
    of the TCP flow (paper); castlab's testbed share within NET_VS_SIM of its twin's (derived,
    declared before the first run with the orders)."""
    def per_seed(impl: str, tcp: str, order: str, col: str) -> list[float]:
        return [float(df[(df["seed"] == s) & (df["impl"] == impl) & (df["tcp"] == tcp) & (df["order"] == order)]
                      [col].iloc[0]) for s in run_seeds]

    claims = []
    for o in orders:
        for a in algos:
            where = f"tfmcc_uftp.csv ({o} rows); seed-N/{o}/tfmcc_{a}/ and uftp_{a}/series.csv"
            c, u = per_seed("castlab", a, o, "rate_bps"), per_seed("uftp", a, o, "rate_bps")
            ratios = [x / y if y > 0 else float("nan") for x, y in zip(c, u)]
            claims.append(claim_over_seeds(
                in_range, ratios, f"castlab-vs-uftp-{a}-{o}", f"(derived) castlab's TFMCC rate at the receiver is "
                f"within a factor of {BAND:g} of UFTP's TFMCC beside the same TCP {a} flow, {o}", 1 / BAND, BAND,
                None, "ratio", kind="derived", explanation=f"rate_bps per seed in {where}"))
            for impl in ("castlab", "uftp"):
                claims.append(claim_over_seeds(
                    in_range, per_seed(impl, a, o, "share"), f"tcp-friendly-{impl}-{a}-{o}", f"(RFC 4654 §1) "
                    f"{impl}'s TFMCC, {o}, is 'reasonably fair': its rate within a factor of two of the TCP {a} "
                    "flow's under the same conditions", FAIR_LO, FAIR_HI, None, "ratio", kind="paper",
                    explanation=f"share ({impl}, {a}) per seed in {where}"))
            twin_shares = per_seed("castlab (simulated)", a, o, "share")
            claims.append(claim_over_seeds(
                in_range, twin_shares, f"tcp-friendly-castlab-simulated-{a}-{o}",
                f"(RFC 4654 §1) the simulated twin: castlab's TFMCC against one TCP {a} flow as Linux runs it, on the "
                f"same rates and queue, {o}, within a factor of two", FAIR_LO, FAIR_HI, None, "ratio", kind="paper",
                explanation=f"tfmcc_uftp.csv, castlab (simulated), {a}, {o}"))
            net = per_seed("castlab", a, o, "share")
            told = per_seed(TWIN, a, o, "told_share") if "told_share" in df else []
            told_why = ""
            if told and all(np.isfinite(told)):
                hs = per_seed(TWIN, a, o, "handshake_ms")
                told_why = (f"; the kernel flow's handshake RTT per seed {', '.join(f'{h:.3g}' for h in hs)} ms "
                            f"(handshake_ms), and the testbed's share over the twin told it "
                            f"{np.mean([x / y for x, y in zip(net, told)]):.2f} on the mean over seeds (told_share)")
            both = pd.DataFrame({**{c: per_seed("castlab", a, o, c) for c in ("falls", "first_fall_s") if c in df},
                                 **{f"twin_{c}": per_seed(TWIN, a, o, c) for c in ("falls", "first_fall_s") if c in df}})
            falls = falls_phrase(both, "falls and first_fall_s of the castlab and castlab (simulated) rows")
            told_why += f"; {falls}" if falls else ""
            claims.append(claim_over_seeds(
                in_range, [x / y if y > 0 else float("nan") for x, y in zip(net, twin_shares)],
                f"net-vs-sim-castlab-{a}-{o}", f"(derived) castlab's TFMCC share of the TCP {a} flow on the testbed "
                f"is within a factor of {NET_VS_SIM:g} of its simulated twin's, {o}, per seed", 1 / NET_VS_SIM,
                NET_VS_SIM, None, "ratio", kind="derived",
                explanation=f"share of castlab and castlab (simulated) per seed, and share_wK per window, in {where}"
                            f"{told_why}"))
    return claims


def run_net_tfmcc_uftp(out: Path, seed: int, quick: bool = False, seeds: int = FULL_SEEDS,
                       reuse: bool = False) -> Result:
    """The quick form: one QUICK_DURATION_S run of each case at `seed`, TFMCC first
    (QUICK_ORDERS). The full form: both start orders, FULL_DURATION_S from the moment both run,
    at seeds `seed` .. `seed` + `seeds` - 1, each seed's cases in ``seed-N/`` (the figure is the
    first seed's; the window figure all seeds'), every claim decided per order on the mean over the
    seeds. With `reuse`, a seed whose table an earlier run of the same settings left in
    ``seed-N/`` is read, not run again (seeds can so run in parallel processes)."""
    from castlab.experiments.tfmcc.peers import missing

    reason = _unavailable() or (None if shutil.which("iperf3") else "needs iperf3 (make setup installs it with apt)") \
        or missing("uftp")
    if reason:
        return _skip(reason)
    if not quick and seeds < 1:
        raise ValueError(f"seeds: must be at least 1 (got {seeds})")
    duration = QUICK_DURATION_S if quick else FULL_DURATION_S
    orders = QUICK_ORDERS if quick else ORDERS
    algos = TCP_ALGOS
    run_seeds = [seed] if quick else list(range(seed, seed + seeds))
    frames, wframes = [], []
    for s in run_seeds:
        where = out if quick else out / f"seed-{s}"
        where.mkdir(parents=True, exist_ok=True)
        d = _read_seed(where, {"file": "tfmcc_uftp.csv", "orders": orders, "duration": duration}) if reuse else None
        if d is None:
            d = tfmcc_uftp_table(where, s, duration, algos, orders)
        frames.append(d.assign(seed=s))
        if (where / "windows.csv").exists():
            wframes.append(pd.read_csv(where / "windows.csv").assign(seed=s))
    df = pd.concat(frames, ignore_index=True)
    df.to_csv(out / "tfmcc_uftp.csv", index=False)
    windows = pd.concat(wframes, ignore_index=True) if wframes else pd.DataFrame(
        columns=["impl", "tcp", "order", "side", "window", "window_start_s", "share", "seed"])
    if not quick:
        windows.to_csv(out / "windows.csv", index=False)
    files = tfmcc_uftp_figure(out if quick else out / f"seed-{run_seeds[0]}", algos, orders)
    if not quick:
        files = [f"seed-{run_seeds[0]}/{f}" for f in files]
    files += shares_figure(out, windows, list(algos), f"net-tfmcc-uftp: share of the TCP flow per "
                           f"{SHARE_WINDOW_S:g} s window ({len(run_seeds)} seed(s)); panel: the TCP flavour",
                           "tfmcc_uftp_shares", key="tcp")
    claims = tfmcc_uftp_claims(df, run_seeds, algos, orders)
    params = {"network": "real", "topology": topology().description, "routers": "kernel (tbf + pfifo, igmpproxy)",
              "propagation_delay_s": 0.0, "duration_s": duration, "warm_up_s": WARM_S, "bottleneck_bps": LINK_BPS,
              "share_window_s": SHARE_WINDOW_S, "orders": list(orders), "lead_s": LEAD_S,
              "queue_pkts": QUEUE_PKTS, "seeds": run_seeds,
              "decided_on": "one run" if quick else f"the mean over {len(run_seeds)} seeds (95 % t interval)",
              "uftp": "uftp -C tfmcc -x 4 -L (rate per feedback), -t hop count + 1, "
              "-M/-P in 239/8, -H rcv1's and rcv2's client IDs (a closed group) with -s 50 announce rounds, "
              "a file never finished inside the run; uftpd -d -U ID on rcv1 and rcv2",
              "uftp_loss_event_rate": "not in UFTP's log: loss is the counters' packet loss",
              "tcp": "one kernel flow per run, iperf3 -C ALGO, the namespace's default named reno",
              "twin": "castlab's TFMCC in the simulator (peers.twin): the same rates and queue, no delay per link "
                      f"and tbf's bucket of {TESTBED_TBF_BURST_BYTES} bytes on the last hops (the testbed's), one "
                      "TCP flow as Linux runs it, the same start order and lead",
              "rows": df.to_dict("records")}
    return Result(params, claims, ["tfmcc_uftp.csv", *([] if quick else ["windows.csv"]), *files])


__all__ = ["refresh_twins", "run_net_tfmcc_uftp", "uftp_rate_log"]
