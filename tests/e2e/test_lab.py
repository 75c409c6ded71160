"""The composers in JupyterLab, in Chromium, as a user drives them.

Notebook 02 (a PC Prompt composer): a finding appears at the field that is typed into and goes
when the field is fixed, an edit of the JSON view marks the field it breaks, and Save writes
exactly the JSON view. Notebook 03 (dialogue turns): Reply on a Request opens its Response, and Add to dialogue
appends to the dialogue.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from .conftest import NO_PLAYWRIGHT, WIDGETS_MS, Composer, Notebook, code_cell, type_into, wait_for_idle

if TYPE_CHECKING:
    from playwright.sync_api import Locator

expect = pytest.importorskip("playwright.sync_api", reason=NO_PLAYWRIGHT).expect
pytestmark = pytest.mark.e2e

INVALID = re.compile(r"\bpgmx-invalid\b")
ERROR = re.compile(r"\bpgmx-severity-error\b")


def _hide_file_browser(notebook: Notebook) -> None:
    """Collapse the left sidebar, so that the composer has the width of the window."""
    tab = notebook.page.locator('.jp-SideBar.jp-mod-left .lm-TabBar-tab[data-id="filebrowser"]')
    if "lm-mod-current" in (tab.get_attribute("class") or ""):
        tab.click()
    expect(tab).not_to_have_class(re.compile(r"\blm-mod-current\b"))


def _to_top(element: Locator) -> None:
    """Scroll the notebook so that ``element`` is at the top of the window (for the screenshots)."""
    element.evaluate("e => e.scrollIntoView({block: 'start'})")


def test_pc_prompt_finding_at_the_field_then_save(
    open_in_lab: Callable[[str], Notebook], shot: Callable[[str], Path]
) -> None:
    notebook = open_in_lab("02_*.ipynb")
    _hide_file_browser(notebook)
    composer = Composer(code_cell(notebook, 'composer = MessageComposer("PC Prompt"').locator(".pgmx-composer"))
    expect(composer.title).to_contain_text("PC Prompt")
    expect(composer.tool("badge")).to_have_text("conforms")
    prompt, field = composer.input("Prompt"), composer.field("Prompt")
    expect(prompt).to_have_value(re.compile(r"lantern"))  # the notebook's cells filled it in
    expect(field).not_to_have_class(INVALID)
    _to_top(composer.root)
    shot("composer after Run All")

    # Clear a required text: the finding appears at that field (a warning: still conforms).
    type_into(prompt, "")
    expect(field).to_have_class(INVALID)
    finding = field.locator(".pgmx-finding-Prompt")
    expect(finding).to_contain_text("Prompt is an empty string")
    expect(composer.finding("Prompt")).to_have_count(1)
    expect(composer.json_view).to_have_value(re.compile(r'"Prompt": ""'))
    _to_top(composer.root)
    shot("finding at Prompt")

    # Type the prompt: the finding goes.
    words = "Buy the red lantern at stall three."
    type_into(prompt, words)
    expect(finding).to_have_count(0)
    expect(field).not_to_have_class(INVALID)
    expect(composer.json_view).to_have_value(re.compile(rf'"Prompt": "{re.escape(words)}"'))
    shot("finding gone")

    # A wrong type typed into the JSON view: the error is at the Prompt field, the badge turns.
    document = json.loads(composer.json_view.input_value())
    composer.json_view.fill(json.dumps({**document, "Prompt": 42}, indent=2))
    composer.json_view.blur()  # the JSON view applies on leaving the box
    expect(composer.tool("badge")).to_have_text("does not conform")
    expect(field).to_have_class(ERROR)
    expect(finding).to_contain_text("Prompt")
    _to_top(composer.root)
    shot("error from the JSON view")
    composer.json_view.fill(json.dumps(document, indent=2))
    composer.json_view.blur()
    expect(composer.tool("badge")).to_have_text("conforms")
    expect(finding).to_have_count(0)
    expect(prompt).to_have_value(words)

    # Save: the file, in the notebook's folder (the kernel's working directory), is the JSON view.
    type_into(composer.tool("save-path").locator("input"), "e2e-saved.json")
    composer.tool("save").click()
    expect(composer.tool("status")).to_contain_text("e2e-saved.json")
    saved = notebook.folder / "e2e-saved.json"
    assert saved.is_file(), f"Save wrote no {saved}"
    shown = composer.json_view.input_value()
    assert saved.read_text(encoding="utf-8") == shown + "\n"
    assert json.loads(shown)["Prompt"] == words
    _to_top(composer.root)
    shot("saved")


def test_reply_opens_the_response_of_a_request(
    open_in_lab: Callable[[str], Notebook], shot: Callable[[str], Path]
) -> None:
    notebook = open_in_lab("03_*.ipynb")
    _hide_file_browser(notebook)
    request = Composer(code_cell(notebook, 'request = MessageComposer("BKN-DAC"').locator(".pgmx-composer").first)
    expect(request.title).to_contain_text("Request")
    expect(request.mode).to_have_text("RQ")
    expect(request.tool("badge")).to_have_text("conforms")
    expect(request.replies).to_have_count(0)

    request.tool("reply").click()
    expect(request.replies).to_have_count(1, timeout=WIDGETS_MS)
    reply = Composer(request.replies)
    expect(reply.title).to_contain_text("Response")
    expect(reply.mode).to_have_text("RS")
    # A Response answers its Request: RequestID is the Request's QueryID, same dialogue and turn.
    expect(reply.input("RequestID")).to_have_value(request.input("QueryID").input_value())
    for slug in ("MInstance", "UEnvironment", "SessionID", "DialogID", "TurnIndex"):
        expect(reply.input(slug)).to_have_value(request.input(slug).input_value())
    expect(reply.input("QueryID")).not_to_have_value(request.input("QueryID").input_value())
    expect(reply.tool("reply")).to_be_disabled()  # a Response has nothing to reply to
    _to_top(reply.root)
    shot("reply")

    # The dialogue builder further down: Add to dialogue appends its composer's message.
    builder = notebook.panel.locator(".pgmx-dialogue")
    expect(builder).to_have_count(1, timeout=WIDGETS_MS)
    listed = builder.locator(".pgmx-messages select option")
    wait_for_idle(notebook.page)  # before counting: the list may still be coming in
    before = listed.count()
    assert before > 0, "the notebook's cells added messages to the dialogue"
    builder.locator("button.pgmx-add", has_text="Add to dialogue").click()
    expect(listed).to_have_count(before + 1, timeout=WIDGETS_MS)
    _to_top(builder)
    shot("added to the dialogue")
