"""RLM's open settings, declared once for every RLM experiment: a leaf the figures import, so
the package and its figures do not import each other.

Each table's first entry is the primary reading (the experiments' ``ours``), the others are
readings the paper also allows; a claim run under them holds only when it holds under every one
(the accounting rule, ``castlab.claims``).

- The initial detection-time estimate: "conservative (i.e., large)" (§3.2), no value. Primary
  9 s (T_D 5 s, sigma 2 s: ns-2's RLM, the larger); also 5 s (T_D 3 s, sigma 1 s), still longer
  than a failing experiment takes to show on topology (1) with 10 ms links (two link delays plus
  the 20-packet queue's build-up, under 1 s); a 3 s timer is not read as "large". Figures 8 and
  13.
- The leave latency: the paper says performance "depends critically" on the join/leave
  latencies and gives none for its runs. Primary 0 (ns-2's prune at once); also 0.2 s. Figure 9.
- Whether the join-timer runs outside the steady state: §3.4 sets it in S (primary, castlab);
  ns-2's RLM keeps it running through H, M and D. Figure 10.
- RED's averaging weight (§5 gives no RED parameters): :data:`RED_WQ_READINGS`, primary
  ``topology.RED_W_Q``. rlm-red.
"""

from __future__ import annotations

DETECTION_SETTING = "the initial detection-time estimate"
DETECTION_READINGS = {"initial detection timer 9 s": {},
                      "initial detection timer 5 s": {"rlm": {"detection_init": 3.0, "detection_dev_init": 1.0}}}
LEAVE_SETTING = "the leave latency"
LEAVE_READINGS = {"leave latency 0": {}, "leave latency 0.2 s": {"leave_latency_s": 0.2}}
JOIN_TIMER_SETTING = "the join-timer outside the steady state"
JOIN_TIMER_READINGS = {"join-timer in S only": {},
                       "join-timer running in H, M, D": {"rlm": {"join_timer_outside_steady": True}}}
RED_WQ_SETTING = "RED's averaging weight w_q"
RED_WQ_READINGS = [0.002, 0.02, 0.05, 0.1, 0.2]
