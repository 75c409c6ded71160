"""What the SDK's transports let through that JSON-RPC 2.0 and MCP refuse, refused at the door.

A JSON-RPC batch (an array; MCP 2025-06-18 on removed batching) and a request that is not
``"jsonrpc": "2.0"`` are Invalid Request, -32600 (JSON-RPC 2.0, section 5.1): the SDK answers
them over HTTP with -32602 and a pydantic dump, over stdio not at all. A ``GET`` with
``Last-Event-ID`` asks for a replay our servers cannot give (no event store): a clean 400, where
the SDK fails with 500.

Over HTTP the door is the SDK's own parts, in this order: its bearer-token middleware when a token
is set (401 before anything is read), its body-size limit (413; never more than ``max_body`` bytes
held), then the checks above on the body it read.
"""

from __future__ import annotations

import hmac
import json
from collections.abc import AsyncIterator, Awaitable, Callable, MutableMapping
from typing import Any

from mcp.server.auth.middleware.bearer_auth import BearerAuthBackend, RequireAuthMiddleware
from mcp.server.auth.provider import AccessToken
from mcp.server.transport_security import DEFAULT_MAX_REQUEST_BODY_SIZE, RequestBodyLimitMiddleware
from starlette.middleware.authentication import AuthenticationMiddleware

__all__ = ["GuardedHTTP", "StaticToken", "guarded_lines", "invalid_request"]

INVALID_REQUEST = -32600


def invalid_request(raw: Any) -> dict[str, Any] | None:
    """The -32600 error for a decoded message JSON-RPC 2.0 refuses, else None.

    >>> invalid_request([{"jsonrpc": "2.0", "id": 1, "method": "ping"}])["error"]["code"]
    -32600
    >>> invalid_request({"jsonrpc": "1.0", "id": 7, "method": "ping"})["id"]
    7
    >>> invalid_request({"jsonrpc": "2.0", "id": 1, "method": "ping"}) is None
    True
    """
    if isinstance(raw, list):
        said = "a JSON-RPC batch (an array) is not accepted: send one request per message"
        return {"jsonrpc": "2.0", "id": None, "error": {"code": INVALID_REQUEST, "message": f"Invalid Request: {said}"}}
    if isinstance(raw, dict) and raw.get("jsonrpc") != "2.0":
        ident = raw.get("id")
        ident = ident if isinstance(ident, (str, int)) and not isinstance(ident, bool) else None
        said = f'"jsonrpc" must be "2.0", not {json.dumps(raw.get("jsonrpc"))}'
        return {
            "jsonrpc": "2.0",
            "id": ident,
            "error": {"code": INVALID_REQUEST, "message": f"Invalid Request: {said}"},
        }
    return None


def _refusal(line: str) -> dict[str, Any] | None:
    try:
        raw = json.loads(line)
    except ValueError:
        return None  # the SDK's own parse error handling
    return invalid_request(raw)


async def guarded_lines(
    lines: AsyncIterator[str], refuse: Callable[[dict[str, Any]], Awaitable[None]]
) -> AsyncIterator[str]:
    """The stdio lines the SDK may read; each refused one is answered through ``refuse``."""
    async for line in lines:
        error = _refusal(line) if line.strip() else None
        if error is None:
            yield line
        else:
            await refuse(error)


class StaticToken:
    """The SDK's TokenVerifier for one shared secret, compared in constant time."""

    def __init__(self, token: str) -> None:
        self._token = token.encode("utf-8")

    async def verify_token(self, token: str) -> AccessToken | None:
        if hmac.compare_digest(token.encode("utf-8", "replace"), self._token):
            return AccessToken(token="", client_id="pgm-explore-bearer", scopes=[])
        return None


class GuardedHTTP:
    """ASGI middleware in front of the streamable HTTP app: bearer token, body bound, batch,
    non-2.0 and Last-Event-ID (lifespan and other scopes go straight to the app)."""

    def __init__(self, app: Any, *, token: str | None = None, max_body: int = DEFAULT_MAX_REQUEST_BODY_SIZE) -> None:
        self.app = app
        door: Any = RequestBodyLimitMiddleware(self._checked, max_body)
        if token is not None:
            door = AuthenticationMiddleware(
                RequireAuthMiddleware(door, []), backend=BearerAuthBackend(StaticToken(token))
            )
        self._door = door

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        await self._door(scope, receive, send)

    async def _checked(self, scope: MutableMapping[str, Any], receive: Any, send: Any) -> None:
        method = scope.get("method")
        headers = {k.lower(): v for k, v in scope.get("headers", [])}
        if method == "GET" and b"last-event-id" in headers:
            said = "this server keeps no event store: there is no stream to resume; open a new GET"
            await _answer(
                send, 400, {"jsonrpc": "2.0", "id": None, "error": {"code": INVALID_REQUEST, "message": said}}
            )
            return
        if method != "POST":
            await self.app(scope, receive, send)
            return
        # The body limit in front replays what it read (at most max_body bytes) as one message.
        first = await receive()
        body = first.get("body", b"") if first["type"] == "http.request" else b""
        error = _refusal(body.decode("utf-8", "replace")) if not first.get("more_body", False) else None
        if error is not None:
            await _answer(send, 400, error)
            return
        held = [first]

        async def again() -> Any:
            return held.pop() if held else await receive()

        await self.app(scope, again, send)

    def __getattr__(self, name: str) -> Any:  # lifespan, routes and state of the wrapped Starlette app
        return getattr(self.app, name)


async def _answer(send: Any, status: int, payload: dict[str, Any]) -> None:
    body = json.dumps(payload).encode()
    headers = [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())]
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": body})
