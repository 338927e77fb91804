"""report.html in a real browser: a report of two small real experiments (engine-bottleneck and
rlm-fig8, ``--quick``) and one summary written by hand in the documented shape (every verdict,
readings, a revision, an explanation naming its output), opened in headless Chromium: every
figure loads, the filters by paper, kind and verdict hide and show the right claims (from the
menus and from the page's address), the console has no error and nothing is fetched from a
network. A screenshot of the front page is kept beside the report (the test prints where).
A sweep's page (``castlab results STORE --html``) gets the same checks.

With CASTLAB_REPORT_DIR=DIR (a ``castlab reproduce --all`` folder), the browser checks run on
DIR/report.html too and leave DIR/report-screenshot.png.

The browser tests skip, with the reason, without Debian's ``chromium``.
"""

from __future__ import annotations

import json
import os
import re
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from browser import CHROMIUM, MISSING, Browser  # noqa: E402
from study_fake import FakeScenario  # noqa: E402

needs_chromium = pytest.mark.skipif(CHROMIUM is None, reason=MISSING)

SYNTH_PAPER = "Hand-written et al. 2001"


def _synthetic(folder: Path) -> dict:
    """A summary in the documented shape with one paper claim of each verdict."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    folder.mkdir(parents=True)
    (folder / "rates.csv").write_text("time_s,rate\n0,1\n1,2\n")
    fig, ax = plt.subplots(figsize=(3, 2))
    ax.plot([0, 1], [1, 2])
    fig.savefig(folder / "rates.png")
    plt.close(fig)

    def claim(id_, kind, verdict, **kw):
        return {"id": id_, "kind": kind, "statement": f"the sentence of {id_}", "paper_value": 2.0, "ours": 1.5,
                "unit": "Mb/s", "tolerance": "within 10 %", "holds": verdict == "holds", "verdict": verdict,
                "readings": [], "revised": [], "explanation": "", "paper_inconsistent": "", **kw}

    claims = [
        claim("revised-holds", "paper", "holds",
              revised=[{"commit": "abc1234", "what": "tolerance", "before": "5 %", "after": "10 %",
                        "reason": "the paper's §4 says 'about'"}]),
        claim("two-readings", "paper", "reading-dependent",
              readings=[{"reading": "window", "ours": 1.9, "holds": True},
                        {"reading": "slot", "ours": 1.2, "holds": False}]),
        claim("spans-bound", "paper", "undecided"),
        claim("too-slow", "paper", "fails", explanation="the queue never drains: rates.csv shows it"),
        claim("tautology", "sanity", "holds"),
        claim("markov", "analysis", "holds"),
        claim("vs-baseline", "derived", "fails", explanation="the baseline differs"),
    ]
    summary = {"experiment": "hand-fig1", "paper": SYNTH_PAPER, "figure": "Fig. 1", "seed": 1, "params": {"n": 3},
               "wall_s": 0.1, "quick": False, "claims": claims, "files": ["rates.csv", "rates.png"]}
    (folder / "summary.json").write_text(json.dumps(summary))
    return summary


@pytest.fixture(scope="module")
def report(tmp_path_factory):
    """out/ as ``castlab reproduce --all`` leaves it: a folder per experiment and the report."""
    from castlab import cli
    from castlab.report import write_report

    out = tmp_path_factory.mktemp("report")
    summaries = []
    for name in ("engine-bottleneck", "rlm-fig8"):
        assert cli.main(["reproduce", name, "--quick", "--out", str(out / name)]) == 0
        summaries.append(json.loads((out / name / "summary.json").read_text()))
        # one experiment alone gets its own page too
        assert (out / name / "report.html").is_file()
    summaries.append(_synthetic(out / "hand-fig1"))
    write_report(out, summaries)
    return out, summaries


def _verdict(c: dict) -> str:
    if c.get("verdict") in ("holds", "reading-dependent", "undecided", "fails"):
        return c["verdict"]
    return "holds" if c["holds"] else "fails"


def test_report_is_self_contained(report):
    out, summaries = report
    text = (out / "report.html").read_text()
    # nothing to fetch: no script, style or image from elsewhere
    assert not re.search(r"""(src|href)=["']?(https?:)?//""", text), re.findall(r"(?:src|href)=\S{0,60}", text)[:5]
    assert "<link" not in text and "@import" not in text
    imgs = re.findall(r'<img [^>]*src="([^"]{0,40})', text)
    assert imgs and all(s.startswith("data:image/") for s in imgs)
    # each CSV is linked by its path relative to the page, and the path exists
    links = set(re.findall(r'href="([^"#]+\.csv)"', text))
    assert {"rlm-fig8/level.csv", "engine-bottleneck/bottleneck.csv", "hand-fig1/rates.csv"} <= links
    assert all((out / link).is_file() for link in links)
    # the failing claim's explanation links the output it names
    assert 'the queue never drains: <a href="hand-fig1/rates.csv">rates.csv</a> shows it' in text


@needs_chromium
def test_report_in_chromium(report, tmp_path):
    out, summaries = report
    every = [(s, c) for s in summaries for c in s["claims"]]
    with Browser(tmp_path / "profile") as b:
        b.open((out / "report.html").as_uri())
        # every figure loaded: the two experiments' PNGs and the hand-written one
        imgs = b.eval("Array.from(document.images).map(i => [i.alt, i.complete, i.naturalWidth])")
        assert {"bottleneck.png", "fig8.png", "rates.png"} <= {i[0] for i in imgs}
        assert all(done and w > 0 for _, done, w in imgs), imgs
        # the front page's table: the hand-written paper's row, one claim of each verdict
        row = b.eval(f"""Array.from(document.querySelectorAll('#papers tr')).map(r =>
                         Array.from(r.cells).map(c => c.textContent)).find(r => r[0] === {json.dumps(SYNTH_PAPER)})""")
        assert row == [SYNTH_PAPER, "4", "1", "1", "1", "1", "1"]
        # engine-bottleneck's paper ("theory") has sanity claims only: it is in the other kinds' table
        papers = b.eval("Array.from(document.querySelectorAll('#papers tbody tr')).map(r => r.cells[0].textContent)")
        assert papers == ["McCanne et al. 1996", SYNTH_PAPER, "all"]
        others = b.eval("Array.from(document.querySelectorAll('#others tbody tr')).map(r => r.cells[0].textContent)")
        assert "theory" in others
        shot = b.screenshot(out / "report-screenshot.png")
        print(f"screenshot of the front page: {shot}")

        def visible(kind_of="claim"):
            return b.eval(f"""Array.from(document.querySelectorAll('tbody.{kind_of}')).filter(t => !t.hidden)
                              .map(t => [t.dataset.paper, t.dataset.kind, t.dataset.verdict])""")

        def choose(**sel):
            js = "".join(f"document.getElementById('f-{k}').value = {json.dumps(v)};"
                         f"document.getElementById('f-{k}').dispatchEvent(new Event('change'));"
                         for k, v in sel.items())
            b.eval(js + "null")

        def shown_sections():
            return b.eval("Array.from(document.querySelectorAll('section.exp')).filter(s => !s.hidden)"
                          ".map(s => s.querySelector('h2').textContent)")

        assert len(visible()) == len(every)
        choose(verdict="fails")
        want = sorted([s["paper"], c.get("kind", "unclassified"), "fails"] for s, c in every if _verdict(c) == "fails")
        assert sorted(visible()) == want and len(want) >= 2
        # an experiment with no failing claim is hidden with its claims
        assert set(shown_sections()) == {s["experiment"] for s, c in every if _verdict(c) == "fails"}
        choose(verdict="", kind="sanity")
        assert {tuple(v)[1] for v in visible()} == {"sanity"}
        assert len(visible()) == sum(c.get("kind") == "sanity" for _, c in every)
        choose(kind="", paper=SYNTH_PAPER)
        assert len(visible()) == 7 and shown_sections() == ["hand-fig1"]
        rows = b.eval("Array.from(document.querySelectorAll('#papers tbody tr')).filter(r => !r.hidden)"
                      ".map(r => r.cells[0].textContent)")
        assert rows == [SYNTH_PAPER, "all"]
        choose(paper="")
        assert len(visible()) == len(every) and len(shown_sections()) == 3
        # the address sets the filters: a link to one verdict's claims
        b.open("about:blank")
        b.open((out / "report.html").as_uri() + "#verdict=reading-dependent")
        assert visible() == [[SYNTH_PAPER, "paper", "reading-dependent"]]
        assert b.eval("document.getElementById('f-verdict').value") == "reading-dependent"
        assert b.errors() == []
        remote = [u for u in b.requests() if not u.startswith(("file:", "data:"))]
        assert remote == []


@needs_chromium
@pytest.mark.skipif(not os.environ.get("CASTLAB_REPORT_DIR"),
                    reason="CASTLAB_REPORT_DIR names no `castlab reproduce --all` folder to check")
def test_full_report_in_chromium(tmp_path):
    out = Path(os.environ["CASTLAB_REPORT_DIR"])
    summaries = json.loads((out / "report.json").read_text())
    with Browser(tmp_path / "profile") as b:
        b.open((out / "report.html").as_uri())
        imgs = b.eval("Array.from(document.images).map(i => [i.alt, i.naturalWidth])")
        assert imgs and all(w > 0 for _, w in imgs), [i for i in imgs if not i[1]]
        n = b.eval("document.querySelectorAll('tbody.claim').length")
        assert n == sum(len(s["claims"]) for s in summaries)
        b.eval("document.getElementById('f-verdict').value='fails';"
               "document.getElementById('f-verdict').dispatchEvent(new Event('change')); null")
        shown = b.eval("Array.from(document.querySelectorAll('tbody.claim')).filter(t => !t.hidden)"
                       ".map(t => t.dataset.verdict)")
        assert set(shown) <= {"fails"}
        assert len(shown) == sum(_verdict(c) == "fails" for s in summaries for c in s["claims"])
        b.eval("document.getElementById('f-verdict').value='';"
               "document.getElementById('f-verdict').dispatchEvent(new Event('change')); null")
        print(f"screenshot: {b.screenshot(out / 'report-screenshot.png')}")
        assert b.errors() == []
        assert [u for u in b.requests() if not u.startswith(("file:", "data:"))] == []


@pytest.fixture(scope="module")
def store(tmp_path_factory):
    """A sweep over two parameters times three seeds (study_fake's CBR bottleneck)."""
    from castlab.study import sweep

    store = tmp_path_factory.mktemp("store")
    sweep(FakeScenario(), {"link.delay": ["10ms", "40ms"], "cbr.load": [0.8, 1.3]}, "1-3", store=store, jobs=1,
          progress=False)
    return store


def test_results_html_of_a_sweep(store, capsys):
    from castlab import cli

    assert cli.main(["results", str(store), "--html"]) == 0
    text = (store / "report.html").read_text()
    cells = re.findall(r"<tr>(.*?)</tr>", text.split('id="aggregate"')[1].split("</table>")[0])
    rows = [r for r in (re.findall(r"<td[^>]*>(.*?)</td>", c) for c in cells) if r]
    # one row per grid point (2 x 2) and metric (4), each over the 3 seeds
    assert len(rows) == 16 and {r[3] for r in rows} == {"3"}
    # loss is 0 below capacity and over 15 % above it (the fake scenario's bottleneck)
    loss = {(r[0], r[1]): r for r in rows if r[2] == "loss"}
    assert loss[("10ms", "0.8")][4] == "0" and float(loss[("40ms", "1.3")][4]) > 0.15
    assert loss[("40ms", "1.3")][5] != "–"  # an interval over seeds
    # a plot per metric
    assert len(re.findall(r'<img alt="(received|drops|loss|throughput_bps)" src="data:image/png;base64,', text)) == 4
    assert cli.main(["results", str(store), "--html", str(store / "elsewhere.html")]) == 0
    assert (store / "elsewhere.html").is_file()
    assert cli.main(["results", str(store / "nothing"), "--html"]) == 2
    assert "does not exist" in capsys.readouterr().err


@needs_chromium
def test_results_html_in_chromium(store, tmp_path):
    from castlab.study.html import write_store_html

    page = write_store_html(store)
    with Browser(tmp_path / "profile") as b:
        b.open(page.as_uri())
        imgs = b.eval("Array.from(document.images).map(i => i.naturalWidth)")
        assert len(imgs) == 4 and all(w > 0 for w in imgs)
        b.screenshot(store / "report-screenshot.png")
        assert b.errors() == []
        assert [u for u in b.requests() if not u.startswith(("file:", "data:"))] == []
