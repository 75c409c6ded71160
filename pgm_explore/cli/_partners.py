"""What ``dialogue`` and ``probe`` share: the mcp extra, and the ``--partner`` values.

Both commands need the MCP SDK (the ``mcp`` extra), imported only when they run: it takes
about a second to import, and ``import pgm_explore.cli`` must not pull it in.
"""

from __future__ import annotations

from typing import IO, Any

from pgm_explore.cli._output import PROG, clean

__all__ = ["partners"]


def partners(command: str, values: list[str], err: IO[str]) -> dict[str, Any] | None:
    """``--partner ROLE=URL|COMMAND`` values as {role: endpoint}, one server per role; or None
    once ``err`` says why not: the mcp extra is missing, or a value is wrong."""
    try:
        import pgm_explore.mcp  # noqa: F401 - says at once when the SDK is missing
        from pgm_explore.mcp.connect import PartnerArgumentError, parse_partner
    except ImportError as exc:
        err.write(f'{PROG} {command}: needs the mcp extra: pip install "pgm-explore[mcp]" ({exc})\n')
        return None
    found: dict[str, Any] = {}
    try:
        for value in values:
            role, endpoint = parse_partner(value)
            if role in found:
                raise PartnerArgumentError(f"--partner {role}= given twice: one server per role")
            found[role] = endpoint
    except PartnerArgumentError as exc:
        err.write(f"{PROG} {command}: {clean(str(exc))}\n")
        return None
    return found
