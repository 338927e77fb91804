"""§3.1.3's Markov chain of the LI2LE filter (Fig. 10): its stationary distribution, p_li / p_le,
and a Monte Carlo of the chain.
"""

from __future__ import annotations

import numpy as np

from castlab.experiments import streams

# ------------------------------------------------------------------------------------------
# fig10: the Markov chain of §3.1.3
# ------------------------------------------------------------------------------------------

# N, "the maximum allowable rate" in packets per RTT, is left open by §3.1.3 ("different large
# N's"): its readings are declared in the package (``READINGS["the chain's N"]``).
# The Monte Carlo of the chain (a check of our stationary solution, not of the paper): rounds per
# point, and the relative difference from the analytic ratio it must stay within (fixed before
# running: 5 %, a few standard errors at these round counts).
MC_ROUNDS = 200_000
MC_REL_TOL = 0.05
MC_POINTS = {"non-bursty": (0.01, 0.05, 0.1, 0.3), "bursty": (1e-4, 1e-3, 1e-2, 0.1)}

def markov_stationary(p: float, n: int, tol: float = 1e-14, max_iter: int = 1_000_000
                      ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Steady state of the chain of §3.1.3 (Fig. 8): state x = packets sent in an RTT, x = 1..N;
    with at least one loss in the round (probability 1 − (1−p)^x) go to max(⌊x/2⌋, 1), else to
    min(x + 1, N). Each state has two successors, so the stationary distribution is found by
    iterating the sparse transition (O(N) per step, no dense solve) until the L1 change is
    below ``tol``; the chain is aperiodic (state 1 and state N have self-loops).
    Returns (x, s(x), P(LE | x))."""
    x = np.arange(1, n + 1)
    le = 1.0 - (1.0 - p) ** x
    up = np.minimum(x + 1, n) - 1
    down = np.maximum(x // 2, 1) - 1
    s = np.full(n, 1.0 / n)
    for _ in range(max_iter):
        nxt = np.bincount(up, weights=s * (1.0 - le), minlength=n) + np.bincount(down, weights=s * le, minlength=n)
        nxt /= nxt.sum()
        if np.abs(nxt - s).sum() < tol:
            s = nxt
            break
        s = nxt
    return x, s, le


def markov_ratio(p: float, n: int, bursty: bool) -> tuple[float, float]:
    """(p_li, p_li / p_le) per packet. Non-bursty: p_li = p. Bursty (§3.1.3): once a packet of a
    round is lost the rest of the round is lost too; p_li = Σ s(x) Σ_i (x−i)(1−p)^i p / Σ x s(x)."""
    x, s, le = markov_stationary(p, n)
    packets = float(np.sum(s * x))
    p_le = float(np.sum(s * le)) / packets
    if not bursty:
        return p, p / p_le
    # Σ_{i=0..x} (x − i)(1−p)^i p = x·G(x) − H(x), G and H cumulative sums of g_i and i·g_i
    i = np.arange(0, n + 1)
    geo = (1.0 - p) ** i * p
    G = np.cumsum(geo)
    H = np.cumsum(i * geo)
    lost = x * G[x] - H[x]
    p_li = float(np.sum(s * lost)) / packets
    return p_li, p_li / p_le


def markov_monte_carlo(p: float, n: int, bursty: bool, rounds: int, seed: int) -> tuple[float, float, float]:
    """Play the chain of §3.1.3 round by round: in state x send x packets; non-bursty, each is
    lost with probability p; bursty, the first i packets survive with probability (1−p)^i·p
    and the rest of the round is lost. A round with a loss is an LE and halves x (at least 1),
    else x + 1 (at most N). Returns (p_li, p_li / p_le) per packet and the mean state (packets
    per round) over the rounds after a tenth of them (burn-in)."""
    rng = streams.rng(seed, "lesbcc-markov")
    x, sent, lost, les, counted = 1, 0, 0, 0, 0
    burn = rounds // 10
    u = rng.random(rounds)
    log_a = np.log1p(-p)
    for k in range(rounds):
        if bursty:
            i = int(np.log(u[k]) / log_a) if u[k] > 0 else n  # survivors before the first loss
            nl = x - i if i < x else 0
        else:
            nl = int(rng.binomial(x, p))
        if k >= burn:
            sent += x
            lost += nl
            les += nl > 0
            counted += 1
        x = max(x // 2, 1) if nl > 0 else min(x + 1, n)
    p_li = lost / sent
    return p_li, p_li / (les / sent), sent / counted
