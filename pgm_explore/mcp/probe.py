"""``pgm-explore probe``: PGM-AUA conformance checks of someone else's partner server (docs/probe.md).

:func:`probe` connects to each partner (a URL or a command, :mod:`pgm_explore.mcp.connect`), plays a
few short scenarios with it as Basic Knowledge would, and judges what came back: one :class:`Check`
per check id, ``pass``, ``fail`` or ``skip``, with a message, the spec clause and the evidence (the
messages exchanged). Nothing here knows the partner's domain: the Requests are built from the spec
alone, so a check judges what every partner must do, never what it should know.
"""

from __future__ import annotations

import json
import tempfile
import uuid
from collections.abc import Callable, Iterable, Mapping
from contextlib import AsyncExitStack
from dataclasses import dataclass, field
from typing import IO, Any, Literal

import anyio
from mcp import Client, types
from mcp_types.version import MODERN_PROTOCOL_VERSIONS

from pgm_explore.mcp.connect import ROLES, Endpoint, ToolReply, call_tool
from pgm_explore.models import data_exchange_metadata, simple_time_now
from pgm_explore.spec import data_type
from pgm_explore.validation import validate

__all__ = ["CHECKS", "Check", "CheckSpec", "Unreachable", "probe", "probe_sync"]

Status = Literal["pass", "fail", "skip"]
TOOLS = {"BKN-PRC": "bkn_prc", "BKN-DAC": "bkn_dac", "BKN-PAL": "bkn_pal"}
_TIMEOUT = 30.0


@dataclass(frozen=True)
class CheckSpec:
    """One check of the battery, as docs/probe.md describes it."""

    id: str
    roles: tuple[str, ...]
    spec: str
    summary: str


_ALL = ("prc", "dac", "pal")
CHECKS: tuple[CheckSpec, ...] = (
    CheckSpec("handshake-legacy", _ALL, "MCP 2025-11-25 lifecycle; binding v1", "initialize handshake"),
    CheckSpec("handshake-current", _ALL, "MCP 2026-07-28 server/discover", "current protocol"),
    CheckSpec("tool-listed", _ALL, "binding v1: tool names and arguments", "the tool is listed"),
    CheckSpec("tool-schemas", _ALL, "binding v1: inputSchema and outputSchema", "typed tool schemas"),
    CheckSpec("pc-prompt", ("prc",), "PC Prompt; binding v1: resource pc-prompt://{dialog_id}", "PC Prompt resource"),
    CheckSpec("structured-result", _ALL, "binding v1: structuredContent and the same JSON as text", "result shape"),
    CheckSpec("response-conforms", _ALL, "FR Header; Section 3 (conformance), DECISIONS D13", "conforming Responses"),
    CheckSpec("echo", _ALL, 'FR "Correlation" and "Dialogue"; Table 1', "identities echoed"),
    CheckSpec("outcome", _ALL, "Table 3 Outcome; NOTES 6.3 O1-O2", "Outcome present and consistent"),
    CheckSpec("commitments", ("dac",), 'BKN-DAC FR "Commitments"; Table 3 CommitmentStatus', "commitments kept"),
    CheckSpec("feasibility", ("dac",), "BKN-DAC Table 3 Feasibility; NOTES 6.3 F8", "feasibility answered"),
    CheckSpec("bad-request", _ALL, "DECISIONS D16; binding v1: bad Requests", "bad Requests answered gracefully"),
    CheckSpec("interleaved", _ALL, "Table 1 DialogID, TurnIndex; DECISIONS D15", "two dialogues kept apart"),
    CheckSpec("cancellation", _ALL, "MCP notifications/cancelled; binding v1", "cancellation"),
)
_BY_ID = {c.id: c for c in CHECKS}


@dataclass(frozen=True)
class Check:
    """The verdict of one check on one partner."""

    partner: str
    check: str
    status: Status
    message: str
    spec: str
    evidence: tuple[Any, ...] = ()
    """The messages exchanged (Requests, Responses, tool errors) that the verdict rests on."""

    def to_dict(self) -> dict[str, str]:
        """The ``--format json`` line: exactly partner, check, status, message, spec."""
        return {
            "partner": self.partner,
            "check": self.check,
            "status": self.status,
            "message": self.message,
            "spec": self.spec,
        }


class Unreachable(Exception):
    """A partner that could not be reached with either handshake; the message says why."""


@dataclass
class _Exchange:
    request: Any
    reply: ToolReply
    check: str


@dataclass
class _Run:
    """One partner's probe: its connection, what was exchanged, and the verdicts so far."""

    role: str
    endpoint: Endpoint
    errlog: IO[str]
    client: Client | None = None
    tool: types.Tool | None = None
    exchanges: list[_Exchange] = field(default_factory=list)
    results: dict[str, Check] = field(default_factory=dict)
    session_id: str = field(default_factory=lambda: f"probe-{uuid.uuid4().hex[:8]}")

    @property
    def type_name(self) -> str:
        return ROLES[self.role]

    def verdict(self, check: str, status: Status, message: str, evidence: Iterable[Any] = ()) -> None:
        spec = _BY_ID[check].spec
        if spec.startswith(("Table", "FR")):  # a clause of the partner's own type
            spec = f"{self.type_name} {spec}"
        self.results[check] = Check(self.role, check, status, message, spec, tuple(evidence))

    def request(self, dialog: str, turn: int, identity: Mapping[str, str] | None = None, **fields: Any) -> dict:
        dt = data_type(self.type_name)
        query = f"probe-{uuid.uuid4().hex[:12]}"
        identity = identity or {"MInstance": "probe-mi", "UEnvironment": "probe-ue", "SessionID": self.session_id}
        message: dict[str, Any] = {
            "Header": dt.header,
            "Mode": "RQ",
            **identity,
            "QueryID": query,
            "QueryTime": simple_time_now(time_id=f"st-{query}"),
            "DialogID": dialog,
            "TurnIndex": turn,
            **fields,
        }
        message["DataXMData"] = data_exchange_metadata(self.type_name, "RQ", query)
        return message

    async def send(self, check: str, message: Any, **extra: Any) -> ToolReply:
        assert self.client is not None
        arguments = {"message": message, **extra}
        reply = await call_tool(self.client, TOOLS[self.type_name], arguments, timeout=_TIMEOUT)
        self.exchanges.append(_Exchange(message, reply, check))
        return reply


def _evidence(exchange: _Exchange) -> list[Any]:
    reply = exchange.reply
    answer = reply.document if reply.document is not None else {"error": reply.error}
    return [exchange.request, answer]


def _status_map(response: Mapping[str, Any] | None) -> dict[str, str]:
    status = (response or {}).get("CommitmentStatus")
    if not isinstance(status, list):
        return {}
    return {s.get("CommitmentID"): s.get("Status") for s in status if isinstance(s, dict)}


# -- connecting ------------------------------------------------------------------------------------


async def _connect(run: _Run, stack: AsyncExitStack, mode: str) -> Client:
    # No fail_after around it: the client's task group must be left by the task that entered it.
    # read_timeout_seconds bounds the handshake's requests instead.
    return await stack.enter_async_context(run.endpoint.client(mode=mode, errlog=run.errlog, timeout=_TIMEOUT))


def _why(exc: BaseException) -> str:
    if isinstance(exc, BaseExceptionGroup):
        return "; ".join(_why(e) for e in exc.exceptions)
    if isinstance(exc, TimeoutError):
        return f"no answer within {_TIMEOUT:g} s"
    return str(exc) or type(exc).__name__


async def _handshakes(run: _Run) -> None:
    """handshake-legacy and handshake-current; Unreachable when neither works."""
    failures = {}
    for check, mode in (("handshake-legacy", "legacy"), ("handshake-current", "auto")):
        try:
            async with AsyncExitStack() as stack:
                client = await _connect(run, stack, mode)
                version = client.session.protocol_version
        except Exception as exc:  # any failure to connect is this check's verdict
            failures[check] = _why(exc)
            run.verdict(check, "fail", f"could not connect: {failures[check]}")
            continue
        if mode == "legacy":
            run.verdict(check, "pass", f"initialize handshake, protocol {version}")
        elif version in MODERN_PROTOCOL_VERSIONS:
            run.verdict(check, "pass", f"server/discover, protocol {version}")
        else:
            run.verdict(
                check, "skip", f"speaks only the initialize handshake (protocol {version}); binding v1 allows it"
            )
    if len(failures) == 2:
        run.errlog.flush()
        run.errlog.seek(0)
        tail = run.errlog.read()[-400:].strip()
        detail = f"; the server said: {tail}" if tail else ""
        raise Unreachable(f"{run.role} partner {run.endpoint.target!r}: {failures['handshake-legacy']}{detail}")


# -- the scenarios ---------------------------------------------------------------------------------


async def _tool_listed(run: _Run) -> None:
    assert run.client is not None
    tools = (await run.client.list_tools()).tools
    name = TOOLS[run.type_name]
    run.tool = next((t for t in tools if t.name == name), None)
    if run.tool is None:
        run.verdict("tool-listed", "fail", f"no tool {name}; tools: {', '.join(t.name for t in tools) or 'none'}")
        return
    properties = (run.tool.input_schema or {}).get("properties", {})
    wanted = ["message", "action_context"] if run.type_name == "BKN-DAC" else ["message"]
    missing = [a for a in wanted if a not in properties]
    if missing:
        run.verdict("tool-listed", "fail", f"{name} takes no argument {', '.join(missing)}")
    else:
        run.verdict("tool-listed", "pass", f"{name}({', '.join(wanted)})")


async def _pc_prompt(run: _Run, dialog: str) -> dict[str, Any] | None:
    """Open ``dialog`` by reading its PC Prompt (Prompt Creation); None when that fails."""
    assert run.client is not None
    try:
        first = await run.client.read_resource(f"pc-prompt://{dialog}")
        text = getattr(first.contents[0], "text", None)
        prompt = json.loads(text) if text else None
    except Exception:
        return None
    return prompt if isinstance(prompt, dict) else None


async def _check_pc_prompt(run: _Run, dialog: str) -> dict[str, Any] | None:
    assert run.client is not None
    try:
        templates = (await run.client.list_resource_templates()).resource_templates
    except Exception as exc:
        run.verdict("pc-prompt", "fail", f"resources/templates/list failed: {_why(exc)}")
        return None
    if not any(t.uri_template == "pc-prompt://{dialog_id}" for t in templates):
        run.verdict("pc-prompt", "fail", "no resource template pc-prompt://{dialog_id}")
        return None
    prompt = await _pc_prompt(run, dialog)
    again = await _pc_prompt(run, dialog)
    if prompt is None:
        run.verdict("pc-prompt", "fail", f"reading pc-prompt://{dialog} gave no JSON object")
        return None
    report = validate(prompt)
    if report.type != "PC Prompt" or not report.conforms:
        problems = "; ".join(f"{f.json_path}: {f.message}" for f in report.findings if f.conformance)
        run.verdict("pc-prompt", "fail", f"the PC Prompt does not conform: {problems}", [prompt])
    elif prompt.get("DialogID") != dialog:
        run.verdict("pc-prompt", "fail", f"the PC Prompt of {dialog} has DialogID {prompt.get('DialogID')!r}", [prompt])
    elif again != prompt:
        run.verdict("pc-prompt", "fail", "a second read gave another document (one PC Prompt per DialogID)", [prompt])
    else:
        run.verdict("pc-prompt", "pass", f"pc-prompt://{dialog}: a conforming PC Prompt, the same on every read")
    return prompt


def _fields(run: _Run, step: int) -> dict[str, Any]:
    """The payload of a plain, conforming Request of the partner's type."""
    if run.type_name == "BKN-PRC":
        return {"Kind": ("intent", "goal_constraints", "referents")[step % 3], "Question": "What does the User want?"}
    if run.type_name == "BKN-DAC":
        return {"Kind": "affordances", "Question": "What can be done here?"}
    return {"Question": "How should the assistant answer the User?"}


async def _open(run: _Run, dialog: str) -> Mapping[str, str] | None:
    """The identity of a new dialogue: from its PC Prompt for Prompt Creation, else the probe's own."""
    if run.type_name != "BKN-PRC":
        return None
    prompt = await _pc_prompt(run, dialog)
    if prompt is None:
        return None
    return {k: prompt[k] for k in ("MInstance", "UEnvironment", "SessionID") if isinstance(prompt.get(k), str)}


async def _commitments(run: _Run) -> None:
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
    sent = [*_evidence(run.exchanges[-3]), *_evidence(run.exchanges[-2]), *_evidence(run.exchanges[-1])]
    s0, s1, s2 = _status_map(r0.document), _status_map(r1.document), _status_map(r2.document)
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
        run.verdict("commitments", "fail", "; ".join(problems), sent)
    else:
        run.verdict("commitments", "pass", "retained, released, and kept across three turns", sent)


async def _feasibility(run: _Run) -> None:
    dialog = f"probe-fs-{uuid.uuid4().hex[:6]}"
    statements = [
        "MM-Move Nil probe-avatar From ML-probe-a To ML-probe-b",
        "MM-Add Nil probe-item At ML-probe-b With PerceptibilityState=1",
    ]
    actions = [{"Step": i, "Statement": s} for i, s in enumerate(statements)]
    message = run.request(dialog, 0, Kind="feasibility", Question="Can the A-User do this?", ProcessActions=actions)
    reply = await run.send("feasibility", message, action_context=None)
    evidence = _evidence(run.exchanges[-1])
    response = reply.document
    if response is None:
        run.verdict("feasibility", "fail", f"no Response: {reply.error}", evidence)
        return
    if response.get("Outcome") == "not_answered":
        run.verdict(
            "feasibility", "skip", "the partner did not answer the feasibility Request (not_answered)", evidence
        )
        return
    feasibility = response.get("Feasibility")
    if not isinstance(feasibility, dict):
        run.verdict("feasibility", "fail", f"Outcome {response.get('Outcome')!r} without Feasibility", evidence)
        return
    findings = [f for f in validate(response).findings if f.rule in ("overall-mismatch", "reason-missing", "enum")]
    steps = feasibility.get("Steps") if isinstance(feasibility.get("Steps"), list) else []
    numbers = sorted(s.get("Step") for s in steps if isinstance(s, dict) and isinstance(s.get("Step"), int))
    problems = [f"{f.json_path}: {f.message}" for f in findings]
    if numbers != list(range(len(statements))):
        problems.append(f"the Request had steps 0-{len(statements) - 1}; the Response has {numbers}")
    if problems:
        run.verdict("feasibility", "fail", "; ".join(problems), evidence)
    else:
        run.verdict("feasibility", "pass", f"Overall {feasibility.get('Overall')!r} agrees with its steps", evidence)


async def _bad_request(run: _Run) -> None:
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
    evidence = [*_evidence(run.exchanges[-3]), *_evidence(run.exchanges[-2]), *_evidence(run.exchanges[-1])]
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
        run.verdict("bad-request", "fail", "; ".join(problems), evidence)
    else:
        run.verdict(
            "bad-request",
            "pass",
            "not_answered for a named bad Request, a tool error for a nameless one, then served",
            evidence,
        )


async def _interleaved(run: _Run) -> None:
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
                status = _status_map(doc).get("cm-probe-shared")
                if status != "retained":
                    problems.append(
                        f"{dialog}: a commitment new to this dialogue is reported {status!r}; "
                        "commitments are kept per dialogue"
                    )
    evidence = [item for exchange in run.exchanges[start:] for item in _evidence(exchange)]
    if problems:
        run.verdict("interleaved", "fail", "; ".join(problems), evidence)
    else:
        run.verdict("interleaved", "pass", "two dialogues, turns alternated: each answered in its own", evidence)


async def _cancellation(run: _Run) -> None:
    """A Request cancelled right after it is sent; then ping, and the same Request again."""
    dialog = f"probe-cx-{uuid.uuid4().hex[:6]}"
    try:
        async with AsyncExitStack() as stack:
            client = await _connect(run, stack, "legacy")
            previous, run.client = run.client, client
            try:
                identity = await _open(run, dialog)
                message = run.request(dialog, 0, identity, **_fields(run, 0))
                request = types.CallToolRequest(
                    params=types.CallToolRequestParams(name=TOOLS[run.type_name], arguments={"message": message})
                )
                with anyio.move_on_after(0.01):
                    await client.session.send_request(request, types.CallToolResult)
                with anyio.fail_after(_TIMEOUT):
                    await client.session.send_ping()
                again = await run.send("cancellation", message)
            finally:
                run.client = previous
    except Exception as exc:
        run.verdict("cancellation", "fail", f"after a cancelled Request the server failed: {_why(exc)}")
        return
    evidence = _evidence(run.exchanges[-1])
    if again.document is not None and again.document.get("RequestID") == message["QueryID"]:
        run.verdict(
            "cancellation", "pass", "ping answered, and the cancelled Request was served when sent again", evidence
        )
    elif again.is_error:
        run.verdict(
            "cancellation",
            "pass",
            "ping answered; the Request had been answered before the cancellation arrived, so sending it again "
            "was refused (MCP: cancellation may come too late)",
            evidence,
        )
    else:
        run.verdict("cancellation", "fail", f"the Request sent again after a cancellation: {again.error}", evidence)


# -- verdicts over every exchange -----------------------------------------------------------------


def _over_exchanges(run: _Run) -> None:
    answered = [e for e in run.exchanges if e.reply.document is not None]
    requests_ok = [e for e in answered if isinstance(e.request, dict) and "QueryID" in e.request]

    def judge(check: str, problems: list[tuple[_Exchange, str]], passed: str) -> None:
        if not answered:
            run.verdict(check, "skip", "no Response to judge")
        elif problems:
            first = "; ".join(p for _, p in problems[:3])
            more = f" (and {len(problems) - 3} more)" if len(problems) > 3 else ""
            evidence = [item for e, _ in problems[:3] for item in _evidence(e)]
            run.verdict(check, "fail", f"{first}{more}", evidence)
        else:
            run.verdict(check, "pass", passed.format(n=len(answered)))

    shape = []
    for e in run.exchanges:
        reply = e.reply
        if reply.document is None or reply.is_error:
            continue
        if not reply.structured:
            shape.append((e, "a result without structuredContent (Response read from its text)"))
        elif reply.text is None:
            shape.append((e, "a result without the Response as text content"))
        else:
            try:
                same = json.loads(reply.text) == reply.document
            except ValueError:
                same = False
            if not same:
                shape.append((e, "the text content is not the same JSON as structuredContent"))
    judge("structured-result", shape, "{n} results: structuredContent and the same JSON as text")

    conform = []
    for e in answered:
        report = validate(e.reply.document)
        problems = [f"{f.json_path}: {f.message}" for f in report.findings if f.conformance]
        if report.type != run.type_name or report.mode != "RS":
            problems.insert(0, f"a {report.type or 'document of no known type'} {report.mode or ''}, not a Response")
        if problems:
            conform.append((e, "; ".join(problems[:3])))
    judge("response-conforms", conform, "{n} Responses, each conforming")

    echo = []
    for e in requests_ok:
        doc, req = e.reply.document or {}, e.request
        wrong = [
            f"{key} {doc.get(theirs)!r} (Request: {req.get(ours)!r})"
            for key, ours, theirs in (
                ("RequestID", "QueryID", "RequestID"),
                ("TurnIndex", "TurnIndex", "TurnIndex"),
                ("DialogID", "DialogID", "DialogID"),
                ("SessionID", "SessionID", "SessionID"),
                ("MInstance", "MInstance", "MInstance"),
                ("UEnvironment", "UEnvironment", "UEnvironment"),
            )
            if doc.get(theirs) != req.get(ours)
        ]
        if wrong:
            echo.append((e, f"Response to {req.get('QueryID')}: {', '.join(wrong)}"))
    judge("echo", echo, "{n} Responses echo RequestID, TurnIndex, DialogID and the session identities")

    outcome = []
    for e in answered:
        doc = e.reply.document or {}
        if "Outcome" not in doc:
            outcome.append((e, "a Response without Outcome"))
            continue
        odd = [f"{f.message}" for f in validate(doc).findings if f.rule in ("outcome-payload", "failure-outcome")]
        if odd:
            outcome.append((e, "; ".join(odd)))
    judge("outcome", outcome, "{n} Responses: Outcome present and agreeing with the payload")


def _tool_schemas(run: _Run) -> None:
    if run.tool is None:
        run.verdict("tool-schemas", "skip", "no tool to read schemas from")
        return
    from jsonschema import Draft202012Validator
    from jsonschema.exceptions import SchemaError
    from referencing import Registry
    from referencing.exceptions import Unresolvable

    problems = []
    try:
        schema = run.tool.input_schema
        Draft202012Validator.check_schema(schema)
        inputs = Draft202012Validator(schema, registry=Registry())
        sent = [e.request for e in run.exchanges if isinstance(e.request, dict) and validate(e.request).conforms]
        for request in sent[:5]:
            arguments = {"message": request}
            if not inputs.is_valid(arguments):
                problems.append(f"the inputSchema refuses a conforming Request ({request.get('QueryID')})")
                break
        if inputs.is_valid({"message": {"hello": 1}}):
            problems.append('the inputSchema accepts {"message": {"hello": 1}}: a host learns nothing of the Request')
        output = run.tool.output_schema
        if output is None:
            problems.append("no outputSchema")
        else:
            Draft202012Validator.check_schema(output)
            outputs = Draft202012Validator(output, registry=Registry())
            received = [e.reply.document for e in run.exchanges if e.reply.document is not None]
            conforming = [d for d in received if validate(d).conforms]
            for document in conforming[:5]:
                if not outputs.is_valid(document):
                    problems.append(f"the outputSchema refuses a conforming Response ({document.get('QueryID')})")
                    break
    except (SchemaError, Unresolvable) as exc:
        problems.append(f"a schema that cannot be used without fetching anything: {str(exc).splitlines()[0]}")
    if problems:
        run.verdict("tool-schemas", "fail", "; ".join(problems))
    else:
        run.verdict("tool-schemas", "pass", "self-contained schemas: conforming messages pass, a stray object does not")


# -- the whole probe -------------------------------------------------------------------------------


async def _probe_one(role: str, endpoint: Endpoint) -> list[Check]:
    with tempfile.TemporaryFile("w+", encoding="utf-8", errors="replace") as errlog:
        run = _Run(role, endpoint, errlog)
        await _handshakes(run)
        mode = "legacy" if run.results["handshake-current"].status != "pass" else "auto"
        try:
            async with AsyncExitStack() as stack:
                run.client = await _connect(run, stack, mode)
                await _tool_listed(run)
                if run.tool is not None:
                    if run.type_name == "BKN-PRC":
                        await _check_pc_prompt(run, f"probe-pc-{uuid.uuid4().hex[:6]}")
                    scenarios: list[Callable[[_Run], Any]] = [_interleaved, _bad_request]
                    if run.type_name == "BKN-DAC":
                        scenarios[:0] = [_commitments, _feasibility]
                    for scenario in scenarios:
                        await scenario(run)
                    run.client = None
                    await _cancellation(run)
        except Exception as exc:
            for check in _applicable(role):
                if check.id not in run.results:
                    run.verdict(check.id, "fail", f"the connection broke during the probe: {_why(exc)}")
        _over_exchanges(run)
        _tool_schemas(run)
        for check in _applicable(role):
            if check.id not in run.results:
                run.verdict(check.id, "skip", "not run: the tool is not listed")
        return [run.results[c.id] for c in _applicable(role)]


def _applicable(role: str) -> list[CheckSpec]:
    return [c for c in CHECKS if role in c.roles]


async def probe(partners: Mapping[str, Endpoint]) -> list[Check]:
    """Run every check on each partner, in the order prc, dac, pal; raises Unreachable."""
    results: list[Check] = []
    for role in ROLES:
        if role in partners:
            results.extend(await _probe_one(role, partners[role]))
    return results


def probe_sync(partners: Mapping[str, Endpoint]) -> list[Check]:
    """:func:`probe` with its own event loop (not inside Jupyter: there, ``await probe(...)``)."""
    return anyio.run(probe, partners)
