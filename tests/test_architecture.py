"""The layers of docs/architecture.md hold: imports point down, never sideways or up, and no cycles.

The table between the `<!-- layers -->` marks of docs/architecture.md assigns every package a floor;
this test reads it and every import of every module (ast; imports inside functions count too).
"""
from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PY_FILES = sorted([*ROOT.glob("stackparse/**/*.py"), *ROOT.glob("parsers/**/*.py"), ROOT / "cli.py"])


def floors() -> dict[str, int]:
    """Package -> floor, from the table of docs/architecture.md."""
    text = (ROOT / "docs/architecture.md").read_text()
    table = text.split("<!-- layers -->")[1].split("<!-- /layers -->")[0]
    return {m[1]: int(m[0]) for m in re.findall(r"^\| (\d+) \| `([\w.]+)` \|", table, flags=re.M)}


def module_name(path: Path) -> str:
    parts = path.relative_to(ROOT).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def imports(path: Path) -> set[str]:
    """The project modules the file at `path` imports, as dotted names."""
    module = module_name(path)
    return imports_in(path.read_text(), module if path.name == "__init__.py" else module.rsplit(".", 1)[0])


def imports_in(source: str, package: str) -> set[str]:
    """The project modules `source`, a module of `package`, imports."""
    found = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            found.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parts = package.split(".")[:len(package.split(".")) - node.level + 1]
                base = ".".join(parts + ([base] if base else []))
            found.update({base, *(f"{base}.{a.name}" for a in node.names)})
    return {m for m in found if m.split(".")[0] in ("stackparse", "parsers", "cli")}


def package_of(module: str, table: dict[str, int]) -> str:
    """The longest package of the table that `module` is in."""
    candidates = [p for p in table if module == p or module.startswith(p + ".")]
    assert candidates, f"{module} belongs to no package of docs/architecture.md's table"
    return max(candidates, key=len)


def test_the_table_names_every_package():
    table = floors()
    for path in PY_FILES:
        package_of(module_name(path), table)


def test_imports_point_down():
    table, wrong = floors(), []
    for path in PY_FILES:
        here = package_of(module_name(path), table)
        for target in imports(path):
            there = package_of(target, table)
            if there != here and table[there] >= table[here]:
                wrong.append(f"{path.relative_to(ROOT)} ({here}, floor {table[here]}) imports {target} "
                             f"({there}, floor {table[there]})")
    assert not wrong, "imports that do not point down:\n" + "\n".join(wrong)


def test_no_module_cycle():
    modules = {module_name(p): p for p in PY_FILES}
    graph = {m: {t if t in modules else t.rsplit(".", 1)[0] for t in imports(p)} & set(modules) - {m}
             for m, p in modules.items()}
    # A package's __init__ re-exporting its own modules is not a cycle of logic: leave those edges out.
    graph = {m: {t for t in ts if not (modules[t].name == "__init__.py" and m.startswith(t + "."))}
             for m, ts in graph.items()}
    cycle = _find_cycle(graph)
    assert cycle is None, "import cycle: " + " -> ".join(cycle)


def _find_cycle(graph: dict[str, set[str]]) -> list[str] | None:
    state, path = {}, []

    def visit(node):
        state[node] = "open"
        path.append(node)
        for nxt in sorted(graph[node]):
            if state.get(nxt) == "open":
                return path[path.index(nxt):] + [nxt]
            if nxt not in state and (found := visit(nxt)):
                return found
        state[node] = "done"
        path.pop()
        return None

    for node in sorted(graph):
        if node not in state and (found := visit(node)):
            return found
    return None


@pytest.mark.parametrize("source, expected", [
    ("from stackparse.training import trainer", {"stackparse.training", "stackparse.training.trainer"}),
    ("import parsers.model", {"parsers.model"}),
    ("from . import base", {"stackparse.models", "stackparse.models.base"}),
    ("def f():\n    import cli", {"cli"}),
    ("import numpy", set()),
])
def test_imports_are_read(source, expected):
    assert imports_in(source, "stackparse.models") == expected
