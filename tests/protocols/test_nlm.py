"""NLM from Python (Nakauchi, Morikawa, Aoyama, §3-§4): the bindings (config, records, status,
loss meter, input errors), receiver-driven DROP_REQ for congestion between LMRs, and quick
runs of the nlm-fig9..13 experiments."""

import importlib.util
import json
import shutil
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import castlab
from castlab.experiments import REGISTRY
from castlab.experiments.common import write_summary
from castlab.experiments.nlm import figures as XF
from castlab.experiments.nlm import metrics as XM
from castlab.experiments.nlm import topology as XT

RATES = XT.LAYER_RATES_BPS


def test_defaults_are_table_2():
    c = castlab._native.config_defaults("nlm")
    assert (c["qmax"], c["qmin"], c["qweight"]) == (15, 3, 0.05)
    assert (c["add_intvl_min"], c["add_intvl_max"], c["drop_intvl"], c["detect_period"]) == (5, 80, 0.5, 5)
    assert (c["alpha"], c["beta"], c["loss_th"], c["ss_intvl"]) == (2.0, 0.75, 0.25, 0.1)
    assert c["sess_wait_per_session"] is False


def _line():
    sim = castlab.Simulator(seed=1)
    for n in ("S", "L", "R"):
        sim.add_node(n)
    sim.add_link("S", "L", 10e6, 0.01, queue_limit_pkts=20)
    sim.add_link("L", "R", 1e6, 0.01, queue_limit_pkts=20)
    return sim, sim.add_group("S")


@pytest.mark.parametrize("kw, field", [
    ({"config": {"qmax": 2.0}}, "qmax"),
    ({"config": {"beta": 1.0}}, "beta"),
    ({"config": {"ss_intvl": 0.0}}, "ss_intvl"),
    ({"config": {"nonsense": 1.0}}, "config"),
    ({"config": {"initial_layers": 1.5}}, "initial_layers"),
    ({"rates_bps": []}, "rates_bps"),
    ({"rates_bps": [1e5, -1.0]}, "rates_bps"),
    ({"group": 7}, "group"),
])
def test_bad_sender_input_names_the_field(kw, field):
    sim, g = _line()
    args = {"node": "S", "group": g, "rates_bps": RATES, **kw}
    with pytest.raises(ValueError, match=field):
        sim.add_nlm_sender(**args)


def test_bad_router_and_receiver_input_names_the_field():
    sim, g = _line()
    with pytest.raises(ValueError, match="group"):
        sim.add_nlm_sender("R", g, RATES)  # not the group's source
    with pytest.raises(ValueError, match="meter_channel"):
        sim.attach_lmr("L", meter_channel=sim.channel("S", "L"))  # not an output of L
    with pytest.raises(ValueError, match="qweight"):
        sim.attach_lmr("L", qweight=0.0)
    with pytest.raises(ValueError, match="layers"):
        sim.add_nlm_receiver("R", g, layers=0)
    with pytest.raises(ValueError, match="node"):
        sim.lmr_records("L")  # no LMR there


@pytest.fixture(scope="module")
def fig9():
    net = XT.Fig8("nlm", 1, 1, 1.5e6, [20.0])
    net.run(200.0, "")
    return net


def test_records_are_consistent(fig9):
    sim = fig9.sim
    r = sim.lmr_records("LMR1")
    for pre in ("lcur_", "req_", "dec_", "intvl_"):
        lens = {len(v) for k, v in r.items() if k.startswith(pre)}
        assert len(lens) == 1 and lens.pop() > 0, pre
    mine = r["lcur_oif"] == fig9.bott
    # one layer at a time at the bottleneck, between 1 and 5, first the registration at 1
    new, old = r["lcur_new"][mine].astype(int), r["lcur_old"][mine].astype(int)
    assert new[0] == 1 and r["lcur_cause"][mine][0] == 5
    assert np.all(np.abs(new[1:] - old[1:]) == 1) and new.min() >= 1 and new.max() == 5
    # every DROP decision lowered the largest L_cur by one; every ADD raised the smallest
    d = r["dec_oif"] == fig9.bott
    assert set(np.unique(r["dec_kind"][d])) == {2, 3}
    # add_intvl only ever doubles (failed ADD) or shrinks by 0.75 within [5, 80]
    iv = r["intvl_s"][r["intvl_oif"] == fig9.bott]
    assert iv.min() >= 5 and iv.max() <= 80
    prev = np.concatenate([[5.0], iv[:-1]])
    assert np.all(np.isclose(iv, np.minimum(prev * 2, 80)) | np.isclose(iv, np.maximum(prev * 0.75, 5)))
    st = sim.lmr_status("LMR1")
    (sess,) = st["sessions"]
    assert sess["prev"] == (2, 1000)  # the sender: node S0 (third node), first agent port
    assert sess["l_max"] == 5 and set(sess["l_cur"]) == {fig9.bott}
    sr = sim.nlm_sender_records(fig9.senders[0])
    assert sr["sess_sent"] == pytest.approx(2000, abs=1) and sr["data_withheld"] > 0
    rr = sim.nlm_receiver_records(fig9.receivers[0])
    assert rr["received"].shape[1] == 5 and rr["received"].sum() == rr["total_received"]
    assert rr["upstream"] == (1, 65001)  # LMR2, the UpID of the SESS it last received


def test_loss_meter_agrees_with_the_channel_counters(fig9):
    m = fig9.sim.loss_meter("LMR1")
    assert m["channel"] == fig9.bott and m["bin_s"] == 1.0
    f = m["flows"][0]
    cs = fig9.sim.channel_stats(fig9.bott)
    sess = fig9.sim.lmr_records("LMR1")["sess_processed"]
    # every data packet offered to the bottleneck queue is metered; the rest are SESS
    assert f["passed"].sum() + sess == cs["arrivals"]
    assert f["dropped"].sum() == cs["drops_forced"] == 0


def test_same_seed_same_records():
    def once():
        net = XT.Fig8("nlm", 4, 2, 1.7e6, [20.0, 60.0])
        net.run(120.0, "")
        r = net.sim.lmr_records("LMR1")
        return r["lcur_time_ns"].tolist(), r["req_time_ns"].tolist(), net.sim.engine_stats()["events"]
    assert once() == once()


def test_receivers_ask_for_drops_when_congestion_is_between_lmrs():
    """S - L1 - X - L2 - R with a 0.5 Mb/s link out of X, a plain router: no LMR sees the
    congestion, the receiver does (loss over loss_th) and its DROP_REQ goes through L2 and L1
    to the sender (§3.4)."""
    sim = castlab.Simulator(seed=2)
    for n in ("S", "L1", "X", "L2", "R"):
        sim.add_node(n)
    sim.add_link("S", "L1", 10e6, 0.01, queue_limit_pkts=20)
    sim.add_link("L1", "X", 10e6, 0.01, queue_limit_pkts=20)
    sim.add_link("X", "L2", 0.5e6, 0.01, queue_limit_pkts=20)
    sim.add_link("L2", "R", 10e6, 0.01, queue_limit_pkts=20)
    g = sim.add_group("S")
    tx = sim.add_nlm_sender("S", g, RATES)
    rx = sim.add_nlm_receiver("R", g, start=1.0)
    sim.attach_lmr("L1")
    sim.attach_lmr("L2")
    sim.run(200.0)
    rr = sim.nlm_receiver_records(rx)
    assert len(rr["req_time_ns"]) >= 2 and np.all(rr["over_loss"] > 0.25)
    assert set(rr["req_to"].tolist()) == {3}  # L2, the last LMR on the path (UpID of SESS)
    assert rr["req_copies"] == 50 * len(rr["req_time_ns"])  # each repeated for detect_period
    # the request reached the sender, which stopped sending layer 4 (4 layers: 0.8 Mb/s > 0.5)
    sr = sim.nlm_sender_records(tx)
    assert np.any((sr["level_cause"] == 2) & (sr["level"] == 3))
    # and the session settles at 3 layers with little loss
    rec, lost = rr["received"][120:], rr["lost"][120:]
    assert lost.sum() / (rec.sum() + lost.sum()) < 0.05
    assert rec[:, 4].sum() == 0 and rec[:, 2].sum() > 0


def test_experiments_are_registered():
    for n in ("nlm-fig9", "nlm-fig10", "nlm-fig11", "nlm-fig12", "nlm-fig13"):
        assert n in REGISTRY


@pytest.mark.parametrize("name", ["nlm-fig9", "nlm-fig10", "nlm-fig11", "nlm-fig12", "nlm-fig13"])
def test_quick_runs_write_data_plots_and_computed_claims(name, tmp_path):
    exp = REGISTRY[name]
    res = exp.run(tmp_path, 1, quick=True)
    s = write_summary(tmp_path, exp, 1, res, 0.0)
    assert s["claims"] and all(isinstance(c["holds"], bool) for c in s["claims"])
    for f in res.files:
        assert (tmp_path / f).stat().st_size > 0
    json.loads((tmp_path / "summary.json").read_text())
    if name == "nlm-fig9":
        # the paper's Figure 9 behaviour on the deterministic run (the experiment itself decides
        # over phase-randomised runs, where one lost packet's second can show): DROP_REQ ~41 s
        # in, add_intvl up to 80 s, no loss
        from dataclasses import replace

        from castlab.experiments.figure import drive
        (tmp_path / "det").mkdir()
        fig = replace(XF.FIG9, readings={"jittered sources": {"jitter": True}}, phase_s=0.0)
        det = drive(fig, tmp_path / "det", 1, quick=True)
        c = {x.id: x for x in det.claims}
        # two quick seeds give a t interval too wide to decide the DROP_REQ time: its mean is checked
        assert abs(c["drop-req-at-41s"].ours - 41.0) <= 2.5 and c["drop-req-at-41s"].verdict != "fails"
        assert c["add-intvl-max"].holds and c["nlm-zero-loss"].holds


def test_downstream_add_reqs_raise_l_cur_at_the_bottleneck_only_when_lmr2_is_an_lmr():
    """The mechanism behind Figure 13's loss (docs/fidelity/nlm.md, "Why ours differ"): with several sessions,
    LMR1's per-interface add_time keeps Figure 7 from rewriting SESS, LMR2 sees L_max = 5 and
    ADDs, and its ADD_REQs raise L_cur at LMR1's congested interface (Figure 6). With LMR2 a
    plain router no ADD_REQ reaches LMR1 and its own ADDs are the only raises."""
    starts = [20.0, 21.0, 22.0, 23.0, 24.0]
    lit = XT.Fig8("nlm", 1, 5, 5e6, starts)
    lit.run(200.0, "")
    plain = XT.Fig8("nlm", 1, 5, 5e6, starts, lmr2=False)
    plain.run(200.0, "")
    with pytest.raises(ValueError, match="node"):
        plain.sim.lmr_records("LMR2")
    a, b = XM.lcur_raises_by_cause(lit), XM.lcur_raises_by_cause(plain)
    assert a["add_req"] > a["add"] and b["add_req"] == 0 and b["add"] > 0
    worst = lambda net: max(np.nanmax(net.loss(i, 200.0)) for i in range(5))  # noqa: E731
    assert worst(lit) > 0.10 > 0.05 > worst(plain)


def test_rlm_drop_times_follow_each_stay_below_a_layer():
    t = np.array([0.0, 20.0, 50.0, 86.9, 103.3, 202.1, 218.6, 220.7])
    lv = np.array([0, 1, 5, 4, 3, 2, 3, 2])
    # layer 5 was dropped at 86.9 s, before 90 s, and the stay below 5 lasts past 90 s
    assert XM.rlm_drop_times(t, lv, 90.0) == {5: 86.9, 4: 103.3, 3: 202.1}
    assert XM.rlm_drop_times(t, lv, 219.0) == {5: 86.9, 4: 103.3, 3: 220.7}  # back at 3 from 218.6 s
    flat = XM.rlm_drop_times(np.array([0.0, 20.0]), np.array([0, 5]), 90.0)
    assert all(np.isnan(v) for v in flat.values())


def test_peak_window_loss():
    p = np.zeros((8, 2))
    d = np.zeros((8, 2))
    p[:, 0] = 10
    d[3, 0], d[4, 0], d[7, 0] = 5, 1, 2
    assert XM.peak_window_loss(p, d, 0, 1) == 0.5
    assert XM.peak_window_loss(p, d, 0, 2) == 0.3  # bins 3-4
    assert XM.peak_window_loss(p, d, 5, 1) == 0.2  # from bin 5 on
    assert np.isnan(XM.peak_window_loss(p, d, 0, 9))


def test_first_episode_counts_bins_over_the_threshold_until_a_quiet_stretch():
    loss = np.array([0.0] * 5 + [0.5, 0.2, 0.05, 0.3] + [0.0] * 10 + [0.4, 0.4])
    # from bin 5: 0.5, 0.2, (0.05), 0.3, then 10 quiet bins end it; the later two bins are another episode
    assert XM.first_episode_over(loss, 5) == 3.0
    assert XM.first_episode_over(loss, 5, quiet_bins=20) == 5.0
    assert XM.first_episode_over(np.array([np.nan, 0.2, np.nan]), 0) == 1.0  # NaN (nothing offered) is quiet
    assert XM.first_episode_over(np.zeros(4), 0) == 0.0


def test_first_time_at_or_below_reads_the_steps_exactly():
    t = np.array([0.0, 20.0, 50.0, 91.164, 120.5])
    lv = np.array([0, 1, 5, 2, 1])
    assert XM.first_time_at_or_below(t, lv, 90.0, 2) == 91.164
    assert XM.first_time_at_or_below(t, lv, 100.0, 2) == 100.0  # already at 2
    assert np.isnan(XM.first_time_at_or_below(t, lv, 90.0, 0))


def test_measures_in_coarser_bins_sum_the_meter_bins():
    """A run metered in 0.5 s bins gives, read in 1 s bins, what a 1 s meter gives."""
    fine = XT.Fig8("rlm", 3, 1, 1.6e6, [5.0], meter_bin_s=0.5)
    coarse = XT.Fig8("rlm", 3, 1, 1.6e6, [5.0])
    for net in (fine, coarse):
        net.run(40.0, "")
    for f in ("loss", "rate_bps", "goodput_bps"):
        np.testing.assert_array_equal(getattr(fine, f)(0, 40.0), getattr(coarse, f)(0, 40.0))
    assert len(fine.rate_bps(0, 40.0, bin_s=0.5)) == 80
    with pytest.raises(ValueError, match="whole multiple"):
        coarse.loss(0, 40.0, bin_s=0.5)


def test_lmr_records_name_their_codes():
    """The LMR's cause, request-event and verdict codes come with their names (index = code)."""
    sim, g = _line()
    sim.attach_lmr("L")
    sim.add_nlm_sender("S", g, RATES)
    sim.add_nlm_receiver("R", g, layers=len(RATES), start=1.0)
    sim.run(30.0)
    r = sim.lmr_records("L")
    names = r["names"]
    assert names["lcur_cause"] == ["Drop", "Add", "DropReq", "AddReq", "Sess", "Register"]
    assert names["req_event"] == ["Generated", "Repeated", "Forwarded", "Discarded"]
    assert names["intvl_reason"] == ["Success", "Congestion", "DropReq", "NoSess"]
    assert len(r["lcur_cause"]) > 0
    assert all(0 <= c < len(names["lcur_cause"]) for c in r["lcur_cause"])


# ---------------------------------------------------------------- against ns-2's own RLM
# tests/ns2/rlm.tcl (nlm=N) runs ns-2's MMG/ns on Figure 8's topology, the NLM authors'
# simulator; tests/ns2/nlm_rlm_compare.py reduces both simulators' receivers to the same numbers.

NEEDS_NS = pytest.mark.skipif(shutil.which("ns") is None, reason="ns-2 not installed (Debian: apt-get install "
                              "ns2); the comparison with ns-2's own RLM needs the `ns` command")


def _nlm_rlm_compare():
    path = Path(__file__).parents[1] / "ns2" / "nlm_rlm_compare.py"
    spec = importlib.util.spec_from_file_location("nlm_rlm_compare", path)
    mod = importlib.util.module_from_spec(spec)
    sys.modules.setdefault("nlm_rlm_compare", mod)
    spec.loader.exec_module(mod)
    return mod


@NEEDS_NS
def test_rlm_matches_ns2_rlm_on_nlm_figure8():
    """Figure 11's set-up (1.3 Mb/s of CBR from 90 s on B = 1.6 Mb/s), seeds 1-4, 300 s, and
    Figure 12's (two sessions on 1.7 Mb/s, starts 20 and 120 s), seeds 1-2, 600 s. ns-2's
    MMG/ns (rlm_param as shipped, rearm=1) against castlab's receiver configured as MMG
    (``NS2_MMG_RLM``, the NLM experiments' RLM side).

    Figure 11: the median over seeds of the time layer 4 is dropped agrees within 10 s, and in
    every seed of both, the first stay at level 3 after 90 s sees a receiver loss between 5 %
    and 25 %: enough to matter, under the 25 % threshold of the measurement state, which is
    why neither drops layer 3 at the paper's 130 s. Figure 12: in every seed of both, S1 holds
    5 layers longest over 300-600 s and S2 at most 3 (under its 0.8 Mb/s fair share)."""
    M = _nlm_rlm_compare()
    rows = {"ns2": [], "castlab": []}
    for seed in (1, 2, 3, 4):
        (a,) = M.run_ns2("fig11", seed, 300.0)
        (b,) = M.run_castlab("fig11", seed, 300.0)
        rows["ns2"].append(M.summarize(a))
        rows["castlab"].append(M.summarize(b))
    df = {k: pd.DataFrame(v) for k, v in rows.items()}
    assert abs(df["ns2"]["drop4_s"].median() - df["castlab"]["drop4_s"].median()) <= 10.0, df
    for k in df:
        assert df[k]["first_stay3_loss"].between(0.05, 0.25).all(), (k, df[k])
    for seed in (1, 2):
        for runs in (M.run_ns2("fig12", seed, 600.0), M.run_castlab("fig12", seed, 600.0)):
            s1, s2 = (M.summarize(r) for r in runs)
            assert s1["held_300_600"] == 5 and 1 <= s2["held_300_600"] <= 3, (seed, s1, s2)


def test_fig13_seeds_spread_over_workers_and_claims_are_means_of_per_seed_values(tmp_path):
    """nlm-fig13 runs its seeds (2 in quick mode) through map_runs. Every CSV is the
    same bytes with --jobs 1 and --jobs 2 and has no wall-time column; fig13_seeds.csv is
    recomputed here from fig13.csv, and each claim's reading is the mean over seeds."""
    import subprocess

    outs = {}
    for j in (1, 2):
        out = tmp_path / f"j{j}"
        r = subprocess.run([sys.executable, "-m", "castlab", "reproduce", "nlm-fig13", "--quick", "--jobs", str(j),
                            "--out", str(out)], capture_output=True, text=True, timeout=300)
        assert r.returncode == 0, r.stderr
        outs[j] = {p.name: p.read_bytes() for p in out.glob("*.csv")}
    assert set(outs[1]) == {"fig13.csv", "fig13_seeds.csv"} and outs[1] == outs[2]
    out = tmp_path / "j1"
    df, ms = pd.read_csv(out / "fig13.csv"), pd.read_csv(out / "fig13_seeds.csv")
    assert "wall_s" not in df.columns and sorted(df["seed"].unique()) == [1, 2] == list(ms["seed"])
    assert len(df) == 2 * len(XF.FIG13_N_QUICK) * 4
    for s in (1, 2):
        d, row = df[df["seed"] == s], ms[ms["seed"] == s].iloc[0]
        assert row["nlm_max_loss"] == d[d["proto"] == "nlm"]["max_loss"].max()
        assert row["lmr2_plain_max_loss"] == d[d["proto"] == XF.PLAIN_LMR2]["max_loss"].max()
        rl = d[d["proto"] == "rlm"].sort_values("n")
        rho = np.corrcoef(rl["n"].rank(), rl["max_loss"].rank())[0, 1]
        assert row["rlm_rho"] == pytest.approx(rho)
    claims = {c["id"]: c for c in json.loads((out / "summary.json").read_text())["claims"]}
    # on the worst seed under each declared reading of Figure 8's second router, LMR2 an LMR first
    about = claims["nlm-about-2pct"]
    assert about["ours"] == pytest.approx(ms["nlm_max_loss"].max())
    inner = about["readings"][0]["readings"]  # the quick form runs the primary source reading only
    assert [r["reading"] for r in inner] == list(XF.LMR2_READINGS)
    assert inner[1]["ours"] == pytest.approx(ms["lmr2_plain_max_loss"].max())
    assert claims["rlm-grows-with-n"]["ours"] == pytest.approx(ms["rlm_rho"].mean())
    assert "mean of 2 seeds" in claims["rlm-grows-with-n"]["statement"]
