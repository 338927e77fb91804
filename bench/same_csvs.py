"""Are every simulated experiment's CSVs byte-identical between two builds? For a change that
must not move any result (a refactoring), run each experiment in its quick form with one seed
under each build, then compare every CSV file by file.

    python bench/same_csvs.py run OUT [--python PY] [--seed N] [--only NAME ...]
    python bench/same_csvs.py compare OUT_A OUT_B

`run` uses `PY -m castlab reproduce NAME --quick --seed N --out OUT/NAME` for every registered
experiment but the real-network ones (net-*: root and the namespace testbed), one after the
other. To run an older build, point PY's `castlab` at it (PYTHONPATH to its `python/` folder
with its compiled `_native` beside the package). `compare` lists the CSVs that differ or exist
on one side only and exits 1 when there is any.
"""

from __future__ import annotations

import argparse
import filecmp
import subprocess
import sys
import time
from pathlib import Path


def _names(py: str) -> list[str]:
    out = subprocess.run([py, "-c", "from castlab.experiments import REGISTRY; print(' '.join(REGISTRY))"],
                         capture_output=True, text=True, check=True).stdout.split()
    return [n for n in out if not n.startswith("net-")]


def run(out: Path, py: str, seed: int, only: list[str]) -> int:
    names = only or _names(py)
    failed = []
    for n in names:
        t = time.monotonic()
        r = subprocess.run([py, "-m", "castlab", "reproduce", n, "--quick", "--seed", str(seed), "--out",
                            str(out / n)], capture_output=True, text=True)
        print(f"{n:24s} exit {r.returncode} {time.monotonic() - t:6.1f} s", flush=True)
        if r.returncode != 0:
            failed.append(n)
            print(r.stderr[-2000:], file=sys.stderr)
    return 1 if failed else 0


def compare(a: Path, b: Path) -> int:
    fa = {p.relative_to(a) for p in a.rglob("*.csv")}
    fb = {p.relative_to(b) for p in b.rglob("*.csv")}
    bad = [f"only in {a}: {p}" for p in sorted(fa - fb)] + [f"only in {b}: {p}" for p in sorted(fb - fa)]
    same = 0
    for p in sorted(fa & fb):
        if filecmp.cmp(a / p, b / p, shallow=False):
            same += 1
        else:
            bad.append(f"differs: {p}")
    experiments = len({p.parts[0] for p in fa | fb})
    print(f"{same} of {len(fa | fb)} CSV files byte-identical, over {experiments} experiments")
    for line in bad:
        print(line)
    return 1 if bad or not fa else 0


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    r = sub.add_parser("run")
    r.add_argument("out", type=Path)
    r.add_argument("--python", default=sys.executable)
    r.add_argument("--seed", type=int, default=1)
    r.add_argument("--only", nargs="*", default=[])
    c = sub.add_parser("compare")
    c.add_argument("a", type=Path)
    c.add_argument("b", type=Path)
    args = ap.parse_args()
    if args.cmd == "run":
        return run(args.out, args.python, args.seed, args.only)
    return compare(args.a, args.b)


if __name__ == "__main__":
    sys.exit(main())
