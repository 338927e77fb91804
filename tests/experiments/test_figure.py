"""An experiment as data (castlab.experiments.figure): cases run in order under seed + k, the
table is what the claims and the plot read, the same bytes on one process or two, and the engine
checks are figures of this shape."""

from pathlib import Path

import pandas as pd

from castlab.experiments import REGISTRY
from castlab.experiments.common import at_most
from castlab.experiments.figure import Case, Figure, drive, experiment
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


def test_the_engine_checks_are_figures():
    exp = experiment(TOY)
    assert (exp.name, exp.paper) == ("toy", "nobody")
    for name in ("engine-bottleneck", "engine-red"):
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
