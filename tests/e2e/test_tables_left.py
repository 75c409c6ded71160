"""Tables of text read left to right, in JupyterLab as a reader sees them: the cells of ``properties()`` in
notebook 01 and of the reports and the answer key in notebook 06 are left-aligned in the page (JupyterLab's
own style right-aligns every table cell of an output)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from .conftest import NO_PLAYWRIGHT, WIDGETS_MS, Notebook, code_cell

if TYPE_CHECKING:
    from playwright.sync_api import Locator

expect = pytest.importorskip("playwright.sync_api", reason=NO_PLAYWRIGHT).expect
pytestmark = pytest.mark.e2e

# Every table cell holding text (not only a number) under an element, with its alignment as drawn.
ALIGNMENTS = """root => [...root.querySelectorAll("td, th")]
    .filter(cell => cell.innerText.trim() && !/^[-+]?[0-9.,]+$/.test(cell.innerText.trim()))
    .map(cell => [cell.innerText.trim().slice(0, 40), getComputedStyle(cell).textAlign])"""


def _not_left(output: Locator) -> list[list[str]]:
    expect(output.locator("table").first).to_be_visible(timeout=WIDGETS_MS)
    cells = output.evaluate(ALIGNMENTS)
    assert cells, "no table cell with text"
    return [cell for cell in cells if cell[1] not in ("left", "start")]


def test_properties_in_notebook_01_are_left_aligned(
    open_in_lab: Callable[[str], Notebook], shot: Callable[[str], Path]
) -> None:
    notebook = open_in_lab("01_*.ipynb")
    for fragment in ('columns=["data type"', 'properties("BKN-DAC")', 'pc_prompt = properties("PC Prompt")'):
        output = code_cell(notebook, fragment).locator(".jp-OutputArea-output")
        output.first.scroll_into_view_if_needed()
        assert _not_left(output.first) == [], fragment
    shot("properties, left-aligned")


def test_reports_and_the_answer_key_in_notebook_06_are_left_aligned(
    open_in_lab: Callable[[str], Notebook], shot: Callable[[str], Path]
) -> None:
    notebook = open_in_lab("06_*.ipynb")
    report = code_cell(notebook, "fixed = copy.deepcopy(course.message(8))").locator(".jp-OutputArea-output").last
    report.scroll_into_view_if_needed()
    assert _not_left(report) == []
    shot("a report, left-aligned")
    key = code_cell(notebook, "key = pd.DataFrame").locator(".jp-OutputArea-output")
    key.locator("summary", has_text="Answer key").click()  # unfold it, as a reader does
    assert _not_left(key) == []
    key.scroll_into_view_if_needed()
    shot("the answer key, left-aligned")
