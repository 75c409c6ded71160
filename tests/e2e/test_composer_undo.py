"""Issue 21, Undo and Redo clicked in JupyterLab: over typing (one step per field), a Mode switch
and an Open, and back again with Redo; the draft keeps what is shown."""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path

import pytest

from .conftest import NO_PLAYWRIGHT, WIDGETS_MS, Composer, Notebook, type_into

expect = pytest.importorskip("playwright.sync_api", reason=NO_PLAYWRIGHT).expect
pytestmark = pytest.mark.e2e

CELLS = [
    "from pgm_explore.widgets import MessageComposer",
    'composer = MessageComposer("BKN-PAL", "RQ", draft_name="e2e-undo")\ncomposer',
]


def test_undo_and_redo_over_typing_mode_and_open(
    open_code_in_lab: Callable[[list[str]], Notebook], shot: Callable[[str], Path]
) -> None:
    notebook = open_code_in_lab(CELLS)
    composer = Composer(notebook.panel.locator(".pgmx-composer"))
    expect(composer.title).to_contain_text("BKN-PAL", timeout=WIDGETS_MS)
    undo, redo = composer.tool("undo"), composer.tool("redo")
    expect(undo).to_be_disabled()
    words = "Warm or formal?"
    composer.field("Question").locator(".pgmx-include input").check()
    type_into(composer.input("Question"), words)
    expect(composer.json_view).to_have_value(re.compile(re.escape(f'"Question": "{words}"')))
    composer.field("Mode").locator(".pgmx-mode button", has_text="RS").click()
    expect(composer.title).to_contain_text("Response", timeout=WIDGETS_MS)
    composer.open_file("../data/examples/bkn-dac/valid/rq-minimal.json")
    expect(composer.title).to_contain_text("BKN-DAC", timeout=WIDGETS_MS)
    shot("typed, switched, opened")

    undo.click()  # the Open
    expect(composer.title).to_contain_text("BKN-PAL", timeout=WIDGETS_MS)
    expect(composer.open_panel.locator(".pgmx-open-status")).to_have_text("")  # "Opened …" is no longer true
    expect(composer.title).to_contain_text("Response")
    undo.click()  # the Mode switch: the Request's words are back
    expect(composer.title).to_contain_text("Request", timeout=WIDGETS_MS)
    expect(composer.input("Question")).to_have_value(words)
    shot("undone twice")
    undo.click()  # the typing
    expect(composer.json_view).not_to_have_value(re.compile(re.escape(words)), timeout=WIDGETS_MS)
    redo.click()
    expect(composer.input("Question")).to_have_value(words, timeout=WIDGETS_MS)
    redo.click()
    expect(composer.title).to_contain_text("Response", timeout=WIDGETS_MS)
    expect(composer.json_view).to_have_value(re.compile(r'"Mode": "RS"'))
    shot("redone")


REPLY_CELLS = [
    "from pgm_explore.widgets import MessageComposer",
    'composer = MessageComposer("BKN-PAL", "RQ", draft_name="e2e-undo-reply")\ncomposer',
]


def test_undo_hides_a_reply_and_redo_brings_it_back_as_it_was(
    open_code_in_lab: Callable[[list[str]], Notebook], shot: Callable[[str], Path]
) -> None:
    notebook = open_code_in_lab(REPLY_CELLS)
    request = Composer(notebook.panel.locator(".pgmx-composer").first)
    expect(request.title).to_contain_text("BKN-PAL", timeout=WIDGETS_MS)
    request.type_and_see("DialogID", "dlg-7")
    reply = request.reply()
    expect(reply.input("DialogID")).to_have_value("dlg-7", timeout=WIDGETS_MS)  # copied from the Request
    reply.type_and_see("MInstance", "mi-of-the-reply")
    shot("replied and typed in the reply")

    request.tool("undo").click()  # the Reply
    expect(request.replies).to_have_count(0, timeout=WIDGETS_MS)
    expect(request.input("DialogID")).to_have_value("dlg-7")  # the Request as it was
    expect(request.tool("redo")).to_be_enabled()
    shot("reply undone")
    request.tool("redo").click()
    expect(request.replies).to_have_count(1, timeout=WIDGETS_MS)
    expect(Composer(request.replies.first).input("MInstance")).to_have_value("mi-of-the-reply")

    # Undone again, then Reply clicked anew: the Response typed before comes back from its draft.
    request.tool("undo").click()
    expect(request.replies).to_have_count(0, timeout=WIDGETS_MS)
    request.tool("reply").click()
    expect(request.replies).to_have_count(1, timeout=WIDGETS_MS)
    expect(Composer(request.replies.first).input("MInstance")).to_have_value("mi-of-the-reply", timeout=WIDGETS_MS)
    shot("replied again: the draft came back")
