"""The three partners as MCP servers (mcp SDK 2.x ``MCPServer``), binding version 1 (docs/mcp.md).

Each server has one tool that takes the whole BKN Request and returns the whole Response:
``bkn_prc(message)``, ``bkn_dac(message, action_context)``, ``bkn_pal(message)``. ``tools/list``
declares the PGM-AUA schema of the type's Request as ``message`` and of its Response as the
``outputSchema``, self-contained (``pgm_explore.mcp._schemas``); other arguments are refused. The
result is the Response as ``structuredContent`` and the same JSON as text. Prompt Creation also
exposes the PC Prompt as the resource template ``pc-prompt://{dialog_id}`` (JSON): reading it opens
that dialogue. A Request no Response can answer makes the tool fail (``isError``) with the findings
as JSON in the text; every other Request gets a conforming Response.

The partner's work runs in a worker thread (``anyio.to_thread``), one Request at a time per server:
the event loop stays free for ``ping`` and ``notifications/cancelled`` during a long feasibility
check, and a Request cancelled before its answer is committed leaves no trace (its QueryID can be
sent again).
"""

from __future__ import annotations

import functools
import json
from collections.abc import Mapping
from typing import Any

import anyio
import anyio.lowlevel
from mcp.server import MCPServer
from mcp.server.mcpserver import Context
from mcp.server.mcpserver.exceptions import ResourceError, ToolError
from mcp.server.mcpserver.tools import Tool
from mcp.shared.exceptions import MCPError
from mcp.types import INVALID_PARAMS, CallToolResult, TextContent, ToolAnnotations

from pgm_explore._version import __version__
from pgm_explore.mcp._common import LimitReached, Partner, RequestRejected
from pgm_explore.mcp._partners import DomainAccess, PersonalityAlignment, PromptCreation, Source
from pgm_explore.mcp._schemas import response_schema, tool_input_schema
from pgm_explore.spec import data_type
from pgm_explore.validation.findings import Finding, clip

__all__ = [
    "BINDING_VERSION",
    "PC_PROMPT_URI",
    "TOOL_NAMES",
    "domain_access_server",
    "personality_alignment_server",
    "prompt_creation_server",
]

BINDING_VERSION = "1"
"""Version of the MCP binding of PGM-AUA that docs/mcp.md describes (tool names, arguments, results)."""

PC_PROMPT_URI = "pc-prompt://{dialog_id}"
"""URI template of the PC Prompt resource of the Prompt Creation server."""

TOOL_NAMES = {"BKN-PRC": "bkn_prc", "BKN-DAC": "bkn_dac", "BKN-PAL": "bkn_pal"}
_TYPE_OF_TOOL = {tool: type_name for type_name, tool in TOOL_NAMES.items()}
# Answering a BKN-PRC or BKN-PAL Request reads the scenario or profile and changes nothing a host
# would care about (the partner only notes the exchange); BKN-DAC retains and releases commitments.
# None is idempotent: a second call with the same QueryID is refused (one Response per Request).
_ANNOTATIONS = {
    "BKN-PRC": ToolAnnotations(read_only_hint=True, idempotent_hint=False, open_world_hint=False),
    "BKN-DAC": ToolAnnotations(
        read_only_hint=False, destructive_hint=False, idempotent_hint=False, open_world_hint=False
    ),
    "BKN-PAL": ToolAnnotations(read_only_hint=True, idempotent_hint=False, open_world_hint=False),
}


def _result(response: dict[str, Any]) -> CallToolResult:
    # The same JSON twice: structuredContent for clients that read it, text for those that do not.
    text = json.dumps(response, ensure_ascii=False)
    return CallToolResult(content=[TextContent(type="text", text=text)], structured_content=response)


def _description(type_name: str) -> str:
    dt = data_type(type_name)
    rules = " ".join(
        f"{name}: {dt.requirements[name]}" for name in ("Correlation", "Dialogue") if name in dt.requirements
    )
    extra = (
        " `action_context` is the ActionContext in force (the PC Prompt's, or one a BKN-PRC Response refined), "
        "under which feasibility is judged."
        if type_name == "BKN-DAC"
        else ""
    )
    return (
        f"Answer a {type_name} Request ({dt.header}, Mode RQ) with its Response (Mode RS). "
        f"{dt.schema.get('description', '')} {rules}{extra} "
        f"A non-conforming Request that names itself is answered with Outcome not_answered and the findings "
        f"in DescrMetadata; anything else is a tool error with the findings as JSON. "
        f"PGM-AUA MCP binding version {BINDING_VERSION} (docs/mcp.md)."
    )


def _owner(partner: Partner, ctx: Context | None, lock: anyio.Lock | None = None) -> str | None:
    """``mcp:<session id>`` when the transport has a session (streamable HTTP with the initialize
    handshake); its dialogues are forgotten when the session object goes (DELETE, disconnect)."""
    if ctx is None:
        return None
    try:
        session_id = (ctx.headers or {}).get("mcp-session-id")
    except (AttributeError, ValueError):  # outside a request (in-process calls)
        return None
    if not session_id:
        return None
    owner = f"mcp:{session_id}"
    # The SDK's per-connection exit stack is unwound when the MCP session ends (DELETE, idle timeout,
    # disconnect): the session's dialogues end with it. ctx.session is per request; its connection is
    # the session's. Where that is not reachable, the dialogues still end by eviction (MAX_DIALOGUES).
    try:
        connection = getattr(ctx.session, "_connection", None)
    except (AttributeError, ValueError):
        connection = None
    if connection is not None and not connection.state.get(f"pgm-explore:{id(partner)}"):
        connection.state[f"pgm-explore:{id(partner)}"] = True

        async def forget() -> None:
            # Under the partner's lock: a Request still being answered in the worker thread reads the
            # dialogues (and their sizes) while the session that ends takes its own away.
            if lock is None:
                partner.forget(owner)
                return
            async with lock:
                partner.forget(owner)

        connection.exit_stack.push_async_callback(forget)
    return owner


def _tool(partner: Partner, lock: anyio.Lock) -> Tool:
    type_name = partner.type_name

    async def run(ctx: Context | None, **arguments: Any) -> CallToolResult:
        owner = _owner(partner, ctx, lock)
        async with lock:
            try:
                # Cancelled while the thread works: the thread finishes, commit() is never reached.
                work = functools.partial(partner.prepare, arguments.pop("message"), owner, **arguments)
                response, commit = await anyio.to_thread.run_sync(work)
            except RequestRejected as rejected:
                # ToolError's text reaches the client; other exceptions are masked by the SDK.
                raise ToolError(str(rejected)) from None
            # A cancellation that came while the thread worked is delivered here, before the commit.
            await anyio.lowlevel.checkpoint_if_cancelled()
            commit()
        return _result(response)

    # message: Any, so that whatever was sent reaches the partner, which names what is wrong with it
    # (argument names are checked before, by _PartnerServer.call_tool).
    if type_name == "BKN-DAC":

        async def bkn_dac(message: Any, ctx: Context, action_context: Any = None) -> CallToolResult:
            return await run(ctx, message=message, action_context=action_context)

        fn: Any = bkn_dac
    else:

        async def answer(message: Any, ctx: Context) -> CallToolResult:
            return await run(ctx, message=message)

        fn = answer
    dt = data_type(type_name)
    tool = Tool.from_function(
        fn,
        name=TOOL_NAMES[type_name],
        title=f"{dt.sender}: {type_name}",
        description=_description(type_name),
        annotations=_ANNOTATIONS[type_name],
        meta={"pgm-aua/binding": BINDING_VERSION, "pgm-aua/header": dt.header},
    )
    # What tools/list shows: the PGM-AUA schemas. The arguments are checked by name before the SDK
    # sees them (_argument_findings) and the message by the partner, so that every refusal is the
    # documented {"rejected": true, "findings": [...]}, never the SDK's pydantic text.
    tool.parameters = tool_input_schema(type_name, action_context=type_name == "BKN-DAC")
    tool.fn_metadata.output_schema = response_schema(type_name)
    return tool


def _argument_findings(type_name: str, arguments: Mapping[str, Any]) -> list[dict[str, Any]]:
    """Why ``arguments`` are not those of the type's tool (binding v1), as ``tool-arguments``
    findings whose paths start at the arguments; empty: they are.

    >>> [f["message"] for f in _argument_findings("BKN-PAL", {"verbose": True})]
    ['bkn_pal takes no argument verbose: its only argument is message, the BKN-PAL Request.',
     'bkn_pal was called without its argument message, the BKN-PAL Request.']
    """
    tool = TOOL_NAMES[type_name]
    allowed = ["message", "action_context"] if type_name == "BKN-DAC" else ["message"]
    takes = (
        "its arguments are message, the BKN-DAC Request, and action_context"
        if len(allowed) > 1
        else (f"its only argument is message, the {type_name} Request")
    )
    found = [
        Finding.of("tool-arguments", (name,), f"{tool} takes no argument {clip(name)}: {takes}.").to_dict()
        for name in arguments
        if name not in allowed
    ]
    if "message" not in arguments:
        why = f"{tool} was called without its argument message, the {type_name} Request."
        found.append(Finding.of("tool-arguments", ("message",), why).to_dict())
    return found


class _PartnerServer(MCPServer):
    """An MCPServer whose unknown tool is a protocol error, the JSON-RPC error -32602 (MCP
    server/tools, Error Handling), not the tool error (isError) the SDK makes of it, and whose
    capabilities are one answer in every era (see ``_one_capability_answer``)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        _one_capability_answer(self)

    async def call_tool(self, name: str, arguments: dict[str, Any], context: Any = None) -> Any:
        if name not in {tool.name for tool in await self.list_tools()}:
            raise MCPError(INVALID_PARAMS, f"Unknown tool: {name}")
        type_name = _TYPE_OF_TOOL.get(name)
        if type_name is not None and (problems := _argument_findings(type_name, arguments)):
            # The same words as every other refusal (the SDK's own would be a pydantic dump).
            raise ToolError(f"Error executing tool {name}: {RequestRejected(problems)}")
        return await super().call_tool(name, arguments, context)


def _server(partner: Partner, name: str, title: str) -> MCPServer:
    server = _PartnerServer(
        name,
        title=title,
        version=__version__,
        instructions=f"PGM-AUA {title} (MPAI PGM-AUA V1.0), MCP binding version {BINDING_VERSION}: "
        f"tool {TOOL_NAMES[partner.type_name]}. See docs/mcp.md of pgm-explore.",
        tools=[_tool(partner, lock := anyio.Lock())],
    )
    server.partner = partner  # type: ignore[attr-defined]  # for tests and in-process inspection
    server.partner_lock = lock  # type: ignore[attr-defined]  # one Request (or session end) at a time
    return server


def _one_capability_answer(server: MCPServer) -> None:
    """initialize and server/discover give the same capabilities: the SDK derives listChanged and
    subscribe per era (notification options for the handshake, subscriptions/listen for 2026-07-28),
    so the two answers disagree. Our tool list, resource templates and documents never change, so
    neither era advertises change notifications or subscriptions (MCP lifecycle, Capability
    Negotiation: a capability advertised must be served)."""
    lowlevel = server._lowlevel_server
    derive = lowlevel.get_capabilities

    def get_capabilities(*args: Any, **kwargs: Any) -> Any:
        capabilities = derive(*args, **kwargs)
        if capabilities.tools is not None:
            capabilities.tools.list_changed = False
        if capabilities.prompts is not None:
            capabilities.prompts.list_changed = False
        if capabilities.resources is not None:
            capabilities.resources.list_changed = False
            capabilities.resources.subscribe = False
        return capabilities

    lowlevel.get_capabilities = get_capabilities  # type: ignore[method-assign]


def prompt_creation_server(scenario: Source | PromptCreation | None = None) -> MCPServer:
    """Prompt Creation: the ``pc-prompt://{dialog_id}`` resource and the ``bkn_prc`` tool."""
    partner = scenario if isinstance(scenario, PromptCreation) else PromptCreation(scenario)
    server = _server(partner, "pgm-prompt-creation", "Prompt Creation (PGM-PRC)")

    @server.resource(
        PC_PROMPT_URI,
        name="pc_prompt",
        title="PC Prompt",
        description=data_type("PC Prompt").schema.get("description", "")
        + " Reading it opens dialogue dialog_id; every read returns the same document.",
        mime_type="application/json",
    )
    async def pc_prompt(dialog_id: str, ctx: Context) -> str:
        """The PC Prompt that opens dialogue ``dialog_id`` (the same document on every read)."""
        lock = server.partner_lock  # type: ignore[attr-defined]
        async with lock:
            try:
                document = partner.pc_prompt(dialog_id, _owner(partner, ctx, lock))
            except LimitReached as reached:  # its text reaches the client; other errors are masked
                raise ResourceError(str(reached)) from None
        return json.dumps(document, ensure_ascii=False)

    return server


def domain_access_server(domain: Source | DomainAccess | None = None) -> MCPServer:
    """Domain Access: the ``bkn_dac`` tool; ``action_context`` is the ActionContext in force."""
    partner = domain if isinstance(domain, DomainAccess) else DomainAccess(domain)
    return _server(partner, "pgm-domain-access", "Domain Access (PGM-DAC)")


def personality_alignment_server(profile: Source | PersonalityAlignment | None = None) -> MCPServer:
    """Personality Alignment: the ``bkn_pal`` tool."""
    partner = profile if isinstance(profile, PersonalityAlignment) else PersonalityAlignment(profile)
    return _server(partner, "pgm-personality-alignment", "Personality Alignment (PGM-PAL)")
