"""The report of ``castlab reproduce --all``: every experiment's summary gathered into
report.json and report.md, the paper's own claims counted per paper and kind."""

from __future__ import annotations

import json
import sys
from pathlib import Path

from castlab.claims import QUICK_NOTE
from castlab.report_html import write_html

__all__ = ["KIND_ORDER", "paper_claim_counts", "consistent_paper_counts", "unexplained_paper_failures",
           "write_report"]

KIND_ORDER = {"paper": 0, "derived": 1, "variant": 2, "sanity": 3}


def paper_claim_counts(summaries: list[dict]) -> dict[str, dict[str, tuple[int, int]]]:
    """{paper: {kind: (held, total)}} over the summaries' claims."""
    counts: dict[str, dict[str, list[int]]] = {}
    for s in summaries:
        for c in s["claims"]:
            k = c.get("kind", "unclassified")
            held_total = counts.setdefault(s["paper"], {}).setdefault(k, [0, 0])
            held_total[0] += bool(c["holds"])
            held_total[1] += 1
    return {p: {k: (v[0], v[1]) for k, v in ks.items()} for p, ks in counts.items()}


def consistent_paper_counts(summaries: list[dict]) -> dict[str, tuple[int, int]]:
    """{paper: (held, total)} over the paper claims the paper's own numbers do not contradict
    (claims without ``paper_inconsistent``)."""
    counts: dict[str, list[int]] = {}
    for s in summaries:
        for c in s["claims"]:
            if c.get("kind") == "paper" and not c.get("paper_inconsistent"):
                ht = counts.setdefault(s["paper"], [0, 0])
                ht[0] += bool(c["holds"])
                ht[1] += 1
    return {p: (v[0], v[1]) for p, v in counts.items()}


def unexplained_paper_failures(summaries: list[dict]) -> list[str]:
    """experiment/claim of each failing paper claim without an explanation."""
    return [f"{s['experiment']}/{c['id']}" for s in summaries for c in s["claims"]
            if c.get("kind") == "paper" and not c["holds"] and not c.get("explanation")]


def write_report(out: Path, summaries: list[dict]) -> None:
    """report.json (the summaries) and report.md: per paper, the paper's own claims first with
    their count, then derived, variant and sanity claims, each kind counted on its own."""
    (out / "report.json").write_text(json.dumps(summaries, indent=2, default=str) + "\n")
    counts = paper_claim_counts(summaries)
    kinds = sorted({k for ks in counts.values() for k in ks}, key=lambda k: KIND_ORDER.get(k, 9))
    quick = any(s.get("quick") for s in summaries)
    lines = ["# castlab reproduction report", "",
             *([f"**Quick run** (`--quick`, shorter settings): {QUICK_NOTE}; the counts below say what "
                "the short settings gave, not whether the papers' claims hold.", ""] if quick else []),
             "| paper | " + " | ".join(f"{k} claims held" for k in kinds) + " |",
             "|---|" + "---|" * len(kinds)]
    for paper, ks in counts.items():
        cells = [f"{ks[k][0]} of {ks[k][1]}" if k in ks else "" for k in kinds]
        lines.append(f"| {paper} | " + " | ".join(cells) + " |")
    tot = {k: [sum(ks.get(k, (0, 0))[i] for ks in counts.values()) for i in (0, 1)] for k in kinds}
    lines.append("| **all** | " + " | ".join(f"**{tot[k][0]} of {tot[k][1]}**" for k in kinds) + " |")
    consistent = consistent_paper_counts(summaries)
    if consistent:
        held, total = (sum(v[i] for v in consistent.values()) for i in (0, 1))
        lines += ["", "The paper's claims whose numbers the paper itself does not contradict "
                  "(a claim marked inconsistent shows the paper's own arithmetic):", "",
                  "| paper | consistent paper claims held |", "|---|---|"]
        lines += [f"| {p} | {h} of {t} |" for p, (h, t) in consistent.items()]
        lines.append(f"| **all** | **{held} of {total}** ({100 * held / max(total, 1):.0f} %) |")
    missing = unexplained_paper_failures(summaries)
    if missing:
        lines += ["", f"**{len(missing)} failing paper claims have no explanation:** " + ", ".join(missing)]
    for paper in counts:
        for kind in kinds:
            rows = [(s, c) for s in summaries if s["paper"] == paper for c in s["claims"]
                    if c.get("kind", "unclassified") == kind]
            if not rows:
                continue
            held = sum(c["holds"] for _, c in rows)
            lines += ["", f"## {paper}: {kind} claims, {held} of {len(rows)} hold", "",
                      "| experiment | figure | claim | paper | ours | unit | holds | why, if not |",
                      "|---|---|---|---|---|---|---|---|"]
            for s, c in rows:
                ours = f"{c['ours']:.4g}" if isinstance(c["ours"], float) else c["ours"]
                why = c.get("explanation", "") if not c["holds"] else ""
                if c.get("paper_inconsistent"):
                    why = (why + " " if why else "") + f"(the paper contradicts itself: {c['paper_inconsistent']})"
                lines.append(f"| {s['experiment']} | {s['figure']} | {c['statement']} | {c['paper_value']} "
                             f"| {ours} | {c['unit']} | {'yes' if c['holds'] else 'NO'} | {why} |")
    (out / "report.md").write_text("\n".join(lines) + "\n")
    print(f"report: {out / 'report.md'}", file=sys.stderr)
    print(f"report: {write_html(out, summaries)}", file=sys.stderr)
    for paper, ks in counts.items():
        if "paper" in ks:
            print(f"  {paper}: {ks['paper'][0]} of {ks['paper'][1]} of the paper's claims hold", file=sys.stderr)
    if missing:
        print(f"  {len(missing)} failing paper claims have no explanation: {', '.join(missing)}", file=sys.stderr)
