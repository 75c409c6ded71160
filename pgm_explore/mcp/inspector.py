"""Trying a partner by hand: connect, list its tools, call one, and keep every JSON-RPC message.

:class:`Inspector` is what the partner inspector widget (``pgm_explore.widgets.PartnerInspector``)
does, without widgets: it reaches one partner (a reference partner in this process, a command
started as a stdio server, or a Streamable HTTP URL; :mod:`pgm_explore.mcp.connect`), lists its
tools with their schemas, and calls them. The connection is held open in a background task
(:class:`~pgm_explore.mcp._held.Held`), so that any cell or widget callback can use it, and opened
again by itself when it was closed (or its partner process ended). Every JSON-RPC message both ways
is recorded as it was on the wire (:class:`~pgm_explore.mcp._wire.Wire`: the transport's streams
tapped, the SDK still speaks the protocol), every connection's after the last.

A tool that takes a PGM-AUA message (``message``, the binding of docs/mcp.md) gets a Request
skeleton from the dialogue so far (:meth:`Inspector.request_for`); the Request is recorded in
:attr:`Inspector.transcript` once sent, its Response when it arrives, each with its findings, and
:meth:`Inspector.checked` applies the transcript rules to them. Nothing here raises for what a
partner does: a partner that cannot be reached raises :class:`InspectorError` with a plain message.
"""

from __future__ import annotations

import json
import os
import uuid
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from mcp import Client, types
from mcp.shared.exceptions import MCPError
from pydantic import ValidationError

from pgm_explore.dialogue import Transcript, documents
from pgm_explore.errors import PgmExploreError
from pgm_explore.mcp._held import Held
from pgm_explore.mcp._probe_base import sdk_log
from pgm_explore.mcp._wire import Wire
from pgm_explore.mcp.connect import Endpoint, TokenRequired, ToolReply, call_tool, timed_out
from pgm_explore.mcp.servers import (
    TOOL_NAMES,
    domain_access_server,
    personality_alignment_server,
    prompt_creation_server,
)
from pgm_explore.spec import HEADERS
from pgm_explore.validation import validate
from pgm_explore.validation.findings import Finding

__all__ = ["Call", "Inspector", "InspectorError", "REFERENCE_PARTNERS", "ToolInfo", "endpoint_for"]

REFERENCE_PARTNERS: dict[str, Callable[[], Any]] = {
    "Prompt Creation": prompt_creation_server,
    "Domain Access": domain_access_server,
    "Personality Alignment": personality_alignment_server,
}
"""The reference partners an inspector starts in this process, by name."""

LOG_LIMIT = 20_000
"""JSON-RPC messages kept per connection (a person's session is far shorter)."""

_SESSION = {"MInstance": "mi-inspector", "UEnvironment": "ue-inspector"}
_TYPES_BY_TOOL = {tool: type_name for type_name, tool in TOOL_NAMES.items()}


class InspectorError(PgmExploreError):
    """The partner cannot be reached or named; the message says why in plain words."""


def endpoint_for(partner: str, *, allow_commands: bool = True) -> Endpoint:
    """The endpoint of a reference partner's name, a URL, or (``allow_commands``) a command line.

    >>> endpoint_for("Domain Access").transport, endpoint_for("http://127.0.0.1:9/mcp").transport
    ('inprocess', 'http')
    >>> endpoint_for("python -m my_partner").argv
    ['python', '-m', 'my_partner']
    >>> endpoint_for("python -m my_partner", allow_commands=False)
    Traceback (most recent call last):
    ...
    pgm_explore.mcp.inspector.InspectorError: "python -m my_partner" is not a URL (http:// or https://); this page starts no command
    """
    partner = partner.strip()
    if partner in REFERENCE_PARTNERS:
        return Endpoint(partner, server=REFERENCE_PARTNERS[partner]())
    if not partner:
        raise InspectorError("name a partner: a reference partner, a URL or a command")
    endpoint = Endpoint(partner)
    if endpoint.is_url:
        return endpoint
    if not allow_commands:
        raise InspectorError(f'"{partner}" is not a URL (http:// or https://); this page starts no command')
    try:
        argv = endpoint.argv
    except ValueError as exc:  # an unclosed quote
        raise InspectorError(f"the command cannot be split: {exc}") from None
    if not argv:
        raise InspectorError("name a partner: a reference partner, a URL or a command")
    return endpoint


@dataclass(frozen=True)
class ToolInfo:
    """A tool as the partner listed it; ``type_name`` is the PGM-AUA data type of its ``message``
    argument (the binding of docs/mcp.md), or None for any other tool."""

    name: str
    description: str
    input_schema: dict[str, Any]
    output_schema: dict[str, Any] | None
    type_name: str | None

    @classmethod
    def of(cls, tool: types.Tool) -> ToolInfo:
        return cls(
            tool.name,
            tool.description or "",
            dict(tool.input_schema),
            dict(tool.output_schema) if tool.output_schema is not None else None,
            _message_type(tool),
        )

    @property
    def other_arguments(self) -> list[str]:
        """The arguments beside ``message`` (all of them for a tool that takes no PGM-AUA message)."""
        names = list((self.input_schema.get("properties") or {}).keys())
        return [name for name in names if not (self.type_name and name == "message")]


def _message_type(tool: types.Tool) -> str | None:
    """The data type of a tool's ``message``: the binding's ``pgm-aua/header``, else the Header its
    schema fixes, else the binding's tool name."""
    properties = tool.input_schema.get("properties") or {}
    if "message" not in properties:
        return None
    header = (tool.meta or {}).get("pgm-aua/header")
    message = properties.get("message")
    if header is None and isinstance(message, dict):
        node = (message.get("properties") or {}).get("Header") or {}
        header = node.get("const", (node.get("enum") or [None])[0]) if isinstance(node, dict) else None
    spec = HEADERS.get(header) if isinstance(header, str) else None
    return spec.name if spec is not None else _TYPES_BY_TOOL.get(tool.name)


@dataclass
class Call:
    """One tool call: what was sent, what came back, and where its messages are in the transcript."""

    tool: str
    arguments: dict[str, Any]
    reply: ToolReply
    request_index: int | None = None
    """The Request's index in :attr:`Inspector.transcript` (None: no PGM-AUA message, or not sent)."""
    response_index: int | None = None
    findings: list[Finding] = field(default_factory=list)
    """What was found about the exchange (a tool error, an unreadable result, no answer)."""

    @property
    def response(self) -> dict[str, Any] | None:
        return self.reply.document


class Inspector:
    """One partner, tried by hand (see the module's documentation).

    ``partner``: a name of :data:`REFERENCE_PARTNERS`, a URL, a command line (only with
    ``allow_commands``: a page served to people who run no code starts no command), or an
    :class:`~pgm_explore.mcp.connect.Endpoint`. Use from async code (a notebook cell, a widget
    callback's task): ``await inspector.connect()``, ``await inspector.call(...)``, ``await
    inspector.close()``.
    """

    def __init__(
        self,
        partner: str | Endpoint = "Personality Alignment",
        *,
        allow_commands: bool = True,
        timeout: float = 60.0,
        env: Mapping[str, str] | None = None,
    ) -> None:
        endpoint = partner if isinstance(partner, Endpoint) else endpoint_for(partner, allow_commands=allow_commands)
        if env and not endpoint.is_url and endpoint.server is None:
            endpoint = Endpoint(endpoint.target, env=dict(env))
        self.endpoint = endpoint
        self.timeout = timeout
        self.tools: list[ToolInfo] = []
        self.transcript: list[dict[str, Any]] = []
        """The PGM-AUA messages sent (once sent) and received, in order."""
        self.findings: list[tuple[int, Finding]] = []
        """(index in :attr:`transcript`, finding): each message's validation, and each exchange's problems."""
        self.calls: list[Call] = []
        self.wires: list[Wire] = []
        """One per connection, in order: the JSON-RPC messages of each."""
        self.logged: list[tuple[int, str]] = []
        """What the MCP SDK logged in this process while the inspector connected, called or closed
        (a reference partner's "Tool 'bkn_dac' failed: ..."), each with the number of JSON-RPC
        messages logged before it: shown in the log, never printed into a notebook cell as stderr."""
        self.session_id = f"sess-{uuid.uuid4().hex[:8]}"
        self._held: Held[Client] = Held()

    @property
    def target(self) -> str:
        return self.endpoint.target

    @property
    def connected(self) -> bool:
        wire = self.wires[-1] if self.wires else None
        return self._held.is_open and not (wire is not None and wire.ended)

    @property
    def log(self) -> list[tuple[str, Any]]:
        """Every JSON-RPC message of every connection, in order: ("sent" | "received", message)."""
        return [entry for wire in self.wires for entry in wire.log]

    # -- connecting ---------------------------------------------------------------------------------

    @contextmanager
    def _sdk_logged(self) -> Iterator[None]:
        # The probe's capture (sdk_log): the SDK's handler writes to stderr, a red block in Jupyter.
        lines: list[str] = []
        try:
            with sdk_log(lines):
                yield
        finally:
            at = len(self.log)
            self.logged.extend((at, line) for line in lines)

    async def connect(self) -> list[ToolInfo]:
        """(Re)connect and list the partner's tools; raises InspectorError with the reason."""
        with self._sdk_logged():
            return await self._connect()

    async def _connect(self) -> list[ToolInfo]:
        await self._close()
        wire = Wire(self.target, log_limit=LOG_LIMIT)
        self.wires.append(wire)
        try:
            client = await self._held.open(self.endpoint.client(timeout=self.timeout, wire=wire))
            listed = await self._list(client)
        except Exception as exc:  # every way to fail becomes a plain sentence
            said = self._why(exc, wire)
            await self._close()
            raise InspectorError(f"could not connect to {self.target}: {said}") from None
        self.tools = [ToolInfo.of(tool) for tool in listed]
        return self.tools

    async def _list(self, client: Client) -> list[types.Tool]:
        tools: list[types.Tool] = []
        cursor: str | None = None
        for _page in range(100):  # a partner that pages forever is cut off
            result = await client.list_tools(cursor=cursor)
            tools += result.tools
            cursor = result.next_cursor
            if not cursor:
                break
        return tools

    async def close(self) -> None:
        """Close the connection (a command's process ends); the log and transcript are kept."""
        with self._sdk_logged():
            await self._close()

    async def _close(self) -> None:
        await self._held.close()
        for wire in self.wires:
            if wire.stderr is not None:
                wire.stderr.close()
                wire.stderr = None

    def _why(self, exc: BaseException, wire: Wire | None) -> str:
        if wire is not None and wire.ended:
            return wire.exit_text()
        if isinstance(exc, BaseExceptionGroup):
            return "; ".join(self._why(e, None) for e in exc.exceptions)
        if timed_out(exc):
            return f"no answer within {self.timeout:g} s"
        if isinstance(exc, TokenRequired):
            return f"the partner {exc.reason}: type its token in the Token box (in Python: Endpoint(URL, token=TOKEN))"
        if isinstance(exc, MCPError):
            return f"JSON-RPC error {exc.error.code}: {exc.error.message}"
        if isinstance(exc, ValidationError):
            return f"an answer that does not match the MCP schema ({exc.title})"
        if isinstance(exc, FileNotFoundError):
            return f"no such command ({exc.filename or exc})"
        return " ".join(str(exc).split()) or type(exc).__name__

    # -- calling ------------------------------------------------------------------------------------

    def tool(self, name: str) -> ToolInfo | None:
        return next((t for t in self.tools if t.name == name), None)

    def request_for(self, tool: str) -> dict[str, Any] | None:
        """The skeleton of the next Request for ``tool`` from the dialogue so far (its session,
        DialogID and next TurnIndex; a session of this inspector's own at first), or None for a tool
        that takes no PGM-AUA message."""
        info = self.tool(tool)
        type_name = info.type_name if info is not None else _TYPES_BY_TOOL.get(tool)
        if type_name is None:
            return None
        context: dict[str, Any] = {**_SESSION, "SessionID": self.session_id}
        context.update(documents.next_turn_context(self.transcript, type_name))
        return documents.skeleton(type_name, "RQ", context=context)

    async def call(self, tool: str, arguments: Mapping[str, Any]) -> Call:
        """Call ``tool`` with ``arguments``; reconnects first when the connection was closed.

        Never raises for what the partner does (findings instead); raises InspectorError when the
        partner cannot be reached at all.
        """
        with self._sdk_logged():
            if not self.connected:
                await self._connect()
            reply = await self._call(tool, arguments)
            if not reply.sent:  # the connection was gone before the call left: it is safe to send again
                await self._connect()
                reply = await self._call(tool, arguments)
        done = Call(tool, dict(arguments), reply, findings=list(reply.findings))
        if self.wires and self.wires[-1].ended:
            ended = Finding.of("partner-error", (), self.wires[-1].exit_text())
            done.findings.append(ended)
        message = arguments.get("message")
        info = self.tool(tool)
        if reply.sent and isinstance(message, dict) and (info is None or info.type_name is not None):
            done.request_index = self._record(message)
            self.findings.extend((done.request_index, f) for f in done.findings)
        if reply.document is not None:
            done.response_index = self._record(reply.document)
        self.calls.append(done)
        return done

    async def _call(self, tool: str, arguments: Mapping[str, Any]) -> ToolReply:
        client = self._held.value
        if client is None:
            return ToolReply(None, error="the connection was closed", sent=False)
        try:
            return await call_tool(client, tool, arguments, timeout=self.timeout)
        except RuntimeError:  # the SDK's "Client must be used within an async context manager": closed meanwhile
            return ToolReply(None, error="the connection was closed", sent=False)

    def _record(self, document: dict[str, Any]) -> int:
        index = len(self.transcript)
        self.transcript.append(document)
        self.findings.extend((index, f) for f in validate(document).findings)
        return index

    def checked(self) -> Transcript:
        """The transcript so far, with the transcript rules applied (as ``pgm-explore check`` does)."""
        return Transcript.from_documents(self.transcript, source="inspector")

    # -- the record ---------------------------------------------------------------------------------

    def log_lines(self) -> list[str]:
        """The log as text, one message a line: ``→`` sent to the partner, ``←`` received from it,
        and ``·`` a line the SDK logged in this process (after the messages it followed)."""
        lines = [
            f"{'→' if direction == 'sent' else '←'} {json.dumps(message, ensure_ascii=False)}"
            for direction, message in self.log
        ]
        for shift, (at, line) in enumerate(self.logged):  # each after the messages it followed
            lines.insert(at + shift, f"· {line}")
        return lines

    def save(self, path: str | os.PathLike[str]) -> tuple[Path, Path]:
        """Write the transcript as JSON Lines at ``path`` (``pgm-explore check`` reads it) and the
        JSON-RPC log beside it as ``<stem>.jsonrpc.json``; returns both paths."""
        target = Path(path)
        log_path = target.with_name(f"{target.stem}.jsonrpc.json")
        target.write_text("".join(json.dumps(m, ensure_ascii=False) + "\n" for m in self.transcript), encoding="utf-8")
        log_path.write_text(json.dumps(self.log_document(), ensure_ascii=False, indent=1) + "\n", encoding="utf-8")
        return target, log_path

    def log_document(self) -> dict[str, Any]:
        """The JSON-RPC log as one JSON document: the partner, then each connection's messages."""
        return {
            "partner": self.target,
            "transport": self.endpoint.transport,
            "connections": [
                [{"direction": direction, "message": message} for direction, message in wire.log] for wire in self.wires
            ],
            "logged": [{"after": at, "line": line} for at, line in self.logged],
        }
