"""How many code files outside a protocol's own places name it: the measure of "one place per
protocol". A file counts when it is a .rs, .py or .pyi file tracked by git, lies outside the
protocol's own module in castlab-proto and outside the places the measure leaves out, and
contains the protocol's name (case-insensitive; comments count too).

The places left out, and what they are:
- tests: the top-level tests/ directory, any directory named tests/ (crates/*/tests/,
  crates/*/src/tests/) and any file named tests.rs (a module's `#[cfg(test)] mod tests;` kept in
  its own file, as crates/castlab-sim/src/engine/tests.rs); a test names what it tests;
- benchmarks: bench/ and any directory named benches/ (crates/*/benches/, cargo's benchmark
  targets), which measure named protocols on purpose;
- the experiments (python/castlab/experiments/), which are the papers' set-ups;
- docs/ and examples/;
- the stubs generated from the registrations (python -m castlab._stub: castlab/_registered.pyi,
  castlab/functions.pyi), which repeat each protocol's registration, not name it anew.
Nothing else is left out: a protocol's name in a driver, a binding, the command line or the
testbed counts.

    python tests/protocol_names.py          # counts
    python tests/protocol_names.py -v       # and the files
"""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

# name -> (pattern, the protocol's own module in castlab-proto)
PROTOCOLS = {
    "RLC": (r"rlc", "crates/castlab-proto/src/rlc/"),
    "NLM": (r"nlm", "crates/castlab-proto/src/nlm/"),
    "LE-SBCC": (r"le[-_]?sbcc", "crates/castlab-proto/src/lesbcc/"),
    "Rainbow": (r"rainbow", "crates/castlab-proto/src/bcfs/"),
    "RLM": (r"rlm", "crates/castlab-proto/src/rlm/"),
    "TFMCC": (r"tfmcc", "crates/castlab-proto/src/tfmcc/"),
    "PGMCC": (r"pgmcc", "crates/castlab-proto/src/pgmcc/"),
    "WEBRC": (r"webrc", "crates/castlab-proto/src/webrc/"),
    "FLID-DL": (r"flid", "crates/castlab-proto/src/flid/"),
}

LIMIT = 3  # the goal: at most this many files per protocol

EXCLUDED = ("tests/", "docs/", "bench/", "examples/", "python/castlab/experiments/")
GENERATED = ("python/castlab/_registered.pyi", "python/castlab/functions.pyi")


def excluded(path: str) -> bool:
    """Whether `path` lies in a place the measure leaves out (the module docstring)."""
    parts = path.split("/")
    return (path.startswith(EXCLUDED) or "tests" in parts[:-1] or "benches" in parts[:-1]
            or parts[-1] == "tests.rs" or path in GENERATED)


def _files() -> list[str]:
    out = subprocess.run(["git", "ls-files", "*.rs", "*.py", "*.pyi"], cwd=ROOT, capture_output=True, text=True,
                         check=True).stdout.split()
    return [f for f in out if not excluded(f)]


def naming_files() -> dict[str, list[str]]:
    """Per protocol, the files outside its own places that name it."""
    texts = {f: (ROOT / f).read_text(errors="replace").lower() for f in _files() if (ROOT / f).exists()}
    out = {}
    for name, (pat, own) in PROTOCOLS.items():
        rx = re.compile(pat)
        out[name] = sorted(f for f, t in texts.items() if not f.startswith(own) and rx.search(t))
    return out


if __name__ == "__main__":
    verbose = "-v" in sys.argv
    for name, files in naming_files().items():
        print(f"{name:8s} {len(files)}")
        if verbose:
            for f in files:
                print(f"           {f}")
