"""Why the kernel's bbr alone keeps a longer queue than the twin's (net-tcp-vs-sim's
`alone-rtt-bbr`): the ACK stream each side's BBR sees, and the window tcp_bbr.c builds from it.

    python bench/bbr_ack_timing.py OUT [--runs 3] [--duration 30] [--load N] [--seed 1]

Each run is net-tcp-vs-sim's "bbr" case (``net.kernel_case``: iperf3 -C bbr src -> rcv1 through
the 10 Mb/s tbf and 30-packet pfifo, ``ss -tin`` every 0.1 s) with dumpcap on src's port (the
first 96 bytes of every frame: data departures and ACK arrivals as src's stack sees them), and
the same case's twin (``net.twin_scenario``, seeded `seed` + run) with its bbr flow's trace (ACK
times and bytes, departures, the model's bandwidth and min RTT, the state). `--load N` keeps N
busy processes (``while True: pass``, not in the testbed's namespaces) running through each
kernel case, as a machine shared with other work has; they are ended by their ids.

Both sides' departures and ACK streams, after the 5 s warm-up, go through the same code:
- the departures of new data grouped into bursts (successive departures under 0.2 ms apart):
  how many of each size, the fraction of segments that leave alone, the mean burst;
- the gaps between successive ACKs that acknowledge new data;
- tcp_bbr.c's ACK-aggregation estimate (``bbr_update_ack_aggregation``): per ACK the data ACKed
  since the epoch's start beyond bandwidth x the epoch's length, the epoch restarting when no
  more than that was ACKed; its maximum over windows of 5 packet-timed rounds, two windows
  kept. Replayed with the side's own bandwidth estimate (ss's ``bw`` for the kernel, the
  trace's ``model_bw_bps`` for the twin): the estimate's epoch restarts only when the ACKs fall
  behind it, so a rate below the ACKs' own would grow the estimate without end;
- the window tcp_bbr.c sets in PROBE_BW from those (``bbr_set_cwnd``): 2 x bw x min RTT in
  whole segments, plus the aggregation allowance, plus ``bbr_quantization_budget`` (3 TSO
  bursts of 2 segments at these rates, rounded up to even, 2 more in the 5/4 phase), set
  beside the side's own window at the same instants (ss's cwnd every 0.1 s; the trace's).

Writes OUT/acks.csv (a row per run and side), OUT/run-N/ (the kernel case's files, src.pcap and
src.log, gaps.csv, windows.csv), OUT/bbr_ack_timing.png, and prints the table. Needs root, the
testbed, iperf3, ss and dumpcap (tshark's package).
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd

MSS = 1448
WARM_S = 5.0
#: tcp_bbr.c: bbr_extra_acked_win_rtts, the window of the aggregation estimate (rounds)
WIN_ROUNDS = 5
#: tcp_bbr.c: bbr_extra_acked_max_us, the allowance's cap as bandwidth x this (s)
EXTRA_MAX_S = 0.1
#: ACK gaps below this (s) count as arriving together: a 1514-byte frame takes 1.21 ms at the tbf
BUNCH_S = 0.2e-3


def aggregation(ack_t, ack_cum, tx_t, tx_end, bw_t, bw_bps):
    """tcp_bbr.c's bbr_update_ack_aggregation replayed on an ACK stream: ack_t (s) and ack_cum
    (cumulative bytes ACKed) for ACKs of new data, tx_t / tx_end the departures of new data (s,
    highest byte sent), bw_t / bw_bps the bandwidth estimate as a step function. Returns per ACK
    the allowance in segments: max of the two windows' extra_acked, capped at bw x 100 ms."""
    out = np.empty(len(ack_t))
    ep_t, ep_acked = ack_t[0] if len(ack_t) else 0.0, 0.0
    win, idx, rounds = [0.0, 0.0], 0, 0
    round_end = 0.0
    prev = ack_cum[0] if len(ack_cum) else 0.0
    k_tx = 0
    bw_at = np.searchsorted(bw_t, ack_t, side="right") - 1
    for i, (t, cum) in enumerate(zip(ack_t, ack_cum)):
        while k_tx < len(tx_t) and tx_t[k_tx] <= t:
            k_tx += 1
        snd_nxt = tx_end[k_tx - 1] if k_tx else 0.0
        acked = cum - prev
        prev = cum
        if cum >= round_end:  # a packet sent after the round began is ACKed: a new round
            round_end = snd_nxt
            rounds += 1
            if rounds >= WIN_ROUNDS:
                rounds = 0
                idx ^= 1
                win[idx] = 0.0
        bw = bw_bps[max(bw_at[i], 0)] / 8  # bytes/s
        expected = bw * (t - ep_t)
        if ep_acked <= expected:
            ep_acked, ep_t, expected = 0.0, t, 0.0
        ep_acked += acked
        win[idx] = max(win[idx], ep_acked - expected)
        out[i] = min(max(win) / MSS, bw * EXTRA_MAX_S / MSS)
    return out


def target_cwnd(bw_bps, min_rtt_s, allowance, up_phase):
    """bbr_set_cwnd's target in PROBE_BW (segments): bbr_bdp at cwnd_gain 2 (rounded up), the
    aggregation allowance (whole segments), bbr_quantization_budget."""
    bdp = np.ceil(2 * bw_bps / 8 * min_rtt_s / MSS)
    c = bdp + np.floor(allowance) + 3 * 2
    c = c + (c % 2)
    return c + np.where(up_phase, 2, 0)


def kernel_streams(pcap: Path, dport: int):
    """The data connection's departures and ACK arrivals from src's capture (the iperf3 control
    connection shares the server port: the connection with the most data is iperf3's data)."""
    r = subprocess.run(["tshark", "-r", str(pcap), "-Y", f"tcp.port == {dport}", "-T", "fields", "-E",
                        "separator=,", "-e", "frame.time_epoch", "-e", "tcp.srcport", "-e", "tcp.dstport",
                        "-e", "tcp.seq", "-e", "tcp.ack", "-e", "tcp.len"],
                       capture_output=True, text=True, check=True)
    rows = [ln.split(",") for ln in r.stdout.splitlines() if ln.count(",") == 5]
    df = pd.DataFrame(rows, columns=["t", "sport", "dport", "seq", "ack", "len"]).apply(pd.to_numeric, errors="coerce")
    data = df[(df.dport == dport) & (df.len > 0)]
    conn = data.groupby("sport")["len"].sum().idxmax()
    d = data[data.sport == conn].sort_values("t")
    end = (d.seq + d.len).cummax()
    new = end.diff().fillna(end.iloc[0]) > 0
    a = df[(df.sport == dport) & (df.dport == conn)].sort_values("t")
    cum = a.ack.cummax()
    adv = cum.diff().fillna(0) > 0
    return (d.t[new].to_numpy(float), end[new].to_numpy(float), a.t[adv].to_numpy(float),
            cum[adv].to_numpy(float), conn)


def twin_streams(tr: dict):
    """The twin flow's departures of new data and ACKs of new data, from its trace (times s)."""
    tx_t = tr["tx_time_ns"] / 1e9
    # tx_bytes is the IP bytes sent so far, every segment full-sized (MSS + 52 bytes of headers),
    # retransmissions included: the highest byte sent leaves those out
    sent = tr["tx_bytes"].astype(float) * MSS / (MSS + 52)
    n_retx = np.searchsorted(tr["retx_time_ns"] / 1e9, tx_t, side="right")
    tx_end = np.maximum.accumulate(sent - MSS * n_retx)
    ack_t = tr["ack_time_ns"] / 1e9
    cum = tr["acked_bytes"].astype(float)  # snd_una after each ACK
    adv = np.diff(cum, prepend=0.0) > 0
    return tx_t, tx_end, ack_t[adv], cum[adv]


def bursts(tx_t) -> dict[int, int]:
    """Departures of new data grouped into bursts (successive departures less than BUNCH_S
    apart): how many bursts of each size."""
    if len(tx_t) < 2:
        return {len(tx_t): 1} if len(tx_t) else {}
    cut = np.where(np.diff(tx_t) >= BUNCH_S)[0] + 1
    sizes = np.diff(np.concatenate([[0], cut, [len(tx_t)]]))
    u, n = np.unique(sizes, return_counts=True)
    return {int(a): int(b) for a, b in zip(u, n)}


def summarise(side, run, ack_t, ack_cum, tx_t, tx_end, bw_t, bw_bps, win: pd.DataFrame, t_start):
    """One row of acks.csv: the ACK gaps and the replayed allowances after the warm-up, and the
    window against the target from the replayed allowance at the window's samples."""
    own = aggregation(ack_t, ack_cum, tx_t, tx_end, bw_t, bw_bps)
    after = ack_t >= t_start + WARM_S
    gaps = np.diff(ack_t[after])
    segs = np.diff(ack_cum[after]) / MSS
    k = np.searchsorted(ack_t, win["t"].to_numpy(float), side="right") - 1
    allow = np.where(k >= 0, own[np.maximum(k, 0)], np.nan)
    tgt = target_cwnd(win["bw_bps"].to_numpy(float), win["min_rtt_s"].to_numpy(float), allow,
                      win["up"].to_numpy(bool))
    w = win.assign(allowance=allow, target=tgt)
    probe_bw = w[(w["t"] >= t_start + WARM_S) & w["probe_bw"]]
    b = bursts(tx_t[tx_t >= t_start + WARM_S])
    segs_total = sum(k * n for k, n in b.items())
    row = {"run": run, "side": side, "acks": int(after.sum()),
           "solo_frac": b.get(1, 0) / segs_total if segs_total else np.nan,
           "mean_burst": segs_total / sum(b.values()) if b else np.nan,
           "bursts": " ".join(f"{k}:{n}" for k, n in sorted(b.items())),
           "segs_per_ack": float(np.mean(segs)) if len(segs) else np.nan,
           "gap_median_ms": float(np.median(gaps) * 1e3), "gap_p99_ms": float(np.quantile(gaps, 0.99) * 1e3),
           "bunched_frac": float(np.mean(gaps < BUNCH_S)),
           "allowance_own_median": float(np.median(own[after])), "allowance_own_p90": float(np.quantile(own[after], 0.9)),
           "cwnd_median": float(probe_bw["cwnd"].median()), "target_median": float(probe_bw["target"].median()),
           "target_match_frac": float(np.mean(np.abs(probe_bw["cwnd"] - probe_bw["target"]) <= 1)),
           "srtt_median_ms": float(probe_bw["srtt_ms"].median()),
           "min_rtt_median_ms": float(probe_bw["min_rtt_s"].median() * 1e3),
           "bdp2_median_segs": float(np.median(2 * probe_bw["bw_bps"] / 8 * probe_bw["min_rtt_s"] / MSS))}
    gap_rows = pd.DataFrame({"side": side, "gap_ms": gaps * 1e3, "segs": segs})
    return row, gap_rows, w.assign(side=side)


def kernel_run(tb, where: Path, duration: float, load: int):
    from castlab.experiments.tcp import net

    where.mkdir(parents=True, exist_ok=True)
    pcap = where / "src.pcap"
    busy = []
    with net.src_capture(tb, pcap, snaplen=96):
        try:
            busy = [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(load)]
            load0 = os.getloadavg()[0]
            k = net.kernel_case(tb, where, ("bbr",), duration)
            load1 = os.getloadavg()[0]
        finally:
            for p in busy:
                p.terminate()
                p.wait(timeout=10)
    if k["errors"]:
        raise RuntimeError(f"{where}: {'; '.join(k['errors'])}")
    rows = net.parse_ss((where / "ss.txt").read_text())
    ss = net.data_connections(rows, [net.PORT])[net.PORT]
    tx_t, tx_end, ack_t, ack_cum, _ = kernel_streams(pcap, net.PORT)
    win = pd.DataFrame({"t": ss["t"], "cwnd": ss["cwnd"], "srtt_ms": ss["srtt_ms"], "bw_bps": ss["bbr_bw_bps"],
                        "min_rtt_s": ss["bbr_mrtt_ms"] / 1e3, "up": ss["bbr_pacing_gain"] > 1.1,
                        # cwnd_gain 1 is PROBE_RTT, 2.89 STARTUP: the PROBE_BW samples have pacing gains of the cycle
                        "probe_bw": ss["bbr_pacing_gain"].isin([0.75, 1.0, 1.25]) & (ss["cwnd"] > 4)})
    bw = ss[["t", "bbr_bw_bps"]].dropna()
    return dict(ack_t=ack_t, ack_cum=ack_cum, tx_t=tx_t, tx_end=tx_end, bw_t=bw["t"].to_numpy(float),
                bw_bps=bw["bbr_bw_bps"].to_numpy(float), win=win, t_start=float(tx_t[0]),
                load=(load0, load1))


def twin_run(duration: float, seed: int, base_rtt_s: float, skb_pacing: bool = True):
    from castlab.experiments.tcp import net
    from castlab.scenario import Scenario

    d = net.twin_scenario(("bbr",), duration, base_rtt_s)
    if not skb_pacing:
        d["tcp"][0]["config"] = {**d["tcp"][0].get("config", {}), "skb_pacing": False}
    s = Scenario.from_dict(d)
    sim = s.build(seed)
    sim.run(duration)
    tr = sim.tcp_trace(sim.scenario_handles.tcp["f0"])
    tx_t, tx_end, ack_t, ack_cum = twin_streams(tr)
    st = tr["state_time_ns"] / 1e9
    grid = np.arange(net.SS_PERIOD_S, duration + 1e-9, net.SS_PERIOD_S)
    at = np.searchsorted(st, grid, side="right") - 1
    code = tr["state_code"][np.maximum(at, 0)]
    cw_at = np.searchsorted(tr["cc_time_ns"] / 1e9, grid, side="right") - 1
    rt_at = np.searchsorted(tr["rtt_time_ns"] / 1e9, grid, side="right") - 1
    win = pd.DataFrame({"t": grid, "cwnd": tr["cwnd_bytes"][np.maximum(cw_at, 0)] / MSS,
                        "srtt_ms": tr["srtt_ns"][np.maximum(rt_at, 0)] / 1e6,
                        "bw_bps": tr["model_bw_bps"][np.maximum(at, 0)],
                        "min_rtt_s": tr["min_rtt_ns"][np.maximum(at, 0)] / 1e9,
                        "up": code == 8, "probe_bw": code >= 8})
    return dict(ack_t=ack_t, ack_cum=ack_cum, tx_t=tx_t, tx_end=tx_end, bw_t=st, bw_bps=tr["model_bw_bps"],
                win=win, t_start=float(tx_t[0]))


def figure(out: Path, rows: pd.DataFrame, wins: pd.DataFrame) -> None:
    """Run 1, each side: the segments by the size of the burst they left in, the min-RTT
    filter and the window over time."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, (a, b, c) = plt.subplots(1, 3, figsize=(14, 4))
    r1 = rows[rows["run"] == rows["run"].min()]
    sides = list(r1["side"])
    for n, (_, r) in enumerate(r1.iterrows()):
        b_ = dict((int(k), int(v)) for k, v in (x.split(":") for x in r["bursts"].split()))
        total = sum(k * v for k, v in b_.items())
        ks = np.arange(1, 9)
        a.bar(ks - 0.3 + 0.6 * n / max(len(sides) - 1, 1), [k * b_.get(k, 0) / total for k in ks],
              0.6 / len(sides), label=r["side"])
    a.set_xlabel("burst size (segments leaving within 0.2 ms)")
    a.set_ylabel("fraction of segments")
    a.legend()
    for side in sides:
        w = wins[(wins["side"] == side) & (wins["t"] >= WARM_S)]
        b.plot(w["t"], w["min_rtt_s"] * 1e3, lw=0.9, label=side)
        c.plot(w["t"], w["cwnd"], lw=0.8, label=side)
    b.set_ylim(0, 8)
    b.set_xlabel("time (s)")
    b.set_ylabel("BBR's min RTT (ms)")
    c.set_xlabel("time (s)")
    c.set_ylabel("cwnd (segments)")
    c.legend(fontsize=7)
    fig.suptitle("bbr alone through the 10 Mb/s tbf and 30-packet pfifo: kernel (testbed) and twins, run 1")
    fig.tight_layout()
    fig.savefig(out / "bbr_ack_timing.png", dpi=110)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("out", type=Path)
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--duration", type=float, default=30.0)
    ap.add_argument("--load", type=int, default=0, help="busy processes beside each kernel case")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--per-segment", action="store_true",
                    help="a third side: the twin pacing each segment on its own (skb_pacing off, the ablation)")
    a = ap.parse_args(argv)
    if a.runs < 1 or a.duration <= WARM_S + 1 or not 0 <= a.load <= 16:
        ap.error("--runs at least 1, --duration above 6 s, --load 0-16")
    from castlab.experiments.tcp import net

    why = net.missing(("dumpcap", "tshark"))
    if why:
        print(f"bbr_ack_timing: {why}", file=sys.stderr)
        return 2
    a.out.mkdir(parents=True, exist_ok=True)
    rows, first_wins = [], None
    with net.testbed("a") as tb:
        for r in range(a.runs):
            where = a.out / f"run-{r + 1}"
            pings = net.ping_rtts(tb, "src", "rcv1")
            base = float(np.nanmin(pings))
            k = kernel_run(tb, where, a.duration, a.load)
            sides = [("kernel", k), ("twin", twin_run(a.duration, a.seed + r, base))]
            if a.per_segment:
                sides.append(("twin-per-segment", twin_run(a.duration, a.seed + r, base, skb_pacing=False)))
            gaps, wins = [], []
            for side, s in sides:
                row, g, w = summarise(side, r + 1, s["ack_t"], s["ack_cum"], s["tx_t"], s["tx_end"], s["bw_t"],
                                      s["bw_bps"], s["win"], s["t_start"])
                if side == "kernel":
                    w = w.assign(t=w["t"] - s["t_start"])
                    row.update(load_before=k["load"][0], load_after=k["load"][1], base_rtt_s=base)
                rows.append({"busy": a.load, **row})
                gaps.append(g)
                wins.append(w)
            pd.concat(gaps).to_csv(where / "gaps.csv", index=False)
            pd.concat(wins).to_csv(where / "windows.csv", index=False)
            if first_wins is None:
                first_wins = pd.concat(wins)
            pd.DataFrame(rows).to_csv(a.out / "acks.csv", index=False)
            time.sleep(0.5)
    df = pd.DataFrame(rows)
    figure(a.out, df, first_wins)
    cols = ["run", "side", "solo_frac", "mean_burst", "segs_per_ack", "gap_median_ms", "gap_p99_ms", "bunched_frac", "allowance_own_median",
            "allowance_own_p90", "cwnd_median", "target_median", "target_match_frac",
            "srtt_median_ms", "min_rtt_median_ms"]
    with pd.option_context("display.width", 250, "display.max_columns", 30):
        print(df[cols].round(3).to_string(index=False))
    return 0


if __name__ == "__main__":
    sys.exit(main())
