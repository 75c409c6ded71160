"""Run one partner server: ``python -m pgm_explore.mcp.serve PARTNER [--source FILE] [--http --port N]``.

PARTNER is ``prompt-creation``, ``domain-access`` or ``personality-alignment``; FILE its scenario,
domain or profile (default: the market files in ``data/``). Without ``--http`` the server speaks
stdio; with it, streamable HTTP at ``http://HOST:PORT/mcp`` (HOST defaults to 127.0.0.1: loopback).
"""

from __future__ import annotations

import argparse
from collections.abc import Sequence

from pgm_explore.mcp.servers import domain_access_server, personality_alignment_server, prompt_creation_server

__all__ = ["FACTORIES", "main"]

FACTORIES = {
    "prompt-creation": prompt_creation_server,
    "domain-access": domain_access_server,
    "personality-alignment": personality_alignment_server,
}


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m pgm_explore.mcp.serve", description=__doc__.split("\n")[0])
    parser.add_argument("partner", choices=sorted(FACTORIES))
    parser.add_argument("--source", help="scenario, domain or profile JSON file")
    parser.add_argument("--http", action="store_true", help="streamable HTTP instead of stdio")
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=8000)
    args = parser.parse_args(argv)
    server = FACTORIES[args.partner](args.source)
    if args.http:
        server.run("streamable-http", host=args.host, port=args.port)
    else:
        server.run()


if __name__ == "__main__":
    main()
