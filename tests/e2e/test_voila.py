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
    composer = Composer(page.locator(".pgmx-composer").first)
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
