"""The probe's MCP layer: the handshakes, and what every MCP server must do whatever it serves.

Each check is made of parts (:meth:`ProbeRun.part`), one per protocol era the partner speaks (the
``initialize`` handshake of 2025-11-25, the per-request envelope of 2026-07-28) and per way of
asking: through the SDK's session (any transport), or raw on the stdio wire, where the probe writes
what no SDK would (a batch, ``"jsonrpc": "1.0"``, a request without its envelope). The HTTP checks
are in :mod:`._probe_http`.
"""

from __future__ import annotations

import itertools
from collections.abc import Awaitable, Callable
from contextlib import AsyncExitStack
from typing import Any

from mcp import Client, types
from mcp.shared.exceptions import MCPError
from mcp_types import INVALID_PARAMS, INVALID_REQUEST, METHOD_NOT_FOUND, UNSUPPORTED_PROTOCOL_VERSION
from mcp_types.version import (
    HANDSHAKE_PROTOCOL_VERSIONS,
    LATEST_HANDSHAKE_VERSION,
    LATEST_MODERN_VERSION,
    MODERN_PROTOCOL_VERSIONS,
)

from pgm_explore.mcp._probe_base import ProbeRun, Unreachable, open_client
from pgm_explore.mcp._wire import Wire, running
from pgm_explore.mcp.connect import timed_out

NO_METHOD = "probe/no-such-method"
NO_TOOL = "probe_no_such_tool"
NO_RESOURCE = "probe-none://missing"
BOGUS_VERSION = "1900-01-01"
RESOURCE_NOT_FOUND_2025 = -32002
CLIENT_INFO = {"name": "pgm-explore-probe", "version": "1"}
_ids = itertools.count(1)


def raw_id() -> str:
    """A JSON-RPC id of the probe's own raw requests, never one an SDK session uses."""
    return f"probe-raw-{next(_ids)}"


def envelope(version: str = LATEST_MODERN_VERSION) -> dict[str, Any]:
    """The per-request ``_meta`` of the 2026-07-28 protocol."""
    return {
        "io.modelcontextprotocol/protocolVersion": version,
        "io.modelcontextprotocol/clientInfo": CLIENT_INFO,
        "io.modelcontextprotocol/clientCapabilities": {},
    }


def initialize(version: str = LATEST_HANDSHAKE_VERSION) -> dict[str, Any]:
    params = {"protocolVersion": version, "capabilities": {}, "clientInfo": CLIENT_INFO}
    return {"jsonrpc": "2.0", "id": raw_id(), "method": "initialize", "params": params}


def live_request(modern: bool) -> dict[str, Any]:
    """A request every partner of that era answers: ``ping`` (handshake), ``server/discover`` (2026)."""
    if modern:
        return {"jsonrpc": "2.0", "id": raw_id(), "method": "server/discover", "params": {"_meta": envelope()}}
    return {"jsonrpc": "2.0", "id": raw_id(), "method": "ping"}


def _era(modern: bool) -> str:
    return "with protocol 2026-07-28" if modern else "after initialize"


def _dump(value: Any) -> Any:
    # Only what the partner sent: the SDK's model adds defaults of its own (resultType, ...).
    if hasattr(value, "model_dump"):
        return value.model_dump(by_alias=True, mode="json", exclude_unset=True)
    return value


def _error_text(error: Any) -> str:
    """An error as the partner sent it, on one line (an SDK's message may be a multi-line dump)."""
    if not isinstance(error, dict):
        return repr(error)
    message = " ".join(str(error.get("message", "")).split())
    return f"error {error.get('code')!r} ({message if len(message) <= 120 else message[:119] + '…'})"


async def guard(run: ProbeRun, check: str, work: Awaitable[None]) -> None:
    """Run one part of ``check``; a failure to even ask is that part failing, with the reason."""
    try:
        await work
    except Exception as exc:
        run.part(check, False, f"could not ask: {run.why(exc)}")


async def _ask(run: ProbeRun, client: Client, request: Any, result_type: Any) -> tuple[Any, dict[str, Any] | None]:
    """The result, or the JSON-RPC error as the partner sent it (code, message, data)."""
    try:
        result = await client.session.send_request(request, result_type, request_read_timeout_seconds=run.timeout)
    except MCPError as exc:
        run.check_alive()  # "Connection closed" from a partner that exited is its exit
        if timed_out(exc):
            raise
        return None, {"code": exc.code, "message": exc.message, **({"data": exc.data} if exc.data is not None else {})}
    return result, None


# -- through the SDK session ----------------------------------------------------------------------


async def unknown_method(run: ProbeRun, client: Client, modern: bool) -> None:
    result, error = await _ask(run, client, types.Request(method=NO_METHOD, params=None), types.EmptyResult)
    evidence = [{"method": NO_METHOD}, {"error": error} if error else {"result": _dump(result)}]
    era = _era(modern)
    if error is None:
        run.part("unknown-method", False, f"{era}: {NO_METHOD} got a result, not an error", evidence)
    elif error["code"] == METHOD_NOT_FOUND:
        run.part("unknown-method", True, f"{era}: -32601", evidence)
    else:
        run.part("unknown-method", False, f"{era}: {_error_text(error)}, not -32601 Method not found", evidence)


async def unknown_tool(run: ProbeRun, client: Client, modern: bool) -> None:
    params = types.CallToolRequestParams(name=NO_TOOL, arguments={})
    result, error = await _ask(run, client, types.CallToolRequest(params=params), types.CallToolResult)
    evidence = [
        {"method": "tools/call", "params": {"name": NO_TOOL}},
        {"error": error} if error else {"result": _dump(result)},
    ]
    era = _era(modern)
    if error is None:
        what = "a tool error (isError)" if getattr(result, "is_error", False) else "a result"
        run.part(
            "unknown-tool",
            False,
            f"{era}: the unknown tool {NO_TOOL} got {what}, not the JSON-RPC error -32602 of a protocol error",
            evidence,
        )
    elif error["code"] == INVALID_PARAMS:
        run.part("unknown-tool", True, f"{era}: -32602", evidence)
    else:
        run.part("unknown-tool", False, f"{era}: {_error_text(error)}, not -32602 Invalid params", evidence)


async def unknown_resource(run: ProbeRun, client: Client, modern: bool, capabilities: Any) -> None:
    era = _era(modern)
    if getattr(capabilities, "resources", None) is None:
        run.part("unknown-resource", None, f"{era}: no resources capability declared")
        return
    request = types.ReadResourceRequest(params=types.ReadResourceRequestParams(uri=NO_RESOURCE))
    result, error = await _ask(run, client, request, types.ReadResourceResult)
    evidence = [
        {"method": "resources/read", "params": {"uri": NO_RESOURCE}},
        {"error": error} if error else {"result": _dump(result)},
    ]
    if error is None:
        run.part("unknown-resource", False, f"{era}: {NO_RESOURCE} was read (a result), not refused", evidence)
    elif error["code"] == INVALID_PARAMS:
        run.part("unknown-resource", True, f"{era}: -32602", evidence)
    elif error["code"] == RESOURCE_NOT_FOUND_2025 and not modern:
        run.part("unknown-resource", True, f"{era}: -32002 (2025-11-25's code)", evidence)
    else:
        wanted = "-32602 (2026-07-28 retires -32002)" if modern else "-32002 or -32602"
        run.part("unknown-resource", False, f"{era}: {_error_text(error)}, not {wanted}", evidence)


async def unsupported_version(run: ProbeRun, client: Client) -> None:
    """server/discover at a version no server speaks: -32022 naming the versions it does."""
    try:
        result: Any = await client.session.send_discover(BOGUS_VERSION)
        error = None
    except MCPError as exc:
        run.check_alive()
        if timed_out(exc):
            raise
        result, error = None, {"code": exc.code, "message": exc.message, "data": exc.data}
    evidence = [
        {"method": "server/discover", "_meta": {"protocolVersion": BOGUS_VERSION}},
        {"error": error} if error else {"result": result},
    ]
    supported = (error or {}).get("data") or {}
    listed = supported.get("supported") if isinstance(supported, dict) else None
    if error is None:
        run.part(
            "version-negotiation", False, f"server/discover at {BOGUS_VERSION} was answered, not refused", evidence
        )
    elif error["code"] != UNSUPPORTED_PROTOCOL_VERSION:
        run.part(
            "version-negotiation",
            False,
            f"server/discover at {BOGUS_VERSION}: {_error_text(error)}, not -32022",
            evidence,
        )
    elif not (isinstance(listed, list) and listed and all(isinstance(v, str) for v in listed)):
        run.part(
            "version-negotiation", False, "-32022 without the list of supported versions in data.supported", evidence
        )
    else:
        run.part("version-negotiation", True, f"2026-07-28: -32022 naming {', '.join(listed)}", evidence)


# -- raw on the stdio wire ----------------------------------------------------------------------


async def batch_on_wire(run: ProbeRun, wire: Wire, modern: bool) -> None:
    element = live_request(modern)
    got, fenced = await wire.exchange([element], live_request(modern), run.timeout)
    judge_batch(run, [element], got, fenced, _era(modern))


def judge_batch(
    run: ProbeRun, sent: Any, got: list[Any], answered: bool, where: str, evidence: list[Any] | None = None
) -> None:
    evidence = evidence or ([sent, *got] if got else [sent, {"answer": "none"}])
    errors = [m["error"] for m in got if isinstance(m, dict) and isinstance(m.get("error"), dict)]
    if any(isinstance(m, list) for m in got):
        run.part("batch-rejected", False, f"{where}: the batch was answered with a batch (an array)", evidence)
    elif any(e.get("code") == INVALID_REQUEST for e in errors):
        run.part("batch-rejected", True, f"{where}: -32600", evidence)
    elif errors:
        run.part("batch-rejected", False, f"{where}: {_error_text(errors[0])}, not -32600 Invalid Request", evidence)
    elif got:
        run.part("batch-rejected", False, f"{where}: the batch's request was served", evidence)
    elif not answered:
        run.part(
            "batch-rejected",
            False,
            f"{where}: {run.no_answer()}, not even to a ping after it",
            evidence,
        )
    else:
        run.part(
            "batch-rejected",
            False,
            f"{where}: no answer to the batch (JSON-RPC 2.0 answers what it cannot take with an error: -32600)",
            evidence,
        )


async def version_on_wire(run: ProbeRun, wire: Wire, modern: bool) -> None:
    message = {**live_request(modern), "jsonrpc": "1.0"}
    got, fenced = await wire.exchange(message, live_request(modern), run.timeout)
    judge_version(run, message, got, fenced, _era(modern))


def judge_version(
    run: ProbeRun, sent: Any, got: list[Any], answered: bool, where: str, evidence: list[Any] | None = None
) -> None:
    evidence = evidence or ([sent, *got] if got else [sent, {"answer": "none"}])
    mine = [m for m in got if isinstance(m, dict) and m.get("id") in (sent["id"], None)]
    errors = [m["error"] for m in mine if isinstance(m.get("error"), dict)]
    if any(e.get("code") == INVALID_REQUEST for e in errors):
        run.part("jsonrpc-version", True, f'{where}: "jsonrpc": "1.0" refused with -32600', evidence)
    elif errors:
        run.part("jsonrpc-version", False, f"{where}: {_error_text(errors[0])}, not -32600 Invalid Request", evidence)
    elif mine:
        run.part("jsonrpc-version", False, f'{where}: a "jsonrpc": "1.0" request was served as JSON-RPC 2.0', evidence)
    else:
        said = "not even to a ping after it" if not answered else "JSON-RPC 2.0 answers an invalid request with -32600"
        run.part("jsonrpc-version", False, f'{where}: no answer to "jsonrpc": "1.0" ({said})', evidence)


async def envelope_on_wire(run: ProbeRun, wire: Wire) -> None:
    message = {"jsonrpc": "2.0", "id": raw_id(), "method": "tools/list", "params": {}}
    answer = await wire.request(message, run.timeout)
    judge_envelope(run, message, answer, "on stdio")


def judge_envelope(run: ProbeRun, sent: Any, answer: Any, where: str, status: int | None = None) -> None:
    evidence = [sent, answer if answer is not None else {"answer": "none"}]
    error = answer.get("error") if isinstance(answer, dict) else None
    if answer is None:
        run.part("envelope", False, f"{where}: no answer to a request without _meta within {run.timeout:g} s", evidence)
    elif not isinstance(error, dict):
        run.part("envelope", False, f"{where}: a request without the per-request _meta was served", evidence)
    elif error.get("code") != INVALID_PARAMS:
        run.part("envelope", False, f"{where}: {_error_text(error)}, not -32602 Invalid params", evidence)
    elif status is not None and status != 400:
        run.part("envelope", False, f"{where}: -32602 with HTTP {status}, not 400 Bad Request", evidence)
    else:
        run.part("envelope", True, f"{where}: -32602" + (" with HTTP 400" if status else ""), evidence)


def judge_initialize(run: ProbeRun, sent: Any, answer: Any, where: str) -> None:
    """An initialize offering a version no server speaks: another version back, or an error naming some."""
    evidence = [sent, answer if answer is not None else {"answer": "none"}]
    result = answer.get("result") if isinstance(answer, dict) else None
    error = answer.get("error") if isinstance(answer, dict) else None
    got = result.get("protocolVersion") if isinstance(result, dict) else None
    data = error.get("data") if isinstance(error, dict) else None
    if answer is None:
        run.part("version-negotiation", False, f"{where}: no answer to initialize within {run.timeout:g} s", evidence)
    elif isinstance(got, str) and got != BOGUS_VERSION:
        known = "" if got in HANDSHAKE_PROTOCOL_VERSIONS else " (a version the probe does not know)"
        run.part("version-negotiation", True, f"initialize offering {BOGUS_VERSION} got {got}{known}", evidence)
    elif got == BOGUS_VERSION:
        run.part(
            "version-negotiation",
            False,
            f"{where}: initialize offering {BOGUS_VERSION} got it back: a server answers a version it supports",
            evidence,
        )
    elif isinstance(data, dict) and isinstance(data.get("supported"), list) and data["supported"]:
        run.part(
            "version-negotiation", True, f"initialize at {BOGUS_VERSION} refused, naming {data['supported']}", evidence
        )
    else:
        run.part("version-negotiation", False, f"{where}: initialize offering {BOGUS_VERSION}: {answer}", evidence)


async def initialize_on_fresh_wire(run: ProbeRun) -> None:
    """A command started once more, for an initialize of the probe's own."""
    wire = Wire("version negotiation")
    run.wires.append(wire)
    message = initialize(BOGUS_VERSION)
    async with running(wire, run.endpoint.argv, run.endpoint.environment):
        answer = await wire.request(message, run.timeout)
    judge_initialize(run, message, answer, "on stdio")


# -- the handshakes ----------------------------------------------------------------------------------


async def _parts(run: ProbeRun, client: Client, modern: bool) -> None:
    """The parts asked on one handshake connection."""
    capabilities = client.session.server_capabilities
    steps: list[tuple[str, Callable[[], Awaitable[None]]]] = [
        ("unknown-method", lambda: unknown_method(run, client, modern)),
        ("unknown-tool", lambda: unknown_tool(run, client, modern)),
        ("unknown-resource", lambda: unknown_resource(run, client, modern, capabilities)),
    ]
    if modern and run.transport != "inprocess":
        # In process the SDK calls the server's handlers directly: no transport, no version ladder.
        steps.append(("version-negotiation", lambda: unsupported_version(run, client)))
    wire = run.wire
    if wire is not None and wire.writable:
        steps += [
            ("batch-rejected", lambda: batch_on_wire(run, wire, modern)),
            ("jsonrpc-version", lambda: version_on_wire(run, wire, modern)),
        ]
        if modern:
            steps.append(("envelope", lambda: envelope_on_wire(run, wire)))
    for check, step in steps:
        if wire is not None and wire.ended:
            # Told once, where it happened; what was not asked yet fails with the reason in short.
            run.part(check, False, f"not asked: {wire.exit_summary()}")
            continue
        await guard(run, check, step())


async def handshakes(run: ProbeRun, keep: AsyncExitStack) -> None:
    """handshake-legacy and handshake-current, with the MCP parts asked on each connection;
    Unreachable when neither connects. The initialize connection stays open on ``keep`` (the
    cancellation check uses it: ping and notifications/cancelled are of that era)."""
    failures = {}
    for check, mode in (("handshake-legacy", "legacy"), ("handshake-current", "auto")):
        stack = AsyncExitStack()
        try:
            client = await open_client(run, stack, mode, f"{check} connection")
            version = client.session.protocol_version
            modern = version in MODERN_PROTOCOL_VERSIONS
            if mode == "legacy":
                run.facts["initialize"] = client.session.initialize_result
                run.record(check, "pass", f"initialize handshake, protocol {version}")
            elif modern:
                run.facts["discover"] = client.session.discover_result
                run.record(check, "pass", f"server/discover, protocol {version}")
            else:
                run.record(
                    check, "skip", f"speaks only the initialize handshake (protocol {version}); binding v1 allows it"
                )
            if mode == "legacy" or modern:
                await _parts(run, client, modern)
            if mode == "legacy":
                run.facts["legacy"] = (client, run.wire)
                keep.push_async_callback(_close, run, stack)
            else:
                await _close(run, stack)
        except Exception as exc:  # any failure to connect is this check's result
            await _close(run, stack)
            if check not in run.results:
                failures[check] = run.why(exc)
                run.record(check, "fail", f"could not connect: {failures[check]}")
            else:  # a connection that broke: its parts have said so already
                run.facts.setdefault("teardown", run.why(exc))
    if len(failures) == 2:
        legacy_wire = run.wires[0] if run.wires else None
        # An exit is told with its stderr already; a partner still running may have said why too.
        tail = legacy_wire.stderr_tail() if legacy_wire is not None and not legacy_wire.ended else []
        detail = "; the server said:\n" + "\n".join(f"  {line}" for line in tail) if tail else ""
        raise Unreachable(f"{run.role} partner {run.endpoint.target!r}: {failures['handshake-legacy']}{detail}")


async def after_handshakes(run: ProbeRun) -> None:
    """The parts that need their own connection, and the parts an era the partner lacks cannot give."""
    legacy = run.results["handshake-legacy"].status == "pass"
    modern = "discover" in run.facts
    if not legacy:
        for check in ("unknown-method", "unknown-tool", "unknown-resource", "batch-rejected", "jsonrpc-version"):
            run.part(check, None, "speaks no initialize handshake")
        run.part("version-negotiation", None, "speaks no initialize handshake")
    elif run.transport == "stdio":
        await guard(run, "version-negotiation", initialize_on_fresh_wire(run))
    elif run.transport == "inprocess":
        run.part("version-negotiation", None, "in process: no wire for an initialize of the probe's own")
    if not modern:
        for check in ("envelope", "version-negotiation", "unknown-method", "unknown-tool", "batch-rejected"):
            run.part(check, None, "does not speak 2026-07-28")
    _capabilities(run)


async def _close(run: ProbeRun, stack: AsyncExitStack) -> None:
    """Close a connection; one that broke on the way out has said why where it broke."""
    try:
        await stack.aclose()
    except Exception as exc:
        run.facts.setdefault("teardown", run.why(exc))


def _capabilities(run: ProbeRun) -> None:
    init, disc = run.facts.get("initialize"), run.facts.get("discover")
    if init is None or disc is None:
        run.part("capabilities", None, "one handshake only: nothing to compare")
        return
    a, b = _dump(init.capabilities), _dump(disc.capabilities)
    evidence = [{"initialize": {"capabilities": a}}, {"server/discover": {"capabilities": b}}]
    differences = _differences(a, b)
    if differences:
        shown = "; ".join(differences[:6])
        run.part("capabilities", False, f"initialize and server/discover disagree: {shown}", evidence)
    else:
        run.part(
            "capabilities",
            True,
            f"initialize and server/discover declare the same: {', '.join(sorted(a)) or 'none'}",
            evidence,
        )


def _differences(a: Any, b: Any, path: str = "") -> list[str]:
    if isinstance(a, dict) and isinstance(b, dict):
        found = []
        for key in sorted(set(a) | set(b)):
            where = f"{path}.{key}" if path else key
            if key not in a:
                found.append(f"{where} only in server/discover")
            elif key not in b:
                found.append(f"{where} only in initialize")
            else:
                found.extend(_differences(a[key], b[key], where))
        return found
    return [] if a == b else [f"{path}: {a!r} in initialize, {b!r} in server/discover"]
