"""castlab.metrics against hand computations (the expected numbers are worked out in the
comments, not produced by the code under test)."""

import math

import numpy as np
import pytest

from castlab.metrics import jain_index, padhye_throughput, rate_ratio, rate_series, tcp_simple_throughput


def test_jain_index_eq3_on_raw_throughputs():
    # (1 + 2 + 3)^2 / (3 * (1 + 4 + 9)) = 36 / 42
    assert jain_index([1.0, 2.0, 3.0]) == pytest.approx(36 / 42, rel=1e-12)
    # equal shares: 1; one flow of four takes everything: 1/n
    assert jain_index([7.0, 7.0, 7.0, 7.0]) == pytest.approx(1.0)
    assert jain_index([5.0, 0.0, 0.0, 0.0]) == pytest.approx(0.25)


def test_jain_index_normalises_by_fair_throughput_eq4():
    # Rainbow §B.1: 4 flows on a 1 Mb/s link, O_i = 0.25 Mb/s; T = 0.3, 0.2, 0.25, 0.25 Mb/s.
    # x = 1.2, 0.8, 1, 1: (4)^2 / (4 * (1.44 + 0.64 + 1 + 1)) = 16 / 16.32
    assert jain_index([0.3e6, 0.2e6, 0.25e6, 0.25e6], 0.25e6) == pytest.approx(16 / 16.32, rel=1e-12)
    # Unequal fair shares: each flow at exactly its share is perfectly fair although the raw
    # throughputs differ (eq. 4 first, then eq. 3).
    assert jain_index([1.0, 2.0, 3.0], [1.0, 2.0, 3.0]) == pytest.approx(1.0)
    # x = 2/1, 2/2 -> (3)^2 / (2 * (4 + 1)) = 0.9
    assert jain_index([2.0, 2.0], [1.0, 2.0]) == pytest.approx(0.9)


def test_jain_index_rejects_bad_input():
    for bad, field in [([], "throughputs"), ([1.0, -1.0], "throughputs"), ([0.0, 0.0], "throughputs")]:
        with pytest.raises(ValueError, match=field):
            jain_index(bad)
    with pytest.raises(ValueError, match="fair_shares"):
        jain_index([1.0, 2.0], [1.0, 0.0])


def test_rate_ratio():
    # mean(3, 5) / mean(2) = 2
    assert rate_ratio([3.0, 5.0], [2.0]) == pytest.approx(2.0)
    assert rate_ratio(1.5, [1.0, 2.0]) == pytest.approx(1.0)
    with pytest.raises(ValueError, match="tcp_rates"):
        rate_ratio([1.0], [0.0])


def test_simple_formula_by_hand():
    # 1.22 * 1000 B / (0.1 s * sqrt(0.01)) = 1.22 * 1000 / 0.01 = 122 000 B/s
    assert tcp_simple_throughput(1000, 0.1, 0.01) == pytest.approx(122_000.0, rel=1e-12)
    # p four times larger: half the rate (the 1/sqrt(p) law), vectorised over p
    r = tcp_simple_throughput(1000, 0.1, np.array([0.01, 0.04]))
    assert r == pytest.approx([122_000.0, 61_000.0], rel=1e-12)
    with pytest.raises(ValueError, match="p"):
        tcp_simple_throughput(1000, 0.1, 0.0)
    with pytest.raises(ValueError, match="rtt_s"):
        tcp_simple_throughput(1000, -0.1, 0.01)


def test_padhye_formula_by_hand_as_lesbcc_writes_it():
    # LE-SBCC §4.1: T = s / (R sqrt(2p/3) + t_RTO (3 sqrt(3p/8)) p (1 + 32 p^2)), s = 1000 B,
    # R = 0.1 s, p = 0.01, t_RTO = 1 s:
    #   R sqrt(2p/3)            = 0.1 * 0.0816496581 = 0.00816496581
    #   3 sqrt(3p/8) p (1+32p²) = 3 * 0.0612372436 * 0.01 * 1.0032 = 0.00184299608
    #   T = 1000 / 0.01000796189 = 99 920.4 B/s
    first = 0.1 * math.sqrt(2 * 0.01 / 3)
    second = 1.0 * 3 * math.sqrt(3 * 0.01 / 8) * 0.01 * (1 + 32 * 0.01**2)
    assert first == pytest.approx(0.00816496581, rel=1e-9)
    assert second == pytest.approx(0.00184299608, rel=1e-8)
    assert padhye_throughput(1000, 0.1, 0.01, 1.0) == pytest.approx(99_920.4, rel=1e-6)
    # Without the timeout term it is the square-root law with sqrt(3/2) = 1.2247 instead of 1.22.
    assert padhye_throughput(1000, 0.1, 0.01, 0.0) == pytest.approx(1000 * math.sqrt(1.5) / (0.1 * 0.1), rel=1e-12)


# (s bytes, R s, p, t_RTO s, X bytes/s): RFC 5348 §3.1's formula (b = 1) evaluated by hand in
# 40-digit decimal arithmetic. The Rust equations module
# (crates/castlab-proto/src/equations.rs, BY_HAND) is tested against the same rows, so the
# two copies of Padhye's equation agree to 1e-12 wherever p < 8/27 (where Padhye's min(1, .)
# is inactive).
RFC5348_BY_HAND = [
    (1000.0, 0.1, 0.01, 0.4, 112_332.23436299299),
    (1000.0, 0.1, 0.01, 1.0, 99_920.44442381531),
    (560.0, 0.1, 0.01, 0.3, 64_235.913667987540),
    (1460.0, 0.05, 0.1, 0.2, 51_686.980671506654),
    (1000.0, 0.2, 1e-6, 0.8, 6_123_669.2439347479),
]


@pytest.mark.parametrize("s,r,p,t_rto,want", RFC5348_BY_HAND)
def test_padhye_matches_rfc_5348_and_the_rust_equation(s, r, p, t_rto, want):
    assert padhye_throughput(s, r, p, t_rto) == pytest.approx(want, rel=1e-12)


def test_padhye_b_cap_and_window_limit():
    # b = 2 (delayed ACKs), same path: R sqrt(4p/3) = 0.0115470054;
    # 3 sqrt(6p/8) p (1+32p²) = 3 * 0.0866025404 * 0.01 * 1.0032 = 0.00260639005
    assert padhye_throughput(1000, 0.1, 0.01, 1.0, b=2) == pytest.approx(1000 / (0.0115470054 + 0.00260639005), rel=1e-8)
    # Padhye's min(1, .): at p = 0.5, 3 sqrt(1.5/8) = 1.299 > 1, so the term is 1:
    # 1000 / (0.1 sqrt(1/3) + 1 * 1 * 0.5 * (1 + 8)) = 1000 / 4.55773503
    assert padhye_throughput(1000, 0.1, 0.5, 1.0) == pytest.approx(1000 / 4.55773503, rel=1e-8)
    # Receiver window: capped at w_max * s / R = 5 * 1000 / 0.1 = 50 000 B/s
    assert padhye_throughput(1000, 0.1, 0.01, 1.0, w_max_pkts=5) == pytest.approx(50_000.0)
    with pytest.raises(ValueError, match="t_rto_s"):
        padhye_throughput(1000, 0.1, 0.01, -1.0)
    with pytest.raises(ValueError, match="b"):
        padhye_throughput(1000, 0.1, 0.01, 1.0, b=0.5)


def test_padhye_is_below_the_simple_formula_and_closes_in_at_low_p():
    p = np.array([0.001, 0.01, 0.1])
    simple = tcp_simple_throughput(1000, 0.1, p)
    pad = padhye_throughput(1000, 0.1, p, 1.0)
    assert np.all(pad < simple)
    # at p = 0.1 % timeouts barely matter: within 5 % (1.2247/1.22 and the small t_RTO term)
    assert pad[0] / simple[0] == pytest.approx(1.0, abs=0.05)
    assert pad[2] / simple[2] < 0.5


def test_rate_series_bins_a_cumulative_count():
    # 1000 B by 0.5 s, 3000 by 1.5 s, 6000 by 2.5 s: 1000, 2000, 3000 B in the three 1-s bins
    t, r = rate_series([500_000_000, 1_500_000_000, 2_500_000_000], [1000, 3000, 6000], 1.0, t_end_s=3.0)
    assert list(t) == [0.0, 1.0, 2.0]
    assert list(r) == [8000.0, 16000.0, 24000.0]
    with pytest.raises(ValueError, match="time_ns"):
        rate_series([2, 1], [1, 2], 1.0)
    with pytest.raises(ValueError, match="bin_s"):
        rate_series([1, 2], [1, 2], 0.0)
