"""The code stays as ruff (configured in pyproject.toml) wants it."""

from __future__ import annotations

import ast
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
# Docs code blocks, notebooks and the README are code a reader copies: held to the same style.
TARGETS = ["pgm_explore", "tests", "benchmarks", "data", "docs", "notebooks", "README.md"]


@pytest.mark.parametrize("command", [["check"], ["format", "--check"]], ids=["check", "format"])
def test_ruff(command: list[str]) -> None:
    result = subprocess.run(
        [sys.executable, "-m", "ruff", *command, *TARGETS], cwd=ROOT, capture_output=True, text=True
    )
    assert result.returncode == 0, result.stdout + result.stderr


def test_every_property_test_sets_its_budget() -> None:
    # issue 24: how many examples a hypothesis test draws is decided where it is written, not by
    # a profile: `@settings(max_examples=N, ...)` (or a settings object named in the module).

    unbudgeted = []
    for path in sorted((ROOT / "tests").rglob("test_*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        budgets = {  # module-level names bound to settings(max_examples=...)
            target.id
            for node in tree.body
            if isinstance(node, ast.Assign) and isinstance(node.value, ast.Call)
            for target in node.targets
            if isinstance(target, ast.Name) and _sets_max_examples(node.value)
        }
        for node in ast.walk(tree):
            if not isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                continue
            decorators = node.decorator_list
            if not any(_called(d) == "given" for d in decorators):
                continue
            if not any(
                (isinstance(d, ast.Call) and _called(d) == "settings" and _sets_max_examples(d))
                or (isinstance(d, ast.Name) and d.id in budgets)
                for d in decorators
            ):
                unbudgeted.append(f"{path.relative_to(ROOT)}::{node.name}")
    assert unbudgeted == []


def _called(node: ast.expr) -> str | None:
    function = node.func if isinstance(node, ast.Call) else node
    if isinstance(function, ast.Name):
        return function.id
    return function.attr if isinstance(function, ast.Attribute) else None


def _sets_max_examples(call: ast.Call) -> bool:
    return _called(call) == "settings" and any(keyword.arg == "max_examples" for keyword in call.keywords)


def test_every_browser_test_is_marked_e2e() -> None:
    # `pytest -m "not e2e"` must leave out every test that needs Chromium (tests/e2e).
    unmarked = [
        path.name
        for path in sorted((ROOT / "tests" / "e2e").glob("test_*.py"))
        if not re.search(r"^pytestmark = .*pytest\.mark\.e2e", path.read_text(encoding="utf-8"), re.M)
    ]
    assert unmarked == []


# What a test module may import at its top only after `pytest.importorskip` of the extra's package.
_EXTRA_MODULES = {
    "ipywidgets": "ipywidgets",
    "pgm_explore.widgets": "ipywidgets",
    "mcp": "mcp",
    "pgm_explore.mcp": "mcp",
}


def test_a_test_module_skips_when_the_extra_it_imports_is_missing() -> None:
    # Without the extra, a module-level import is a collection error that stops the whole run.
    unguarded = []
    for path in sorted((ROOT / "tests").glob("test_*.py")):
        skipped: set[str] = set()
        for node in ast.parse(path.read_text(encoding="utf-8")).body:
            call = node.value if isinstance(node, ast.Expr | ast.Assign) else None
            if isinstance(call, ast.Call) and _called(call) == "importorskip" and call.args:
                argument = call.args[0]
                if isinstance(argument, ast.Constant) and isinstance(argument.value, str):
                    skipped.add(argument.value.split(".")[0])
            names = (
                [alias.name for alias in node.names]
                if isinstance(node, ast.Import)
                else [node.module or ""]
                if isinstance(node, ast.ImportFrom)
                else []
            )
            for name in names:
                needs = next(
                    (m for prefix, m in _EXTRA_MODULES.items() if name == prefix or name.startswith(prefix + ".")), None
                )
                if needs is not None and needs not in skipped:
                    unguarded.append(f"{path.name}: {name}")
    assert unguarded == []
