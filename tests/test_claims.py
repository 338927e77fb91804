"""Claims: kinds are checked, bands and Student-t intervals are right, the report counts the
papers' own claims apart from the rest."""

import ast
import math
from pathlib import Path

import pytest

from castlab.report import consistent_paper_counts, paper_claim_counts, unexplained_paper_failures
from castlab.report import write_report as _write_report
from castlab.experiments.common import (Claim, band_at_least, band_at_most, band_in_range, in_band, inconsistent,
                                        within)
from castlab.stats import t_interval, t_quantile


def test_an_unknown_kind_is_refused():
    with pytest.raises(ValueError, match="kind"):
        within("x", "s", 1.0, 1.0, "u", abs_tol=0.1, kind="papers")


def test_t_quantiles_match_the_printed_table():
    # Two-sided critical values from any printed t table.
    assert t_quantile(0.95, 5) == pytest.approx(2.776, abs=1e-3)
    assert t_quantile(0.99, 5) == pytest.approx(4.604, abs=1e-3)
    assert t_quantile(0.95, 31) == pytest.approx(2.042, abs=1e-3)
    with pytest.raises(ValueError):
        t_quantile(0.95, 1)


def test_t_interval_of_a_known_sample():
    mean, lo, hi = t_interval([1, 2, 3, 4, 5])  # sd = sqrt(2.5), se = sqrt(0.5)
    assert mean == 3.0
    assert hi - mean == pytest.approx(2.776 * math.sqrt(0.5), abs=2e-3)
    assert lo == pytest.approx(2 * mean - hi)
    # one sample has no spread: no interval rather than a zero-width one
    for few in ([7.0], [], [7.0, float("nan")]):
        with pytest.raises(ValueError, match="at least 2"):
            t_interval(few)


def test_a_band_holds_only_when_the_papers_value_is_inside():
    inside = in_band("b", "s", 0.25, {"56 ms": 0.2, "112 ms": 0.3}, "", kind="paper")
    outside = in_band("b", "s", 0.35, {"56 ms": 0.2, "112 ms": 0.3}, "", kind="paper")
    assert inside.holds and not outside.holds
    assert "56 ms: 0.2" in inside.ours


def test_range_and_bound_bands_hold_when_some_allowed_reading_meets_the_statement():
    readings = {"56 ms": 0.45, "112 ms": 0.55, "280 ms": 0.4}
    assert band_in_range("r", "s", 0.5, 2.0, readings, "", kind="paper").holds
    assert not band_in_range("r", "s", 0.6, 2.0, readings, "", kind="paper").holds
    assert not band_in_range("r", "s", 0.1, 0.3, readings, "", kind="paper").holds
    assert band_at_least("l", "s", 0.55, readings, "", kind="paper").holds
    assert not band_at_least("l", "s", 0.56, readings, "", kind="paper").holds
    assert band_at_most("m", "s", 0.4, readings, "", kind="paper").holds
    assert not band_at_most("m", "s", 0.39, readings, "", kind="paper").holds
    nan = band_in_range("n", "s", 0.5, 2.0, {"a": float("nan")}, "", kind="paper")
    assert not nan.holds and nan.ours == "no finite reading"
    assert "280 ms: 0.4" in band_at_least("l", "s", 0.5, readings, "", kind="paper").ours


def test_only_a_paper_claim_can_be_marked_inconsistent():
    c = inconsistent(within("x", "s", 1.0, 2.0, "u", abs_tol=0.1, kind="paper"), "1 + 1 = 3 in the paper's Table 2")
    assert c.paper_inconsistent.startswith("1 + 1")
    with pytest.raises(ValueError, match="paper_inconsistent"):
        inconsistent(within("y", "s", 1.0, 2.0, "u", abs_tol=0.1, kind="derived"), "a")


def _summary(paper, claims):
    return {"experiment": "e-" + paper, "paper": paper, "figure": "f", "claims": claims}


def _c(kind, holds, explanation=""):
    return {"id": "i", "statement": "s", "paper_value": 1, "ours": 1.0, "unit": "", "tolerance": "",
            "holds": holds, "kind": kind, "explanation": explanation}


def test_the_report_counts_paper_claims_per_paper_apart_from_the_rest(tmp_path: Path):
    sums = [_summary("A", [_c("paper", True), _c("paper", False, "queue too short: x.csv col y"),
                           _c("sanity", True)]),
            _summary("B", [_c("paper", True), _c("variant", False)])]
    counts = paper_claim_counts(sums)
    assert counts == {"A": {"paper": (1, 2), "sanity": (1, 1)}, "B": {"paper": (1, 1), "variant": (0, 1)}}
    _write_report(tmp_path, sums)
    md = (tmp_path / "report.md").read_text()
    assert "## A: paper claims, 1 of 2 hold" in md
    assert md.index("## A: paper claims") < md.index("## A: sanity claims")
    assert "queue too short: x.csv col y" in md
    assert "**2 of 3**" in md  # the papers' claims over both papers


def test_the_report_counts_consistent_paper_claims_and_names_unexplained_failures(tmp_path: Path):
    bad = {**_c("paper", False, "the paper's sum is off"), "paper_inconsistent": "3 x 4 = 13 in its text",
           "id": "bad"}
    sums = [_summary("A", [_c("paper", True), bad, {**_c("paper", False), "id": "mute"}, _c("derived", False)])]
    assert consistent_paper_counts(sums) == {"A": (1, 2)}
    assert unexplained_paper_failures(sums) == ["e-A/mute"]
    _write_report(tmp_path, sums)
    md = (tmp_path / "report.md").read_text()
    assert "| A | 1 of 2 |" in md
    assert "3 x 4 = 13 in its text" in md
    assert "1 failing paper claims have no explanation:** e-A/mute" in md


EXPERIMENTS = Path(__file__).resolve().parents[1] / "python" / "castlab" / "experiments"
CLAIM_MAKERS = {"within", "at_most", "at_least", "in_range", "in_band", "band_in_range", "band_at_least",
               "band_at_most"}


def test_every_claim_in_the_experiments_states_its_kind():
    missing = []
    for f in sorted(EXPERIMENTS.glob("*.py")):
        if f.name == "common.py":
            continue
        for node in ast.walk(ast.parse(f.read_text())):
            if isinstance(node, ast.Call) and getattr(node.func, "id", None) in CLAIM_MAKERS:
                if not any(k.arg == "kind" for k in node.keywords):
                    missing.append(f"{f.name}:{node.lineno}")
    assert not missing, f"claims without kind=: {missing}"


def test_a_band_over_readings_holds_when_some_reading_holds():
    from castlab.claims import at_least, band_over_readings, within
    a = [within("x", "s", 1.0, 1.2, "s", abs_tol=0.1, kind="paper", explanation="why"),
         at_least("y", "t", 0.5, 0.4, "f", kind="paper", explanation="why")]
    b = [within("x", "s", 1.0, 1.05, "s", abs_tol=0.1, kind="paper"),
         at_least("y", "t", 0.5, 0.3, "f", kind="paper", explanation="why")]
    x, y = band_over_readings({"A": a, "B": b}, "a setting")
    assert x.holds and not y.holds
    assert x.ours.startswith("1.05..1.2") and "A fails, B holds" in x.statement and "a setting" in x.statement
    assert y.explanation == "why" and y.tolerance.startswith("band")
    with pytest.raises(ValueError, match="same claims"):
        band_over_readings({"A": a, "B": b[:1]}, "a setting")
