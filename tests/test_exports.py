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
    """`import pgm_explore` imports none of its layers and no engine (each name and layer comes on
    first use): the command holds Ctrl-C from its own first step on (pgm_explore/__main__.py)."""
    import subprocess
    import sys

    heavy = (
        "('pandas', 'jsonschema', 'pydantic', 'ipywidgets', 'msgspec', 'jsonschema_rs', 'typing', "
        "'pgm_explore.spec', 'pgm_explore.validation', 'pgm_explore.cli')"
    )
    code = f"import sys, pgm_explore; print(sorted(m for m in {heavy} if m in sys.modules))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"


def test_the_layers_are_attributes_of_the_package_on_first_use() -> None:
    import subprocess
    import sys

    code = (
        "import pgm_explore\n"
        "print(pgm_explore.spec.DATA_TYPES is pgm_explore.DATA_TYPES, pgm_explore.validation.validate is pgm_explore.validate)\n"
        "print(sorted(dir(pgm_explore)) == sorted(pgm_explore.__all__))\n"
        "try:\n    pgm_explore.nothing\nexcept AttributeError as exc:\n    print(exc)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.splitlines() == ["True True", "True", "module 'pgm_explore' has no attribute 'nothing'"]
