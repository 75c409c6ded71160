"""The app page's Save and Open act in the work folder only, typed into as a person would (issue 19).

Served by ``pgm-explore app --work-folder`` (the ``app_server`` fixture), a visitor types names
that lead out of the work folder (``../``, an absolute path, ``~``, a link planted in the folder
that leads out) into Save and Open: nothing is written outside, nothing from outside is shown.
Names inside work, a file from elsewhere comes in by Upload, and Download gives the JSON back.
"""

from __future__ import annotations

import json
import re
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from .conftest import KERNEL_MS, NO_PLAYWRIGHT, WIDGETS_MS, Composer, Server, type_into

if TYPE_CHECKING:
    from playwright.sync_api import Locator, Page

expect = pytest.importorskip("playwright.sync_api", reason=NO_PLAYWRIGHT).expect
pytestmark = pytest.mark.e2e

SECRET = "kpa-secret-outside-the-work-folder"


def _files(composer: Composer) -> Locator:
    return composer.root.locator(":scope > .pgmx-files")


def _save_as(composer: Composer, name: str) -> Locator:
    """Type ``name`` into the Save name box and click Save; the status line."""
    files = _files(composer)
    type_into(files.locator(".pgmx-save-name input"), name)
    files.locator("button.pgmx-save").click()
    return files.locator(".pgmx-files-status")


def _open(composer: Composer, name: str) -> Locator:
    """Type ``name`` into the Open panel's box and click Open file; the panel's status line."""
    panel = _files(composer).locator(".pgmx-open-panel")
    type_into(panel.locator(".pgmx-open-name input"), name)
    panel.locator("button.pgmx-open-file").click()
    return panel.locator(".pgmx-open-status")


def _tree(folder: Path) -> dict[str, bytes]:
    """The files of a folder and their bytes, but the app's drafts (its composer writes them as it goes)."""
    files = (p for p in sorted(folder.rglob("*")) if p.is_file() and ".pgm-explore-drafts" not in p.parts)
    return {p.relative_to(folder).as_posix(): p.read_bytes() for p in files}


def test_save_and_open_stay_in_the_work_folder(
    page: Page, app_server: Server, app_work: Path, tmp_path: Path, shot: Callable[[str], Path]
) -> None:
    outside = app_work.parent / "outside"
    secret = dict(json.loads((app_server.root / "data/examples/bkn-pal/valid/rq-minimal.json").read_text()))
    secret["QueryID"] = SECRET
    (outside / "secret.json").write_text(json.dumps(secret, indent=2), encoding="utf-8")
    (app_work / "linked.json").symlink_to(outside / "secret.json")  # planted: a link leading out
    shutil.copyfile(app_server.root / "data/examples/bkn-dac/valid/rq-commitment.json", app_work / "mine.json")
    before_outside, before_work = _tree(outside), _tree(app_work)

    page.goto(app_server.at(), timeout=KERNEL_MS)
    composer = Composer(page.locator(".pgmx-app .pgmx-composer").first)
    expect(composer.tool("badge")).to_be_visible(timeout=KERNEL_MS)
    # (The page may come back with another test's draft: a PC Prompt, picked as a person picks it.)
    page.locator(".pgmx-app .pgmx-app-type select").select_option("PC Prompt")
    expect(composer.title).to_contain_text("PC Prompt", timeout=WIDGETS_MS)
    # The app's composer has no box for a path: a name to save under, a list to open from.
    expect(page.locator(".pgmx-save-path, .pgmx-open-path")).to_have_count(0)

    # Save under names that lead out: each refused, nothing written anywhere.
    # (Each with what its refusal names, so that each status is the answer to that very name.)
    leading_out = [
        ("../outside/evil", "'../outside/evil' is a path"),
        ("../../evil.json", "'../../evil.json' is a path"),
        (str(outside / "evil.json"), f"'{outside / 'evil.json'}' is a path"),
        ("~/evil.json", "'~/evil.json' is a path"),
        ("..\\outside\\evil.json", "\\\\outside\\\\evil.json' is a path"),
        ("linked.json", "linked.json is a link"),  # a link in the folder, leading out
        (".hidden", "'.hidden' starts with a dot"),
        ("CON", "the name of a device"),
    ]
    for name, refusal in leading_out:
        status = _save_as(composer, name)
        expect(status).to_contain_text(refusal, timeout=WIDGETS_MS)
        expect(status).to_contain_text("Not saved")
    shot("save refused names leading out")
    assert _tree(outside) == before_outside and _tree(app_work) == before_work
    assert not (app_work.parent / "evil.json").exists() and not (Path.home() / "evil.json").exists()

    # A name inside: saved there, exactly the JSON view.
    type_into(composer.input("Prompt"), "Light the blue lantern.")
    composer.input("Prompt").press("Tab")
    expect(composer.json_view).to_have_value(re.compile(r"Light the blue lantern"))
    status = _save_as(composer, "lantern prompt")
    expect(status).to_have_text("Saved lantern prompt.json in the work folder", timeout=WIDGETS_MS)
    saved = app_work / "lantern prompt.json"
    assert saved.read_text(encoding="utf-8") == composer.json_view.input_value() + "\n"  # (and the final newline)
    assert _tree(outside) == before_outside
    shot("saved inside")

    # Open: the list shows the work folder's files, not the link leading out.
    _files(composer).locator("button.pgmx-open").click()
    panel = _files(composer).locator(".pgmx-open-panel")
    expect(panel).to_be_visible(timeout=WIDGETS_MS)
    listed = panel.locator(".pgmx-open-name datalist option")
    expect(listed).to_have_count(2, timeout=WIDGETS_MS)
    assert sorted(listed.evaluate_all("options => options.map(o => o.value)")) == ["lantern prompt.json", "mine.json"]
    refused = [
        ("linked.json", "linked.json is not a file of the work folder"),
        ("../outside/secret.json", "'../outside/secret.json' is a path"),
        ("LINKED.JSON", "linked.json is not a file of the work folder"),  # the same link, named otherwise
        (str(outside / "secret.json"), f"'{outside / 'secret.json'}' is a path"),
        ("~/secret.json", "'~/secret.json' is a path"),
    ]
    for name, refusal in refused:
        status = _open(composer, name)
        expect(status).to_contain_text(refusal, timeout=WIDGETS_MS)
        expect(status).to_contain_text("Not opened")
        expect(composer.title).to_contain_text("PC Prompt")
    expect(page.locator("body")).not_to_contain_text(SECRET)
    assert SECRET not in composer.json_view.input_value()
    shot("open refused names leading out")

    status = _open(composer, "mine")
    expect(status).to_contain_text("Opened mine.json", timeout=WIDGETS_MS)
    expect(composer.title).to_contain_text("BKN-DAC")
    expect(composer.json_view).to_have_value(re.compile(r'"QueryID": "kda-'))
    shot("opened a file of the work folder")

    # From elsewhere: Upload brings a file in, Download takes the JSON out.
    elsewhere = tmp_path / "from-my-computer.json"
    shutil.copyfile(app_server.root / "data/examples/bkn-pal/valid/rq-museum-guide-stance.json", elsewhere)
    with page.expect_file_chooser() as chooser:
        panel.locator(".pgmx-open-upload").click()
    chooser.value.set_files(str(elsewhere))
    expect(panel.locator(".pgmx-open-status")).to_contain_text(
        "Opened from-my-computer.json from your computer", timeout=WIDGETS_MS
    )
    expect(composer.title).to_contain_text("BKN-PAL")
    composer.root.locator(":scope > .widget-hbox .pgmx-download-button").click()
    with page.expect_download() as downloading:
        composer.root.locator(":scope > .widget-hbox .pgmx-download a").click()
    downloaded = Path(downloading.value.path())
    assert json.loads(downloaded.read_text(encoding="utf-8")) == json.loads(elsewhere.read_text(encoding="utf-8"))
    assert _tree(outside) == before_outside
    shot("uploaded and downloaded")
