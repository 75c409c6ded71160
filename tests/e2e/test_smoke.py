"""The e2e plumbing itself: Lab runs the tour notebook (01) in Chromium, and Voilà renders it; and the
README's launch, `pgm-explore lab`, opens it."""

from __future__ import annotations

import re
import sys
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from .conftest import KERNEL_MS, NO_PLAYWRIGHT, Notebook, Server, _free_port, _start, _wait_until_ready

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


def test_pgm_explore_lab_opens_the_first_notebook(
    page: Page,
    served_root: Path,
    e2e_env: dict[str, str],
    e2e_state: Path,
    screenshots: Path,
    shot: Callable[[str], Path],
) -> None:
    """The README's launch: `pgm-explore lab` prints an address; that address opens notebook 01 in
    JupyterLab on the repository, with no news toast (the package's overrides.d, not user settings)."""
    settings = e2e_state / "launch-lab-settings"
    settings.mkdir(exist_ok=True)
    env = {**e2e_env, "JUPYTERLAB_SETTINGS_DIR": str(settings)}
    command = [
        sys.executable,
        "-m",
        "pgm_explore",
        "lab",
        "--no-browser",
        f"--port={_free_port()}",
        "--root",
        str(served_root),
    ]
    process = _start("pgm-explore-lab", command, served_root, env, screenshots)
    server = Server("pgm-explore lab", "", served_root, screenshots / "pgm-explore-lab.log", process)
    try:
        _wait_until_ready(server, lambda: "JupyterLab is ready" in server.log_tail())
        url = re.search(r"^open (http://\S+)$", server.log.read_text(), re.M)
        assert url, server.log_tail()
        assert "/lab/tree/notebooks/01_tour_of_the_data_types.ipynb?token=" in url.group(1)
        page.goto(url.group(1))
        tab = page.locator(".lm-DockPanel-tabBar .lm-TabBar-tab.lm-mod-current")
        expect(tab).to_contain_text("01_tour_of_the_data_types.ipynb", timeout=KERNEL_MS)
        expect(page.locator(".jp-MarkdownCell h1").first).to_contain_text("A tour of the four PGM-AUA data types")
        page.wait_for_timeout(5000)  # the news toast, when on, comes a moment after the page
        expect(page.get_by_text("official Jupyter news")).to_have_count(0)
        shot("pgm-explore lab")
    finally:
        server.stop()
