"""LE-SBCC from Python (Thapliyal et al.): the bindings (source, PGM receiver, unicast flows, NAK
aggregation, the synthetic LI drive, TFRC's average loss interval), input errors, and quick
runs of the experiments."""

import json

import numpy as np
import pandas as pd
import pytest

import castlab
from castlab._native import config_defaults
from castlab.functions import lesbcc_synthetic, tfrc_average_interval
from castlab.experiments import REGISTRY
from castlab.experiments.common import with_seed_interval, within, write_summary
from castlab.experiments.lesbcc import figures as XF
from castlab.experiments.lesbcc import markov as XK
from castlab.experiments.lesbcc import metrics as XM
from castlab.experiments.lesbcc import scenarios as XS
from castlab.experiments.lesbcc import topology as XT


def _tree(seed=1, loss=0.03, packets=1500, n=4, aggregate=(), **src_kw):
    sim = castlab.Simulator(seed=seed)
    for name in ("src", "r1"):
        sim.add_node(name)
    sim.add_link("src", "r1", 100e6, 0.005, queue_limit_pkts=1000)
    g = sim.add_group("src")
    rx = []
    for i in range(n):
        h = f"h{i}"
        sim.add_node(h)
        sim.add_link("r1", h, 100e6, 0.010, queue_limit_pkts=1000, loss_ab=loss)
        rx.append(sim.add_pgm_receiver(h, group=g))
    for r in aggregate:
        sim.attach_nak_aggregator(r)
    src = sim.add_lesbcc_source("src", g, total_packets=packets, **src_kw)
    return sim, src, rx


def test_every_lost_packet_is_repaired_and_counts_agree():
    sim, src, rx = _tree()
    # SRTT comes down from the 200 ms initial estimate by the gain 1/8 (Appendix A), so the
    # source climbs slowly at first: 1500 packets take more than a minute
    sim.run(120.0)
    st = sim.lesbcc_stats(src)
    assert st["odata_sent"] == 1500 and st["rdata_sent"] > 0
    naks = 0
    for r in rx:
        s = sim.pgm_receiver_stats(r)
        assert s["complete"] and s["unique"] == 1500 and s["unrecoverable"] == 0
        assert s["gaps"] == s["repaired"] > 0
        naks += s["naks_sent"]
    # each NAK is an LI; the cascade only ever narrows the stream
    assert st["lis"] == naks
    assert st["lis"] >= st["les"] >= st["lprf_passed"] >= st["rate_reductions"] > 0
    assert sorted(st["receivers"]) == [f"h{i}" for i in range(4)]
    tr = sim.lesbcc_trace(src)
    assert len(tr["li_time_ns"]) == st["lis"]
    assert int((tr["li_outcome"] == 3).sum()) == st["rate_reductions"]
    assert np.all(np.diff(tr["rate_time_ns"].astype(np.int64)) >= 0)
    assert tr["rtt_used"].sum() == st["rtt_samples"]
    # SRTT ends near the tree's round trip plus loss detection and NAK back-off (~30-200 ms)
    assert 0.03 < st["srtt"] < 0.3


def test_defaults_are_the_papers_values():
    sim, src, _ = _tree()
    sim.run(0.001)
    st = sim.lesbcc_stats(src)
    assert st["rate_bps"] == 200e3 and st["srtt"] == 0.2  # §5.2.1 initial rate and RTT estimate


def test_switching_stages_off_changes_the_counts():
    full = lesbcc_synthetic([(1, 0.1, 0.1), (50, 0.02, 0.1)], 3000, 1)
    raw = lesbcc_synthetic([(1, 0.1, 0.1), (50, 0.02, 0.1)], 3000, 1, li2le=False, max_lprf=False)
    assert full["les"] < full["lis"] and full["lprf_passed"] < full["les"]
    assert raw["les"] == raw["lis"] == raw["lprf_passed"]
    # without the filters the source cuts far more often and ends much slower
    assert raw["rate_reductions"] > 2 * full["rate_reductions"]
    assert raw["mean_rate_bps"] < full["mean_rate_bps"]


def test_li2le_reading_switch_reaches_the_cascade():
    # One receiver at 10 % loss, 100 ms RTT: the window reading (Appendix A) gives 1 + p·x LIs per
    # LE, the slot reading (§2, §3.1.3) the chain's p·x / (1 − (1 − p)^x), about 1.15 against
    # 1.37 at x ≈ 3.7: the slot reading passes more LEs from the same LIs.
    window = lesbcc_synthetic([(1, 0.1, 0.1)], 6000, 1)
    slot = lesbcc_synthetic([(1, 0.1, 0.1)], 6000, 1, li2le_reading="slot")
    assert config_defaults("lesbcc")["li2le_reading"] == "window"
    assert slot["lis"] / slot["les"] < 1.25 < window["lis"] / window["les"]
    with pytest.raises(ValueError, match="li2le_reading"):
        lesbcc_synthetic([(1, 0.1, 0.1)], 100, 1, li2le_reading="rounds")


def test_synthetic_drive_is_deterministic_and_scales():
    a = lesbcc_synthetic([(1, 0.1, 0.1), (10000, 0.02, 0.1)], 6000, 7)
    b = lesbcc_synthetic([(1, 0.1, 0.1), (10000, 0.02, 0.1)], 6000, 7)
    assert a["lprf_passed"] == b["lprf_passed"] and a["lis"] == b["lis"]
    assert a["packets"] == 6000 and a["lis"] > 1_000_000
    # the worst receiver has the most LEs, and the number passed follows it
    les = a["les_per_receiver"]
    assert les.argmax() == 0
    assert abs(a["lprf_passed"] / les[0] - 1) < 0.2


def test_tfrc_average_interval_by_hand():
    assert tfrc_average_interval([], 5, i=1) is None
    assert tfrc_average_interval([4, 10, 7], 5, i=1) == pytest.approx(7.0)  # N < n: plain mean
    assert tfrc_average_interval([4, 10, 7], 5, i=0) == pytest.approx(26 / 4)
    v = [9, 3, 6, 8, 2, 20, 5, 4, 10, 7]  # N = 10 > n = 8: tail discounted by 0.95, 0.95^2
    expect = (sum(v[:8]) + 10 * 0.95 + 7 * 0.95**2) / (8 + 0.95 + 0.95**2)
    assert tfrc_average_interval(v, 0, i=1) == pytest.approx(expect)
    assert tfrc_average_interval(v[:8], 0, i=1) == pytest.approx(sum(v[:8]) / 8)  # N = n: α = 0


def test_aggregation_reduces_lis_and_keeps_reliability():
    # losses on the shared link make every receiver lose the same packets
    def run(aggregate):
        sim = castlab.Simulator(seed=4)
        for name in ("src", "r1", "r2"):
            sim.add_node(name)
        sim.add_link("src", "r1", 100e6, 0.005, queue_limit_pkts=1000)
        sim.add_link("r1", "r2", 100e6, 0.005, queue_limit_pkts=1000, loss_ab=0.03)
        g = sim.add_group("src")
        rx = []
        for i in range(4):
            sim.add_node(f"h{i}")
            sim.add_link("r2", f"h{i}", 100e6, 0.002, queue_limit_pkts=1000)
            rx.append(sim.add_pgm_receiver(f"h{i}", group=g, ncf_suppression=False))
        if aggregate:
            sim.attach_nak_aggregator("r2")
        src = sim.add_lesbcc_source("src", g, total_packets=1000)
        sim.run(60.0)
        assert all(sim.pgm_receiver_stats(r)["complete"] for r in rx)
        return sim, src
    sim_a, src_a = run(False)
    sim_b, src_b = run(True)
    agg = sim_b.nak_aggregator_stats("r2")
    assert agg["naks_forwarded"] == sim_b.lesbcc_stats(src_b)["lis"]
    assert agg["naks_suppressed"] > agg["naks_forwarded"]
    assert sim_b.lesbcc_stats(src_b)["lis"] < sim_a.lesbcc_stats(src_a)["lis"]


def test_unicast_flow_and_tfrc_policy():
    sim = castlab.Simulator(seed=2)
    for n in ("a", "r", "b"):
        sim.add_node(n)
    sim.add_link("a", "r", 10e6, 0.002, queue_limit_pkts=100)
    sim.add_link("r", "b", 1e6, 0.020, queue_limit_pkts=25)
    f1 = sim.add_lesbcc_unicast("a", "b")
    f2 = sim.add_lesbcc_unicast("a", "b", policy="tfrc")
    sim.run(60.0)
    s1, s2 = sim.lesbcc_stats(f1), sim.lesbcc_stats(f2)
    assert sim.pgm_receiver_stats(f1 - 1)["unrecoverable"] == 0
    assert s1["rate_reductions"] > 0 and s2["rate_reductions"] > 0
    assert s2["s_hat"] is not None and s2["s_hat"] > 1
    assert s1["odata_sent"] > 1000 and s2["odata_sent"] > 1000


def test_input_errors_name_the_field():
    sim, src, rx = _tree()
    with pytest.raises(ValueError, match="policy"):
        sim.add_lesbcc_source("src", 0, policy="cubic")
    with pytest.raises(ValueError, match="initial_rate_bps"):
        sim.add_lesbcc_source("src", 0, initial_rate_bps=-1.0)
    with pytest.raises(ValueError, match="total_packets"):
        sim.add_lesbcc_source("src", 0, total_packets=0)
    with pytest.raises(ValueError, match="tfrc_alpha"):
        sim.add_lesbcc_source("src", 0, tfrc_alpha=1.5)
    with pytest.raises(ValueError, match="group"):
        sim.add_lesbcc_source("src", 99)
    with pytest.raises(ValueError, match="nak_rpt_ivl"):
        sim.add_pgm_receiver("h0", group=0, nak_rpt_ivl=0.0)
    with pytest.raises(ValueError, match="hold"):
        sim.attach_nak_aggregator("r1", hold=-1.0)
    with pytest.raises(ValueError, match="agent"):
        sim.lesbcc_stats(rx[0])
    with pytest.raises(ValueError, match="agent"):
        sim.pgm_receiver_stats(src)
    with pytest.raises(ValueError, match="node"):
        sim.nak_aggregator_stats("r1")
    with pytest.raises(ValueError, match="classes"):
        lesbcc_synthetic([(1, 1.5, 0.1)])
    with pytest.raises(ValueError, match="packets"):
        lesbcc_synthetic([(1, 0.1, 0.1)], packets=0)


def test_markov_chain_by_hand():
    # N = 2: from 1, no loss (prob a) -> 2; from 2, loss (1 - a^2) -> 1. s(1) a = s(2)(1 - a^2).
    p = 0.3
    a = 1 - p
    x, s, le = XK.markov_stationary(p, 2)
    assert s[0] * a == pytest.approx(s[1] * (1 - a * a))
    assert s.sum() == pytest.approx(1.0)
    # non-bursty per-packet LE probability and the ratio
    p_li, ratio = XK.markov_ratio(p, 2, False)
    assert ratio == pytest.approx(p / ((s[0] * p + s[1] * (1 - a * a)) / (s[0] + 2 * s[1])))


@pytest.mark.parametrize("name", ["lesbcc-fig10", "lesbcc-fig12", "lesbcc-fig6", "lesbcc-fig21-sim",
                                  "lesbcc-tfrc-padhye", "lesbcc-fig7", "lesbcc-fig13", "lesbcc-fig14",
                                  "lesbcc-fig16", "lesbcc-fig20"])
def test_quick_experiments_write_their_files(tmp_path, name):
    exp = REGISTRY[name]
    res = exp.run(tmp_path, 1, quick=True)
    summary = write_summary(tmp_path, exp, 1, res, 0.0)
    for f in res.files:
        assert (tmp_path / f).exists(), f
    s = json.loads((tmp_path / "summary.json").read_text())
    assert s["claims"] and all(isinstance(c["holds"], bool) for c in s["claims"])
    # every failing paper claim says why, naming the output that shows it
    for c in s["claims"]:
        if c["kind"] == "paper" and not c["holds"]:
            assert ".csv" in c["explanation"], c["id"]
    assert summary["experiment"] == name
    # a wall-clock time would break the tables' byte identity: it is in summary.json only
    for f in res.files:
        if f.endswith(".csv"):
            assert not any(c.startswith("wall_s") for c in pd.read_csv(tmp_path / f).columns), f
    if name in ("lesbcc-fig13", "lesbcc-fig14", "lesbcc-fig16", "lesbcc-fig20", "lesbcc-fig21-sim"):
        w = s["params"]["run_wall_s"]
        assert w["total_s"] > 0 and w["total_s"] == pytest.approx(sum(w["per_run_s"]), abs=0.01)


def test_every_lesbcc_experiment_is_registered():
    names = {n for n in REGISTRY if n.startswith("lesbcc-")}
    assert names == {f"lesbcc-fig{k}" for k in (6, 7, 10, 12, 13, 14, 16, 19, 20)} | {"lesbcc-fig21-sim",
                                                                                  "lesbcc-tfrc-padhye"}


def test_simulation_receivers_report_every_loss_of_the_worst_receiver():
    # §2.1 / §3.3 "no LI aggregation": in the simulations every loss of the worst receiver must
    # reach the source as an LI. With §5.2.1's Linux receivers (100 ms back-off, NCF
    # suppression) the other receivers' NCFs hid a share of them.
    r = XS.fig19_run(7, 20, (80, 20), "none")
    assert r["worst_gaps"] > 150
    assert r["worst_lis"] == r["worst_naks"] >= r["worst_gaps"]
    old = XS.fig19_run(7, 20, (80, 20), "none", rx_kw={"nak_backoff_max": 0.1, "ncf_suppression": True})
    assert old["worst_naks"] < old["worst_gaps"]


def test_complete_aggregation_suppresses_the_slow_worst_receiver():
    # §3.3: with aggregation at Router 1 the worst receiver (4 %, longer RTT) loses the LIs
    # whose sequence numbers another receiver NAKed first, even after the repair passed.
    none = XS.fig19_run(3, 20, (80, 20), "none")
    full = XS.fig19_run(3, 20, (80, 20), "complete")
    # P(another of 19 receivers at 2 % lost the same packet) = 1 - 0.98^19 = 32 %
    assert full["worst_lis"] < 0.8 * none["worst_lis"]


@pytest.mark.parametrize("bursty", [False, True])
def test_monte_carlo_of_the_chain_matches_its_stationary_solution(bursty):
    # Playing the chain of §3.1.3 round by round must give the analytic p_li / p_le: a wrong
    # transition (e.g. halving to ⌈x/2⌉) or a wrong burst law moves one away from the other.
    n, p = 30, (0.05 if not bursty else 0.01)
    _, analytic = XK.markov_ratio(p, n, bursty)
    _, mc, mean_x = XK.markov_monte_carlo(p, n, bursty, rounds=60_000, seed=3)
    assert mc == pytest.approx(analytic, rel=0.03)
    # the mean packets per round is the sharper check: halving to ⌈x/2⌉ moves it 4-9 % here
    x, s, _ = XK.markov_stationary(p, n)
    assert mean_x == pytest.approx(float((x * s).sum()), rel=0.02)
    # and the bursty ratio is not the non-bursty one, so the check tells the models apart
    assert XK.markov_ratio(0.01, n, True)[1] > 1.5 * XK.markov_ratio(0.01, n, False)[1]


def test_srtt_convergence_ignores_scatter_but_not_a_level_shift():
    rng = np.random.default_rng(0)
    t = np.arange(0.0, 200.0, 0.1)
    # noisy around 0.1 s from the start (±30 % scatter in single samples): the bin medians settle at once
    noisy = 0.1 * (1 + rng.uniform(-0.3, 0.3, t.size))
    assert XM.converge_time(t, noisy) == 0.0
    # a level that moves from 0.2 s to 0.1 s at 42 s converges in the bin that starts at 40 s
    shift = np.where(t < 42.0, 0.2, 0.1)
    assert XM.converge_time(t, shift) == 40.0  # 30 of the 50 samples of [40, 45) are at the new level
    # from t = 0 with the initial estimate: samples at the final level that start only at 17 s
    # (the estimate 0.2 s until then, 0.4 s after) converge in the bin holding the first sample
    late = t[t >= 17.0]
    assert XM.converge_time(late, np.full(late.size, 0.4)) == 0.0  # back-filled: the old reading
    assert XM.converge_time(late, np.full(late.size, 0.4), initial=0.2) == 15.0
    assert XM.converge_time(late, np.full(late.size, 0.4), initial=0.4) == 0.0


def test_claims_over_seeds_report_the_student_t_interval():
    c = with_seed_interval(within("x", "s", 1.0, 1.0, "u", abs_tol=0.1, kind="sanity"), [0.9, 1.0, 1.1, 1.0, 1.0])
    # sd = sqrt(0.005), t(0.975, 4) = 2.776; the interval ends the statement, the tolerance is the rule's
    half = 2.776 * np.sqrt(0.005) / np.sqrt(5)
    assert c.statement == f"s [mean of 5 seeds; 95 % t interval {1 - half:.3g}..{1 + half:.3g}]"
    assert c.tolerance == "±0.1"


def _synthetic_readings_frame():
    # one row per (reading, seed), rows out of FIG5_READINGS' order; the means per reading are
    # 0.5 (56 ms), 1.0 (112 ms), 0.3 (280 ms) and 0.7 (500 ms), by hand
    vals = {"280 ms": [0.2, 0.3, 0.4], "56 ms": [0.4, 0.5, 0.6], "500 ms": [0.7, 0.7, 0.7], "112 ms": [0.9, 1.0, 1.1]}
    import pandas as pd
    return pd.DataFrame([{"reading": r, "seed": k, "x": v} for r, vs in vals.items() for k, v in enumerate(vs)])


def test_band_claim_is_built_from_every_reading_mean():
    df = _synthetic_readings_frame()
    c = XF.band_claim("c", "s", "range", (0.8, 2.0), df, "x", "ratio", explanation="why (t.csv: x)")
    # every reading's mean over its seeds, in the order of FIG5_READINGS
    assert c.ours == "0.3..1 (56 ms: 0.5, 112 ms: 1, 280 ms: 0.3, 500 ms: 0.7)"
    assert c.kind == "paper" and c.holds  # 112 ms meets 0.8..2 although 56 ms does not
    assert c.explanation == ""  # kept only on a failing claim
    # the 56 ms reading's mean and 95 % t interval: sd 0.1, t(0.975, 2) = 4.303
    half = 4.303 * 0.1 / np.sqrt(3)
    assert c.statement.endswith(f" [56 ms: mean of 3 seeds; 95 % t interval {0.5 - half:.3g}..{0.5 + half:.3g}]")
    assert c.tolerance == "band"
    # the same thresholds as the point claims: the band must reach the bound
    assert XF.band_claim("l", "s", "at_least", (1.0,), df, "x", "").holds
    assert not XF.band_claim("l", "s", "at_least", (1.01,), df, "x", "").holds
    assert XF.band_claim("m", "s", "at_most", (0.3,), df, "x", "").holds
    failing = XF.band_claim("m", "s", "at_most", (0.29,), df, "x", "", explanation="why (t.csv: x)")
    assert not failing.holds and failing.explanation == "why (t.csv: x)"
    assert not XF.band_claim("r", "s", "range", (1.01, 2.0), df, "x", "").holds
    # one reading (quick mode): the band is that reading alone
    one = XF.band_claim("q", "s", "range", (0.45, 0.55), df[df["reading"] == "56 ms"], "x", "")
    assert one.holds and one.ours == "0.5..0.5 (56 ms: 0.5)"


def test_every_reading_of_fig5_runs_each_seed_in_one_map(monkeypatch):
    calls = []
    monkeypatch.setattr(XS, "fig5_at", lambda kw, seed: calls.append((kw["topo"], seed, kw["duration"])) or
                        (kw["topo"], seed))
    got = XS.runs_at(XT.FIG5_READINGS, [3, 4], duration=9.0)
    assert list(got) == list(XT.FIG5_READINGS)
    for name, topo in XT.FIG5_READINGS.items():
        assert got[name] == [(topo, 3), (topo, 4)]
    assert len(calls) == 8 and all(d == 9.0 for _, _, d in calls)
    assert XF._readings(True) == {"56 ms": {}} and XF._readings(False) is XT.FIG5_READINGS
