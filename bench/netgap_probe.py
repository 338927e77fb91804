"""Why net-peers' pfifo drops more of a scheme's packets on the testbed than in its twin: per-flow
drops at the bottleneck and each flow's arrival pattern, both sides.

    python bench/netgap_probe.py OUT [--schemes lesbcc-aimd,rlc] [--order scheme-first]
                                     [--duration 60] [--seed 1] [--tcp reno,cubic,bbr]
                                     [--hops 0.001,0] [--serialising] [--twin-only] [--reuse]
                                     [--user-router-delay SECONDS] [--ss] [--ss-period S]
                                     [--rcv1-sysctl KEY=VALUE ...]
    python bench/netgap_probe.py OUT --sweep FULL [--hops 0.001,0.0002,0] [--serialising]
    python bench/netgap_probe.py OUT --records COPY

Per scheme: one net-peers case on the testbed (`peers.run_case`, its packet logs on both sides of
the bottleneck) into OUT/SCHEME/, and its twins (`peers.twin` with captures) into OUT/SCHEME/twin-tbf-hop-H/
(twin-tbf/ for no delay; serialising: twin-hop-H/, twin/ for 1 ms);
then `flowdrops`' table of each (per flow: drops, drop fraction, bursts within 1 ms and the drop
fraction in and out of them, gap quantiles, mean sojourn; per link: trains). Writes OUT/flows.csv
(one row per side, scheme and flow, with the load average over the testbed run) and prints it.
`--reuse` re-reads the testbed cases already in OUT; `--twin-only` runs the simulator alone. The
testbed needs root, iproute2 and iperf3 (net-peers' needs). `--hops`: the twin once per
propagation delay per link (`peers.twin`'s `hop_delay_s`; the testbed's links have none). The
twin's last hops carry the testbed's token bucket (`peers.twin`'s default); `--serialising`: last
hops that serialise every packet instead (`tbf_burst` None, the ablation).
`--user-router-delay D`: the testbed's r1 is castlab's user-space router instead of the kernel's
(its DropTail queue of the same size at the same rate), with a delay line of D seconds on the
bottleneck port (0: none); the phase columns then take a departure to be D before rcv1's arrival.
`--ss`: the case's TCP sockets on rcv1 and src logged during it (`ss -tin`, `_SsPoller`): rcv1's
ACKs per data segment per flow; src's every `--ss-period` seconds (0.5 by default; bbr's model
in `bbr:(bw,mrtt,pacing_gain,cwnd_gain)`), and src's and rcv1's kernel counters (`nstat -asz`)
before and after the case. `--rcv1-sysctl KEY=VALUE`: a sysctl set in rcv1's namespace for
the case (e.g. ``net.ipv4.tcp_rto_min_us=1000000``: rcv1's own RTO, which sets when Linux's
receiver ACKs at once after a gap between data segments).

`--sweep FULL` runs no testbed: every castlab scheme's twin over FULL_SEEDS seeds, both orders,
the full duration, once per `--hops` value, beside the testbed's shares and losses of a full
net-peers run in FULL (`seed-N/peers.csv`); writes OUT/twin_hops.csv (a row per scheme, order,
seed and hop) and prints per scheme, order and hop the means over seeds and the claim's reading
(the mean over seeds of share / twin_share).

`--records COPY` runs no testbed either: on COPY, a copy of a full net-peers run (it is
rewritten), `peers.refresh_twins` writes each twin's own records beside the testbed run's
(ORDER/SCHEME/twin/), and each castlab scheme's records are summarised side by side into
OUT/records.csv (a row per scheme, order, seed and side): LE-SBCC's LIs per data packet, rate
reductions and increases (lesbcc_stats.json) and median SRTT from the measurement's second 30
(lesbcc_rtt.csv); RLM's join experiments at rcv1 and their outcomes (rlm_exp.csv); RLM's and
RLC's time-weighted level at rcv1 and its changes (levels.csv, the receiver's whole run); TFMCC's
lowest rate in the first 20 s of its sender (tfmcc_rate.csv) and the report that set it
(tfmcc_fb.csv).
"""

from __future__ import annotations

import argparse
import json
import os
from pathlib import Path

import pandas as pd


def main() -> None:
    from castlab.experiments.tfmcc import flowdrops as fd
    from castlab.experiments.tfmcc import peers

    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("out", type=Path)
    ap.add_argument("--schemes", default="lesbcc-aimd,rlc")
    ap.add_argument("--order", default="scheme-first", choices=peers.ORDERS)
    ap.add_argument("--duration", type=float, default=60.0)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--tcp", default=",".join(peers.TCP_ALGOS))
    ap.add_argument("--twin-only", action="store_true")
    ap.add_argument("--reuse", action="store_true")
    ap.add_argument("--hops", default="0.001", help="the twin's delay per link, seconds, comma-separated")
    ap.add_argument("--sweep", type=Path, help="a full net-peers run's directory (seed-N/peers.csv)")
    ap.add_argument("--records", type=Path, help="a copy of a full net-peers run's directory")
    ap.add_argument("--user-router-delay", type=float, default=None)
    ap.add_argument("--ss", action="store_true", help="log the TCP sockets of rcv1 and src (ss -tin) during the case")
    ap.add_argument("--ss-period", type=float, default=_SsPoller.SS_PERIOD_S, help="src's ss period, s (rcv1's 0.5)")
    ap.add_argument("--rcv1-sysctl", action="append", default=[], metavar="KEY=VALUE",
                    help="set in rcv1's namespace before the case (repeatable)")
    ap.add_argument("--serialising", action="store_true", help="twins whose last hops serialise (no token bucket)")
    a = ap.parse_args()
    tcp = tuple(a.tcp.split(","))
    hops = [float(h) for h in a.hops.split(",")]
    burst = None if a.serialising else peers.TESTBED_TBF_BURST_BYTES
    if a.sweep:
        sweep(a.out, a.sweep, hops, tcp, burst)
        return
    if a.records:
        records(a.out, a.records, tcp)
        return
    warm = peers.warm_up(a.duration)
    rows = []
    for name in a.schemes.split(","):
        case = a.out / name
        if not a.twin_only:
            if not (a.reuse and (case / "case.json").exists()):
                why = peers.missing(name)
                if why:
                    raise SystemExit(f"{name}: {why}")
                load0 = os.getloadavg()
                if a.ss or a.rcv1_sysctl:
                    import contextlib

                    from castlab.experiments.net_common import testbed_name
                    from castlab.testbed import Testbed

                    with Testbed(peers.topology(), testbed_name("g")) as tb, \
                            (_SsPoller(tb, case, a.ss_period) if a.ss else contextlib.nullcontext()):
                        for kv in a.rcv1_sysctl:
                            tb.run("rcv1", ["sysctl", "-q", "-w", kv])
                        peers.run_case(case, a.seed, a.duration, name, tcp, tb, order=a.order)
                elif a.user_router_delay is None:
                    peers.run_case(case, a.seed, a.duration, name, tcp, order=a.order)
                else:
                    import dataclasses

                    from castlab.experiments.net_common import testbed_name
                    from castlab.testbed import Testbed

                    topo = peers.topology()
                    topo.lans = [dataclasses.replace(x, delay_s=a.user_router_delay) for x in topo.lans]
                    with Testbed(topo, testbed_name("g"), routers="user") as tb:
                        peers.run_case(case, a.seed, a.duration, name, tcp, tb, order=a.order)
                load1 = os.getloadavg()
                (case / "load.json").write_text(json.dumps({"before": load0, "after": load1}))
            rec = json.loads((case / "case.json").read_text())
            load = json.loads((case / "load.json").read_text()) if (case / "load.json").exists() else {}
            d = a.user_router_delay or 0.0
            t0 = rec["t0_realtime_s"]
            t = fd.testbed_flows(case, a.duration, warm, tcp, peers.TCP_PORT, t0, delay_s=d)
            got = fd.read_log(case / "packets_rcv1.csv")
            got = got.assign(t_s=got["t_s"] - d)
            tr = fd.train_frac(got, peers.LINK_BPS, (t0 + warm, t0 + a.duration))
            drops = sum(int(x.get("drops") or 0) for k, x in rec.get("qdisc", {}).items() if k in ("pfifo", "user"))
            rows += [{"side": "testbed" if a.user_router_delay is None else f"user-router-{d:g}",
                      "scheme": name, "order": a.order, "seed": a.seed, **r,
                      "train_frac": tr, "pfifo_drops_run": drops, "share": rec["share"],
                      "load_1m": (load.get("after") or [float("nan")])[0]} for r in t.to_dict("records")]
        for hop in hops:
            if burst is None:  # serialising last hops
                cap = case / ("twin" if hop == 0.001 else f"twin-hop-{hop:g}")
            else:  # the testbed's token bucket (queue_occupancy.py reads these names)
                cap = case / ("twin-tbf" if hop == 0 else f"twin-tbf-hop-{hop:g}")
            tw = peers.twin(name, a.seed, a.duration, tcp, a.order, records_dir=cap, capture=True, hop_delay_s=hop,
                            tbf_burst=burst)
            sent, got = fd.read_pcap(cap / "twin_src.pcap"), fd.read_pcap(cap / "twin_rcv1.pcap")
            span = (peers.LEAD_S + warm, peers.LEAD_S + a.duration)
            rcv1_ip = "10.0.0.3"  # node 2 of the twin's ["src", "r1", "rcv1", "rcv2"] (castlab-py's pcap)
            # the up link's delay lies between src's capture and the queue
            t = fd.flow_table(sent, got, span, fd.twin_names(sent, tcp, rcv1_ip), hop_s=hop)
            tr = fd.train_frac(got, peers.LINK_BPS, span)
            rows += [{"side": "twin", "hop_s": hop, "tbf_burst": burst, "scheme": name, "order": a.order, "seed": a.seed, **r,
                      "train_frac": tr, "share": tw["share"]} for r in t.to_dict("records")]
    df = pd.DataFrame(rows)
    a.out.mkdir(parents=True, exist_ok=True)
    df.to_csv(a.out / "flows.csv", index=False)
    with pd.option_context("display.width", 250, "display.max_columns", 40):
        print(df.round(4).to_string(index=False))


class _SsPoller:
    """While open: ``ss -tin`` in src's namespace every `period` seconds and in rcv1's every
    SS_PERIOD_S, appended to the case's ``ss_src.txt`` and ``ss_rcv1.txt``, each snapshot under a
    ``# T`` line (T: this process's CLOCK_REALTIME, s); the kernel counters of both namespaces
    (``nstat -asz``: absolute, zeros too, the history file left alone) in
    ``nstat_NODE_before.txt`` on entry and ``nstat_NODE.txt`` at the end. Per socket, rcv1's
    ``segs_out`` over ``data_segs_in`` is its ACKs per data segment received (delayed ACKs: about
    1/2; one ACK per segment: 1)."""

    SS_PERIOD_S = 0.5

    def __init__(self, tb, case: Path, period: float = SS_PERIOD_S):
        import threading

        if not 0.01 <= period <= self.SS_PERIOD_S:
            raise ValueError(f"ss period: between 0.01 and {self.SS_PERIOD_S} s, not {period}")
        self.tb, self.case, self.period, self.stop = tb, case, period, threading.Event()
        self.thread = threading.Thread(target=self._run, daemon=True)

    def _run(self) -> None:
        import time

        files = {n: open(self.case / f"ss_{n}.txt", "a") for n in ("rcv1", "src")}
        every = {"src": 1, "rcv1": max(1, round(self.SS_PERIOD_S / self.period))}
        k = 0
        nxt = time.monotonic()
        try:
            while True:
                nxt += self.period
                if self.stop.wait(max(0.0, nxt - time.monotonic())):
                    break
                k += 1
                for n, f in files.items():
                    if k % every[n] == 0:
                        r = self.tb.run(n, ["ss", "-tin"], check=False, timeout=5.0)
                        f.write(f"# {time.time():.3f}\n{r.stdout}")
        finally:
            for f in files.values():
                f.close()

    def _nstat(self, suffix: str) -> None:
        for n in ("src", "rcv1"):
            r = self.tb.run(n, ["nstat", "-asz"], check=False, timeout=5.0)
            (self.case / f"nstat_{n}{suffix}.txt").write_text(r.stdout)

    def __enter__(self):
        self.case.mkdir(parents=True, exist_ok=True)
        self._nstat("_before")
        self.thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self.stop.set()
        self.thread.join(timeout=10.0)
        self._nstat("")


def sweep(out: Path, full: Path, hops: list[float], tcp: tuple[str, ...], burst) -> None:
    from castlab.experiments.tfmcc import peers

    tb = pd.concat([pd.read_csv(full / f"seed-{k}" / "peers.csv").assign(seed=k)
                    for k in range(1, peers.FULL_SEEDS + 1)])
    rows = []
    for name in [n for n, sc in peers.SCHEMES.items() if sc.twin is not None]:
        for order in peers.ORDERS:
            for seed in range(1, peers.FULL_SEEDS + 1):
                r = tb[(tb["scheme"] == name) & (tb["order"] == order) & (tb["seed"] == seed)].iloc[0]
                for hop in hops:
                    t = peers.twin(name, seed, peers.FULL_DURATION_S, tcp, order, hop_delay_s=hop, tbf_burst=burst)
                    rows.append({"scheme": name, "order": order, "seed": seed, "hop_s": hop, "tbf_burst": burst,
                                 "share": r["share"],
                                 "loss": r["loss"], "twin_share": t["share"], "twin_loss": t["loss"],
                                 "ratio": r["share"] / t["share"],
                                 **{f"twin_tcp_{k}_bps": v for k, v in t["tcp_means_bps"].items()}})
    df = pd.DataFrame(rows)
    out.mkdir(parents=True, exist_ok=True)
    df.to_csv(out / "twin_hops.csv", index=False)
    m = df.groupby(["scheme", "order", "hop_s"], sort=False).agg(
        share=("share", "mean"), twin_share=("twin_share", "mean"), ratio=("ratio", "mean"),
        ratio_lo=("ratio", "min"), ratio_hi=("ratio", "max"), loss=("loss", "mean"), twin_loss=("twin_loss", "mean"))
    m["within_1.5"] = (m["ratio"] >= 1 / peers.NET_VS_SIM) & (m["ratio"] <= peers.NET_VS_SIM)
    with pd.option_context("display.width", 200):
        print(m.round(3).to_string())
    print(f"rows within {peers.NET_VS_SIM:g} (mean ratio): " + ", ".join(
        f"hop {h:g} s: {int(g['within_1.5'].sum())}/{len(g)}" for h, g in m.groupby(level="hop_s")))


def _level_mean(path: Path) -> tuple[float, int]:
    """Time-weighted level over a levels.csv's rows (to its last change) and its changes."""
    import numpy as np

    d = pd.read_csv(path)
    if len(d) < 2:
        return (float(d["level"].iloc[0]) if len(d) else float("nan")), 0
    t, lv = d["time_s"].to_numpy(float), d["level"].to_numpy(float)
    return float(np.sum(lv[:-1] * np.diff(t)) / (t[-1] - t[0])), len(d) - 1


def _summary(name: str, d: Path, t0: float) -> dict:
    """One side's records of scheme `name` in case directory `d` (the testbed's, or its twin/);
    `t0`: the measurement's second 0 on the source's clock."""
    import json

    import numpy as np

    out: dict = {}
    if name.startswith("lesbcc"):
        st = json.loads((d / "source" / "lesbcc_stats.json").read_text())
        rtt = pd.read_csv(d / "source" / "lesbcc_rtt.csv")
        late = rtt[rtt["time_s"] >= t0 + 30.0]
        out.update(lis_per_pkt=st["lis"] / max(st["odata_sent"], 1), reductions=st["rate_reductions"],
                   increases=st["rate_increases"], srtt_med_s=float(late["srtt_s"].median()) if len(late) else np.nan,
                   sample_med_s=float(late["sample_s"].median()) if len(late) else np.nan)
    if name == "rlm":
        e = pd.read_csv(d / "rx_rcv1" / "rlm_exp.csv")
        out.update(experiments=len(e), succeeded=int((e["outcome"] == 1).sum()), failed=int((e["outcome"] == 2).sum()))
    if name in ("rlm", "rlc"):
        out["level_mean"], out["level_changes"] = _level_mean(d / "rx_rcv1" / "levels.csv")
    if name == "tfmcc":
        r = pd.read_csv(d / "source" / "tfmcc_rate.csv")
        early = r[(r["time_s"] >= 1.0) & (r["time_s"] <= 20.0)]
        out["rate_min_20s_bps"] = float(early["bps"].min()) if len(early) else np.nan
        fb = pd.read_csv(d / "source" / "tfmcc_fb.csv")
        fe = fb[fb["time_s"] <= 20.0]
        if len(fe):
            low = fe.loc[fe["rate_bps"].idxmin()]
            out.update(fb_min_bps=float(low["rate_bps"]), fb_min_p=float(low["loss_event_rate"]),
                       fb_min_rtt_s=float(low["rtt_s"]), fb_min_at_s=float(low["time_s"]))
    return out


def records(out: Path, copy: Path, tcp: tuple[str, ...]) -> None:
    import json

    from castlab.experiments.tfmcc import peers, twin_records

    rows = []
    for seed in range(1, peers.FULL_SEEDS + 1):
        where = copy / f"seed-{seed}"
        peers.refresh_twins(where, seed, peers.FULL_DURATION_S, tcp)
        for order in peers.ORDERS:
            for name in twin_records.ROLES:
                case = where / order / name
                if not (case / "case.json").exists():
                    continue
                rec = json.loads((case / "case.json").read_text())
                for side, d, t0 in (("testbed", case, float(rec["sender_clock_offset_s"])),
                                    ("twin", case / "twin", peers.LEAD_S)):
                    rows.append({"scheme": name, "order": order, "seed": seed, "side": side, **_summary(name, d, t0)})
    df = pd.DataFrame(rows)
    out.mkdir(parents=True, exist_ok=True)
    df.to_csv(out / "records.csv", index=False)
    with pd.option_context("display.width", 250, "display.max_columns", 40):
        for name, g in df.groupby("scheme", sort=False):
            print(g.dropna(axis=1, how="all").round(4).to_string(index=False))


if __name__ == "__main__":
    main()
