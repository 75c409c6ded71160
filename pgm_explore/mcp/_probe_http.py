"""The probe's checks of the Streamable HTTP transport: status codes, headers, sessions, Host and
Origin, and the HTTP side of the MCP checks (a batch, a wrong ``jsonrpc``, an unknown method).

Every request here is the probe's own, written with ``httpx2`` (the SDK's HTTP client) so that the
probe chooses each header and reads each status: the SDK's client would not send a foreign Origin,
and it turns a status into an exception. The JSON-RPC messages received are noted on a wire of
their own, judged with the others by ``jsonrpc-responses``.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlsplit

import anyio
import httpx2
from mcp_types import HEADER_MISMATCH, METHOD_NOT_FOUND, UNSUPPORTED_PROTOCOL_VERSION
from mcp_types.version import LATEST_MODERN_VERSION

from pgm_explore.mcp._probe_base import ProbeRun
from pgm_explore.mcp._probe_protocol import (
    BOGUS_VERSION,
    NO_METHOD,
    envelope,
    guard,
    initialize,
    judge_batch,
    judge_envelope,
    judge_initialize,
    judge_version,
    live_request,
    raw_id,
)
from pgm_explore.mcp._wire import Wire

_ACCEPT = "application/json, text/event-stream"
_GRACE = 0.3
_FOREIGN = "evil.example"
_WRONG_TOKEN = "probe-not-the-token"
_BODY_CHARS = 400


@dataclass
class _Answer:
    status: int
    headers: dict[str, str]
    messages: list[Any] = field(default_factory=list)
    text: str = ""

    @property
    def content_type(self) -> str:
        return self.headers.get("content-type", "").split(";")[0].strip().lower()

    @property
    def error(self) -> dict[str, Any] | None:
        for message in self.messages:
            if isinstance(message, dict) and isinstance(message.get("error"), dict):
                return message["error"]
        return None

    @property
    def result(self) -> dict[str, Any] | None:
        for message in self.messages:
            if isinstance(message, dict) and isinstance(message.get("result"), dict):
                return message["result"]
        return None

    def evidence(self) -> dict[str, Any]:
        kept = ("content-type", "mcp-session-id", "allow", "www-authenticate")
        shown = {k: v for k, v in self.headers.items() if k in kept}
        body: Any = self.messages if self.messages else self.text[:_BODY_CHARS]
        return {"status": self.status, "headers": shown, "body": body}


@dataclass
class _Session:
    id: str | None
    version: str
    initialized: tuple[dict[str, Any], _Answer] | None = None
    """notifications/initialized as sent, and its answer."""

    def headers(self) -> dict[str, str]:
        found = {"MCP-Protocol-Version": self.version}
        if self.id is not None:
            found["Mcp-Session-Id"] = self.id
        return found


def modern_request(
    method: str, params: Mapping[str, Any] | None = None, version: str = LATEST_MODERN_VERSION
) -> tuple[dict, dict]:
    """A 2026-07-28 request and its headers (the envelope and its HTTP mirror)."""
    body = {
        "jsonrpc": "2.0",
        "id": raw_id(),
        "method": method,
        "params": {**(params or {}), "_meta": envelope(version)},
    }
    return body, {"MCP-Protocol-Version": version, "Mcp-Method": method}


class _Http:
    """The probe's own HTTP requests to one partner's MCP endpoint."""

    def __init__(self, run: ProbeRun, client: httpx2.AsyncClient, wire: Wire) -> None:
        self.run, self.client, self.wire = run, client, wire
        parts = urlsplit(run.endpoint.target)
        self.url = run.endpoint.target
        self.origin = f"{parts.scheme}://{parts.netloc}"
        self.sessions: list[str] = []

    async def send(
        self,
        method: str,
        body: Any = None,
        headers: Mapping[str, str] | None = None,
        *,
        content_type: str = "application/json",
        accept: str = _ACCEPT,
    ) -> tuple[dict[str, Any], _Answer]:
        """One HTTP request; what was sent (as evidence) and what came back."""
        sent_headers = {
            "Accept": accept,
            **({"Content-Type": content_type} if body is not None else {}),
            **(headers or {}),
        }
        content = None if body is None else json.dumps(body).encode("utf-8")
        if body is not None:
            self.wire.note_sent(body)
        shown = {"http": f"{method} {urlsplit(self.url).path or '/'}", "headers": sent_headers}
        if body is not None:
            shown["body"] = body
        async with self.client.stream(method, self.url, content=content, headers=sent_headers) as response:
            answer = _Answer(response.status_code, {k.lower(): v for k, v in response.headers.items()})
            if session := answer.headers.get("mcp-session-id"):
                self.sessions.append(session)
            if method == "GET" or response.status_code == 202:
                return shown, answer  # an SSE stream is left unread: only its status is judged
            if answer.content_type == "text/event-stream":
                await self._events(response, answer, body)
            else:
                raw = await response.aread()
                answer.text = raw.decode("utf-8", "replace")
                try:
                    decoded = json.loads(raw) if raw.strip() else None
                except (ValueError, RecursionError):
                    decoded = None
                if decoded is not None:
                    answer.messages.append(decoded)
        for message in answer.messages:
            self.wire.note_received(message)
        return shown, answer

    async def _events(self, response: httpx2.Response, answer: _Answer, body: Any) -> None:
        ident = body.get("id") if isinstance(body, dict) else None
        events = httpx2.EventSource(response).__aiter__()
        with anyio.move_on_after(self.run.timeout):
            while True:
                try:
                    event = await events.__anext__()
                except (StopAsyncIteration, httpx2.SSEError, httpx2.HTTPError):
                    return
                if event.data:
                    answer.messages.append(_loads_or(event.data))
                if any(isinstance(m, dict) and m.get("id") == ident and "method" not in m for m in answer.messages):
                    break
        with anyio.move_on_after(_GRACE):  # a second response to the same request is a fault to see
            while True:
                try:
                    event = await events.__anext__()
                except (StopAsyncIteration, httpx2.SSEError, httpx2.HTTPError):
                    return
                if event.data:
                    answer.messages.append(_loads_or(event.data))

    async def open_session(self) -> _Session | None:
        """initialize and notifications/initialized, as a client of 2025-11-25 starts."""
        _, answer = await self.send("POST", initialize())
        result = answer.result
        if answer.status != 200 or result is None:
            return None
        session = _Session(answer.headers.get("mcp-session-id"), str(result.get("protocolVersion")))
        notification = {"jsonrpc": "2.0", "method": "notifications/initialized"}
        session.initialized = await self.send("POST", notification, session.headers())
        return session

    async def opening(self, headers: Mapping[str, str], legacy: bool) -> tuple[dict[str, Any], _Answer]:
        """The request a partner serves with no session: initialize, or server/discover (2026 only)."""
        if legacy:
            return await self.send("POST", initialize(), headers)
        body, modern_headers = modern_request("server/discover")
        return await self.send("POST", body, {**modern_headers, **headers})

    async def close(self) -> None:
        for session in self.sessions:
            try:
                async with self.client.stream("DELETE", self.url, headers={"Mcp-Session-Id": session}):
                    pass
            except httpx2.HTTPError:
                pass


def _loads_or(text: str) -> Any:
    try:
        return json.loads(text)
    except (ValueError, RecursionError):
        return text  # kept as it came: jsonrpc-responses says it is not JSON-RPC


def _ok(status: int) -> bool:
    return 200 <= status < 300


# -- the checks ----------------------------------------------------------------------------------


async def _dns_rebinding(h: _Http, legacy: bool) -> None:
    sent, answer = await h.opening({"Origin": f"http://{_FOREIGN}"}, legacy)
    evidence = [sent, answer.evidence()]
    if answer.status == 403:
        h.run.part("dns-rebinding", True, f"Origin http://{_FOREIGN}: 403", evidence)
    elif _ok(answer.status):
        h.run.part(
            "dns-rebinding",
            False,
            f"a request from Origin http://{_FOREIGN} was served: no DNS-rebinding protection",
            evidence,
        )
    else:
        h.run.part(
            "dns-rebinding", False, f"Origin http://{_FOREIGN}: HTTP {answer.status}, not 403 Forbidden", evidence
        )
    sent, answer = await h.opening({"Host": _FOREIGN}, legacy)
    evidence = [sent, answer.evidence()]
    if 400 <= answer.status < 500:
        h.run.part("dns-rebinding", True, f"Host {_FOREIGN}: {answer.status}", evidence)
    else:
        said = "was served" if _ok(answer.status) else f"got HTTP {answer.status}"
        h.run.part("dns-rebinding", False, f"a request for Host {_FOREIGN} {said}, not refused (4xx)", evidence)
    sent, answer = await h.opening({"Origin": h.origin}, legacy)
    if not _ok(answer.status):
        h.run.part(
            "dns-rebinding",
            False,
            f"its own Origin {h.origin} is refused too (HTTP {answer.status})",
            [sent, answer.evidence()],
        )


async def _auth(h: _Http, legacy: bool) -> None:
    """Given a token, the probe sends the opening request without it and with another: a partner
    that asks for one serves neither (401, with a Bearer challenge)."""
    if not h.run.endpoint.token:
        h.run.part("http-auth", None, "no token given (--token-file, $PGM_EXPLORE_PARTNER_TOKEN): none to withhold")
        return
    attempts: tuple[tuple[str, dict[str, str]], ...] = (
        ("without the token", {}),
        ("with another token", {"Authorization": f"Bearer {_WRONG_TOKEN}"}),
    )
    # A client that does not send the token (the probe's own does), on a wire of its own that
    # jsonrpc-responses does not judge: a 401's body is an HTTP answer, not a JSON-RPC message.
    async with httpx2.AsyncClient(timeout=h.client.timeout) as bare:
        refused = _Http(h.run, bare, Wire("HTTP requests of the probe without the token"))
        try:
            for said, headers in attempts:
                await _unauthorized(refused, said, headers, legacy)
        finally:
            await refused.close()


async def _unauthorized(h: _Http, said: str, headers: Mapping[str, str], legacy: bool) -> None:
    """One opening request ``said`` (without the token, or with another): 401 and a Bearer challenge."""
    sent, answer = await h.opening(headers, legacy)
    evidence = [sent, answer.evidence()]
    challenge = answer.headers.get("www-authenticate", "")
    if answer.status == 401 and challenge.lower().startswith("bearer"):
        h.run.part("http-auth", True, f"{said}: 401, WWW-Authenticate: Bearer", evidence)
    elif answer.status == 401:
        h.run.part("http-auth", False, f"{said}: 401 without a WWW-Authenticate: Bearer challenge", evidence)
    elif _ok(answer.status):
        h.run.part("http-auth", False, f"a request {said} was served", evidence)
    else:
        h.run.part("http-auth", False, f"{said}: HTTP {answer.status}, not 401 Unauthorized", evidence)


async def _media_types(h: _Http, legacy: bool) -> None:
    body, extra = (initialize(), {}) if legacy else modern_request("server/discover")
    sent, answer = await h.send("POST", body, extra, accept="text/html")
    evidence = [sent, answer.evidence()]
    if answer.status == 406:
        h.run.part("http-media-types", True, "Accept: text/html: 406", evidence)
    elif _ok(answer.status):
        h.run.part(
            "http-media-types", False, "a client accepting neither JSON nor SSE was served, not told 406", evidence
        )
    else:
        h.run.part(
            "http-media-types", False, f"Accept: text/html: HTTP {answer.status}, not 406 Not Acceptable", evidence
        )
    body = initialize() if legacy else modern_request("server/discover")[0]
    sent, answer = await h.send("POST", body, extra, content_type="text/plain")
    evidence = [sent, answer.evidence()]
    if answer.status in (415, 400):
        h.run.part("http-media-types", True, f"Content-Type: text/plain: {answer.status}", evidence)
    elif _ok(answer.status):
        h.run.part("http-media-types", False, "a body sent as text/plain was served as JSON", evidence)
    else:
        h.run.part(
            "http-media-types", False, f"Content-Type: text/plain: HTTP {answer.status}, not 415 (or 400)", evidence
        )


def _status_and_code(h: _Http, check: str, sent: Any, answer: _Answer, status: int, code: int, said: str) -> None:
    """A part that wants an HTTP status and a JSON-RPC error code together."""
    got = (answer.error or {}).get("code")
    evidence = [sent, answer.evidence()]
    if answer.status == status and got == code:
        h.run.part(check, True, f"{said}: {status} and {code}", evidence)
    else:
        h.run.part(check, False, f"{said}: HTTP {answer.status} and error {got!r}, not {status} and {code}", evidence)


def _status_part(h: _Http, check: str, sent: Any, answer: _Answer, wanted: tuple[int, ...], said: str) -> bool:
    evidence = [sent, answer.evidence()]
    if answer.status in wanted:
        h.run.part(check, True, f"{said}: {answer.status}", evidence)
        return True
    what = "was served" if _ok(answer.status) else f"got HTTP {answer.status}"
    h.run.part(check, False, f"{said} {what}, not {' or '.join(map(str, wanted))}", evidence)
    return False


async def _session(h: _Http, session: _Session | None) -> None:
    if session is None:
        h.run.part("http-session", False, "initialize over HTTP got no result")
        return
    if session.id is None:
        h.run.part("http-session", None, "initialize gave no Mcp-Session-Id: the server keeps no session (MAY)")
        return
    if not (session.id and all(0x21 <= ord(c) <= 0x7E for c in session.id)):
        h.run.part("http-session", False, f"the session id {session.id!r} is not visible ASCII (0x21-0x7E)")
    if session.initialized is not None:
        _status_part(h, "http-session", *session.initialized, (202,), "notifications/initialized")
    ping = live_request(False)
    sent, answer = await h.send("POST", ping, {"MCP-Protocol-Version": session.version})
    _status_part(h, "http-session", sent, answer, (400,), "a request without its Mcp-Session-Id")
    sent, answer = await h.send(
        "POST", live_request(False), {**session.headers(), "Mcp-Session-Id": "probe-no-such-session"}
    )
    _status_part(h, "http-session", sent, answer, (404, 400), "a request with an unknown Mcp-Session-Id")
    async with h.client.stream("DELETE", h.url, headers=session.headers()) as response:
        deleted = _Answer(response.status_code, {k.lower(): v for k, v in response.headers.items()})
    shown = {"http": "DELETE", "headers": session.headers()}
    if deleted.status == 405:
        h.run.part(
            "http-session",
            None,
            "DELETE: 405, the server does not let clients end sessions (MAY)",
            [shown, deleted.evidence()],
        )
        return
    if not _ok(deleted.status):
        h.run.part(
            "http-session",
            False,
            f"DELETE of the session: HTTP {deleted.status}, not 2xx or 405",
            [shown, deleted.evidence()],
        )
        return
    if session.id in h.sessions:
        h.sessions.remove(session.id)  # ended already
    sent, answer = await h.send("POST", live_request(False), session.headers())
    _status_part(h, "http-session", sent, answer, (404,), "a request in the session after its DELETE")


async def _protocol_version(h: _Http, session: _Session | None, modern: bool) -> None:
    if session is not None:
        sent, answer = await h.send(
            "POST", live_request(False), {**session.headers(), "MCP-Protocol-Version": BOGUS_VERSION}
        )
        _status_part(
            h, "http-protocol-version", sent, answer, (400,), f"MCP-Protocol-Version: {BOGUS_VERSION} in a session"
        )
    if modern:
        body, headers = modern_request("server/discover")
        sent, answer = await h.send("POST", body, {**headers, "Mcp-Method": "tools/list"})
        said = "Mcp-Method tools/list on a server/discover body"
        _status_and_code(h, "http-protocol-version", sent, answer, 400, HEADER_MISMATCH, said)


async def _get(h: _Http, session: _Session | None, modern: bool) -> None:
    if session is not None:
        sent, answer = await h.send("GET", None, {**session.headers()}, accept="text/event-stream")
        evidence = [sent, answer.evidence()]
        if answer.status == 405 or (answer.status == 200 and answer.content_type == "text/event-stream"):
            h.run.part(
                "http-get", True, f"GET in the session: {answer.status} {answer.content_type}".rstrip(), evidence
            )
        else:
            h.run.part(
                "http-get",
                False,
                f"GET in the session: HTTP {answer.status} {answer.content_type}, not an SSE stream or 405",
                evidence,
            )
        sent, answer = await h.send(
            "GET", None, {**session.headers(), "Last-Event-ID": "probe-event-0"}, accept="text/event-stream"
        )
        evidence = [sent, answer.evidence()]
        if (answer.status == 200 and answer.content_type == "text/event-stream") or 400 <= answer.status < 500:
            h.run.part("http-get", True, f"GET with Last-Event-ID: {answer.status}", evidence)
        else:
            h.run.part(
                "http-get",
                False,
                f"GET with an unknown Last-Event-ID: HTTP {answer.status}, not a replay or a clean 4xx",
                evidence,
            )
    if modern:
        sent, answer = await h.send(
            "GET", None, {"MCP-Protocol-Version": LATEST_MODERN_VERSION}, accept="text/event-stream"
        )
        evidence = [sent, answer.evidence()]
        if 400 <= answer.status < 500:
            h.run.part("http-get", True, f"GET with protocol 2026-07-28: {answer.status}", evidence)
        else:
            h.run.part(
                "http-get",
                False,
                f"GET with protocol 2026-07-28 (no GET stream in that revision): HTTP {answer.status}, not 405",
                evidence,
            )


async def _version_negotiation(h: _Http, legacy: bool, modern: bool) -> None:
    if legacy:
        message = initialize(BOGUS_VERSION)
        sent, answer = await h.send("POST", message)
        judge_initialize(h.run, sent, answer.messages[0] if answer.messages else None, "over HTTP")
    if modern:
        body, headers = modern_request("server/discover", version=BOGUS_VERSION)
        sent, answer = await h.send("POST", body, headers)
        said = f"server/discover at {BOGUS_VERSION} over HTTP"
        _status_and_code(h, "version-negotiation", sent, answer, 400, UNSUPPORTED_PROTOCOL_VERSION, said)


async def _jsonrpc_faults(h: _Http, session: _Session | None, modern: bool) -> None:
    eras: list[tuple[str, dict[str, str], bool]] = []
    if session is not None:
        eras.append(("over HTTP, in a session", session.headers(), False))
    if modern:
        eras.append(("over HTTP, 2026-07-28", modern_request("server/discover")[1], True))
    for where, headers, is_modern in eras:
        element = live_request(is_modern)
        sent, answer = await h.send("POST", [element], headers)
        evidence = [sent, answer.evidence()]
        judge_batch(h.run, [element], answer.messages, True, where, evidence)
        if answer.status != 400:
            h.run.part("batch-rejected", False, f"{where}: the batch got HTTP {answer.status}, not 400", evidence)
        message = {**live_request(is_modern), "jsonrpc": "1.0"}
        sent, answer = await h.send("POST", message, headers)
        evidence = [sent, answer.evidence()]
        judge_version(h.run, message, answer.messages, True, where, evidence)
        if answer.status != 400:
            h.run.part(
                "jsonrpc-version", False, f'{where}: "jsonrpc": "1.0" got HTTP {answer.status}, not 400', evidence
            )
    if modern:
        body, headers = modern_request(NO_METHOD)
        sent, answer = await h.send("POST", body, headers)
        said = f"over HTTP, 2026-07-28: {NO_METHOD}"
        _status_and_code(h, "unknown-method", sent, answer, 404, METHOD_NOT_FOUND, said)
        body, headers = modern_request("tools/list")
        del body["params"]["_meta"]
        sent, answer = await h.send("POST", body, headers)
        judge_envelope(h.run, sent, answer.messages[0] if answer.messages else None, "over HTTP", answer.status)


async def http_checks(run: ProbeRun) -> None:
    """Every HTTP part, on requests of the probe's own; sessions it opened are ended after."""
    legacy = run.results["handshake-legacy"].status == "pass"
    modern = "discover" in run.facts
    wire = Wire("HTTP requests of the probe")
    run.wires.append(wire)
    # The token goes on the client, not on each request: the evidence quotes a request's own headers.
    bearer = {"Authorization": f"Bearer {run.endpoint.token}"} if run.endpoint.token else None
    async with httpx2.AsyncClient(timeout=httpx2.Timeout(run.timeout), headers=bearer) as client:
        h = _Http(run, client, wire)
        try:
            await guard(run, "dns-rebinding", _dns_rebinding(h, legacy))
            await guard(run, "http-auth", _auth(h, legacy))
            await guard(run, "http-media-types", _media_types(h, legacy))
            session = await h.open_session() if legacy else None
            await guard(run, "batch-rejected", _jsonrpc_faults(h, session, modern))
            await guard(run, "version-negotiation", _version_negotiation(h, legacy, modern))
            await guard(run, "http-protocol-version", _protocol_version(h, session, modern))
            await guard(run, "http-get", _get(h, session, modern))
            if legacy:
                await guard(run, "http-session", _session(h, session))
            else:
                run.part("http-session", None, "speaks no initialize handshake: no session")
        finally:
            await h.close()
