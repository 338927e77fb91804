"""Are every experiment's claims the same between two folders of `bench/same_csvs.py run`? The
companion of its `compare` for a change that must not move any verdict (a refactoring).

    python bench/same_claims.py OUT_A OUT_B [--params]

For each experiment folder on both sides it reads `summary.json` (the experiment's own and
every nested one: none today, but a reading's folder could hold one) and compares, claim by
claim in order, every field a verdict rests on or says: id, kind, verdict, holds, ours,
paper_value, tolerance, unit, statement, the per-reading list `readings`, explanation and
paper_inconsistent. `--params` also compares the summaries' `params` and `files` (wall-clock
keys, whose names end in `wall_s` or `run_s`, left out). It prints one line per difference and
exits 1 when there is any, or when a folder is on one side only.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

FIELDS = ("id", "kind", "verdict", "holds", "ours", "paper_value", "tolerance", "unit", "statement", "readings",
          "explanation", "paper_inconsistent")


def _no_wall(x):
    if isinstance(x, dict):
        return {k: _no_wall(v) for k, v in x.items() if not k.endswith(("wall_s", "run_s"))}
    if isinstance(x, list):
        return [_no_wall(v) for v in x]
    return x


def _same(x, y) -> bool:
    """Equal as JSON text, so that NaN (a claim with no value) equals NaN."""
    return json.dumps(x, sort_keys=True) == json.dumps(y, sort_keys=True)


def compare_summaries(a: dict, b: dict, params: bool) -> list[str]:
    bad = []
    ca, cb = a.get("claims", []), b.get("claims", [])
    if [c["id"] for c in ca] != [c["id"] for c in cb]:
        bad.append(f"claim ids differ: {[c['id'] for c in ca]} / {[c['id'] for c in cb]}")
    for x, y in zip(ca, cb):
        for f in FIELDS:
            if not _same(x.get(f), y.get(f)):
                bad.append(f"{x['id']}: {f}: {x.get(f)!r} / {y.get(f)!r}")
    if params:
        for key in ("params", "files"):
            if not _same(_no_wall(a.get(key)), _no_wall(b.get(key))):
                bad.append(f"{key} differ")
    return bad


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("a", type=Path)
    ap.add_argument("b", type=Path)
    ap.add_argument("--params", action="store_true")
    args = ap.parse_args()
    sa = {p.relative_to(args.a) for p in args.a.rglob("summary.json")}
    sb = {p.relative_to(args.b) for p in args.b.rglob("summary.json")}
    bad = [f"only in {args.a}: {p}" for p in sorted(sa - sb)] + [f"only in {args.b}: {p}" for p in sorted(sb - sa)]
    same = 0
    for p in sorted(sa & sb):
        diffs = compare_summaries(json.loads((args.a / p).read_text()), json.loads((args.b / p).read_text()),
                                  args.params)
        if diffs:
            bad += [f"{p.parent}: {d}" for d in diffs]
        else:
            same += 1
    print(f"{same} of {len(sa | sb)} summaries with the same claims{' and params' if args.params else ''}")
    for line in bad:
        print(line)
    return 1 if bad or not (sa | sb) else 0


if __name__ == "__main__":
    sys.exit(main())
