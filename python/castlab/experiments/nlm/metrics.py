"""What the NLM experiments read from a run: drop times, windowed loss, L_cur's raises by cause,
rank correlation.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from castlab.experiments.nlm.topology import Fig8


def first_time(times: np.ndarray, cond: np.ndarray) -> float:
    idx = np.nonzero(cond)[0]
    return float(times[idx[0]]) if idx.size else float("nan")
# §4.2: "RLM detects congestion at 98[s], 114[s], and 130[s], and drops Layer(S1, 5),
# Layer(S1, 4), and Layer(S1, 3) respectively".
RLM_DROPS_S = {5: 98.0, 4: 114.0, 3: 130.0}


def rlm_drop_times(t: np.ndarray, lv: np.ndarray, after_s: float) -> dict[int, float]:
    """For each layer L in RLM_DROPS_S: when RLM dropped layer L for the stay below L that it is
    in at ``after_s`` or first enters after it (steps ``t``, ``lv``); so a drop shortly before
    ``after_s`` that lasts past it counts with its own time. NaN if the level never goes below L."""
    out = {}
    for layer in RLM_DROPS_S:
        k = int(np.searchsorted(t, after_s, side="right")) - 1
        if k < 0 or lv[k] >= layer:
            later = np.nonzero((t > after_s) & (lv < layer))[0]
            if not later.size:
                out[layer] = float("nan")
                continue
            k = int(later[0])
        while k > 0 and lv[k - 1] < layer:
            k -= 1
        out[layer] = float(t[k])
    return out


def peak_window_loss(p: np.ndarray, d: np.ndarray, first_bin: int, width_bins: int) -> float:
    """Largest loss (dropped / offered) over ``width_bins`` consecutive bins, the first starting
    at ``first_bin`` or later; ``p`` and ``d`` are per bin and layer."""
    ps, ds = p.sum(1)[first_bin:], d.sum(1)[first_bin:]
    if len(ps) < width_bins:
        return float("nan")
    k = np.ones(width_bins)
    pw, dw = np.convolve(ps, k, "valid"), np.convolve(ds, k, "valid")
    ok = pw > 0
    return float((dw[ok] / pw[ok]).max()) if ok.any() else float("nan")


# ---------------------------------------------------------------- Figure 13


def lcur_raises_by_cause(net: Fig8) -> dict:
    """How often L_cur went up at LMR1's bottleneck interface: by LMR1's own ADD (§3.3) and by an
    ADD_REQ from downstream (Figure 6), summed over sessions."""
    r = net.sim.lmr_records("LMR1")
    up = (r["lcur_oif"] == net.bott) & (r["lcur_new"] > r["lcur_old"])
    c = np.bincount(r["lcur_cause"][up].astype(int), minlength=6)
    return {"add": int(c[1]), "add_req": int(c[3])}


def spearman(x, y) -> float:
    """Spearman's rho: Pearson's on the ranks; NaN with fewer than three points."""
    if len(x) <= 2:
        return float("nan")
    return float(pd.Series(np.asarray(x, float)).rank().corr(pd.Series(np.asarray(y, float)).rank()))


def first_episode_over(loss: np.ndarray, first_bin: int, threshold: float = 0.10, quiet_bins: int = 10) -> float:
    """Bins with loss over ``threshold`` in the first episode from ``first_bin``: the episode ends
    at the first ``quiet_bins`` consecutive bins at or under it (a bin with nothing offered is
    quiet), so a later, separate episode (a failed experiment much later) does not count."""
    over = np.nan_to_num(np.asarray(loss, float)[first_bin:], nan=0.0) > threshold
    quiet = 0
    count = 0
    for o in over:
        if o:
            count += 1
            quiet = 0
        else:
            quiet += 1
            if quiet >= quiet_bins and count > 0:
                break
    return float(count)


def first_time_at_or_below(t: np.ndarray, lv: np.ndarray, after_s: float, level: int) -> float:
    """From level steps (``t``, ``lv``): the first instant at or after ``after_s`` at which the
    level is at most ``level`` (exact: the step's own time, or ``after_s`` if already there)."""
    k = int(np.searchsorted(t, after_s, side="right")) - 1
    if k >= 0 and lv[k] <= level:
        return float(after_s)
    later = np.nonzero((t > after_s) & (lv <= level))[0]
    return float(t[later[0]]) if later.size else float("nan")
