"""The MCP SDK's private names pgm-explore needs, all in this one module (written against mcp 2.3.0).

Everything else of the SDK is used through its public names. These two have no public equivalent:

- :class:`InMemoryTransport` (``mcp.client._memory``): the transport ``Client(server, mode="legacy")``
  opens to a server of this process. The inspector and the probe wrap it (``_wire.tapped``) to record
  the JSON-RPC messages; ``Client(server)`` alone hides them, and building the same streams from the
  public ``mcp.shared.memory`` needs the server's private ``MCPServer._lowlevel_server``.
- :data:`TransportStreams` (``mcp.client._transport``): the ``(read, write)`` pair the public
  ``mcp.client.Transport`` protocol yields, for the type of the transports written here.

``tests/test_mcp_sdk.py`` checks both are where this module takes them from and that no other module
imports a private SDK name. A future SDK that moves them stops ``import pgm_explore.mcp`` with the
ImportError below, which names the fix, instead of an AttributeError deep in a connection.
"""

from __future__ import annotations

from importlib.metadata import version

__all__ = ["SDK_VERSION", "InMemoryTransport", "TransportStreams"]

SDK_VERSION = "2.3.0"
"""The mcp release whose private module layout this module was written against."""

try:
    from mcp.client._memory import InMemoryTransport
    from mcp.client._transport import TransportStreams
except ImportError as exc:  # pragma: no cover (only with an SDK that moved them)
    raise ImportError(
        f"pgm_explore.mcp uses the MCP SDK's private InMemoryTransport (mcp.client._memory) and "
        f"TransportStreams (mcp.client._transport), as laid out in mcp {SDK_VERSION}; the installed "
        f"mcp {version('mcp')} does not have them there ({exc}): install mcp=={SDK_VERSION} or update "
        f"pgm_explore/mcp/_sdk.py to the SDK's new names"
    ) from exc
