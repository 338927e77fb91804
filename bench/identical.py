"""Check that an engine change leaves every simulated experiment's results unchanged.

    python3 bench/identical.py run DIR [NAME ...]   # `castlab reproduce NAME --quick` for every
                                                    # simulated experiment (or the NAMEs) into DIR/NAME
    python3 bench/identical.py compare A B          # compare two such folders

Run it once with the build before the change and once after (rebuild in between), then compare.
The real-network experiments (net-*) run on the wall clock and are left out. `compare` reports,
per CSV file: byte-identical, identical except wall-clock columns (a column whose name ends in
`wall_s`, which times the run itself), or different (with the first differing line); and, per
`summary.json`, whether every claim's `ours` and `holds` are the same. It exits 1 when anything
but wall-clock columns differs.
"""

from __future__ import annotations

import csv
import io
import json
import subprocess
import sys
import time
from pathlib import Path


def simulated_names() -> list[str]:
    from castlab.experiments import REGISTRY

    return [n for n in REGISTRY if not n.startswith("net-")]


def run(out: Path, names: list[str]) -> int:
    castlab = Path(sys.executable).with_name("castlab")
    out.mkdir(parents=True, exist_ok=True)
    bad = 0
    for n in names or simulated_names():
        t = time.perf_counter()
        r = subprocess.run([str(castlab), "reproduce", n, "--quick", "--jobs", "1", "--out", str(out / n)],
                           stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        print(f"{n}: exit {r.returncode}, {time.perf_counter() - t:.1f} s", flush=True)
        if r.returncode != 0:
            bad += 1
            print(r.stderr[-2000:], file=sys.stderr)
    return 1 if bad else 0


def _without_wall(text: str) -> list[list[str]]:
    rows = list(csv.reader(io.StringIO(text)))
    if not rows:
        return rows
    keep = [i for i, h in enumerate(rows[0]) if not h.endswith("wall_s")]
    return [[r[i] for i in keep if i < len(r)] for r in rows]


def _claims(path: Path) -> dict:
    s = json.loads(path.read_text())
    return {c["id"]: (c.get("ours"), c.get("holds")) for c in s.get("claims", [])}


def compare(a: Path, b: Path) -> int:
    same = wall_only = differ = 0
    problems = []
    files = sorted({p.relative_to(a) for p in a.rglob("*.csv")} | {p.relative_to(b) for p in b.rglob("*.csv")})
    for rel in files:
        pa, pb = a / rel, b / rel
        if not pa.exists() or not pb.exists():
            differ += 1
            problems.append(f"{rel}: only in {'B' if not pa.exists() else 'A'}")
            continue
        ta, tb = pa.read_bytes(), pb.read_bytes()
        if ta == tb:
            same += 1
        elif _without_wall(ta.decode()) == _without_wall(tb.decode()):
            wall_only += 1
        else:
            differ += 1
            la, lb = ta.decode().splitlines(), tb.decode().splitlines()
            i = next((i for i, (x, y) in enumerate(zip(la, lb)) if x != y), min(len(la), len(lb)))
            problems.append(f"{rel}: line {i + 1} differs ({len(la)} vs {len(lb)} lines)")
    claims_same = claims_differ = 0
    for sa in sorted(a.glob("*/summary.json")):
        sb = b / sa.relative_to(a)
        if sb.exists() and _claims(sa) == _claims(sb):
            claims_same += 1
        else:
            claims_differ += 1
            problems.append(f"{sa.relative_to(a)}: claims differ")
    print(f"{len(files)} CSV files: {same} byte-identical, {wall_only} identical except wall-clock columns, "
          f"{differ} different; {claims_same + claims_differ} summaries: {claims_same} with the same claims "
          f"(ours, holds), {claims_differ} different")
    for p in problems:
        print("  " + p)
    return 1 if differ or claims_differ else 0


def main(argv: list[str]) -> int:
    if len(argv) >= 2 and argv[0] == "run":
        return run(Path(argv[1]), argv[2:])
    if len(argv) == 3 and argv[0] == "compare":
        return compare(Path(argv[1]), Path(argv[2]))
    print(__doc__, file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
