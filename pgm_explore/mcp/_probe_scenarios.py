"""The probe's scenarios: what is sent to a partner, and the results each scenario gives itself."""

from __future__ import annotations

import json
import uuid
from collections.abc import Mapping
from contextlib import AsyncExitStack
from typing import Any

import anyio
from mcp import types

from pgm_explore.mcp._probe_base import TOOLS, ProbeRun, evidence_of, open_client, status_map
from pgm_explore.validation import validate

# -- the scenarios ---------------------------------------------------------------------------------


async def tool_listed(run: ProbeRun) -> None:
    assert run.client is not None
    name = TOOLS[run.type_name]
    try:
        tools = (await run.client.list_tools()).tools
    except Exception as exc:
        run.record("tool-listed", "fail", f"tools/list failed: {run.why(exc)}")
        return
    run.tool = next((t for t in tools if t.name == name), None)
    if run.tool is None:
        run.record("tool-listed", "fail", f"no tool {name}; tools: {', '.join(t.name for t in tools) or 'none'}")
        return
    properties = (run.tool.input_schema or {}).get("properties", {})
    wanted = ["message", "action_context"] if run.type_name == "BKN-DAC" else ["message"]
    missing = [a for a in wanted if a not in properties]
    # A server that lists tools declares the capability (MCP server/tools: Capabilities), in every
    # handshake it answered.
    undeclared = [
        handshake
        for handshake, result in (
            ("initialize", run.facts.get("initialize")),
            ("server/discover", run.facts.get("discover")),
        )
        if result is not None and result.capabilities.tools is None
    ]
    if missing:
        run.record("tool-listed", "fail", f"{name} takes no argument {', '.join(missing)}")
    elif undeclared:
        run.record(
            "tool-listed", "fail", f"{name} is listed, but {' and '.join(undeclared)} declare no tools capability"
        )
    else:
        run.record("tool-listed", "pass", f"{name}({', '.join(wanted)})")


async def _pc_prompt(run: ProbeRun, dialog: str) -> dict[str, Any] | None:
    """Open ``dialog`` by reading its PC Prompt (Prompt Creation); None when that fails."""
    assert run.client is not None
    try:
        first = await run.client.read_resource(f"pc-prompt://{dialog}")
        text = getattr(first.contents[0], "text", None)
        prompt = json.loads(text) if text else None
    except Exception:
        return None
    return prompt if isinstance(prompt, dict) else None


async def check_pc_prompt(run: ProbeRun, dialog: str) -> dict[str, Any] | None:
    assert run.client is not None
    try:
        templates = (await run.client.list_resource_templates()).resource_templates
    except Exception as exc:
        run.record("pc-prompt", "fail", f"resources/templates/list failed: {run.why(exc)}")
        return None
    if not any(t.uri_template == "pc-prompt://{dialog_id}" for t in templates):
        run.record("pc-prompt", "fail", "no resource template pc-prompt://{dialog_id}")
        return None
    prompt = await _pc_prompt(run, dialog)
    again = await _pc_prompt(run, dialog)
    if prompt is None:
        run.record("pc-prompt", "fail", f"reading pc-prompt://{dialog} gave no JSON object")
        return None
    report = validate(prompt)
    if report.type != "PC Prompt" or not report.conforms:
        problems = "; ".join(f"{f.json_path}: {f.message}" for f in report.findings if f.conformance)
        run.record("pc-prompt", "fail", f"the PC Prompt does not conform: {problems}", [prompt])
    elif prompt.get("DialogID") != dialog:
        run.record("pc-prompt", "fail", f"the PC Prompt of {dialog} has DialogID {prompt.get('DialogID')!r}", [prompt])
    elif again != prompt:
        run.record("pc-prompt", "fail", "a second read gave another document (one PC Prompt per DialogID)", [prompt])
    else:
        run.record("pc-prompt", "pass", f"pc-prompt://{dialog}: a conforming PC Prompt, the same on every read")
    return prompt


def _fields(run: ProbeRun, step: int) -> dict[str, Any]:
    """The payload of a plain, conforming Request of the partner's type."""
    if run.type_name == "BKN-PRC":
        return {"Kind": ("intent", "goal_constraints", "referents")[step % 3], "Question": "What does the User want?"}
    if run.type_name == "BKN-DAC":
        return {"Kind": "affordances", "Question": "What can be done here?"}
    return {"Question": "How should the assistant answer the User?"}


async def _open(run: ProbeRun, dialog: str) -> Mapping[str, str] | None:
    """The identity of a new dialogue: from its PC Prompt for Prompt Creation, else the probe's own."""
    if run.type_name != "BKN-PRC":
        return None
    prompt = await _pc_prompt(run, dialog)
    if prompt is None:
        return None
    return {k: prompt[k] for k in ("MInstance", "UEnvironment", "SessionID") if isinstance(prompt.get(k), str)}


async def commitments_scenario(run: ProbeRun) -> None:
    dialog = f"probe-cm-{uuid.uuid4().hex[:6]}"
    sent = []
    first = run.request(
        dialog,
        0,
        Kind="commitment",
        Commitments=[
            {"CommitmentID": "cm-probe-a", "Statement": "The probe keeps this."},
            {"CommitmentID": "cm-probe-b", "Statement": "The probe releases this."},
        ],
    )
    r0 = await run.send("commitments", first)
    second = run.request(dialog, 1, Kind="commitment", ReleasedCommitmentIDs=["cm-probe-b"])
    r1 = await run.send("commitments", second)
    third = run.request(dialog, 2, Kind="commitment", ReleasedCommitmentIDs=["cm-probe-a"])
    r2 = await run.send("commitments", third)
    sent = [*evidence_of(run.exchanges[-3]), *evidence_of(run.exchanges[-2]), *evidence_of(run.exchanges[-1])]
    s0, s1, s2 = status_map(r0.document), status_map(r1.document), status_map(r2.document)
    problems = []
    if s0.get("cm-probe-a") != "retained" or s0.get("cm-probe-b") != "retained":
        problems.append(f"turn 0 submitted cm-probe-a and cm-probe-b; CommitmentStatus says {s0 or 'nothing'}")
    if s1.get("cm-probe-b") != "released":
        problems.append(f"turn 1 released cm-probe-b; CommitmentStatus says {s1 or 'nothing'}")
    if s1.get("cm-probe-a") not in (None, "retained"):
        problems.append(f"turn 1: cm-probe-a, retained at turn 0, is reported {s1['cm-probe-a']}")
    if s2.get("cm-probe-a") != "released":
        problems.append(
            f"turn 2 released cm-probe-a, retained at turn 0; CommitmentStatus says {s2 or 'nothing'} "
            "(Domain Access retains the commitments for the duration of the dialogue)"
        )
    if problems:
        run.record("commitments", "fail", "; ".join(problems), sent)
    else:
        run.record("commitments", "pass", "retained, released, and kept across three turns", sent)


async def feasibility_scenario(run: ProbeRun) -> None:
    dialog = f"probe-fs-{uuid.uuid4().hex[:6]}"
    statements = [
        "MM-Move Nil probe-avatar From ML-probe-a To ML-probe-b",
        "MM-Add Nil probe-item At ML-probe-b With PerceptibilityState=1",
    ]
    actions = [{"Step": i, "Statement": s} for i, s in enumerate(statements)]
    message = run.request(dialog, 0, Kind="feasibility", Question="Can the A-User do this?", ProcessActions=actions)
    reply = await run.send("feasibility", message, action_context=None)
    evidence = evidence_of(run.exchanges[-1])
    response = reply.document
    if response is None:
        run.record("feasibility", "fail", f"no Response: {reply.error}", evidence)
        return
    if response.get("Outcome") == "not_answered":
        run.record("feasibility", "skip", "the partner did not answer the feasibility Request (not_answered)", evidence)
        return
    feasibility = response.get("Feasibility")
    if not isinstance(feasibility, dict):
        run.record("feasibility", "fail", f"Outcome {response.get('Outcome')!r} without Feasibility", evidence)
        return
    findings = [f for f in validate(response).findings if f.rule in ("overall-mismatch", "reason-missing", "enum")]
    listed = feasibility.get("Steps")
    steps: list[Any] = listed if isinstance(listed, list) else []
    numbers = sorted(s["Step"] for s in steps if isinstance(s, dict) and isinstance(s.get("Step"), int))
    problems = [f"{f.json_path}: {f.message}" for f in findings]
    if numbers != list(range(len(statements))):
        problems.append(f"the Request had steps 0-{len(statements) - 1}; the Response has {numbers}")
    if problems:
        run.record("feasibility", "fail", "; ".join(problems), evidence)
    else:
        run.record("feasibility", "pass", f"Overall {feasibility.get('Overall')!r} agrees with its steps", evidence)


async def bad_request_scenario(run: ProbeRun) -> None:
    dialog = f"probe-bad-{uuid.uuid4().hex[:6]}"
    identity = await _open(run, dialog)
    named = run.request(dialog, 0, identity, **_fields(run, 0))
    # Named but not conforming: a property the type does not have.
    named["NotAProperty"] = "the probe sends what the schema forbids"
    r_named = await run.send("bad-request", named)
    unnamed = {"hello": 1}
    r_unnamed = await run.send("bad-request", unnamed)
    after = run.request(dialog, 1, identity, **_fields(run, 1))
    r_after = await run.send("bad-request", after)
    evidence = [*evidence_of(run.exchanges[-3]), *evidence_of(run.exchanges[-2]), *evidence_of(run.exchanges[-1])]
    problems = []
    doc = r_named.document
    if doc is None:
        problems.append(
            "a Request with a QueryID but an unknown property got no Response "
            f"({r_named.error}); binding v1 answers it with Outcome not_answered"
        )
    elif doc.get("Outcome") != "not_answered" or doc.get("RequestID") != named["QueryID"]:
        problems.append(
            f"a non-conforming Request was answered with Outcome {doc.get('Outcome')!r} and RequestID "
            f"{doc.get('RequestID')!r}; expected not_answered naming {named['QueryID']}"
        )
    elif not validate(doc).conforms:
        problems.append("the not_answered Response does not conform")
    if not r_unnamed.is_error:
        if r_unnamed.document is not None:
            problems.append("a document without QueryID got a Response (nothing it could name)")
        else:
            problems.append(f"a document without QueryID got a JSON-RPC error, not a tool error: {r_unnamed.error}")
    if r_after.document is None:
        problems.append(f"the next good Request was not answered: {r_after.error}")
    if problems:
        run.record("bad-request", "fail", "; ".join(problems), evidence)
    else:
        run.record(
            "bad-request",
            "pass",
            "not_answered for a named bad Request, a tool error for a nameless one, then served",
            evidence,
        )


async def interleaved_scenario(run: ProbeRun) -> None:
    dialogs = [f"probe-i1-{uuid.uuid4().hex[:6]}", f"probe-i2-{uuid.uuid4().hex[:6]}"]
    identities = [await _open(run, d) for d in dialogs]
    problems: list[str] = []
    start = len(run.exchanges)
    for turn in (0, 1):
        for which, dialog in enumerate(dialogs):
            fields = _fields(run, turn)
            if run.type_name == "BKN-DAC" and turn == 0:
                # The same CommitmentID in both dialogues, with another Statement: per dialogue, both retained.
                fields = {
                    "Kind": "commitment",
                    "Commitments": [{"CommitmentID": "cm-probe-shared", "Statement": f"Kept by dialogue {which + 1}."}],
                }
            message = run.request(dialog, turn, identities[which], **fields)
            reply = await run.send("interleaved", message)
            doc = reply.document
            if doc is None:
                problems.append(f"{dialog} turn {turn}: no Response ({reply.error})")
                continue
            if (doc.get("DialogID"), doc.get("TurnIndex"), doc.get("RequestID")) != (dialog, turn, message["QueryID"]):
                problems.append(
                    f"{dialog} turn {turn} was answered as DialogID {doc.get('DialogID')!r} "
                    f"turn {doc.get('TurnIndex')!r} RequestID {doc.get('RequestID')!r}"
                )
            if run.type_name == "BKN-DAC" and turn == 0:
                status = status_map(doc).get("cm-probe-shared")
                if status != "retained":
                    problems.append(
                        f"{dialog}: a commitment new to this dialogue is reported {status!r}; "
                        "commitments are kept per dialogue"
                    )
    evidence = [item for exchange in run.exchanges[start:] for item in evidence_of(exchange)]
    if problems:
        run.record("interleaved", "fail", "; ".join(problems), evidence)
    else:
        run.record("interleaved", "pass", "two dialogues, turns alternated: each answered in its own", evidence)


async def cancellation_scenario(run: ProbeRun) -> None:
    """A Request cancelled right after it is sent; then a liveness request, and the same Request again.

    Only evidence passes: the Request sent again is served (a Response naming it), or refused as
    ``query-reused`` because the first was answered before the cancellation arrived (MCP lets a
    cancellation come too late). Any other tool error says nothing about the cancellation.
    """
    dialog = f"probe-cx-{uuid.uuid4().hex[:6]}"
    # ping and notifications/cancelled are the initialize era's: on the initialize connection the
    # handshakes kept open. 2026-07-28 cancels on stdio by the same notification, and tools/list
    # stands in for the ping it removed.
    kept = run.facts.get("legacy")
    previous, previous_wire = run.client, run.wire
    try:
        async with AsyncExitStack() as stack:
            if kept is not None:
                client, run.wire = kept
            else:
                client = await open_client(run, stack, "auto", "cancellation connection")
            run.client = client
            try:
                identity = await _open(run, dialog)
                message = run.request(dialog, 0, identity, **_fields(run, 0))
                request = types.CallToolRequest(
                    params=types.CallToolRequestParams(name=TOOLS[run.type_name], arguments={"message": message})
                )
                with anyio.move_on_after(0.01):
                    await client.session.send_request(request, types.CallToolResult)
                with anyio.fail_after(run.timeout):
                    if kept is not None:
                        await client.session.send_ping()
                    else:
                        await client.list_tools()
                again = await run.send("cancellation", message)
            finally:
                run.client = previous
    except Exception as exc:
        run.record("cancellation", "fail", f"after a cancelled Request the server failed: {run.why(exc)}")
        return
    finally:
        run.wire = previous_wire
    evidence = evidence_of(run.exchanges[-1])
    rules = [f.get("rule") for f in again.partner_findings]
    if again.document is not None and again.document.get("RequestID") == message["QueryID"]:
        run.record(
            "cancellation",
            "pass",
            "answered after the cancellation, and the cancelled Request was served when sent again",
            evidence,
        )
    elif again.is_error and "query-reused" in rules:
        run.record(
            "cancellation",
            "pass",
            "answered after the cancellation; the Request had been answered before the cancellation arrived, so "
            "sending it again was refused as query-reused (MCP: cancellation may come too late)",
            evidence,
        )
    elif again.is_error:
        shown = f"rules {', '.join(map(str, rules))}" if rules else f"text {(again.text or '')[:200]!r}"
        run.record(
            "cancellation",
            "fail",
            "the Request sent again after its cancellation was refused, but not as query-reused "
            f"({shown}): nothing shows the cancellation was handled",
            evidence,
        )
    elif again.document is not None:
        run.record(
            "cancellation",
            "fail",
            f"the Request sent again was answered with RequestID {again.document.get('RequestID')!r}, "
            f"not {message['QueryID']}",
            evidence,
        )
    else:
        run.record("cancellation", "fail", f"the Request sent again after a cancellation: {again.error}", evidence)
