"""Layer 6: reference partner servers and a Basic Knowledge client over MCP (docs/mcp.md).

``pgm_explore.mcp.inspector`` tries one partner's tools by hand and records the JSON-RPC messages
both ways (the logic of the PartnerInspector widget); ``pgm_explore.mcp.probe`` checks a partner.

Needs the ``mcp`` SDK (2.x); ``import pgm_explore`` does not import this package, because the SDK
takes about a second to import.
"""

try:
    import mcp as _sdk  # noqa: F401
except ModuleNotFoundError as _missing:  # pragma: no cover - depends on the installed extras
    raise ModuleNotFoundError(
        'pgm_explore.mcp needs the MCP SDK: pip install "pgm-explore[mcp]"', name=_missing.name
    ) from _missing

from pgm_explore.mcp._common import Limits, Partner, PartnerDialogue, RequestRejected
from pgm_explore.mcp._partners import DomainAccess, PersonalityAlignment, PromptCreation
from pgm_explore.mcp._schemas import request_schema, response_schema, tool_input_schema
from pgm_explore.mcp.client import BasicKnowledge, PartnerError, Transport, run_demo, run_demo_sync
from pgm_explore.mcp.servers import (
    PC_PROMPT_URI,
    domain_access_server,
    personality_alignment_server,
    prompt_creation_server,
)

__all__ = [
    "BasicKnowledge",
    "DomainAccess",
    "Limits",
    "PC_PROMPT_URI",
    "Partner",
    "PartnerDialogue",
    "PartnerError",
    "PersonalityAlignment",
    "PromptCreation",
    "RequestRejected",
    "Transport",
    "domain_access_server",
    "personality_alignment_server",
    "prompt_creation_server",
    "request_schema",
    "response_schema",
    "run_demo",
    "run_demo_sync",
    "tool_input_schema",
]

# Public names are documented where they are imported from, not in private modules.
for _name in (
    "DomainAccess",
    "Limits",
    "Partner",
    "PartnerDialogue",
    "PersonalityAlignment",
    "PromptCreation",
    "RequestRejected",
    "request_schema",
    "response_schema",
    "tool_input_schema",
):
    globals()[_name].__module__ = __name__
