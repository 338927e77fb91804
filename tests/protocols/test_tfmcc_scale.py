"""tfmcc-scale: the RFC 4654 §4.5 expectation it compares with, its per-round counting, and its
quick run (10^2 and 10^3 receivers)."""

import json
import subprocess
import sys

import numpy as np
import pandas as pd

from castlab.experiments.tfmcc.declared import ABLATIONS, READINGS, WINDOW_SETTING
from castlab.experiments.tfmcc.scale import (ABLATION, ABLATION_CONFIG, DECLARED, FLOOR_BPS, TFMCC_CONFIG,
                                             expected_reports, first_clr_after, floor_reports, mean_rate, min_rate,
                                             round_counts, time_near_floor)


def _monte_carlo(n, bound, delay, trials, rng):
    """The model drawn: n timers t = max(1 + ln x / ln N, 0) (units of T, x uniform in (0, 1]),
    the ones firing within `delay` of the first report."""
    out = np.empty(trials)
    for k in range(trials):
        x = 1.0 - rng.random(n)  # (0, 1]
        t = np.maximum(1.0 + np.log(x) / np.log(bound), 0.0)
        out[k] = np.count_nonzero(t <= t.min() + delay)
    return out.mean()


def test_expectation_matches_the_timer_drawn():
    rng = np.random.default_rng(7)
    for n, bound in [(100, 1e4), (3000, 1e4), (20_000, 1e4), (50, 100.0)]:
        mc = _monte_carlo(n, bound, 1 / 6, 4000, rng)
        assert abs(expected_reports(n, bound) - mc) < 0.05 * mc, (n, bound, mc)


def test_expectation_edges():
    assert abs(expected_reports(1) - 1.0) < 1e-6 and expected_reports(0) == 0.0
    # without a suppression delay only the first timer reports (plus ties at t = 0)
    assert abs(expected_reports(1000, delay=0.0) - 1.0) < 0.15
    # above the bound the timers at t = 0 alone give n/N
    assert expected_reports(100_000) > 100_000 / 1e4
    # below the bound it grows slowly: 100 -> 10,000 receivers well under 2x
    assert expected_reports(9_999) < 2 * expected_reports(99)


def test_round_counts_bins_non_clr_reports_by_round():
    s = 1_000_000_000
    rec = {"round_time_ns": np.array([0, 2, 4, 6, 9]) * s,
           "fb_time_ns": np.array([1, 3, 3, 3, 4, 5, 7, 7, 8, 10]) * s,
           "fb_from_clr": np.array([0, 0, 1, 0, 0, 0, 0, 1, 0, 0], dtype=np.uint8)}
    # rounds from 2 s: [2,4) has 3, 3 (one CLR); [4,6) 4, 5; [6,9) 7, 8 (7 once by the CLR); 10 s after the last
    assert round_counts(rec, 2.0).tolist() == [2, 2, 2]
    assert round_counts(rec, 0.0).tolist() == [1, 2, 2, 2]
    assert round_counts(rec, 8.0).size == 0


def test_first_clr_after():
    rec = {"receivers": ["a", "b"], "clr_time_ns": np.array([1e9, 5e9, 7e9]), "clr_receiver": np.array([1, 0, 1])}
    assert first_clr_after(rec, "b", 2.0) == 7.0 and first_clr_after(rec, "a", 6.0) == float("inf")
    assert first_clr_after(rec, "zz", 0.0) == float("inf")


def test_runs_the_declared_window_and_the_ablation_beside_it():
    # the RFC as written, one reading; the ablation is not one of them
    assert list(READINGS[WINDOW_SETTING]) == [DECLARED]
    assert "windows_over_rmax" not in TFMCC_CONFIG
    assert ABLATION in ABLATIONS and ABLATION not in READINGS[WINDOW_SETTING]
    assert ABLATION_CONFIG["windows_over_rmax"] is True


def test_rate_over_time_and_the_floor():
    s = 1_000_000_000
    # 100 kb/s from 0, 1 kb/s (the floor) from 10 s, 400 kb/s from 20 s
    rec = {"rate_time_ns": np.array([0, 10, 20]) * s, "rate_bps": np.array([1e5, FLOOR_BPS, 4e5]),
           "fb_time_ns": np.array([5, 11, 12, 25]) * s, "fb_rate_bps": np.array([FLOOR_BPS, FLOOR_BPS, 2e5, 3e5])}
    assert FLOOR_BPS == 1000.0  # one 1000-byte packet per 8 s
    assert mean_rate(rec, 5.0, 25.0) == (5 * 1e5 + 10 * 1e3 + 5 * 4e5) / 20
    assert mean_rate(rec, 12.0, 18.0) == 1e3
    assert min_rate(rec, 0.0, 30.0) == 1e3 and min_rate(rec, 21.0, 30.0) == 4e5
    assert time_near_floor(rec, 0.0, 30.0) == 10.0 and time_near_floor(rec, 15.0, 30.0) == 5.0
    assert floor_reports(rec, 0.0) == 2 and floor_reports(rec, 6.0) == 1


def test_quick_run_counts_rounds_and_follows_the_worsened_path(tmp_path):
    out = tmp_path / "tfmcc-scale"
    r = subprocess.run([sys.executable, "-m", "castlab", "reproduce", "tfmcc-scale", "--quick", "--out", str(out)],
                       capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr
    s = json.loads((out / "summary.json").read_text())
    assert s["experiment"] == "tfmcc-scale"
    assert all(isinstance(c["holds"], bool) for c in s["claims"])
    for f in ["scale.csv", "tfmcc_scale.png", "tfmcc_scale.svg"]:
        assert (out / f).stat().st_size > 100, f
    t = pd.read_csv(out / "scale.csv")
    assert sorted(t["n"]) == [100, 100, 1000, 1000]
    assert sorted(t["window"]) == sorted([DECLARED, DECLARED, ABLATION, ABLATION])
    decl, abl = t[t["window"] == DECLARED], t[t["window"] == ABLATION]
    claims = {c["id"]: c for c in s["claims"]}
    # the claims read the declared rows alone
    for n in (100, 1000):
        c, worst = claims[f"clr-follows-the-worsened-path-N{n}"], decl[decl["n"] == n]["follow_s"].max()
        # never CLR (inf) is written as no number, and fails
        assert c["ours"] == worst if np.isfinite(worst) else (c["ours"] is None or not np.isfinite(c["ours"]))
        assert c["holds"] == bool(worst <= 10.0)
    # a claim that does not hold names the outputs that show why, declared beside ablation
    for c in s["claims"]:
        if not c["holds"]:
            assert "scale.csv" in c["explanation"] and ABLATION in c["explanation"], c["id"]
    for _, row in decl.iterrows():
        # suppression under the RFC's window too: far fewer reports per round than receivers
        assert row["rounds"] >= 1 and row["reports_per_round"] < row["n"] / 5
        assert 0.0 <= row["near_floor_s"] <= 45.0 and row["min_rate_bps"] >= FLOOR_BPS
    for _, row in abl.iterrows():
        # whole rounds after the warm-up (T = 6 R_max, well under a second here), each with a report
        assert row["rounds"] >= 20
        assert 1.0 <= row["reports_per_round"] <= row["max_reports_per_round"]
        # suppression: far fewer reports per round than receivers
        assert row["reports_per_round"] < row["n"] / 5
        # the receiver behind the lossier detour becomes CLR after the onset
        assert np.isfinite(row["follow_s"]) and row["follow_s"] >= 0.0


def test_a_run_in_its_own_process_gives_the_same_row(monkeypatch):
    # runs from OWN_PROCESS_FROM receivers go to a child process; its row comes back as JSON and
    # must be the row of the same run in place, value for value and type for type (inf included)
    from castlab.experiments.tfmcc import scale

    monkeypatch.setattr(scale, "OWN_PROCESS_FROM", 100)
    here = scale._measure_here(2, 100, 6.0)
    child = scale.measure(2, 100, 6.0)
    assert here.keys() == child.keys()
    for k, v in here.items():
        w = child[k]
        assert type(w) in (type(v), float) and (w == v or (v != v and w != w)), (k, v, w)
    # the victim never becomes CLR in 6 s (its link fails at 30 s): inf survives the round trip
    assert child["follow_s"] == float("inf")
    # below the threshold the run stays in this process
    monkeypatch.setattr(scale, "_measure_in_own_process", lambda *a: (_ for _ in ()).throw(AssertionError(a)))
    assert scale.measure(2, 99, 0.5)["n"] == 99


def test_a_failed_own_process_run_is_an_error_naming_the_run(monkeypatch):
    from castlab.experiments.tfmcc import scale

    monkeypatch.setattr(scale, "OWN_PROCESS_FROM", 10)
    try:
        scale.measure(0, 20, -1.0)  # a negative duration: the child refuses the scenario
    except RuntimeError as e:
        assert "20 receivers" in str(e) and "exit status" in str(e)
    else:
        raise AssertionError("a failed child run must raise")
