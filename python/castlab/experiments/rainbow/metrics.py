"""What the Rainbow experiments read from a run: eq. 1's overhead, receiving rates, shared
symbols, RED loss, RLC's time per level, the sawtooth model of B-(i).
"""

from __future__ import annotations

import numpy as np

from castlab.experiments import streams
from castlab.experiments.rainbow.topology import PACKET_BYTES


def avg_rate_kbps(rec: dict) -> float:
    """A receiver's average receiving rate over its session: symbols received × 512 B × 8 over
    (completion - start); NaN if it did not finish."""
    if not rec["done"]:
        return float("nan")
    return rec["received"] * PACKET_BYTES * 8 / (rec["done_s"] - rec["start_s"]) / 1e3


def received_in(rec: dict, t0: float, t1: float) -> int:
    t = rec["rx_time_ns"] / 1e9
    return int(np.count_nonzero((t >= t0) & (t < t1)))


def packets_between(series: dict, t0: float, t1: float, with_drops: bool = False) -> float:
    """Packets that left a monitored channel in [t0, t1) (from its cumulative bytes, all packets
    being 512-byte replies), plus, with ``with_drops``, those its queue dropped: i.e. the packets
    offered to it."""
    t = series["time_ns"] / 1e9
    n = (np.interp(t1, t, series["bytes"]) - np.interp(t0, t, series["bytes"])) / PACKET_BYTES
    if with_drops:
        n += np.interp(t1, t, series["drops"]) - np.interp(t0, t, series["drops"])
    return float(n)


def eq1_overhead(n: int, ps: float, recs: list[dict], t0: float, t1: float) -> float:
    """Eq. 1, N·ps/Σpr_i - 1, over [t0, t1): ps packets sent through the shared link (or from the
    source, §IV-A.3), pr_i the packets receiver i received then. The interval must be one in
    which every receiver is receiving: §IV-B.2 says that with every packet aggregated the
    overhead is 0 %, and only an interval common to all receivers gives that (over whole runs,
    starts spread over [0, 5] s and 2,000-packet completions count the spread N-fold)."""
    pr = sum(received_in(r, t0, t1) for r in recs)
    return n * ps / pr - 1 if pr else float("nan")


def stable_window(recs: list[dict]) -> tuple[float, float]:
    """§IV-A.3's "stable condition, between 10 and 20 seconds", ended earlier by the first
    completion, so that every receiver is active throughout (empty if someone finished by 10 s)."""
    w0, w1 = OVERHEAD_WINDOW_S
    first_done = min((r["done_s"] for r in recs if r["done"]), default=np.inf)
    return w0, float(min(w1, first_done))


def rate_timeline(rec: dict, bin_s: float, t_end: float) -> tuple[np.ndarray, np.ndarray]:
    edges = np.arange(0.0, t_end + bin_s, bin_s)
    counts, _ = np.histogram(rec["rx_time_ns"] / 1e9, bins=edges)
    return edges[:-1], counts * PACKET_BYTES * 8 / bin_s / 1e3


def shared_while_others_active(recs: list[dict], i: int) -> tuple[int, int]:
    """§IV-A.3: of receiver i's packets received while at least one other receiver is receiving
    (started, not yet done), how many carried a symbol some other receiver also received.
    Returns (shared, received while others active)."""
    me = recs[i]
    t = me["rx_time_ns"] / 1e9
    active = np.zeros(t.size, dtype=bool)
    others_syms = []
    for j, r in enumerate(recs):
        if j == i:
            continue
        end = r["done_s"] if r["done"] else np.inf
        active |= (t >= r["start_s"]) & (t <= end)
        others_syms.append(r["rx_symbol"])
    shared = np.isin(me["rx_symbol"], np.concatenate(others_syms)) if others_syms else np.zeros(t.size, dtype=bool)
    return int(np.count_nonzero(shared & active)), int(np.count_nonzero(active))
OVERHEAD_WINDOW_S = (10.0, 20.0)  # §IV-A.3: "during the stable condition, between 10 and 20 seconds"


def sawtooth_eq1(n_rx: int, seed: int, w_max: float = 32.0, periods: int = 200, steps: int = 64) -> dict:
    """Fig. 10's model (§IV-B.3) on synthetic receivers: each window rises linearly from W/2 to W
    and halves, with one period T for all and independent uniform phases. With every TRQ for a
    label aggregated, the shared link carries max_i w_i(t) packets per RTT and receiver i gets
    w_i(t). Returns eq. 1's overhead (N·Σps/ΣΣpr - 1) and the fraction of the link's packets some
    receiver did not get, Σ_t Σ_i (ps - pr_i) / (N·Σps), which is the triangles' share of the
    W·T rectangle in Fig. 10. As N grows the max tends to W and the mean to 3W/4: eq. 1 tends
    to 1/3 and the triangle share to 1/4."""
    rng = streams.rng(seed, "rainbow-sawtooth")
    phase = rng.uniform(0.0, 1.0, n_rx)
    t = np.arange(periods * steps) / steps  # in periods
    w = w_max / 2 * (1 + np.mod(t[None, :] + phase[:, None], 1.0))  # (receiver, time)
    ps = w.max(axis=0).sum()
    pr = w.sum()
    return {"n": n_rx, "eq1": n_rx * ps / pr - 1, "triangle_share": 1 - pr / (n_rx * ps)}


def red_loss(st: dict) -> float:
    return (st["drops_forced"] + st["drops_early"]) / st["arrivals"] if st["arrivals"] else 0.0


def level_time_fractions(rec: dict, t0: float, t1: float) -> dict[int, float]:
    """Fraction of [t0, t1) an RLC receiver spent at each level, from `rlc_records`' level
    changes (level_time_ns, level)."""
    t = np.asarray(rec["level_time_ns"], dtype=float) / 1e9
    lv = np.asarray(rec["level"])
    ends = np.append(t[1:], np.inf)
    out: dict[int, float] = {}
    for a, b, v in zip(t, ends, lv):
        d = min(b, t1) - max(a, t0)
        if d > 0:
            out[int(v)] = out.get(int(v), 0.0) + d / (t1 - t0)
    return out


def total_variation(values) -> float:
    """Σ|f(x_k+1) - f(x_k)| over a sweep: how much a curve changes, every wiggle counted."""
    v = np.asarray(values, dtype=float)
    return float(np.abs(np.diff(v)).sum())
