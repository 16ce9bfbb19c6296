"""A module-level name bound twice in one of the project's modules: the second silently replaces the first for every
reader, the first one's among them (detectors.py's _NOT_YET once made 'draft' a not-done state that way, a test's
KITCHEN once gave an earlier test another system prompt, heldout14's older CHECK_MISSED once hid its pruned one;
pyflakes does not flag a constant bound twice)."""

from __future__ import annotations

import ast
from collections import Counter
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
MODULES = sorted(p for part in ("agentotel", "collector", "tests", "benchmarks") for p in (ROOT / part).rglob("*.py"))


def _bound_twice(source: str) -> list[str]:
    names: Counter[str] = Counter()
    for node in ast.parse(source).body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names[node.name] += 1
        elif isinstance(node, ast.Assign):
            names.update(t.id for t in node.targets if isinstance(t, ast.Name))
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name) and node.value is not None:
            names[node.target.id] += 1
    return sorted(name for name, count in names.items() if count > 1)


def test_the_check_finds_a_name_bound_twice():
    assert _bound_twice("_A = 1\ndef f():\n    return _A\n_A = 2\n") == ["_A"]
    assert _bound_twice("_A = 1\n_B: int = 2\n") == []


@pytest.mark.parametrize("path", MODULES, ids=lambda p: str(p.relative_to(ROOT)))
def test_no_module_level_name_is_bound_twice(path):
    assert _bound_twice(path.read_text(encoding="utf-8")) == []
