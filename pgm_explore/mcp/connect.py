"""Reaching any partner server: by URL (streamable HTTP) or by command (stdio), and reading its answers.

``--partner dac=URL|CMD``: a value starting with ``http://`` or ``https://`` is a streamable-HTTP URL;
anything else is a command line, split as a POSIX shell would split it (:func:`shlex.split`) but not run
through a shell, and started as a stdio server with the caller's environment, as a shell would start it
(the SDK's stdio client passes only an allow-list of variables), plus the ``env`` of the endpoint
(``--env KEY=VALUE``). :func:`call_tool` reads a tool result the way the binding (docs/mcp.md) allows,
without trusting it: the Response from ``structuredContent``, or from the text when there is none, and
every way the exchange can go wrong as a finding rather than an exception.

A partner served beyond loopback asks for a bearer token (``python -m pgm_explore.mcp.serve ... --host
0.0.0.0``): :attr:`Endpoint.token` is sent as ``Authorization: Bearer TOKEN`` on every HTTP request,
through an ``httpx2.AsyncClient`` handed to the SDK's ``streamable_http_client`` (the SDK's documented way
to add a header), with the SDK's own timeouts. It is never read from the
environment here: a page that lets a visitor type a URL must not send the server's secret to it;
the command line reads ``$PGM_EXPLORE_PARTNER_TOKEN`` (:data:`TOKEN_ENV`) for the URLs its user gave.
A partner that answers 401 is :class:`TokenRequired`, with the fix in words.
"""

from __future__ import annotations

import json
import os
import shlex
from collections.abc import AsyncIterator, Mapping
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from typing import Any

import anyio
import httpx2
from mcp import Client, types
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.exceptions import MCPError
from mcp_types import CONNECTION_CLOSED, REQUEST_TIMEOUT

from pgm_explore.errors import PgmExploreError
from pgm_explore.mcp._sdk import InMemoryTransport, TransportStreams
from pgm_explore.mcp._wire import Wire, stdio_transport, tapped
from pgm_explore.validation.findings import Finding

__all__ = [
    "ROLES",
    "Endpoint",
    "TOKEN_ENV",
    "PartnerArgumentError",
    "TokenRequired",
    "ToolReply",
    "call_tool",
    "parse_env",
    "parse_partner",
    "timed_out",
]

# The timeouts the SDK gives its own HTTP client (mcp 2.3.0, mcp.shared._httpx_utils): 30 s to connect,
# write and wait for the pool, 300 s to read, because a partner may hold a response stream open.
_HTTP_TIMEOUT = httpx2.Timeout(30.0, read=300.0)

ROLES = {"prc": "BKN-PRC", "dac": "BKN-DAC", "pal": "BKN-PAL"}
"""``--partner`` role -> the data type its tool answers."""

TOKEN_ENV = "PGM_EXPLORE_PARTNER_TOKEN"
"""The variable a partner served beyond loopback reads its bearer token from, and the command line
reads the token it sends to URL partners from (``--token-file FILE`` instead, when given)."""


class PartnerArgumentError(PgmExploreError, ValueError):
    """A ``--partner`` value that cannot be used; the message says why in plain words."""


class TokenRequired(PgmExploreError):
    """A partner answered 401: it asks for a bearer token, or refused the one sent; the message names the fix.

    >>> print(TokenRequired("http://192.0.2.7:8000/mcp", sent=False))
    the partner at http://192.0.2.7:8000/mcp asks for a bearer token: set PGM_EXPLORE_PARTNER_TOKEN or give --token-file FILE (in Python: Endpoint(URL, token=TOKEN))
    """

    def __init__(self, url: str, *, sent: bool) -> None:
        self.url, self.sent = url, sent
        self.reason = "refused the bearer token sent (401)" if sent else "asks for a bearer token"
        """What the partner did, in words, without the fix."""
        fix = f"{TOKEN_ENV} or give --token-file FILE (in Python: Endpoint(URL, token=TOKEN))"
        super().__init__(f"the partner at {url} {self.reason}: {'check' if sent else 'set'} {fix}")


@asynccontextmanager
async def bearer_http(url: str, token: str | None) -> AsyncIterator[TransportStreams]:
    """The SDK's streamable HTTP transport, on an HTTP client that sends ``token``
    (``Authorization: Bearer``) with every request; a connection the partner refused with 401 raises
    :class:`TokenRequired` instead of the SDK's "Server returned an error response"."""
    refused: list[int] = []

    async def note(response: Any) -> None:
        if response.status_code == 401:
            refused.append(401)

    headers = {"Authorization": f"Bearer {token}"} if token else None
    async with httpx2.AsyncClient(headers=headers, timeout=_HTTP_TIMEOUT) as http:
        http.event_hooks["response"].append(note)
        try:
            async with streamable_http_client(url, http_client=http) as streams:
                yield streams
        except Exception as exc:
            if refused:
                raise TokenRequired(url, sent=bool(token)) from exc
            raise


@dataclass(frozen=True)
class Endpoint:
    """Where a partner server is: ``target`` is a URL or a command line.

    ``server``: an ``MCPServer`` in this process instead (``target`` then only names it), for
    notebooks and tests that probe a server without starting one.
    """

    target: str
    server: Any = field(default=None, compare=False, repr=False)
    env: Mapping[str, str] = field(default_factory=dict, compare=False, repr=False)
    """Variables added to the caller's environment for a command (``--env KEY=VALUE``)."""
    token: str | None = field(default=None, compare=False, repr=False)
    """The bearer token sent to a URL (``Authorization: Bearer TOKEN``); None or empty: none."""

    @property
    def is_url(self) -> bool:
        return self.target.startswith(("http://", "https://"))

    @property
    def argv(self) -> list[str]:
        """The command line as a list (only for a command)."""
        return shlex.split(self.target)

    @property
    def transport(self) -> str:
        return "inprocess" if self.server is not None else "http" if self.is_url else "stdio"

    @property
    def environment(self) -> dict[str, str]:
        """What a command runs with: this process's environment, then :attr:`env`."""
        return {**os.environ, **self.env}

    def client(self, *, mode: str = "auto", timeout: float | None = None, wire: Wire | None = None) -> Client:
        """An unopened MCP client of this partner (``mode="legacy"``: the initialize handshake).

        ``wire`` records the messages as they were sent and received; a command's stderr is then
        kept there, to be quoted. A server in this process is then reached over the SDK's in-memory
        JSON-RPC streams (not its direct per-request path, which has no messages to record). No
        response cache: every read reaches the partner.
        """
        if self.server is not None:
            if wire is not None:
                # The SDK's own in-memory transport (the one Client(server, mode="legacy") uses), tapped.
                return Client(
                    tapped(InMemoryTransport(self.server), wire), mode=mode, read_timeout_seconds=timeout, cache=None
                )
            return Client(self.server, mode=mode, read_timeout_seconds=timeout, cache=None)
        if self.is_url:
            http = bearer_http(self.target, self.token)
            transport: Any = tapped(http, wire) if wire is not None else http
        else:
            wire = wire if wire is not None else Wire(self.target, capture_stderr=False)
            transport = stdio_transport(self.argv, self.environment, wire)
        return Client(transport, mode=mode, read_timeout_seconds=timeout, cache=None)


def parse_env(values: list[str]) -> dict[str, str]:
    """``--env KEY=VALUE`` values as a mapping; raises PartnerArgumentError.

    >>> parse_env(["FAULT=slow", "EMPTY="])
    {'FAULT': 'slow', 'EMPTY': ''}
    >>> parse_env(["=x"])
    Traceback (most recent call last):
    ...
    pgm_explore.mcp.connect.PartnerArgumentError: --env =x: expected KEY=VALUE with a KEY
    """
    found = {}
    for value in values:
        key, sep, rest = value.partition("=")
        if not sep or not key or "\0" in value:
            raise PartnerArgumentError(f"--env {value}: expected KEY=VALUE with a KEY")
        found[key] = rest
    return found


def parse_partner(value: str) -> tuple[str, Endpoint]:
    """``ROLE=URL|CMD`` -> (role, endpoint); raises PartnerArgumentError.

    >>> parse_partner("dac=http://127.0.0.1:8000/mcp")
    ('dac', Endpoint(target='http://127.0.0.1:8000/mcp'))
    >>> parse_partner("pal=python -m my_partner --profile 'my profile.json'")[1].argv
    ['python', '-m', 'my_partner', '--profile', 'my profile.json']
    >>> parse_partner("dac")
    Traceback (most recent call last):
    ...
    pgm_explore.mcp.connect.PartnerArgumentError: --partner dac: expected ROLE=URL or ROLE=COMMAND, ROLE one of prc, dac, pal
    """
    role, sep, target = value.partition("=")
    role = role.strip()
    if not sep or role not in ROLES:
        raise PartnerArgumentError(
            f"--partner {value}: expected ROLE=URL or ROLE=COMMAND, ROLE one of {', '.join(ROLES)}"
        )
    target = target.strip()
    if not target:
        raise PartnerArgumentError(f"--partner {value}: no URL or command after {role}=")
    endpoint = Endpoint(target)
    if not endpoint.is_url:
        try:
            argv = endpoint.argv
        except ValueError as exc:  # an unclosed quote
            raise PartnerArgumentError(f"--partner {value}: the command cannot be split: {exc}") from None
        if not argv:
            raise PartnerArgumentError(f"--partner {value}: no command after {role}=")
    return role, endpoint


@dataclass
class ToolReply:
    """What one ``tools/call`` gave: a Response to read (or None) and the findings about the exchange."""

    document: dict[str, Any] | None
    """The Response as received: structuredContent, or the JSON object of the text content."""
    structured: bool = False
    text: str | None = None
    is_error: bool = False
    error: str | None = None
    """The tool error's text, or the JSON-RPC error, when there is no Response."""
    findings: list[Finding] = field(default_factory=list)
    timed_out: bool = False
    """No answer came within the time the call waits (``error`` names the limit)."""
    sent: bool = True
    """False when the call never left this process (the connection was closed already)."""

    @property
    def partner_findings(self) -> list[dict[str, Any]]:
        """The findings a refusing reference partner put in its tool error text (``{"findings": [...]}``)."""
        if not self.is_error or not self.text or "{" not in self.text:
            return []
        try:
            found = json.loads(self.text[self.text.index("{") :]).get("findings", [])
        except (ValueError, AttributeError):
            return []
        return [f for f in found if isinstance(f, dict)] if isinstance(found, list) else []


def _text_of(result: types.CallToolResult) -> str | None:
    texts = [c.text for c in result.content if isinstance(c, types.TextContent)]
    return "".join(texts) if texts else None


def read_result(result: types.CallToolResult, path: tuple[str | int, ...] = ()) -> ToolReply:
    """The Response in a tool result, and the findings of reading it."""
    text = _text_of(result)
    if result.is_error:
        shown = (text or "no text")[:500]
        finding = Finding.of("partner-refused", path, f"the partner answered with a tool error: {shown}")
        return ToolReply(None, text=text, is_error=True, error=text, findings=[finding])
    if isinstance(result.structured_content, dict):
        return ToolReply(dict(result.structured_content), structured=True, text=text)
    try:
        parsed = json.loads(text) if text is not None else None
    except (ValueError, RecursionError):
        parsed = None
    if isinstance(parsed, dict):
        finding = Finding.of(
            "partner-text-only",
            path,
            "the result has no structuredContent; the Response was read from its text",
        )
        return ToolReply(parsed, text=text, findings=[finding])
    shown = "no content" if text is None else f"text {text[:80]!r}"
    finding = Finding.of("partner-unreadable", path, f"the result holds no JSON object ({shown})")
    return ToolReply(None, text=text, findings=[finding])


async def call_tool(
    client: Client,
    name: str,
    arguments: Mapping[str, Any],
    *,
    timeout: float | None = None,
    path: tuple[str | int, ...] = (),
) -> ToolReply:
    """Call ``name`` and read its result; never raises for what the partner does (a finding instead).

    The SDK's ``call_tool`` raises when a result does not match the declared ``outputSchema``; here the
    result is read as it came, because a non-conforming Response is a finding of the validator beside
    the message, not a reason to lose it.
    """
    request = types.CallToolRequest(params=types.CallToolRequestParams(name=name, arguments=dict(arguments)))
    try:
        result = await client.session.send_request(request, types.CallToolResult, request_read_timeout_seconds=timeout)
    except MCPError as exc:
        if timed_out(exc) and timeout is not None:
            said = f"no answer within {timeout:g} s"
        elif exc.code == CONNECTION_CLOSED:
            said = f"the connection closed ({exc.message})"
        else:
            said = f"JSON-RPC error {exc.error.code}: {exc.error.message}"
        finding = Finding.of("partner-error", path, said)
        return ToolReply(None, error=said, findings=[finding], timed_out=timed_out(exc))
    except (anyio.ClosedResourceError, anyio.BrokenResourceError, anyio.EndOfStream, OSError) as exc:
        # The session could not write the request: the partner never saw it.
        finding = Finding.of("partner-error", path, f"the connection failed: {exc or type(exc).__name__}")
        return ToolReply(None, error=str(exc) or type(exc).__name__, findings=[finding], sent=False)
    return read_result(result, path)


def timed_out(exc: BaseException) -> bool:
    """Whether ``exc`` is the SDK's own timeout (a local error it words like a JSON-RPC one)."""
    return isinstance(exc, TimeoutError) or (
        isinstance(exc, MCPError) and exc.code == REQUEST_TIMEOUT and exc.message.endswith("timed out")
    )
