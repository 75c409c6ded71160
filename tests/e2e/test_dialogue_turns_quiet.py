"""New turn and Reply in a DialogueBuilder, in JupyterLab: each gives the person a new message of the
dialogue that waits for them, with no findings marked until a field is touched or Validate is clicked,
as a new composer does (``MessageComposer.load(..., fresh=True)``)."""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path

import pytest

from .conftest import NO_PLAYWRIGHT, WIDGETS_MS, Composer, Notebook, type_into

expect = pytest.importorskip("playwright.sync_api", reason=NO_PLAYWRIGHT).expect
pytestmark = pytest.mark.e2e

INVALID = re.compile(r"\bpgmx-invalid\b")
CELLS = [
    "from pgm_explore.widgets import DialogueBuilder",
    'builder = DialogueBuilder(draft_name="e2e-dialogue-quiet")\nbuilder',
]


def test_new_turn_and_reply_wait_for_the_person(
    open_code_in_lab: Callable[[list[str]], Notebook], shot: Callable[[str], Path]
) -> None:
    notebook = open_code_in_lab(CELLS)
    builder = notebook.panel.locator(".pgmx-dialogue")
    composer = Composer(builder.locator(".pgmx-composer"))
    form = composer.root.locator(":scope > .pgmx-form")
    expect(composer.title).to_contain_text("PC Prompt", timeout=WIDGETS_MS)

    composer.tool("validate").click()  # every finding of the message shown until now
    expect(form.locator(".pgmx-invalid").first).to_be_visible()

    # New turn: the next BKN-PRC Request of the dialogue, nothing marked before the person acts.
    builder.locator(".pgmx-type select").select_option("BKN-PRC")
    builder.locator("button.pgmx-new-turn").click()
    expect(composer.title).to_contain_text("BKN-PRC", timeout=WIDGETS_MS)
    expect(composer.mode).to_have_text("RQ")
    expect(form.locator(".pgmx-invalid")).to_have_count(0)
    dialog = composer.input("DialogID")
    type_into(dialog, "d")
    type_into(dialog, "")
    expect(composer.field("DialogID")).to_have_class(INVALID)  # the field touched, and only it
    expect(form.locator(".pgmx-invalid")).to_have_count(1)
    type_into(dialog, "dlg-e2e-quiet")
    shot("new turn")

    # Add it, choose it in the list, Reply: its Response, again waiting for the person.
    listed = builder.locator(".pgmx-messages select")
    builder.locator("button.pgmx-add").click()
    expect(listed.locator("option")).to_have_count(1, timeout=WIDGETS_MS)
    query = composer.input("QueryID").input_value()
    listed.select_option(index=0)
    builder.locator("button.pgmx-reply").click()
    expect(composer.mode).to_have_text("RS", timeout=WIDGETS_MS)
    expect(composer.input("RequestID")).to_have_value(query)
    expect(composer.input("DialogID")).to_have_value("dlg-e2e-quiet")
    expect(form.locator(".pgmx-invalid")).to_have_count(0)
    composer.tool("validate").click()
    expect(form.locator(".pgmx-invalid").first).to_be_visible()
    shot("reply validated")
