"""Claims: kinds are checked, the accounting rule decides verdicts over readings and seeds,
Student-t intervals are right, the report counts the papers' own claims by verdict."""

import ast
import math
from pathlib import Path

import pytest

from castlab.report import consistent_paper_counts, paper_claim_counts, status_rows, unexplained_paper_failures
from castlab.report import write_report as _write_report
from castlab.experiments.common import (Claim, at_least, at_most, claim_over_seeds, combine_readings, in_range,
                                        inconsistent, over_readings, with_seed_interval, within)
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


def test_a_claim_holds_only_when_every_reading_holds():
    readings = {"56 ms": 0.45, "112 ms": 0.55, "280 ms": 0.6}
    every = over_readings(in_range, readings, "r", "s", 0.4, 2.0, None, "", kind="paper")
    some = over_readings(in_range, readings, "r", "s", 0.5, 2.0, None, "", kind="paper")
    none = over_readings(in_range, readings, "r", "s", 0.7, 2.0, None, "", kind="paper")
    assert (every.verdict, some.verdict, none.verdict) == ("holds", "reading-dependent", "fails")
    assert every.holds and not some.holds and not none.holds
    # ours is the primary reading's (the first), and every reading is on the claim
    assert some.ours == 0.45
    assert [(r["reading"], r["holds"]) for r in some.readings] == [("56 ms", False), ("112 ms", True),
                                                                   ("280 ms", True)]
    assert "56 ms 0.45 fails" in some.statement


def test_lying_between_readings_never_makes_a_claim_hold():
    # the paper's 0.25 lies between the two readings, each of which misses it by 20 %
    c = over_readings(within, {"a": 0.2, "b": 0.3}, "b", "s", 0.25, None, "", rel_tol=0.1, kind="paper")
    assert c.verdict == "fails" and not c.holds


def test_an_undecided_reading_beside_holding_ones_is_undecided():
    a = within("x", "s", 1.0, 1.0, "s", abs_tol=0.1, kind="paper")
    b = within("x", "s", 1.0, 1.0, "s", abs_tol=0.1, kind="paper").set_verdict("undecided")
    c = combine_readings({"A": a, "B": b}, "a setting")
    assert c.verdict == "undecided" and not c.holds


def test_a_mean_whose_interval_spans_the_bound_is_undecided():
    # mean 1.0, interval far wider than 0.9..inf: the rule differs at its two ends
    spans = claim_over_seeds(at_least, [0.2, 1.8, 1.0], "x", "s", 0.9, None, "ratio", kind="paper")
    assert spans.verdict == "undecided" and not spans.holds
    clear = claim_over_seeds(at_least, [1.2, 1.25, 1.3], "x", "s", 0.9, None, "ratio", kind="paper")
    assert clear.verdict == "holds"
    below = claim_over_seeds(at_least, [0.5, 0.55, 0.6], "x", "s", 0.9, None, "ratio", kind="paper")
    assert below.verdict == "fails"
    built = with_seed_interval(at_least("x", "s", 0.9, 1.0, "ratio", kind="paper"), [0.2, 1.8, 1.0])
    assert built.verdict == "undecided"


def test_a_universal_statement_is_decided_on_the_worst_seed():
    # "under 1 %" on every seed: the mean (0.0224 / 3 = 0.75 %) is under, seed 3 (1.14 %) is not
    c = claim_over_seeds(at_most, [0.005, 0.006, 0.0114], "w", "under 1 %", 0.01, None, "loss fraction",
                         kind="paper", worst="max")
    assert c.ours == 0.0114 and c.verdict == "fails"
    assert "worst of 3 seeds (seed #3)" in c.statement and "mean 0.00747" in c.statement
    ok = claim_over_seeds(at_least, [224e3, 230e3], "p", "no pair starved", 224e3, None, "b/s", kind="paper",
                          worst="min")
    assert ok.verdict == "holds" and ok.ours == 224e3
    with pytest.raises(ValueError, match="worst"):
        claim_over_seeds(at_most, [1.0], "w", "s", 1.0, None, "u", kind="paper", worst="mean")


def test_holds_is_true_only_for_the_verdict_holds():
    c = within("x", "s", 1.0, 1.0, "s", abs_tol=0.1, kind="paper")
    for v, h in (("reading-dependent", False), ("undecided", False), ("fails", False), ("holds", True)):
        assert c.set_verdict(v).holds is h
    with pytest.raises(ValueError, match="verdict"):
        c.set_verdict("mostly")


def test_only_a_paper_claim_can_be_marked_inconsistent():
    c = inconsistent(within("x", "s", 1.0, 2.0, "u", abs_tol=0.1, kind="paper"), "1 + 1 = 3 in the paper's Table 2")
    assert c.paper_inconsistent.startswith("1 + 1")
    with pytest.raises(ValueError, match="paper_inconsistent"):
        inconsistent(within("y", "s", 1.0, 2.0, "u", abs_tol=0.1, kind="derived"), "a")


def _summary(paper, claims):
    return {"experiment": "e-" + paper, "paper": paper, "figure": "f", "claims": claims}


def _c(kind, holds, explanation="", verdict=None, revised=()):
    return {"id": "i", "statement": "s", "paper_value": 1, "ours": 1.0, "unit": "", "tolerance": "",
            "holds": holds, "kind": kind, "explanation": explanation,
            "verdict": verdict or ("holds" if holds else "fails"), "readings": [], "revised": list(revised)}


def test_the_report_counts_paper_claims_by_verdict_apart_from_the_rest(tmp_path: Path):
    rev = [{"commit": "abc1234", "what": "tolerance", "before": "±10 %", "after": "±20 %", "direction": "none",
            "status": "kept", "reason": "r", "experiment": "e-A", "claim": "i"}]
    sums = [_summary("A", [_c("paper", True), _c("paper", False, "queue too short: x.csv col y"),
                           _c("paper", False, "one reading fails: y.csv", verdict="reading-dependent"),
                           _c("paper", True, revised=rev), _c("sanity", True), _c("analysis", False)]),
            _summary("B", [_c("paper", False, "wide: z.csv", verdict="undecided"), _c("variant", False)])]
    counts = paper_claim_counts(sums)
    assert counts == {"A": {"paper": (2, 4), "sanity": (1, 1), "analysis": (0, 1)},
                      "B": {"paper": (0, 1), "variant": (0, 1)}}
    rows = status_rows(sums)
    assert rows["A"] == {"claims": 4, "holds": 2, "reading-dependent": 1, "undecided": 0, "fails": 1,
                         "revised_holds": 1}
    assert rows["all"]["claims"] == 5 and rows["all"]["undecided"] == 1 and rows["all"]["holds"] == 2
    assert rows["analysis"]["claims"] == 1 and rows["sanity"]["holds"] == 1
    _write_report(tmp_path, sums)
    md = (tmp_path / "report.md").read_text()
    assert "| A | 4 | 2 | 1 | 0 | 1 | 1 |" in md
    assert "| **all** | 5 | 2 (40 %) | 1 | 1 | 1 | 1 |" in md
    assert "## A: paper claims, 2 of 4 hold" in md
    assert md.index("## A: paper claims") < md.index("## A: sanity claims")
    assert "queue too short: x.csv col y" in md and "revised: abc1234" in md
    assert "sanity: 1 of 1 hold; analysis: 0 of 1 hold" in md


def test_the_report_counts_consistent_paper_claims_and_names_unexplained_failures(tmp_path: Path):
    bad = {**_c("paper", False, "the paper's sum is off"), "paper_inconsistent": "3 x 4 = 13 in its text",
           "id": "bad"}
    sums = [_summary("A", [_c("paper", True), bad, {**_c("paper", False), "id": "mute"}, _c("derived", False),
                           {**_c("paper", False, verdict="reading-dependent"), "id": "mute2"}])]
    assert consistent_paper_counts(sums) == {"A": (1, 3)}
    assert unexplained_paper_failures(sums) == ["e-A/mute", "e-A/mute2"]
    _write_report(tmp_path, sums)
    md = (tmp_path / "report.md").read_text()
    assert "3 x 4 = 13 in its text" in md
    assert "2 paper claims that do not hold have no explanation:** e-A/mute, e-A/mute2" in md


EXPERIMENTS = Path(__file__).resolve().parents[2] / "python" / "castlab" / "experiments"
CLAIM_MAKERS = {"within", "at_most", "at_least", "in_range", "over_readings", "claim_over_seeds"}


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


def test_readings_of_an_experiment_are_decided_claim_by_claim():
    a = [within("x", "s", 1.0, 1.2, "s", abs_tol=0.1, kind="paper", explanation="why"),
         at_least("y", "t", 0.5, 0.6, "f", kind="paper")]
    b = [within("x", "s", 1.0, 1.05, "s", abs_tol=0.1, kind="paper"),
         at_least("y", "t", 0.5, 0.7, "f", kind="paper")]
    x = combine_readings({"A": a[0], "B": b[0]}, "a setting")
    y = combine_readings({"A": a[1], "B": b[1]}, "a setting")
    assert x.verdict == "reading-dependent" and y.verdict == "holds"
    assert x.ours == 1.2 and "primary reading of a setting: A" in x.statement
    assert x.explanation == "why" and x.tolerance.endswith("at every reading")
    with pytest.raises(ValueError, match="same claims"):
        combine_readings({"A": a[0], "B": b[1]}, "a setting")


def test_a_kept_fail_to_hold_revision_needs_the_papers_sentence():
    from castlab.experiments.revisions import Revision
    with pytest.raises(ValueError, match="paper_quote"):
        Revision("e", "c", "abc1234", "tolerance", "±10 %", "±20 %", "fail-to-hold", "kept", "looked better")
    # undone, or justified by the paper's own sentence, it stands
    Revision("e", "c", "abc1234", "tolerance", "±10 %", "±20 %", "fail-to-hold", "undone", "looked better")
    Revision("e", "c", "abc1234", "metric", "all seconds", "the episode", "fail-to-hold", "kept", "r",
             paper_quote="keeps high loss rate for 40 s")


def test_the_revisions_page_is_generated_from_the_data_and_up_to_date():
    from castlab.experiments.revisions import REVISIONS, main, render_page
    assert main(["--check"]) == 0, "run python -m castlab.experiments.revisions"
    page = render_page()
    for r in REVISIONS:
        assert f"| {r.experiment} | `{r.claim}` | {r.commit} |" in page


def test_a_summary_carries_the_claims_revisions(tmp_path: Path):
    from castlab.experiments import REGISTRY
    from castlab.experiments.common import Result, write_summary
    from castlab.experiments.revisions import REVISIONS
    r = REVISIONS[0]
    c = within(r.claim, "s", 1.0, 1.0, "s", abs_tol=0.1, kind="paper")
    other = within("not-revised", "s", 1.0, 1.0, "s", abs_tol=0.1, kind="paper")
    s = write_summary(tmp_path, REGISTRY[r.experiment], 1, Result({}, [c, other]), 0.1)
    assert [x["commit"] for x in s["claims"][0]["revised"]] == [x.commit for x in REVISIONS
                                                                if (x.experiment, x.claim) == (r.experiment, r.claim)]
    assert s["claims"][1]["revised"] == []


def test_a_failing_reading_beside_undecided_ones_fails():
    # the claim must hold under every reading; one reading fails outright and none holds
    a = within("x", "s", 1.0, 2.0, "s", abs_tol=0.1, kind="paper")
    b = within("x", "s", 1.0, 1.0, "s", abs_tol=0.1, kind="paper").set_verdict("undecided")
    assert combine_readings({"A": a, "B": b}, "a setting").verdict == "fails"
    c = within("x", "s", 1.0, 1.0, "s", abs_tol=0.1, kind="paper")
    assert combine_readings({"A": a, "B": b, "C": c}, "a setting").verdict == "reading-dependent"


def test_castlab_report_gathers_experiment_folders_into_one_report(tmp_path: Path):
    import json as _json

    from castlab.cli import main
    from castlab.experiments import REGISTRY

    names = [n for n in REGISTRY if n.startswith(("rlm-", "nlm-"))][:3]
    for n in reversed(names):  # folders written out of order
        d = tmp_path / "runs" / n
        d.mkdir(parents=True)
        summary = {**_summary(REGISTRY[n].paper, [_c("paper", n != names[1], "why: x.csv y")]), "experiment": n}
        (d / "summary.json").write_text(_json.dumps(summary))
    assert main(["report", str(tmp_path / "runs"), "--out", str(tmp_path / "rep")]) == 0
    claims = _json.loads((tmp_path / "rep" / "claims.json").read_text())
    assert [c["experiment"] for c in claims] == names  # castlab list's order
    status = _json.loads((tmp_path / "rep" / "status.json").read_text())
    assert status["all"]["claims"] == 3 and status["all"]["holds"] == 2
    assert (tmp_path / "rep" / "report.md").is_file() and (tmp_path / "rep" / "report.html").is_file()
    # a folder without summaries, and a duplicate experiment, are refused with a clear error
    assert main(["report", str(tmp_path / "rep")]) == 2
    assert main(["report", str(tmp_path / "runs"), str(tmp_path / "runs" / names[0])]) == 2


def test_an_interval_covering_the_whole_band_is_undecided_though_its_mean_and_ends_fail():
    # mean 1.567 is above the band 0.667..1.5, the interval (about -2.4..5.5, clipped at 0 for a
    # ratio) is outside it at both ends, yet it contains the whole band: values where the claim holds
    wide = claim_over_seeds(in_range, [0.0, 1.5, 3.2], "x", "s", 2 / 3, 1.5, None, "ratio", kind="derived")
    assert wide.verdict == "undecided" and not wide.holds
    # the same band with an interval that stays above it fails
    above = claim_over_seeds(in_range, [1.7, 1.8, 1.9], "x", "s", 2 / 3, 1.5, None, "ratio", kind="derived")
    assert above.verdict == "fails"
    # a tolerance band: |mean - 2.0| = 0.23 > 0.1, the interval covers 1.9..2.1
    tol = claim_over_seeds(within, [1.0, 3.3, 1.0], "y", "s", 2.0, None, "x", abs_tol=0.1, kind="paper")
    assert tol.verdict == "undecided"
    narrow = claim_over_seeds(within, [1.5, 1.55, 1.6], "y", "s", 2.0, None, "x", abs_tol=0.1, kind="paper")
    assert narrow.verdict == "fails"
