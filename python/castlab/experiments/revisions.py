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
    # --- Yano & McCanne 1999, BCFS/Rainbow (audit: reviews/tfmcc-rainbow-audit.md R1, C1-C6) ---
    R("rainbow-a1", "fast-rate-band", "882b7fb", "parameter",
      "TRQ lost after 1 later answer (§III-C as written): fast receivers 196-199 kb/s against 329.7 ±15 %",
      "1 later answer, the paper's literal rule, in every Rainbow experiment (51e4f2e); 3 is a variant "
      "(reorder3-* claims)", "fail-to-hold", "undone",
      "RainbowConfig.reorder_threshold defaulted to 3 (TCP's duplicate-ACK count) with the A-(i) result in view; "
      "no sentence of the paper gives a count other than one"),
    R("rainbow-a1", "overhead-band", "2b47e7f", "rule",
      "±0.10 of 15.2 % at the fast delays 5/10/20/40 ms (claim `overhead`, paper kind): 30.7 %, fails",
      "±0.10 at every declared reading of Fig. 5's fast delays, the primary 5/10/20/40 ms first (ec912cc, 51e4f2e)",
      "fail-to-hold", "undone",
      "the claim became 'the paper's value lies in the band of four delay readings' after the point claim had "
      "failed; no sentence of the paper puts the overhead anywhere but at its one set-up"),
    R("rainbow-a1", "fast-rate-band", "2b47e7f", "rule",
      "±15 % of 329.7 kb/s at 5/10/20/40 ms (claim `fast-rate`): 311.0, holds",
      "±15 % at every declared reading of Fig. 5's fast delays (ec912cc, 51e4f2e)", "none", "undone",
      "band over four delay readings (the paper's value between them) replaced by every reading within tolerance"),
    R("rainbow-a1", "slow-shared-band", "2b47e7f", "rule",
      "±0.05 of 98.8 % at 5/10/20/40 ms (claim `slow-shared`): 89.3 %, fails",
      "±0.05 at every declared reading of Fig. 5's fast delays (ec912cc, 51e4f2e)", "none", "undone",
      "band over four delay readings replaced by every reading within tolerance"),
    R("rainbow-a1", "overhead-band", "fe704ad", "reading",
      "ps = packets that crossed the up-link: 29.2 %", "ps = packets sent from the source, the up-link's drops "
      "included: 30.7 % (both at reorder 3)", "none", "kept",
      "§IV-A.3 counts the packets 'sent from the source'; the verdict (±0.10 of 15.2 %) did not move",
      "four times of the packet number sent from the source over the total packet number received by the four "
      "faster receivers"),
    R("rainbow-b1", "overhead-n125-red-band", "fe704ad", "reading",
      "eq. 1 over whole runs: 42.2 % at N = 125", "eq. 1 over 10-20 s ended by the first completion: 10.5 %",
      "none", "kept",
      "over whole runs staggered starts and completions give overhead even with every packet shared; §IV-B.2 says "
      "complete aggregation gives 0 %; ±0.10 of 25 % failed both ways",
      "Ideally all data packets should be aggregated at the shared link and provided to all receivers, which "
      "results in 0% overhead"),
    R("rainbow-b1", "overhead-n125-red-band", "2eb4bd7", "rule",
      "±0.10 of 25 % at RED 5/15 (claim `overhead-levels-near-25`, paper kind): fails",
      "±0.10 at every declared RED reading (5/15, 3/9, 2/6), the primary 5/15 first (ec912cc, 51e4f2e); the "
      "5/15-only claim removed as it is the primary reading", "none", "kept",
      "the RED thresholds are an open setting of the paper (it gives none); fails at every reading"),
    R("rainbow-b1", "fig10-model-eq1", "51e4f2e", "kind",
      "paper kind, marked paper_inconsistent", "analysis kind (Python arithmetic on synthetic sawtooths, the "
      "simulator not run); the arithmetic stays in its explanation", "none", "kept",
      "arithmetic on a model is not a reproduction of the paper (audit C5)"),
    R("rainbow-b1", "fig10-model-triangles", "51e4f2e", "kind", "derived kind", "analysis kind", "none", "kept",
      "the triangle share tends to 1/4 by order statistics: it cannot fail at N = 125 (audit C5)"),
    R("rainbow-b4", "fairness-more-settled-than-rlc", "1103914", "rule",
      "no claim", "Rainbow's fairness range over 2N minus RLC's <= 0: -0.10, holds", "none", "kept",
      "the rule was written after the full runs had been seen (docs/fidelity/rainbow.md said so)"),
    R("rainbow-b4", "fairness-more-settled-than-rlc", "345994d", "metric",
      "range (max - min) of the mean fairness over 2N, Rainbow's minus RLC's <= 0: -0.10",
      "total variation of the mean fairness, Rainbow's minus RLC's <= 0: -0.10", "none", "kept",
      "re-decided from §IV-B.6's words after the results were known; the verdict did not move"),
    R("rainbow-b4", "fairness-more-settled-than-rlc", "51e4f2e", "kind", "paper kind",
      "paper only when castlab's RLC reproduces Fig. 13's RLC (all of rlc-ratio-2N=4, rlc-unfair-2N=4, "
      "rlc-ratio-2N=16 hold), else derived", "none", "kept",
      "a comparison with a baseline that does not reproduce the paper's baseline is not a paper claim (audit C4)"),
    R("rainbow-b3", "rlc-loss-above-rainbow-128k", "51e4f2e", "kind", "paper kind",
      "paper only when castlab's RLC reproduces Fig. 12's RLC (its five rlc-* paper claims hold), else derived",
      "none", "kept", "a comparison with a baseline that does not reproduce the paper's baseline (audit C4)"),
    R("rainbow-b2", "avg-utilisation-rlc-more-settled", "51e4f2e", "kind", "paper kind",
      "paper only when castlab's RLC reproduces Fig. 11's RLC (its five rlc-* paper claims hold), else derived",
      "none", "kept", "as for Figs 12 and 13 (audit C4)"),
    R("rainbow-b2", "worst-is-broadest", "51e4f2e", "rule",
      "worst-utilised link is l_5 or l_6 in at least half the runs (at reorder 3: 100 %)",
      "worst-utilised link is l_6 in at least half the runs: 100 %", "none", "kept",
      "'the highest bandwidth link (l_6)' names one link, not one of two (audit C2)"),
    R("rainbow-b2", "rlc-lossiest-is-narrowest", "51e4f2e", "rule",
      "lossiest link l_-6 or l_-5 in at least half the runs (100 %)", "lossiest link l_-6 in at least half: 98 %",
      "none", "kept", "'the lowest bandwidth link (l_{-6})' names one link (audit C2)"),
    R("rainbow-b2", "rlc-best-is-narrowest", "51e4f2e", "rule",
      "best-utilised link l_-6 or l_-5 in at least half the runs (62 %)", "best-utilised link l_-6 in at least "
      "half: 60 %", "none", "kept", "'the lowest bandwidth link' names one link (audit C2)"),
    R("rainbow-b3", "fair-128k", "51e4f2e", "rule", "Jain's index of the mean >= 0.9: 0.98",
      "Rainbow / TCP in [0.5, 2] (the same as Jain >= 0.9 for two flows), with its t interval: 1.35", "none",
      "kept", "states what 'fair' passes (audit C3); the threshold itself dates from 1a5b18e, before any run"),
    R("rainbow-b3", "fair-256k", "51e4f2e", "rule", "Jain's index >= 0.9: 0.97", "ratio in [0.5, 2]: 1.38",
      "none", "kept", "as fair-128k (audit C3)"),
    R("rainbow-b3", "fair-384k", "51e4f2e", "rule", "Jain's index >= 0.9: 0.96", "ratio in [0.5, 2]: 1.52",
      "none", "kept", "as fair-128k (audit C3)"),
    R("rainbow-b3", "fair-512k", "51e4f2e", "rule", "Jain's index >= 0.9: 0.97", "ratio in [0.5, 2]: 1.39",
      "none", "kept", "as fair-128k (audit C3)"),
    R("rainbow-b2", "rlc-loss-above-rainbow", "51e4f2e", "kind", "paper kind",
      "paper only when castlab's RLC reproduces Fig. 11's RLC, else derived", "none", "kept",
      "as for Figs 12 and 13 (audit C4)"),
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
