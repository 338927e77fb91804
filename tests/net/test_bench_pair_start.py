"""``bench/pair_start.py`` on a run written here by hand: the second flow's first min RTT, the
share before and after its first PROBE_RTT on both sides, and the twin told the kernel's start."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench"))

import pair_start  # noqa: E402

from castlab.experiments.tcp import net  # noqa: E402


def _run(tmp_path: Path, first_minrtt: float) -> Path:
    # A 14 s pair recorded with the clients launched together (no pair_start_gap_s column): the
    # late window starts at 0.01 + 10.5 s. Before it the kernel's reno carries 5 Mb/s beside
    # bbr's 5, after it 2 beside 8; the recorded twin 1 beside 9 throughout. The bbr flow's
    # first ss sample shows no min RTT yet, its second `first_minrtt`.
    run = tmp_path / "run"
    where = run / "reno+bbr" / "seed-1"
    where.mkdir(parents=True)
    pd.DataFrame([{"case": "reno+bbr", "seed": 1, "base_rtt_s": 50e-6, "duration_s": 14.0}]).to_csv(
        run / "cases.csv", index=False)
    t = np.arange(0.0, 14.0, net.BIN_S)
    early = t < 10.51
    pd.DataFrame({"time_s": t, "f0_reno_kernel_bps": np.where(early, 5e6, 2e6),
                  "f1_bbr_kernel_bps": np.where(early, 5e6, 8e6), "f0_reno_sim_bps": 1e6,
                  "f1_bbr_sim_bps": 9e6}).to_csv(where / "series.csv", index=False)
    pd.DataFrame({"t": [0.1, 0.1, 0.2], "minrtt_ms": [0.02, None, first_minrtt], "flow": [0, 1, 1],
                  "side": ["kernel", "kernel", "kernel"]}).to_csv(where / "samples.csv", index=False)
    return run


def test_the_readings_split_at_the_second_flows_first_probe_rtt(tmp_path):
    (r,) = pair_start.rows_of(_run(tmp_path, 0.012))
    assert (r["gap_s"], r["first_minrtt_ms"], r["late_from_s"]) == (0.01, 0.012, pytest.approx(10.51))
    # early is [2 s warm-up, 10.51): whole bins 2.0-10.0; late the bins from 10.51 on
    assert (r["kernel_early"], r["kernel_late"]) == (1.0, 0.25)
    assert (r["twin_early"], r["twin_late"]) == (pytest.approx(1 / 9), pytest.approx(1 / 9))


def test_a_twin_told_an_empty_path_handshake_leaves_bbr_small_until_its_first_probe_rtt(tmp_path):
    # Told that bbr's handshake took 12 us (an empty path), the twin's bbr holds that min RTT
    # until its first PROBE_RTT, 10 s on: its window is the few segments of its allowances, so
    # reno has far more of the link than beside the untold twin, whose bbr measured its first
    # RTT behind reno's queue. Told a handshake behind the queue (30 ms), the twin is as untold.
    told = pair_start.rows_of(_run(tmp_path, 0.012))[0]
    plain = net.sim_case(("reno", "bbr"), 14.0, 1, 50e-6, gap=net.RECORDED_PAIR_START_GAP_S)["flows"]
    r, b = (net.mean_after(f["trace"], net.QUICK_WARM_S, 10.51, False) for f in plain)
    assert told["told_early"] > 3 * (r / b)
    (tmp_path / "run").rename(tmp_path / "old")
    queued = pair_start.rows_of(_run(tmp_path, 30.0))[0]
    assert queued["told_early"] < 2 * (r / b)
