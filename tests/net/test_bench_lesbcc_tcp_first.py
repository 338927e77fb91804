"""``bench/lesbcc_tcp_first.py`` on records written here by hand (no testbed, no simulator): the
readings start at the source's own start on either clock, and the equation's rate meets the
loss events it was given."""

from __future__ import annotations

import math
import sys
from pathlib import Path

import pandas as pd
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench"))

import lesbcc_tcp_first as lt  # noqa: E402

# RFC 5348 §3.1 by hand (test_bench_tfrc_decline's value): s = 560 bytes, R = 0.1 s, p = 0.01,
# t_RTO = 0.3 s (σ = 0.05) -> 64 235.913 667 987 54 bytes/s, 114.707 packets a second
HAND_PPS = 64_235.913_667_987_54 / 560


def test_the_equation_rate_is_where_the_equation_meets_the_events():
    # R = path + one spacing = 0.1 s, and p = events a second / rate = 0.01
    path = 0.1 - 1.0 / HAND_PPS
    assert lt.equation_rate(0.01 * HAND_PPS, path, 0.05) == pytest.approx(HAND_PPS, rel=1e-9)
    # 5 % more events a second: a lower rate; no events: none
    assert lt.equation_rate(0.0105 * HAND_PPS, path, 0.05) < HAND_PPS
    # twice as many: no rate meets them (the equation gives less than any rate would need)
    assert math.isnan(lt.equation_rate(0.02 * HAND_PPS, path, 0.05))
    assert math.isnan(lt.equation_rate(0.0, path, 0.05))


def _records(d: Path, start: float) -> Path:
    d.mkdir(parents=True)
    pd.DataFrame({"time_s": [start, start + 15, start + 90], "bps": [200e3, 100e3, 50e3]}).to_csv(
        d / "lesbcc_rate.csv", index=False)
    # a sample in the first 10 s (3 s long) and one after: 0.5 s of path plus 560 B at 100 kb/s
    pd.DataFrame({"time_s": [start + 5, start + 20], "sample_s": [3.0, 0.5448], "srtt_s": [1.0, 0.5],
                  "sigma_s": [0.5, 0.05]}).to_csv(d / "lesbcc_rtt.csv", index=False)
    pd.DataFrame({"time_s": [start + 5, start + 20, start + 20.1, start + 50], "receiver": 0,
                  "outcome": [3, 3, 0, 3]}).to_csv(d / "lesbcc_li.csv", index=False)
    return d


@pytest.mark.parametrize("start", [0.0009, 10.0], ids=["testbed clock", "twin clock, TCP first"])
def test_a_reading_starts_ten_seconds_after_the_source_on_either_clock(tmp_path, start):
    r = lt.reading("x", 1, _records(tmp_path / "src", start), 0.1, 170.0)
    # from start + 10 to start + 170: 200 kb/s for 5 s, 100 kb/s for 75 s, 50 kb/s for 80 s
    assert r["rate_mean_kbps"] == pytest.approx((5 * 200 + 75 * 100 + 80 * 50) / 160)
    assert r["loss_events_per_s"] == pytest.approx(2 / 160)  # the event at 5 s is before the window
    assert r["sample_median_s"] == pytest.approx(0.5448) and r["path_median_s"] == pytest.approx(0.5)
    assert r["sigma_median_s"] == pytest.approx(0.05)
