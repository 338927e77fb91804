"""The Python package has no import cycles: the import graph of castlab (read from the source
with ``ast``) is acyclic, counting imports inside functions as well as at module level; the
modules of the chain below import castlab only at module level, and each of them imports on
its own in a fresh interpreter."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest

PKG = Path(__file__).resolve().parents[2] / "python" / "castlab"

# A chain that would close a cycle (experiments -> runner -> targets -> experiments), entered at
# each of its modules: with a cycle, one of these orders finds a half-initialised module.
CHAIN = ["castlab.experiments.common", "castlab.study.runner", "castlab.study.targets", "castlab.experiments"]


def _modules() -> dict[str, Path]:
    mods = {}
    for p in sorted(PKG.rglob("*.py")):
        parts = ["castlab", *p.relative_to(PKG).with_suffix("").parts]
        if parts[-1] == "__init__":
            parts = parts[:-1]
        mods[".".join(parts)] = p
    for p in PKG.rglob("*.pyi"):  # extension modules (castlab._native): imported, import nothing of ours
        mods.setdefault(".".join(["castlab", *p.relative_to(PKG).with_suffix("").parts]), p)
    return mods


def _resolve(mod: str, is_pkg: bool, node: ast.ImportFrom) -> str:
    if not node.level:
        return node.module or ""
    base = mod.split(".") if is_pkg else mod.split(".")[:-1]
    base = base[: len(base) - (node.level - 1)]
    return ".".join(base + ([node.module] if node.module else []))


def _imports(mod: str, path: Path, mods: dict[str, Path], top_level_only: bool) -> set[str]:
    """The castlab modules `mod` imports: at module level only (code that runs on import, not
    inside functions), or everywhere."""
    if path.suffix == ".pyi":
        return set()
    tree = ast.parse(path.read_text(), str(path))
    is_pkg = path.name == "__init__.py"
    out: set[str] = set()

    def visit(node, in_function: bool) -> None:
        for child in ast.iter_child_nodes(node):
            inside = in_function or isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda))
            if isinstance(child, ast.If) and "TYPE_CHECKING" in ast.unparse(child.test):
                continue
            if isinstance(child, (ast.Import, ast.ImportFrom)) and not (top_level_only and in_function):
                if isinstance(child, ast.Import):
                    names = [a.name for a in child.names]
                else:
                    base = _resolve(mod, is_pkg, child)
                    # `from pkg import sub` imports the submodule pkg.sub when there is one
                    names = [f"{base}.{a.name}" if f"{base}.{a.name}" in mods else base for a in child.names]
                out.update(n for n in names if n in mods and n != mod)
            visit(child, inside)

    visit(tree, False)
    return out


def _graph(top_level_only: bool = True) -> dict[str, set[str]]:
    mods = _modules()
    return {m: _imports(m, p, mods, top_level_only) for m, p in mods.items()}


def _cycle(graph: dict[str, set[str]]) -> list[str] | None:
    state: dict[str, int] = {}
    stack: list[str] = []

    def dfs(m: str) -> list[str] | None:
        state[m] = 1
        stack.append(m)
        for n in sorted(graph.get(m, ())):
            if state.get(n) == 1:
                return stack[stack.index(n):] + [n]
            if n not in state:
                found = dfs(n)
                if found:
                    return found
        stack.pop()
        state[m] = 2
        return None

    for m in sorted(graph):
        if m not in state:
            found = dfs(m)
            if found:
                return found
    return None


def test_the_checker_finds_a_cycle():
    assert _cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]
    assert _cycle({"a": {"b"}, "b": set(), "c": {"a", "b"}}) is None


def test_the_module_level_import_graph_has_no_cycle():
    graph = _graph()
    assert "castlab.experiments" in graph["castlab.study.targets"], "the graph reader misses an import"
    assert _cycle(graph) is None, " -> ".join(_cycle(graph))


def test_the_import_graph_has_no_cycle_counting_imports_inside_functions():
    graph = _graph(top_level_only=False)
    # the reader sees an import made inside a function (net.py adds the router's parser there)
    assert "castlab.router" in graph["castlab.net"] and "castlab.router" not in _graph()["castlab.net"]
    assert _cycle(graph) is None, " -> ".join(_cycle(graph))


def test_the_session_leaves_import_only_the_extension_and_assign():
    graph = _graph(top_level_only=False)
    assert graph["castlab.stopping"] == set()
    assert graph["castlab.session_flags"] == {"castlab._native", "castlab.assign"}
    assert "castlab.net" not in graph["castlab.router"]


def test_the_leaf_modules_import_no_castlab_module_but_stats_and_claims():
    graph = _graph(top_level_only=False)
    assert graph["castlab.parallel"] == set() and graph["castlab.assign"] == set()
    assert graph["castlab.claims"] == {"castlab.stats"}
    assert graph["castlab.report"] == {"castlab.claims", "castlab.report_html"}
    assert graph["castlab.report_html"] == set()


def test_the_chain_imports_castlab_at_module_level_only():
    mods = _modules()
    for m in ["castlab.experiments.common", "castlab.study.runner", "castlab.study.targets"]:
        everywhere = _imports(m, mods[m], mods, top_level_only=False)
        top = _imports(m, mods[m], mods, top_level_only=True)
        assert everywhere == top, f"{m} imports {sorted(everywhere - top)} inside a function"


@pytest.mark.parametrize("module", CHAIN)
def test_each_module_imports_alone_in_a_fresh_interpreter(module):
    r = subprocess.run([sys.executable, "-c", f"import {module}"], capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
