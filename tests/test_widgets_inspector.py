"""The partner inspector widget without a browser: its buttons start tasks on the running loop, which
the tests await (tests/e2e/test_inspector.py clicks the same in Chromium)."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

pytest.importorskip("ipywidgets")
pytest.importorskip("mcp")

from pgm_explore.dialogue import Transcript
from pgm_explore.widgets import ExplorerApp, PartnerInspector


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


async def _click(inspector: PartnerInspector, button: object) -> None:
    button.click()  # type: ignore[attr-defined]
    assert inspector.pending is not None
    await inspector.pending


@pytest.mark.anyio
async def test_connect_compose_send_and_read_both_messages_and_the_log(tmp_path: Path) -> None:
    inspector = PartnerInspector("Personality Alignment", work_folder=tmp_path)
    await _click(inspector, inspector.connect_button)
    assert "Connected to Personality Alignment (in this kernel): 1 tool" in inspector.status.value
    assert inspector.tool.options == ("bkn_pal",)
    assert "input schema" in inspector.schema.value and "output schema" in inspector.schema.value
    request = inspector.request
    assert request is not None and request.type_name == "BKN-PAL" and request.value["Mode"] == "RQ"
    request.set(("Question",), "How should the assistant greet the User?")
    await _click(inspector, inspector.send_button)
    assert "bkn_pal: answered, Outcome answered" in inspector.status.value
    response = inspector.response
    assert response is not None and response.value["RequestID"] == request.value["QueryID"] and response.conforms
    assert "No finding about the exchange" in inspector.findings.value
    assert "2 messages in 1 dialogue" in inspector.findings.value
    lines = inspector.raw_log.value.splitlines()
    assert [line[0] for line in lines] == ["→", "←"] * 3
    assert json.loads(lines[-2][2:])["params"]["arguments"]["message"] == request.value
    assert 'download="inspector.jsonrpc.json"' in inspector.downloads.value
    inspector.raw_log.value = "edited"  # the log is what happened: an edit is put back
    assert inspector.raw_log.value.splitlines() == lines

    # Closed (a kernel's connection gone): New Request gives the next turn, Send reconnects.
    assert inspector.inspector is not None
    await inspector.inspector.close()
    inspector.new_button.click()
    assert request.value["TurnIndex"] == 1
    request.set(("Question",), "And how to say goodbye?")
    await _click(inspector, inspector.send_button)
    assert response.value["TurnIndex"] == 1 and response.value["Outcome"] == "answered"
    assert "4 messages in 1 dialogue" in inspector.findings.value

    assert inspector.save("tried") is not None
    assert len(Transcript.load(tmp_path / "tried.json").messages) == 4
    log = json.loads((tmp_path / "tried.jsonrpc.json").read_text(encoding="utf-8"))
    assert len(log["connections"]) == 2
    assert inspector.save("tried") is None and "exists" in inspector.status.value
    assert inspector.save("../elsewhere") is None and "path" in inspector.status.value
    assert inspector.errors == []


@pytest.mark.anyio
async def test_what_cannot_work_is_a_sentence_never_a_traceback(tmp_path: Path) -> None:
    inspector = PartnerInspector(work_folder=tmp_path)
    assert "Pick a partner and click Connect" in inspector.status.value  # what to do first
    inspector.partner.value = "a command…"
    assert inspector.target.layout.display == ""
    inspector.target.value = f"{sys.executable} -c 'import sys; sys.exit(5)'"
    await _click(inspector, inspector.connect_button)
    assert "exited with status 5" in inspector.status.value and inspector.tool.options == ()
    inspector.partner.value = "Domain Access"
    await _click(inspector, inspector.connect_button)
    inspector.arguments.value = "{not json"
    await _click(inspector, inspector.send_button)
    assert "Other arguments are not JSON" in inspector.status.value
    inspector.arguments.value = '{"action_context": 7}'
    await _click(inspector, inspector.send_button)
    assert "no Response" in inspector.status.value and "partner-refused" in inspector.findings.value
    # A partner's long error (a tool error's JSON) is cut short in the status line: in full below.
    inspector.arguments.value = "{}"
    assert inspector.request is not None
    inspector.request.load({"Header": "PGM-KDA-V1.0", "Mode": "RQ"})
    await _click(inspector, inspector.send_button)
    status = inspector.status.value
    assert "no Response: Error executing tool bkn_dac" in status and "in full under This exchange" in status
    assert len(status) < 400 and "QueryID is missing" in inspector.findings.value
    assert inspector.errors == []


@pytest.mark.anyio
async def test_the_apps_inspect_tab_starts_no_command(tmp_path: Path) -> None:
    app = ExplorerApp(work_folder=tmp_path, draft_dir=False)
    assert app.inspect.children == ()  # built when the tab is opened
    app.tabs.selected_index = app.tabs.titles.index("Inspect")
    (inspector,) = app.inspect.children
    assert isinstance(inspector, PartnerInspector)
    assert "a command…" not in inspector.partner.options
    inspector.partner.value = "a URL…"
    inspector.target.value = f'{sys.executable} -c \'open("{tmp_path}/ran", "w")\''
    await _click(inspector, inspector.connect_button)
    assert "is not a URL" in inspector.status.value
    assert not (tmp_path / "ran").exists() and app.errors == []
