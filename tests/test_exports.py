"""The public surface is small, sorted and complete, and nothing public lives in a private module."""

from __future__ import annotations

import importlib
import importlib.util

import pytest


def _needs(extra_package: str, module: str) -> object:
    """``module``, skipped with the reason when the package its extra brings is not installed."""
    missing = importlib.util.find_spec(extra_package) is None
    return pytest.param(module, marks=pytest.mark.skipif(missing, reason=f"{extra_package} is not installed"))


PUBLIC_MODULES = [
    "pgm_explore",
    "pgm_explore.errors",
    "pgm_explore.spec",
    "pgm_explore.models",
    "pgm_explore.validation",
    "pgm_explore.dialogue",
    "pgm_explore.dialogue.documents",
    "pgm_explore.io",
    "pgm_explore.analysis",
    "pgm_explore.cli",
    _needs("ipywidgets", "pgm_explore.widgets"),
    _needs("mcp", "pgm_explore.mcp"),
]


@pytest.mark.parametrize("module_name", PUBLIC_MODULES)
def test_all_is_sorted_and_resolves(module_name: str) -> None:
    module = importlib.import_module(module_name)
    assert module.__all__ == sorted(module.__all__)
    for name in module.__all__:
        assert getattr(module, name) is not None, name


@pytest.mark.parametrize("module_name", PUBLIC_MODULES)
def test_public_names_are_not_documented_in_private_modules(module_name: str) -> None:
    module = importlib.import_module(module_name)
    for name in module.__all__:
        owner = getattr(getattr(module, name), "__module__", None)
        if isinstance(owner, str) and owner.startswith("pgm_explore"):
            assert not any(part.startswith("_") for part in owner.split(".")), f"{module_name}.{name} is {owner}"


def test_import_is_light() -> None:
    """`import pgm_explore` must not pull in pandas, python-jsonschema, pydantic or ipywidgets."""
    import subprocess
    import sys

    heavy = "('pandas', 'jsonschema', 'pydantic', 'ipywidgets')"
    code = f"import sys, pgm_explore; print(sorted(m for m in {heavy} if m in sys.modules))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"
