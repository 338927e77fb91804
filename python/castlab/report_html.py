"""report.html: the results in one self-contained page that opens offline in any browser.

- :func:`write_html` for ``castlab reproduce`` (one experiment or ``--all``): a front page with
  the per-paper table of the paper claims' verdicts (holds, reading-dependent, undecided, fails,
  and of the holds those that hold after a revision; the other kinds apart), then per experiment
  its figures, its claims with their verdicts, values, readings, revisions and the explanation of
  a failure, and links to its CSVs. Filters by paper, kind and verdict are plain JavaScript; the
  page's address fragment (``report.html#kind=paper&verdict=fails``) sets them, so a filtered
  view can be linked.
- ``castlab.study.html.write_store_html`` for ``castlab results STORE --html``, a sweep's page,
  is built from this module's page, escaping and inlining.

Figures are inlined (PNG and SVG as base64 data addresses), CSS and JavaScript are inline, links
to CSVs are relative to the page: nothing is fetched from a server when the page is viewed. The
module imports no other castlab module (castlab.report, a leaf, calls it). Older summaries lack
some keys (``verdict``, ``readings``, ``revised``): a claim without a verdict has the one its
``holds`` gives.
"""

from __future__ import annotations

import base64
import html
import json
import math
import re
from pathlib import Path
from typing import Any, Iterable, Optional

__all__ = ["VERDICTS", "KINDS", "claim_verdict", "paper_table", "write_html", "page", "escape", "data_uri"]

# the accounting rule's verdicts (see docs/fidelity/), in the order the table shows them
VERDICTS = ("holds", "reading-dependent", "undecided", "fails")
KINDS = ("paper", "derived", "variant", "sanity", "analysis")
_FIGURES = (".png", ".svg")
_MIME = {".png": "image/png", ".svg": "image/svg+xml"}

_CSS = """
body{font-family:system-ui,-apple-system,"Segoe UI",sans-serif;margin:0 auto;max-width:1200px;padding:0 1em 3em;
color:#1b1b1b;line-height:1.4}
h1{margin:.6em 0 .2em}h2{margin:1.6em 0 .3em;border-bottom:2px solid #ddd}h3{margin:1em 0 .3em}
table{border-collapse:collapse;margin:.5em 0;font-size:.92em}
th,td{border:1px solid #ccc;padding:.25em .5em;text-align:left;vertical-align:top}
th{background:#f2f2f2}td.n{text-align:right;font-variant-numeric:tabular-nums}
tr.total td{font-weight:bold;background:#fafafa}
.v{display:inline-block;padding:0 .45em;border-radius:.6em;font-size:.85em;white-space:nowrap}
.v-holds{background:#d7f0d5;color:#14521b}.v-fails{background:#f8d3d0;color:#7a1710}
.v-reading-dependent{background:#fbe8c0;color:#6b4600}.v-undecided{background:#dfe3f5;color:#27326e}
.quick{background:#fff4c2;border:1px solid #e0c24a;padding:.5em .8em;margin:.6em 0}
.filters{position:sticky;top:0;background:#fff;border-bottom:1px solid #ccc;padding:.5em 0;z-index:2}
.filters label{margin-right:1.2em}
.figs{display:flex;flex-wrap:wrap;gap:.8em}.figs figure{margin:0;max-width:100%}
.figs img{max-width:560px;width:100%;border:1px solid #ddd}
figcaption{font-size:.8em;color:#555}
.detail td{background:#fcfcfc;font-size:.9em}
.why{color:#7a1710}.muted{color:#666;font-size:.9em}
details{margin:.3em 0}code{font-size:.9em}
section.exp{scroll-margin-top:3.5em}
[hidden]{display:none !important}
"""

_JS = """
(function(){
  var ids=['paper','kind','verdict'];
  function val(id){return document.getElementById('f-'+id).value;}
  function apply(){
    var p=val('paper'),k=val('kind'),v=val('verdict'),shown=0,all=0;
    document.querySelectorAll('tbody.claim').forEach(function(tb){
      var ok=(!p||tb.dataset.paper===p)&&(!k||tb.dataset.kind===k)&&(!v||tb.dataset.verdict===v);
      tb.hidden=!ok;all++;if(ok)shown++;
    });
    document.querySelectorAll('section.exp').forEach(function(s){
      var any=s.querySelector('tbody.claim:not([hidden])')!==null;
      s.hidden=(p&&s.dataset.paper!==p)||((k||v)&&!any);
    });
    document.querySelectorAll('[data-row-paper]').forEach(function(r){
      r.hidden=!!p&&r.dataset.rowPaper!==p;
    });
    document.querySelectorAll('li.toc').forEach(function(li){
      var s=document.getElementById(li.dataset.target);li.hidden=!s||s.hidden;
    });
    var c=document.getElementById('f-count');if(c)c.textContent=shown+' of '+all+' claims shown';
    var h=ids.filter(function(id){return val(id);}).map(function(id){
      return id+'='+encodeURIComponent(val(id));}).join('&');
    try{history.replaceState(null,'',h?'#'+h:location.pathname+location.search);}catch(e){}
  }
  function fromHash(){
    var q=location.hash.replace(/^#/,'');
    q.split('&').forEach(function(kv){
      var i=kv.indexOf('=');if(i<0)return;
      var id=kv.slice(0,i),x=decodeURIComponent(kv.slice(i+1));
      var el=document.getElementById('f-'+id);
      if(el&&ids.indexOf(id)>=0&&Array.prototype.some.call(el.options,function(o){return o.value===x;}))el.value=x;
    });
  }
  ids.forEach(function(id){document.getElementById('f-'+id).addEventListener('change',apply);});
  fromHash();apply();
})();
"""


def escape(x: Any) -> str:
    """`x` as HTML text (quotes escaped too, for attributes)."""
    return html.escape(str(x), quote=True)


_e = escape


def _fmt(x: Any) -> str:
    """A value as the tables show it: numbers to 4 significant digits, lists and tables as
    compact JSON, nothing as a dash."""
    if x is None:
        return "–"
    if isinstance(x, bool):
        return "yes" if x else "no"
    if isinstance(x, float):
        if math.isnan(x):
            return "nan"
        return f"{x:.4g}"
    if isinstance(x, (list, dict)):
        return json.dumps(x, separators=(", ", ": "), default=str)
    return str(x)


def claim_verdict(c: dict) -> str:
    """The claim's verdict under the accounting rule; a summary written without one (older
    summaries, and a ``--quick`` run, whose verdict is a note) has the one ``holds`` gives."""
    v = c.get("verdict")
    if v in VERDICTS:
        return v
    return "holds" if c.get("holds") else "fails"


def _kind(c: dict) -> str:
    return c.get("kind") or "unclassified"


def _kind_order(k: str) -> tuple[int, str]:
    return (KINDS.index(k) if k in KINDS else len(KINDS), k)


def paper_table(summaries: list[dict]) -> dict[str, dict[str, int]]:
    """{paper: counts} over the paper claims: ``claims``, one count per verdict, and
    ``revised_holds`` (claims that hold and carry a revision)."""
    out: dict[str, dict[str, int]] = {}
    for s in summaries:
        row = out.setdefault(s.get("paper") or "(none)", {"claims": 0, **{v: 0 for v in VERDICTS},
                                                          "revised_holds": 0})
        for c in s.get("claims", []):
            if _kind(c) != "paper":
                continue
            v = claim_verdict(c)
            row["claims"] += 1
            row[v] += 1
            row["revised_holds"] += v == "holds" and bool(c.get("revised"))
    return out


def _other_kinds(summaries: list[dict]) -> tuple[list[str], dict[str, dict[str, tuple[int, int]]]]:
    """The kinds other than paper, and {paper: {kind: (holding, total)}} over them."""
    counts: dict[str, dict[str, list[int]]] = {}
    for s in summaries:
        for c in s.get("claims", []):
            k = _kind(c)
            if k == "paper":
                continue
            ht = counts.setdefault(s.get("paper") or "(none)", {}).setdefault(k, [0, 0])
            ht[0] += claim_verdict(c) == "holds"
            ht[1] += 1
    kinds = sorted({k for ks in counts.values() for k in ks}, key=_kind_order)
    return kinds, {p: {k: (v[0], v[1]) for k, v in ks.items()} for p, ks in counts.items()}


def _folder(out: Path, s: dict) -> tuple[Path, str]:
    """The folder holding the experiment's files and its path relative to the page: out/NAME
    for ``--all``, out itself for one experiment."""
    name = str(s.get("experiment", ""))
    sub = out / name
    if name and "/" not in name and (sub / "summary.json").is_file():
        return sub, name + "/"
    return out, ""


def data_uri(path: Path) -> Optional[str]:
    """The PNG or SVG file `path` as a base64 data address (None when it cannot be read)."""
    try:
        data = path.read_bytes()
    except OSError:
        return None
    return f"data:{_MIME[path.suffix.lower()]};base64,{base64.b64encode(data).decode('ascii')}"


def _figures(folder: Path, files: Iterable[str]) -> list[str]:
    """The figures to show: each PNG, and each SVG without a PNG of the same name."""
    files = list(files)
    pngs = {f[:-4] for f in files if f.lower().endswith(".png")}
    return [f for f in files if f.lower().endswith(".png")
            or (f.lower().endswith(".svg") and f[:-4] not in pngs)]


def _linkify(text: str, files: list[str], rel: str) -> str:
    """`text` escaped, each output file it names made a link to that file."""
    out = _e(text)
    for f in sorted(files, key=len, reverse=True):
        ef = _e(f)
        out = re.sub(rf"(?<![\w/.-]){re.escape(ef)}(?![\w-])", f'<a href="{_e(rel + f)}">{ef}</a>', out)
    return out


def _verdict_badge(v: str, quick: bool) -> str:
    return f'<span class="v v-{_e(v)}">{_e(f"({v})" if quick else v)}</span>'


def _claim_body(s: dict, c: dict, files: list[str], rel: str, quick: bool) -> str:
    v = claim_verdict(c)
    k = _kind(c)
    unit = c.get("unit") or ""
    ours = _fmt(c.get("ours")) + (f" {unit}" if unit and c.get("ours") is not None else "")
    row = (f'<tr><td><code>{_e(c.get("id", ""))}</code></td><td>{_e(k)}</td><td>{_verdict_badge(v, quick)}</td>'
           f'<td class="n">{_e(ours)}</td><td>{_e(_fmt(c.get("paper_value")))}</td>'
           f'<td>{_e(_fmt(c.get("tolerance")))}</td><td>{_e(c.get("statement", ""))}</td></tr>')
    parts: list[str] = []
    readings = c.get("readings") or []
    if readings:
        cells = "".join(f'<tr><td>{_e(r.get("reading", ""))}</td><td class="n">{_e(_fmt(r.get("ours")))}</td>'
                        f'<td>{_verdict_badge("holds" if r.get("holds") else "fails", quick)}</td></tr>'
                        for r in readings)
        parts.append(f'<table><tr><th>reading</th><th>ours</th><th>verdict</th></tr>{cells}</table>')
    if c.get("explanation") and v != "holds":
        parts.append(f'<div class="why">Why: {_linkify(c["explanation"], files, rel)}</div>')
    if c.get("paper_inconsistent"):
        parts.append(f'<div>The paper contradicts itself: {_e(c["paper_inconsistent"])}</div>')
    revised = c.get("revised") or []
    if revised:
        items = "".join(f'<li><code>{_e(r.get("commit", ""))}</code> {_e(r.get("what", ""))}: '
                        f'{_e(_fmt(r.get("before")))} → {_e(_fmt(r.get("after")))}; {_e(r.get("reason", ""))}</li>'
                        for r in revised)
        parts.append(f'<div>Revised:<ul>{items}</ul></div>')
    detail = f'<tr class="detail"><td colspan="7">{"".join(parts)}</td></tr>' if parts else ""
    return (f'<tbody class="claim" data-paper="{_e(s.get("paper") or "(none)")}" data-kind="{_e(k)}" '
            f'data-verdict="{_e(v)}">{row}{detail}</tbody>')


def _section(out: Path, s: dict, idx: int) -> str:
    folder, rel = _folder(out, s)
    files = [str(f) for f in s.get("files") or []]
    quick = bool(s.get("quick"))
    name = str(s.get("experiment", f"experiment {idx}"))
    head = (f'<section class="exp" id="exp-{idx}" data-paper="{_e(s.get("paper") or "(none)")}">'
            f'<h2>{_e(name)}</h2><p class="muted">{_e(s.get("paper", ""))}'
            + (f', {_e(s["figure"])}' if s.get("figure") else "")
            + f'; seed {_e(s.get("seed", "–"))}'
            + (f'; {_fmt(s["wall_s"])} s wall' if isinstance(s.get("wall_s"), (int, float)) else "")
            + ("; quick run: not a verdict" if quick else "") + "</p>")
    figs = []
    for f in _figures(folder, files):
        uri = data_uri(folder / f)
        if uri is None:
            figs.append(f'<p class="why">figure {_e(f)} is missing from {_e(rel or ".")}</p>')
            continue
        figs.append(f'<figure><img alt="{_e(f)}" src="{uri}"><figcaption><a href="{_e(rel + f)}">{_e(f)}'
                    f'</a></figcaption></figure>')
    body = [head]
    if figs:
        body.append(f'<div class="figs">{"".join(figs)}</div>')
    claims = sorted(s.get("claims") or [], key=lambda c: _kind_order(_kind(c)))
    if claims:
        body.append('<table class="claims"><thead><tr><th>claim</th><th>kind</th><th>verdict</th><th>ours</th>'
                    '<th>paper</th><th>tolerance</th><th>the paper\'s sentence</th></tr></thead>'
                    + "".join(_claim_body(s, c, files, rel, quick) for c in claims) + "</table>")
    data = [f for f in files if not f.lower().endswith(_FIGURES)]
    if data:
        body.append('<p class="muted">Outputs: ' + ", ".join(f'<a href="{_e(rel + f)}">{_e(f)}</a>' for f in data)
                    + "</p>")
    if s.get("params"):
        body.append(f'<details><summary>parameters</summary><pre>{_e(json.dumps(s["params"], indent=1, default=str))}'
                    f'</pre></details>')
    body.append("</section>")
    return "".join(body)


def _front(summaries: list[dict]) -> str:
    table = paper_table(summaries)
    cols = ["claims", *VERDICTS, "revised_holds"]
    heads = ["paper claims", "holds", "reading-dependent", "undecided", "fails", "of the holds, after a revision"]
    # a paper without paper claims (an engine check, a baseline) is in the table of the other kinds
    rows = [f'<tr data-row-paper="{_e(p)}"><td>{_e(p)}</td>' + "".join(f'<td class="n">{r[c]}</td>' for c in cols)
            + "</tr>" for p, r in table.items() if r["claims"]]
    tot = {c: sum(r[c] for r in table.values()) for c in cols}
    rows.append('<tr class="total"><td>all</td>' + "".join(f'<td class="n">{tot[c]}</td>' for c in cols) + "</tr>")
    parts = ['<h2 id="table">Paper claims per paper</h2>',
             '<table id="papers"><thead><tr><th>paper</th>' + "".join(f"<th>{_e(h)}</th>" for h in heads)
             + "</tr></thead><tbody>" + "".join(rows) + "</tbody></table>",
             '<p class="muted">A claim holds when every reading the paper allows holds, is reading-dependent '
             "when some do and some do not, undecided when its interval over seeds spans its bound, and fails "
             "when no reading holds (docs/fidelity/).</p>"]
    kinds, other = _other_kinds(summaries)
    if kinds:
        orow = [f'<tr data-row-paper="{_e(p)}"><td>{_e(p)}</td>'
                + "".join(f'<td class="n">{ks[k][0]} of {ks[k][1]}</td>' if k in ks else "<td></td>" for k in kinds)
                + "</tr>" for p, ks in other.items()]
        parts += ["<h3>Other claims (not the paper's): how many hold</h3>",
                  '<table id="others"><thead><tr><th>paper</th>' + "".join(f"<th>{_e(k)}</th>" for k in kinds)
                  + "</tr></thead><tbody>" + "".join(orow) + "</tbody></table>"]
    return "".join(parts)


def _filters(summaries: list[dict]) -> str:
    papers = sorted({s.get("paper") or "(none)" for s in summaries})
    kinds = sorted({_kind(c) for s in summaries for c in s.get("claims") or []}, key=_kind_order)

    def select(id_: str, label: str, values: list[str]) -> str:
        opts = '<option value="">all</option>' + "".join(f'<option value="{_e(v)}">{_e(v)}</option>' for v in values)
        return f'<label>{_e(label)} <select id="f-{id_}">{opts}</select></label>'

    return ('<div class="filters">' + select("paper", "paper", papers) + select("kind", "kind", kinds)
            + select("verdict", "verdict", list(VERDICTS)) + '<span id="f-count" class="muted"></span></div>')


def page(title: str, body: str, script: str = "") -> str:
    """A whole HTML document: `body` with the report's style and an inline `script`."""
    return (f'<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
            f'<meta name="viewport" content="width=device-width, initial-scale=1">'
            f"<title>{_e(title)}</title><style>{_CSS}</style></head><body>{body}"
            + (f"<script>{script}</script>" if script else "") + "</body></html>\n")


def write_html(out_dir: Path | str, summaries: list[dict], name: str = "report.html") -> Path:
    """Write out_dir/report.html for the summaries of ``castlab reproduce``: each experiment's
    files are read from out_dir/EXPERIMENT/ (``--all``) or out_dir itself (one experiment).
    Returns the page's path."""
    out = Path(out_dir)
    quick = any(s.get("quick") for s in summaries)
    toc = "".join(f'<li class="toc" data-target="exp-{i}"><a href="#exp-{i}">{_e(s.get("experiment", i))}</a> '
                  f'<span class="muted">{_e(s.get("paper", ""))} {_e(s.get("figure", ""))}</span></li>'
                  for i, s in enumerate(summaries))
    body = ["<h1>castlab reproduction report</h1>",
            f'<p class="muted">{len(summaries)} experiment{"s" if len(summaries) != 1 else ""}; the figures are in '
            "this file, the CSVs beside it.</p>"]
    if quick:
        body.append('<div class="quick"><b>Quick run</b> (<code>--quick</code>, shorter settings): quick run: not a '
                    "verdict. The counts say what the short settings gave, not whether the papers' claims hold."
                    "</div>")
    body += [_front(summaries), _filters(summaries), f"<h2>Experiments</h2><ul>{toc}</ul>",
             *(_section(out, s, i) for i, s in enumerate(summaries))]
    path = out / name
    path.write_text(page("castlab reproduction report", "".join(body), _JS))
    return path
