"""Notebook 02 in JupyterLab: what a person typed into their own composer is back after Kernel ▸ Restart
and running the cell again (the draft has a stable name in the drafts folder); meanwhile the composer
left over from the dead kernel says, in words, to run the cell again."""

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
    # The views left over from the dead kernel say what to do, in words, and no widget shows a
    # broken-link icon (pseudo-element content, read from the computed style).
    before = """e => getComputedStyle(e, "::before").content"""
    expect(composer.root).to_have_class(re.compile(r"\bjupyter-widgets-disconnected\b"), timeout=KERNEL_MS)
    assert "run the cell again" in composer.root.evaluate(before)
    icons = cell.locator(".pgmx-composer .jupyter-widgets-disconnected").evaluate_all(
        f"(views) => views.filter(v => ({before})(v) !== 'none').length"
    )
    assert icons == 0, f"{icons} widgets still show the broken-link icon"
    shot("restarted")

    # Run the cell again, as a person does: click into it, Shift+Enter.
    cell.locator(".jp-InputArea-editor").click()
    page.keyboard.press("Shift+Enter")
    composer = Composer(cell.locator(".pgmx-composer"))
    expect(composer.input("Prompt")).to_have_value(words, timeout=WIDGETS_MS)
    shot("restored")
