"""Each layer imports only from the layers before it (the tree shows the architecture)."""

from __future__ import annotations

import ast
import graphlib
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[1] / "pgm_explore"

# Position in the data flow; a module may import from its own position or earlier ones.
# `_display` (display helpers), `_signals` (Ctrl-C held back), `_engine` (where bulk work runs: this process or Dask), `_progress` (progress bars), `_files` (safe writes), `_workfolder` (names in a work folder) and `errors` (the exception base) sit below
# every layer, `io` (reading and validating in bulk, cut into partitions for `_engine`) sits with
# validation; the command line sits on top.
LAYERS = {
    "_display": 0,
    "_files": 0,
    "_workfolder": 0,
    "errors": 0,
    "_version": 0,
    "_signals": 0,
    "_engine": 0,
    "_progress": 0,
    "spec": 1,
    "models": 2,
    "validation": 3,
    "io": 3,
    "dialogue": 4,
    "analysis": 5,
    "widgets": 6,
    "mcp": 6,
    "cli": 7,
    "_launch": 7,
    "_access": 7,
    "_servers": 7,
    "__main__": 7,
    "__init__": 7,
}


def _layer(module: str) -> str:
    parts = module.split(".")
    return parts[1] if len(parts) > 1 and parts[1] in LAYERS else "__init__"


def _imports(path: Path) -> set[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module == "pgm_explore" and node.level == 0:
            # `from pgm_explore import analysis` imports that unit; `import __version__`, the top.
            found.update(f"pgm_explore.{alias.name}" for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found.add(node.module)
        elif isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
    return {name for name in found if name.startswith("pgm_explore.")}


@pytest.mark.parametrize("path", sorted(PACKAGE.rglob("*.py")), ids=lambda p: str(p.relative_to(PACKAGE)))
def test_layer_order(path: Path) -> None:
    relative = path.relative_to(PACKAGE).with_suffix("")
    own = relative.parts[0] if len(relative.parts) > 1 else relative.name
    assert own in LAYERS, f"{relative} belongs to no layer: add it to LAYERS"
    for imported in _imports(path):
        target = _layer(imported)
        assert LAYERS.get(target, 99) <= LAYERS[own], f"{relative} ({own}) imports {imported} ({target})"


def test_no_import_circle_among_the_widgets() -> None:
    """The widgets' modules import each other one way only (also under TYPE_CHECKING), so that a
    path through them (a keystroke's, say) can be followed by reading the imports."""
    folder = PACKAGE / "widgets"
    modules = {f"pgm_explore.widgets.{path.stem}": path for path in folder.glob("*.py") if path.stem != "__init__"}
    graph = {name: {imported for imported in _imports(path) if imported in modules} for name, path in modules.items()}
    try:
        tuple(graphlib.TopologicalSorter(graph).static_order())
    except graphlib.CycleError as circle:
        pytest.fail(f"an import circle among the widgets: {' -> '.join(circle.args[1])}")
