"""RLM from Python: the bindings (records, status, config, windowed loss, input errors) and
quick runs of the RLM experiments (McCanne, Jacobson, Vetterli, SIGCOMM 96, §4)."""

import importlib.util
import json
import shutil
import sys

import numpy as np
import pandas as pd
import pytest
from pathlib import Path

import castlab
from castlab.experiments import REGISTRY
from castlab.experiments.common import over_seeds, write_summary
from castlab.experiments.figure import drive
from castlab.experiments.rlm import figures as XF
from castlab.experiments.rlm import levels as XL
from castlab.experiments.rlm import metrics as XM
from castlab.experiments.rlm import topology as XT

RATES = [32e3 * 2**m for m in range(6)]


def _topology1(seed=1, start=5.0, **kw):
    sim = castlab.Simulator(seed=seed)
    sim.add_node("S")
    sim.add_node("R")
    sim.add_link("S", "R", 1.5e6, 0.010, queue_limit_pkts=20)
    groups = [sim.add_group("S") for _ in RATES]
    control = sim.add_group("S")
    sim.add_layered_source("S", groups, RATES)
    a = sim.add_rlm_receiver("R", groups, control, start=start, **kw)
    return sim, a, groups, control


@pytest.fixture(scope="module")
def run300():
    sim, a, _, _ = _topology1(record="arrivals")
    sim.run(300.0)
    return sim, a


def test_defaults_are_the_papers_constants():
    sim, a, _, _ = _topology1()
    c = sim.rlm_config(a)
    # §4: α = 2, β = 2/3, k1 = 1, k2 = 2, g1 = g2 = 0.25, T_J^min = 5 s, T_J^max = 600 s
    assert (c["alpha"], c["k1"], c["k2"], c["g1"], c["g2"], c["t_min"], c["t_max"]) == (2, 1, 2, 0.25, 0.25, 5, 600)
    assert c["beta"] == pytest.approx(2 / 3, abs=1e-15)
    assert sim.rlm_config(sim.add_rlm_receiver("R", [0, 1], 6, alpha=3.0, t_min=2.0))["alpha"] == 3.0


def test_announcements_heard_are_kept_only_with_trace_full():
    """Two receivers on one session hear each other's join announcements: with trace="full"
    each announcement heard is a row; by default none is kept, and the runs are the same."""
    runs = {}
    for trace in ("off", "full"):
        sim = castlab.Simulator(seed=3)
        for n in ("S", "X", "R0", "R1"):
            sim.add_node(n)
        sim.add_link("S", "X", 1.5e6, 0.010, queue_limit_pkts=20)
        groups = [sim.add_group("S") for _ in RATES]
        control = sim.add_group("S")
        sim.add_layered_source("S", groups, RATES)
        kw = {} if trace == "off" else {"trace": "full"}
        rx = []
        for i, start in enumerate((1.0, 2.0)):
            sim.add_link("X", f"R{i}", 1.5e6, 0.010, queue_limit_pkts=20)
            rx.append(sim.add_rlm_receiver(f"R{i}", groups, control, start=start, **kw))
        sim.run(120.0)
        runs[trace] = [sim.rlm_records(a) for a in rx]
    assert sim.rlm_config(rx[0])["trace"] == "full"
    for off, full in zip(runs["off"], runs["full"]):
        assert len(off["heard_level"]) == 0 and len(off["heard_time_ns"]) == 0
        # the other receiver's experiments, each heard once
        assert len(full["heard_level"]) >= 3
        for k in ("level_time_ns", "level", "exp_start_ns", "loss_time_ns", "supp_time_ns", "shared_time_ns"):
            assert np.array_equal(off[k], full[k]), k
    # each receiver heard exactly the other's announcements
    for me, other in ((0, 1), (1, 0)):
        heard = runs["full"][me]["heard_level"]
        assert sorted(heard.tolist()) == sorted(runs["full"][other]["exp_level"].tolist())


def test_records_are_consistent(run300):
    sim, a = run300
    r = sim.rlm_records(a)
    lv, t = r["level"], r["level_time_ns"]
    assert lv[0] == 1 and t[0] == 5_000_000_000  # starts at the base layer at its start time
    assert np.all(np.diff(t.astype(np.int64)) >= 0)
    assert np.all(np.abs(np.diff(lv.astype(int))) == 1)  # one layer at a time
    assert lv.max() == 6 and sim.rlm_status(a)["level"] == lv[-1]
    assert len(r["arr_time_ns"]) == r["received"] and r["lost"] == r["loss_count"].sum() > 0
    n = len(r["exp_start_ns"])
    assert n > 0 and all(len(r[k]) == n for k in ("exp_level", "exp_outcome", "exp_end_ns", "exp_detect_ns"))
    failed = r["exp_outcome"] == 2
    # a failed experiment's detection sample is the time from its start to the congestion
    assert failed.any() and np.all(r["exp_detect_ns"][failed] > 0)
    assert np.all(r["exp_end_ns"][failed] >= r["exp_start_ns"][failed])
    assert set(np.unique(r["trans_to"])) <= {0, 1, 2, 3}
    # the engine's level timeline is the receiver's own record
    tl = sim.level_timeline()
    mine = tl["agent"] == a
    assert np.array_equal(tl["time_ns"][mine], t) and np.array_equal(tl["level"][mine], lv)
    st = sim.rlm_status(a)
    assert st["state"] in "SHMD" and st["receivers_estimate"] == 1 and len(st["join_timer_means"]) == 6
    # level 6 keeps failing: its join-timer has backed off above the minimum
    assert st["join_timer_means"][5] > 5.0


def test_worst_window_loss_matches_the_generic_metric(run300):
    sim, a = run300
    r = sim.rlm_records(a)
    ev = pd.concat([pd.DataFrame({"t": r["loss_time_ns"], "rcv": 0, "lost": r["loss_count"], "k": 0}),
                    pd.DataFrame({"t": r["arr_time_ns"], "rcv": 1, "lost": 0, "k": 1})]).sort_values(["t", "k"])
    for w in (1.0, 10.0, 100.0):
        ours = sim.rlm_worst_window_loss(a, w)
        ref = castlab.worst_window_loss(*(ev[c].astype(np.int64).tolist() for c in ("t", "rcv", "lost")), w)
        assert ours == pytest.approx(ref)
    # longer windows average the experiments' congestion over more clean time
    assert sim.rlm_worst_window_loss(a, 1.0) > sim.rlm_worst_window_loss(a, 10.0) > sim.rlm_worst_window_loss(a, 100.0)
    overall = r["lost"] / (r["lost"] + r["received"])
    assert sim.rlm_worst_window_loss(a, 1000.0) == pytest.approx(overall)


def test_windows_online_read_the_same_as_from_arrivals(run300):
    # the same run with the arrivals not kept and the windows computed online instead
    sim_full, a_full = run300
    sim, a, _, _ = _topology1(windows=[1.0, 10.0, 100.0])
    sim.run(300.0)
    r, full = sim.rlm_records(a), sim_full.rlm_records(a_full)
    assert len(r["arr_time_ns"]) == 0 and r["received"] == full["received"] > 0
    assert np.array_equal(r["level_time_ns"], full["level_time_ns"]) and r["lost"] == full["lost"] > 0
    assert sim.rlm_config(a)["record"] == "summary" and sim.rlm_config(a)["windows"] == [1.0, 10.0, 100.0]
    for w in (1.0, 10.0, 100.0):
        assert sim.rlm_worst_window_loss(a, w) == sim_full.rlm_worst_window_loss(a_full, w)  # exactly


@pytest.mark.parametrize("kw, field", [
    ({"alpha": 1.0}, "alpha"),
    ({"beta": 1.5}, "beta"),
    ({"g1": 0.0}, "g1"),
    ({"loss_threshold": 1.0}, "loss_threshold"),
    ({"t_min": -1.0}, "t_min"),
    ({"t_max": 1.0}, "t_max"),
    ({"start": -2.0}, "start"),
    ({"member_timeout_intervals": 0}, "member_timeout_intervals"),
    ({"member_limit": 0}, "member_limit"),
    ({"member_limit": -1}, "member_limit"),
    ({"control_size_bytes": -5}, "control_size_bytes"),
    ({"session_bandwidth_bps": float("nan")}, "session_bandwidth_bps"),
    ({"data_groups": []}, "data_groups"),
    ({"data_groups": [0, 0]}, "data_groups"),
    ({"data_groups": [0, 99]}, "data_groups"),
    ({"control_group": 0}, "control_group"),
    ({"control_group": -1}, "control_group"),
    ({"node": "nowhere"}, "node"),
])
def test_bad_receiver_input_names_the_field(kw, field):
    sim, _, groups, control = _topology1()
    args = {"node": "R", "data_groups": groups, "control_group": control, **kw}
    with pytest.raises(ValueError, match=field):
        sim.add_rlm_receiver(**args)


def test_bad_queries_name_the_field():
    sim, a, _, _ = _topology1(windows=[10.0])
    sink = sim.add_sink("R")
    with pytest.raises(ValueError, match="agent"):
        sim.rlm_records(sink)  # not an RLM receiver
    with pytest.raises(ValueError, match="agent"):
        sim.rlm_status(999)
    with pytest.raises(ValueError, match="window"):
        sim.rlm_worst_window_loss(a, 0.0)
    with pytest.raises(ValueError, match="window.*record=.arrivals"):
        sim.rlm_worst_window_loss(a, 1.0)  # not configured, and no arrivals to compute it from
    assert np.isnan(sim.rlm_worst_window_loss(a, 10.0))  # configured, nothing received yet
    with pytest.raises(ValueError, match="windows"):
        sim.add_rlm_receiver("R", [0, 1], 6, windows=[1.0, 0.0])
    with pytest.raises(ValueError, match="record"):
        sim.add_rlm_receiver("R", [0, 1], 6, record="everything")


def test_helpers():
    # cumulative 32, 96, 224, 480, 992, 2016 kb/s
    assert XT.optimal_level(1.5e6) == 5 and XT.optimal_level(750e3) == 4 and XT.optimal_level(10e3) == 1
    t = np.array([0.0, 10, 20, 30, 31, 50, 60])
    lv = np.array([1, 2, 3, 2, 3, 4, 3])
    assert XL.settle_time_s(t, lv, 3) == 31.0  # last time it came back to 3 and stayed at >= 3
    assert np.isnan(XL.settle_time_s(t, lv, 5))
    # two pairs in 3 Mb/s: 2016 + 992 does not fit; 2016 + 480 = 2496 is the best that does
    assert XM.best_packing_bps(2, 3.0e6) == 2_496_000
    assert XM.best_packing_bps(2, 2.0e6) == 1_984_000  # 2016 alone leaves no room for the other pair
    assert XM.best_packing_bps(1, 2.1e6) == 2_016_000


def _reproduce(name, tmp_path):
    exp = REGISTRY[name]
    out = tmp_path / name
    out.mkdir()
    res = exp.run(out, 1, quick=True)
    s = write_summary(out, exp, 1, res, 0.0)
    for f in res.files:
        assert (out / f).stat().st_size > 0, f
    assert json.loads((out / "summary.json").read_text())["experiment"] == name
    for c in s["claims"]:
        assert set(c) == {"id", "statement", "paper_value", "ours", "unit", "tolerance", "holds", "kind",
                          "explanation", "paper_inconsistent", "verdict", "readings", "revised"}
        assert isinstance(c["holds"], bool) and c["kind"] in ("paper", "derived", "variant", "sanity")
    return out, {c["id"]: c for c in s["claims"]}


def test_excursions_and_the_predicted_experiment_length():
    t = np.array([0.0, 10.0, 20.0, 20.5, 40.0, 41.0, 41.2, 60.0])
    lv = np.array([1, 5, 6, 5, 6, 6, 5, 6])
    # stays above 5 from t_from = 15 s on: 20-20.5, 40-41.2 (two records, one stay), 60-end
    assert XL.excursions_above_s(t, lv, 5, 15.0, 62.0) == pytest.approx([0.5, 1.2, 2.0])
    assert XL.excursions_above_s(t, lv, 5, 30.0, 62.0) == pytest.approx([1.2, 2.0])
    # 10 ms: 2 x 10 ms + 160 kb filling at 2016 - 1500 kb/s + 160 kb draining at 1.5 Mb/s
    assert XM.predicted_experiment_s(0.01) == pytest.approx(0.02 + 160 / 516 + 160 / 1500)
    m, note = over_seeds([1.0, 2.0, 3.0])
    assert m == 2.0 and "mean of 3 seeds" in note and "-0.484..4.48" in note  # 2 ± 4.303 / sqrt(3)


def test_all_rlm_experiments_registered():
    assert {f"rlm-fig{k}" for k in range(8, 14)} | {"rlm-red"} <= set(REGISTRY)


def test_fig8_quick_reaches_level_5_with_short_experiments(tmp_path):
    out, claims = _reproduce("rlm-fig8", tmp_path)
    lv = pd.read_csv(out / "level.csv")
    assert lv["level"].max() == 6 and 5 in set(lv["level"])
    seeds = pd.read_csv(out / "fig8_seeds.csv")
    assert len(seeds) == 2 and set(seeds["held_level"]) == {5}
    assert claims["reaches-optimal"]["ours"] == 1.0 and claims["reaches-optimal"]["holds"]
    assert "mean of 2 seeds" in claims["time-to-optimal"]["statement"]
    assert claims["experiment-under-1s"]["holds"]
    assert claims["time-to-optimal"]["ours"] < 90


def test_fig9_quick_loss_grows_with_latency(tmp_path):
    out, claims = _reproduce("rlm-fig9", tmp_path)
    w = pd.read_csv(out / "fig9.csv")
    assert list(w["delay_s"]) == XF.FIG9_DELAYS_QUICK_S
    # every curve: the largest latency loses more than the smallest, and longer windows less
    for col in ("worst_1s", "worst_10s", "worst_100s"):
        assert w[col].iloc[-1] > w[col].iloc[0]
    assert np.all(w["worst_1s"] >= w["worst_10s"]) and np.all(w["worst_10s"] >= w["worst_100s"])
    assert claims["loss-grows-with-latency"]["holds"]


def test_fig10_quick_every_receiver_at_the_optimum(tmp_path):
    out, claims = _reproduce("rlm-fig10", tmp_path)
    rx = pd.read_csv(out / "fig10_receivers.csv")
    assert sorted(rx["size"].unique()) == XF.FIG10_SIZES_QUICK and len(rx) == sum(XF.FIG10_SIZES_QUICK)
    assert claims["all-reach-optimum"]["holds"]
    assert claims["w100-about-1pct-largest"]["ours"] < 0.02


def test_fig13_quick_shares(tmp_path):
    out, claims = _reproduce("rlm-fig13", tmp_path)
    sh = pd.read_csv(out / "fig13_shares.csv")
    # the shared link carries what it can: at least the best packing of whole levels (to 10 %)
    assert np.all(sh["aggregate_bps"] <= sh["capacity_bps"] * 1.001)
    assert claims["utilisation"]["holds"]


def test_fig11_quick_convergence_times(tmp_path):
    out, claims = _reproduce("rlm-fig11", tmp_path)
    rx = pd.read_csv(out / "fig11.csv")
    conv = rx["convergence_s"].dropna()
    # a receiver needs at least four join-timers (each >= T_min/2 = 2.5 s) to climb from 1 to 5
    assert len(conv) > 0.9 * len(rx) and conv.min() >= 10.0
    assert claims["grows-with-size"]["ours"] > 0


def test_fig12_quick_each_set_at_its_own_optimum(tmp_path):
    out, claims = _reproduce("rlm-fig12", tmp_path)
    rx = pd.read_csv(out / "fig12_receivers.csv")
    assert set(zip(rx["group"], rx["optimal"])) == {("B", 5), ("B/2", 4)}
    assert claims["set-B/2-optimum"]["holds"] and claims["set-B-optimum"]["holds"]


def test_red_weight_gives_the_stated_memory():
    """rlm-red's RED weight comes from a memory of about 27 ms at 1.5 Mb/s: RED's average forgets
    over about 1/w_q packet arrivals, 1000-byte packets take 5.33 ms, so w_q is 1/5 (0.02 would be
    a 50-packet, 0.27 s memory)."""
    packet_s = 8 * XT.PACKET_BYTES / XT.LINK_BPS
    memory_s = packet_s / XT.RED_PARAMS["red_w_q"]
    assert abs(memory_s - 0.027) < packet_s / 2, memory_s
    assert XT.RED_PARAMS["red_w_q"] in XF.RED_WQ_READINGS


def test_red_quick_compares_both_queues(tmp_path):
    out, claims = _reproduce("rlm-red", tmp_path)
    d = pd.read_csv(out / "red.csv")
    assert set(d["queue"]) == {"droptail", "red"}
    assert {f"red-improves-{w}s" for w in (1, 10, 100)} == set(claims)


@pytest.mark.parametrize("detection, judged_right", [({}, True),
                                                     ({"detection_init": 2.0, "detection_dev_init": 0.5}, False)])
def test_initial_detection_time_outlasts_a_slow_queue(detection, judged_right):
    """§3.2: the detection-time estimator starts "conservative (i.e., large)". With a 300-packet
    queue on topology (1), level 6's excess (2,016 - 1,500 kb/s) takes ~6 s to overflow it, the
    same order as topology (4)'s 720-packet queue at 32 pairs. Every experiment to level 6 must
    be judged failed; with the earlier 2 s ± 0.5 s initial estimate (a 3 s timer) each one was
    declared successful before its congestion arrived (and left fig13's link overloaded)."""
    sim = castlab.Simulator(seed=1)
    sim.add_node("S")
    sim.add_node("R")
    sim.add_link("S", "R", 1.5e6, 0.010, queue_limit_pkts=300)
    groups = [sim.add_group("S") for _ in RATES]
    control = sim.add_group("S")
    sim.add_layered_source("S", groups, RATES, jitter=True)
    a = sim.add_rlm_receiver("R", groups, control, start=5.0, **detection)
    sim.run(300.0)
    r = sim.rlm_records(a)
    done = (r["exp_level"] == 6) & (r["exp_outcome"] != 0)  # finished experiments to level 6
    assert done.sum() >= 3
    assert bool(np.all(r["exp_outcome"][done] == 2)) is judged_right
    if judged_right:  # the measured detection time: two link delays plus ~6 s of queue filling
        assert np.all((r["exp_detect_ns"][done] > 4e9) & (r["exp_detect_ns"][done] < 9e9))

# ---------------------------------------------------------------- against ns-2's own RLM
# Debian's ns2 (2.35) embeds McCanne's RLM receiver (MMG/ns); tests/ns2/rlm.tcl drives it on
# topology (1) and tests/ns2/rlm_compare.py reduces both simulators' runs to the same numbers.

NEEDS_NS = pytest.mark.skipif(shutil.which("ns") is None, reason="ns-2 not installed (Debian: apt-get install "
                              "ns2); the comparison with ns-2's own RLM needs the `ns` command")


def _rlm_compare():
    spec = importlib.util.spec_from_file_location("rlm_compare", Path(__file__).parents[1] / "ns2" / "rlm_compare.py")
    mod = importlib.util.module_from_spec(spec)
    sys.modules.setdefault("rlm_compare", mod)  # dataclasses look their module up there
    spec.loader.exec_module(mod)
    return mod


@NEEDS_NS
@pytest.mark.parametrize("delay", [0.01, 1.0])
def test_rlm_matches_ns2_rlm_on_topology1(delay):
    """castlab's receiver against ns-2's (as shipped, with the top-layer re-arm) on the same
    link, source, start time and metric, 4 seeds x 300 s; medians over seeds.

    castlab configured with ns-2's constants (β 0.75, T_max 60 s, initial detection time
    5 s ± 2 s) must match ns-2 within the seed-to-seed spread of 4 short runs: worst-case loss
    in 1 s and 10 s windows within a factor 1.5, the length of a join-experiment (time above
    the optimum: two link delays plus the queue's build-up, §4.3) within 25 %. With the paper's
    constants (castlab's defaults) only what the constants do not set is compared: the 1 s
    window (one experiment's drops) and the experiment's length. The 10 s window is not: it
    holds two experiments when the join-timer is short, and how soon the second comes depends
    on those constants (docs/fidelity/rlm.md, "Against ns-2's own RLM")."""
    C = _rlm_compare()
    rows = {"ns2": [], "castlab": [], "castlab-ns2const": []}
    for seed in (1, 2, 3, 4):
        base = C.run_ns2(delay, 300.0, seed)
        rows["ns2"].append(C.summarize(base))
        rows["castlab"].append(C.summarize(C.run_castlab(delay, 300.0, seed, base.start_s)))
        rows["castlab-ns2const"].append(C.summarize(C.run_castlab(delay, 300.0, seed, base.start_s,
                                                                  **C.CASTLAB_WITH_NS2_CONSTANTS)))
    df = {k: pd.DataFrame(v) for k, v in rows.items()}
    ns2 = df["ns2"]
    # all settle at the optimum, 5 layers, and probe level 6 after reaching it
    for d in df.values():
        assert (d["held_level"] == 5).all() and (d["exps_above"] >= 1).all()
    for variant, cols in (("castlab-ns2const", ("worst_1s", "worst_10s")), ("castlab", ("worst_1s",))):
        ours = df[variant]
        for col in cols:
            ratio = ours[col].median() / ns2[col].median()
            assert 1 / 1.5 <= ratio <= 1.5, (variant, col, ours[col].median(), ns2[col].median())
        assert ours["mean_above_s"].median() == pytest.approx(ns2["mean_above_s"].median(), rel=0.25), variant


@NEEDS_NS
def test_ns2_rlm_as_shipped_never_reprobes_the_top_layer():
    """The note in docs/fidelity/rlm.md on ns-2's MMG: it arms the next join-timer only when one fires, so
    after a failed experiment to the top layer (6 of 6) no timer is left and the receiver stays
    at 5 for good; rlm.tcl's rearm=1 re-arms it after the drop."""
    C = _rlm_compare()
    shipped = C.run_ns2(0.01, 600.0, 1, start_s=30.0, rearm=False)
    rearmed = C.run_ns2(0.01, 600.0, 1, start_s=30.0, rearm=True)
    assert np.count_nonzero(shipped.level == 6) == 1 and shipped.level[-1] == 5
    assert np.count_nonzero(rearmed.level == 6) >= 3


@NEEDS_NS
def test_rlm_matches_ns2_rlm_on_topology2():
    """Topology (2), the shared-learning set-up of figs 10 and 11: one source, the shared
    1.5 Mb/s link S-X, 10 receivers on their own links from X, starts uniform on [30, 120] s
    (ns-2's draws, reused by castlab), 4 seeds x 300 s. castlab with ns-2's constants (β 0.75,
    a fixed T_max of 60 s, initial detection 5 s ± 2 s) against ns-2's MMG (rearm=1).

    Stated band, as on topology (1): every receiver of both converges to and holds the optimum
    (5 layers); the worst-case 1 s loss, max over receivers per run, median over seeds, within
    a factor 1.5; the median convergence time (pooled over receivers and seeds) within 25 %.
    Not compared: the 10 s and 100 s windows. They hold several receivers' experiments to
    level 6, and ns-2's receivers run a third more of those than castlab's with the same
    constants (ns-2 keeps its join-timer running outside S), so on 600 s runs castlab's 10 s window is 15-25 % and its 100 s window 28-43 %
    below ns-2's (docs/fidelity/rlm.md, "Against ns-2's own RLM")."""
    C = _rlm_compare()
    rx, runs = C.compare_tree([(10, 0)], [1, 2, 3, 4], 300.0, variants=("ns2", "castlab-ns2const"))
    for v, d in rx.groupby("variant"):
        assert len(d) == 40 and np.isfinite(d["convergence_s"]).all(), v
        assert (d["held_level"] == 5).all(), v
    med = runs.groupby("variant")["worst_1s"].median()
    assert 1 / 1.5 <= med["castlab-ns2const"] / med["ns2"] <= 1.5, med.to_dict()
    conv = rx.groupby("variant")["convergence_s"].median()
    # climbing 1 -> 5 takes at least four join-timers of >= T_min / 2 each, and with ten
    # receivers many of them are suppressed behind the others' lower experiments
    assert conv["ns2"] > 10.0
    assert conv["castlab-ns2const"] == pytest.approx(conv["ns2"], rel=0.25), conv.to_dict()


def test_records_name_their_codes():
    """RLM's state, cause and outcome codes come with their names (index = code)."""
    sim = castlab.Simulator(seed=3)
    for n in ("S", "R", "X"):
        sim.add_node(n)
    sim.add_link("S", "R", 1.5e6, 0.01, queue_limit_pkts=20)
    sim.add_link("R", "X", 1.5e6, 0.01, queue_limit_pkts=20)
    gs = [sim.add_group("S") for _ in range(6)]
    ctl = sim.add_group("S")
    sim.add_layered_source("S", gs, [32e3 * 2**m for m in range(6)])
    a = sim.add_rlm_receiver("X", gs, ctl, start=1.0)
    sim.run(120.0)
    r = sim.rlm_records(a)
    names = r["names"]
    assert names["trans_from"] == ["Steady", "Hysteresis", "Measurement", "Drop"]
    assert names["trans_cause"] == ["Loss", "LossRate", "DetectionTimer"]
    assert names["exp_outcome"] == ["Running", "Success", "Failed"]
    assert len(r["trans_cause"]) > 0 and all(0 <= c < len(names["trans_cause"]) for c in r["trans_cause"])
    assert {names["exp_outcome"][o] for o in r["exp_outcome"]} <= {"Running", "Success", "Failed"}


def _t_note(values) -> str:
    """The statement's note, computed here with scipy rather than through castlab.stats. Both
    claims read below are of quantities that cannot be negative (a loss fraction, a ratio of
    rates): a lower bound under 0 is reported as 0, with a note."""
    from scipy.stats import t

    v = np.asarray(values, float)
    half = t.ppf(0.975, len(v) - 1) * v.std(ddof=1) / np.sqrt(len(v))
    lo = v.mean() - half
    clipped = " (lower bound clipped at 0)" if lo < 0 else ""
    return f"[mean of {len(v)} seeds; 95 % t interval {max(lo, 0.0):.3g}..{v.mean() + half:.3g}{clipped}]"


@pytest.mark.parametrize("jobs", [1, 2])
def test_fig13_claims_are_means_of_per_seed_statistics(tmp_path, monkeypatch, jobs):
    """Each claim's statistic is taken per seed over that seed's sweep and the claim is
    decided on the mean over seeds, with the t interval in the statement. Two seeds in quick
    mode; the per-seed values are recomputed here from the per-receiver and per-run tables. With
    two worker processes (map_runs) every CSV is the same bytes as the serial run's."""
    from castlab.parallel import workers

    monkeypatch.setattr(XF, "SEEDS_QUICK", 2)
    with workers(jobs):
        out = tmp_path / f"j{jobs}"
        out.mkdir()
        res = drive(XF.FIG13, out, 3, quick=True)
    claims = {c.id: c for c in res.claims}
    rx, sh = pd.read_csv(out / "fig13_receivers.csv"), pd.read_csv(out / "fig13_shares.csv")
    assert sorted(rx["seed"].unique()) == [3, 4] and sorted(sh["seed"].unique()) == [3, 4]
    # per seed: the max over pair counts of the max over receivers of the 100 s worst-case loss
    w100 = [rx[rx["seed"] == s]["worst_100s"].max() for s in (3, 4)]
    # per seed: the smallest pair's tail rate over 224 kb/s (3 layers' nominal rate)
    starved = [sh[sh["seed"] == s]["min_pair_bps"].min() / 224e3 for s in (3, 4)]
    # both are universal statements: decided on the worst seed, the mean shown beside it
    assert claims["w100-under-1pct"].ours == pytest.approx(max(w100), rel=1e-12)
    assert claims["no-pair-starved"].ours == pytest.approx(min(starved), rel=1e-12)
    for cid, vals in (("w100-under-1pct", w100), ("no-pair-starved", starved)):
        assert "worst of 2 seeds" in claims[cid].statement and f"mean {np.mean(vals):.3g}" in claims[cid].statement
    assert claims["w100-under-1pct"].holds == (max(w100) <= 0.01)
    assert claims["no-pair-starved"].holds == (min(starved) >= 1.0)
    if jobs == 2:
        serial = tmp_path / "serial"
        serial.mkdir()
        monkeypatch.setattr(XF, "SEEDS_QUICK", 2)
        drive(XF.FIG13, serial, 3, quick=True)
        files = sorted(p.name for p in serial.glob("*.csv"))
        assert "fig13_seeds.csv" in files
        assert all((serial / f).read_bytes() == (out / f).read_bytes() for f in files)


def test_fig9_per_seed_statistics_of_one_seed():
    """fig9's per-seed statistics on a hand-made sweep: the 100 s maximum below 1 s, the 1 s
    minimum up to 100 ms, the knee, the latency ratio and the experiment-length deviation."""
    delays = [0.001, 0.01, 0.1, 1.0, 5.0]
    pred = [XM.predicted_experiment_s(d) for d in delays]
    run = pd.DataFrame({"delay_s": delays, "worst_1s": [0.05, 0.07, 0.11, 0.5, 0.6],
                        "worst_10s": [0.01, 0.01, 0.02, 0.2, 0.5], "worst_100s": [0.002, 0.002, 0.004, 0.02, 0.1],
                        "above_mean_s": [pred[0] * 1.1, pred[1] * 0.95, pred[2], pred[3] * 1.5, np.nan]})
    st = XF._fig9_seed_stats(run, delays)
    assert st["w100_max_below_1s"] == 0.004 and st["w1_min_to_100ms"] == 0.05
    assert st["w10_largest_over_10ms"] == pytest.approx(50.0)
    assert st["experiment_max_dev"] == pytest.approx(0.1)  # 1 s and above are not "low delay"
    assert st["knee_1s"] == pytest.approx(1.0)  # the 1 s curve: log-log slope 0.66 before 1 s, 0.11 after


def test_a_sign_over_seeds_holds_only_when_its_interval_excludes_zero():
    from castlab.experiments.rlm.figures import _shown_positive
    one_positive = pd.Series([-0.2, -0.1, 0.3, -0.05, -0.15])
    assert _shown_positive(one_positive, "x", "s", "u").verdict in ("fails", "undecided")
    # mean 0.26 > 0, but the t interval reaches below 0: undecided, not holds
    assert _shown_positive(pd.Series([0.4, -0.1, 0.5, 0.2, 0.3]), "x", "s", "u").verdict == "undecided"
    c = _shown_positive(pd.Series([0.4, 0.35, 0.5, 0.45, 0.3]), "x", "s", "u")
    assert c.holds and c.ours == pytest.approx(0.4)
    assert _shown_positive(pd.Series([-0.4, -0.35, -0.5, -0.45, -0.3]), "x", "s", "u").verdict == "fails"


