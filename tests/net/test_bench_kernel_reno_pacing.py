"""``bench/kernel_reno_pacing.py``'s readings on series written here by hand (no testbed, no
tshark): how long a flow waits after an ACK before it sends, and the stretches between BBR's
PROBE_RTTs with the filter, the windows and the share in each."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench"))

import kernel_reno_pacing as krp  # noqa: E402


def test_the_wait_from_an_ack_to_the_next_departure_counts_only_departures_before_the_next_ack():
    flow = {"tx_t": [0.000, 0.000, 0.0095, 0.0125, 0.030],
            "ack_t": [0.005, 0.006, 0.009, 0.020, 0.025],
            "ack": [1, 1, 2, 3, 4]}  # the second ACK is a duplicate
    # 0.005: the next departure (9.5 ms) comes after the next new ACK (9 ms): not answered;
    # 0.009: answered 0.5 ms later; 0.020: the next departure (30 ms) is after the ACK at 25 ms;
    # 0.025: answered 5 ms later
    assert krp.departure_lags(flow) == pytest.approx([0.0005, 0.005])
    row = krp.lag_row(flow)
    assert row["answered_acks"] == 2 and row["over_1ms"] == 0.5
    assert row["lag_p50_ms"] == pytest.approx(2.75)


def test_stretches_between_probe_rtts_read_the_filter_windows_and_share_from_half_a_second_in():
    # PROBE_RTTs at 1 s (start-up: left out), 5 s and 9 s; the run ends at 12 s
    t = {"filter_ms": [0.0, 5.2, 9.2], "bbr_cwnd": [0.0], "reno_cwnd": [0.0, 7.05, 10.0],
         "bbr_acked": [0.0, 5.45, 8.85, 9.45, 11.85], "reno_acked": [0.0, 5.45, 8.85, 9.45, 11.85]}
    v = {"filter_ms": np.array([20.0, 8.0, 4.0]), "bbr_cwnd": np.array([20.0]), "reno_cwnd": np.array([10.0, 3.0, 6.0]),
         "bbr_acked": np.array([0.0, 100, 440, 500, 740]), "reno_acked": np.array([0.0, 50, 135, 200, 320])}
    first, second = krp.intervals([1.0, 5.0, 9.0], 12.0, t, v)
    assert (first["from_s"], first["to_s"], second["from_s"], second["to_s"]) == (5.0, 9.0, 9.0, 12.0)
    assert (first["filter_ms"], second["filter_ms"], first["bbr_cwnd"]) == (8.0, 4.0, 20.0)
    # 5.5-8.9 s: reno's cwnd 10 at 5.5-7.0 s (16 samples), 3 at 7.1-8.9 s (19)
    assert first["reno_cwnd"] == 3.0 and first["reno_cwnd_le4"] == pytest.approx(19 / 35)
    # 9.5-11.9 s: 3 until 10 s (9.5-9.9 s, 5 samples), then 6 (20)
    assert second["reno_cwnd"] == 6.0 and second["reno_cwnd_le4"] == pytest.approx(5 / 25)
    # acknowledged bytes from 5.5 to 8.9 s: reno 85, bbr 340; from 9.5 to 11.9 s: 120 and 240
    assert first["reno_over_bbr"] == pytest.approx(0.25) and second["reno_over_bbr"] == pytest.approx(0.5)


def test_the_twins_of_recorded_captures_start_bbr_as_the_recorded_client_did(tmp_path):
    # reno_bbr_probe_rtt.py writes the gap between its two clients into OUT/run.json, and the
    # tools that rerun twins beside its captures read it; captures recorded before that file
    # was written had the clients launched together.
    from castlab.experiments.tcp import net

    assert krp.probe.recorded_gap(tmp_path) == net.RECORDED_PAIR_START_GAP_S == 0.01
    (tmp_path / "run.json").write_text('{"pair_start_gap_s": 1.0}\n')
    assert krp.probe.recorded_gap(tmp_path) == 1.0
    reno, bbr, _ = krp.probe.twin_traces(3.0, 1, 2e-4, krp.probe.recorded_gap(tmp_path))
    # reno's first segment reaches rcv1 at once, bbr's after 1 s behind the queue reno keeps
    # (at most 30 frames of 1.2 ms)
    assert reno["rx_time_ns"][0] < 1_000_000 and 1.0e9 < bbr["rx_time_ns"][0] < 1.0e9 + 30 * 1.22e6


def test_the_largest_burst_counts_departures_under_50_us_apart_on_each_side_of_the_split():
    # Early (from 2 s): a burst of 3 (1.2 us apart), then one alone; the departure at 1 s is
    # before the first 2 s. Late (from 10.5 s): a burst of 5, then 2. ss's largest cwnd on each
    # side: 16 and 38 (the 50 at 1 s left out).
    tx = np.array([1.0, 1.0000012, 3.0, 3.0000012, 3.0000024, 4.0,
                   11.0, 11.0000012, 11.0000024, 11.0000036, 11.0000048, 12.0, 12.00001])
    assert krp.largest_burst(tx, 2.0, 10.5) == 3 and krp.largest_burst(tx, 10.5, 20.0) == 5
    assert krp.largest_burst(tx, 5.0, 10.0) == 0
    ss = pd.DataFrame({"t": [1.0, 3.0, 5.0, 11.0, 12.0], "cwnd": [50, 16, 12, 38, 30]})
    assert krp.burst_row(tx, ss, 10.5, 20.0) == {"burst_early": 3, "cwnd_max_early": 16.0,
                                                 "burst_late": 5, "cwnd_max_late": 38.0}
