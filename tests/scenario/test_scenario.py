"""Scenario files and dicts, their errors (key and line), the flow table,
with_params for sweeps, and `castlab scenario run`."""

import hashlib
import json
import math
import textwrap
import warnings

import numpy as np
import pytest

import castlab
from castlab import cli
from castlab.scenario import Scenario, ScenarioError
from castlab.seeds import parse_seeds
from castlab.units import UnitWarning

TREE = textwrap.dedent("""\
    name = "tree"
    duration = "40s"
    seeds = "1-2"
    windows = ["1s", "10s"]
    nodes = ["src", "r1", "a", "b"]

    [simulator]
    leave_latency = "50ms"

    [[links]]
    name = "bottleneck"
    a = "src"
    b = "r1"
    rate = "1.5Mbps"
    delay = "10ms"
    queue_limit = 20

    [[links]]
    a = "r1"
    b = "a"
    rate = "300kbps"
    delay = "20ms"
    queue = "red"
    queue_limit = 30
    red_min_th = 3
    red_max_th = 9
    red_w_q = 0.02

    [[links]]
    a = "r1"
    b = "b"
    rate = 1000000
    delay = 0.005
    loss_ab = 0.01

    [[sessions]]
    name = "video"
    source = "src"
    layers = 5
    base_rate = "32kbps"

    [[receivers]]
    name = "ra"
    node = "a"
    session = "video"
    start = "2s"
    config = { t_min = "2s", detection_init = 3, record = "arrivals" }

    [[receivers]]
    name = "fixed"
    node = "b"
    session = "video"
    protocol = "sink"
    level = 3
    start = "1s"

    [[tcp]]
    name = "ftp"
    src = "src"
    dst = "b"
    start = "3s"

    [[cbr]]
    name = "voice"
    src = "src"
    dst = "a"
    rate = "64kbps"
    port = 7000

    [[monitors]]
    name = "bq"
    link = "bottleneck"
    interval = "200ms"
""")


@pytest.fixture
def tree_file(tmp_path):
    p = tmp_path / "tree.toml"
    p.write_text(TREE)
    return p


def _by_hand(seed):
    """TREE built with the bindings directly (no scenario code), in the same order."""
    sim = castlab.Simulator(seed=seed, leave_latency=0.05)
    for n in ("src", "r1", "a", "b"):
        sim.add_node(n)
    bott = sim.add_link("src", "r1", 1.5e6, 0.010, queue_limit_pkts=20)
    sim.add_link("r1", "a", 300e3, 0.020, queue="red", queue_limit_pkts=30, red_min_th=3, red_max_th=9,
                 red_w_q=0.02)
    sim.add_link("r1", "b", 1e6, 0.005, loss_ab=0.01)
    sim.monitor_channel(bott[0], 0.2)
    groups = [sim.add_group("src") for _ in range(5)]
    control = sim.add_group("src")
    sim.add_layered_source("src", groups, [32e3 * 2**m for m in range(5)], packet_size=1000)
    # the scenario adds its windows to every RLM receiver; record="arrivals" is in TREE's config
    ra = sim.add_rlm_receiver("a", groups, control, start=2.0, t_min=2.0, detection_init=3.0, record="arrivals",
                              windows=[1.0, 10.0])
    fixed = sim.add_sink("b", groups=groups, schedule=[(1.0, 3)], start=1.0, windows=[1.0, 10.0])
    ftp = sim.add_tcp_flow("src", "b", start=3.0)
    voice_sink = sim.add_sink("a", port=7000, windows=[1.0, 10.0])
    sim.add_cbr("src", "a", 7000, 64e3)
    sim.run(40.0)
    return sim, dict(ra=ra, fixed=fixed, ftp=ftp, voice=voice_sink, bott=bott[0])


def _fingerprint(sim, ra, fixed, ftp, voice, bott):
    h = hashlib.sha256()
    r = sim.rlm_records(ra)
    for k in ("level_time_ns", "level", "arr_time_ns", "loss_time_ns", "loss_count"):
        h.update(np.asarray(r[k]).tobytes())
    h.update(repr([sim.rlm_worst_window_loss(ra, w) for w in (1.0, 10.0)]).encode())
    for a in (fixed, voice):
        s = sim.sink_summary(a)
        h.update(repr((s["received"], s["lost"], s["bytes"], sorted(s["worst_window_loss"].items()))).encode())
    t = sim.tcp_stats(ftp)
    h.update(repr((t["segments_sent"], t["sink_segments"], t["received_bytes"], t["cwnd_bytes"])).encode())
    for k, v in sorted(sim.channel_series(bott).items()):
        h.update(np.asarray(v).tobytes())
    return h.hexdigest()


def test_file_scenario_runs_exactly_as_the_same_set_up_built_with_the_bindings(tree_file):
    sc = Scenario.from_toml(tree_file)
    sim = sc.build(7)
    sim.run(sc.duration)
    hd = sim.scenario_handles
    ours = _fingerprint(sim, hd.receivers["ra"], hd.receivers["fixed"], hd.tcp["ftp"], hd.cbr["voice"][1],
                        hd.channels["bottleneck"][0])
    ref_sim, ref = _by_hand(7)
    assert ours == _fingerprint(ref_sim, **ref)
    # the run did something worth comparing: the receivers got traffic and lost some
    rows = {r["name"]: r for r in sc.flow_table(sim)}
    assert rows["ra"]["received"] > 100 and rows["fixed"]["received"] > 1000 and rows["ftp"]["received"] > 1000
    assert rows["voice"]["received"] > 300
    # a different seed gives a different run
    sim8 = sc.build(8)
    sim8.run(sc.duration)
    assert _fingerprint(sim8, hd.receivers["ra"], hd.receivers["fixed"], hd.tcp["ftp"], hd.cbr["voice"][1],
                        hd.channels["bottleneck"][0]) != ours


def test_flow_table_agrees_with_the_records_it_summarises(tree_file):
    sc = Scenario.from_toml(tree_file)
    ref_sim, ref = _by_hand(3)
    m = sc.run(3)
    r = ref_sim.rlm_records(ref["ra"])
    assert m["ra.received"] == r["received"] and m["ra.lost"] == r["lost"]
    assert m["ra.sent"] == r["received"] + r["lost"]
    assert m["ra.final_level"] == int(r["level"][-1])
    assert m["ra.mean_rate_bps"] == pytest.approx(r["received"] * 1000 * 8 / (40.0 - 2.0))
    assert m["ra.worst_loss_10s"] == ref_sim.rlm_worst_window_loss(ref["ra"], 10.0)
    s = ref_sim.sink_summary(ref["fixed"])
    assert (m["fixed.received"], m["fixed.lost"]) == (s["received"], s["lost"])
    assert m["fixed.loss"] == pytest.approx(s["lost"] / (s["received"] + s["lost"]))
    assert m["fixed.final_level"] == 3
    t = ref_sim.tcp_stats(ref["ftp"])
    assert m["ftp.sent"] == t["segments_sent"] and m["ftp.received"] == t["sink_segments"]
    assert m["ftp.mean_rate_bps"] == pytest.approx(t["received_bytes"] * 8 / 37.0)
    assert math.isnan(m["ftp.worst_loss_1s"])
    names = ("ra", "fixed", "ftp", "voice")
    assert m["total.received"] == sum(m[f"{n}.received"] for n in names)
    assert m["total.lost"] == sum(m[f"{n}.lost"] for n in names)
    assert all(isinstance(v, (int, float)) for v in m.values())


def test_the_same_scenario_from_a_dict_equals_the_file(tree_file):
    import tomllib

    from_file = Scenario.from_toml(tree_file)
    from_dict = Scenario.from_dict(tomllib.loads(TREE))
    assert from_file.to_dict() == from_dict.to_dict()
    again = Scenario.from_dict(from_file.to_dict())
    assert again.to_dict() == from_file.to_dict()
    json.dumps(from_file.to_dict(), allow_nan=False)  # canonical form is plain JSON
    assert _same(from_file.run(2), from_dict.run(2))


def test_canonical_form_is_si():
    d = Scenario.from_dict(_minimal()).to_dict()
    assert d["links"][0]["rate"] == 1.5e6 and d["links"][0]["delay"] == 0.01
    assert d["duration"] == 5.0 and d["seeds"] == [1]


def test_start_ranges_are_drawn_per_seed_inside_the_range():
    d = _minimal()
    d["receivers"][0]["start"] = ["1s", "3s"]
    sc = Scenario.from_dict(d)
    starts = [sc.build(seed).scenario_handles.starts["r"] for seed in (1, 1, 2, 3)]
    assert starts[0] == starts[1]
    assert len(set(starts[1:])) == 3
    assert all(1.0 <= s <= 3.0 for s in starts)


def test_with_params_overrides_by_name_and_changes_the_run():
    sc = Scenario.from_dict(_minimal())
    slow = sc.with_params({"links.l1.delay": "40ms", "receivers.r.config.t_min": 3, "duration": 6})
    d = slow.to_dict()
    assert d["links"][0]["delay"] == 0.04 and d["receivers"][0]["config"] == {"t_min": 3}
    assert d["duration"] == 6.0
    assert sc.to_dict()["links"][0]["delay"] == 0.01  # the original is unchanged
    assert not _same(slow.run(1), sc.run(1))


@pytest.mark.parametrize("params, needle", [
    ({"links.nope.delay": 1}, "no links entry named 'nope'"),
    ({"links.l1.dealy": 1}, "'links.l1.dealy': unknown key"),
    ({"receivers.r.config.tmin": 1}, "'receivers.r.config.tmin': unknown key"),
    ({"durration": 1}, "'durration': unknown key"),
    ({"links.l1.delay": "20 parsecs"}, "unknown time unit"),
    ({"links": 1}, "'links'"),
])
def test_with_params_rejects_unknown_keys(params, needle):
    with pytest.raises(ScenarioError, match=None) as e:
        Scenario.from_dict(_minimal()).with_params(params)
    assert needle in str(e.value)


def _same(a: dict, b: dict) -> bool:
    """Equal metrics, NaN included (NaN marks what a protocol does not record)."""
    return json.dumps(a, sort_keys=True) == json.dumps(b, sort_keys=True)


def _minimal():
    return {
        "duration": "5s",
        "nodes": ["s", "x"],
        "links": [{"name": "l1", "a": "s", "b": "x", "rate": "1.5Mbps", "delay": "10ms"}],
        "sessions": [{"name": "v", "source": "s", "rates": ["32kbps", "64kbps"]}],
        "receivers": [{"name": "r", "node": "x", "session": "v"}],
    }


# ------------------------------------------------------------------------------- errors

BASE = textwrap.dedent("""\
    duration = "10s"
    nodes = ["s", "x"]

    [[links]]
    name = "l1"
    a = "s"
    b = "x"
    rate = "1.5Mbps"
    delay = "10ms"

    [[sessions]]
    name = "v"
    source = "s"
    rates = ["32kbps", "64kbps"]

    [[receivers]]
    name = "r"
    node = "x"
    session = "v"
    config = { t_min = 2 }
""")


def _err(tmp_path, text, strict=True):
    p = tmp_path / "bad.toml"
    p.write_text(text)
    with pytest.raises(ScenarioError) as e:
        Scenario.from_toml(p, strict=strict)
    return str(e.value)


@pytest.mark.parametrize("old, new, key, line, what", [
    # unknown keys, at every level
    ('duration = "10s"', 'duration = "10s"\ndurration = 3', "durration", 2, "unknown key"),
    ('delay = "10ms"', 'delay = "10ms"\ndelai = 3', "links.l1.delai", 10, "unknown key"),
    ("config = { t_min = 2 }", "config = { t_min = 2, tmin = 3 }", "receivers.r.config.tmin", 20, "unknown key"),
    ('session = "v"', 'session = "v"\nlevel = 2', "receivers.r.level", 20, "unknown key"),
    # wrong units
    ('rate = "1.5Mbps"', 'rate = "1.5Mbs"', "links.l1.rate", 8, "unknown rate unit"),
    ('delay = "10ms"', 'delay = "10 parsecs"', "links.l1.delay", 9, "unknown time unit"),
    ('rates = ["32kbps", "64kbps"]', 'rates = ["32kbps", "64kqps"]', "sessions.v.rates", 14, "unknown rate unit"),
    ('duration = "10s"', 'duration = "-3s"', "duration", 1, "must be positive"),
    ("config = { t_min = 2 }", 'config = { t_min = "2 fortnights" }', "receivers.r.config.t_min", 20,
     "unknown time unit"),
    # missing nodes and names
    ('b = "x"', 'b = "y"', "links.l1.b", 7, "no node named 'y'"),
    ('node = "x"', 'node = "nowhere"', "receivers.r.node", 18, "no node named 'nowhere'"),
    ('session = "v"', 'session = "w"', "receivers.r.session", 19, "no session named 'w'"),
    # implausible values (probably a unit slip)
    ('rate = "1.5Mbps"', "rate = 1.5", "links.l1.rate", 8, "under 1 kb/s"),
    ('delay = "10ms"', "delay = 150", "links.l1.delay", 9, "over 100 s"),
    # other bad values
    ('name = "l1"\na = "s"', 'name = "l1"\nqueue = "fifo"\na = "s"', "links.l1.queue", 6, "droptail"),
    ('delay = "10ms"', 'delay = "10ms"\nred_max_p = 0.2', "links.l1.red_max_p", 10, "droptail link"),
    ('delay = "10ms"', 'delay = "10ms"\nloss_ab = 1.5', "links.l1.loss_ab", 10, "probability"),
    ('name = "r"', 'name = "r"\nprotocol = "rlc"', "receivers.r.protocol", 18, "rlm or sink"),
])
def test_bad_input_names_the_key_and_its_line(tmp_path, old, new, key, line, what):
    assert old in BASE
    msg = _err(tmp_path, BASE.replace(old, new, 1))
    assert f"'{key}'" in msg, msg
    assert f"line {line})" in msg, msg
    assert what in msg, msg
    assert "bad.toml" in msg


def test_missing_required_keys_are_named(tmp_path):
    msg = _err(tmp_path, BASE.replace('rate = "1.5Mbps"\n', ""))
    assert "'links.l1'" in msg and "(line 4)" in msg and "missing required key 'rate'" in msg
    msg = _err(tmp_path, BASE.replace('duration = "10s"\n', ""))
    assert "missing required key 'duration'" in msg


def test_duplicate_names_are_an_error(tmp_path):
    text = BASE + '\n[[receivers]]\nname = "r"\nnode = "x"\nsession = "v"\n'
    msg = _err(tmp_path, text)
    assert "'receivers.r.name'" in msg and "(line 23)" in msg and "names two receivers" in msg


def test_lenient_mode_warns_on_implausible_values(tmp_path):
    p = tmp_path / "slip.toml"
    p.write_text(BASE.replace('rate = "1.5Mbps"', "rate = 1.5"))
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        sc = Scenario.from_toml(p, strict=False)
    assert sc.to_dict()["links"][0]["rate"] == 1.5
    assert any(issubclass(x.category, UnitWarning) and "'links.l1.rate' (line 8)" in str(x.message) for x in w)


def test_bad_config_value_is_named_at_build(tmp_path):
    # the name is known (checked while reading); the value is checked by Rust's Config validation
    sc = Scenario.from_toml(_write(tmp_path, BASE.replace("t_min = 2", "t_min = -4")))
    with pytest.raises(ScenarioError) as e:
        sc.build(1)
    assert "receivers.r" in str(e.value) and "t_min" in str(e.value)


def test_toml_syntax_errors_name_the_file(tmp_path):
    msg = _err(tmp_path, BASE.replace('delay = "10ms"', "delay = "))
    assert "bad.toml" in msg


def _write(tmp_path, text):
    p = tmp_path / "s.toml"
    p.write_text(text)
    return p


# ------------------------------------------------------------------------------- other protocols

OTHERS = textwrap.dedent("""\
    duration = "20s"
    nodes = ["s", "r", "x", "y"]

    [[links]]
    a = "s"
    b = "r"
    rate = "2Mbps"
    delay = "10ms"
    [[links]]
    a = "r"
    b = "x"
    rate = "1Mbps"
    delay = "10ms"
    [[links]]
    a = "r"
    b = "y"
    rate = "1Mbps"
    delay = "10ms"

    [[routers]]
    kind = "bcf"

    [[sessions]]
    name = "rlc"
    kind = "rlc"
    source = "s"
    config = { layers = 4 }
    [[sessions]]
    name = "le"
    kind = "lesbcc"
    source = "s"
    [[sessions]]
    name = "df"
    kind = "fountain"
    source = "s"
    [[sessions]]
    name = "bp"
    kind = "bcf_pgm"
    source = "s"
    rate = "200kbps"
    count = 300
    [[sessions]]
    name = "nlm"
    kind = "nlm"
    source = "s"
    rates = ["32kbps", "64kbps", "128kbps"]

    [[receivers]]
    name = "rlc_x"
    node = "x"
    session = "rlc"
    [[receivers]]
    name = "pgm_y"
    node = "y"
    session = "le"
    [[receivers]]
    name = "rb_x"
    node = "x"
    session = "df"
    needed_packets = 200
    [[receivers]]
    name = "bp_y"
    node = "y"
    session = "bp"
    [[receivers]]
    name = "nlm_y"
    node = "y"
    session = "nlm"
""")


def test_every_session_kind_builds_and_delivers(tmp_path):
    sc = Scenario.from_toml(_write(tmp_path, OTHERS))
    m = sc.run(1)
    for n, kind in (("rlc_x", "rlc"), ("pgm_y", "pgm"), ("rb_x", "rainbow"), ("nlm_y", "nlm"), ("bp_y", "bcf_pgm")):
        assert m[f"{n}.received"] > 50, (n, m[f"{n}.received"])
        assert m[f"{n}.mean_rate_bps"] > 0
    assert m["rlc_x.final_level"] >= 1
    assert _same(sc.run(1), m)  # deterministic


def test_a_fountain_session_needs_bcf_routers(tmp_path):
    msg = _err(tmp_path, OTHERS.replace('[[routers]]\nkind = "bcf"\n', ""))
    assert "'sessions.df.kind'" in msg and "BCF routers" in msg


# ------------------------------------------------------------------------------- seeds and CLI


@pytest.mark.parametrize("text, seeds", [("5", [5]), ("1-3", [1, 2, 3]), ("1,4,7", [1, 4, 7]),
                                         ("1-3,10", [1, 2, 3, 10]), (" 2 , 2-3 ", [2, 3]), ("0", [0])])
def test_parse_seeds(text, seeds):
    assert parse_seeds(text) == seeds


def test_parse_seeds_takes_one_number_and_keeps_the_order_written():
    assert parse_seeds(5) == [5]
    assert parse_seeds("5,1-2,2") == [5, 1, 2]
    with pytest.raises(ValueError, match="seeds"):
        parse_seeds(True)


@pytest.mark.parametrize("text, needle", [("", "empty"), ("a", "'a'"), ("3-1", "backwards"), ("-1", "negative"),
                                          ("1-2-3", "'1-2-3'"), ("1,,2", "empty item"), ("1.5", "'1.5'"),
                                          ("0-2000000", "more than")])
def test_parse_seeds_rejects(text, needle):
    with pytest.raises(ValueError) as e:
        parse_seeds(text)
    assert needle in str(e.value)


def test_cli_scenario_run_end_to_end(tree_file, tmp_path, capsys):
    out = tmp_path / "out"
    assert cli.main(["scenario", "run", str(tree_file), "--seeds", "1,3", "--out", str(out)]) == 0
    printed = capsys.readouterr().out
    for seed in (1, 3):
        d = out / f"seed-{seed}"
        for f in ("summary.json", "flows.csv", "levels.csv", "queue_bq.csv"):
            assert (d / f).is_file(), f
        s = json.loads((d / "summary.json").read_text())
        assert s["seed"] == seed and s["experiment"] == "scenario:tree"
        assert s["metrics"] == pytest.approx(Scenario.from_toml(tree_file).run(seed), nan_ok=True)
        assert [r["name"] for r in s["flows"]] == ["ra", "fixed", "ftp", "voice"]
        assert f"seed {seed}" in printed
    lines = (out / "flows.csv").read_text().splitlines()
    assert lines[0].startswith("seed,name,kind,node,sent,received,lost,loss,mean_rate_bps,final_level")
    assert len(lines) == 1 + 2 * 4
    assert "ftp" in printed and "mean_rate_bps" in printed
    assert not list(out.glob(".*partial*"))


def test_cli_scenario_run_reports_bad_files(tmp_path, capsys):
    p = _write(tmp_path, BASE.replace('rate = "1.5Mbps"', 'rate = "1.5Mbs"'))
    assert cli.main(["scenario", "run", str(p), "--out", str(tmp_path / "o")]) == 2
    err = capsys.readouterr().err
    assert "'links.l1.rate' (line 8)" in err
    assert cli.main(["scenario", "run", str(tmp_path / "s.toml"), "--seeds", "x", "--out", str(tmp_path)]) == 2


def test_a_receiver_that_starts_after_the_end_has_an_empty_row():
    d = _minimal()
    d["receivers"][0]["start"] = "8s"  # the run lasts 5 s
    m = Scenario.from_dict(d).run(1)
    assert m["r.received"] == 0 and m["r.sent"] == 0
    assert math.isnan(m["r.final_level"]) and math.isnan(m["r.loss"]) and math.isnan(m["r.mean_rate_bps"])


def test_values_rust_rejects_are_named_with_their_entry():
    d = _minimal()
    d["simulator"] = {"queue_avg_weight": 7.0}
    with pytest.raises(ScenarioError) as e:
        Scenario.from_dict(d).build(1)
    assert "simulator" in str(e.value) and "queue_avg_weight" in str(e.value)
    d = _minimal()
    d["sessions"][0]["stop"] = "1s"
    d["sessions"][0]["start"] = "2s"
    with pytest.raises(ScenarioError) as e:
        Scenario.from_dict(d).build(1)
    assert "sessions.v" in str(e.value) and "stop" in str(e.value)


def test_a_scenario_pickles_for_process_pools():
    import pickle

    sc = Scenario.from_dict(_minimal())
    back = pickle.loads(pickle.dumps(sc))
    assert back.to_dict() == sc.to_dict() and back.name == "scenario"
    assert _same(back.run(4), sc.run(4))


def test_lines_are_found_in_sub_tables_and_plain_tables(tmp_path):
    text = BASE.replace("config = { t_min = 2 }", '\n[receivers.config]\nt_min = 2\nalpha = "x2"')
    # line 21: [receivers.config]; 22: t_min; 23: alpha
    msg = _err(tmp_path, text)
    assert "'receivers.r.config.alpha' (line 23)" in msg, msg
    text = BASE.replace('nodes = ["s", "x"]', 'nodes = ["s", "x"]\n\n[simulator]\nleave_latency = "5 weeks"')
    msg = _err(tmp_path, text)
    assert "'simulator.leave_latency' (line 5)" in msg, msg


def test_cli_scenario_check(tree_file, tmp_path, capsys):
    assert cli.main(["scenario", "check", str(tree_file)]) == 0
    assert "ok: Scenario('tree'" in capsys.readouterr().out
    assert cli.main(["scenario", "check", str(tree_file), "--json"]) == 0
    assert json.loads(capsys.readouterr().out) == Scenario.from_toml(tree_file).to_dict()
    bad = _write(tmp_path, BASE.replace('b = "x"', 'b = "y"'))
    assert cli.main(["scenario", "check", str(bad)]) == 2
    assert "'links.l1.b' (line 7): no node named 'y'" in capsys.readouterr().err
