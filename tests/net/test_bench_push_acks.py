"""``bench/push_acks.py``'s kernel-side reading on a capture written here by hand (no testbed, no
tshark): which bursts end with PSH, which segments the receiver ACKed alone or held, and the RTT
from the oldest segment an ACK covers."""

from __future__ import annotations

import sys
from pathlib import Path

import pandas as pd
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench"))

import push_acks as pa  # noqa: E402

MSS = pa.MSS


def _capture() -> pd.DataFrame:
    data = [  # (t, seq, len, psh): a segment before the warm-up, then four bursts
        (0.0, 0, 1000, 0),
        (10.000, 1000, MSS, 0), (10.000, 1000 + MSS, MSS, 1),  # a pair, PSH on its end
        (10.010, 1000 + 2 * MSS, MSS, 1),  # alone, PSH
        (10.020, 1000 + 3 * MSS, MSS, 0),  # alone, no PSH: the receiver holds it
        (10.030, 1000 + 4 * MSS, MSS, 1),  # alone, PSH
    ]
    acks = [  # (t, ack)
        (6.5, 1000),
        (10.030, 1000 + 2 * MSS),  # the pair, sent together: 30 ms
        (10.045, 1000 + 3 * MSS),  # the pushed segment alone: 35 ms
        (10.070, 1000 + 5 * MSS),  # the held segment with the next one: 50 ms from the held one
    ]
    rows = [{"t": t, "sport": 40000, "dport": 5201, "seq": s, "ack": 1, "len": n, "psh": p} for t, s, n, p in data]
    rows += [{"t": t, "sport": 5201, "dport": 40000, "seq": 1, "ack": a, "len": 0, "psh": 0} for t, a in acks]
    return pd.DataFrame(rows).sort_values("t", kind="stable")


def test_the_kernel_reading_counts_push_marks_acks_alone_held_segments_and_late_samples():
    r = pa.kernel_flow(_capture(), 5201)
    assert r["psh_burst_last"] == pytest.approx(3 / 4)  # the pair's end, two pushed singles; one not
    assert r["psh_other"] == 0.0  # the pair's first segment
    assert r["psh_acked_alone"] == 1.0  # the one segment ACKed alone was pushed
    assert r["psh_held"] == 0.0  # the held one (10 ms before its partner) was not
    assert r["acks_of_one"] == pytest.approx(1 / 3)
    assert r["rtt_over_40ms"] == pytest.approx(1 / 3)  # 30, 35 and 50 ms
