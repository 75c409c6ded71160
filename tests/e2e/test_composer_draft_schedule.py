"""Issue 21, the draft and the Download link off the keystroke path, clicked in JupyterLab.

Download makes its link when clicked (the bytes are the JSON view then), and the link goes at the
next keystroke; clicked again it gives the new text. The draft is written within about a second of
typing: the kernel killed with SIGKILL a little later, the next Run All brings every word back.
"""

from __future__ import annotations

import json
import os
import re
import signal
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from .conftest import (
    KERNEL_MS,
    NO_PLAYWRIGHT,
    WIDGETS_MS,
    Composer,
    Notebook,
    code_cell,
    run_all,
    type_into,
    wait_for_idle,
)

expect = pytest.importorskip("playwright.sync_api", reason=NO_PLAYWRIGHT).expect
pytestmark = pytest.mark.e2e

PID = "import os\nos.getpid()"
CELLS = [
    "from pgm_explore.widgets import MessageComposer",
    'composer = MessageComposer("PC Prompt", draft_name="e2e-draft-schedule")\ncomposer',
    PID,
]


def _download(notebook: Notebook, composer: Composer) -> bytes:
    with notebook.page.expect_download() as download:
        composer.tool("download").locator("a.pgmx-download-link").click()
    assert download.value.suggested_filename.endswith(".json")
    return Path(download.value.path()).read_bytes()


def _type_at_end(composer: Composer, text: str) -> None:
    box = composer.input("Prompt")
    box.click()
    box.press("End")
    box.press_sequentially(text, delay=20)


def test_download_on_click_and_the_draft_survives_a_kill_9(
    open_code_in_lab: Callable[[list[str]], Notebook], e2e_env: dict[str, str], shot: Callable[[str], Path]
) -> None:
    notebook = open_code_in_lab(CELLS)
    page = notebook.page
    composer = Composer(notebook.panel.locator(".pgmx-composer"))
    expect(composer.title).to_contain_text("PC Prompt", timeout=WIDGETS_MS)
    link = composer.tool("download").locator("a.pgmx-download-link")
    expect(link).to_have_count(0)  # no link is made while typing

    words = f"Killed kernel, kept words {page.evaluate('Date.now()')}"
    type_into(composer.input("Prompt"), words)
    expect(composer.json_view).to_have_value(re.compile(re.escape(f'"Prompt": "{words}"')))
    composer.tool("download-button").click()
    expect(link).to_have_text(re.compile(r"⬇ .+\.json"), timeout=WIDGETS_MS)
    wait_for_idle(page)
    shown = composer.json_view.input_value()
    assert _download(notebook, composer) == (shown + "\n").encode("utf-8")
    shot("downloaded")

    _type_at_end(composer, "!")  # one more keystroke: the link goes
    expect(link).to_have_count(0, timeout=WIDGETS_MS)
    composer.tool("download-button").click()
    expect(link).to_have_count(1, timeout=WIDGETS_MS)
    wait_for_idle(page)
    assert json.loads(_download(notebook, composer))["Prompt"] == words + "!"

    # The draft is on disk within about a second of the last keystroke; a kill -9 then loses nothing.
    _type_at_end(composer, "?")
    expect(composer.json_view).to_have_value(re.compile(re.escape(f'"Prompt": "{words}!?"')))
    wait_for_idle(page)
    time.sleep(1.5)
    draft = Path(e2e_env["PGM_EXPLORE_DRAFTS"]) / "e2e-draft-schedule.json"
    assert json.loads(draft.read_text(encoding="utf-8"))["document"]["Prompt"] == words + "!?"
    pid = int(code_cell(notebook, "os.getpid()").locator(".jp-OutputArea-output").inner_text().strip())
    os.kill(pid, signal.SIGKILL)
    dialog = page.locator(".jp-Dialog")
    expect(dialog).to_contain_text("restart", timeout=KERNEL_MS)  # "…appears to have died. It will restart…"
    shot("kernel died")
    dialog.locator(".jp-mod-accept").click()
    wait_for_idle(page)
    run_all(page)
    composer = Composer(notebook.panel.locator(".pgmx-composer"))
    expect(composer.input("Prompt")).to_have_value(words + "!?", timeout=WIDGETS_MS)
    assert code_cell(notebook, "os.getpid()").locator(".jp-OutputArea-output").inner_text().strip() != str(pid)
    shot("restored after kill -9")
