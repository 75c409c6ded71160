"""Drafts come back: a person types into a composer, restarts the kernel from the Kernel menu,
runs the cell again, and finds the text back with a "Restored draft from <time>" notice; Start
fresh keeps the old draft aside, and the Drafts panel opens and deletes it."""

from __future__ import annotations

import json
import re
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from .conftest import NO_PLAYWRIGHT, WIDGETS_MS, Composer, Notebook, restart_kernel, run_all, type_into, wait_for_idle

expect = pytest.importorskip("playwright.sync_api", reason=NO_PLAYWRIGHT).expect
pytestmark = pytest.mark.e2e

DRAFT = "e2e-restart-prompt"
CELLS = [
    "from pgm_explore.widgets import MessageComposer",
    f'composer = MessageComposer("PC Prompt", draft_name="{DRAFT}")\ncomposer',
]


def test_the_last_edit_comes_back_after_a_kernel_restart(
    open_code_in_lab: Callable[[list[str]], Notebook], e2e_env: dict[str, str], shot: Callable[[str], Path]
) -> None:
    notebook = open_code_in_lab(CELLS)
    page = notebook.page
    composer = Composer(notebook.panel.locator(".pgmx-composer"))
    expect(composer.title).to_contain_text("PC Prompt", timeout=WIDGETS_MS)
    notice = composer.root.locator(":scope > .pgmx-notice .pgmx-draft-notice")
    expect(notice).not_to_be_visible()  # nothing to restore the first time

    words = "Meet me at the lantern stall at noon."
    type_into(composer.input("Prompt"), words)
    expect(composer.json_view).to_have_value(re.compile(re.escape(f'"Prompt": "{words}"')))
    wait_for_idle(page)  # the kernel has taken every keystroke; the draft is written within about a second
    draft = Path(e2e_env["PGM_EXPLORE_DRAFTS"]) / f"{DRAFT}.json"

    def written() -> str | None:
        try:
            return json.loads(draft.read_text(encoding="utf-8"))["document"].get("Prompt")
        except FileNotFoundError:
            return None

    deadline = time.monotonic() + 10  # about a second, on a machine that may be loaded
    while written() != words and time.monotonic() < deadline:
        time.sleep(0.1)
    assert written() == words
    shot("typed")

    restart_kernel(notebook.page)
    # The composer of the dead kernel says what to do, instead of rows of broken-link icons.
    expect(composer.root).to_have_class(re.compile(r"\bjupyter-widgets-disconnected\b"), timeout=WIDGETS_MS)
    said = composer.root.evaluate("e => getComputedStyle(e, '::before').content")
    assert "run the cell again" in said
    icons = composer.root.evaluate(
        """e => [...e.querySelectorAll('.jupyter-widgets-disconnected')]
                 .filter(c => getComputedStyle(c, '::before').content !== 'none').length"""
    )
    assert icons == 0
    shot("the kernel restarted")
    run_all(page)
    composer = Composer(notebook.panel.locator(".pgmx-composer"))
    expect(notice).to_contain_text(
        re.compile(r"Restored draft from \d{4}-\d\d-\d\d \d\d:\d\d:\d\d"), timeout=WIDGETS_MS
    )
    expect(composer.root).to_have_count(1)
    expect(composer.input("Prompt")).to_have_value(words)
    shot("restored after the restart")

    # Start fresh: an empty prompt; the restored draft is kept aside under a name of its own.
    fresh = composer.root.locator(":scope > .pgmx-notice .pgmx-start-fresh")
    fresh.click()
    expect(composer.input("Prompt")).to_have_value("", timeout=WIDGETS_MS)
    expect(notice).to_contain_text(f"kept as “{DRAFT} (set aside")
    shot("started fresh")

    # The Drafts panel lists it; Open brings the words back, Delete (two clicks) removes it.
    composer.tool("drafts").click()
    panel = composer.root.locator(":scope > .pgmx-drafts-panel")
    listed = panel.locator(".pgmx-drafts-list select")
    expect(listed).to_be_visible(timeout=WIDGETS_MS)
    aside = listed.locator("option", has_text=f"{DRAFT} (set aside")
    expect(aside).to_have_count(1)
    listed.select_option(label=aside.inner_text())
    panel.locator("button.pgmx-draft-open").click()
    expect(composer.input("Prompt")).to_have_value(words, timeout=WIDGETS_MS)
    expect(notice).to_contain_text("Opened the draft")
    shot("opened from the drafts panel")

    delete = panel.locator("button.pgmx-draft-delete")
    delete.click()
    expect(delete).to_have_text(re.compile("click again"))
    expect(aside).to_have_count(1)  # one click deletes nothing
    delete.click()
    expect(aside).to_have_count(0)
    expect(panel.locator(".pgmx-drafts-status")).to_contain_text("Deleted the draft")
    shot("deleted")
