"""The revisions: every change to a claim's rule, tolerance, reading, metric, sizes or parameters
made after a run in which its verdict was seen, as data.

The accounting rule (docs/fidelity/README.md, point 6): such a change is written on the claim
(``revised``, attached by ``write_summary``) and listed on one generated page,
``docs/fidelity/revisions.md`` (``python -m castlab.experiments.revisions`` writes it; a test
checks it is up to date). A fail-to-hold revision stands only when its ``reason`` quotes the
paper (``paper_quote``); otherwise the code follows the rule from before it (``status``
``undone``). A hold-to-fail revision applies at once.

Each entry: ``experiment``, ``claim`` (its id), ``commit`` (the change, or the commit that
undid or applied it here), ``what`` (rule, tolerance, reading, metric, sizes, parameter, kind),
``before``, ``after`` (the rule as it stands in the code now), ``direction`` (``fail-to-hold``,
``hold-to-fail`` or ``none`` when the verdict did not move), ``status`` (``kept`` or ``undone``),
``reason`` and, for a kept fail-to-hold, ``paper_quote``.
"""

from __future__ import annotations

import sys
from dataclasses import asdict, dataclass
from pathlib import Path

__all__ = ["Revision", "REVISIONS", "revisions_for", "render_page", "PAGE"]

PAGE = Path(__file__).resolve().parents[3] / "docs" / "fidelity" / "revisions.md"
DIRECTIONS = ("fail-to-hold", "hold-to-fail", "none")
STATUSES = ("kept", "undone")


@dataclass(frozen=True)
class Revision:
    experiment: str
    claim: str
    commit: str
    what: str
    before: str
    after: str
    direction: str
    status: str
    reason: str
    paper_quote: str = ""

    def __post_init__(self) -> None:
        if self.direction not in DIRECTIONS:
            raise ValueError(f"{self.experiment}/{self.claim}: direction must be one of {DIRECTIONS}")
        if self.status not in STATUSES:
            raise ValueError(f"{self.experiment}/{self.claim}: status must be one of {STATUSES}")
        if self.direction == "fail-to-hold" and self.status == "kept" and not self.paper_quote.strip():
            raise ValueError(f"{self.experiment}/{self.claim}: a fail-to-hold revision stands only with the "
                             "paper's sentence that justifies it (paper_quote); otherwise undo it")


R = Revision

REVISIONS: list[Revision] = [
    # ---- RLM (McCanne et al. 1996)
    R("rlm-fig8", "time-to-optimal", "77c0d4c", "reading",
      "30 ± 15 s at the 9 s initial detection timer (50.9 s: fails)",
      "30 ± 15 s at every reading the paper allows (9 s primary, 5 s)", "fail-to-hold", "undone",
      "the 5 s reading was added after the claim failed and the band rule let it rescue the claim; under the "
      "accounting rule the claim needs every reading"),
    R("rlm-fig9", "w1-10-20pct-low-delay", "77c0d4c", "reading",
      "10-20 % at leave latency 0 (6.0 %: fails)", "10-20 % at every leave latency the paper allows (0 primary, 0.2 s)",
      "fail-to-hold", "undone", "the 0.2 s reading has no source in the paper and was added after the claim failed"),
    R("rlm-fig9", "w100-under-1pct", "ec912cc", "sizes",
      "mean over seeds of the per-seed largest loss", "the worst seed", "none", "kept",
      "'under 1%' is a universal statement: decided on the worst seed"),
    R("rlm-fig9", "loss-grows-with-latency", "ec912cc", "metric",
      "10 s worst-case loss at the largest latency over that at 10 ms, at least 2 (a ×2000 latency range)",
      "log-log slope of the 10 s worst-case loss on the latency from 10 ms, at least 0.5", "none", "kept",
      "the ratio rule could hardly fail; 'proportional to the link latency' is a slope of 1 on log-log axes"),
    R("rlm-fig11", "log-not-linear", "ec912cc", "rule",
      "R² difference of one fit over every receiver at least 0", "R² difference per seed, mean over seeds at least "
      "0, undecided when the interval reaches both signs", "none", "kept",
      "one fit over every receiver gave a difference of 0.014, within noise; the seeds' interval decides it"),
    R("rlm-fig11", "grows-with-size", "ec912cc", "parameter",
      "deterministic runs (phase-sensitive by docs/fidelity/phase.md's table, kept deterministic)",
      "phase-randomised runs, the deterministic ones shown beside", "none", "kept",
      "the phase rule has no exceptions"),
    R("rlm-fig13", "w100-under-1pct", "ec912cc", "sizes",
      "mean over seeds of the per-seed largest 100 s loss (0.80 % at the 9 s timer)",
      "the worst seed (seed 3: 1.14 %)", "hold-to-fail", "kept",
      "'long-term loss rates are under 1%' is a universal statement: decided on the worst seed"),
    R("rlm-fig13", "no-pair-starved", "268a417", "tolerance",
      "smallest pair's rate at least 224 kb/s (3 layers)", "224 kb/s again, on the worst seed (the revision set "
      "160 kb/s, halfway between 2 and 3 layers, after the worst pair sat at 223 kb/s)", "fail-to-hold", "undone",
      "the bar was lowered after the result; no sentence of the paper sets a bar below 3 layers"),
    R("rlm-red", "red-improves-1s", "2648e4d", "parameter",
      "RED at w_q 0.02 (×1.63-1.69: fails)", "RED at every w_q the paper allows (0.002-0.2; 0.2 primary)",
      "fail-to-hold", "undone", "the paper gives no RED parameters; w_q 0.2 was chosen after w_q 0.02 failed"),
    R("rlm-red", "red-improves-10s", "2648e4d", "parameter",
      "RED at w_q 0.02 (fails)", "RED at every w_q the paper allows (0.002-0.2; 0.2 primary)",
      "fail-to-hold", "undone", "the paper gives no RED parameters; w_q 0.2 was chosen after w_q 0.02 failed"),
    R("rlm-red", "red-improves-100s", "2648e4d", "parameter",
      "RED at w_q 0.02 (fails)", "RED at every w_q the paper allows (0.002-0.2; 0.2 primary)",
      "fail-to-hold", "undone", "the paper gives no RED parameters; w_q 0.2 was chosen after w_q 0.02 failed"),
    R("rlm-fig10", "all-reach-optimum", "ec912cc", "sizes",
      "mean over seeds of the fraction of receivers at the optimum, at least 1",
      "the worst seed's fraction, at least 1", "none", "kept",
      "'each receiver eventually reaches the optimal level' is a universal statement: decided on the worst seed"),
    R("rlm-fig12", "set-B-optimum", "ec912cc", "sizes",
      "mean over seeds of the fraction of receivers at the optimum, at least 1",
      "the worst seed's fraction, at least 1", "none", "kept",
      "every receiver of the set settling at its optimum is a universal statement: decided on the worst seed"),
    R("rlm-fig12", "set-B/2-optimum", "ec912cc", "sizes",
      "mean over seeds of the fraction of receivers at the optimum, at least 1",
      "the worst seed's fraction, at least 1", "none", "kept",
      "every receiver of the set settling at its optimum is a universal statement: decided on the worst seed"),
    R("net-rlm-red", "red-improves-1s", "ec912cc", "kind",
      "a paper claim at the primary w_q", "derived: the paper claim needs every w_q (rlm-red)", "none", "kept",
      "the testbed runs one w_q; the paper gives no RED parameters"),
    R("net-rlm-red", "red-improves-10s", "ec912cc", "kind",
      "a paper claim at the primary w_q", "derived: the paper claim needs every w_q (rlm-red)", "none", "kept",
      "the testbed runs one w_q; the paper gives no RED parameters"),
    R("net-rlm-red", "red-improves-100s", "ec912cc", "kind",
      "a paper claim at the primary w_q", "derived: the paper claim needs every w_q (rlm-red)", "none", "kept",
      "the testbed runs one w_q; the paper gives no RED parameters"),
    R("net-nlm", "nlm-goodput-near-throughput", "eadcbb8", "kind",
      "a paper claim, NLM's goodput over its own throughput", "sanity (1 by construction at zero loss)", "none",
      "kept", "the own-throughput ratio cannot fail while NLM loses nothing"),
    # ---- NLM (Nakauchi et al. 2000)
    R("nlm-fig10", "nlm-goodput-near-throughput", "eadcbb8", "metric",
      "NLM's goodput over RLM's throughput, at least 0.9 (0.86: fails)",
      "NLM's goodput over its own throughput, at least 0.99, as a sanity claim (1 by construction at zero loss)",
      "fail-to-hold", "undone", "the own-throughput ratio cannot fail while NLM loses nothing: not a paper claim"),
    R("nlm-fig10", "rlm-max-loss-9pct", "77c0d4c", "reading",
      "9 % ± 50 % with jittered sources", "9 % ± 50 % under both source readings (jittered primary, periodic)",
      "none", "undone", "the band rule held it when any reading held; both readings miss 9 %"),
    R("nlm-fig13", "rlm-grows-with-n", "77c0d4c", "reading",
      "rank correlation at least 0.5 with jittered sources (−0.45: fails)",
      "at least 0.5 under both source readings (jittered primary, periodic)", "fail-to-hold", "undone",
      "the periodic reading holds through a lock-step collapse in which every protocol loses whole seconds; "
      "under the accounting rule the claim needs both readings"),
    R("nlm-fig11", "rlm-40s-over-10pct", "eadcbb8", "metric",
      "seconds over 10 % loss after 90 s, all of them", "seconds over 10 % loss in the episode that starts at 90 s",
      "fail-to-hold", "kept", "the sentence describes one episode after the cross traffic starts",
      paper_quote="RLM keeps high loss rate (more than 10[%]) for 40[s]"),
    R("nlm-fig11", "nlm-loss-1pct", "eadcbb8", "kind",
      "a paper claim, ±0.02 of 1 %", "marked paper_inconsistent by arithmetic using a loss window the paper does not "
      "give; unmarked again: a castlab choice (the window) is involved", "none", "undone",
      "paper_inconsistent stands only on the paper's own numbers"),
]


def revisions_for(experiment: str, claim: str) -> list[dict]:
    """The revisions of one claim, as the dicts written into summary.json."""
    return [asdict(r) for r in REVISIONS if r.experiment == experiment and r.claim == claim]


def render_page() -> str:
    """docs/fidelity/revisions.md's text, from REVISIONS."""
    lines = ["# Revisions: claims changed after their verdict was seen", "",
             "Generated by `python -m castlab.experiments.revisions` from "
             "`python/castlab/experiments/revisions.py`; do not edit by hand.", "",
             "A change to a claim's rule, tolerance, reading, metric, sizes or parameters after a run in which "
             "its verdict was seen is listed here and written on the claim (`revised` in its summary.json). "
             "A fail-to-hold change stands only when the paper's own sentence justifies it (quoted); otherwise "
             "the code follows the rule from before it (`undone`). A hold-to-fail change applies at once.", ""]
    kept = sum(r.status == "kept" for r in REVISIONS)
    lines += [f"{len(REVISIONS)} revisions over {len({(r.experiment, r.claim) for r in REVISIONS})} claims: "
              f"{kept} kept, {len(REVISIONS) - kept} undone.", "",
              "| experiment | claim | commit | what | before | after | direction | status | reason |",
              "|---|---|---|---|---|---|---|---|---|"]
    for r in sorted(REVISIONS, key=lambda r: (r.experiment, r.claim, r.commit)):
        reason = r.reason + (f" Paper: \"{r.paper_quote}\"" if r.paper_quote else "")
        cells = [r.experiment, f"`{r.claim}`", r.commit, r.what, r.before, r.after, r.direction, r.status, reason]
        lines.append("| " + " | ".join(c.replace("|", "\\|").replace("\n", " ") for c in cells) + " |")
    return "\n".join(lines) + "\n"


def main(argv: list[str]) -> int:
    """Write the page (``--check``: exit 1 when it is out of date instead)."""
    text = render_page()
    if "--check" in argv:
        ok = PAGE.exists() and PAGE.read_text() == text
        if not ok:
            print(f"{PAGE} is out of date: run python -m castlab.experiments.revisions", file=sys.stderr)
        return 0 if ok else 1
    PAGE.write_text(text)
    print(f"wrote {PAGE}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
