"""Issue 21, the composer's feel, clicked and typed in JupyterLab as a person does.

- "+ add" numbers each new Process Action with the next free Step (no duplicate-step warning of
  the form's own making), and a Statement is typed into a multi-line box;
- a required field's empty-value advice says to fill it in, never to leave it out;
- Reply to a feasibility Request proposes one Feasibility step per Process Action (Step copied,
  PAStatus to choose); the Response keeps a draft of its own and is back, as left, after
  Kernel > Restart Kernel and Run All; the Drafts list names each draft once, in words;
- a composer cell run again takes the draft over, saying so in one plain line; after Open file
  the lines about what was shown before ("Restored draft …", "Saved …") are gone.
"""

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
pytestmark = pytest.mark.e2e

IMPORT = "from pgm_explore.widgets import MessageComposer"
REQUEST = 'request = MessageComposer("BKN-DAC", "RQ", draft_name="e2e-feel")\nrequest'


def test_steps_numbered_reply_proposes_steps_and_comes_back_after_restart(
    open_code_in_lab: Callable[[list[str]], Notebook], shot: Callable[[str], Path]
) -> None:
    notebook = open_code_in_lab([IMPORT, REQUEST])
    page = notebook.page
    request = Composer(notebook.panel.locator(".pgmx-composer").first)
    expect(request.title).to_contain_text("BKN-DAC", timeout=WIDGETS_MS)

    request.field("Kind").locator("select").select_option("feasibility")
    actions = request.field("ProcessActions")
    actions.locator(".pgmx-include input").first.check()
    add = actions.locator("button.pgmx-add-item").first
    for step in range(3):
        add.click()
        expect(request.input(f"ProcessActions-{step}-Step")).to_have_value(str(step), timeout=WIDGETS_MS)
    statement = request.field("ProcessActions-1-Statement").locator(".pgmx-input textarea")
    type_into(statement, "MM-Move Nil aua-1 At ML-Stall7")
    expect(request.json_view).to_have_value(re.compile(re.escape('"Statement": "MM-Move Nil aua-1 At ML-Stall7"')))
    request.tool("validate").click()
    summary = request.root.locator(":scope > .pgmx-summary")
    expect(summary).to_contain_text("empty-value", timeout=WIDGETS_MS)
    expect(summary).not_to_contain_text("duplicate-step")
    expect(request.finding("MInstance")).to_contain_text("(fill it in)")
    expect(request.finding("MInstance")).not_to_contain_text("leave it out")
    shot("three steps numbered")

    request.tool("reply").click()
    reply = Composer(request.replies.first)
    expect(reply.title).to_contain_text("Response", timeout=WIDGETS_MS)
    for step in range(3):
        expect(reply.input(f"Feasibility-Steps-{step}-Step")).to_have_value(str(step))
        expect(reply.finding(f"Feasibility-Steps-{step}-PAStatus")).to_contain_text("PAStatus is missing")
    # A click, not Playwright's check(): once the field is in, the form shows its select instead
    # of the tick box, so a check() waiting to see the box ticked can wait for nothing.
    reply.field("Feasibility-Steps-1-PAStatus").locator(".pgmx-include input").click()
    # The kernel answers the tick with the first PA Status; choosing before that answer arrives
    # (a busy machine) would have the choice overwritten by it.
    expect(reply.json_view).to_have_value(re.compile(r'"Step": 1,\s*"PAStatus": "Ack"'), timeout=WIDGETS_MS)
    status = reply.field("Feasibility-Steps-1-PAStatus").locator("select")
    status.select_option(index=1)  # Clash
    expect(reply.json_view).to_have_value(re.compile(r'"Step": 1,\s*"PAStatus": "Clash"'), timeout=WIDGETS_MS)
    wait_for_idle(page)
    shot("reply with a status chosen")

    restart_kernel(page)  # Kernel > Restart Kernel, then Run All
    run_all(page)
    request = Composer(notebook.panel.locator(".pgmx-composer").first)
    expect(request.root.locator(".pgmx-draft-notice").first).to_contain_text("Restored draft", timeout=WIDGETS_MS)
    reply = Composer(request.replies.first)
    expect(reply.json_view).to_have_value(re.compile(r'"Step": 1,\s*"PAStatus": "Clash"'), timeout=WIDGETS_MS)
    expect(reply.input("Feasibility-Steps-2-Step")).to_have_value("2")
    shot("back after restart and run all")

    request.tool("drafts").click()
    options = request.root.locator(":scope > .pgmx-drafts-panel .pgmx-drafts-list option")
    expect(options.first).to_be_attached(timeout=WIDGETS_MS)
    labels = [label.replace("\xa0", " ") for label in options.all_inner_texts()]  # ipywidgets shows spaces as nbsp
    assert [label.split(":")[0] for label in labels].count("e2e-feel") == 1, labels
    assert any(label.startswith("e2e-feel: a BKN-DAC Request, last written") for label in labels), labels
    assert any(label.startswith("e2e-feel-reply: a BKN-DAC Response (the reply of “e2e-feel”)") for label in labels)
    shot("drafts listed once in words")


def test_a_cell_run_again_takes_the_draft_over_and_open_clears_old_lines(
    open_code_in_lab: Callable[[list[str]], Notebook], shot: Callable[[str], Path]
) -> None:
    cells = [IMPORT, 'mine = MessageComposer("BKN-PAL", "RQ", draft_name="e2e-rerun")\nmine']
    notebook = open_code_in_lab(cells)
    page = notebook.page
    cell = code_cell(notebook, "e2e-rerun")
    composer = Composer(cell.locator(".pgmx-composer"))
    expect(composer.title).to_contain_text("BKN-PAL", timeout=WIDGETS_MS)
    composer.field("Question").locator(".pgmx-include input").check()
    type_into(composer.input("Question"), "Warm or formal?")
    type_into(composer.tool("save-path").locator("input"), "mine.json")
    composer.tool("save").click()
    expect(composer.tool("status")).to_contain_text("Saved", timeout=WIDGETS_MS)

    # Run the cell again, as a person does: click into it, Shift+Enter.
    cell.locator(".jp-InputArea-editor").click()
    page.keyboard.press("Shift+Enter")
    wait_for_idle(page)
    composer = Composer(cell.locator(".pgmx-composer"))
    notice = composer.root.locator(":scope > .pgmx-notice .pgmx-draft-notice")
    expect(notice).to_contain_text("This composer keeps the draft “e2e-rerun” from now on.", timeout=WIDGETS_MS)
    expect(notice).to_contain_text("Restored draft")
    expect(notice).not_to_contain_text("draft_name")
    expect(composer.input("Question")).to_have_value("Warm or formal?")
    shot("cell run again")

    composer.open_file("../data/examples/bkn-pal/valid/rs-tutor-stance.json")
    expect(composer.open_panel.locator(".pgmx-open-status")).to_contain_text("Opened", timeout=WIDGETS_MS)
    expect(composer.title).to_contain_text("Response")
    expect(notice).to_be_hidden()
    expect(composer.tool("status")).to_have_text("")
    shot("opened: only the present state")
