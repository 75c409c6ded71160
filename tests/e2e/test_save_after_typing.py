"""Save clicked right after typing writes what the page shows, also while the kernel is busy.

The browser holds back a text box's value while the kernel has not finished with the box's
previous update (ipywidgets' message throttle), but sends a click at once: without the
composer's ordered clicks, Save on a busy kernel wrote the document as it was keystrokes ago.
A slow observer of ``value`` keeps the kernel busy at every keystroke here.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from pathlib import Path

import pytest

from .conftest import NO_PLAYWRIGHT, WIDGETS_MS, Composer, Notebook, type_into, wait_for_idle

expect = pytest.importorskip("playwright.sync_api", reason=NO_PLAYWRIGHT).expect
pytestmark = pytest.mark.e2e

CELLS = [
    "import time\nfrom pgm_explore.widgets import MessageComposer",
    'composer = MessageComposer("PC Prompt", draft_name="e2e-save-after-typing")\ncomposer',
    # A kernel slow to take each edit: 0.3 s per keystroke, far behind a person typing.
    'composer.observe(lambda change: time.sleep(0.3), "value")',
]


def test_save_right_after_typing_writes_every_keystroke(
    open_code_in_lab: Callable[[list[str]], Notebook], shot: Callable[[str], Path]
) -> None:
    notebook = open_code_in_lab(CELLS)
    page = notebook.page
    composer = Composer(notebook.panel.locator(".pgmx-composer"))
    expect(composer.title).to_contain_text("PC Prompt", timeout=WIDGETS_MS)
    type_into(composer.tool("save-path").locator("input"), "typed.json")
    wait_for_idle(page)

    words = "Meet me at the lantern stall at noon."
    type_into(composer.input("Prompt"), words)
    composer.tool("save").click()  # at once: the kernel is still seconds behind the keystrokes
    shot("saved at once")
    target = notebook.folder / "typed.json"
    expect(composer.tool("status")).to_contain_text(f"{target}", timeout=WIDGETS_MS)
    saved = json.loads(target.read_text(encoding="utf-8"))
    assert saved["Prompt"] == words
    # What was saved is what the page shows.
    expect(composer.json_view).to_have_value(re.compile(re.escape(f'"Prompt": "{words}"')))
    wait_for_idle(page)
    assert json.loads(composer.json_view.input_value()) == saved
