"""A Domain Access server written without the MCP SDK, speaking only the ``initialize`` handshake.

Newline-delimited JSON-RPC 2.0 on stdin/stdout, as a third party might write it from docs/mcp.md:
``initialize``, ``ping``, ``tools/list``, ``tools/call``; every other method (``server/discover`` of the
current protocol among them) is "method not found". The PGM-AUA answers come from the reference
``DomainAccess`` class, so that what differs from the reference server is the MCP side only.
"""

from __future__ import annotations

import json
import sys
from typing import Any

from pgm_explore.mcp import DomainAccess, RequestRejected, response_schema, tool_input_schema

PARTNER = DomainAccess()
TOOL = {
    "name": "bkn_dac",
    "description": "Answer a BKN-DAC Request with its Response (PGM-AUA MCP binding version 1).",
    "inputSchema": tool_input_schema("BKN-DAC", action_context=True),
    "outputSchema": response_schema("BKN-DAC"),
}


def _call(params: dict[str, Any]) -> dict[str, Any]:
    arguments = params.get("arguments") or {}
    if params.get("name") != "bkn_dac" or set(arguments) - {"message", "action_context"}:
        return {"content": [{"type": "text", "text": "unknown tool or argument"}], "isError": True}
    try:
        response = PARTNER.answer(arguments.get("message"), action_context=arguments.get("action_context"))
    except RequestRejected as rejected:
        return {"content": [{"type": "text", "text": str(rejected)}], "isError": True}
    return {"content": [{"type": "text", "text": json.dumps(response)}], "structuredContent": response}


def main() -> None:
    for line in sys.stdin:
        message = json.loads(line)
        if "id" not in message:
            continue  # notifications: initialized, cancelled (answers are immediate here)
        method, params = message.get("method"), message.get("params") or {}
        if method == "initialize":
            result: Any = {
                "protocolVersion": "2025-06-18",
                "capabilities": {"tools": {}},
                "serverInfo": {"name": "legacy-domain-access", "version": "0.0.1"},
            }
        elif method == "ping":
            result = {}
        elif method == "tools/list":
            result = {"tools": [TOOL]}
        elif method == "tools/call":
            result = _call(params)
        else:
            error = {"code": -32601, "message": f"method not found: {method}"}
            sys.stdout.write(json.dumps({"jsonrpc": "2.0", "id": message["id"], "error": error}) + "\n")
            sys.stdout.flush()
            continue
        sys.stdout.write(json.dumps({"jsonrpc": "2.0", "id": message["id"], "result": result}) + "\n")
        sys.stdout.flush()


if __name__ == "__main__":
    main()
