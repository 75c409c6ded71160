"""The form, typed into and clicked in JupyterLab in Chromium, as a person does.

What a person types into a number field is what the validator judges: nothing typed is
dropped or rewritten on the way (a browser's number box turned "1.5" into 15 and "55" into 1),
the JSON view holds what was typed, and the finding is at the field. Bounds and the meanings of
enumeration values are on screen, and each field's spec text is one click (or tap) away, in
JupyterLab and in Voilà.

The notebook is written by the test (a composer per cell, filled in by its code as a notebook
author would); everything after Run All is keyboard and mouse.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from pgm_explore.spec import data_type

from .conftest import (
    KERNEL_MS,
    NO_PLAYWRIGHT,
    WIDGETS_MS,
    Composer,
    Notebook,
    Server,
    _run_all,
    _slug,
    type_into,
    wait_for_idle,
)

if TYPE_CHECKING:
    from playwright.sync_api import Browser, Locator, Page

expect = pytest.importorskip("playwright.sync_api", reason=NO_PLAYWRIGHT).expect
pytestmark = pytest.mark.e2e

INVALID = re.compile(r"\bpgmx-invalid\b")

PROMPT_CELL = """\
from pgm_explore.widgets import MessageComposer
prompt = MessageComposer("PC Prompt", draft_dir=False)
prompt.set(("ResolvedReferents", 0), {"Expression": "the blue lantern", "EntityID": "item-1", "Confidence": 0.5})
prompt.set(("ActionContext", "MaxSteps"), 5)
prompt"""

DAC_CELL = """\
from pgm_explore.widgets import MessageComposer
dac = MessageComposer("BKN-DAC", "RS", draft_dir=False)
dac.set(("Feasibility", "Steps", 0, "PAStatus"), "Ack")
dac"""


def _notebook(cells: list[str]) -> str:
    return json.dumps(
        {
            "cells": [
                {
                    "cell_type": "code",
                    "execution_count": None,
                    "id": f"c{i}",
                    "metadata": {},
                    "outputs": [],
                    "source": s,
                }
                for i, s in enumerate(cells)
            ],
            # A kernelspec, or Lab asks which kernel with a dialog that blocks the clicks.
            "metadata": {
                "kernelspec": {"display_name": "Python 3", "language": "python", "name": "python3"},
                "language_info": {"name": "python"},
            },
            "nbformat": 4,
            "nbformat_minor": 5,
        }
    )


@pytest.fixture
def open_cells(page: Page, lab_server: Server, request: pytest.FixtureRequest) -> Iterator[Callable[..., Notebook]]:
    """``open_cells([source, ...])``: a new notebook of these code cells, opened in Lab and Run All."""

    def open_notebook(cells: list[str]) -> Notebook:
        folder = lab_server.root / f"run-{_slug(request.node.name)}"
        folder.mkdir()
        path = folder / "form.ipynb"
        path.write_text(_notebook(cells), encoding="utf-8")
        relative = path.relative_to(lab_server.root).as_posix()
        page.goto(f"{lab_server.url}lab/workspaces/{_slug(request.node.name)}/tree/{relative}?token={lab_server.token}")
        _run_all(page)
        wait_for_idle(page)
        return Notebook(page, path)

    yield open_notebook


def _composer(notebook: Notebook, index: int) -> Composer:
    root = notebook.panel.locator(".jp-CodeCell").nth(index).locator(".pgmx-composer").first
    expect(root).to_be_visible(timeout=WIDGETS_MS)
    return Composer(root)


def _expect_json(composer: Composer, text: str) -> None:
    """Until the JSON view holds ``text`` (the kernel may still be taking in the last keys)."""
    expect(composer.json_view).to_have_value(re.compile(re.escape(text)))


def _typed(composer: Composer, slug: str, text: str) -> Locator:
    """Type ``text`` into the field's box with real key events; wait until the kernel has it."""
    box = composer.input(slug)
    type_into(box, text)
    expect(box).to_have_value(text)  # nothing typed is dropped or changed in the box
    wait_for_idle(composer.root.page)
    return box


def test_what_is_typed_into_a_number_field_is_what_is_validated(
    open_cells: Callable[..., Notebook], shot: Callable[[str], Path]
) -> None:
    notebook = open_cells([PROMPT_CELL, DAC_CELL])
    dac = _composer(notebook, 1)
    turn, finding = dac.field("TurnIndex"), dac.finding("TurnIndex")
    expect(dac.input("TurnIndex")).to_have_value(re.compile(r"^\d+$"))
    expect(turn).not_to_have_class(INVALID)

    # A decimal in an integer field: 1.5 reaches the validator (not 15), and its finding is at the field.
    _typed(dac, "TurnIndex", "1.5")
    expect(dac.json_view).to_have_value(re.compile(r'"TurnIndex": 1\.5,'))
    expect(finding).to_contain_text("must be an integer, not the number 1.5")
    expect(turn).to_have_class(INVALID)
    expect(dac.tool("badge")).not_to_have_text("conforms")
    shot("TurnIndex 1.5")

    # A decimal comma is not a JSON number: kept as the text typed, and said so at the field.
    _typed(dac, "TurnIndex", "2,5")
    _expect_json(dac, '"TurnIndex": "2,5",')
    expect(finding).to_contain_text('"2,5" is not a JSON number')

    # Letters stay as typed.
    _typed(dac, "TurnIndex", "abc")
    _expect_json(dac, '"TurnIndex": "abc",')
    expect(finding).to_contain_text('not the string "abc"')

    # Below the minimum: -3, not the minimum the browser's box made of it.
    _typed(dac, "TurnIndex", "-3")
    _expect_json(dac, '"TurnIndex": -3,')
    expect(finding).to_contain_text("at least 0")

    # An exponent is a JSON number: 1e3 is 1000 (an integer by JSON Schema), no finding.
    _typed(dac, "TurnIndex", "1e3")
    _expect_json(dac, '"TurnIndex": 1000.0,')
    expect(finding).to_have_count(0)
    expect(turn).not_to_have_class(INVALID)

    # Notebook 02's promise: type a percentage into Confidence (0 – 1) and the field turns red.
    prompt = _composer(notebook, 0)
    confidence = "ResolvedReferents-0-Confidence"
    _typed(prompt, confidence, "55")
    _expect_json(prompt, '"Confidence": 55\n')
    expect(prompt.field(confidence)).to_have_class(INVALID)
    expect(prompt.finding(confidence)).to_contain_text("55")
    expect(prompt.tool("badge")).not_to_have_text("conforms")
    prompt.field(confidence).scroll_into_view_if_needed()
    shot("Confidence 55")
    _typed(prompt, confidence, "0.55")
    expect(prompt.finding(confidence)).to_have_count(0)
    _expect_json(prompt, '"Confidence": 0.55\n')

    # MaxSteps (at least 1): 0 stays 0, with its finding.
    _typed(prompt, "ActionContext-MaxSteps", "0")
    _expect_json(prompt, '"MaxSteps": 0\n')
    expect(prompt.finding("ActionContext-MaxSteps")).to_contain_text("at least 1")


def test_bounds_meanings_and_the_spec_text_are_on_screen(
    open_cells: Callable[..., Notebook], shot: Callable[[str], Path]
) -> None:
    notebook = open_cells([DAC_CELL])
    dac = _composer(notebook, 0)

    # The range beside the label.
    expect(dac.field("TurnIndex").locator(".pgmx-constraint").first).to_have_text("≥ 0")

    # Each PA Status code with its meaning, in the dropdown.
    status = dac.field("Feasibility-Steps-0-PAStatus")
    options = status.locator("select option")
    expect(options.filter(has_text="InsRights")).to_have_text("InsRights — Insufficient Rights.")
    expect(options.filter(has_text="Ack")).to_contain_text("The Process Action could be")

    # The spec text: on hover (a title), and under the (i), which a click (or a tap) opens and closes.
    label = status.locator(".pgmx-label").first
    expect(label.locator(".pgmx-name")).to_have_attribute("title", re.compile(r"The PA Status of MMM-TEC V2\.2"))
    text = label.locator(".pgmx-help-text")
    expect(text).to_be_hidden()
    label.locator(".pgmx-help > summary").click()
    expect(text).to_be_visible()
    expect(text).to_contain_text("The PA Status of MMM-TEC V2.2 that the Process Action would receive")
    expect(text.locator("li", has_text="InsValue")).to_contain_text("Insufficient Value")
    # The editor is still there and still works while the text is open.
    status.locator("select").first.select_option(index=1)  # Clash, the second code
    expect(dac.json_view).to_have_value(re.compile(r'"PAStatus": "Clash"'))
    status.scroll_into_view_if_needed()
    shot("PA Status help open")
    label.locator(".pgmx-help > summary").click()
    expect(text).to_be_hidden()

    # A field that is not switched on shows its help too.
    failure = dac.field("Failure").locator(".pgmx-label").first
    failure.locator(".pgmx-help > summary").click()
    expect(failure.locator(".pgmx-help-text")).to_be_visible()


def test_in_voila_on_a_touch_screen_a_tap_opens_the_help_and_numbers_keep_what_is_typed(
    browser: Browser, voila_server: Server, screenshots: Path
) -> None:
    # Voilà serves the temporary copy of notebooks/; a notebook of this test's own is added there.
    path = voila_server.root / "form-by-hand-voila.ipynb"
    path.write_text(_notebook([DAC_CELL]), encoding="utf-8")
    context = browser.new_context(viewport={"width": 820, "height": 1000}, has_touch=True)
    page = context.new_page()
    try:
        page.goto(voila_server.at(f"voila/render/{path.name}"))
        dac = Composer(page.locator(".pgmx-composer").first)
        turn = dac.field("TurnIndex")
        expect(turn).to_be_visible(timeout=KERNEL_MS)
        label = turn.locator(".pgmx-label").first
        expect(label.locator(".pgmx-constraint")).to_have_text("≥ 0")
        text = label.locator(".pgmx-help-text")
        expect(text).to_be_hidden()
        label.locator(".pgmx-help > summary").tap()
        expect(text).to_be_visible()
        found = data_type("BKN-DAC").row(("TurnIndex",))
        assert found is not None
        expect(text).to_contain_text(found[1].description)
        page.screenshot(path=str(screenshots / "test-form-voila-touch-help.png"))

        type_into(dac.input("TurnIndex"), "1.5")
        expect(dac.input("TurnIndex")).to_have_value("1.5")
        expect(dac.finding("TurnIndex")).to_contain_text("must be an integer, not the number 1.5")
        expect(dac.json_view).to_have_value(re.compile(r'"TurnIndex": 1\.5,'))
    finally:
        context.close()
