"""An experiment as data (castlab.experiments.figure): cases run in order under seed + k, the
table is what the claims and the plot read, the same bytes on one process or two, and the engine
checks are figures of this shape."""

from pathlib import Path

import pandas as pd
import pytest

from castlab.experiments import REGISTRY
from castlab.experiments.common import at_most
from castlab.experiments.figure import Case, Figure, Measured, drive, experiment
from castlab.parallel import workers


def _measure(seed: int, x: float) -> dict:
    return {"x": x, "seed": seed, "y": x * 10 + seed}


def _table(rows):
    df = pd.DataFrame(rows)
    df["y_over_x"] = df["y"] / df["x"]
    return df


def _claims(df):
    return [at_most("y-small", "every y at most 40", 40.0, float(df["y"].max()), "", kind="sanity")]


def _plot(df, out: Path):
    (out / "plot.txt").write_text(f"{len(df)} points\n")
    return ["plot.txt"]


TOY = Figure("toy", "nobody", "none", "a figure by hand", lambda quick: [Case({"x": x}) for x in ([1.0] if quick else
             [1.0, 2.0, 3.0])], _measure, _table, _claims, _plot, "toy.csv", lambda quick, seed: {"quick": quick, "first_seed": seed})


def test_cases_run_in_order_each_under_its_own_seed(tmp_path):
    r = drive(TOY, tmp_path, 5)
    df = pd.read_csv(tmp_path / "toy.csv")
    assert df["seed"].tolist() == [5, 6, 7] and df["x"].tolist() == [1.0, 2.0, 3.0]
    assert df["y_over_x"].tolist() == [15.0, 13.0, (30 + 7) / 3]
    # y = 15, 26, 37: at most 40 holds; the claim reads the table the CSV holds
    assert r.claims[0].holds and r.claims[0].ours == 37.0
    assert r.files == ["toy.csv", "plot.txt"] and r.params == {"quick": False, "first_seed": 5}
    # the quick form's one case, under seed 31: y = 10 + 31 = 41 breaks the bound
    q = drive(TOY, tmp_path, 31, quick=True)
    assert not q.claims[0].holds and q.claims[0].ours == 41.0 and q.params == {"quick": True, "first_seed": 31}


def test_one_process_or_two_give_the_same_bytes(tmp_path):
    one, two = tmp_path / "one", tmp_path / "two"
    one.mkdir()
    two.mkdir()
    drive(TOY, one, 1)
    with workers(2):
        drive(TOY, two, 1)
    assert (one / "toy.csv").read_bytes() == (two / "toy.csv").read_bytes()


def test_the_engine_checks_and_the_paper_figures_are_figures():
    exp = experiment(TOY)
    assert (exp.name, exp.paper) == ("toy", "nobody")
    for name in ("engine-bottleneck", "engine-red", *(f"rlm-fig{k}" for k in range(8, 14)), "rlm-red",
                 *(f"nlm-fig{k}" for k in range(9, 14)), "rainbow-a1", "rainbow-table1",
                 *(f"rainbow-b{k}" for k in range(1, 5)), "bcfs-file",
                 *(f"lesbcc-fig{k}" for k in (6, 7, 10, 12, 13, 14, 16, 19, 20)), "lesbcc-fig12-sim", "lesbcc-fig21-sim",
                 "lesbcc-tfrc-padhye"):
        assert REGISTRY[name].run.func is drive


def test_shared_seeds_and_derived_tables(tmp_path):
    """Runs that share a seed say so (Case.seed), and a derived table is written beside the main
    one and listed first, as tcp-fairness's aggregate is."""
    fig = Figure("toy2", "nobody", "none", "", lambda quick: [Case({"x": x}, seed=r) for x in (1.0, 2.0) for r in (0, 1)],
                 _measure, _table, _claims, _plot, "runs.csv", lambda quick, seed: {},
                 derived={"agg.csv": lambda df: df.groupby("x", as_index=False)["y"].mean()})
    r = drive(fig, tmp_path, 10)
    runs = pd.read_csv(tmp_path / "runs.csv")
    assert runs["seed"].tolist() == [10, 11, 10, 11]
    agg = pd.read_csv(tmp_path / "agg.csv")
    # x = 1: y = 10 + 10, 10 + 11 -> 20.5; x = 2: 30, 31 -> 30.5
    assert agg["y"].tolist() == [20.5, 30.5]
    assert r.files == ["agg.csv", "runs.csv", "plot.txt"]


def _measure_read(seed: int, x: float, reading: float) -> dict:
    return {"x": x, "seed": seed, "y": x * 10 + seed + reading}


def test_readings_are_data_of_the_figure(tmp_path):
    """A figure's readings run in turn, the primary into the experiment's folder and the others
    into reading-NAME, and a claim holds only when it holds under every reading: here y <= 40
    holds under "none" (y = 15, 26, 37) and fails under "plus 100", so it is reading-dependent."""
    fig = Figure("toy3", "nobody", "none", "", TOY.cases, _measure_read, _table, _claims, _plot, "toy.csv",
                 lambda quick, seed: {"first_seed": seed}, readings={"none": 0.0, "plus 100": 100.0},
                 setting="the offset")
    r = drive(fig, tmp_path, 5)
    assert pd.read_csv(tmp_path / "toy.csv")["y"].tolist() == [15.0, 26.0, 37.0]
    assert pd.read_csv(tmp_path / "reading-plus-100" / "toy.csv")["y"].tolist() == [115.0, 126.0, 137.0]
    c = r.claims[0]
    assert c.verdict == "reading-dependent" and not c.holds and c.ours == 37.0
    assert [(x["reading"], x["ours"], x["verdict"]) for x in c.readings] == [("none", 37.0, "holds"),
                                                                              ("plus 100", 137.0, "fails")]
    assert r.params["open_setting"] == "the offset" and r.params["primary_reading"] == "none"
    assert r.params["readings"] == {"none": 0.0, "plus 100": 100.0}
    assert "reading-plus-100/toy.csv" in r.files
    # the quick form runs the primary reading only
    q_out = tmp_path / "quick"
    q_out.mkdir()
    q = drive(fig, q_out, 5, quick=True)
    assert not (q_out / "reading-plus-100").exists() and [x["reading"] for x in q.claims[0].readings] == ["none"]
    # a case that names its own reading cannot also run under the figure's
    own = Figure("toy3b", "nobody", "none", "", lambda quick: [Case({"x": 1.0, "reading": 5.0})], _measure_read,
                 _table, _claims, _plot, "toy.csv", lambda quick, seed: {}, readings={"none": 0.0}, setting="s")
    with pytest.raises(ValueError, match="names its own reading"):
        drive(own, tmp_path / "quick", 5, quick=True)
    # a reading without its setting's name is refused
    with pytest.raises(ValueError, match="setting"):
        Figure("bad", "", "", "", TOY.cases, _measure_read, _table, _claims, _plot, "t.csv", lambda q, s: {},
               readings={"a": 0})


def _measure_phase(seed: int, x: float) -> dict:
    from castlab.simulator import default_phase_overhead

    return {"x": x, "seed": seed, "y": x * 10 + seed + 1000 * default_phase_overhead()}


def test_a_phase_sensitive_figure_is_decided_on_randomised_runs(tmp_path, monkeypatch):
    """phase_s: the figure runs once deterministic into phase-off and once with the phase
    overhead set; the claims are the randomised run's (y = 15, 26, 37 plus 1000 x 0.004 = 41
    at most: fails), each with the deterministic value and verdict beside it (37: holds)."""
    from castlab.simulator import PHASE_ENV

    monkeypatch.delenv(PHASE_ENV, raising=False)
    fig = Figure("toy4", "nobody", "none", "", TOY.cases, _measure_phase, _table, _claims, _plot, "toy.csv",
                 lambda quick, seed: {}, phase_s=0.004)
    r = drive(fig, tmp_path, 5)
    assert pd.read_csv(tmp_path / "phase-off" / "toy.csv")["y"].tolist() == [15.0, 26.0, 37.0]
    assert pd.read_csv(tmp_path / "toy.csv")["y"].tolist() == [19.0, 30.0, 41.0]
    c = r.claims[0]
    assert c.verdict == "fails" and c.ours == 41.0 and "deterministic: 37, holds" in c.statement
    assert r.params["phase_overhead_s"] == 0.004 and "phase-off/toy.csv" in r.files
    assert PHASE_ENV not in __import__("os").environ


def _measure_trace(seed: int, x: float, trace: bool) -> Measured | dict:
    row = {"x": x, "seed": seed, "y": x * 10 + seed}
    if not trace:
        return row
    return Measured(row, {"trace.csv": pd.DataFrame({"t": [0.0, 1.0], "v": [x, x + seed]})})


def _tables(rows):
    df = pd.DataFrame(rows)
    return {"runs.csv": df, "by_x.csv": df.groupby("x", as_index=False)["y"].sum(), "n": len(df)}


def test_files_of_a_run_and_several_tables(tmp_path):
    """A run's own files (Measured) are written by the driver beside the tables; a table made
    of several is written entry by entry (names ending in .csv), the rest kept for the claims,
    the plot and the summary."""
    fig = Figure("toy5", "nobody", "none", "", lambda quick: [Case({"x": x, "trace": x == 2.0}) for x in (1.0, 2.0)],
                 _measure_trace, _tables, lambda t: _claims(t["runs.csv"]), lambda t, out: [], "",
                 lambda quick, seed: {"first_seed": seed}, summary=lambda t: {"runs": t["n"]})
    r = drive(fig, tmp_path, 1)
    # the second case (seed 2) gave the trace
    assert pd.read_csv(tmp_path / "trace.csv")["v"].tolist() == [2.0, 4.0]
    assert pd.read_csv(tmp_path / "by_x.csv")["y"].tolist() == [11.0, 22.0]
    assert not (tmp_path / "n").exists() and sorted(p.name for p in tmp_path.iterdir()) == ["by_x.csv", "runs.csv",
                                                                                           "trace.csv"]
    assert r.files == ["trace.csv", "runs.csv", "by_x.csv"] and r.params == {"first_seed": 1, "runs": 2}
    # two runs that give the same file name are refused, not overwritten
    both = Figure("toy6", "nobody", "none", "", lambda quick: [Case({"x": x, "trace": True}) for x in (1.0, 2.0)],
                  _measure_trace, _tables, lambda t: [], lambda t, out: [], "", lambda quick, seed: {})
    with pytest.raises(ValueError, match="trace.csv"):
        drive(both, tmp_path, 1)
