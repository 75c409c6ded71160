"""Issue 21, undo and redo from the keyboard, pressed as a person presses them in JupyterLab and in the
app: Ctrl-Z (Cmd-Z) undoes a composer step, even one typed a moment ago whose keystrokes have not
reached the kernel yet; Shift-Ctrl-Z and Ctrl-Y redo; the keys in a notebook cell, in a Reply composer
shown inside the composer and in a file-name box keep their own meaning there."""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from .conftest import (
    NO_PLAYWRIGHT,
    WIDGETS_MS,
    Composer,
    Notebook,
    Server,
    code_cell,
    open_app,
    type_into,
    wait_for_idle,
)

if TYPE_CHECKING:
    from playwright.sync_api import Page

expect = pytest.importorskip("playwright.sync_api", reason=NO_PLAYWRIGHT).expect
pytestmark = pytest.mark.e2e

CELLS = [
    "from pgm_explore.widgets import MessageComposer",
    'composer = MessageComposer("BKN-DAC", "RQ", draft_name="e2e-keys")\ncomposer',
    "elsewhere = 1",
]


def test_ctrl_z_and_shift_ctrl_z_in_the_form(
    open_code_in_lab: Callable[[list[str]], Notebook], shot: Callable[[str], Path]
) -> None:
    notebook = open_code_in_lab(CELLS)
    page = notebook.page
    composer = Composer(notebook.panel.locator(".pgmx-composer").first)  # a Reply composer comes inside it
    expect(composer.title).to_contain_text("BKN-DAC", timeout=WIDGETS_MS)
    badge, undo, redo = composer.tool("badge"), composer.tool("undo"), composer.tool("redo")
    dialog, turn = composer.input("DialogID"), composer.input("TurnIndex")
    expect(badge).to_have_text("conforms")

    type_into(dialog, "dlg-keys")
    expect(composer.json_view).to_have_value(re.compile(r'"DialogID": "dlg-keys"'), timeout=WIDGETS_MS)
    # Typed and undone at once, before the kernel has had the typing: the undo takes back what the
    # person sees, the typing in TurnIndex ("0" became "420"), not the DialogID typed before it.
    turn.click()
    turn.press("Home")
    turn.press_sequentially("42", delay=0)
    page.keyboard.press("Control+z")
    expect(turn).to_have_value("0", timeout=WIDGETS_MS)
    page.wait_for_timeout(2000)  # a keystroke that came in after the undo would show by now
    wait_for_idle(page)
    expect(turn).to_have_value("0")
    expect(composer.json_view).to_have_value(re.compile(r'"TurnIndex": 0,'))
    expect(dialog).to_have_value("dlg-keys")
    expect(redo).to_be_enabled()  # a composer step was undone, not only the box's own typing
    shot("typed 42 and pressed Ctrl-Z at once")

    # Ctrl-Z again: DialogID is empty, and the findings view shows its warning (the field was touched).
    page.keyboard.press("Control+z")
    expect(dialog).to_have_value("", timeout=WIDGETS_MS)
    expect(composer.finding("DialogID")).to_contain_text("DialogID is an empty string", timeout=WIDGETS_MS)
    expect(composer.tool("consistency")).to_have_text("· 1 warning")
    expect(undo).to_be_disabled()
    shot("Ctrl-Z twice: the warning at DialogID")

    # Shift-Ctrl-Z redoes: the warning goes; Cmd-Z (macOS) undoes, Ctrl-Y and Shift-Cmd-Z redo.
    page.keyboard.press("Shift+Control+z")
    expect(dialog).to_have_value("dlg-keys", timeout=WIDGETS_MS)
    expect(composer.finding("DialogID")).to_have_count(0)
    expect(composer.tool("consistency")).to_have_text("")
    page.keyboard.press("Meta+z")
    expect(dialog).to_have_value("", timeout=WIDGETS_MS)
    page.keyboard.press("Control+y")
    expect(dialog).to_have_value("dlg-keys", timeout=WIDGETS_MS)
    page.keyboard.press("Shift+Meta+z")
    expect(turn).to_have_value("420", timeout=WIDGETS_MS)
    expect(composer.json_view).to_have_value(re.compile(r'"TurnIndex": 420,'))
    expect(redo).to_be_disabled()
    expect(badge).to_have_text("conforms")
    shot("redone")

    # With the focus on a button of the composer (Undo, just clicked), the keys are the composer's too.
    undo.click()
    expect(turn).to_have_value("0", timeout=WIDGETS_MS)
    page.keyboard.press("Shift+Control+z")
    expect(turn).to_have_value("420", timeout=WIDGETS_MS)
    expect(redo).to_be_disabled()

    # In a notebook cell the keys are the editor's: the cell's typing is undone, the composer untouched.
    cell = code_cell(notebook, "elsewhere = 1").locator(".cm-content")
    cell.click()
    page.keyboard.press("End")
    page.keyboard.type(" + 41")
    expect(cell).to_have_text("elsewhere = 1 + 41")
    page.keyboard.press("Control+z")
    expect(cell).to_have_text("elsewhere = 1")
    page.wait_for_timeout(1500)  # what a misdirected undo would take to reach the page
    expect(turn).to_have_value("420")
    expect(redo).to_be_disabled()
    shot("Ctrl-Z in a code cell")

    # In the Save box a file name is typed, not a message: the browser's own undo, nothing else.
    save_path = composer.tool("save-path").locator("input")
    save_path.click()
    save_path.press_sequentially("keys.json", delay=20)
    page.keyboard.press("Control+z")
    expect(save_path).not_to_have_value("keys.json")
    assert "keys.json".startswith(save_path.input_value())
    # (Chromium takes typing back in runs split by time: on a loaded machine the name may be
    # two or three runs, each the browser's own undo.)
    for _ in range(len("keys.json")):
        if not save_path.input_value():
            break
        page.keyboard.press("Control+z")
    expect(save_path).to_have_value("")
    page.wait_for_timeout(1500)
    expect(turn).to_have_value("420")
    expect(redo).to_be_disabled()

    # A Reply composer shown inside this one: the keys pressed in it are its own.
    composer.tool("reply").click()
    reply = Composer(composer.replies.first)
    expect(reply.title).to_contain_text("Response", timeout=WIDGETS_MS)
    reply_turn = reply.input("TurnIndex")
    before = reply_turn.input_value()
    reply_turn.click()
    reply_turn.press("Home")
    reply_turn.press_sequentially("7", delay=20)
    expect(reply.json_view).to_have_value(re.compile(rf'"TurnIndex": 7{before},'), timeout=WIDGETS_MS)
    page.keyboard.press("Control+z")
    expect(reply_turn).to_have_value(before, timeout=WIDGETS_MS)
    expect(reply.tool("redo")).to_be_enabled()
    expect(turn).to_have_value("420")
    expect(redo).to_be_disabled()
    shot("Ctrl-Z in the Reply composer")


def test_ctrl_z_in_the_app(page: Page, app_server: Server, shot: Callable[[str], Path]) -> None:
    app = open_app(page, app_server)
    composer = Composer(app.locator(".pgmx-composer").first)
    expect(composer.title).to_contain_text("PC Prompt", timeout=WIDGETS_MS)
    prompt = composer.input("Prompt")
    before = prompt.input_value()  # the app's composer keeps a draft: not always empty
    type_into(prompt, "Describe the painting")
    expect(composer.json_view).to_have_value(re.compile(r'"Prompt": "Describe the painting"'), timeout=WIDGETS_MS)
    page.keyboard.press("Control+z")
    expect(prompt).to_have_value(before, timeout=WIDGETS_MS)
    expect(composer.json_view).not_to_have_value(re.compile(r"Describe the painting"))
    shot("Ctrl-Z in the app")
    page.keyboard.press("Shift+Control+z")
    expect(prompt).to_have_value("Describe the painting", timeout=WIDGETS_MS)
    expect(composer.json_view).to_have_value(re.compile(r'"Prompt": "Describe the painting"'))
