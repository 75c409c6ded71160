"""The partner inspector's logic (pgm_explore.mcp.inspector) and the client's closed/reopened connections.

The JSON-RPC log is held to what a partner nobody here wrote (tests/raw_partner.py, ``--log``)
says it read and wrote; the reference partners are reached in this process, as the widget does.
"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

import pytest

pytest.importorskip("mcp")

from pgm_explore.dialogue import Transcript
from pgm_explore.mcp import BasicKnowledge, PartnerError
from pgm_explore.mcp.inspector import Inspector, InspectorError
from tests.probing import RAW, http_raw_partner


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.mark.anyio
async def test_a_reference_partner_is_listed_called_and_called_again_after_a_close() -> None:
    inspector = Inspector("Domain Access")
    tools = await inspector.connect()
    assert [(t.name, t.type_name, t.other_arguments) for t in tools] == [("bkn_dac", "BKN-DAC", ["action_context"])]
    assert tools[0].input_schema["properties"]["message"]["properties"]["Header"]["const"] == "PGM-KDA-V1.0"
    assert tools[0].output_schema is not None and "Outcome" in tools[0].output_schema["properties"]

    request = inspector.request_for("bkn_dac")
    assert request is not None
    assert (request["Header"], request["Mode"], request["TurnIndex"]) == ("PGM-KDA-V1.0", "RQ", 0)
    assert request["SessionID"] == inspector.session_id and request["DialogID"].endswith("-kda")
    request.update(Kind="affordances", EntityIDs=["stall-07"])
    first = await inspector.call("bkn_dac", {"message": request})
    assert first.response is not None and first.response["Outcome"] == "answered"
    assert first.response["RequestID"] == request["QueryID"]
    assert (first.request_index, first.response_index) == (0, 1) and inspector.transcript[0] == request

    # Closed (as a notebook's last cell closes it): the next call reconnects by itself.
    await inspector.close()
    assert not inspector.connected
    again = inspector.request_for("bkn_dac")
    assert again is not None and (again["DialogID"], again["TurnIndex"]) == (request["DialogID"], 1)
    again.update(Kind="affordances", EntityIDs=["stall-07"])
    second = await inspector.call("bkn_dac", {"message": again})
    assert second.response is not None and second.response["Outcome"] == "answered"
    assert len(inspector.wires) == 2 and inspector.connected
    checked = inspector.checked()
    assert len(checked.messages) == 4 and checked.errors == 0 and checked.warnings == 0

    # Both connections are in the log, each opened by the SDK's handshake and listing.
    methods = [m.get("method") for direction, m in inspector.log if direction == "sent"]
    assert methods == ["server/discover", "tools/list", "tools/call"] * 2
    assert all(line[0] in "→←" for line in inspector.log_lines())
    await inspector.close()


@pytest.mark.anyio
async def test_a_refused_request_is_a_finding_and_the_partner_keeps_answering() -> None:
    inspector = Inspector("Personality Alignment")
    await inspector.connect()
    refused = await inspector.call("bkn_pal", {"message": {"Header": "PGM-KPA-V1.0", "Mode": "RQ"}})
    assert refused.response is None and [f.rule for f in refused.findings] == ["partner-refused"]
    assert refused.request_index == 0 and refused.response_index is None  # sent, so recorded
    assert "partner-refused" in {f.rule for index, f in inspector.findings if index == 0}
    unknown = await inspector.call("no_such_tool", {})
    assert unknown.response is None and unknown.findings and unknown.request_index is None
    request = inspector.request_for("bkn_pal")
    assert request is not None
    request["Question"] = "How should the assistant greet the User?"
    answered = await inspector.call("bkn_pal", {"message": request})
    assert answered.response is not None and answered.response["Outcome"] == "answered"
    await inspector.close()


@pytest.mark.anyio
@pytest.mark.parametrize("transport", ["stdio", "http"])
async def test_the_log_is_what_a_partner_not_ours_read_and_wrote(transport: str, tmp_path: Path) -> None:
    theirs = tmp_path / "raw-partner.jsonl"

    async def conversation(target: str) -> Inspector:
        inspector = Inspector(target)
        tools = await inspector.connect()
        assert [t.type_name for t in tools] == ["BKN-PAL"]
        for question in ("How should the assistant greet the User?", "And say goodbye?"):
            request = inspector.request_for("bkn_pal")
            assert request is not None
            request["Question"] = question
            call = await inspector.call("bkn_pal", {"message": request})
            assert call.response is not None and call.response["Outcome"] == "answered"
            await inspector.close()  # the second question reconnects
        return inspector

    if transport == "stdio":
        inspector = await conversation(f"{RAW} --role pal --log {theirs}")
    else:
        with http_raw_partner("pal", (), "--log", str(theirs)) as url:
            inspector = await conversation(url)
    seen = [json.loads(line) for line in theirs.read_text(encoding="utf-8").splitlines()]
    flipped = {"sent": "received", "received": "sent"}
    assert [(flipped[e["direction"]], e["message"]) for e in seen] == inspector.log
    assert len(inspector.wires) == 2 and len(inspector.log) >= 10


@pytest.mark.anyio
async def test_a_partner_process_that_dies_is_a_finding_and_the_next_call_starts_it_again() -> None:
    # The raw partner exits with status 3 at its first tools/call, saying why on stderr.
    inspector = Inspector(f"{RAW} --role pal", env={"RAW_PARTNER_FAULTS": "exit"})
    await inspector.connect()
    for turn in (0, 1):
        request = inspector.request_for("bkn_pal")
        assert request is not None and request["TurnIndex"] == turn
        request["Question"] = "Still there?"
        call = await inspector.call("bkn_pal", {"message": request})
        assert call.response is None and {f.rule for f in call.findings} == {"partner-error"}
        assert any("exited with status 3" in f.message for f in call.findings)
        assert not inspector.connected
    assert len(inspector.wires) == 2  # the second call started the partner again
    await inspector.close()


@pytest.mark.anyio
async def test_a_partner_that_cannot_be_reached_is_named_in_plain_words(tmp_path: Path) -> None:
    with pytest.raises(InspectorError, match="no such command"):
        await Inspector("no-such-partner-command --stdio").connect()
    dying = f"{sys.executable} -c 'import sys; print(\"no profile given\", file=sys.stderr); sys.exit(3)'"
    with pytest.raises(InspectorError, match=r"exited with status 3(.|\n)*no profile given"):
        await Inspector(dying).connect()
    with pytest.raises(InspectorError, match=re.escape("could not connect to http://127.0.0.1:9/mcp")):
        await Inspector("http://127.0.0.1:9/mcp", timeout=10).connect()
    # A page served to people who run no code starts no command, whatever is typed.
    with pytest.raises(InspectorError, match="starts no command"):
        Inspector(f'{sys.executable} -c \'open("{tmp_path}/x", "w")\'', allow_commands=False)
    assert not (tmp_path / "x").exists()


@pytest.mark.anyio
async def test_the_transcript_and_its_log_are_saved_side_by_side(tmp_path: Path) -> None:
    inspector = Inspector("Personality Alignment")
    request = inspector.request_for("bkn_pal")  # before connecting: the binding's tool name suffices
    assert request is not None
    request["Question"] = "How should the assistant greet the User?"
    await inspector.call("bkn_pal", {"message": request})  # connects by itself
    await inspector.close()
    transcript, log = inspector.save(tmp_path / "tried.jsonl")
    assert log.name == "tried.jsonrpc.json"
    assert len(Transcript.load(transcript).messages) == 2
    saved = json.loads(log.read_text(encoding="utf-8"))
    assert saved["partner"] == "Personality Alignment" and saved["transport"] == "inprocess"
    assert [(e["direction"], e["message"]) for e in saved["connections"][0]] == inspector.log


@pytest.mark.anyio
async def test_a_request_is_recorded_only_once_sent_and_a_started_client_reopens() -> None:
    closed = BasicKnowledge()
    message = {"Header": "PGM-KPA-V1.0", "Mode": "RQ", "QueryID": "kpa-1"}
    with pytest.raises(PartnerError, match="the client is closed"):
        await closed.send("BKN-PAL", message)
    assert closed.transcript == [] and closed.findings == []

    bk = await BasicKnowledge().start()
    try:
        await bk.open_dialogue("dlg-reopen")
        first = await bk.ask_pal("How should the assistant greet the User?")
        server = bk.servers["BKN-PAL"]
        await bk.stop()
        assert not bk.is_open
        # Used again after stop: reopened, the same partner, which remembers the dialogue.
        again = bk.next_turn(bk.transcript[-2])
        assert again["QueryID"] != first["RequestID"] and again["TurnIndex"] == 1
        second = await bk.send("BKN-PAL", again)
        assert bk.is_open and bk.servers["BKN-PAL"] is server
        assert second["Outcome"] == "answered" and second["TurnIndex"] == 1
        # The same Request once more is refused (one Response per QueryID), and recorded: it was sent.
        with pytest.raises(PartnerError):
            await bk.send("BKN-PAL", again)
        assert len(bk.transcript) == 6 and bk.findings[-1][0] == 5
    finally:
        await bk.stop()


@pytest.mark.anyio
async def test_what_a_reference_partner_logs_goes_to_the_log_not_to_stderr(capfd: pytest.CaptureFixture[str]) -> None:
    # The SDK's handler (logging.basicConfig, set up when a server is built) writes "Tool ... failed"
    # to stderr for every refused Request: in Jupyter, a red block under the inspector.
    inspector = Inspector("Domain Access")
    await inspector.connect()
    capfd.readouterr()
    refused = await inspector.call("bkn_dac", {"message": {"Header": "PGM-KDA-V1.0", "Mode": "RQ"}})
    await inspector.close()
    assert refused.response is None and [f.rule for f in refused.findings] == ["partner-refused"]
    assert "Tool 'bkn_dac' failed" not in capfd.readouterr().err
    lines = inspector.log_lines()
    logged = [index for index, line in enumerate(lines) if line.startswith("· ") and "Tool 'bkn_dac' failed" in line]
    assert logged, lines
    # In its place: after the call that was refused.
    called = next(i for i, line in enumerate(lines) if '"method": "tools/call"' in line)
    assert logged[0] > called
    assert any("Tool 'bkn_dac' failed" in entry["line"] for entry in inspector.log_document()["logged"])


@pytest.mark.slow
def test_a_refused_request_in_a_kernel_prints_nothing_into_the_cell() -> None:
    """In a Jupyter kernel (nbclient), as notebook 07's inspector runs: no stderr in the cell."""
    nbformat = pytest.importorskip("nbformat")
    nbclient = pytest.importorskip("nbclient")
    pytest.importorskip("ipykernel")
    cells = [
        "from pgm_explore.mcp.inspector import Inspector\ninspector = Inspector('Domain Access')\n"
        "await inspector.connect()",
        "refused = await inspector.call('bkn_dac', {'message': {'Header': 'PGM-KDA-V1.0', 'Mode': 'RQ'}})\n"
        "print([f.rule for f in refused.findings])\nprint('logged:', sum(line.startswith('· ') for line in inspector.log_lines()))",
        "await inspector.close()",
    ]
    notebook = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(c) for c in cells])
    nbclient.NotebookClient(notebook, timeout=180, kernel_name="python3").execute()
    outputs = [o for cell in notebook.cells for o in cell.outputs]
    assert [o.get("text") for o in outputs if o.get("name") == "stderr"] == []
    shown = "".join(o.get("text", "") for o in outputs)
    assert "['partner-refused']" in shown and re.search(r"logged: [1-9]", shown), shown
