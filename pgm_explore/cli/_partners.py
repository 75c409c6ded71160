"""What ``dialogue`` and ``probe`` share: the mcp extra, the ``--partner`` values and their token.

Both commands need the MCP SDK (the ``mcp`` extra), imported only when they run: it takes
about a second to import, and ``import pgm_explore.cli`` must not pull it in. The bearer token
sent to URL partners comes from ``--token-file FILE``, else ``$PGM_EXPLORE_PARTNER_TOKEN`` (the
variable the partner itself reads): never from the command line, which others on the machine see.
"""

from __future__ import annotations

import dataclasses
import logging
import os
from typing import IO, Any

from pgm_explore.cli._output import PROG, clean

__all__ = ["partners"]


def partners(command: str, values: list[str], err: IO[str], token_file: str | None = None) -> dict[str, Any] | None:
    """``--partner ROLE=URL|COMMAND`` values as {role: endpoint}, one server per role, each URL
    with the bearer token of ``token_file`` or ``$PGM_EXPLORE_PARTNER_TOKEN``; or None once ``err``
    says why not: the mcp extra is missing, a value is wrong, the token file cannot be read."""
    try:
        import pgm_explore.mcp  # noqa: F401 - says at once when the SDK is missing
        from pgm_explore.mcp.connect import TOKEN_ENV, PartnerArgumentError, parse_partner
    except ImportError as exc:
        err.write(f'{PROG} {command}: needs the mcp extra: pip install "pgm-explore[mcp]" ({exc})\n')
        return None
    # The reference partners built in this process turn the SDK's logging on (logging.basicConfig at
    # INFO): without this, each HTTP request to a URL partner would be a line on stderr.
    logging.getLogger("httpx2").setLevel(logging.WARNING)
    found: dict[str, Any] = {}
    try:
        for value in values:
            role, endpoint = parse_partner(value)
            if role in found:
                raise PartnerArgumentError(f"--partner {role}= given twice: one server per role")
            found[role] = endpoint
        token = _token_file(token_file) if token_file is not None else os.environ.get(TOKEN_ENV)
    except PartnerArgumentError as exc:
        err.write(f"{PROG} {command}: {clean(str(exc))}\n")
        return None
    return {role: dataclasses.replace(e, token=token) if e.is_url else e for role, e in found.items()}


def _token_file(path: str) -> str:
    """The token in ``path``: its text without surrounding white space (an editor's final newline)."""
    from pgm_explore.mcp.connect import PartnerArgumentError

    try:
        with open(path, encoding="utf-8") as file:
            token = file.read(64 * 1024).strip()
    except (OSError, UnicodeDecodeError) as exc:
        raise PartnerArgumentError(
            f"--token-file {path}: cannot be read: {getattr(exc, 'strerror', None) or exc}"
        ) from None
    if not token or any(c.isspace() for c in token):
        raise PartnerArgumentError(
            f"--token-file {path}: expected one token (no spaces), found {'none' if not token else 'several words'}"
        )
    return token
