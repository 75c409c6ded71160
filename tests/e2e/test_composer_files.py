"""Open, Save and Download on a composer, clicked in JupyterLab: Download gives the browser the
JSON view as a file; Save without a name writes to the work folder, and asks before replacing
a file it did not write; Open reads a file on the server or an example."""

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
    "from pgm_explore.widgets import MessageComposer",
    'composer = MessageComposer("BKN-PAL", "RQ", draft_name="e2e-files")\ncomposer',
]


def test_download_save_and_open_by_hand(
    open_code_in_lab: Callable[[list[str]], Notebook], e2e_env: dict[str, str], shot: Callable[[str], Path]
) -> None:
    notebook = open_code_in_lab(CELLS)
    page = notebook.page
    composer = Composer(notebook.panel.locator(".pgmx-composer"))
    expect(composer.title).to_contain_text("BKN-PAL", timeout=WIDGETS_MS)
    question = "Warm «welcome» or formal?"
    composer.field("Question").locator(".pgmx-include input").check()
    type_into(composer.input("Question"), question)
    expect(composer.json_view).to_have_value(re.compile(re.escape(f'"Question": "{question}"')))
    wait_for_idle(page)
    shown = composer.json_view.input_value()
    ident = json.loads(shown)["QueryID"]

    # Download: the browser receives the JSON view (and the final newline Save also writes).
    composer.tool("download-button").click()
    link = composer.tool("download").locator("a")
    expect(link).to_have_text(f"⬇ {ident}.json", timeout=WIDGETS_MS)
    with page.expect_download() as download:
        link.click()
    assert download.value.suggested_filename == f"{ident}.json"
    assert Path(download.value.path()).read_bytes() == (shown + "\n").encode("utf-8")
    shot("downloaded")

    # Save with no name: <QueryID>.json in the work folder, not beside the notebook.
    work = Path(e2e_env["PGM_EXPLORE_WORK"])
    composer.tool("save").click()
    expect(composer.tool("status")).to_contain_text(f"{work}/{ident}.json")
    assert (work / f"{ident}.json").read_text(encoding="utf-8") == shown + "\n"
    assert not (notebook.folder / f"{ident}.json").exists()

    # A file that is not this composer's: the first click asks, the second replaces.
    theirs = notebook.folder / "theirs.json"
    theirs.write_text("someone else's work\n", encoding="utf-8")
    type_into(composer.tool("save-path").locator("input"), "theirs.json")
    composer.tool("save").click()
    expect(composer.tool("save")).to_have_text("Overwrite?")
    expect(composer.tool("status")).to_contain_text("exists")
    assert theirs.read_text(encoding="utf-8") == "someone else's work\n"
    shot("overwrite asked")
    composer.tool("save").click()
    expect(composer.tool("save")).to_have_text("Save")
    expect(composer.tool("status")).to_contain_text("Saved")
    assert theirs.read_text(encoding="utf-8") == shown + "\n"

    # Open a file on the server (relative to the notebook's folder), then an example.
    composer.open_file("../data/examples/bkn-pal/valid/rs-tutor-stance.json")
    panel = composer.open_panel
    expect(composer.title).to_contain_text("Response", timeout=WIDGETS_MS)
    expect(composer.json_view).to_have_value(re.compile(r'"Mode": "RS"'))
    shot("opened a file")
    panel.locator(".pgmx-examples select").select_option(label="examples/bkn-dac/valid/rq-minimal.json")
    panel.locator("button.pgmx-load").click()
    expect(composer.title).to_contain_text("BKN-DAC", timeout=WIDGETS_MS)
    expect(composer.title).to_contain_text("Request")
    shot("opened an example")
