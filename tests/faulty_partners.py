"""Deliberately faulty partner servers, each wrong in one way, for the probe's tests.

``python tests/faulty_partners.py NAME`` runs one over stdio; :data:`FAULTY` builds one in process.
Each is the reference partner with one fault, so that exactly the checks about that fault fail
(:data:`EXPECTED_FAILURES`).
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from typing import Any

from mcp.server import MCPServer
from mcp.shared.exceptions import MCPError
from mcp.types import CallToolResult, TextContent

from pgm_explore.dialogue.commitments import CommitmentLedger
from pgm_explore.mcp import DomainAccess, PartnerDialogue, PersonalityAlignment, RequestRejected
from pgm_explore.mcp.servers import _PartnerServer, _server, prompt_creation_server


class WrongEcho(DomainAccess):
    """Answers with its own SessionID, not the Request's."""

    def _respond(self, message: dict[str, Any], dialogue: PartnerDialogue, payload: dict[str, Any]) -> dict[str, Any]:
        return {**super()._respond(message, dialogue, payload), "SessionID": "faulty-session"}


class MissingOutcome(PersonalityAlignment):
    """Leaves Outcome out of every answered Response."""

    def _respond(self, message: dict[str, Any], dialogue: PartnerDialogue, payload: dict[str, Any]) -> dict[str, Any]:
        response = super()._respond(message, dialogue, payload)
        if response.get("Outcome") != "not_answered":
            del response["Outcome"]
        return response


class ForgetsCommitments(DomainAccess):
    """Reports the commitments of each Request, and forgets them before the next turn."""

    def payload(self, message: dict[str, Any], dialogue: PartnerDialogue, **extra: Any) -> dict:
        dialogue.state.pop("commitments", None)
        return super().payload(message, dialogue, **extra)


class MixesDialogues(DomainAccess):
    """Keeps one set of commitments for every dialogue."""

    shared: CommitmentLedger

    def payload(self, message: dict[str, Any], dialogue: PartnerDialogue, **extra: Any) -> dict:
        shared = self.__dict__.setdefault("shared", CommitmentLedger())
        dialogue.state["commitments"] = shared
        return super().payload(message, dialogue, **extra)


class WrongFeasibility(DomainAccess):
    """Says every plan is feasible, whatever its steps say."""

    def _feasibility(self, message: dict[str, Any], action_context: Any) -> dict[str, Any]:
        answer = super()._feasibility(message, action_context)
        if isinstance(answer.get("Feasibility"), dict):
            answer["Feasibility"]["Overall"] = "feasible"
        return answer


class JSONRPCErrors(PersonalityAlignment):
    """Refuses a document without QueryID with a JSON-RPC error instead of a tool error."""

    def prepare(self, message: Any, owner: str | None = None, **extra: Any) -> Any:
        try:
            return super().prepare(message, owner, **extra)
        except RequestRejected as rejected:
            if rejected.findings[0].get("rule") == "unusable-request":
                raise MCPError(-32602, "invalid params") from None
            raise


def _text_only() -> MCPServer:
    """Prompt Creation whose tool returns the Response as text only, without structuredContent."""
    reference = prompt_creation_server()
    partner = reference.partner  # type: ignore[attr-defined]
    server = _PartnerServer("faulty-text-only")

    @server.resource("pc-prompt://{dialog_id}", name="pc_prompt", mime_type="application/json")
    def pc_prompt(dialog_id: str) -> str:
        return json.dumps(partner.pc_prompt(dialog_id))

    @server.tool()
    def bkn_prc(message: dict[str, Any]) -> CallToolResult:
        """Answer a BKN-PRC Request, as text only."""
        try:
            response = partner.answer(message)
        except RequestRejected as rejected:
            return CallToolResult(content=[TextContent(type="text", text=str(rejected))], is_error=True)
        return CallToolResult(content=[TextContent(type="text", text=json.dumps(response))])

    return server


FAULTY: dict[str, tuple[str, Callable[[], MCPServer]]] = {
    "wrong-echo": ("dac", lambda: _server(WrongEcho(), "faulty-wrong-echo", "Wrong echo")),
    "missing-outcome": ("pal", lambda: _server(MissingOutcome(), "faulty-missing-outcome", "Missing Outcome")),
    "forgets-commitments": ("dac", lambda: _server(ForgetsCommitments(), "faulty-forgets", "Forgets commitments")),
    "mixes-dialogues": ("dac", lambda: _server(MixesDialogues(), "faulty-mixes", "Mixes dialogues")),
    "jsonrpc-errors": ("pal", lambda: _server(JSONRPCErrors(), "faulty-jsonrpc", "JSON-RPC errors")),
    "wrong-feasibility": ("dac", lambda: _server(WrongFeasibility(), "faulty-feasibility", "Wrong feasibility")),
    "text-only": ("prc", _text_only),
}
"""Name -> (role, server factory)."""

EXPECTED_FAILURES = {
    "wrong-echo": {"echo"},
    "missing-outcome": {"response-conforms", "outcome"},
    "forgets-commitments": {"commitments"},
    "mixes-dialogues": {"interleaved"},
    "jsonrpc-errors": {"bad-request"},
    "wrong-feasibility": {"feasibility"},
    "text-only": {"structured-result", "tool-schemas"},
}

if __name__ == "__main__":
    FAULTY[sys.argv[1]][1]().run()
