"""The README's quick start works as written right after `make demo`: its shell block is run
line by line, exactly as written, in one shell (so `. .venv/bin/activate` carries over) from a
scratch copy of the checkout (every top-level entry linked, `out/` fresh), and its Python
snippet runs too."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
README = (ROOT / "README.md").read_text()

#: Quick-start lines too expensive for the test suite, with the reason; every other line runs.
EXPENSIVE = {
    "castlab reproduce --all": "every experiment of every paper: about 14 minutes of two cores' wall clock (--no-net)",
}


def _block(section: str, lang: str) -> str:
    part = README.split(f"## {section}", 1)[1].split("\n## ", 1)[0]
    m = re.search(rf"```{lang}\n(.*?)```", part, re.S)
    assert m, f"README: no ```{lang} block under '## {section}'"
    return m.group(1)


def quick_start_lines() -> list[str]:
    return [line for line in _block("Quick start", "sh").splitlines() if line.strip()]


def test_the_quick_start_activates_the_venv_make_demo_builds():
    lines = quick_start_lines()
    assert lines[0].split("#")[0].strip() == ". .venv/bin/activate"
    assert "make demo" in README and "make test" in README


@pytest.mark.skipif(not (ROOT / ".venv" / "bin" / "activate").exists(), reason="no .venv: run `make build` first")
def test_the_quick_start_runs_as_written(tmp_path):
    for entry in ROOT.iterdir():
        if entry.name not in ("out", ".git"):
            (tmp_path / entry.name).symlink_to(entry)
    script = ["set -e"]
    skipped = []
    for line in quick_start_lines():
        cmd = line.split("  #")[0].strip()
        why = next((r for k, r in EXPENSIVE.items() if cmd.startswith(k)), None)
        if why:
            skipped.append(cmd)
            continue
        script += [f"echo '+ {cmd}' >&2", cmd]
    assert skipped == ["castlab reproduce --all --jobs 2 --out out/all"], skipped  # nothing else is left out
    env = {k: v for k, v in os.environ.items() if k not in ("VIRTUAL_ENV", "PYTHONPATH")}
    # a fresh shell's PATH: the system's, without this test's own interpreter in front of it
    env["PATH"] = os.pathsep.join(p for p in env.get("PATH", "/usr/bin:/bin").split(os.pathsep)
                                  if not p.startswith(str(ROOT / ".venv")))
    r = subprocess.run(["bash", "-c", "\n".join(script)], cwd=tmp_path, env=env, capture_output=True, text=True,
                       timeout=900)
    assert r.returncode == 0, r.stderr[-3000:]
    out = tmp_path / "out"
    assert (out / "rlm-fig9" / "summary.json").is_file()
    assert sorted(p.name for p in (out / "tree").glob("seed-*")) == ["seed-1", "seed-2", "seed-3"]
    assert (out / "st" / "runs").is_dir() and "delay=10ms" in r.stdout
    assert (out / "rlm-vs-tcp" / "levels.png").is_file()


def test_the_python_snippet_runs(tmp_path):
    code = _block("Quick start", "python")
    r = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, capture_output=True,
                       text=True, timeout=300)
    assert r.returncode == 0, r.stderr
    level, loss = r.stdout.split()
    assert 1 <= int(level) <= 6 and 0.0 <= float(loss) <= 1.0
