"""``bench/tfrc_decline.py`` on records written here by hand (no testbed, no simulator): the p
it reads back from an LE-SBCC (TFRC) source's rate rows, the loss history it rebuilds, and its
window row."""

from __future__ import annotations

import math
import sys
from pathlib import Path

import pandas as pd
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench"))

import tfrc_decline as td  # noqa: E402

# RFC 5348 §3.1's equation by hand (crates/castlab-proto/src/equations.rs's BY_HAND row):
# s = 560 bytes, R = 0.1 s, p = 0.01, t_RTO = 0.3 s -> 64 235.913 667 987 54 bytes/s
HAND_BPS = 8 * 64_235.913_667_987_54
HAND_SRTT, HAND_SIGMA, HAND_P = 0.1, 0.05, 0.01  # t_RTO = SRTT + 4σ = 0.3


def test_the_equation_and_its_inverse_meet_the_hand_value():
    assert td.equation_bps(HAND_P, HAND_SRTT, HAND_SIGMA) == pytest.approx(HAND_BPS, rel=1e-12)
    assert td.invert_p(HAND_BPS, HAND_SRTT, HAND_SIGMA) == pytest.approx(HAND_P, rel=1e-9)
    # a rate no p in (0, 1] gives: none
    assert math.isnan(td.invert_p(1.0, HAND_SRTT, HAND_SIGMA))


def test_the_average_loss_interval_follows_section_4_1():
    # N <= n: the plain mean of what there is (missing weights and α are 0)
    assert td.s_hat([4, 6]) == pytest.approx(5.0)
    assert td.s_hat([10] * 8) == pytest.approx(10.0)
    # N = 9: the ninth interval enters with α^1 = 0.95: (8·10 + 0.95·100) / 8.95
    assert td.s_hat([10] * 8 + [100]) == pytest.approx(175.0 / 8.95)


def _source(d: Path) -> None:
    d.mkdir(parents=True)
    # the AIMD start, the first loss event's halving at 1 s, then the equation's rate at 2 s
    pd.DataFrame({"time_s": [0.0, 1.0, 2.0], "time_ns": [0, 10**9, 2 * 10**9],
                  "bps": [200e3, 100e3, HAND_BPS]}).to_csv(d / "lesbcc_rate.csv", index=False)
    pd.DataFrame({"time_s": [0.5], "time_ns": [5 * 10**8], "sample_s": [0.1], "srtt_s": [HAND_SRTT],
                  "sigma_s": [HAND_SIGMA], "used": [True]}).to_csv(d / "lesbcc_rtt.csv", index=False)
    # LIs: a loss event at 1 s, one filtered by LI2LE, a loss event at 2 s
    pd.DataFrame({"time_s": [1.0, 1.5, 2.0], "time_ns": [10**9, 15 * 10**8, 2 * 10**9], "receiver": [0, 0, 0],
                  "outcome": [3, 0, 3]}).to_csv(d / "lesbcc_li.csv", index=False)


def test_a_window_row_of_a_hand_made_source(tmp_path):
    _source(tmp_path / "source")
    sent = pd.DataFrame({"time_s": [0.5, 1.5, 40.0], "pkts": [100.0, 20.0, 7.0]})
    got = pd.DataFrame({"time_s": [0.6, 1.6, 40.1], "pkts": [100.0, 10.0, 7.0]})
    rows, series = td.side_rows(tmp_path / "source", 0.0, [0.1, 0.2], sent, got, floor_bps=4480.0)
    w0, w1 = rows
    assert (w0["lis"], w0["les"], w0["pkts"]) == (3, 2, 120.0)
    assert (w0["rises"], w0["falls"]) == (1, 1)  # 100k -> HAND_BPS, 200k -> 100k
    assert w0["les_per_pkt"] == pytest.approx(2 / 120)
    # the rows before and at the first loss event are not the equation's; the 2 s row is p = 0.01
    assert w0["p_rows"] == 1 and w0["p_eq"] == pytest.approx(HAND_P, rel=1e-9)
    assert list(series["p"].isna()) == [True, True, False]
    # intervals: 100 packets to the first loss event, 20 to the second
    assert (w0["first_interval"], w0["intervals"]) == (100.0, 2)
    assert math.isnan(w0["p_hist"])  # fewer than 8 intervals
    assert w0["rcv1_loss"] == pytest.approx(10 / 120)
    assert w0["share"] == 0.1 and w1["share"] == 0.2
    assert (w1["lis"], w1["les"], w1["pkts"], w1["rcv1_loss"]) == (0, 0, 7.0, 0.0)
    assert w1["rate_bps"] == pytest.approx(HAND_BPS) and w1["p_eq"] == pytest.approx(HAND_P, rel=1e-9)
