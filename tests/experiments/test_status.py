"""The README's status table is the one a `castlab reproduce --all` report computed: its counts
come from docs/fidelity/status.json, that report's counts, which agree with the report's
per-claim index (docs/fidelity/claims.json); every paper claim that does not hold there says why."""

import json
from pathlib import Path

from castlab.report import COUNTED_APART, VERDICT_ORDER, status_table, verdict_counts

ROOT = Path(__file__).resolve().parents[2]
STATUS = ROOT / "docs" / "fidelity" / "status.json"
CLAIMS = ROOT / "docs" / "fidelity" / "claims.json"


def _load():
    return json.loads(STATUS.read_text()), json.loads(CLAIMS.read_text())


def test_the_readme_shows_the_reports_status_table():
    status, _ = _load()
    readme = (ROOT / "README.md").read_text()
    for line in status_table(status):
        assert line in readme, f"README.md lacks the report's line: {line}"


def test_the_status_counts_are_the_claims_index_recounted():
    status, claims = _load()
    assert claims and not any(c["quick"] for c in claims), "the status must come from full runs, not --quick"
    papers = {c["paper"] for c in claims if c["kind"] == "paper"}
    assert set(status) == papers | {"all", *COUNTED_APART}
    as_summaries = [{"verdict": c["verdict"], "revised": c["revised"]} for c in claims]
    for p in papers:
        mine = [x for x, c in zip(as_summaries, claims) if c["paper"] == p and c["kind"] == "paper"]
        assert status[p] == verdict_counts(mine), p
    for k in COUNTED_APART:
        assert status[k] == verdict_counts([x for x, c in zip(as_summaries, claims) if c["kind"] == k])
    assert all(c["verdict"] in VERDICT_ORDER for c in claims)


def test_a_claim_holds_only_with_the_verdict_holds_and_every_reading_holding():
    _, claims = _load()
    for c in claims:
        assert c["holds"] == (c["verdict"] == "holds"), c
        if c["verdict"] == "holds" and c["readings"]:
            assert all(r["verdict"] == "holds" for r in c["readings"]), c


def test_every_paper_claim_that_does_not_hold_says_why():
    _, claims = _load()
    missing = [f"{c['experiment']}/{c['id']}" for c in claims
               if c["kind"] == "paper" and c["verdict"] != "holds" and not c["explanation"].strip()]
    assert not missing, f"paper claims without an explanation: {missing}"


def test_the_fidelity_pages_show_the_claims_index():
    from castlab.experiments.fidelity import main
    assert main(["--check"]) == 0, "run python -m castlab.experiments.fidelity"
