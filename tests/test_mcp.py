"""The MCP reference partners and the Basic Knowledge client (docs/mcp.md)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

pytest.importorskip("mcp")

from pgm_explore.dialogue import check_paths
from pgm_explore.mcp import BasicKnowledge, PartnerError, run_demo
from pgm_explore.validation import validate


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


def _findings(path: Path) -> list[tuple[str, str, str]]:
    return [(f.severity, f.rule, f.message) for f in check_paths([path])]


@pytest.mark.anyio
# Over stdio and HTTP the partners are processes of their own, started for real: seconds each.
@pytest.mark.parametrize(
    "transport",
    ["inprocess", pytest.param("stdio", marks=pytest.mark.slow), pytest.param("http", marks=pytest.mark.slow)],
)
async def test_demo_transcript_passes_check(transport: str, tmp_path: Path) -> None:
    async with BasicKnowledge(transport=transport) as bk:  # type: ignore[arg-type]
        await run_demo(bk)
        path = bk.save(tmp_path / "demo.jsonl")
    assert bk._processes == []  # subprocesses stopped at exit
    assert _findings(path) == []
    assert bk.transcript[0]["Header"] == "PGM-PCP-V1.0"
    for message in bk.transcript:
        assert validate(message).findings == ()
    feasibility = [m["Feasibility"]["Overall"] for m in bk.transcript if "Feasibility" in m]
    assert feasibility == ["partially_feasible", "feasible"]


@pytest.mark.anyio
async def test_commitments_across_turns(tmp_path: Path) -> None:
    async with BasicKnowledge() as bk:
        await bk.open_dialogue("dlg-cm")
        first = await bk.retain({"cm-a": "Budget 150 AGR.", "cm-b": "Place on the balcony."})
        conflict = await bk.retain({"cm-a": "Budget 200 AGR."})
        released = await bk.release(["cm-b"])
        unknown = await bk.release(["cm-zzz"])
        partner = bk.servers["BKN-DAC"].partner
    status = lambda r: {s["CommitmentID"]: s["Status"] for s in r["CommitmentStatus"]}  # noqa: E731
    assert status(first) == {"cm-a": "retained", "cm-b": "retained"}
    assert status(conflict) == {"cm-a": "conflicting", "cm-b": "retained"}
    assert status(released) == {"cm-a": "retained", "cm-b": "released"}
    assert unknown["Outcome"] == "partially_answered" and "cm-zzz" in unknown["DescrMetadata"]
    assert partner.retained("dlg-cm-dac") == {"cm-a": "Budget 150 AGR."}  # the original is kept
    assert [r["TurnIndex"] for r in bk.transcript[2::2]] == [0, 1, 2, 3]
    rules = {rule for severity, rule, _ in _findings(bk.save(tmp_path / "t.jsonl")) if severity == "error"}
    assert rules == set()


@pytest.mark.anyio
async def test_bad_requests_are_answered_and_the_server_keeps_serving() -> None:
    async with BasicKnowledge() as bk:
        await bk.open_dialogue("dlg-bad")
        good = bk._envelope("BKN-DAC", "dlg-bad-dac")
        # Non-conforming (a Request carrying RequestID, no Kind): a not_answered Response with findings.
        bad = {**good, "RequestID": "kda-nowhere", "DataXMData": {"Header": "PTF-DEM-V1.0"}}
        response = await bk.send("BKN-DAC", bad)
        assert response["Outcome"] == "not_answered" and response["RequestID"] == good["QueryID"]
        assert "RequestID" in response["DescrMetadata"] and len(response["DescrMetadata"]) <= 2048
        assert validate(response).findings == ()
        # No QueryID: nothing a Response could name, so an MCP tool error carrying the findings.
        nameless = {k: v for k, v in bk._envelope("BKN-DAC", "dlg-bad-dac").items() if k != "QueryID"}
        with pytest.raises(PartnerError) as raised:
            await bk.send("BKN-DAC", nameless)
        assert raised.value.findings[0]["rule"] == "unusable-request"
        # The same QueryID again: one Response per Request (D8).
        with pytest.raises(PartnerError):
            await bk.send("BKN-DAC", bad)
        # A Response sent as a Request, and a PRC Request in a dialogue no PC Prompt opened.
        with pytest.raises(PartnerError):
            await bk.send("BKN-PAL", response)
        orphan = {**bk._envelope("BKN-PRC", "dlg-unopened"), "Kind": "intent"}
        orphan["DataXMData"] = {"Header": "PTF-DEM-V1.0", "DataID": orphan["QueryID"], "DataType": "PGM-KPR-V1.0"}
        assert (await bk.send("BKN-PRC", orphan))["Outcome"] == "not_answered"
        # ... and the next good Request is answered.
        answer = await bk.ask_dac("affordances", EntityIDs=["stall-07"])
        assert answer["Outcome"] == "answered" and answer["Answer"]["Affordances"]
        for server in bk.servers.values():
            assert all(validate(r).findings == () for r in server.partner.responses)


@pytest.mark.anyio
async def test_prompt_creation_and_personality() -> None:
    async with BasicKnowledge() as bk:
        prompt = await bk.open_dialogue("dlg-x")
        again = json.loads(
            (await bk._clients["BKN-PRC"].read_resource("pc-prompt://dlg-x")).contents[0].text  # type: ignore[union-attr]
        )
        assert again == prompt and validate(prompt).findings == ()
        intent = await bk.ask_prc("intent")
        stance = await bk.ask_pal("The User sounds upset.", {"Role": "guide", "ExpressiveConstraints": ["sarcasm"]})
    assert intent["Representation"]["Intent"]["Action"] == "purchase_and_place"
    assert stance["Stance"]["Label"] == "calm-reassuring" and stance["Stance"]["Role"] == "guide"
    assert stance["Outcome"] == "partially_answered"


def test_import_pgm_explore_does_not_import_mcp() -> None:
    import subprocess
    import sys

    code = "import sys, pgm_explore; print('mcp' in sys.modules)"
    assert (
        subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.strip()
        == "False"
    )


@pytest.mark.anyio
async def test_responses_are_validated_on_arrival_and_findings_kept_beside_them() -> None:
    from pgm_explore.mcp.connect import Endpoint
    from pgm_explore.mcp.servers import _server
    from tests.faulty_partners import MissingOutcome

    someone_elses = _server(MissingOutcome(), "pal-without-outcome", "PAL without Outcome")
    async with BasicKnowledge(partners={"pal": Endpoint("theirs", server=someone_elses)}) as bk:
        await bk.open_dialogue("dlg-arrival")
        response = await bk.ask_pal("How should the assistant greet the User?")
        await bk.ask_dac("affordances", EntityIDs=["stall-07"])  # the reference Domain Access: no finding
    index = next(i for i, m in enumerate(bk.transcript) if m is response)
    assert [(i, f.rule, f.json_path) for i, f in bk.findings] == [(index, "mode-required", "$.Outcome")]
