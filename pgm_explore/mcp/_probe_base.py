"""The probe's vocabulary: the checks and their clauses, a result, and one partner's run (its
connections and their wires, the exchanges, the parts of each check and the results)."""

from __future__ import annotations

import logging
import threading
import uuid
from collections.abc import Iterable, Iterator, Mapping
from contextlib import AsyncExitStack, contextmanager
from dataclasses import dataclass, field
from typing import Any, Literal

import httpx2
from mcp import Client, types
from pydantic import ValidationError

from pgm_explore.errors import PgmExploreError
from pgm_explore.mcp._wire import PartnerExited, Wire
from pgm_explore.mcp.connect import ROLES, Endpoint, ToolReply, call_tool, timed_out
from pgm_explore.models import data_exchange_metadata
from pgm_explore.spec import data_type, simple_time_now

__all__ = ["CHECKS", "DEFAULT_TIMEOUT", "Check", "CheckSpec", "Unreachable"]


Status = Literal["pass", "fail", "skip"]
TOOLS = {"BKN-PRC": "bkn_prc", "BKN-DAC": "bkn_dac", "BKN-PAL": "bkn_pal"}
DEFAULT_TIMEOUT = 30.0
"""How long a call waits for its answer, in seconds (``--timeout``)."""

_ALL = ("prc", "dac", "pal")
_ANY = ("inprocess", "stdio", "http")
_WIRE = ("stdio", "http")
_HTTP = ("http",)


@dataclass(frozen=True)
class CheckSpec:
    """One check of the battery, as docs/probe.md describes it.

    ``transports``: where it can be judged; elsewhere it is ``skip`` with the reason (an HTTP check
    on a stdio partner, a check of the bytes on a server in this process).
    """

    id: str
    roles: tuple[str, ...]
    spec: str
    summary: str
    transports: tuple[str, ...] = _ANY


_M11 = "MCP 2025-11-25"
_M26 = "MCP 2026-07-28"
CHECKS: tuple[CheckSpec, ...] = (
    CheckSpec("handshake-legacy", _ALL, f"{_M11} basic/lifecycle Initialization; binding v1", "initialize handshake"),
    CheckSpec("handshake-current", _ALL, f"{_M26} server/discover; basic/versioning", "current protocol"),
    # -- the MCP layer ------------------------------------------------------------------------------
    CheckSpec(
        "jsonrpc-responses",
        _ALL,
        f'JSON-RPC 2.0 §5 (one Response per Request, with its "id"); {_M11} basic/transports stdio '
        "(nothing on stdout that is not an MCP message)",
        "one response per request",
        _WIRE,
    ),
    CheckSpec(
        "unknown-method",
        _ALL,
        f"JSON-RPC 2.0 §5.1 (-32601 Method not found); {_M26} streamable-http Protocol Version Header "
        "(404 Not Found and -32601)",
        "unknown method refused",
    ),
    CheckSpec(
        "unknown-tool",
        _ALL,
        f"{_M11} and {_M26} server/tools Error Handling (an unknown tool is a protocol error: "
        "a JSON-RPC error, -32602)",
        "unknown tool refused",
    ),
    CheckSpec(
        "unknown-resource",
        _ALL,
        f"{_M11} server/resources Error Handling (-32002); {_M26} server/resources Error Handling "
        "(-32602, MUST; basic Error Codes: -32002 MUST NOT be emitted)",
        "unknown resource refused",
    ),
    CheckSpec(
        "batch-rejected",
        _ALL,
        f"{_M11} basic/transports (a POST body or a line is a single JSON-RPC message; batching was "
        "removed in 2025-06-18); JSON-RPC 2.0 §5.1 (-32600 Invalid Request)",
        "batch refused",
        _WIRE,
    ),
    CheckSpec(
        "jsonrpc-version",
        _ALL,
        f'{_M11} basic Messages (JSON-RPC 2.0); JSON-RPC 2.0 §4 ("jsonrpc" MUST be exactly "2.0") '
        "and §5.1 (-32600 Invalid Request)",
        "JSON-RPC version checked",
        _WIRE,
    ),
    CheckSpec(
        "version-negotiation",
        _ALL,
        f"{_M11} basic/lifecycle Version Negotiation (answer a version the server supports); {_M26} "
        "basic/versioning Protocol Version Negotiation (-32022 UnsupportedProtocolVersion listing the "
        "supported versions; HTTP 400)",
        "protocol version negotiated",
        _WIRE,
    ),
    CheckSpec(
        "capabilities",
        _ALL,
        f"{_M11} basic/lifecycle Capability Negotiation; {_M26} server/discover (DiscoverResult "
        "capabilities): one server, one set of capabilities",
        "one capability answer",
    ),
    CheckSpec(
        "envelope",
        _ALL,
        f"{_M26} basic General fields: Per-request protocol fields (a request without them: -32602 "
        "Invalid params; HTTP 400)",
        "per-request envelope required",
        _WIRE,
    ),
    CheckSpec(
        "http-media-types",
        _ALL,
        f"{_M11} basic/transports Sending Messages 1-2 (POST, Accept: application/json and "
        "text/event-stream); RFC 9110 §15.5.7 (406 Not Acceptable), §15.5.16 (415 Unsupported Media Type)",
        "media types checked",
        _HTTP,
    ),
    CheckSpec(
        "http-session",
        _ALL,
        f"{_M11} basic/transports Session Management 1-5, Sending Messages 4 (202 for a notification)",
        "sessions kept and ended",
        _HTTP,
    ),
    CheckSpec(
        "http-protocol-version",
        _ALL,
        f"{_M11} basic/transports Protocol Version Header (unsupported: 400 Bad Request); {_M26} "
        "streamable-http Protocol Version Header and Server Validation (400, -32020 HeaderMismatch)",
        "MCP-Protocol-Version header checked",
        _HTTP,
    ),
    CheckSpec(
        "http-get",
        _ALL,
        f"{_M11} basic/transports Listening for Messages 3 (an SSE stream or 405), Resumability and "
        f"Redelivery; {_M26} streamable-http Backward Compatibility (GET: 405; Last-Event-ID ignored)",
        "GET and Last-Event-ID answered cleanly",
        _HTTP,
    ),
    CheckSpec(
        "dns-rebinding",
        _ALL,
        f"{_M11} basic/transports Security Warning 1 (validate Origin; an invalid one: 403 Forbidden); "
        f"{_M26} streamable-http Security & Endpoint 1; {_M11} basic/security_best_practices "
        "(local server compromise)",
        "foreign Host and Origin refused",
        _HTTP,
    ),
    CheckSpec(
        "http-auth",
        _ALL,
        f"{_M11} basic/authorization Token Handling (an invalid or missing token: HTTP 401) and Protected "
        "Resource Metadata Discovery Requirements (WWW-Authenticate on a 401); RFC 6750 §3 (the Bearer challenge)",
        "nothing served without the bearer token",
        _HTTP,
    ),
    # -- PGM-AUA over the binding --------------------------------------------------------------------
    CheckSpec(
        "tool-listed", _ALL, "binding v1: tool names and arguments; MCP server/tools Capabilities", "the tool is listed"
    ),
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
    CheckSpec(
        "cancellation",
        _ALL,
        "MCP notifications/cancelled (a cancellation may arrive too late); binding v1 (query-reused)",
        "cancellation",
    ),
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
    """The messages exchanged (Requests, Responses, tool errors, HTTP exchanges) that the result rests on."""

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
class Exchange:
    request: Any
    reply: ToolReply
    check: str
    log: tuple[str, ...] = ()
    """What the server logged while it answered (a server of this process only)."""


@dataclass(frozen=True)
class _Part:
    """One observation of a check: True (as required), False (not), None (could not be made)."""

    ok: bool | None
    text: str
    evidence: tuple[Any, ...] = ()


@dataclass
class ProbeRun:
    """One partner's probe: its connections, what was exchanged, and the results so far."""

    role: str
    endpoint: Endpoint
    timeout: float = DEFAULT_TIMEOUT
    client: Client | None = None
    tool: types.Tool | None = None
    exchanges: list[Exchange] = field(default_factory=list)
    results: dict[str, Check] = field(default_factory=dict)
    parts: dict[str, list[_Part]] = field(default_factory=dict)
    wires: list[Wire] = field(default_factory=list)
    wire: Wire | None = None
    """The wire of the connection opened last (None for a server in this process)."""
    facts: dict[str, Any] = field(default_factory=dict)
    """What the handshakes said: ``initialize`` and ``discover`` results, the versions spoken."""
    session_id: str = field(default_factory=lambda: f"probe-{uuid.uuid4().hex[:8]}")
    log: list[str] = field(default_factory=list)
    """The lines the MCP SDK logged while a server of this process was probed (:func:`sdk_log`)."""
    _log_read: int = 0

    def new_log(self) -> list[str]:
        """The lines logged since the last call: they belong to the observation just made."""
        lines = self.log[self._log_read :]
        self._log_read = len(self.log)
        return lines

    def _with_log(self, evidence: Iterable[Any]) -> tuple[Any, ...]:
        lines = self.new_log()
        return (*evidence, {SERVER_LOG: lines}) if lines else tuple(evidence)

    @property
    def type_name(self) -> str:
        return ROLES[self.role]

    @property
    def transport(self) -> str:
        return self.endpoint.transport

    def record(self, check: str, status: Status, message: str, evidence: Iterable[Any] = ()) -> None:
        spec = _BY_ID[check].spec
        if spec.startswith(("Table", "FR")):  # a clause of the partner's own type
            spec = f"{self.type_name} {spec}"
        self.results[check] = Check(self.role, check, status, message, spec, self._with_log(evidence))

    def part(self, check: str, ok: bool | None, text: str, evidence: Iterable[Any] = ()) -> None:
        """One observation towards ``check``, settled with the others by :meth:`settle`."""
        self.parts.setdefault(check, []).append(_Part(ok, text, self._with_log(evidence)))

    def settle(self, check: str) -> None:
        """``check`` from its parts: fail when one failed, skip when none could be made, else pass."""
        parts = self.parts.get(check, [])
        failed = [p for p in parts if p.ok is False]
        passed = [p for p in parts if p.ok]
        if failed:
            chosen, status = failed, "fail"
        elif passed:
            chosen, status = passed, "pass"
        else:
            chosen, status = parts, "skip"
        message = "; ".join(dict.fromkeys(p.text for p in chosen)) or "not run"
        if status == "pass" and (skipped := [p.text for p in parts if p.ok is None]):
            message += f" (not judged: {'; '.join(skipped)})"
        evidence = [item for p in (failed or parts) for item in p.evidence]
        self.record(check, status, message, evidence)  # type: ignore[arg-type]

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
        """Call the partner's tool; raises PartnerExited when the partner is gone."""
        assert self.client is not None
        arguments = {"message": message, **extra}
        reply = await call_tool(self.client, TOOLS[self.type_name], arguments, timeout=self.timeout)
        if reply.timed_out:
            reply.error = self.no_answer()
        self.exchanges.append(Exchange(message, reply, check, tuple(self.new_log())))
        self.check_alive()
        return reply

    def check_alive(self) -> None:
        """Raise PartnerExited when the current connection's partner process has ended."""
        if self.wire is not None and self.wire.ended:
            raise PartnerExited(self.wire.exit_text())

    def no_answer(self) -> str:
        """A call that got no answer in time, naming the limit and how to change it."""
        return f"no answer within {self.timeout:g} s (--timeout)"

    def why(self, exc: BaseException) -> str:
        """Why a connection or a call failed, in plain words: the partner's exit, the time limit."""
        if self.wire is not None and self.wire.ended:
            return self.wire.exit_text()
        if isinstance(exc, BaseExceptionGroup):
            return "; ".join(self.why(e) for e in exc.exceptions)
        if timed_out(exc) or isinstance(exc, httpx2.TimeoutException):  # the SDK's, or the probe's own HTTP
            return self.no_answer()
        if isinstance(exc, ValidationError):  # the SDK read a result against the revision's schema
            problems = "; ".join(
                f"{'.'.join(map(str, e['loc'])) or 'the result'}: {e['msg']}" for e in exc.errors()[:4]
            )
            return f"a result that does not match the MCP schema of the protocol spoken ({exc.title}: {problems})"
        return " ".join(str(exc).split()) or type(exc).__name__

    def close(self) -> None:
        for wire in self.wires:
            if wire.stderr is not None:
                wire.stderr.close()


def evidence_of(exchange: Exchange) -> list[Any]:
    """The Request and what came back; then, where the server logged something meanwhile, its lines."""
    reply = exchange.reply
    answer = reply.document if reply.document is not None else {"error": reply.error}
    return [exchange.request, answer, *([{SERVER_LOG: list(exchange.log)}] if exchange.log else [])]


# -- the SDK's log, for a server of this process -----------------------------------------------------

SERVER_LOG = "server log"
"""The key of an evidence item holding what a server of this process logged (``{"server log": [...]}``)."""
_LOG_LINES = 400
_log_lock = threading.Lock()
_log_handlers: list[logging.Handler] = []
_log_saved: list[Any] = []


class _LogLines(logging.Handler):
    def __init__(self, lines: list[str]) -> None:
        super().__init__(logging.NOTSET)
        self.lines = lines
        self.setFormatter(logging.Formatter("%(levelname)s %(name)s: %(message)s"))

    def emit(self, record: logging.LogRecord) -> None:
        try:
            if len(self.lines) < _LOG_LINES:
                self.lines.append(self.format(record))
        except Exception:
            self.handleError(record)


@contextmanager
def sdk_log(lines: list[str]) -> Iterator[None]:
    """While the block runs, what the ``mcp`` loggers log (at INFO and above) goes into ``lines``
    and nowhere else.

    Building an ``MCPServer`` runs the SDK's ``configure_logging`` (``logging.basicConfig``, a
    handler writing to stderr), so a server of this process says "Tool 'bkn_dac' failed: ..." for
    every bad Request the probe sends on purpose: in Jupyter, red blocks above a passing report.
    Those lines are the server's side of the exchanges: evidence, kept with the checks.
    """
    logger = logging.getLogger("mcp")
    handler = _LogLines(lines)
    with _log_lock:
        if not _log_handlers:
            _log_saved[:] = [logger.level, logger.propagate]
            logger.setLevel(min(logger.getEffectiveLevel(), logging.INFO))
            logger.propagate = False
        _log_handlers.append(handler)
        logger.addHandler(handler)
    try:
        yield
    finally:
        with _log_lock:
            logger.removeHandler(handler)
            _log_handlers.remove(handler)
            if not _log_handlers:
                logger.setLevel(_log_saved[0])
                logger.propagate = _log_saved[1]


def status_map(response: Mapping[str, Any] | None) -> dict[Any, Any]:
    # Keys and values as the partner sent them (a faulty partner's may be missing or not text):
    # the checks compare them with what a conforming partner sends and say what differs.
    status = (response or {}).get("CommitmentStatus")
    if not isinstance(status, list):
        return {}
    return {s.get("CommitmentID"): s.get("Status") for s in status if isinstance(s, dict)}


# -- connecting ------------------------------------------------------------------------------------


async def open_client(run: ProbeRun, stack: AsyncExitStack, mode: str, label: str) -> Client:
    """A connection for ``label`` (what it is for), with its wire noted on ``run``."""
    wire = None if run.endpoint.server is not None else Wire(label)
    if wire is not None:
        run.wires.append(wire)
    run.wire = wire
    # No fail_after around it: the client's task group must be left by the task that entered it.
    # read_timeout_seconds bounds the handshake's requests instead.
    return await stack.enter_async_context(run.endpoint.client(mode=mode, timeout=run.timeout, wire=wire))
