"""A DialogueBuilder's drafts come back too: messages added by clicking, a kernel restart from
the Kernel menu, the cell run again: the messages are listed again, with the restored notice."""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path

import pytest

from .conftest import NO_PLAYWRIGHT, WIDGETS_MS, Notebook, restart_kernel, run_all, type_into, wait_for_idle

expect = pytest.importorskip("playwright.sync_api", reason=NO_PLAYWRIGHT).expect
pytestmark = pytest.mark.e2e

CELLS = [
    "from pgm_explore.widgets import DialogueBuilder",
    'builder = DialogueBuilder(draft_name="e2e-dialogue")\nbuilder',
]


def test_a_dialogue_comes_back_after_a_kernel_restart(
    open_code_in_lab: Callable[[list[str]], Notebook], shot: Callable[[str], Path]
) -> None:
    notebook = open_code_in_lab(CELLS)
    page = notebook.page
    builder = notebook.panel.locator(".pgmx-dialogue")
    listed = builder.locator(".pgmx-messages select option")
    expect(builder.locator(".pgmx-dialogue-badge")).to_contain_text("0 messages", timeout=WIDGETS_MS)

    # Type a prompt into the builder's composer and add it, twice.
    prompt = builder.locator(".pgmx-composer .pgmx-field-Prompt .pgmx-input textarea")
    add = builder.locator("button.pgmx-add", has_text="Add to dialogue")
    type_into(prompt, "Where is the lantern stall?")
    add.click()
    expect(listed).to_have_count(1, timeout=WIDGETS_MS)
    type_into(prompt, "And the tea house?")
    wait_for_idle(page)
    expect(builder.locator(".pgmx-dialogue-badge")).to_contain_text("1 message ·")
    shot("one message added, a second typed")

    restart_kernel(page)
    run_all(page)
    notice = builder.locator(".pgmx-notice .pgmx-draft-notice")
    expect(notice.first).to_contain_text(re.compile(r"Restored draft from .*: 1 message\."), timeout=WIDGETS_MS)
    expect(listed).to_have_count(1)
    expect(prompt).to_have_value("And the tea house?")  # the builder's composer has a draft of its own
    shot("restored after the restart")
