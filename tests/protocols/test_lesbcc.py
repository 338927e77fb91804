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
                                  "lesbcc-fig16", "lesbcc-fig20", "lesbcc-fig19"])
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
    assert names == {f"lesbcc-fig{k}" for k in (6, 7, 10, 12, 13, 14, 16, 19, 20)} | {"lesbcc-fig12-sim",
                                                                                  "lesbcc-fig21-sim",
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
    # one row per (reading, seed), rows out of the grid's order; the means per reading are
    # 0.5 (56 ms), 1.0 (112 ms), 0.3 (280 ms) and 0.7 (56 ms slot), by hand
    vals = {"280 ms": [0.2, 0.3, 0.4], "56 ms": [0.4, 0.5, 0.6], "56 ms slot": [0.7, 0.7, 0.7],
            "112 ms": [0.98, 1.0, 1.02]}
    return pd.DataFrame([{"reading": r, "seed": k, "x": v} for r, vs in vals.items() for k, v in enumerate(vs)])


def test_reading_claim_holds_only_when_every_reading_holds():
    df = _synthetic_readings_frame()
    c = XF.reading_claim("c", "s", "range", (0.8, 2.0), df, "x", "ratio", explanation="why (t.csv: x)")
    # ours is the primary reading's mean (56 ms, window), the readings in the grid's order
    assert c.ours == pytest.approx(0.5)
    assert [r["reading"] for r in c.readings] == ["56 ms", "112 ms", "280 ms", "56 ms slot"]
    assert [r["verdict"] for r in c.readings] == ["fails", "holds", "fails", "fails"]
    # 112 ms meets 0.8..2 but the others do not: reading-dependent, not held, and the cause is kept
    assert c.verdict == "reading-dependent" and not c.holds and c.explanation == "why (t.csv: x)"
    # the primary reading's seeds and 95 % t interval end its statement: sd 0.1, t(0.975, 2) = 4.303
    half = 4.303 * 0.1 / np.sqrt(3)
    assert f"[mean of 3 seeds; 95 % t interval {0.5 - half:.3g}..{0.5 + half:.3g}]" in c.statement
    every = XF.reading_claim("e", "s", "at_least", (0.05,), df, "x", "ratio", explanation="why")
    assert every.verdict == "holds" and every.explanation == ""
    none = XF.reading_claim("n", "s", "at_least", (1.5,), df, "x", "ratio")
    assert none.verdict == "fails"
    # a reading whose interval reaches both sides of the bound is undecided (280 ms: 0.3 ± 0.25)
    und = XF.reading_claim("u", "s", "at_least", (0.25,), df[df["reading"] == "280 ms"], "x", "ratio")
    assert und.verdict == "undecided"
    # a universal statement goes by the worst seed at each reading: the mean of these 10 seeds
    # (0.54, interval up to 0.63) is under 0.7, the worst seed (0.9) is not
    ten = pd.DataFrame({"reading": "56 ms", "seed": range(10), "x": [0.5] * 9 + [0.9]})
    assert XF.reading_claim("w", "s", "at_most", (0.7,), ten, "x", "ratio").verdict == "holds"
    w = XF.reading_claim("w", "s", "at_most", (0.7,), ten, "x", "ratio", worst="max")
    assert w.verdict == "fails" and w.ours == 0.9
    # within, as fig6's counts use it
    assert XF.reading_claim("p", "s", "within", (1.0,), df[df["reading"] == "112 ms"], "x", "n",
                            rel_tol=0.1).verdict == "holds"


def test_experiments_take_their_readings_from_the_one_declaration():
    from castlab.experiments import lesbcc as L
    li2le = list(L.READINGS["LI2LE"])
    delays = list(L.READINGS["Fig. 5's delays"])
    default = config_defaults("lesbcc")["li2le_reading"]
    assert li2le[0] == default  # the primary reading is the scheme's default
    # the module's readings are the declaration's, primary first
    assert list(XF.LI2LE_READINGS) == li2le and list(XF.DELAYS) == delays
    assert list(XF.MC_N_READINGS) == [v for v, _ in L.READINGS["the chain's N"].values()]
    assert [kw["packet_bytes"] for kw in XF.fig21_grid().values()] == \
        [v for v, _ in L.READINGS["§5's packet size"].values()] * len(li2le)
    want = {(tuple(sorted(L.READINGS["Fig. 5's delays"][d][0].items())), L.READINGS["LI2LE"][li][0])
            for d in delays for li in li2le}
    assert XF._grid_params(XF.fig5_grid())["open_settings"] == {"LI2LE": li2le, "Fig. 5's delays": delays}

    def asked(kws):
        return {(tuple(sorted(kw["topo"].items())), (kw.get("main_kw") or {}).get("li2le_reading", default))
                for kw in kws}

    # every Fig. 5 experiment's paper runs (its cases, read as data) ask for exactly the declared
    # grid, each set-up of them (fig7: its claimed cases, not the full cascade, a derived control
    # at the primary reading; fig13 and fig20: the paper's unlimited TCP window, not ns-2's;
    # fig14 and fig16: not their ablations at the primary reading)
    paper = [(XF.FIG6, lambda p: True), (XF.FIG7, lambda p: p["case"] in XF.FIG7_CLAIMED),
             (XF.FIG13, lambda p: p["tcp_window"] == "unlimited"), (XF.FIG14, lambda p: not p["ablation"]),
             (XF.FIG16, lambda p: not p["ablation"]), (XF.FIG20, lambda p: p["tcp_window"] == "unlimited")]
    for fig, is_paper in paper:
        setups = {}
        for c in fig.cases(False):
            if is_paper(c.params):
                key = tuple(sorted((k, v) for k, v in c.params.items() if k not in ("kw", "reading", "trace")))
                setups.setdefault(key, []).append(c.params["kw"])
        assert setups and all(asked(kws) == want for kws in setups.values()), fig.name


def test_rewritten_claims_can_fail():
    # fig14: 'converges much faster with RED': RED at most half DropTail's time
    pair = pd.DataFrame([{"reading": r, "seed": k, "srtt_converge_s_red": red, "srtt_converge_s_droptail": dt}
                         for r, red, dt in (("56 ms", 10.0, 40.0), ("112 ms", 5.0, 30.0)) for k in range(3)])
    assert XF.fig14_converges_claim(pair).verdict == "holds"
    slower = pair.assign(srtt_converge_s_red=pair["srtt_converge_s_red"] * 2.5)  # 25 of 40 s: faster, not much
    assert XF.fig14_converges_claim(slower, "why (x.csv)").verdict == "reading-dependent"
    assert XF.fig14_converges_claim(pair.assign(srtt_converge_s_droptail=0.0)).verdict == "fails"
    # fig16: 'its RTT would be biased higher': the main SRTT above the paths' mean
    runs = pd.DataFrame([{"reading": r, "seed": k, "main_srtt_mean": m + 0.001 * k, "paths_srtt_mean": 0.12}
                         for r, m in (("56 ms", 0.15), ("112 ms", 0.2)) for k in range(3)])
    assert XF.fig16_rtt_claim(runs, False).verdict == "holds"
    assert XF.fig16_rtt_claim(runs.assign(main_srtt_mean=0.1), True).verdict == "fails"
    # fig19: 'suppresses all the LIs from the worst-loss receiver' at every point of the figure
    rows = [{"li2le_reading": li, "split": "(20,80)", "receivers": n, "mode": mode, "seed": k,
             "worst_lis": 240 if mode == "none" else 12, "odata": 6000}
            for li in XF.LI2LE_READINGS for n in (5, 40) for mode in ("none", "complete") for k in range(2)]
    c, pts = XF.fig19_suppress_claim(pd.DataFrame(rows))
    assert c.verdict == "holds" and pts["complete_over_none"].max() == pytest.approx(0.05)
    rows[-1]["worst_lis"] = 240 * 2 - 12  # one point of one reading: the mean share is half of none's
    c, _ = XF.fig19_suppress_claim(pd.DataFrame(rows))
    assert c.verdict == "reading-dependent" and "40 receivers" in c.explanation


def test_every_reading_of_fig5_runs_each_seed_in_one_map(monkeypatch):
    calls = []
    monkeypatch.setattr(XS, "fig5_at", lambda kw, seed: calls.append((kw, seed)) or (kw["topo"], seed))
    grid = XF.fig5_grid()
    got = XS.runs_at(grid, [3, 4], duration=9.0, main_kw={"li2le": False})
    assert list(got) == list(grid)
    for name, kw in grid.items():
        assert got[name] == [(kw["topo"], 3), (kw["topo"], 4)]
    assert len(calls) == 2 * len(grid) and all(kw["duration"] == 9.0 for kw, _ in calls)
    # the case's source keywords are kept, a reading's are added; the window reading adds none
    assert {tuple(sorted(kw["main_kw"].items())) for kw, _ in calls} == {
        (("li2le", False),), (("li2le", False), ("li2le_reading", "slot"))}
    assert all("unicast_kw" not in kw for kw, _ in calls if "li2le_reading" not in kw["main_kw"])
    assert list(XF.fig5_grid(quick=True)) == ["56 ms", "56 ms slot"]


def test_fig7_full_cascade_asks_for_fig6s_runs():
    """The full cascade of lesbcc-fig7 is lesbcc-fig6's primary reading, case for case and seed for
    seed: the same fig5_run keywords, so one run-cache entry serves both under --all."""
    six = [(c.params["kw"], c.seed) for c in XF.FIG6.cases(False) if c.params["reading"] == XF.DELAY_PRIMARY]
    full = [(c.params["kw"], c.seed) for c in XF.FIG7.cases(False) if c.params["case"] == "full cascade"]
    assert full == six and len(six) == XF.FIG5_SEEDS
