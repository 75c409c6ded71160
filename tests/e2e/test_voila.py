"""Voilà renders the PC Prompt composer (notebook 02) as an app, and it stays live."""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from .conftest import KERNEL_MS, NO_PLAYWRIGHT, Composer, type_into

if TYPE_CHECKING:
    from playwright.sync_api import Page

expect = pytest.importorskip("playwright.sync_api", reason=NO_PLAYWRIGHT).expect
pytestmark = pytest.mark.e2e

INVALID = re.compile(r"\bpgmx-invalid\b")


def test_voila_renders_a_live_composer(open_in_voila: Callable[[str], Page], shot: Callable[[str], Path]) -> None:
    page = open_in_voila("02_*.ipynb")
    # The second composer: the first is the reader's own, empty until filled in by hand.
    composer = Composer(page.locator(".pgmx-composer").nth(1))
    # Voilà runs the whole notebook before the widgets are live.
    expect(composer.tool("badge")).to_have_text("conforms", timeout=KERNEL_MS)
    expect(composer.title).to_contain_text("PC Prompt")
    expect(page.locator("body")).not_to_contain_text("Traceback")
    prompt, field = composer.input("Prompt"), composer.field("Prompt")
    expect(prompt).to_be_visible()
    expect(prompt).to_have_value(re.compile(r"lantern"))
    shot("composer in Voila")

    # The kernel behind the page answers: a finding appears at the cleared field, and goes.
    type_into(prompt, "")
    expect(field).to_have_class(INVALID)
    expect(composer.finding("Prompt")).to_contain_text("Prompt is an empty string")
    shot("finding at Prompt in Voila")
    type_into(prompt, "Buy the green lantern.")
    expect(composer.finding("Prompt")).to_have_count(0)
    expect(field).not_to_have_class(INVALID)
    expect(composer.json_view).to_have_value(re.compile(r'"Prompt": "Buy the green lantern\."'))


def test_a_name_typed_twice_in_the_json_view_is_a_warning(
    open_in_voila: Callable[[str], Page], shot: Callable[[str], Path]
) -> None:
    # issue #12: a name written twice was resolved last-wins without a word.
    page = open_in_voila("02_*.ipynb")
    # The second composer, the scripted one: its Prompt is filled (the first is the reader's own).
    composer = Composer(page.locator(".pgmx-composer").nth(1))
    expect(composer.tool("badge")).to_have_text("conforms", timeout=KERNEL_MS)
    view = composer.json_view
    view.scroll_into_view_if_needed()
    view.click()
    # A second Prompt on a line of its own, right after the opening brace, as a person types it.
    view.press("Control+Home")
    view.press("End")
    view.press("Enter")
    view.press_sequentially('"Prompt": "Buy the red lantern.",', delay=20)
    view.press("Tab")  # the view applies what was typed when it loses the focus
    note = composer.root.locator(":scope > .pgmx-parse-error")
    expect(note).to_contain_text('$: The name "Prompt" is written twice in one object', timeout=KERNEL_MS)
    expect(note).to_contain_text("only its last value is read")
    # The last value is the one kept, in the form and in the view.
    expect(composer.input("Prompt")).to_have_value(re.compile(r"lantern"))
    expect(composer.input("Prompt")).not_to_have_value("Buy the red lantern.")
    expect(view).not_to_have_value(re.compile(r"red lantern"))
    note.scroll_into_view_if_needed()
    shot("name typed twice in the JSON view")
