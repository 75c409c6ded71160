"""Notebook 07 by hand: the person's edit of the live Request comes back after a kernel restart
(what the person edits wins), while the run's live Response is shown beside it."""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path

import pytest

from .conftest import (
    NO_PLAYWRIGHT,
    WIDGETS_MS,
    Composer,
    Notebook,
    code_cell,
    restart_kernel,
    run_all,
    type_into,
    wait_for_idle,
)

expect = pytest.importorskip("playwright.sync_api", reason=NO_PLAYWRIGHT).expect
pytest.importorskip("mcp", reason='notebook 07 needs the mcp extra (pip install -e ".[mcp]")')
pytestmark = pytest.mark.e2e


def _request(notebook: Notebook) -> Composer:
    return Composer(code_cell(notebook, 'draft_name="07-dac-request"').locator(".pgmx-composer"))


def test_the_persons_request_comes_back_and_the_live_response_beside_it(
    open_in_lab: Callable[[str], Notebook], shot: Callable[[str], Path]
) -> None:
    notebook = open_in_lab("07_*.ipynb")
    page = notebook.page
    request = _request(notebook)
    expect(request.title).to_contain_text("BKN-DAC", timeout=WIDGETS_MS)
    mine = "Mine: can the lantern wait until Friday?"
    type_into(request.input("Question"), mine)
    expect(request.json_view).to_have_value(re.compile(re.escape(f'"Question": "{mine}"')))
    wait_for_idle(page)
    shot("typed")

    restart_kernel(page)
    run_all(page)
    request = _request(notebook)
    expect(request.root.locator(":scope > .pgmx-notice .pgmx-draft-notice")).to_contain_text(
        "Restored draft", timeout=WIDGETS_MS
    )
    expect(request.input("Question")).to_have_value(mine)
    # The Request sent this run was the person's, and the live Response answers it.
    sent = code_cell(notebook, "response = await bk.send(")
    expect(sent.locator(".jp-OutputArea")).to_contain_text("BKN-DAC RS: conforms")
    answer = Composer(sent.locator(".pgmx-composer"))
    expect(answer.title).to_contain_text("Response", timeout=WIDGETS_MS)
    shot("restored")
