"""The probe's vocabulary: the checks, a result, and one partner's run (connection, exchanges, results)."""

from __future__ import annotations

import uuid
from collections.abc import Iterable, Mapping
from contextlib import AsyncExitStack
from dataclasses import dataclass, field
from typing import Any, Literal, TextIO

from mcp import Client, types
from mcp_types.version import MODERN_PROTOCOL_VERSIONS

from pgm_explore.errors import PgmExploreError
from pgm_explore.mcp.connect import ROLES, Endpoint, ToolReply, call_tool
from pgm_explore.models import data_exchange_metadata
from pgm_explore.spec import data_type, simple_time_now

__all__ = ["CHECKS", "Check", "CheckSpec", "Unreachable"]


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
    """The result of one check on one partner."""

    partner: str
    check: str
    status: Status
    message: str
    spec: str
    evidence: tuple[Any, ...] = ()
    """The messages exchanged (Requests, Responses, tool errors) that the result rests on."""

    def to_dict(self) -> dict[str, str]:
        """The ``--format json`` line: exactly partner, check, status, message, spec."""
        return {
            "partner": self.partner,
            "check": self.check,
            "status": self.status,
            "message": self.message,
            "spec": self.spec,
        }


class Unreachable(PgmExploreError):
    """A partner that could not be reached with either handshake; the message says why."""


@dataclass
class _Exchange:
    request: Any
    reply: ToolReply
    check: str


@dataclass
class _Run:
    """One partner's probe: its connection, what was exchanged, and the results so far."""

    role: str
    endpoint: Endpoint
    errlog: TextIO
    client: Client | None = None
    tool: types.Tool | None = None
    exchanges: list[_Exchange] = field(default_factory=list)
    results: dict[str, Check] = field(default_factory=dict)
    session_id: str = field(default_factory=lambda: f"probe-{uuid.uuid4().hex[:8]}")

    @property
    def type_name(self) -> str:
        return ROLES[self.role]

    def record(self, check: str, status: Status, message: str, evidence: Iterable[Any] = ()) -> None:
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


def _status_map(response: Mapping[str, Any] | None) -> dict[Any, Any]:
    # Keys and values as the partner sent them (a faulty partner's may be missing or not text):
    # the checks compare them with what a conforming partner sends and say what differs.
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
        except Exception as exc:  # any failure to connect is this check's result
            failures[check] = _why(exc)
            run.record(check, "fail", f"could not connect: {failures[check]}")
            continue
        if mode == "legacy":
            run.record(check, "pass", f"initialize handshake, protocol {version}")
        elif version in MODERN_PROTOCOL_VERSIONS:
            run.record(check, "pass", f"server/discover, protocol {version}")
        else:
            run.record(
                check, "skip", f"speaks only the initialize handshake (protocol {version}); binding v1 allows it"
            )
    if len(failures) == 2:
        run.errlog.flush()
        run.errlog.seek(0)
        tail = run.errlog.read()[-400:].strip()
        detail = f"; the server said: {tail}" if tail else ""
        raise Unreachable(f"{run.role} partner {run.endpoint.target!r}: {failures['handshake-legacy']}{detail}")
