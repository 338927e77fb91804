"""One run of each of the paper's scenarios (A-(i), A-(ii), B-(i) .. B-(iv), the real-mode file),
with Rainbow and, where the paper compares, RLC or TCP beside it: a pure function of its
arguments, so the experiments hand them to worker processes.
"""

from __future__ import annotations

from typing import Optional

import numpy as np

from castlab._native import config_defaults
from castlab.experiments import streams
from castlab.experiments.rainbow.metrics import (OVERHEAD_WINDOW_S, avg_rate_kbps, eq1_overhead, level_time_fractions,
                                                 packets_between, received_in, red_loss, shared_while_others_active,
                                                 stable_window)
from castlab.experiments.rainbow.topology import (LINKS_A1, LINKS_B1, LINKS_B2, LINKS_T1, LINKS_TCP, NEEDED, Net,
                                                  PACKET_BYTES, START_RANGE_S, TCP_LIMITED_TRANSMIT, TCP_MIN_RTO_S,
                                                  TCP_MSS)
from castlab.metrics import jain_index
from castlab.simulator import default_phase_overhead


def a1_run(seed: int, rainbow_kw: Optional[dict] = None, duration: float = 200.0,
           links: Optional[dict] = None) -> tuple[dict, list[dict]]:
    L = {**LINKS_A1, **(links or {})}
    net = Net(seed, rainbow_kw)
    src_ch, _ = net.link("S", "G0", L["source_bps"], L["source_delay_s"])
    up, _ = net.link("G0", "G1", L["uplink_bps"], L["uplink_delay_s"])
    net.link("G1", "R1", L["slow_bps"], L["slow_delay_s"])
    for k, d in enumerate(L["fast_delays_s"]):
        net.link("G1", f"R{k + 2}", L["fast_bps"], d)
    net.finish_build()
    net.sim.monitor_channel(src_ch, 0.1)
    net.sim.monitor_channel(up, 0.1)
    src = net.source("S")
    for k in range(1, 6):
        net.receiver(f"R{k}", src, "slow" if k == 1 else "fast")
    net.sim.run(duration)
    recs = net.records()
    w0, w1 = OVERHEAD_WINDOW_S
    # §IV-A.3: "four times of the packet number sent from the source over the total packet number
    # received by the four faster receivers": every reply the source sent in the window (the
    # source's own link only carries replies), the ones the up-link then dropped included
    ps = packets_between(net.sim.channel_series(src_ch), w0, w1, with_drops=True)
    ps_uplink = packets_between(net.sim.channel_series(up), w0, w1)
    fast = [r for r in recs if r["label"] == "fast"]
    all_active = all(r["start_s"] <= w0 and r["done"] and r["done_s"] >= w1 for r in recs)
    shared, active = shared_while_others_active(recs, 0)
    row = {
        "seed": seed,
        "slow_kbps": avg_rate_kbps(recs[0]),
        "fast_kbps": float(np.mean([avg_rate_kbps(r) for r in fast])),
        "overhead": eq1_overhead(4, ps, fast, w0, w1),
        "overhead_uplink": eq1_overhead(4, ps_uplink, fast, w0, w1),
        **{f"{r['node']}_kbps": avg_rate_kbps(r) for r in recs},
        "all_active_in_window": all_active,
        "slow_shared": shared,
        "slow_received_while_others_active": active,
        "source_sent": net.sim.fountain_stats(src)["sent"],
        "uplink_drops": net.sim.channel_stats(up)["drops_forced"] + net.sim.channel_stats(up)["drops_early"],
        "loss_events_mean": float(np.mean([r["loss_events"] for r in recs])),
        "all_done": all(r["done"] for r in recs),
    }
    return row, recs


def t1_run(seed: int, l1_bps: float, duration: float = 300.0, rainbow_kw: Optional[dict] = None) -> dict:
    L = LINKS_T1
    net = Net(seed, rainbow_kw)
    net.link("S", "G0", L["source_bps"], L["source_delay_s"])
    l1, _ = net.link("G0", "G1", l1_bps, L["l1_delay_s"])
    for c in (1, 2):
        net.link("G1", f"C{c}", L["cluster_bps"], L["cluster_delay_s"])
        for k, d in enumerate(L["access_delays_s"]):
            net.link(f"C{c}", f"C{c}R{k}", L["access_bps"], d)
    net.finish_build()
    src = net.source("S")
    for c in (1, 2):
        for k in range(5):
            net.receiver(f"C{c}R{k}", src, f"C{c}")
    net.sim.run(duration)
    recs = net.records()
    return {"seed": seed, "l1_bps": l1_bps,
            "c1_kbps": float(np.mean([avg_rate_kbps(r) for r in recs if r["label"] == "C1"])),
            "c2_kbps": float(np.mean([avg_rate_kbps(r) for r in recs if r["label"] == "C2"])),
            "packets_sent": net.sim.fountain_stats(src)["sent"], "all_done": all(r["done"] for r in recs),
            "l1_drops": net.sim.channel_stats(l1)["drops_forced"] + net.sim.channel_stats(l1)["drops_early"],
            "loss_events_mean": float(np.mean([r["loss_events"] for r in recs])),
            "losses_order_mean": float(np.mean([r["losses_order"] for r in recs])),
            "losses_timeout_mean": float(np.mean([r["losses_timeout"] for r in recs]))}


def b1_run(seed: int, n_rx: int, duration: float = 400.0, queue: Optional[dict] = None,
           rainbow_kw: Optional[dict] = None) -> dict:
    L = LINKS_B1
    net = Net(seed, rainbow_kw, queue=queue)
    net.link("S", "G0", L["source_bps"], L["source_delay_s"])
    shared, _ = net.link("G0", "G1", L["shared_bps"], L["shared_delay_s"])
    for k in range(n_rx):
        net.link("G1", f"R{k}", L["down_bps"], L["down_delay_s"])
    net.finish_build()
    net.sim.monitor_channel(shared, 0.1)
    src = net.source("S")
    for k in range(n_rx):
        net.receiver(f"R{k}", src, "rx")
    net.sim.run(duration)
    recs = net.records()
    w0, w1 = stable_window(recs)
    series = net.sim.channel_series(shared)
    ps = packets_between(series, w0, w1) if w1 > w0 else float("nan")
    ps_all = net.sim.channel_stats(shared)["departures"]
    pr_all = sum(r["received"] for r in recs)
    return {"seed": seed, "n": n_rx, "window_s": max(w1 - w0, 0.0),
            "overhead": eq1_overhead(n_rx, ps, recs, w0, w1) if w1 > w0 else float("nan"),
            "loss_window": (1 - ps / packets_between(series, w0, w1, with_drops=True)) if w1 > w0 else float("nan"),
            "overhead_whole_run": n_rx * ps_all / pr_all - 1, "ps_all": ps_all, "pr_all": pr_all,
            "all_done": all(r["done"] for r in recs),
            "rate_kbps": float(np.mean([avg_rate_kbps(r) for r in recs])),
            "loss_events_mean": float(np.mean([r["loss_events"] for r in recs])),
            "losses_order_mean": float(np.mean([r["losses_order"] for r in recs])),
            "losses_timeout_mean": float(np.mean([r["losses_timeout"] for r in recs]))}


# RLC in B-(i): RLC never completes, so its eq. 1 runs over a window every receiver spends
# receiving after its first climb (ours: [20 s, 200 s]; the climb to the 256 kb/s level that fits
# 500 kb/s takes 1 + 2 + 4 + 8 s of SP waits from a start in [0, 5] s).
RLC_B1_WINDOW_S = (20.0, 200.0)


def b1_rlc_run(seed: int, n_rx: int, rlc_kw: Optional[dict] = None) -> dict:
    """One RLC session (sender at S from 0 s, N receivers starting in [0, 5] s) on B-(i)'s
    topology and seed. Eq. 1 over `RLC_B1_WINDOW_S`, with ps read two ways: packets that crossed
    the shared link (`overhead`, as Rainbow's) and packets offered to it, its drops included
    (`overhead_offered`); `loss` is the shared link's drop fraction in the window."""
    L = LINKS_B1
    kw = rlc_kw or {}
    net = Net(seed)
    net.link("S", "G0", L["source_bps"], L["source_delay_s"])
    shared, _ = net.link("G0", "G1", L["shared_bps"], L["shared_delay_s"])
    for k in range(n_rx):
        net.link("G1", f"R{k}", L["down_bps"], L["down_delay_s"])
    net.finish_build()
    groups = net.rlc_session("S", **kw)
    rx = [net.rlc_receiver(f"R{k}", groups, **kw) for k in range(n_rx)]
    pkt = int(kw.get("packet_size", config_defaults("rlc")["packet_size"]))

    def snap():
        st = net.sim.channel_stats(shared)
        return (st["departures"], st["drops_forced"] + st["drops_early"],
                [net.sim.rlc_records(a)["bytes"] / pkt for a in rx])

    w0, w1 = RLC_B1_WINDOW_S
    net.sim.run(w0)
    d0, x0, p0 = snap()
    net.sim.run(w1)
    d1, x1, p1 = snap()
    dep, drops = d1 - d0, x1 - x0
    pr = sum(b - a for a, b in zip(p0, p1))
    levels = [net.sim.rlc_records(a)["level"] for a in rx]
    return {"seed": seed, "n": n_rx, "overhead": n_rx * dep / pr - 1, "overhead_offered": n_rx * (dep + drops) / pr - 1,
            "loss": drops / (dep + drops) if dep + drops else float("nan"),
            "same_level_at_end": len({lv[-1] for lv in levels}) == 1,
            "pr_spread": max(b - a for a, b in zip(p0, p1)) - min(b - a for a, b in zip(p0, p1)),
            "rate_kbps": pr * pkt * 8 / n_rx / (w1 - w0) / 1e3}


def b2_run(seed: int, alpha: float, duration: float = 400.0, rainbow_kw: Optional[dict] = None) -> list[dict]:
    L = LINKS_B2
    net = Net(seed, rainbow_kw)
    net.link("S", "G", L["source_bps"], L["source_delay_s"])
    bws, chans = {}, {}
    for nn in range(-6, 7):
        bws[nn] = 2 ** (alpha * nn) * L["r0_bps"]  # §IV-B.2: r_n = 2^(αn) r_0
        chans[nn], _ = net.link("G", f"R{nn}", bws[nn], L["down_delay_s"])
    net.finish_build()
    src = net.source("S")
    for nn in range(-6, 7):
        net.receiver(f"R{nn}", src, str(nn))
    net.sim.run(duration)
    # a receiver's down-link carries nothing after it is done: the whole run's loss is its session's
    return [{"seed": seed, "alpha": alpha, "n": int(r["label"]), "link_bps": bws[int(r["label"])],
             "utilisation": avg_rate_kbps(r) * 1e3 / bws[int(r["label"])], "done": r["done"],
             "loss": red_loss(net.sim.channel_stats(chans[int(r["label"])]))} for r in net.records()]


RLC_B2_SLICE_S = 0.5  # ours: how often an RLC run is sampled to find when a receiver has 2,000 packets


def b2_rlc_run(seed: int, alpha: float, duration: float = 600.0, rlc_kw: Optional[dict] = None) -> list[dict]:
    """B-(ii) with one RLC session (`config_defaults("rlc")`, sender from 0 s) on the same links
    and seed. As for Rainbow (eq. 2), a receiver's utilisation is 2,000 packets over the time it
    took to receive them since its start, over its link's bandwidth (linear between samples every
    `RLC_B2_SLICE_S`); its loss is its down-link's drop fraction over the same time. A receiver
    without 2,000 packets by `duration` has NaN."""
    L = LINKS_B2
    kw = rlc_kw or {}
    net = Net(seed)
    net.link("S", "G", L["source_bps"], L["source_delay_s"])
    bws, chans = {}, {}
    for nn in range(-6, 7):
        bws[nn] = 2 ** (alpha * nn) * L["r0_bps"]
        chans[nn], _ = net.link("G", f"R{nn}", bws[nn], L["down_delay_s"])
    net.finish_build()
    groups = net.rlc_session("S", **kw)
    starts = {nn: float(net.rng.uniform(*START_RANGE_S)) for nn in range(-6, 7)}
    rx = {nn: net.rlc_receiver(f"R{nn}", groups, start=starts[nn], **kw) for nn in range(-6, 7)}
    pkt = int(kw.get("packet_size", config_defaults("rlc")["packet_size"]))
    prev = {nn: (0.0, 0.0) for nn in rx}  # (time, packets) at the last sample
    done: dict[int, dict] = {}
    t = 0.0
    while len(done) < len(rx) and t < duration:
        t = min(t + RLC_B2_SLICE_S, duration)
        net.sim.run(t)
        for nn, a in rx.items():
            if nn in done:
                continue
            got = net.sim.rlc_records(a)["bytes"] / pkt
            if got >= NEEDED:
                t_prev, g_prev = prev[nn]
                t_done = t_prev + (NEEDED - g_prev) / (got - g_prev) * (t - t_prev)
                done[nn] = {"t_done": t_done, "loss": red_loss(net.sim.channel_stats(chans[nn])),
                            "level": net.sim.rlc_records(a)["level"][-1]}
            prev[nn] = (t, got)
    rows = []
    for nn in range(-6, 7):
        d = done.get(nn)
        rate = NEEDED * PACKET_BYTES * 8 / (d["t_done"] - starts[nn]) if d else float("nan")
        rows.append({"seed": seed, "alpha": alpha, "n": nn, "link_bps": bws[nn], "utilisation": rate / bws[nn],
                     "done": d is not None, "loss": d["loss"] if d else red_loss(net.sim.channel_stats(chans[nn])),
                     "level_at_done": d["level"] if d else -1})
    return rows
MEASURE_FROM_S = 5.0  # every session has started by then (§IV-B.2 starts in [0, 5] s)


def point_phase_s(shared_bps: float) -> float:
    """The phase randomisation of a run on one shared link: docs/fidelity/phase.md's overhead (one
    packet at the run's bottleneck, here the shared link) when the process has randomisation on
    (``run_phase`` sets it for the randomised pass), else 0."""
    return PACKET_BYTES * 8 / shared_bps if default_phase_overhead() > 0 else 0.0


def tcp_share_run(seed: int, shared_bps: float, n_each: int, duration: float = 600.0,
                  rainbow_kw: Optional[dict] = None, phase_s: Optional[float] = None) -> dict:
    """`n_each` Rainbow sessions (own fountain source and receiver) and `n_each` NewReno flows
    over one RED link. Throughputs over [5 s, first Rainbow completion], wire bytes. `phase_s`:
    the run's phase randomisation (``point_phase_s``, decided by the caller)."""
    L = LINKS_TCP
    net = Net(seed, rainbow_kw, phase_s=phase_s)
    shared, _ = net.link("G0", "G1", shared_bps, L["shared_delay_s"])
    for k in range(n_each):
        for kind in ("RB", "TCP"):
            net.link(f"S{kind}{k}", "G0", L["access_bps"], L["access_delay_s"])
            net.link("G1", f"D{kind}{k}", L["access_bps"], L["access_delay_s"])
    net.finish_build()
    tcp = []
    for k in range(n_each):
        src = net.source(f"SRB{k}")
        net.receiver(f"DRB{k}", src, "rainbow")
        tcp.append(net.sim.add_tcp_flow(f"STCP{k}", f"DTCP{k}", variant="newreno", mss_bytes=TCP_MSS, min_rto=TCP_MIN_RTO_S,
                                        limited_transmit=TCP_LIMITED_TRANSMIT,
                                        start=float(net.rng.uniform(*START_RANGE_S))))
    net.sim.run(duration)
    recs = net.records()
    t0 = MEASURE_FROM_S
    t1 = min((r["done_s"] for r in recs if r["done"]), default=duration)
    span = t1 - t0
    rb = [received_in(r, t0, t1) * PACKET_BYTES * 8 / span for r in recs]
    tc = []
    for a in tcp:
        tr = net.sim.tcp_trace(a)
        t = tr["rx_time_ns"] / 1e9
        b = tr["rx_bytes"].astype(float)
        at = lambda x: float(b[np.searchsorted(t, x, side="right") - 1]) if np.any(t <= x) else 0.0  # noqa: E731
        tc.append((at(t1) - at(t0)) / TCP_MSS * PACKET_BYTES * 8 / span)  # payload → 512-byte wire packets
    st = net.sim.channel_stats(shared)
    x = np.array(rb + tc)
    fair = shared_bps / (2 * n_each)  # eq. 4's O_i
    return {"seed": seed, "shared_bps": shared_bps, "n_each": n_each, "window_s": span,
            "rainbow_bps": float(np.mean(rb)), "tcp_bps": float(np.mean(tc)),
            "fairness": jain_index(x, fair) if x.sum() > 0 else float("nan"),
            "ratio": float(np.mean(rb) / np.mean(tc)) if np.mean(tc) > 0 else float("inf"),
            "loss_rate": (st["drops_forced"] + st["drops_early"]) / max(st["arrivals"], 1),
            "utilisation": float(x.sum() / shared_bps)}


RLC_WINDOW_END_S = 300.0  # ours: RLC has no completion; its rates are measured over [5 s, 300 s]


def rlc_share_run(seed: int, shared_bps: float, n_each: int, duration: float = RLC_WINDOW_END_S,
                  rlc_kw: Optional[dict] = None, queue: Optional[dict] = None, phase_s: Optional[float] = None) -> dict:
    """As :func:`tcp_share_run` with RLC sessions (sender and one receiver each, the Rainbow
    paper's RLC set-up: `config_defaults("rlc")`) in place of Rainbow. Same topology, RED
    links and seeds; throughputs over [5 s, `duration`], wire bytes. `queue` replaces RED on
    every link (ablations); `phase_s` as for :func:`tcp_share_run`."""
    L = LINKS_TCP
    net = Net(seed, queue=queue, phase_s=phase_s)
    shared, _ = net.link("G0", "G1", shared_bps, L["shared_delay_s"])
    for k in range(n_each):
        for kind in ("RB", "TCP"):
            net.link(f"S{kind}{k}", "G0", L["access_bps"], L["access_delay_s"])
            net.link("G1", f"D{kind}{k}", L["access_bps"], L["access_delay_s"])
    net.finish_build()
    layers = int(config_defaults("rlc")["layers"])
    rx, tcp = [], []
    for k in range(n_each):
        groups = [net.sim.add_group(f"SRB{k}") for _ in range(layers)]
        start = float(net.rng.uniform(*START_RANGE_S))
        net.sim.add_rlc_sender(f"SRB{k}", groups, 100 + k, start=start, **(rlc_kw or {}))
        rx.append(net.sim.add_rlc_receiver(f"DRB{k}", groups, 100 + k, start=start, **(rlc_kw or {})))
        tcp.append(net.sim.add_tcp_flow(f"STCP{k}", f"DTCP{k}", variant="newreno", mss_bytes=TCP_MSS, min_rto=TCP_MIN_RTO_S,
                                        limited_transmit=TCP_LIMITED_TRANSMIT,
                                        start=float(net.rng.uniform(*START_RANGE_S))))
    t0, t1 = MEASURE_FROM_S, duration
    net.sim.run(t0)
    b0 = [net.sim.rlc_records(a)["bytes"] for a in rx]
    net.sim.run(t1)
    b1 = [net.sim.rlc_records(a)["bytes"] for a in rx]
    span = t1 - t0
    rl = [(y - x) * 8 / span for x, y in zip(b0, b1)]
    tc = []
    for a in tcp:
        tr = net.sim.tcp_trace(a)
        t = tr["rx_time_ns"] / 1e9
        b = tr["rx_bytes"].astype(float)
        at = lambda x: float(b[np.searchsorted(t, x, side="right") - 1]) if np.any(t <= x) else 0.0  # noqa: E731
        tc.append((at(t1) - at(t0)) / TCP_MSS * PACKET_BYTES * 8 / span)
    st = net.sim.channel_stats(shared)
    x = np.array(rl + tc)
    fair = shared_bps / (2 * n_each)
    lv = [level_time_fractions(net.sim.rlc_records(a), t0, t1) for a in rx]
    return {"seed": seed, "shared_bps": shared_bps, "n_each": n_each, "window_s": span,
            "rlc_bps": float(np.mean(rl)), "tcp_bps": float(np.mean(tc)),
            "rlc_frac_level1": float(np.mean([f.get(1, 0.0) for f in lv])),
            "rlc_mean_level": float(np.mean([sum(k * v for k, v in f.items()) for f in lv])),
            "fairness": jain_index(x, fair) if x.sum() > 0 else float("nan"),
            "ratio": float(np.mean(rl) / np.mean(tc)) if np.mean(tc) > 0 else float("inf"),
            "loss_rate": (st["drops_forced"] + st["drops_early"]) / max(st["arrivals"], 1),
            "utilisation": float(x.sum() / shared_bps)}


# ------------------------------------------------------------------------------------------
# bcfs-file: the real-mode fountain
# ------------------------------------------------------------------------------------------

SYMBOL_BYTES = 448  # RaptorQ symbol size: 512-byte packets less 64 bytes of headers (ours)


def file_run(seed: int, file_bytes: int) -> tuple[dict, list[dict]]:
    L = LINKS_A1
    data = streams.rng(seed, "rainbow-file").integers(0, 256, file_bytes, dtype=np.uint8).tobytes()
    net = Net(seed)
    net.link("S", "G0", L["source_bps"], L["source_delay_s"])
    net.link("G0", "G1", L["uplink_bps"], L["uplink_delay_s"])
    net.link("G1", "R1", L["slow_bps"], L["slow_delay_s"])
    for k, d in enumerate(L["fast_delays_s"]):
        net.link("G1", f"R{k + 2}", L["fast_bps"], d)
    net.finish_build()
    src = net.source("S", file=data, symbol_size=SYMBOL_BYTES)
    for k in range(1, 6):
        net.receiver(f"R{k}", src, "slow" if k == 1 else "fast")
    net.sim.run(400.0)
    k_sym = net.sim.fountain_stats(src)["block_symbols"]
    rows = []
    for r in net.records():
        dec = net.sim.rainbow_decoded(r["agent"])
        rows.append({"seed": seed, "node": r["node"], "done": r["done"], "identical": dec == data,
                     "symbols_received": r["received"], "block_symbols": k_sym,
                     "reception_overhead": r["received"] - k_sym, "decode_attempts": r["decode_attempts"],
                     "completion_s": (r["done_s"] - r["start_s"]) if r["done"] else float("nan"),
                     "rate_kbps": avg_rate_kbps(r)})
    return {"seed": seed, "file_bytes": file_bytes, "source_sent": net.sim.fountain_stats(src)["sent"]}, rows
