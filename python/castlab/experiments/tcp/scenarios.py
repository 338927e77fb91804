"""The TCP baselines' set-ups, one run each: K flows on a dumbbell, one flow under random loss."""

from __future__ import annotations

import numpy as np

from castlab.experiments import streams
from castlab.scenario import Scenario
from castlab.metrics import jain_index, padhye_throughput, tcp_simple_throughput

HEADER_BYTES = 40  # TcpConfig default: IPv4 + TCP without options


# ------------------------------------------------------------------------------------------
# tcp-fairness
# ------------------------------------------------------------------------------------------

FAIR = {
    "bottleneck_bps": 10e6,
    "bottleneck_delay_s": 0.020,
    "access_bps": 100e6,
    "access_delay_s": 0.001,
    "mss_bytes": 1000,
    "variant": "newreno",
    "start_window_s": 5.0,  # Rainbow §B.2: "each session starts at uniformly randomized time in [0...5] seconds"
}


def dumbbell_bdp_pkts() -> float:
    """Bandwidth-delay product of the dumbbell at its base RTT, in data packets."""
    f = FAIR
    base_rtt = 2 * (2 * f["access_delay_s"] + f["bottleneck_delay_s"])
    return f["bottleneck_bps"] * base_rtt / 8 / (f["mss_bytes"] + HEADER_BYTES)


def fair_queue(queue: str, bdp_pkts: float) -> dict:
    if queue == "droptail":
        # the classic buffer-sizing rule: one bandwidth-delay product of buffer
        return {"queue": "droptail", "queue_limit_pkts": int(round(bdp_pkts))}
    # RED (Floyd & Jacobson 1993): w_q and max_p at the paper's values, max_th = 3 min_th
    # (Floyd's later guideline), min_th ~ 0.4 BDP so that a few flows keep the link busy; the
    # hard limit is 2 max_th, never reached while the average stays below max_th.
    min_th = float(round(0.375 * bdp_pkts))
    return {"queue": "red", "queue_limit_pkts": int(6 * min_th), "red_min_th": min_th, "red_max_th": 3 * min_th,
            "red_max_p": 0.1, "red_w_q": 0.002, "mean_pkt_bytes": FAIR["mss_bytes"] + HEADER_BYTES}


def fairness_scenario(k: int, qcfg: dict, seed: int, duration: float) -> Scenario:
    """tcp-fairness's dumbbell as a scenario: K NewReno flows s_i -> r1 -> r2 -> d_i, the
    bottleneck r1 -> r2 with queue `qcfg`, the flows starting at random in FAIR's start window
    (drawn from `seed`)."""
    f = FAIR
    starts = streams.rng(seed, "tcp-fairness-starts").uniform(0.0, f["start_window_s"], k)
    q = {("queue_limit" if key == "queue_limit_pkts" else key): v for key, v in qcfg.items()}
    nodes, links, tcp = ["r1", "r2"], [{"name": "bottleneck", "a": "r1", "b": "r2", "rate": f["bottleneck_bps"],
                                        "delay": f["bottleneck_delay_s"], **q}], []
    for i in range(k):
        s, d = f"s{i}", f"d{i}"
        nodes += [s, d]
        links += [{"name": f"in{i}", "a": s, "b": "r1", "rate": f["access_bps"], "delay": f["access_delay_s"],
                   "queue_limit": 10_000},
                  {"name": f"out{i}", "a": "r2", "b": d, "rate": f["access_bps"], "delay": f["access_delay_s"],
                   "queue_limit": 10_000}]
        tcp.append({"name": f"flow{i}", "src": s, "dst": d, "variant": f["variant"], "start": float(starts[i]),
                    "config": {"mss_bytes": f["mss_bytes"]}})
    return Scenario.from_dict({"name": f"tcp-fairness K={k} {qcfg['queue']}", "duration": duration, "nodes": nodes,
                               "links": links, "tcp": tcp})


def fairness_run(k: int, queue: str, seed: int, duration: float, warmup: float) -> dict:
    """K NewReno flows, equal RTTs, one bottleneck; goodput of each flow over (warmup, duration]."""
    f = FAIR
    qcfg = fair_queue(queue, dumbbell_bdp_pkts())
    sim = fairness_scenario(k, qcfg, seed, duration).build(seed)
    flows = [sim.scenario_handles.tcp[f"flow{i}"] for i in range(k)]
    sim.run(warmup)
    before = [sim.tcp_stats(a)["received_bytes"] for a in flows]
    sim.run(duration)
    stats = [sim.tcp_stats(a) for a in flows]
    goodput = np.array([(st["received_bytes"] - b) * 8 / (duration - warmup) for st, b in zip(stats, before)])
    fair = f["bottleneck_bps"] / k  # eq. (4)'s O_i: the link's bandwidth over the number of flows
    x = goodput / fair
    return {
        "k": k, "queue": queue, "seed": seed, "jain": jain_index(goodput, fair), "utilisation": goodput.sum() / f["bottleneck_bps"],
        "min_x": float(x.min()), "max_x": float(x.max()), "timeouts": int(sum(st["timeouts"] for st in stats)),
        "retransmissions": int(sum(st["retransmissions"] for st in stats)), "queue_limit_pkts": qcfg["queue_limit_pkts"],
        "events": sim.engine_stats()["events"],
    }


# ------------------------------------------------------------------------------------------
# tcp-formula
# ------------------------------------------------------------------------------------------

FORMULA = {
    "rate_bps": 100e6,  # far above any window the losses allow: no queueing, no queue drops
    "delay_s": 0.050,  # one way: a fixed RTT of ~100 ms
    "queue_limit_pkts": 100_000,
    "mss_bytes": 1000,
    "variant": "reno",
    "min_rto": 1.0,  # RFC 6298 §2.4 (the TcpConfig default)
    "delayed_ack": False,  # b = 1 in the formulas
    # Padhye et al. (1998) model Reno as it was then: a loss with fewer than three duplicate
    # ACKs behind it ends in a timeout. Limited Transmit (RFC 3042, 2001; the TcpConfig default)
    # turns some of those into fast retransmits; with it the send rate at high loss rates lies
    # above the model's, outside the band, for a reason the model does not cover.
    "limited_transmit": False,
}


def formula_scenario(p: float, duration: float) -> Scenario:
    """tcp-formula's set-up as a scenario: one Reno flow over one link that loses a fraction `p`
    of the packets it carries, at random."""
    f = FORMULA
    return Scenario.from_dict({
        "name": f"tcp-formula p={p:g}", "duration": duration, "nodes": ["src", "dst"],
        "links": [{"name": "path", "a": "src", "b": "dst", "rate": f["rate_bps"], "delay": f["delay_s"],
                   "queue_limit": f["queue_limit_pkts"], "loss_ab": p}],
        "tcp": [{"name": "reno", "src": "src", "dst": "dst", "variant": f["variant"],
                 "config": {"mss_bytes": f["mss_bytes"], "min_rto": f["min_rto"], "delayed_ack": f["delayed_ack"],
                            "limited_transmit": f["limited_transmit"]}}],
    })


def formula_run(p: float, seed: int, duration: float, warmup: float) -> dict:
    f = FORMULA
    sim = formula_scenario(p, duration).build(seed)
    ab, _ = sim.scenario_handles.channels["path"]
    a = sim.scenario_handles.tcp["reno"]
    sim.run(warmup)
    s0, c0 = sim.tcp_stats(a), sim.channel_stats(ab)
    sim.run(duration)
    s1, c1, tr = sim.tcp_stats(a), sim.channel_stats(ab), sim.tcp_trace(a)
    span = duration - warmup
    keep = tr["rtt_time_ns"] > warmup * 1e9
    rtt = float(np.mean(tr["rtt_ns"][keep])) / 1e9
    t_rto = float(np.mean(tr["rto_ns"][keep])) / 1e9
    mss = f["mss_bytes"]
    sent = s1["segments_sent"] - s0["segments_sent"]
    # Padhye's B(p) counts every packet sent (retransmissions included) per unit time.
    send_rate = sent / span
    goodput = (s1["received_bytes"] - s0["received_bytes"]) / mss / span
    arrivals = c1["arrivals"] - c0["arrivals"]
    simple = tcp_simple_throughput(mss, rtt, p) / mss
    padhye = padhye_throughput(mss, rtt, p, t_rto, b=1.0) / mss
    return {
        "p": p, "seed": seed, "send_rate_pps": send_rate, "goodput_pps": goodput, "simple_pps": simple, "padhye_pps": padhye,
        "simple_rel_err": simple / send_rate - 1, "padhye_rel_err": padhye / send_rate - 1,
        "rtt_s": rtt, "t_rto_s": t_rto, "measured_loss": (c1["lost_random"] - c0["lost_random"]) / max(arrivals, 1),
        "queue_drops": c1["drops_forced"] + c1["drops_early"], "timeouts": s1["timeouts"] - s0["timeouts"],
        "fast_retransmits": s1["fast_retransmits"] - s0["fast_retransmits"], "segments_sent": sent,
    }


# ------------------------------------------------------------------------------------------
# tcp-cubic and tcp-bbr: one Linux-like flow alone on a dumbbell
# ------------------------------------------------------------------------------------------

LINUX_MSS, LINUX_HEADER = 1448, 52  # TcpConfig.linux(): what "cubic" and "bbr" flows start from

CUBIC = {
    "bottleneck_bps": 50e6,
    "bottleneck_delay_s": 0.050,  # a large BDP (~430 packets): CUBIC's own region, not Reno's
    "access_bps": 1e9,
    "access_delay_s": 0.001,
    "variant": "cubic",
}

BBR = {
    "bottleneck_bps": 10e6,
    "bottleneck_delay_s": 0.020,
    "access_bps": 1e9,
    "access_delay_s": 0.001,
    "queue_bdp": 2.5,  # a buffer a loss-based flow would fill: BBR's queue is its own choice
    "variant": "bbr",
}


def base_rtt_s(f: dict) -> float:
    """The dumbbell's RTT with empty queues: propagation both ways plus serialisation of a data
    packet on each forward hop and of an ACK on each return hop."""
    data_bits, ack_bits = (LINUX_MSS + LINUX_HEADER) * 8, LINUX_HEADER * 8
    per_bit = 2 / f["access_bps"] + 1 / f["bottleneck_bps"]
    return 2 * (2 * f["access_delay_s"] + f["bottleneck_delay_s"]) + (data_bits + ack_bits) * per_bit


def bdp_pkts(f: dict) -> float:
    return f["bottleneck_bps"] * base_rtt_s(f) / 8 / (LINUX_MSS + LINUX_HEADER)


def one_flow_scenario(f: dict, queue_pkts: int, duration: float) -> Scenario:
    """src -> r1 -> r2 -> dst, the bottleneck r1 -> r2 with a DropTail queue of `queue_pkts`,
    one flow of `f["variant"]` with its default (Linux's) settings from t = 0."""
    acc = {"rate": f["access_bps"], "delay": f["access_delay_s"], "queue_limit": 100_000}
    return Scenario.from_dict({
        "name": f"one {f['variant']} flow", "duration": duration, "nodes": ["src", "r1", "r2", "dst"],
        "links": [{"name": "in", "a": "src", "b": "r1", **acc},
                  {"name": "bottleneck", "a": "r1", "b": "r2", "rate": f["bottleneck_bps"],
                   "delay": f["bottleneck_delay_s"], "queue_limit": queue_pkts},
                  {"name": "out", "a": "r2", "b": "dst", **acc}],
        "tcp": [{"name": "flow", "src": "src", "dst": "dst", "variant": f["variant"]}],
    })


def one_flow_run(f: dict, queue_pkts: int, seed: int, duration: float) -> tuple[dict, dict, dict]:
    """Run one flow; its trace, its stats and the bottleneck's stats."""
    sim = one_flow_scenario(f, queue_pkts, duration).build(seed)
    a = sim.scenario_handles.tcp["flow"]
    ab, _ = sim.scenario_handles.channels["bottleneck"]
    sim.run(duration)
    return sim.tcp_trace(a), sim.tcp_stats(a), sim.channel_stats(ab)


def srtt_at(tr: dict, t_ns: np.ndarray) -> np.ndarray:
    """The sender's smoothed RTT (s) in force at each time of `t_ns`."""
    k = np.searchsorted(tr["rtt_time_ns"], t_ns, side="right") - 1
    return tr["srtt_ns"][np.maximum(k, 0)] / 1e9


def cubic_epochs(tr: dict, mss: int, c: float, beta: float) -> list[dict]:
    """Every congestion-avoidance epoch between two window reductions of a CUBIC trace, with
    RFC 9438's curve for it computed from the trace: W_max from the window before the reduction
    (§4.7, fast convergence when it is below the previous W_max), cwnd_epoch the window after it,
    K by §4.2 Figure 2, the epoch's start the first increase after the reduction (recovery over).
    Each epoch carries the measured window (segments) against t and W_cubic(t + SRTT(t))."""
    cw = tr["cwnd_bytes"].astype(float) / mss
    t = tr["cc_time_ns"]
    red = [k for k in range(1, len(cw)) if cw[k] < cw[k - 1]]
    out, w_max = [], 0.0
    for k0, k1 in zip(red, red[1:]):
        before = cw[k0 - 1]
        w_max = before * (1 + beta) / 2 if before < w_max else before
        up = [k for k in range(k0 + 1, k1) if cw[k] > cw[k0]]
        if not up:
            continue
        e = up[0]
        t_epoch = t[e] / 1e9
        kk = float(np.cbrt((w_max - cw[k0]) / c))
        ts = t[e:k1] / 1e9 - t_epoch
        model = c * (ts + srtt_at(tr, t[e:k1]) - kk) ** 3 + w_max
        out.append({"t_epoch_s": t_epoch, "w_max": w_max, "cwnd_before": before, "cwnd_epoch": cw[k0], "k_s": kk,
                    "t": ts, "cwnd": cw[e:k1], "model": model, "length_s": float(ts[-1])})
    return out


def phases(tr: dict) -> list[tuple[int, float, float]]:
    """The traced states of a BBR flow as (code, start s, end s), the last (open) one left out."""
    t, c = tr["state_time_ns"] / 1e9, tr["state_code"]
    return [(int(c[i]), float(t[i]), float(t[i + 1])) for i in range(len(c) - 1)]


def sent_bytes_between(tr: dict, t0: float, t1: float) -> int:
    """On-wire bytes sent in [t0, t1) seconds, from the paced flow's tx trace."""
    tx_t, tx_b = tr["tx_time_ns"], tr["tx_bytes"]

    def cum(t: float) -> int:
        k = int(np.searchsorted(tx_t, t * 1e9, side="left"))
        return int(tx_b[k - 1]) if k > 0 else 0

    return cum(t1) - cum(t0)


def probe_rtt_due(tr: dict, ph: list[tuple[int, float, float]], window_s: float = 10.0) -> list[float]:
    """When tcp_bbr.c's rule (bbr_update_min_rtt) puts the flow in PROBE_RTT, applied to the
    traced RTT samples: the min-RTT filter takes a sample below its value, or any sample once
    it is `window_s` old, which is then the moment to enter PROBE_RTT; leaving PROBE_RTT
    refreshes the filter's time (bbr_check_probe_rtt_done). The filter's clock starts at 0."""
    exits = sorted(b for c, a, b in ph if c == 2)
    t, r = tr["rtt_time_ns"] / 1e9, tr["rtt_ns"] / 1e9
    due, m, stamp, x = [], float("inf"), 0.0, 0
    for ti, ri in zip(t, r):
        while x < len(exits) and exits[x] <= ti:
            stamp = max(stamp, exits[x])
            x += 1
        expired = ti > stamp + window_s
        if ri < m or expired:
            m, stamp = ri, ti
        if expired:
            due.append(float(ti))
    return due
