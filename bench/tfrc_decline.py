"""Why LE-SBCC (TFRC)'s testbed share falls from window to window in net-peers, and its twin's does
not: both sides' own records per SHARE_WINDOW_S window, side by side.

    python bench/tfrc_decline.py COPY OUT [--twins] [--late S]

COPY: a copy of a full net-peers run (seed-N/ORDER/lesbcc-tfrc/, the testbed's records as the run
left them). `--twins` first runs each seed's and order's twin of lesbcc-tfrc (``peers.twin`` with
captures; the twin as this build computes it) and writes its records beside the testbed's, in
``ORDER/lesbcc-tfrc/twin/`` (``source/``, ``rx_rcv1/``, ``twin_src.pcap``, ``twin_rcv1.pcap`` and
``twin.json``, its readings); without it those files must be there. That twin starts its
receivers with its source (``peers.twin``'s `source_delay_s` 0, the ablation). `--late S` adds a
side ``twin-late``: the twin whose receivers start S seconds before its source, as the testbed's
(S = 0.1 is the twins' default, ``peers.TESTBED_RECEIVERS_LEAD_S``), run and written into
``ORDER/lesbcc-tfrc/twin-late/``. Nothing runs on the testbed.

Per seed, order, side and window (measurement seconds [30k, 30k + 30), on the source's clock
the measurement's second 0 is ``sender_clock_offset_s`` on the testbed and, in a twin, LEAD_S
plus the shift of its start times, ``peers.twin_times``)
writes OUT/tfrc-decline.csv:

- ``share``: the claim's share in the window (case.json's ``window_shares``; the twin's from
  ``peers.twin``).
- ``rate_bps``: the source's rate (``lesbcc_rate.csv``, time-weighted over the window);
  ``rate_end_bps`` at the window's end; ``rises`` / ``falls``: rows of the rate timeline above /
  below the previous one. (``lesbcc_stats.json``'s ``rate_increases`` counts AIMD increases only,
  which TFRC makes before its first loss event, never after: cascade.rs.)
- ``lis``, ``les``: the LIs (NAKs) in the window and those that became loss events of the TFRC
  history (``lesbcc_li.csv`` outcome 3, the ``rate_reductions``).
- ``pkts``: data packets (ODATA and RDATA) the source sent in the window (the testbed: src's
  counter, ``count_src.csv``, its group's bytes over the data packet's size on the wire; the
  twin: its capture at src); ``les_per_pkt`` = les / pkts, the loss event rate the window
  itself saw.
- ``p_eq``: the loss event rate p the TFRC equation used, from each rate row by inverting
  §4.1's equation with the SRTT and σ of the source's last RTT record before the row
  (``lesbcc_rtt.csv``, taken RTT_HOLD_S after its NAK; t_RTO = SRTT + 4σ); time-weighted over
  the window (``p_eq_end`` at its end). A row the equation did not set (the AIMD start, the first loss event's halving, the
  rate floor) gives no p: ``p_rows`` counts those that did.
- ``p_last8``: 1 / the mean of the last 8 loss intervals before the window's end (packets per
  interval from ``pkts``' counter between loss events), and ``p_hist``: 1 / ŝ of §4.1 (n = 8,
  weights 1, α = 0.95 over every older interval) from the same intervals: the history's
  weight on intervals older than the last 8 shows as p_hist below p_last8. ``p_hist_wo_first``:
  the same without the first interval (the source's start to its first loss event, whose
  packets are ``first_interval``); ``intervals``: the intervals closed by the window's end.
  The history counts ODATA only, so these p lie below the source's by about the repairs'
  share of ``pkts`` (p_hist / p_eq_end is a check of the inversion).
- ``srtt_s``, ``sample_s``: median SRTT and median RTT sample of the window's RTT records.
- ``rcv1_loss``: 1 - data packets at rcv1 / data packets at src in the window (counters on the
  testbed, captures in the twin).

And OUT/tfrc-decline-means.csv (means over seeds per order, side and window) and
OUT/tfrc-decline.png: the source's rate and the p its rows imply over time, testbed against
twin (and the late twin with `--late`), a seed per column, both orders. docs/img/ holds them for
the run that docs/real-network.md quotes.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import numpy as np
import pandas as pd

SCHEME = "lesbcc-tfrc"
# the data packet on the wire: the source's 560 bytes (LesbccConfig::packet_bytes) + IPv4 + UDP
WIRE_BYTES = 588
PKT_BYTES = 560
# an RTT sample enters the estimator this long after its NAK (LesbccConfig::rtt_run_hold; the
# record's time is the NAK's)
RTT_HOLD_S = 0.2
WEIGHTS = [1.0] * 8  # §4.1: n = 8, w_1..w_8 all 1
ALPHA = 0.95  # §4.1


def equation_bps(p: np.ndarray, srtt: float, sigma: float) -> np.ndarray:
    """§4.1's rate (bits/s) for loss event rate p, R = SRTT, t_RTO = SRTT + 4σ (cascade.rs's form)."""
    t_rto = srtt + 4.0 * sigma
    return 8.0 * PKT_BYTES / (srtt * np.sqrt(2.0 * p / 3.0) + t_rto * 3.0 * np.sqrt(3.0 * p / 8.0) * p * (1.0 + 32.0 * p * p))


def invert_p(rate_bps: float, srtt: float, sigma: float) -> float:
    """The p in (1e-9, 1] at which §4.1's equation gives `rate_bps` (NaN outside the range)."""
    lo, hi = 1e-9, 1.0
    if not (srtt > 0 and rate_bps > 0) or rate_bps > equation_bps(lo, srtt, sigma) or rate_bps < equation_bps(hi, srtt, sigma):
        return float("nan")
    for _ in range(100):  # the rate falls with p: bisection in log p
        mid = np.sqrt(lo * hi)
        if equation_bps(mid, srtt, sigma) > rate_bps:
            lo = mid
        else:
            hi = mid
    return float(np.sqrt(lo * hi))


def s_hat(intervals: list[float]) -> float:
    """§4.1's ŝ_1 over `intervals` (newest first): weights 1 on the newest 8, α^j beyond."""
    num = den = 0.0
    for k, s in enumerate(intervals):
        w = WEIGHTS[k] if k < len(WEIGHTS) else (ALPHA ** (k - len(WEIGHTS) + 1) if len(intervals) > len(WEIGHTS) else 0.0)
        num, den = num + w * s, den + w
    return num / den if den > 0 else float("nan")


def rate_p(rate: pd.DataFrame, rtt: pd.DataFrame, li: pd.DataFrame, floor_bps: float) -> pd.DataFrame:
    """The rate timeline with the p each row's rate implies (NaN where the equation did not set
    it: before the first loss event, at the first (halved) one, at the floor)."""
    r = rate.sort_values("time_s").reset_index(drop=True)
    rt = rtt.assign(time_s=rtt["time_s"] + RTT_HOLD_S).sort_values("time_s", kind="stable")
    first_le = li.loc[li["outcome"] == 3, "time_s"].min() if (li["outcome"] == 3).any() else np.inf
    idx = np.searchsorted(rt["time_s"].to_numpy(), r["time_s"].to_numpy(), side="right") - 1
    srtt, sig = rt["srtt_s"].to_numpy(), rt["sigma_s"].to_numpy()
    ps = []
    for k, row in r.iterrows():
        t, bps, j = row["time_s"], row["bps"], idx[k]
        if t <= first_le + 1e-9 or j < 0 or bps <= floor_bps * (1 + 1e-9):
            ps.append(np.nan)
        else:
            ps.append(invert_p(bps, srtt[j], sig[j]))
    return r.assign(p=ps)


def step_mean(t: np.ndarray, v: np.ndarray, a: float, b: float) -> float:
    """Time-weighted mean over [a, b) of the step function holding v[i] from t[i] (NaN steps
    left out)."""
    if len(t) == 0:
        return float("nan")
    edges = np.clip(np.append(t, np.inf), a, b)
    dur = np.diff(edges)
    ok = np.isfinite(v) & (dur > 0)
    return float(np.sum(v[ok] * dur[ok]) / np.sum(dur[ok])) if ok.any() else float("nan")


def step_at(t: np.ndarray, v: np.ndarray, x: float) -> float:
    i = np.searchsorted(t, x, side="right") - 1
    return float(v[i]) if i >= 0 else float("nan")


def testbed_counts(case: Path, lead: float, t0: float) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Data packets per counter bin at src and rcv1, on the source's clock (the counters' second
    0 is the earlier side's start; the measurement's is `lead` later)."""
    out = []
    for f in ("count_src.csv", "count_rcv1.csv"):
        c = pd.read_csv(case / f)
        c = c[c["kind"] == "mc"]
        out.append(pd.DataFrame({"time_s": c["second"].to_numpy(float) - lead + t0,
                                 "pkts": (c["bytes"].to_numpy() // WIRE_BYTES).astype(float)}))
    return out[0], out[1]


def twin_counts(d: Path) -> tuple[pd.DataFrame, pd.DataFrame]:
    from castlab.experiments.tfmcc import flowdrops as fd

    out = []
    for f in ("twin_src.pcap", "twin_rcv1.pcap"):
        c = fd.read_pcap(d / f)
        c = c[c["flow"].str.startswith("mc:") & (c["bytes"] == WIRE_BYTES)]
        out.append(pd.DataFrame({"time_s": c["t_s"].to_numpy(float), "pkts": np.ones(len(c))}))
    return out[0], out[1]


def side_rows(src: Path, t0: float, shares: list[float], sent: pd.DataFrame, got: pd.DataFrame,
              floor_bps: float) -> tuple[list[dict], pd.DataFrame]:
    from castlab.experiments.tfmcc import peers

    rate = pd.read_csv(src / "lesbcc_rate.csv")
    rtt = pd.read_csv(src / "lesbcc_rtt.csv")
    li = pd.read_csv(src / "lesbcc_li.csv")
    rp = rate_p(rate, rtt, li, floor_bps)
    t, v, p = rp["time_s"].to_numpy(), rp["bps"].to_numpy(float), rp["p"].to_numpy(float)
    dv = np.diff(v, prepend=np.nan)
    le_t = li.loc[li["outcome"] == 3, "time_s"].to_numpy(float)
    st, sp = sent["time_s"].to_numpy(), sent["pkts"].to_numpy()
    order = np.argsort(st)
    st, cum = st[order], np.cumsum(sp[order])

    def sent_by(x: float) -> float:
        i = np.searchsorted(st, x, side="right") - 1
        return float(cum[i]) if i >= 0 else 0.0

    le_pkts = np.array([sent_by(x) for x in le_t])
    rows = []
    for k, share in enumerate(shares):
        a, b = t0 + k * peers.SHARE_WINDOW_S, t0 + (k + 1) * peers.SHARE_WINDOW_S
        inw = (t >= a) & (t < b)
        lw = li[(li["time_s"] >= a) & (li["time_s"] < b)]
        rw = rtt[(rtt["time_s"] >= a) & (rtt["time_s"] < b)]
        n_sent = float(sp[(sent["time_s"] >= a) & (sent["time_s"] < b)].sum())
        n_got = float(got["pkts"][(got["time_s"] >= a) & (got["time_s"] < b)].sum())
        les = int((lw["outcome"] == 3).sum())
        # the loss intervals closed by the window's end, newest first; the first runs from the
        # source's start (tfrc.rs: s_0 counts from the start of the transfer)
        iv = list(np.diff(np.concatenate([[0.0], le_pkts[le_t < b]]))[::-1])
        rows.append({"window": k, "share": share, "rate_bps": step_mean(t, v, a, b), "rate_end_bps": step_at(t, v, b),
                     "rises": int((dv[inw] > 0).sum()), "falls": int((dv[inw] < 0).sum()),
                     "lis": len(lw), "les": les, "pkts": n_sent, "les_per_pkt": les / n_sent if n_sent else np.nan,
                     "p_eq": step_mean(t, p, a, b), "p_eq_end": step_at(t, p, b), "p_rows": int(np.isfinite(p[inw]).sum()),
                     "p_last8": (1.0 / np.mean(iv[:8])) if len(iv) >= 8 else np.nan,
                     "p_hist": (1.0 / s_hat(iv)) if len(iv) >= 8 else np.nan,
                     "p_hist_wo_first": (1.0 / s_hat(iv[:-1])) if len(iv) >= 9 else np.nan,
                     "first_interval": iv[-1] if iv else np.nan, "intervals": len(iv),
                     "srtt_s": float(rw["srtt_s"].median()) if len(rw) else np.nan,
                     "sample_s": float(rw["sample_s"].median()) if len(rw) else np.nan,
                     "rcv1_loss": 1.0 - n_got / n_sent if n_sent else np.nan})
    return rows, rp.assign(t_meas_s=rp["time_s"] - t0)


def run_twin(d: Path, seed: int, order: str, tcp: tuple[str, ...], source_delay_s: float = 0.0) -> None:
    from castlab.experiments.tfmcc import peers

    tw = peers.twin(SCHEME, seed, peers.FULL_DURATION_S, tcp, order, records_dir=d, capture=True,
                    source_delay_s=source_delay_s)
    (d / "twin.json").write_text(json.dumps(tw, indent=1))


def main() -> None:
    from castlab.experiments.tfmcc import peers

    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("copy", type=Path)
    ap.add_argument("out", type=Path)
    ap.add_argument("--twins", action="store_true", help="run the twins first (records into ORDER/lesbcc-tfrc/twin/)")
    ap.add_argument("--late", type=float, default=None, help="add the twin whose receivers start S s before its source")
    ap.add_argument("--tcp", default=",".join(peers.TCP_ALGOS))
    a = ap.parse_args()
    tcp = tuple(a.tcp.split(","))
    floor_bps = PKT_BYTES * 8.0  # LesbccConfig::min_rate_bps
    rows, series = [], []
    for seed in range(1, peers.FULL_SEEDS + 1):
        for order in peers.ORDERS:
            case = a.copy / f"seed-{seed}" / order / SCHEME
            if a.twins:
                run_twin(case / "twin", seed, order, tcp)
            if a.late is not None:
                run_twin(case / "twin-late", seed, order, tcp, a.late)
            rec = json.loads((case / "case.json").read_text())
            t0 = float(rec["sender_clock_offset_s"])
            sent, got = testbed_counts(case, float(rec["lead_s"]), t0)
            sides = [("testbed", case / "source", t0, rec["window_shares"], sent, got)]
            for side in ("twin",) + (("twin-late",) if a.late is not None else ()):
                tw = json.loads((case / side / "twin.json").read_text())
                delay = a.late if side == "twin-late" else 0.0
                t0_twin = peers.LEAD_S + peers.twin_times(order, peers.LEAD_S, delay)[3]
                sides.append((side, case / side / "source", t0_twin, tw["window_shares"], *twin_counts(case / side)))
            for side, src, t0s, shares, s_, g_ in sides:
                r, rp = side_rows(src, t0s, shares, s_, g_, floor_bps)
                rows += [{"seed": seed, "order": order, "side": side, **x} for x in r]
                series.append(rp.assign(seed=seed, order=order, side=side))
    df = pd.DataFrame(rows)
    a.out.mkdir(parents=True, exist_ok=True)
    df.to_csv(a.out / "tfrc-decline.csv", index=False, float_format="%.6g")
    m = df.groupby(["order", "side", "window"], sort=False).mean(numeric_only=True).drop(columns="seed").reset_index()
    m.to_csv(a.out / "tfrc-decline-means.csv", index=False, float_format="%.6g")
    with pd.option_context("display.width", 250, "display.max_columns", 40):
        print(m.round(4).to_string(index=False))
    plot(pd.concat(series), a.out / "tfrc-decline.png")


def plot(s: pd.DataFrame, path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from castlab.experiments.tfmcc import peers

    orders = list(peers.ORDERS)
    seeds = sorted(s["seed"].unique())
    fig, ax = plt.subplots(2 * len(orders), len(seeds), figsize=(4.2 * len(seeds), 2.6 * 2 * len(orders)),
                           sharex=True, squeeze=False)
    colours = {"testbed": "tab:red", "twin": "tab:blue", "twin-late": "tab:green"}
    colours = {k: v for k, v in colours.items() if (s["side"] == k).any()}
    for i, order in enumerate(orders):
        for j, seed in enumerate(seeds):
            top, bot = ax[2 * i][j], ax[2 * i + 1][j]
            for side, c in colours.items():
                d = s[(s["seed"] == seed) & (s["order"] == order) & (s["side"] == side)]
                d = d[(d["t_meas_s"] >= -peers.LEAD_S) & (d["t_meas_s"] <= peers.FULL_DURATION_S)]
                top.step(d["t_meas_s"], d["bps"] / 1e3, where="post", color=c, label=side, lw=0.9)
                q = d[np.isfinite(d["p"])]
                bot.plot(q["t_meas_s"], q["p"], ".", ms=2.5, color=c, label=side)
            for x in np.arange(0, peers.FULL_DURATION_S + 1, peers.SHARE_WINDOW_S):
                top.axvline(x, color="0.85", lw=0.6)
                bot.axvline(x, color="0.85", lw=0.6)
            top.set_ylim(0, 300)
            bot.set_yscale("log")
            top.set_title(f"{order}, seed {seed}", fontsize=9)
            if j == 0:
                top.set_ylabel("source rate (kb/s)")
                bot.set_ylabel("p the equation used")
            if i == len(orders) - 1:
                bot.set_xlabel("s from the measurement's start")
    ax[0][0].legend(fontsize=8)
    late = ", twin with its receivers before its source (green)" if "twin-late" in colours else ""
    fig.suptitle(f"LE-SBCC (TFRC) in net-peers: testbed (red), twin (blue){late}; grey: the share's windows",
                 fontsize=10)
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=110)


if __name__ == "__main__":
    main()
