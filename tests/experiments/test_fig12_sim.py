"""LE-SBCC's Fig. 12 as a full simulation (lesbcc-fig12-sim): the packet-level run of Fig. 11's
star, the ratio of its LEs passed to the direct drive's with an interval, the verdict rule of
the comparison claim, and the quick form, whose direct curve is lesbcc-fig12's."""

import json
import math

import numpy as np
import pandas as pd
import pytest
from scipy.stats import t as student

import castlab.experiments.lesbcc.figures as XF
import castlab.experiments.lesbcc.scenarios as XS
from castlab.experiments import REGISTRY
from castlab.experiments.common import write_summary


def test_ratio_interval_by_hand():
    # full 9, 11: mean 10, variance 2; direct 4, 6: mean 5, variance 2. Relative variances of
    # the means: 2 / (2 · 10²) = 0.01 and 2 / (2 · 5²) = 0.04; Welch's degrees of freedom
    # 0.05² / (0.01² + 0.04²) = 1.4706; half-width t · 2 · √0.05.
    r, lo, hi = XF.ratio_interval(np.array([9.0, 11.0]), np.array([4.0, 6.0]))
    half = student.ppf(0.975, 0.05 ** 2 / (0.01 ** 2 + 0.04 ** 2)) * 2 * math.sqrt(0.05)
    assert r == 2.0
    assert (lo, hi) == pytest.approx((2 - half, 2 + half))
    # one seed has no interval
    assert all(math.isnan(x) for x in XF.ratio_interval(np.array([1.0]), np.array([1.0, 2.0])))


@pytest.mark.parametrize("r, lo, hi, verdict", [
    (1.05, 0.95, 1.08, "holds"),
    (1.05, 0.95, 1.15, "undecided"),  # the ratio in the band, its interval reaching above it
    (1.15, 1.12, 1.18, "fails"),
    (0.85, 0.80, 0.89, "fails"),
    (1.15, 1.05, 1.25, "undecided"),  # the ratio above the band, its interval reaching into it
    (float("nan"), float("nan"), float("nan"), "fails"),
])
def test_band_verdict(r, lo, hi, verdict):
    assert XF.band_verdict(r, lo, hi, 0.10) == verdict


def test_full_run_reports_every_loss_of_the_worst_receiver_and_its_repeats():
    r = XS.fig12_run(1000, 1, 0.10)
    assert r["complete"] and r["odata"] == 6000 and r["queue_drops"] == 0
    # one receiver: Max-LPRF passes every LE (max X_i / Σ X_i = 1), and every NAK is an LI
    assert r["les_passed"] == r["les"] == r["worst_les"]
    assert r["worst_lis"] == r["worst_naks"] == r["lis"]
    # 10 % of 6000 ODATA lost (Binomial: sd 23), each lost packet NAKed once, and again for
    # every repair of it that is lost too: p / (1 - p) = 0.11 more NAKs per loss (about 67)
    assert 485 <= r["worst_gaps"] <= 715
    assert 30 <= r["worst_naks"] - r["worst_gaps"] <= 110
    # the RTT samples are the path's 100 ms plus the wait for the next packet that shows the gap
    assert 0.1 < r["rtt_sample_median_s"] < 0.2


def test_every_receiver_has_the_session_from_its_first_packet(monkeypatch):
    # The joins must reach the source before it sends: a receiver whose first packet is the
    # k-th NAKs the k before it at once, a gap it did not lose to its link. 100 packets to 100
    # receivers at 2 % lose 200 (Binomial: sd 14); joining late would add about 2 per receiver.
    import castlab
    sims = []

    def spy(*a, **k):
        sims.append(castlab.Simulator(*a, **k))
        return sims[-1]

    monkeypatch.setattr(XS, "Simulator", spy)
    r = XS.fig12_run(1000, 101, 0.10, packets=100)
    assert r["complete"] and r["queue_drops"] == 0
    gaps = sum(sims[0].pgm_receiver_stats(a)["gaps"] for a in range(1, 101))
    assert 130 <= gaps <= 270


def test_full_run_is_deterministic_and_does_not_depend_on_its_slicing(monkeypatch):
    a = XS.fig12_run(7, 11, 0.20, "slot")
    monkeypatch.setattr(XS, "FIG12_STEP_S", 7.0)
    b = XS.fig12_run(7, 11, 0.20, "slot")
    # the cost goes on to the end of the step in which the run completed; nothing else may
    for k in ("wall_s", "cpu_s", "events"):
        a.pop(k), b.pop(k)
    assert a == b


def test_quick_form_writes_both_curves_and_its_direct_curve_is_lesbcc_fig12s(tmp_path):
    sim, direct = tmp_path / "sim", tmp_path / "direct"
    sim.mkdir(), direct.mkdir()
    res = REGISTRY["lesbcc-fig12-sim"].run(sim, 1, quick=True)
    write_summary(sim, REGISTRY["lesbcc-fig12-sim"], 1, res, 0.0)
    for f in res.files:
        assert (sim / f).exists(), f
    s = json.loads((sim / "summary.json").read_text())
    assert {c["id"] for c in s["claims"]} == {"sim-vs-direct-10pct", "sim-vs-direct-20pct", "sim-complete",
                                              "sim-no-queue-drops"}
    for c in s["claims"]:
        if c["id"].startswith("sim-vs-direct"):
            assert c["kind"] == "derived" and [r["reading"] for r in c["readings"]] == ["window", "slot"]
            if not c["holds"]:
                assert "fig12_sim_vs_direct.csv" in c["explanation"]
    cost = s["params"]["full_run_cost"]
    assert [x["receivers"] for x in cost] == [1, 11, 101]
    assert all(x["runs"] == 2 * 2 * 3 and x["events"] > 0 for x in cost)
    agg = pd.read_csv(sim / "fig12_sim.csv")
    assert set(agg["method"]) == {"direct", "full"}
    full = pd.read_csv(sim / "fig12_sim_runs.csv")
    assert len(full) == 2 * 2 * 3 * 3 and (full["complete"]).all()
    assert not any(c.startswith(("wall_s", "cpu_s", "events")) for c in full.columns)
    # the direct drive's curve is lesbcc-fig12's own, point for point
    REGISTRY["lesbcc-fig12"].run(direct, 1, quick=True)
    theirs = pd.read_csv(direct / "fig12.csv")
    ours = agg[agg["method"] == "direct"].drop(columns="method").reset_index(drop=True)
    theirs = theirs[theirs["receivers"] <= 101].reset_index(drop=True)
    pd.testing.assert_frame_equal(ours[theirs.columns], theirs)
    cmp = pd.read_csv(sim / "fig12_sim_vs_direct.csv")
    assert len(cmp) == 2 * 2 * 3
    assert (cmp["ratio"] - cmp["full_mean"] / cmp["direct_mean"]).abs().max() < 1e-12


def test_full_form_stops_at_1001_receivers_unless_asked(monkeypatch):
    monkeypatch.delenv("CASTLAB_FIG12_SIM_MAX", raising=False)
    ns, seeds = XF._fig12_sim_setup(False)
    assert ns == [1, 11, 101, 1001] and seeds == 10
    monkeypatch.setenv("CASTLAB_FIG12_SIM_MAX", "10001")
    assert XF._fig12_sim_setup(False)[0] == [1, 11, 101, 1001, 2501, 5001, 7501, 10001]
    assert XF._fig12_sim_setup(True)[0] == [1, 11, 101]
    for bad in ("many", "0"):
        monkeypatch.setenv("CASTLAB_FIG12_SIM_MAX", bad)
        with pytest.raises(ValueError, match="CASTLAB_FIG12_SIM_MAX"):
            XF._fig12_sim_setup(False)


def test_counts_by_kind_leave_the_run_as_it_is_and_add_up():
    cost = ("events", "wall_s", "cpu_s")
    plain = XS.fig12_run(1000, 5, 0.2, packets=200)
    counted = XS.fig12_run(1000, 5, 0.2, packets=200, counts=True)
    k = counted.pop("by_kind")
    assert {c: v for c, v in plain.items() if c not in cost} == {c: v for c, v in counted.items() if c not in cost}
    assert k["total_events"] == counted["events"]
    # RFC 3208 §5.2: one multicast NCF per NAK; every NAK reaches the source (one LI each)
    assert k["ncf"]["sent"] == k["nak"]["sent"] == k["nak"]["delivered"] == counted["lis"] > 0
    assert k["odata"]["sent"] == 200 and k["rdata"]["sent"] == counted["rdata"] > 0
    for kind in ("odata", "rdata", "ncf"):
        # every copy reaches the router; 2 % to 20 % of the 5 receivers' copies are lost
        assert 0.75 * 5 * k[kind]["sent"] < k[kind]["delivered"] < 5 * k[kind]["sent"]
    # the agents' starts, timers and joins: at least the 6 agents' starts (a queue drop would
    # break the hop arithmetic and show here as a shortfall)
    assert counted["queue_drops"] == 0 and k["other"]["events"] >= 6
