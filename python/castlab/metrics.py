"""Metrics used across the papers, in one place.

- :func:`jain_index`: the fairness metric of Yano and McCanne, §B.1 eq. (3)
  over the normalised throughputs of eq. (4), after Jain, Durresi and Babic (ATM Forum/99-0045).
- :func:`rate_ratio`: the ratio of a flow's mean rate to TCP's mean rate (Yano and McCanne's
  Fig. 12(b) and 13(b): above 1 means the flow takes more than TCP).
- :func:`tcp_simple_throughput`: the simplified TCP throughput 1.22·MSS/(RTT·√p) that the
  paper of Thapliyal et al. (§3, Fig. 13) draws as the TCP-friendly reference (Mathis et al. 1997).
- :func:`padhye_throughput`: the Padhye et al. (SIGCOMM '98) approximate model, the equation
  the TFRC module of Thapliyal et al. computes its rate from (§4.1).
- :func:`rate_series`: throughput over time from a cumulative byte count (a TCP trace's
  ``acked_bytes`` or ``rx_bytes``, a channel series' ``bytes``).

Units: the throughput formulas return ``mss_bytes`` (or ``s_bytes``) per second, i.e. bytes/s
when the segment size is given in bytes; multiply by 8 for bit/s.
"""

from __future__ import annotations

from typing import Optional, Union

import numpy as np

ArrayLike = Union[float, "np.ndarray", list]


def _scalar_or_array(x: np.ndarray):
    return float(x) if np.ndim(x) == 0 else x


def jain_index(throughputs: ArrayLike, fair_shares: Optional[ArrayLike] = None) -> float:
    """Jain's fairness index, Yano and McCanne's eq. (3):

        fairness = (Σ x_i)² / (n · Σ x_i²)

    over the normalised throughputs of eq. (4), x_i = T_i / O_i, where T_i is flow i's measured
    throughput and O_i its fair throughput ("a fraction of a shared link bandwidth over a total
    number of flows", §B.1). ``fair_shares`` gives O_i (one value for every flow, or one per
    flow); ``None`` means every O_i is equal, and as eq. (3) is scale-free, x_i = T_i then.

    The index is 1 when every x_i is equal and 1/n when one flow takes everything.
    """
    t = np.asarray(throughputs, dtype=float)
    if t.ndim != 1 or t.size == 0:
        raise ValueError("throughputs: need a non-empty 1-d sequence")
    if np.any(~np.isfinite(t)) or np.any(t < 0):
        raise ValueError("throughputs: must be finite and >= 0")
    if fair_shares is None:
        x = t
    else:
        o = np.broadcast_to(np.asarray(fair_shares, dtype=float), t.shape)
        if np.any(~np.isfinite(o)) or np.any(o <= 0):
            raise ValueError("fair_shares: must be finite and > 0")
        x = t / o  # eq. (4)
    s2 = float(np.sum(x * x))
    if s2 == 0.0:
        raise ValueError("throughputs: all zero, the index is undefined")
    return float(np.sum(x)) ** 2 / (x.size * s2)  # eq. (3)


def rate_ratio(flow_rates: ArrayLike, tcp_rates: ArrayLike) -> float:
    """Mean rate of the flow(s) over the mean rate of the TCP flow(s): Yano and McCanne's
    "ratio of average receiving rate of Rainbow (or RLC) and TCP" (§B.5, Fig. 12(b)); a value
    above 1 means the flow gets more than TCP. Either argument may be one rate or several
    (several runs, or several flows of each kind)."""
    a = np.atleast_1d(np.asarray(flow_rates, dtype=float))
    b = np.atleast_1d(np.asarray(tcp_rates, dtype=float))
    if a.size == 0 or b.size == 0:
        raise ValueError("flow_rates and tcp_rates: need at least one rate each")
    if np.any(~np.isfinite(a)) or np.any(a < 0):
        raise ValueError("flow_rates: must be finite and >= 0")
    if np.any(~np.isfinite(b)) or np.any(b < 0):
        raise ValueError("tcp_rates: must be finite and >= 0")
    mb = float(np.mean(b))
    if mb == 0.0:
        raise ValueError("tcp_rates: mean is zero, the ratio is undefined")
    return float(np.mean(a)) / mb


def _check_common(mss: float, rtt_s: float, p: ArrayLike, field_mss: str) -> np.ndarray:
    if not (np.isfinite(mss) and mss > 0):
        raise ValueError(f"{field_mss}: must be > 0 (got {mss})")
    if not (np.isfinite(rtt_s) and rtt_s > 0):
        raise ValueError(f"rtt_s: must be > 0 (got {rtt_s})")
    pa = np.asarray(p, dtype=float)
    if np.any(~np.isfinite(pa)) or np.any(pa <= 0) or np.any(pa > 1):
        raise ValueError(f"p: must be in (0, 1] (got {p})")
    return pa


def tcp_simple_throughput(mss_bytes: float, rtt_s: float, p: ArrayLike, c: float = 1.22):
    """The simplified TCP throughput, c·MSS / (RTT·√p) with c = 1.22 (≈ √(3/2)), as Thapliyal et al.'s
    paper writes it (§3, "the simplified TCP equation (1.22 MSS/RTT √p_le)"; Mathis et al.
    1997, periodic losses, one ACK per segment). ``p`` is the loss (event) probability, a
    number or an array. Returns bytes/s when ``mss_bytes`` is in bytes.

    It ignores timeouts, so it overestimates once they matter (p above a few per cent)."""
    pa = _check_common(mss_bytes, rtt_s, p, "mss_bytes")
    return _scalar_or_array(c * mss_bytes / (rtt_s * np.sqrt(pa)))


def padhye_throughput(s_bytes: float, rtt_s: float, p: ArrayLike, t_rto_s: float, b: float = 1.0,
                      w_max_pkts: Optional[float] = None):
    """The Padhye et al. approximate TCP throughput (SIGCOMM '98, the full model's closed
    form), in the form the TFRC module of Thapliyal et al. uses (§4.1):

        T = s / ( R·√(2bp/3) + t_RTO · min(1, 3·√(3bp/8)) · p · (1 + 32p²) )

    with s the packet size, R the round-trip time, p the loss event rate, t_RTO the
    retransmission timeout (Thapliyal et al.: t_RTO = SRTT + 4σ) and b the packets acknowledged per
    ACK (1 without delayed ACKs; Thapliyal et al.'s form has b = 1). The ``min(1, ·)`` is Padhye's;
    Thapliyal et al. write the term without it, which is the same expression for p < 8/(27b)
    (p < 29.6 % when b = 1). With ``w_max_pkts`` (the receiver window), the rate is also capped
    at w_max·s/R as in Padhye's eq. (33). Returns bytes/s when ``s_bytes`` is in bytes.
    """
    pa = _check_common(s_bytes, rtt_s, p, "s_bytes")
    if not (np.isfinite(t_rto_s) and t_rto_s >= 0):
        raise ValueError(f"t_rto_s: must be >= 0 (got {t_rto_s})")
    if not (np.isfinite(b) and b >= 1):
        raise ValueError(f"b: must be >= 1 (got {b})")
    denom = rtt_s * np.sqrt(2 * b * pa / 3) + t_rto_s * np.minimum(1.0, 3 * np.sqrt(3 * b * pa / 8)) * pa * (1 + 32 * pa**2)
    t = s_bytes / denom
    if w_max_pkts is not None:
        if not (np.isfinite(w_max_pkts) and w_max_pkts > 0):
            raise ValueError(f"w_max_pkts: must be > 0 (got {w_max_pkts})")
        t = np.minimum(t, w_max_pkts * s_bytes / rtt_s)
    return _scalar_or_array(t)


def rate_series(time_ns: ArrayLike, cum_bytes: ArrayLike, bin_s: float, t_end_s: Optional[float] = None,
                t_start_s: float = 0.0) -> tuple[np.ndarray, np.ndarray]:
    """Throughput over time from a cumulative byte count sampled at ``time_ns`` (sorted): the
    bytes added in each bin [t, t + bin_s) divided by ``bin_s``. Returns (bin start times in
    seconds, rate in bit/s). The count before the first sample is taken as 0."""
    t = np.asarray(time_ns, dtype=np.int64)
    c = np.asarray(cum_bytes, dtype=float)
    if t.shape != c.shape or t.ndim != 1:
        raise ValueError("cum_bytes: must be 1-d and as long as time_ns")
    if t.size > 1 and np.any(np.diff(t) < 0):
        raise ValueError("time_ns: must be sorted")
    if not (np.isfinite(bin_s) and bin_s > 0):
        raise ValueError(f"bin_s: must be > 0 (got {bin_s})")
    if t_end_s is None:
        t_end_s = t[-1] / 1e9 if t.size else t_start_s
    edges = np.arange(t_start_s, t_end_s + 1e-12, bin_s)
    if edges.size < 2:
        return np.empty(0), np.empty(0)
    edges_ns = np.round(edges * 1e9).astype(np.int64)
    # the cumulative count at each edge: last sample strictly before the edge
    k = np.searchsorted(t, edges_ns, side="left")
    at = np.where(k > 0, c[np.maximum(k - 1, 0)], 0.0)
    return edges[:-1], np.diff(at) * 8.0 / bin_s
