"""Every notebook runs top to bottom headless, shows what it promises, and is committed clean."""

from __future__ import annotations

from pathlib import Path

import nbformat
import pytest
from nbclient import NotebookClient

NOTEBOOKS = sorted((Path(__file__).resolve().parents[1] / "notebooks").glob("*.ipynb"))

# What each notebook must show, by cell source fragment -> text expected in that cell's output.
EXPECTED = {
    "01_tour_of_the_data_types.ipynb": {
        'columns=["data type"': "PGM-KDA-V1.0",
        "semantics = pd.DataFrame": "PAStatus",
        "report = pgm_explore.validate(message": "conforms",
        "bad = pgm_explore.validate(broken": "mode-forbidden",
        "overview = pd.DataFrame": "header-unknown",
    },
}


def _text(output: dict) -> str:
    if output.get("output_type") == "stream":
        return output.get("text", "")
    data = output.get("data", {})
    return str(data.get("text/html", "")) + str(data.get("text/plain", ""))


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.name)
def test_notebook_is_committed_without_outputs(path: Path) -> None:
    notebook = nbformat.read(path, as_version=4)
    assert notebook.cells[0].cell_type == "markdown" and "Purpose" in notebook.cells[0].source
    for cell in notebook.cells:
        if cell.cell_type == "code":
            assert cell.outputs == [] and cell.execution_count is None, f"{path.name} has outputs"


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.name)
def test_notebook_runs_and_shows_what_it_promises(path: Path) -> None:
    notebook = nbformat.read(path, as_version=4)
    NotebookClient(
        notebook, timeout=180, kernel_name="python3", resources={"metadata": {"path": str(path.parent)}}
    ).execute()
    for cell in notebook.cells:
        if cell.cell_type != "code":
            continue
        errors = [o for o in cell.outputs if o.get("output_type") == "error"]
        assert not errors, f"{path.name}: {cell.source[:60]!r} raised {errors[0].get('ename')}"
    for fragment, expected in EXPECTED.get(path.name, {}).items():
        cell = next(c for c in notebook.cells if c.cell_type == "code" and fragment in c.source)
        shown = "".join(_text(o) for o in cell.outputs)
        assert expected in shown, f"{path.name}: the cell with {fragment!r} does not show {expected!r}"
