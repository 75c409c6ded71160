"""``pgm-explore app`` in Chromium: a person composes, uploads files to validate and reads a transcript,
on a page that shows widgets and no code."""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from .conftest import NO_PLAYWRIGHT, WIDGETS_MS, Composer, Server, open_app, type_into

if TYPE_CHECKING:
    from playwright.sync_api import Locator, Page

expect = pytest.importorskip("playwright.sync_api", reason=NO_PLAYWRIGHT).expect
pytestmark = pytest.mark.e2e


def _upload(page: Page, button: Locator, files: list[Path]) -> None:
    """Click an upload button and pick files in the browser's file chooser, as a person does."""
    with page.expect_file_chooser() as chooser:
        button.click()
    chooser.value.set_files([str(f) for f in files])


def _tab(page: Page, title: str) -> None:
    page.locator(".pgmx-app .lm-TabBar-tab", has_text=title).click()


def test_app_composes_validates_and_reads_a_transcript(
    page: Page, app_server: Server, tmp_path: Path, shot: Callable[[str], Path]
) -> None:
    app = open_app(page, app_server)
    # An app: the widgets, and no code at all.
    expect(page.locator("body")).not_to_contain_text("from pgm_explore")
    expect(page.locator("body")).not_to_contain_text("ExplorerApp")
    expect(page.locator("body")).not_to_contain_text("Traceback")
    composer = Composer(app.locator(".pgmx-composer").first)
    expect(composer.title).to_contain_text("PC Prompt", timeout=WIDGETS_MS)
    shot("app opened")

    # Compose: pick a type, then the mode with the composer's own switch (the page's only one), type
    # into a field; the JSON view follows.
    app.locator(".pgmx-app-type select").select_option("BKN-DAC")
    expect(composer.title).to_contain_text("BKN-DAC", timeout=WIDGETS_MS)
    expect(app.locator(".pgmx-app-mode")).to_have_count(0)
    expect(app.locator(".pgmx-mode")).to_have_count(1)
    composer.field("Mode").locator(".pgmx-mode button", has_text="RS").click()
    expect(composer.title).to_contain_text("Response", timeout=WIDGETS_MS)
    expect(composer.json_view).to_have_value(re.compile(r'"Mode": "RS"'))
    type_into(composer.input("DialogID"), "dlg-app-1")
    composer.input("DialogID").press("Tab")
    expect(composer.json_view).to_have_value(re.compile(r'"DialogID": "dlg-app-1"'))
    shot("composed a BKN-DAC Response")

    # Validate files: upload two, one broken; the table and the finding show.
    broken = tmp_path / "response-with-kind.json"
    message = json.loads((app_server.root / "data/examples/bkn-dac/invalid/response-with-kind.json").read_text())
    broken.write_text(json.dumps(message), encoding="utf-8")
    good = app_server.root / "data/examples/bkn-pal/valid/rq-museum-guide-stance.json"
    _tab(page, "Validate files")
    _upload(page, app.locator(".pgmx-app-upload"), [broken, good])
    reports = app.locator(".pgmx-app-reports")
    expect(reports).to_contain_text("2 messages", timeout=WIDGETS_MS)
    expect(reports).to_contain_text("1 does not conform")
    expect(reports.locator("table").first).to_contain_text("response-with-kind.json")
    expect(reports).to_contain_text("mode-forbidden")
    expect(reports).to_contain_text("Kind is a Request property")
    shot("uploaded files validated")

    # Transcript: upload one, then pick an example; the summary, tables and plots show.
    _tab(page, "Transcript")
    defective = app_server.root / "data/transcripts/defective/turn-gap.jsonl"
    _upload(page, app.locator(".pgmx-app-transcript-upload"), [defective])
    summary = app.locator(".pgmx-app-summary")
    expect(summary).to_contain_text("turn-gap.jsonl: 5 messages, 0 errors, 1 warning", timeout=WIDGETS_MS)
    expect(app.locator(".pgmx-app-tables")).to_contain_text("turn-gap")
    app.locator(".pgmx-app-transcripts select").select_option(label="transcripts/market-wallet-limit.jsonl")
    expect(summary).to_contain_text("market-wallet-limit.jsonl: 13 messages, 0 errors, 0 warnings")
    tables = app.locator(".pgmx-app-tables")
    expect(tables).to_contain_text("InsValue")
    expect(tables.locator("table")).to_have_count(3)  # messages, exchanges, feasibility; no finding
    expect(tables).to_contain_text("No finding.")
    expect(tables).not_to_contain_text("<NA>")
    expect(tables).not_to_contain_text("NaN")
    # Numbers a person reads: the time in UTC beside the seconds, the latency in ms, no float noise.
    expect(tables).to_contain_text("2026-11-16T10:50:00.420Z")
    # ... on one line: the browser would break an ISO time at its hyphens ("2026-11-" / "16T...").
    # One rectangle per line the text takes (a Range over the cell's text); an identifier, too.
    lines = "td => { const r = document.createRange(); r.selectNodeContents(td); return r.getClientRects().length; }"
    for text in ("2026-11-16T10:50:00.420Z", "dlg-4c21-01", "BKN-DAC"):
        taken = tables.locator("td", has_text=text).first.evaluate(lines)
        assert taken == 1, f"{text} is on {taken} lines"
    # A table wider than the page scrolls sideways: its last column is not cut off for good.
    wide = tables.locator(".pgmx-app-table").first
    assert wide.evaluate("div => getComputedStyle(div).overflowX") == "auto"
    expect(tables.locator("th", has_text="latency_ms")).to_have_count(1)
    expect(tables).to_contain_text("700.0")
    expect(tables).not_to_contain_text("0.7000000")
    expect(app.locator(".pgmx-app-plots img")).to_have_count(3)
    shot("transcript read")


def test_an_uploaded_message_opens_in_the_composer_and_is_fixed_there(
    page: Page, app_server: Server, tmp_path: Path, shot: Callable[[str], Path]
) -> None:
    app = open_app(page, app_server)
    composer = Composer(app.locator(".pgmx-app-compose .pgmx-composer").first)
    expect(composer.title).to_be_visible(timeout=WIDGETS_MS)
    broken = tmp_path / "a-response-that-asks.json"
    message = json.loads((app_server.root / "data/examples/bkn-dac/invalid/response-with-kind.json").read_text())
    message["DialogID"] = "dlg-from-the-upload"
    broken.write_text(json.dumps(message), encoding="utf-8")
    _tab(page, "Validate files")
    expect(app.locator("button.pgmx-app-open")).to_be_hidden()  # nothing uploaded: nothing to open
    _upload(page, app.locator(".pgmx-app-upload"), [broken])
    expect(app.locator(".pgmx-app-reports")).to_contain_text("mode-forbidden", timeout=WIDGETS_MS)
    expect(app.locator(".pgmx-app-open-picker select")).to_have_value("a-response-that-asks.json")
    expect(app.locator(".pgmx-app-open-picker select option")).to_have_text(["a-response-that-asks.json"])
    shot("uploaded, to open")

    app.locator("button.pgmx-app-open", has_text="Open in composer").click()
    expect(composer.title).to_be_visible(timeout=WIDGETS_MS)  # the Compose tab is shown
    expect(composer.title).to_contain_text("BKN-DAC", timeout=WIDGETS_MS)
    expect(composer.mode).to_have_text("RS")
    expect(composer.input("DialogID")).to_have_value("dlg-from-the-upload")
    expect(composer.tool("badge")).to_have_text("does not conform")
    expect(app.locator(".pgmx-app-type select")).to_have_value("BKN-DAC")
    shot("opened in the composer")

    # Fixed there, as a person does: Kind switched off (a Response does not carry it); then typed into.
    composer.field("Kind").locator(".pgmx-include input").first.click()
    expect(composer.tool("badge")).to_have_text("conforms", timeout=WIDGETS_MS)
    expect(composer.json_view).not_to_have_value(re.compile(r'"Kind"'))
    type_into(composer.input("DialogID"), "dlg-fixed-in-the-app")
    composer.input("DialogID").press("Tab")
    expect(composer.json_view).to_have_value(re.compile(r'"DialogID": "dlg-fixed-in-the-app"'))
    expect(composer.tool("badge")).to_have_text("conforms")
    shot("fixed in the composer")


def test_a_reply_in_the_app_is_undone_and_redone_with_what_was_typed_in_it(
    page: Page, app_server: Server, shot: Callable[[str], Path]
) -> None:
    app = open_app(page, app_server)
    composer = Composer(app.locator(".pgmx-app-compose > .pgmx-composer"))
    expect(composer.title).to_be_visible(timeout=WIDGETS_MS)
    app.locator(".pgmx-app-type select").select_option("BKN-PAL")
    expect(composer.title).to_contain_text("BKN-PAL", timeout=WIDGETS_MS)
    composer.field("Mode").locator(".pgmx-mode button", has_text="RQ").click()
    expect(composer.title).to_contain_text("Request", timeout=WIDGETS_MS)
    composer.type_and_see("DialogID", "dlg-app-reply")
    composer.reply().type_and_see("MInstance", "mi-typed-in-the-app")
    shot("replied in the app")

    composer.tool("undo").click()
    expect(composer.replies).to_have_count(0, timeout=WIDGETS_MS)
    expect(composer.input("DialogID")).to_have_value("dlg-app-reply")
    composer.tool("redo").click()
    expect(composer.replies).to_have_count(1, timeout=WIDGETS_MS)
    expect(Composer(composer.replies.first).input("MInstance")).to_have_value("mi-typed-in-the-app")
    shot("reply undone and redone")
