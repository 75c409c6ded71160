"""The e2e plumbing itself: Lab runs the tour notebook (01) in Chromium, and Voilà renders it."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from .conftest import KERNEL_MS, NO_PLAYWRIGHT, Notebook

if TYPE_CHECKING:
    from playwright.sync_api import Page

expect = pytest.importorskip("playwright.sync_api", reason=NO_PLAYWRIGHT).expect
pytestmark = pytest.mark.e2e

TOUR = "01_*.ipynb"


def test_lab_runs_the_tour_and_shows_its_tables(
    open_in_lab: Callable[[str], Notebook], shot: Callable[[str], Path]
) -> None:
    notebook = open_in_lab(TOUR)  # Run All, every cell without an error
    tables = notebook.panel.locator(".jp-OutputArea-output table.dataframe")
    expect(tables.first).to_contain_text("PGM-KDA-V1.0")
    expect(notebook.panel.locator(".jp-OutputArea-output", has_text="mode-forbidden").first).to_be_visible()
    shot("tour ran")


def test_voila_renders_the_tour(open_in_voila: Callable[[str], Page], shot: Callable[[str], Path]) -> None:
    page = open_in_voila(TOUR)
    expect(page.locator("table.dataframe").first).to_contain_text("PGM-KDA-V1.0", timeout=KERNEL_MS)
    expect(page.locator("body")).not_to_contain_text("Traceback")
    shot("tour in Voila")
