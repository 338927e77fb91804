"""One run of each LE-SBCC set-up (the Fig. 5 topology, Fig. 18's tree, §5.2.1's Linux network
simulated, the TFRC module on a lossy path): a pure function of its arguments, so the
experiments hand the runs to worker processes (``map_runs``).
"""

from __future__ import annotations

import time
from typing import Optional

import numpy as np
import pandas as pd

from castlab import Simulator
from castlab.experiments import streams
from castlab.experiments.common import map_runs
from castlab.experiments.runcache import cached
from castlab.experiments.lesbcc.metrics import step_mean, step_sample
from castlab.experiments.lesbcc.topology import (BUFFER_PKTS, FIG11, FIG18, FIG21, FIG5, PACKET_BYTES, RED,
                                                 SIM_RECEIVER, TCP_DELAYED_ACK, TCP_LIMITED_TRANSMIT, TCP_MSS,
                                                 TFRC_PATH)
from castlab.metrics import padhye_throughput, rate_series

# ------------------------------------------------------------------------------------------
# The Figure 5 topology
# ------------------------------------------------------------------------------------------

def fig5_run(seed: int, duration: float, *, tcp: str = "none", queue: str = "droptail",
             buffers: tuple = (BUFFER_PKTS,) * 4, aggregation: bool = False, policy: str = "aimd",
             main_kw: Optional[dict] = None, warmup: float = 0.0, tcp_rwnd_bytes: Optional[int] = None,
             rx_kw: Optional[dict] = None, unicast_kw: Optional[dict] = None, topo: Optional[dict] = None) -> dict:
    """One run of the Figure 5 scenario. ``tcp``: "none" (all unicast flows LE-SBCC), "one"
    (one flow of set 4 is TCP Reno, Fig. 13(a)) or "all" (all 16 are TCP Reno, Fig. 13(b)).
    ``aggregation`` attaches NAK aggregation to Router 2 (where the receivers' branches meet).
    Returns the measured rates, counters and series."""
    f = {**FIG5, **(topo or {})}
    sim = Simulator(seed=seed)
    rng = streams.rng(seed, "lesbcc-fig5")
    for n in ["main", "r1", "r2"] + [f"rcv{k}" for k in range(1, 5)]:
        sim.add_node(n)
    sim.add_link("main", "r1", f["access_bps"], f["access_delay_s"], queue_limit_pkts=f["buffer_pkts"])
    sim.add_link("r1", "r2", f["core_bps"], f["core_delay_s"], queue_limit_pkts=f["buffer_pkts"])
    for k in range(1, 5):
        qkw = {"queue": "red", **RED} if queue == "red" else {"queue": "droptail"}
        sim.add_link("r2", f"rcv{k}", f["bottleneck_bps"], f["bottleneck_delay_s"], queue_limit_pkts=buffers[k - 1],
                     **qkw)
    g = sim.add_group("main")
    rkw = {**SIM_RECEIVER, **(rx_kw or {})}
    rx = [sim.add_pgm_receiver(f"rcv{k}", group=g, flow=0, **rkw) for k in range(1, 5)]
    flows = []  # (set k, kind, agent)
    for k in range(1, 5):
        for j in range(4):
            s = f"u{k}_{j}"
            sim.add_node(s)
            sim.add_link(s, "r1", f["access_bps"], f["access_delay_s"], queue_limit_pkts=f["buffer_pkts"])
            start = float(rng.uniform(0, f["start_window_s"]))
            is_tcp = tcp == "all" or (tcp == "one" and k == 4 and j == 0)
            if is_tcp:
                rwnd = {} if tcp_rwnd_bytes is None else {"rwnd_bytes": tcp_rwnd_bytes}
                a = sim.add_tcp_flow(s, f"rcv{k}", variant="reno", mss_bytes=TCP_MSS, start=start,
                                     limited_transmit=TCP_LIMITED_TRANSMIT, delayed_ack=TCP_DELAYED_ACK, **rwnd)
                flows.append((k, "tcp", a))
            else:
                a = sim.add_lesbcc_unicast(s, f"rcv{k}", start=start, policy="aimd", **rkw, **(unicast_kw or {}))
                flows.append((k, "lesbcc", a))
    main = sim.add_lesbcc_source("main", g, flow=0, start=float(rng.uniform(0, f["start_window_s"])), policy=policy,
                                 **(main_kw or {}))
    if aggregation:
        sim.attach_nak_aggregator("r2")
    t = time.perf_counter()
    sim.run(duration)
    wall = time.perf_counter() - t

    st = sim.lesbcc_stats(main)
    tr = sim.lesbcc_trace(main)
    out = {"seed": seed, "wall_s": wall, "events": sim.engine_stats()["events"], "main_stats": st, "main_trace": tr}
    out["main_mean_bps"] = step_mean(tr["rate_time_ns"], tr["rate_bps"], warmup, duration)
    out["main_sent_bps"] = st["bytes_sent"] * 8 / duration
    # per-receiver LE counts of the main source (LIs that passed LI2LE: outcome >= 1)
    names = st["receivers"]
    les = np.zeros(4, dtype=int)
    lis = np.zeros(4, dtype=int)
    for idx, name in enumerate(names):
        k = int(name[3:]) - 1
        m = tr["li_receiver"] == idx
        lis[k] = int(m.sum())
        les[k] = int((tr["li_outcome"][m] >= 1).sum())
    out["lis_per_receiver"] = lis
    out["les_per_receiver"] = les
    out["main_srtt_mean"] = float(np.mean(tr["srtt_s"])) if tr["srtt_s"].size else float(st["srtt"])
    out["main_srtt_series"] = (tr["rtt_time_ns"] / 1e9, tr["srtt_s"])
    rows = []
    series = {}
    bins = np.arange(0.0, duration, 2.0)
    for k, kind, a in flows:
        if kind == "tcp":
            ttr = sim.tcp_trace(a)
            ts = sim.tcp_stats(a)
            keep = ttr["ack_time_ns"] >= warmup * 1e9
            acked = ttr["acked_bytes"]
            base = float(acked[~keep][-1]) if (~keep).any() else 0.0
            tot = float(acked[-1]) if acked.size else 0.0
            mean = (tot - base) * 8 / (duration - warmup)
            t_s, r_bps = rate_series(ttr["ack_time_ns"], ttr["acked_bytes"], 2.0, t_end_s=duration)
            series[a] = (t_s, r_bps)
            rows.append({"agent": a, "set": k, "kind": kind, "mean_bps": mean, "rate_reductions":
                         ts["fast_retransmits"] + ts["timeouts"], "timeouts": ts["timeouts"],
                         "srtt": ts["srtt"] or float("nan")})
        else:
            us = sim.lesbcc_stats(a)
            utr = sim.lesbcc_trace(a)
            mean = step_mean(utr["rate_time_ns"], utr["rate_bps"], warmup, duration)
            series[a] = (bins, step_sample(utr["rate_time_ns"], utr["rate_bps"], bins))
            rows.append({"agent": a, "set": k, "kind": kind, "mean_bps": mean, "rate_reductions": us["rate_reductions"],
                         "timeouts": 0, "srtt": us["srtt"], "lis": us["lis"], "les": us["les"]})
    out["flows"] = pd.DataFrame(rows)
    out["series"] = series
    out["main_series"] = (bins, step_sample(tr["rate_time_ns"], tr["rate_bps"], bins))
    out["receivers_complete"] = [sim.pgm_receiver_stats(r)["unrecoverable"] == 0 for r in rx]
    out["duration"] = duration
    if aggregation:
        out["aggregator"] = sim.nak_aggregator_stats("r2")
    return out


def fig5_at(kw: dict, seed: int) -> dict:
    """fig5_run(seed, **kw), for map_runs (the keywords travel as one picklable dict), through the
    run cache: fig7, fig14 and fig20 repeat runs of fig6 and fig13 (castlab.experiments.runcache)."""
    return cached(fig5_run, seed, **kw)


def runs_at(grid: dict, seeds: list, **kw) -> dict:
    """Every reading's runs of one case of the Fig. 5 scenario, reading -> [run per seed]. ``grid``:
    reading -> fig5_run keywords of that reading (``topo``, and ``main_kw`` / ``unicast_kw`` for a
    reading of the source, merged under the case's own). All (reading, seed) runs go through
    map_runs in one call, so `--jobs N` spreads them all."""
    calls = [(merge_reading(kw, at), s) for at in grid.values() for s in seeds]
    runs = map_runs(fig5_at, calls)
    n = len(seeds)
    return {name: runs[i * n:(i + 1) * n] for i, name in enumerate(grid)}


def merge_reading(case: dict, reading: dict) -> dict:
    """A case's fig5_run keywords with a reading's: ``topo`` from the reading, ``main_kw`` and
    ``unicast_kw`` the union (the case's keys win); an empty dict stays absent, so a run keeps one
    run-cache key however it was asked for."""
    out = {**case, "topo": reading.get("topo", {})}
    for k in ("main_kw", "unicast_kw"):
        merged = {**(reading.get(k) or {}), **(case.get(k) or {})}
        if merged:
            out[k] = merged
        else:
            out.pop(k, None)
    return out


# fig12-sim's run ends when every receiver holds all the packets; it is run in steps of this
# many simulated seconds (the result does not depend on the slicing) up to the cap.
FIG12_STEP_S = 20.0
FIG12_CAP_S = 4000.0


def fig12_run(seed: int, receivers: int, worst_loss: float, li2le_reading: str = "window",
              packets: int = FIG11["packets"], counts: bool = False) -> dict:
    """Fig. 11's star (§3.1.4) at packet level: the LE-SBCC source and ``receivers`` PGM
    receivers on one router, each on its own link; receiver 0 loses ``worst_loss`` of the
    packets, the others FIG11's 2 %, Bernoulli on the link towards the receiver. The receivers
    are the §3 simulations' (:data:`SIM_RECEIVER`: every loss NAKed at once, no suppression: no
    LI aggregation). The source sends ``packets`` ODATA; the run ends when every receiver holds
    all of them (or at FIG12_CAP_S). Returns the cascade's counts (LEs passed by Max-LPRF, the
    worst receiver's LIs and LEs), the transport's (RDATA, NCFs, NAK repeats), all up to the
    moment the last receiver completed, and the cost (events, wall and CPU time of the run).
    The run's values do not depend on FIG12_STEP_S; the cost's do. ``counts`` adds
    ``by_kind``: the packets and engine events of each PGM kind over the whole run
    (:func:`fig12_counts_by_kind`)."""
    f = FIG11
    sim = Simulator(seed=seed)
    sim.add_node("src")
    sim.add_node("r")
    # The NAKs of one loss meet at the router's port towards the source (up to one per receiver)
    # and their NCFs leave the source back to back: those two queues hold a NAK and an NCF per
    # receiver. Towards a receiver the NCFs arrive at the rate they leave, and a receiver sends
    # a burst's NAKs only: 1000, as fig19's. (A queue grows to its high-water mark.)
    qlim = 2 * receivers + 1000
    sim.add_link("src", "r", f["link_bps"], f["src_delay_s"], queue_limit_pkts=qlim)
    g = sim.add_group("src")
    # A receive window of the transfer's length: it gives up nothing, as the default's 16,384
    # would not (a receiver's memory is that of the packets missing in its window, whatever
    # the window's length).
    rkw = {"receive_window_pkts": packets}
    rx = []
    for i in range(receivers):
        h = f"h{i}"
        sim.add_node(h)
        sim.add_link("r", h, f["link_bps"], f["leaf_delay_s"], queue_limit_pkts=1000,
                     loss_ab=worst_loss if i == 0 else f["others_loss"])
        rx.append(sim.add_pgm_receiver(h, group=g, flow=0, **SIM_RECEIVER, **rkw))
    src = sim.add_lesbcc_source("src", g, flow=0, start=f["start_s"], total_packets=packets,
                                li2le_reading=li2le_reading)
    wall0, cpu0 = time.perf_counter(), time.process_time()
    t = 0.0
    done = False
    while t < FIG12_CAP_S and not done:
        t = min(t + FIG12_STEP_S, FIG12_CAP_S)
        sim.run(t)
        done = sim.lesbcc_stats(src)["odata_sent"] >= packets and all(
            sim.pgm_receiver_stats(r)["complete"] for r in rx)
    wall, cpu = time.perf_counter() - wall0, time.process_time() - cpu0
    st = sim.lesbcc_stats(src)
    tr = sim.lesbcc_trace(src)
    idx = st["receivers"].index("h0") if "h0" in st["receivers"] else -1
    mine = tr["li_receiver"] == idx
    wst = sim.pgm_receiver_stats(rx[0])
    drops = sum(int(c["drops_forced"]) + int(c["drops_early"])
                for c in (sim.channel_stats(ch) for ch in range(2 * (receivers + 1))))
    end = max((sim.pgm_receiver_stats(r)["complete_at"] or 0.0) for r in rx)
    upto = tr["rate_time_ns"] <= end * 1e9
    return {"seed": seed, "li2le_reading": li2le_reading, "worst_loss": worst_loss, "receivers": receivers,
            "lis": st["lis"], "les": st["les"], "les_passed": st["lprf_passed"],
            "rate_reductions": st["rate_reductions"], "worst_lis": int(mine.sum()),
            "worst_les": int((tr["li_outcome"][mine] >= 1).sum()), "worst_naks": wst["naks_sent"],
            "worst_gaps": wst["gaps"], "odata": st["odata_sent"], "rdata": st["rdata_sent"], "ncf": st["ncf_sent"],
            "rtt_samples": st["rtt_samples"], "rtt_ambiguous": st["rtt_ambiguous"],
            "srtt_mean_s": float(np.mean(tr["srtt_s"])) if tr["srtt_s"].size else float(st["srtt"]),
            "sigma_mean_s": float(np.mean(tr["sigma_s"])) if tr["sigma_s"].size else float(st["sigma"]),
            "rtt_sample_median_s": float(np.median(tr["rtt_sample_s"])) if tr["rtt_sample_s"].size
            else float("nan"),
            "mean_rate_bps": step_mean(tr["rate_time_ns"][upto], tr["rate_bps"][upto], f["start_s"], end)
            if end > f["start_s"] else float("nan"),
            "duration_s": end - f["start_s"], "queue_drops": drops, "complete": done,
            # the cost: the run goes on to the end of the step in which it completed (the rate
            # keeps rising in the idle tail), so these depend on the step; nothing above does
            "events": sim.engine_stats()["events"], "wall_s": wall, "cpu_s": cpu,
            **({"by_kind": fig12_counts_by_kind(sim, st, rx)} if counts else {})}


def fig12_counts_by_kind(sim: Simulator, st: dict, rx: list) -> dict:
    """Where a fig12 run's work goes, by PGM packet kind, over the whole run: each kind's
    packets sent (by the source; NAKs by the receivers), delivered to receivers (NAKs: to the
    source, one LI each) and engine events. Fig. 11's star has no loss on the source's link nor
    towards the source, so a source packet costs two events on its way to the router (end of
    serialisation, arrival), then one per receiver link (serialisation) and one per copy that
    survives the link's loss (arrival: a delivery); a NAK costs four (two links up). The rest
    of the events are the agents' timers and the joins (``other``); a run with a queue drop
    breaks the arithmetic, and ``other`` then says so by going negative."""
    n = len(rx)
    per = [sim.pgm_receiver_stats(r) for r in rx]
    out = {}
    for kind in ("odata", "rdata", "ncf", "spm"):
        sent = int(st[f"{kind}_sent"])
        got = sum(int(p[kind]) for p in per)
        out[kind] = {"sent": sent, "delivered": got, "events": 2 * sent + n * sent + got}
    naks = sum(int(p["naks_sent"]) for p in per)
    out["nak"] = {"sent": naks, "delivered": int(st["lis"]), "events": 4 * naks}
    total = int(sim.engine_stats()["events"])
    out["other"] = {"events": total - sum(v["events"] for v in out.values())}
    out["total_events"] = total
    return out


AGG_MODES = {"none": [], "partial": ["r2", "r3"], "complete": ["r1", "r2", "r3"]}


def fig19_run(seed: int, total: int, split: tuple, mode: str, rx_kw: Optional[dict] = None,
              li2le_reading: str = "window") -> dict:
    """Fig. 18: source – Router 1 – {Router 2, Router 3} – receivers; x % of the receivers (the
    4 % one among them, on a longer link) under Router 2, the rest under Router 3; every other
    receiver at 2 %. Losses are Bernoulli on the receiver links (downstream). Links are fast
    (100 Mb/s) so that the only losses are these: "6000 packets ... expectation of 240 LEs"."""
    f = FIG18
    sim = Simulator(seed=seed)
    for n in ("src", "r1", "r2", "r3"):
        sim.add_node(n)
    sim.add_link("src", "r1", f["link_bps"], f["src_delay_s"], queue_limit_pkts=1000)
    sim.add_link("r1", "r2", f["link_bps"], f["core_delay_s"], queue_limit_pkts=1000)
    sim.add_link("r1", "r3", f["link_bps"], f["core_delay_s"], queue_limit_pkts=1000)
    g = sim.add_group("src")
    n2 = max(1, int(round(total * split[0] / 100)))
    rx = []
    for i in range(total):
        parent = "r2" if i < n2 else "r3"
        h = f"h{i}"
        sim.add_node(h)
        worst = i == 0
        sim.add_link(parent, h, f["link_bps"], f["worst_leaf_delay_s"] if worst else f["leaf_delay_s"],
                     queue_limit_pkts=1000, loss_ab=f["worst_loss"] if worst else f["other_loss"])
        rx.append(sim.add_pgm_receiver(h, group=g, flow=0, **{**SIM_RECEIVER, **(rx_kw or {})}))
    for r in AGG_MODES[mode]:
        sim.attach_nak_aggregator(r)
    src = sim.add_lesbcc_source("src", g, flow=0, total_packets=f["packets"], li2le_reading=li2le_reading)
    # long enough for 6000 packets at the rates LE-SBCC reaches here, and the last repairs
    sim.run(600.0)
    st = sim.lesbcc_stats(src)
    tr = sim.lesbcc_trace(src)
    idx = st["receivers"].index("h0") if "h0" in st["receivers"] else -1
    worst_lis = int((tr["li_receiver"] == idx).sum()) if idx >= 0 else 0
    wst = sim.pgm_receiver_stats(rx[0])
    return {"seed": seed, "li2le_reading": li2le_reading, "receivers": total, "split": f"({split[0]},{split[1]})",
            "mode": mode,
            "les_passed": st["lprf_passed"], "les": st["les"], "lis": st["lis"], "worst_lis": worst_lis,
            "worst_naks": wst["naks_sent"], "worst_gaps": wst["gaps"],
            "odata": st["odata_sent"], "rate_reductions": st["rate_reductions"],
            "complete": all(sim.pgm_receiver_stats(r)["complete"] for r in rx)}
FIG21_WINDOW_S = 10.0  # the drop-to-zero windows of net-lesbcc-fig21


def fig21_run(seed: int, duration: float, rx_kw: Optional[dict] = None, topo: Optional[dict] = None,
              main_kw: Optional[dict] = None) -> dict:
    f = {**FIG21, **(topo or {})}
    sim = Simulator(seed=seed)
    rng = streams.rng(seed, "lesbcc-fig21")
    for n in ["src", "r1", "r2"] + [f"rcv{k}" for k in range(1, f["hosts"] + 1)]:
        sim.add_node(n)
    sim.add_link("src", "r1", f["lan_bps"], f["lan_delay_s"], queue_limit_pkts=1000)
    sim.add_link("r1", "r2", f["bottleneck_bps"], f["one_way_delay_s"], queue_limit_pkts=f["queue_pkts"])
    for k in range(1, f["hosts"] + 1):
        sim.add_link("r2", f"rcv{k}", f["lan_bps"], f["lan_delay_s"], queue_limit_pkts=1000)
    g = sim.add_group("src")
    rx = [sim.add_pgm_receiver(f"rcv{k}", group=g, flow=0, **(rx_kw or {})) for k in range(1, f["hosts"] + 1)]
    tcps = []
    for k in range(1, f["hosts"] + 1):
        for j in range(f["tcp_per_host"]):
            tcps.append(sim.add_tcp_flow("src", f"rcv{k}", variant=f["tcp_variant"], mss_bytes=f["tcp_mss_bytes"],
                                         delayed_ack=f["tcp_delayed_ack"],
                                         start=float(rng.uniform(0, f["start_window_s"]))))
    src = sim.add_lesbcc_source("src", g, flow=0, start=float(rng.uniform(0, f["start_window_s"])), policy="aimd",
                                **(main_kw or {}))
    t0 = time.perf_counter()
    sim.run(duration)
    wall = time.perf_counter() - t0
    warm = min(f["warmup_s"], duration / 3)
    tr = sim.lesbcc_trace(src)
    st = sim.lesbcc_stats(src)
    mc_mean = step_mean(tr["rate_time_ns"], tr["rate_bps"], warm, duration)
    bins = np.arange(0.0, duration, 1.0)
    mc_rate = step_sample(tr["rate_time_ns"], tr["rate_bps"], bins)
    good, curves = [], []
    for a in tcps:
        ttr = sim.tcp_trace(a)
        acked = ttr["acked_bytes"]
        keep = ttr["ack_time_ns"] >= warm * 1e9
        base = float(acked[~keep][-1]) if (~keep).any() else 0.0
        tot = float(acked[-1]) if acked.size else 0.0
        good.append((tot - base) * 8 / (duration - warm))
        curves.append(rate_series(ttr["ack_time_ns"], ttr["acked_bytes"], 1.0, t_end_s=duration))
    tcp_mean = float(np.mean(good))
    fair = f["bottleneck_bps"] / (len(tcps) + 1)
    starts = np.arange(warm, duration - FIG21_WINDOW_S + 1e-9, FIG21_WINDOW_S)
    windows = [float(np.nanmean(mc_rate[(bins >= a) & (bins < a + FIG21_WINDOW_S)])) for a in starts]
    # RTT samples against the gap between two packets at the rate of the moment: an LI leaves a
    # receiver only when a later packet shows the gap, so a sample carries that spacing
    ts = tr["rtt_time_ns"] / 1e9
    gap = (main_kw or {}).get("packet_bytes", PACKET_BYTES) * 8 / step_sample(tr["rate_time_ns"], tr["rate_bps"], ts)
    path_max = 2 * (f["one_way_delay_s"] + 2 * f["lan_delay_s"]) + f["queue_pkts"] * (f["tcp_mss_bytes"] + 40) * 8 / \
        f["bottleneck_bps"]
    return {"rtt_sample_median_s": float(np.median(tr["rtt_sample_s"])) if ts.size else float("nan"),
            "packet_gap_median_s": float(np.nanmedian(gap)) if ts.size else float("nan"), "path_rtt_max_s": path_max,
            "rtt_samples": pd.DataFrame({"time_s": ts, "rtt_sample_s": tr["rtt_sample_s"], "packet_gap_s": gap}),"seed": seed, "wall_s": wall, "mc_mean_bps": mc_mean, "tcp_mean_bps": tcp_mean, "tcp_goodputs_bps": good,
            "ratio": mc_mean / tcp_mean if tcp_mean > 0 else float("nan"), "fair_bps": fair,
            "min_window_over_fair": (min(windows) / fair) if windows else float("nan"), "bins": bins,
            "mc_rate": mc_rate, "tcp_curves": curves, "stats": st,
            "receivers_complete": [sim.pgm_receiver_stats(r)["unrecoverable"] == 0 for r in rx],
            "srtt_mean": float(np.mean(tr["srtt_s"])) if tr["srtt_s"].size else float(st["srtt"])}


def tfrc_path_run(seed: int, p: float, duration: float) -> dict:
    f = TFRC_PATH
    sim = Simulator(seed=seed)
    for n in ("s", "r", "d"):
        sim.add_node(n)
    sim.add_link("s", "r", f["link_bps"], f["link_delay_s"], queue_limit_pkts=1000)
    sim.add_link("r", "d", f["link_bps"], f["link_delay_s"], queue_limit_pkts=1000, loss_ab=p)
    g = sim.add_group("s")
    sim.add_pgm_receiver("d", group=g, flow=0, **SIM_RECEIVER)
    src = sim.add_lesbcc_source("s", g, flow=0, policy="tfrc")
    sim.run(duration)
    st = sim.lesbcc_stats(src)
    tr = sim.lesbcc_trace(src)
    warm = f["warmup_s"]
    rate = step_mean(tr["rate_time_ns"], tr["rate_bps"], warm, duration)
    t = tr["rtt_time_ns"] / 1e9
    keep = t >= warm
    srtt = float(np.mean(tr["srtt_s"][keep])) if keep.any() else float(st["srtt"])
    sigma = float(np.mean(tr["sigma_s"][keep])) if keep.any() and "sigma_s" in tr else float(st["sigma"])
    packets = st["odata_sent"] + st["rdata_sent"]
    p_le = st["rate_reductions"] / max(packets, 1)
    eq = float(padhye_throughput(PACKET_BYTES, srtt, p_le, srtt + 4 * sigma)) * 8 if p_le > 0 else float("nan")
    return {"p": p, "seed": seed, "rate_bps": rate, "srtt_s": srtt, "sigma_s": sigma, "packets": packets,
            "lis": st["lis"], "les": st["rate_reductions"], "p_le": p_le, "padhye_bps": eq, "ratio": rate / eq}
