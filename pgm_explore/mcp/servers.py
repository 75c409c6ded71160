"""The three partners as MCP servers (mcp SDK 2.x ``MCPServer``).

Each server has one tool that takes the whole BKN message and returns the whole Response as
structured content: ``bkn_prc``, ``bkn_dac``, ``bkn_pal``. Prompt Creation also exposes the PC
Prompt as the resource template ``pc-prompt://{dialog_id}`` (JSON): reading it opens that dialogue.
A Request no Response can answer makes the tool fail (``is_error``) with the findings as JSON in the
text; every other Request gets a conforming Response (docs/mcp.md).
"""

from __future__ import annotations

import json
from typing import Any

from mcp.server import MCPServer
from mcp.server.mcpserver.exceptions import ToolError

from pgm_explore.mcp._common import Partner, RequestRejected
from pgm_explore.mcp._partners import DomainAccess, PersonalityAlignment, PromptCreation, Source

__all__ = [
    "PC_PROMPT_URI",
    "domain_access_server",
    "personality_alignment_server",
    "prompt_creation_server",
]

PC_PROMPT_URI = "pc-prompt://{dialog_id}"
"""URI template of the PC Prompt resource of the Prompt Creation server."""


def _answer(partner: Partner, message: dict[str, Any], **extra: Any) -> dict[str, Any]:
    try:
        return partner.answer(message, **extra)
    except RequestRejected as rejected:
        # ToolError's text reaches the client; other exceptions are masked by the SDK.
        raise ToolError(str(rejected)) from None


def prompt_creation_server(scenario: Source | PromptCreation | None = None) -> MCPServer:
    """Prompt Creation: the ``pc-prompt://{dialog_id}`` resource and the ``bkn_prc`` tool."""
    partner = scenario if isinstance(scenario, PromptCreation) else PromptCreation(scenario)
    server = MCPServer("pgm-prompt-creation", instructions="PGM-AUA Prompt Creation (PGM-PRC) reference server.")

    @server.resource(PC_PROMPT_URI, name="pc_prompt", mime_type="application/json")
    def pc_prompt(dialog_id: str) -> str:
        """The PC Prompt that opens dialogue ``dialog_id`` (the same document on every read)."""
        return json.dumps(partner.pc_prompt(dialog_id), ensure_ascii=False)

    # Async tools run on the event loop, so the partner's state needs no lock.
    @server.tool()
    async def bkn_prc(message: dict[str, Any]) -> dict[str, Any]:
        """Answer a BKN-PRC Request (PGM-KPR-V1.0, Mode RQ) with its Response."""
        return _answer(partner, message)

    server.partner = partner  # type: ignore[attr-defined]  # for tests and in-process inspection
    return server


def domain_access_server(domain: Source | DomainAccess | None = None) -> MCPServer:
    """Domain Access: the ``bkn_dac`` tool; ``action_context`` is the ActionContext in force."""
    partner = domain if isinstance(domain, DomainAccess) else DomainAccess(domain)
    server = MCPServer("pgm-domain-access", instructions="PGM-AUA Domain Access (PGM-DAC) reference server.")

    @server.tool()
    async def bkn_dac(message: dict[str, Any], action_context: dict[str, Any] | None = None) -> dict[str, Any]:
        """Answer a BKN-DAC Request (PGM-KDA-V1.0, Mode RQ) with its Response.

        ``action_context`` is the ActionContext of the PC Prompt (or of a later BKN-PRC Response)
        that feasibility is judged under; a BKN-DAC Request has no field for it.
        """
        return _answer(partner, message, action_context=action_context)

    server.partner = partner  # type: ignore[attr-defined]
    return server


def personality_alignment_server(profile: Source | PersonalityAlignment | None = None) -> MCPServer:
    """Personality Alignment: the ``bkn_pal`` tool."""
    partner = profile if isinstance(profile, PersonalityAlignment) else PersonalityAlignment(profile)
    server = MCPServer("pgm-personality-alignment", instructions="PGM-AUA Personality Alignment (PGM-PAL).")

    @server.tool()
    async def bkn_pal(message: dict[str, Any]) -> dict[str, Any]:
        """Answer a BKN-PAL Request (PGM-KPA-V1.0, Mode RQ) with its Response."""
        return _answer(partner, message)

    server.partner = partner  # type: ignore[attr-defined]
    return server
