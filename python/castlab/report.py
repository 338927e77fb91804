"""The report of ``castlab reproduce --all``: every experiment's summary gathered into
report.json, status.json and report.md, the paper's own claims counted per paper and verdict
under the accounting rule (``castlab.claims``)."""

from __future__ import annotations

import json
import sys
from pathlib import Path

from castlab.claims import QUICK_NOTE
from castlab.report_html import write_html

__all__ = ["KIND_ORDER", "VERDICT_ORDER", "COUNTED_APART", "paper_claim_counts", "verdict_counts", "status_rows",
           "status_table", "claim_index", "consistent_paper_counts", "unexplained_paper_failures", "write_report"]

KIND_ORDER = {"paper": 0, "derived": 1, "variant": 2, "sanity": 3, "analysis": 4}
VERDICT_ORDER = ("holds", "reading-dependent", "undecided", "fails")
#: Kinds that are not claims about the papers: counted apart, never in the papers' figures.
COUNTED_APART = ("sanity", "analysis")


def _verdict(c: dict) -> str:
    v = c.get("verdict", "")
    if v in VERDICT_ORDER:
        return v
    return "holds" if c.get("holds") else "fails"


def paper_claim_counts(summaries: list[dict]) -> dict[str, dict[str, tuple[int, int]]]:
    """{paper: {kind: (held, total)}} over the summaries' claims."""
    counts: dict[str, dict[str, list[int]]] = {}
    for s in summaries:
        for c in s["claims"]:
            k = c.get("kind", "unclassified")
            held_total = counts.setdefault(s["paper"], {}).setdefault(k, [0, 0])
            held_total[0] += _verdict(c) == "holds"
            held_total[1] += 1
    return {p: {k: (v[0], v[1]) for k, v in ks.items()} for p, ks in counts.items()}


def verdict_counts(claims: list[dict]) -> dict[str, int]:
    """The accounting rule's columns over ``claims``: ``claims``, one count per verdict, and
    ``revised_holds`` (of the claims that hold, those with a revision on record)."""
    out = {"claims": len(claims), **{v: 0 for v in VERDICT_ORDER}, "revised_holds": 0}
    for c in claims:
        v = _verdict(c)
        out[v] += 1
        out["revised_holds"] += v == "holds" and bool(c.get("revised"))
    return out


def status_rows(summaries: list[dict]) -> dict[str, dict[str, int]]:
    """{paper: verdict_counts of its paper claims} plus ``"all"``, and for the kinds counted
    apart ``"sanity"``/``"analysis"`` over every paper."""
    rows: dict[str, list[dict]] = {}
    for s in summaries:
        for c in s["claims"]:
            if c.get("kind") == "paper":
                rows.setdefault(s["paper"], []).append(c)
    out = {p: verdict_counts(cs) for p, cs in rows.items()}
    out["all"] = verdict_counts([c for cs in rows.values() for c in cs])
    for k in COUNTED_APART:
        out[k] = verdict_counts([c for s in summaries for c in s["claims"] if c.get("kind") == k])
    return out


def status_table(rows: dict[str, dict[str, int]]) -> list[str]:
    """The status table (markdown lines): per paper, its paper claims by verdict."""
    lines = ["| paper | paper claims | holds | reading-dependent | undecided | fails | of the holds, after a revision |",
             "|---|---|---|---|---|---|---|"]
    for p, r in rows.items():
        if p in COUNTED_APART:
            continue
        name = f"**{p}**" if p == "all" else p
        pct = f" ({100 * r['holds'] / r['claims']:.0f} %)" if p == "all" and r["claims"] else ""
        lines.append(f"| {name} | {r['claims']} | {r['holds']}{pct} | {r['reading-dependent']} | {r['undecided']} "
                     f"| {r['fails']} | {r['revised_holds']} |")
    apart = [f"{k}: {rows[k]['holds']} of {rows[k]['claims']} hold" for k in COUNTED_APART
             if k in rows and rows[k]["claims"]]
    if apart:
        lines += ["", "Not paper claims, counted apart: " + "; ".join(apart) + "."]
    return lines


def claim_index(summaries: list[dict]) -> list[dict]:
    """One compact row per claim (claims.json): enough to recount the status table and to see
    each verdict, its readings, revisions and explanation without the whole report."""
    rows = []
    for s in summaries:
        for c in s["claims"]:
            rows.append({"experiment": s["experiment"], "paper": s["paper"], "id": c["id"],
                         "kind": c.get("kind", "unclassified"), "verdict": _verdict(c), "holds": _verdict(c) == "holds",
                         "ours": c.get("ours"), "paper_value": c.get("paper_value"),
                         "readings": [{"reading": r["reading"], "verdict": r.get("verdict")}
                                      for r in c.get("readings") or []],
                         "revised": [r["commit"] for r in c.get("revised") or []],
                         "explanation": c.get("explanation", ""), "quick": bool(s.get("quick"))})
    return rows


def consistent_paper_counts(summaries: list[dict]) -> dict[str, tuple[int, int]]:
    """{paper: (held, total)} over the paper claims the paper's own numbers do not contradict
    (claims without ``paper_inconsistent``)."""
    counts: dict[str, list[int]] = {}
    for s in summaries:
        for c in s["claims"]:
            if c.get("kind") == "paper" and not c.get("paper_inconsistent"):
                ht = counts.setdefault(s["paper"], [0, 0])
                ht[0] += _verdict(c) == "holds"
                ht[1] += 1
    return {p: (v[0], v[1]) for p, v in counts.items()}


def unexplained_paper_failures(summaries: list[dict]) -> list[str]:
    """experiment/claim of each paper claim that does not hold and has no explanation."""
    return [f"{s['experiment']}/{c['id']}" for s in summaries for c in s["claims"]
            if c.get("kind") == "paper" and _verdict(c) != "holds" and not c.get("explanation")]


def write_report(out: Path, summaries: list[dict]) -> None:
    """report.json (the summaries), status.json (the status table's counts), claims.json (one
    compact row per claim, ``claim_index``) and report.md: the
    status table, then per paper the paper's own claims first, then derived, variant, sanity
    and analysis claims, each with its verdict and readings."""
    (out / "report.json").write_text(json.dumps(summaries, indent=2, default=str) + "\n")
    rows = status_rows(summaries)
    (out / "status.json").write_text(json.dumps(rows, indent=2) + "\n")
    (out / "claims.json").write_text(json.dumps(claim_index(summaries), indent=1, default=str) + "\n")
    counts = paper_claim_counts(summaries)
    kinds = sorted({k for ks in counts.values() for k in ks}, key=lambda k: KIND_ORDER.get(k, 9))
    quick = any(s.get("quick") for s in summaries)
    lines = ["# castlab reproduction report", "",
             *([f"**Quick run** (`--quick`, shorter settings): {QUICK_NOTE}; the counts below say what "
                "the short settings gave, not whether the papers' claims hold.", ""] if quick else []),
             "The papers' claims under the accounting rule (docs/fidelity/README.md): a claim holds only when "
             "it holds under every reading the paper allows, universal statements on the worst seed, an "
             "interval over seeds that reaches both sides of the rule is undecided.", "",
             *status_table(rows)]
    missing = unexplained_paper_failures(summaries)
    if missing:
        lines += ["", f"**{len(missing)} paper claims that do not hold have no explanation:** " + ", ".join(missing)]
    for paper in counts:
        for kind in kinds:
            rows_k = [(s, c) for s in summaries if s["paper"] == paper for c in s["claims"]
                      if c.get("kind", "unclassified") == kind]
            if not rows_k:
                continue
            held = sum(_verdict(c) == "holds" for _, c in rows_k)
            lines += ["", f"## {paper}: {kind} claims, {held} of {len(rows_k)} hold", "",
                      "| experiment | figure | claim | paper | ours | unit | verdict | readings | why, if not |",
                      "|---|---|---|---|---|---|---|---|---|"]
            for s, c in rows_k:
                ours = f"{c['ours']:.4g}" if isinstance(c["ours"], float) else c["ours"]
                v = _verdict(c)
                why = c.get("explanation", "") if v != "holds" else ""
                if c.get("paper_inconsistent"):
                    why = (why + " " if why else "") + f"(the paper contradicts itself: {c['paper_inconsistent']})"
                if c.get("revised"):
                    why = (why + " " if why else "") + f"(revised: {', '.join(r['commit'] for r in c['revised'])})"
                readings = "; ".join(f"{r['reading']}: {r['ours']} {r.get('verdict', 'holds' if r['holds'] else 'fails')}"
                                     for r in c.get("readings") or [])
                lines.append(f"| {s['experiment']} | {s['figure']} | {c['statement']} | {c['paper_value']} "
                             f"| {ours} | {c['unit']} | {v if v != 'fails' else 'FAILS'} | {readings} | {why} |")
    (out / "report.md").write_text("\n".join(lines) + "\n")
    print(f"report: {out / 'report.md'}", file=sys.stderr)
    print(f"report: {write_html(out, summaries)}", file=sys.stderr)
    for paper, r in rows.items():
        if paper not in COUNTED_APART and paper != "all":
            print(f"  {paper}: {r['holds']} of {r['claims']} paper claims hold ({r['reading-dependent']} "
                  f"reading-dependent, {r['undecided']} undecided, {r['fails']} fail)", file=sys.stderr)
    if missing:
        print(f"  {len(missing)} paper claims that do not hold have no explanation: {', '.join(missing)}",
              file=sys.stderr)
