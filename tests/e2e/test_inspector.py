"""The partner inspector in Chromium, as a person tries a partner: in JupyterLab (notebook 07, whose
send cell is also run again after Run All) and in the app's Inspect tab (Voilà, ``pgm-explore app``).
The person picks a partner, clicks Connect, types a Question into the Request's composer and clicks
Send; the Response shows in a composer beside it, with the transcript rules, and the JSON-RPC log
shows the messages both ways."""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from .conftest import (
    KERNEL_MS,
    NO_PLAYWRIGHT,
    WIDGETS_MS,
    Composer,
    Notebook,
    Server,
    code_cell,
    type_into,
    wait_for_idle,
)

if TYPE_CHECKING:
    from playwright.sync_api import Locator, Page

expect = pytest.importorskip("playwright.sync_api", reason=NO_PLAYWRIGHT).expect
pytest.importorskip("mcp", reason='the inspector needs the mcp extra (pip install -e ".[mcp]")')
pytestmark = pytest.mark.e2e

QUESTION = "How should the assistant greet the User?"


def _call_personality_alignment(inspector: Locator, shot: Callable[[str], Path]) -> None:
    """Connect to the reference Personality Alignment, type a Question, Send; check what shows."""
    inspector.locator(".pgmx-inspector-partner select").select_option("Personality Alignment")
    inspector.locator("button.pgmx-inspector-connect").click()
    status = inspector.locator(".pgmx-inspector-status")
    expect(status).to_contain_text("Connected to Personality Alignment", timeout=WIDGETS_MS)
    expect(inspector.locator(".pgmx-inspector-tool select")).to_have_value("bkn_pal")
    expect(inspector.locator(".pgmx-inspector-schema")).to_contain_text("input schema")
    request = Composer(inspector.locator(".pgmx-inspector-request .pgmx-composer"))
    expect(request.title).to_contain_text("BKN-PAL", timeout=WIDGETS_MS)
    request.field("Question").locator(".pgmx-include input").check()  # an optional property: ticked first
    type_into(request.input("Question"), QUESTION)
    request.input("Question").press("Tab")
    expect(request.json_view).to_have_value(re.compile(re.escape(f'"Question": "{QUESTION}"')))
    shot("the Request composed")

    inspector.locator("button.pgmx-inspector-send").click()
    expect(status).to_contain_text("bkn_pal: answered, Outcome answered", timeout=WIDGETS_MS)
    response = Composer(inspector.locator(".pgmx-inspector-response .pgmx-composer"))
    expect(response.title).to_contain_text("Response", timeout=WIDGETS_MS)
    query = json.loads(request.json_view.input_value())["QueryID"]
    expect(response.json_view).to_have_value(re.compile(re.escape(f'"RequestID": "{query}"')))
    expect(response.tool("badge")).to_have_text("conforms")
    findings = inspector.locator(".pgmx-inspector-findings")
    expect(findings).to_contain_text("Transcript rules")
    expect(findings).to_contain_text("2 messages in 1 dialogue")
    log = inspector.locator(".pgmx-inspector-log textarea")
    expect(log).to_have_value(re.compile(r'^→ .*"method": "tools/call"', re.M))
    expect(log).to_have_value(re.compile(r"^← .*" + re.escape(f'\\"RequestID\\": \\"{query}\\"'), re.M))
    sent = [line for line in log.input_value().splitlines() if '"tools/call"' in line]
    assert json.loads(sent[0][2:])["params"]["arguments"]["message"]["Question"] == QUESTION
    inspector.locator(".pgmx-inspector-log").scroll_into_view_if_needed()
    shot("the Response and the JSON-RPC log")


def test_notebook_07_runs_again_after_run_all_and_its_inspector_calls_a_partner(
    open_in_lab: Callable[[str], Notebook], shot: Callable[[str], Path]
) -> None:
    notebook = open_in_lab("07_*.ipynb")
    page = notebook.page
    # After Run All (the client closed by section 8), change a Statement and run the send cell again.
    request = Composer(code_cell(notebook, 'draft_name="07-dac-request"').locator(".pgmx-composer"))
    expect(request.title).to_contain_text("BKN-DAC", timeout=WIDGETS_MS)
    cheaper = "Transact With Transaction=item-lantern-blue-115 With SPM=95 AGR"
    type_into(request.input("ProcessActions-1-Statement"), cheaper)
    request.input("ProcessActions-1-Statement").press("Tab")
    expect(request.json_view).to_have_value(re.compile(re.escape(cheaper)))
    wait_for_idle(page)
    sent_before = json.loads(request.json_view.input_value())
    send = code_cell(notebook, "response = await bk.send(")
    send.locator(".jp-InputArea-editor").click()
    page.keyboard.press("Shift+Enter")
    output = send.locator(".jp-OutputArea")
    expect(output).to_contain_text("Overall:", timeout=KERNEL_MS)
    expect(output).to_contain_text("BKN-DAC RS: conforms")
    expect(output).not_to_contain_text("Traceback")
    expect(output).not_to_contain_text("Error")
    # The Request sent again got a fresh QueryID and the next TurnIndex, and the composer shows them.
    expect(request.json_view).not_to_have_value(re.compile(re.escape(sent_before["QueryID"])))
    expect(request.json_view).to_have_value(re.compile(rf'"TurnIndex": {sent_before["TurnIndex"] + 1}\b'))
    shot("the send cell run again")

    inspector = code_cell(notebook, "from pgm_explore.widgets import PartnerInspector").locator(".pgmx-inspector")
    inspector.scroll_into_view_if_needed()
    expect(inspector).to_be_visible(timeout=WIDGETS_MS)
    _call_personality_alignment(inspector, shot)


def test_the_apps_inspect_tab_calls_a_partner_and_starts_no_command(
    page: Page, app_server: Server, app_work: Path, shot: Callable[[str], Path]
) -> None:
    page.goto(app_server.at(), timeout=KERNEL_MS)
    app = page.locator(".pgmx-app")
    expect(app).to_be_visible(timeout=KERNEL_MS)
    page.locator(".pgmx-app .lm-TabBar-tab", has_text="Inspect").click()
    inspector = app.locator(".pgmx-inspector")
    expect(inspector).to_be_visible(timeout=WIDGETS_MS)
    partner = inspector.locator(".pgmx-inspector-partner select")
    expect(partner.locator("option")).to_have_text(
        ["Prompt Creation", "Domain Access", "Personality Alignment", "a URL…"]
    )

    # A command typed where the URL goes is refused, not run.
    partner.select_option("a URL…")
    planted = app_work / "ran-by-the-page"
    type_into(inspector.locator(".pgmx-inspector-target input"), f"touch {planted}")
    inspector.locator("button.pgmx-inspector-connect").click()
    expect(inspector.locator(".pgmx-inspector-status")).to_contain_text("is not a URL", timeout=WIDGETS_MS)
    assert not planted.exists()
    shot("a command refused")

    _call_personality_alignment(inspector, shot)
    # The log through the browser: the download is the log shown, message for message.
    with page.expect_download() as download:
        inspector.locator(".pgmx-inspector-download a", has_text="inspector.jsonrpc.json").click()
    downloaded = json.loads(Path(download.value.path()).read_text(encoding="utf-8"))
    shown = inspector.locator(".pgmx-inspector-log textarea").input_value().splitlines()
    assert [json.loads(line[2:]) for line in shown] == [e["message"] for e in downloaded["connections"][0]]
    type_into(inspector.locator(".pgmx-inspector-save-name input"), "tried")
    inspector.locator("button.pgmx-inspector-save").click()
    expect(inspector.locator(".pgmx-inspector-status")).to_contain_text("Saved tried.json", timeout=WIDGETS_MS)
    saved = json.loads((app_work / "tried.json").read_text(encoding="utf-8"))
    assert [m["Mode"] for m in saved] == ["RQ", "RS"] and saved[0]["Question"] == QUESTION
    log = json.loads((app_work / "tried.jsonrpc.json").read_text(encoding="utf-8"))
    assert log["partner"] == "Personality Alignment"
    expect(page.locator("body")).not_to_contain_text("Traceback")
