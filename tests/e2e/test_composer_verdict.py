"""A verdict a person reads right, in JupyterLab: a new form greets nobody with warnings, a field's
finding shows once the field is typed into, Validate shows them all with correct plurals, and a
consistency error is told apart from the conformance badge in words."""

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
    "from pgm_explore.widgets import MessageComposer",
    'composer = MessageComposer("BKN-DAC", "RQ", draft_name="e2e-verdict")\ncomposer',
]


def test_findings_wait_for_the_person_and_the_verdicts_are_told_apart(
    open_code_in_lab: Callable[[list[str]], Notebook], shot: Callable[[str], Path]
) -> None:
    notebook = open_code_in_lab(CELLS)
    composer = Composer(notebook.panel.locator(".pgmx-composer"))
    expect(composer.title).to_contain_text("BKN-DAC", timeout=WIDGETS_MS)
    badge, consistency = composer.tool("badge"), composer.tool("consistency")
    summary = composer.root.locator(":scope > .pgmx-summary")
    form = composer.root.locator(":scope > .pgmx-form")

    # A new form: the verdict, and no warnings for identifiers nobody has filled in yet.
    expect(badge).to_have_text("conforms")
    expect(consistency).to_have_text("")
    expect(form.locator(".pgmx-invalid")).to_have_count(0)
    expect(summary).to_contain_text("4 findings at fields not filled in yet")
    shot("a new form")

    # Type into DialogID and clear it again: that field, and only that one, shows its warning.
    dialog = composer.input("DialogID")
    type_into(dialog, "d")
    type_into(dialog, "")
    expect(composer.field("DialogID")).to_have_class(INVALID)
    expect(composer.finding("DialogID")).to_contain_text("DialogID is an empty string")
    expect(consistency).to_have_text("· 1 warning")
    expect(form.locator(".pgmx-invalid")).to_have_count(1)
    shot("one warning at the touched field")

    # Validate: every finding, counted in words with the right plurals.
    composer.tool("validate").click()
    expect(consistency).to_have_text("· 4 warnings")
    expect(form.locator(".pgmx-invalid")).to_have_count(4)
    expect(summary).to_contain_text("4 warnings")
    expect(summary).not_to_contain_text("(s)")

    # A document that conforms but contradicts itself (Overall feasible with an InsValue step).
    composer.tool("open").click()
    panel = composer.root.locator(":scope > .pgmx-open-panel")
    examples = panel.locator(".pgmx-examples select")
    expect(examples).to_be_visible(timeout=WIDGETS_MS)
    examples.select_option(label="examples/bkn-dac/invalid/overall-feasible-with-insvalue.json")
    panel.locator("button.pgmx-load").click()
    expect(composer.title).to_contain_text("Response", timeout=WIDGETS_MS)
    expect(badge).to_have_text("conforms")
    expect(consistency).to_have_text("· 1 consistency error")
    expect(summary).to_contain_text("1 consistency error")
    expect(summary).not_to_contain_text("error(s)")
    composer.root.scroll_into_view_if_needed()
    shot("conforms, 1 consistency error")
