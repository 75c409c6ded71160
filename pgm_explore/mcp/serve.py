"""Run one partner server: ``python -m pgm_explore.mcp.serve PARTNER [--source FILE] [--http --port N]``.

PARTNER is ``prompt-creation``, ``domain-access`` or ``personality-alignment``; FILE its scenario,
domain or profile (default: the market files that come with the package). Without ``--http`` the server
speaks stdio; with it, streamable HTTP at ``http://HOST:PORT/mcp`` (HOST defaults to 127.0.0.1: loopback).

Who can reach what over HTTP (docs/mcp.md, "Serving the partners over HTTP"):

* on loopback the SDK checks the Host and Origin headers (DNS-rebinding protection); a ``--token``
  given is required there too (``$PGM_EXPLORE_PARTNER_TOKEN`` is not read there);
* on any other address every request must carry ``Authorization: Bearer TOKEN`` (``--token``, else
  ``$PGM_EXPLORE_PARTNER_TOKEN``, else one made now and printed on stderr): the SDK's own bearer
  middleware answers 401 without it, before the body is read. The Host and Origin checks stay on for
  the address given and the names passed with ``--allow-host`` (on a wildcard address such as
  0.0.0.0, only with ``--allow-host``);
* a session that sends nothing for ``--idle-timeout`` seconds ends, and its dialogues with it; the
  partner holds at most ``--max-state-bytes``; a body over MAX_BODY_BYTES is refused (413) unread.
"""

from __future__ import annotations

import argparse
import io
import os
import secrets
import sys
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import replace
from typing import IO, Any

import anyio
from mcp.server import MCPServer
from mcp.server.stdio import stdio_server
from mcp.server.transport_security import TransportSecuritySettings
from mcp.shared.message import SessionMessage
from mcp.types import jsonrpc_message_adapter

from pgm_explore.mcp import _common
from pgm_explore.mcp._guard import GuardedHTTP, guarded_lines
from pgm_explore.mcp.connect import TOKEN_ENV
from pgm_explore.mcp.servers import domain_access_server, personality_alignment_server, prompt_creation_server

__all__ = [
    "FACTORIES",
    "IDLE_TIMEOUT",
    "MAX_BODY_BYTES",
    "MAX_SESSIONS",
    "TOKEN_ENV",
    "http_app",
    "main",
    "transport_security",
]

FACTORIES = {
    "prompt-creation": prompt_creation_server,
    "domain-access": domain_access_server,
    "personality-alignment": personality_alignment_server,
}
_LOOPBACK = ("127.0.0.1", "localhost", "::1")
_WILDCARD = ("0.0.0.0", "::", "")

IDLE_TIMEOUT = 600.0
"""Seconds a session may stay silent before it ends (``--idle-timeout``; the SDK's default is 30 min)."""
MAX_SESSIONS = 1000
"""MCP sessions open at once over HTTP; the SDK answers 503 to one more (its default is 10,000)."""
MAX_BODY_BYTES = 4 * _common.MAX_REQUEST_BYTES
"""The largest HTTP request body read (413 beyond it, unread): room for a Request of MAX_REQUEST_BYTES,
its JSON-RPC envelope and a client's ``\\uXXXX`` escapes; the partner's own check (a tool error) says more."""


def transport_security(
    host: str, allowed: Sequence[str], err: IO[str], port: int = 8000
) -> TransportSecuritySettings | None:
    """The Host/Origin checks for ``host``: the SDK's own on loopback (None), else the address itself
    (unless a wildcard such as 0.0.0.0) and the names ``allowed``; none at all on a wildcard address
    without ``allowed``, which ``err`` is told.

    >>> import io; err = io.StringIO()
    >>> transport_security("0.0.0.0", [], err) is None, "protection) are OFF" in err.getvalue()
    (True, True)
    >>> transport_security("0.0.0.0", ["partner.example:8000"], err).allowed_hosts
    ['partner.example:8000']
    >>> transport_security("192.0.2.7", [], err, 8000).allowed_hosts
    ['192.0.2.7:8000']
    """
    names = list(allowed)
    if host not in _LOOPBACK and host not in _WILDCARD:
        names.insert(0, f"[{host}]:{port}" if ":" in host else f"{host}:{port}")
    if names:
        origins = [f"{scheme}://{name}" for name in names for scheme in ("http", "https")]
        return TransportSecuritySettings(
            enable_dns_rebinding_protection=True, allowed_hosts=names, allowed_origins=origins
        )
    if host not in _LOOPBACK:
        err.write(
            f"NOTE: serving on {host}: the Host and Origin header checks (DNS-rebinding protection) are OFF, "
            "as no name of this server is known; every request still needs the bearer token. Keep the checks "
            "with --allow-host NAME[:PORT] (repeatable), the names clients use to reach this server.\n"
        )
        err.flush()
    return None


def bearer_token(host: str, given: str | None, err: IO[str]) -> str | None:
    """The token every request must carry: ``given``; beyond loopback, else ``$PGM_EXPLORE_PARTNER_TOKEN``,
    else a new one, printed on ``err`` (the only place it is written). (The variable is not read on
    loopback: the client's own ``http`` transport starts loopback servers that inherit it.)

    >>> import io; err = io.StringIO()
    >>> bearer_token("127.0.0.1", None, err) is None
    True
    >>> len(bearer_token("0.0.0.0", None, err)) > 30, "Authorization: Bearer" in err.getvalue()
    (True, True)
    """
    token = given if given is not None or host in _LOOPBACK else os.environ.get(TOKEN_ENV) or None
    if token is not None and not token.strip():
        raise SystemExit("--token: the token must not be empty")
    if token is None and host not in _LOOPBACK:
        token = secrets.token_urlsafe(32)
        err.write(f"Bearer token for this server (send 'Authorization: Bearer TOKEN'): {token}\n")
    if host not in _LOOPBACK:
        err.write(
            f"Serving on {host}, beyond this machine: anyone who can reach the port can try; only requests "
            "carrying the bearer token are served (401 otherwise).\n"
        )
    err.flush()
    return token


def _positive(kind: type[int] | type[float]) -> Any:
    def parse(text: str) -> int | float:
        value = kind(text)
        if not value > 0 or value != value or value == float("inf"):
            raise argparse.ArgumentTypeError(f"must be a positive number, not {text}")
        return value

    parse.__name__ = kind.__name__  # argparse names the type in its error message
    return parse


HttpServing = Callable[[MCPServer, str, int, TransportSecuritySettings | None, str | None, float], Awaitable[None]]
"""What serves ``--http``: the server, host, port, Host/Origin settings, bearer token, idle timeout."""


def main(argv: Sequence[str] | None = None, *, serve_http: HttpServing | None = None) -> None:
    """Serve the partner the command line ``argv`` names, over stdio or (``--http``) by ``serve_http``
    (default: uvicorn with :func:`http_app`; a host that runs its own event loop or sockets passes
    its own, and the tests one that records what it was given)."""
    parser = argparse.ArgumentParser(
        prog="python -m pgm_explore.mcp.serve",
        description=__doc__.split("\n")[0],
        epilog="Over HTTP beyond loopback every request needs the bearer token, and the Host/Origin checks "
        "keep to the names given; see docs/mcp.md, 'Serving the partners over HTTP: who can reach what'.",
    )
    parser.add_argument("partner", choices=sorted(FACTORIES))
    parser.add_argument("--source", help="scenario, domain or profile JSON file")
    parser.add_argument("--http", action="store_true", help="streamable HTTP instead of stdio")
    parser.add_argument(
        "--host", default="127.0.0.1", help="address to listen on (default 127.0.0.1: this machine only)"
    )
    parser.add_argument("--port", type=int, default=8000, help="port to listen on (default 8000)")
    parser.add_argument(
        "--allow-host",
        action="append",
        default=[],
        metavar="NAME[:PORT]",
        help="keep the Host/Origin checks, accepting this Host (repeatable; e.g. partner.example:8000, or name:*)",
    )
    parser.add_argument(
        "--token",
        help=f"bearer token every HTTP request must carry (beyond loopback the default is ${TOKEN_ENV}, "
        "else one made and printed on stderr)",
    )
    parser.add_argument(
        "--idle-timeout",
        type=_positive(float),
        default=IDLE_TIMEOUT,
        metavar="SECONDS",
        help=f"end an HTTP session, and its dialogues, after this long without a request (default {IDLE_TIMEOUT:g})",
    )
    parser.add_argument(
        "--max-state-bytes",
        type=_positive(int),
        default=_common.MAX_STATE_BYTES,
        metavar="BYTES",
        help=f"what the partner may hold for all its dialogues (default {_common.MAX_STATE_BYTES}); "
        f"per dialogue {_common.MAX_DIALOGUE_BYTES}, per session {_common.MAX_SESSION_BYTES}",
    )
    args = parser.parse_args(argv)
    server = FACTORIES[args.partner](args.source)
    partner = server.partner  # type: ignore[attr-defined]
    partner.limits = replace(partner.limits, state_bytes=args.max_state_bytes)
    if args.http:
        security = transport_security(args.host, args.allow_host, sys.stderr, args.port)
        token = bearer_token(args.host, args.token, sys.stderr)
        anyio.run(serve_http or _serve_http, server, args.host, args.port, security, token, args.idle_timeout)
    else:
        anyio.run(_serve_stdio, server)


async def _serve_stdio(server: MCPServer) -> None:
    """The SDK's stdio server, reading through the guard (batch and non-2.0 answered -32600)."""
    stdin = anyio.wrap_file(io.TextIOWrapper(sys.stdin.buffer, encoding="utf-8", errors="replace"))
    stdout = anyio.wrap_file(io.TextIOWrapper(sys.stdout.buffer, encoding="utf-8"))
    writer: list[Any] = []

    async def refuse(error: dict[str, Any]) -> None:
        await writer[0].send(SessionMessage(jsonrpc_message_adapter.validate_python(error, by_name=False)))

    async with stdio_server(stdin=guarded_lines(stdin, refuse), stdout=stdout) as (read_stream, write_stream):  # type: ignore[arg-type]
        writer.append(write_stream)
        lowlevel = server._lowlevel_server
        await lowlevel.run(read_stream, write_stream, lowlevel.create_initialization_options())


def http_app(
    server: MCPServer,
    host: str = "127.0.0.1",
    security: TransportSecuritySettings | None = None,
    token: str | None = None,
    idle_timeout: float = IDLE_TIMEOUT,
    max_sessions: int = MAX_SESSIONS,
) -> GuardedHTTP:
    """The ASGI app ``--http`` serves: the SDK's streamable HTTP app (its Host/Origin checks, its
    session idle timeout, at most ``max_sessions`` sessions open at once (default MAX_SESSIONS;
    503 to one more) and MAX_BODY_BYTES a body) behind the guard (a bearer token when one is
    given, then the body bound, then batch and version)."""
    app = server.streamable_http_app(
        transport_security=security,
        host=host,
        session_idle_timeout=idle_timeout,
        max_sessions=max_sessions,
        max_request_body_size=MAX_BODY_BYTES,
    )
    # Dialogues of clients without an MCP session (the stateless protocol) expire after the same time.
    server.partner.idle_timeout = idle_timeout  # type: ignore[attr-defined]
    return GuardedHTTP(app, token=token, max_body=MAX_BODY_BYTES)


async def _serve_http(
    server: MCPServer,
    host: str,
    port: int,
    security: TransportSecuritySettings | None,
    token: str | None = None,
    idle_timeout: float = IDLE_TIMEOUT,
) -> None:
    import uvicorn

    app = http_app(server, host, security, token, idle_timeout)
    await uvicorn.Server(uvicorn.Config(app, host=host, port=port, log_level="warning")).serve()


if __name__ == "__main__":
    main()
