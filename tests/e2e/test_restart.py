"""Notebook 02 in JupyterLab: what a person typed into their own composer is back after Kernel ▸ Restart
and running the cell again (the draft has a stable name in the drafts folder)."""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path

import pytest

from .conftest import KERNEL_MS, NO_PLAYWRIGHT, WIDGETS_MS, Composer, Notebook, code_cell, type_into, wait_for_idle

expect = pytest.importorskip("playwright.sync_api", reason=NO_PLAYWRIGHT).expect
pytestmark = pytest.mark.e2e

MINE = 'mine = MessageComposer("PC Prompt", draft_name="02-pc-prompt")'


def test_own_composer_comes_back_after_a_kernel_restart(
    open_in_lab: Callable[[str], Notebook], shot: Callable[[str], Path]
) -> None:
    notebook = open_in_lab("02_*.ipynb")
    page = notebook.page
    cell = code_cell(notebook, MINE)
    composer = Composer(cell.locator(".pgmx-composer"))
    expect(composer.title).to_contain_text("PC Prompt")
    words = f"Restart-proof prompt {page.evaluate('Date.now()')}."
    type_into(composer.input("Prompt"), words)
    expect(composer.json_view).to_have_value(re.compile(re.escape(words)))
    wait_for_idle(page)  # the draft is written by the kernel at the edit
    shot("typed")

    page.locator(".lm-MenuBar-item", has_text="Kernel").click()
    page.locator('li.lm-Menu-item[data-command="kernelmenu:restart"]').click()
    page.locator(".jp-Dialog .jp-mod-accept").click()
    page.wait_for_function(
        """() => /Restarting|Idle/.test(document.querySelector(".jp-StatusBar-Widget")?.innerText ?? "")""",
        timeout=KERNEL_MS,
    )
    wait_for_idle(page)
    shot("restarted")

    # Run the cell again, as a person does: click into it, Shift+Enter.
    cell.locator(".jp-InputArea-editor").click()
    page.keyboard.press("Shift+Enter")
    composer = Composer(cell.locator(".pgmx-composer"))
    expect(composer.input("Prompt")).to_have_value(words, timeout=WIDGETS_MS)
    shot("restored")
