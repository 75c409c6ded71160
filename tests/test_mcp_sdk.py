"""The MCP SDK's private names are used in one module only, and are still where that module takes them from.

pgm_explore.mcp._sdk imports the two names the SDK keeps private (InMemoryTransport, TransportStreams);
an SDK release that moves them must fail here with a message naming them, not as an AttributeError in
a live connection.
"""

from __future__ import annotations

import ast
import importlib
import typing
from contextlib import AbstractAsyncContextManager
from importlib.metadata import version
from pathlib import Path

import pytest

pytest.importorskip("mcp")

from mcp.client import Client, Transport
from mcp.server import MCPServer

from pgm_explore.mcp import _sdk
from pgm_explore.mcp._wire import Wire, tapped

PACKAGE = Path(__file__).resolve().parents[1] / "pgm_explore"
PRIVATE = {"InMemoryTransport": "mcp.client._memory", "TransportStreams": "mcp.client._transport"}


@pytest.mark.parametrize(("name", "module"), sorted(PRIVATE.items()))
def test_the_private_names_are_where_the_sdk_kept_them(name: str, module: str) -> None:
    try:
        found = getattr(importlib.import_module(module), name)
    except (ImportError, AttributeError) as exc:
        pytest.fail(
            f"the MCP SDK (mcp {version('mcp')}) no longer has {module}.{name}, which pgm_explore/mcp/_sdk.py "
            f"imports (written against mcp {_sdk.SDK_VERSION}): find its new name and change _sdk.py ({exc})"
        )
    assert getattr(_sdk, name) is found


def test_transport_streams_is_what_the_public_transport_protocol_yields() -> None:
    # Transport is public; TransportStreams is only the type it yields. Should the SDK change one
    # without the other, the transports typed with the alias would not be Transports.
    bases = typing.get_original_bases(Transport) if hasattr(typing, "get_original_bases") else Transport.__orig_bases__
    yielded = [typing.get_args(b) for b in bases if typing.get_origin(b) is AbstractAsyncContextManager]
    assert yielded == [(_sdk.TransportStreams,)], f"mcp.client.Transport yields {yielded}, not TransportStreams"


def _private_sdk_imports(path: Path) -> list[str]:
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        modules = (
            [node.module or ""]
            if isinstance(node, ast.ImportFrom) and node.level == 0
            else [a.name for a in node.names]
            if isinstance(node, ast.Import)
            else []
        )
        for module in modules:
            parts = module.split(".")
            if parts[0] in {"mcp", "mcp_types"} and any(p.startswith("_") for p in parts[1:]):
                found.append(f"{path.relative_to(PACKAGE.parent)}:{node.lineno} {module}")
    return found


def test_no_other_module_imports_a_private_sdk_name() -> None:
    found = [hit for path in sorted(PACKAGE.rglob("*.py")) for hit in _private_sdk_imports(path)]
    others = [hit for hit in found if not hit.startswith("pgm_explore/mcp/_sdk.py:")]
    assert others == [], "import the SDK's private names through pgm_explore/mcp/_sdk.py only: " + ", ".join(others)
    assert len(found) == len(PRIVATE), found  # the scan sees _sdk.py's own imports, so it looks where it should


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.mark.anyio
async def test_the_in_memory_transport_carries_json_rpc_that_can_be_recorded() -> None:
    server = MCPServer("sdk-check")

    @server.tool()
    def echo(text: str) -> str:
        """Give the text back."""
        return text

    wire = Wire("sdk-check", capture_stderr=False)
    async with Client(tapped(_sdk.InMemoryTransport(server), wire), mode="legacy") as client:
        result = await client.call_tool("echo", {"text": "ping"})
    assert not result.is_error
    methods = [message.get("method") for direction, message in wire.log if direction == "sent"]
    assert methods[0] == "initialize" and "tools/call" in methods, methods
    assert wire.problems == []
