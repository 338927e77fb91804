"""What the LE-SBCC experiments read from a run: time averages of step functions, the worst
receiver's LE line, convergence times, the coefficient of variation of a rate.
"""

from __future__ import annotations

from typing import Optional

import numpy as np

from castlab.experiments.lesbcc.topology import PACKET_BYTES
from castlab.metrics import tcp_simple_throughput


def step_mean(time_ns: np.ndarray, values: np.ndarray, t0: float, t1: float) -> float:
    """Time average over [t0, t1] of a step function (value `values[i]` from `time_ns[i]`)."""
    t = np.asarray(time_ns, dtype=float) / 1e9
    v = np.asarray(values, dtype=float)
    if t.size == 0:
        return float("nan")
    edges = np.clip(np.append(t, t1), t0, t1)
    w = np.diff(edges)
    return float(np.sum(v * w) / (t1 - max(t0, t[0])))


def step_sample(time_ns: np.ndarray, values: np.ndarray, at_s: np.ndarray) -> np.ndarray:
    """The step function at the given times (NaN before its first row)."""
    t = np.asarray(time_ns, dtype=float) / 1e9
    k = np.searchsorted(t, at_s, side="right") - 1
    out = np.where(k >= 0, np.asarray(values, dtype=float)[np.maximum(k, 0)], np.nan)
    return out


def finite_mean(values) -> float:
    v = np.asarray([float(x) for x in values], dtype=float)
    v = v[np.isfinite(v)]
    return float(v.mean()) if v.size else float("nan")


# ------------------------------------------------------------------------------------------
# fig6: drop-to-zero avoidance
# ------------------------------------------------------------------------------------------

def fig6_counts(r: dict) -> dict:
    st, u = r["main_stats"], r["flows"][r["flows"]["kind"] == "lesbcc"]
    return {"packets_sent": st["odata_sent"] + st["rdata_sent"], "odata": st["odata_sent"],
            "rdata": st["rdata_sent"], "lis": st["lis"], "les": st["les"], "lprf_passed": st["lprf_passed"],
            "rate_reductions": st["rate_reductions"], "li_per_le": st["lis"] / max(st["les"], 1),
            "unicast_rate_reductions_mean": float(u["rate_reductions"].mean()),
            "main_mean_bps": r["main_mean_bps"], "unicast_mean_bps": float(u["mean_bps"].mean()),
            "main_srtt_mean_s": r["main_srtt_mean"], "receivers_complete": int(sum(r["receivers_complete"]))}


# ------------------------------------------------------------------------------------------
# fig13: TCP friendliness
# ------------------------------------------------------------------------------------------

def worst_le_line(run: dict) -> tuple[float, float, float]:
    """1.22·MSS/(RTT·√p_le) of the worst-loss receiver (§3.2): p_le = its LEs / packets sent by
    the main source, RTT = the main source's mean SRTT. Returns (bit/s, p_le, rtt)."""
    st = run["main_stats"]
    packets = st["odata_sent"] + st["rdata_sent"]
    p_le = float(run["les_per_receiver"].max()) / max(packets, 1)
    rtt = run["main_srtt_mean"]
    if p_le <= 0:  # no LE at all (a short run): no line
        return float("nan"), p_le, rtt
    return float(tcp_simple_throughput(PACKET_BYTES, rtt, p_le)) * 8, p_le, rtt


# ------------------------------------------------------------------------------------------
# fig14: DropTail vs RED
# ------------------------------------------------------------------------------------------

# Convergence of SRTT (rule fixed before the second-pass runs). A rule on single samples (the
# first time after which every sample stays within ±20 % of the second-half mean) never fires
# for RED, whose samples spread with the queue it drops at, although its curve settles. So the SRTT
# samples are binned into CONV_BIN_S bins, each bin's median taken (an empty bin keeps the last
# median); the final level is the median of all samples in the second half of the run; the
# convergence time is the start of the first bin from which every later bin's median lies within
# ±CONV_TOL of the final level. "RED converges faster" holds when RED's convergence time,
# averaged over the seeds, is below DropTail's (same seeds).
CONV_BIN_S = 5.0
CONV_TOL = 0.2


def converge_time(t: np.ndarray, srtt: np.ndarray, tol: float = CONV_TOL, bin_s: float = CONV_BIN_S,
                  initial: Optional[float] = None) -> float:
    """The start of the first `bin_s` bin from which every bin's median SRTT stays within ±tol
    of the median of the second half of the samples (NaN with no samples). `initial`: the
    source's estimate before its first sample (§5.2.1's 200 ms), which the bins before the first
    sample hold: convergence is then measured from t = 0, and a source whose first sample comes
    late has not converged before it. None: those bins take the first sample's value (the
    clock starts at the first sample)."""
    t = np.asarray(t, dtype=float)
    srtt = np.asarray(srtt, dtype=float)
    if t.size < 2:
        return float("nan")
    final = float(np.median(srtt[t >= t[-1] / 2]))
    edges = np.arange(0.0, t[-1] + bin_s, bin_s)
    med, last = [], float(srtt[0]) if initial is None else float(initial)
    for a in edges:
        m = (t >= a) & (t < a + bin_s)
        if m.any():
            last = float(np.median(srtt[m]))
        med.append(last)
    ok = np.abs(np.asarray(med) - final) <= tol * final
    bad = np.nonzero(~ok)[0]
    if bad.size == 0:
        return float(edges[0])
    if bad[-1] + 1 >= edges.size:
        return float("nan")
    return float(edges[bad[-1] + 1])


# ------------------------------------------------------------------------------------------
# fig20: the TFRC module against 16 TCP Reno flows
# ------------------------------------------------------------------------------------------

def rate_cov(run: dict, warm: float) -> float:
    t, r = run["main_series"]
    keep = t >= warm
    x = r[keep]
    x = x[np.isfinite(x)]
    return float(np.std(x) / np.mean(x)) if x.size else float("nan")
