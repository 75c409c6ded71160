"""docs/architecture.md shows the layers the code has now: its diagram is the generator's output."""

from __future__ import annotations

import doctest
import importlib.util
import re
import sys
from pathlib import Path
from types import ModuleType

import pytest

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def architecture() -> ModuleType:
    spec = importlib.util.spec_from_file_location("architecture", ROOT / "docs" / "architecture.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


def test_the_diagram_is_what_the_code_gives_now(architecture: ModuleType) -> None:
    text = (ROOT / "docs" / "architecture.md").read_text(encoding="utf-8")
    assert architecture.current_block(text) == architecture.mermaid(), (
        "docs/architecture.md is out of date: run python docs/architecture.py --write"
    )
    assert architecture.main(["--check"]) == 0


def test_every_unit_drawn_has_its_job_written(architecture: ModuleType) -> None:
    text = (ROOT / "docs" / "architecture.md").read_text(encoding="utf-8")
    table = text.partition("## What each layer does")[2].partition("\n## ")[0]
    described = {
        name for row in table.splitlines() if row.startswith("| ") for name in re.findall(r"`(\w+)`", row.split("|")[2])
    }
    named = {"pgm_explore" if unit == "__init__" else unit for unit in architecture.units()}
    assert named - described == set(), "a unit of the package has no sentence in 'What each layer does'"


def test_the_generators_examples(architecture: ModuleType) -> None:
    assert doctest.testmod(architecture, optionflags=doctest.NORMALIZE_WHITESPACE).failed == 0


def _write(path: Path, text: str = "") -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")


def test_a_new_unit_relative_imports_and_cycles_are_drawn(architecture: ModuleType, tmp_path: Path) -> None:
    # What merging other branches may bring: a module that became a package, a unit LAYERS does not
    # know yet, relative imports, `from pkg import unit`, an import inside a function, a cycle.
    pkg = tmp_path / "pkg"
    _write(pkg / "__init__.py", "from pkg.low import x\n")
    _write(pkg / "low.py", "x = 1\n")
    _write(pkg / "mid" / "__init__.py", "from ..low import x\nfrom . import part\n")
    _write(pkg / "mid" / "part.py", "def f():\n    from pkg import low\n")
    _write(pkg / "top.py", "import pkg.mid.part\nfrom pkg import low, x\n")
    _write(pkg / "new" / "__init__.py", "from pkg.top import f\n")
    _write(pkg / "a.py", "import pkg.b\n")
    _write(pkg / "b.py", "import pkg.a\n")
    layers = {"low": 0, "mid": 1, "top": 2, "a": 1, "b": 1, "__init__": 3}

    assert architecture.units(pkg) == ["__init__", "a", "b", "low", "mid", "new", "top"]
    assert architecture.imports(pkg) == {
        ("__init__", "low"),
        ("mid", "low"),
        ("top", "mid"),
        ("top", "low"),
        ("top", "__init__"),
        ("new", "top"),
        ("a", "b"),
        ("b", "a"),
    }
    block = architecture.mermaid(pkg, layers)
    assert 'subgraph unplaced["not in LAYERS"]' in block and 'unew["new/"]' in block
    arrows = set(re.findall(r"^    (\w+) --> (\w+)$", block, re.MULTILINE))
    # top --> low is implied by top --> mid --> low; the cycle keeps both of its arrows.
    assert ("utop", "ulow") not in arrows
    assert {("utop", "umid"), ("umid", "ulow"), ("ua", "ub"), ("ub", "ua"), ("unew", "utop")} <= arrows


def test_layers_are_read_from_the_layer_test(architecture: ModuleType) -> None:
    from tests.test_layers import LAYERS

    assert architecture.read_layers() == LAYERS
