"""Run one partner server: ``python -m pgm_explore.mcp.serve PARTNER [--source FILE] [--http --port N]``.

PARTNER is ``prompt-creation``, ``domain-access`` or ``personality-alignment``; FILE its scenario,
domain or profile (default: the market files that come with the package). Without ``--http`` the server
speaks stdio; with it, streamable HTTP at ``http://HOST:PORT/mcp`` (HOST defaults to 127.0.0.1: loopback).

On loopback the SDK checks the Host and Origin headers (DNS-rebinding protection). On any other
address it does not, and there is no authentication at all: anyone who reaches the port can use the
partner. ``--allow-host NAME`` (repeatable) keeps the checks, accepting only those Host names; without
it a loud warning says what is off.
"""

from __future__ import annotations

import argparse
import io
import sys
from collections.abc import Sequence
from typing import IO, Any

import anyio
from mcp.server import MCPServer
from mcp.server.stdio import stdio_server
from mcp.server.transport_security import TransportSecuritySettings
from mcp.shared.message import SessionMessage
from mcp.types import jsonrpc_message_adapter

from pgm_explore.mcp._guard import GuardedHTTP, guarded_lines
from pgm_explore.mcp.servers import domain_access_server, personality_alignment_server, prompt_creation_server

__all__ = ["FACTORIES", "main", "transport_security"]

FACTORIES = {
    "prompt-creation": prompt_creation_server,
    "domain-access": domain_access_server,
    "personality-alignment": personality_alignment_server,
}
_LOOPBACK = ("127.0.0.1", "localhost", "::1")


def transport_security(host: str, allowed: Sequence[str], err: IO[str]) -> TransportSecuritySettings | None:
    """The Host/Origin checks for ``host``: the SDK's own on loopback (None), an allow-list when given,
    else none, with a warning on ``err``.

    >>> import io; err = io.StringIO()
    >>> transport_security("0.0.0.0", [], err) is None, "NO AUTHENTICATION" in err.getvalue()
    (True, True)
    >>> transport_security("0.0.0.0", ["partner.example:8000"], err).allowed_hosts
    ['partner.example:8000']
    """
    if allowed:
        origins = [f"{scheme}://{name}" for name in allowed for scheme in ("http", "https")]
        return TransportSecuritySettings(
            enable_dns_rebinding_protection=True, allowed_hosts=list(allowed), allowed_origins=origins
        )
    if host not in _LOOPBACK:
        err.write(
            f"WARNING: serving on {host}, not loopback: the Host and Origin header checks (DNS-rebinding "
            "protection) are OFF and there is NO AUTHENTICATION: anyone who can reach this port can read the "
            "partner's data and change its dialogues. Keep the checks with --allow-host NAME[:PORT] (repeatable), "
            "and put the server behind an authenticating proxy.\n"
        )
        err.flush()
    return None


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m pgm_explore.mcp.serve", description=__doc__.split("\n")[0])
    parser.add_argument("partner", choices=sorted(FACTORIES))
    parser.add_argument("--source", help="scenario, domain or profile JSON file")
    parser.add_argument("--http", action="store_true", help="streamable HTTP instead of stdio")
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=8000)
    parser.add_argument(
        "--allow-host",
        action="append",
        default=[],
        metavar="NAME[:PORT]",
        help="keep the Host/Origin checks, accepting this Host (repeatable; e.g. partner.example:8000, or name:*)",
    )
    args = parser.parse_args(argv)
    server = FACTORIES[args.partner](args.source)
    if args.http:
        security = transport_security(args.host, args.allow_host, sys.stderr)
        anyio.run(_serve_http, server, args.host, args.port, security)
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


async def _serve_http(server: MCPServer, host: str, port: int, security: TransportSecuritySettings | None) -> None:
    import uvicorn

    app = GuardedHTTP(server.streamable_http_app(transport_security=security, host=host))
    await uvicorn.Server(uvicorn.Config(app, host=host, port=port, log_level="warning")).serve()


if __name__ == "__main__":
    main()
