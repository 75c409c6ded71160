"""``pgm-explore probe``: PGM-AUA conformance checks of someone else's partner server (docs/probe.md).

:func:`probe` connects to each partner (a URL or a command, :mod:`pgm_explore.mcp.connect`), checks
its MCP layer (JSON-RPC, the handshakes, HTTP status codes and headers, Host and Origin), plays a few
short scenarios with it as Basic Knowledge would, and judges what came back: one :class:`Check` per
check id, ``pass``, ``fail`` or ``skip``, with a message, the spec clause and the evidence (the
messages exchanged). A check passes only on evidence: what could not be observed is ``skip``, with
the reason. Nothing here knows the partner's domain: the Requests are built from the spec alone, so
a check judges what every partner must do, never what it should know.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable, Mapping
from contextlib import AsyncExitStack
from typing import Any

import anyio

from pgm_explore.mcp._probe_base import (
    CHECKS,
    DEFAULT_TIMEOUT,
    SERVER_LOG,
    Check,
    CheckSpec,
    ProbeRun,
    Unreachable,
    open_client,
    sdk_log,
)
from pgm_explore.mcp._probe_http import http_checks
from pgm_explore.mcp._probe_judge import judge_exchanges, judge_tool_schemas
from pgm_explore.mcp._probe_protocol import after_handshakes, handshakes
from pgm_explore.mcp._probe_scenarios import (
    bad_request_scenario,
    cancellation_scenario,
    check_pc_prompt,
    commitments_scenario,
    feasibility_scenario,
    interleaved_scenario,
    tool_listed,
)
from pgm_explore.mcp._wire import PartnerExited
from pgm_explore.mcp.connect import ROLES, Endpoint

__all__ = ["CHECKS", "DEFAULT_TIMEOUT", "SERVER_LOG", "Check", "CheckSpec", "Unreachable", "probe", "probe_sync"]

# Public names are documented where they are imported from, not in private modules.
for _public in (Check, CheckSpec, Unreachable):
    _public.__module__ = __name__

# Made of parts (one per era and way of asking), settled once every connection has been made.
_SETTLED = (
    "unknown-method",
    "unknown-tool",
    "unknown-resource",
    "batch-rejected",
    "jsonrpc-version",
    "version-negotiation",
    "capabilities",
    "envelope",
    "http-media-types",
    "http-session",
    "http-protocol-version",
    "http-get",
    "dns-rebinding",
    "http-auth",
)

# -- the whole probe -------------------------------------------------------------------------------


async def _scenarios(run: ProbeRun) -> None:
    mode = "legacy" if run.results["handshake-current"].status != "pass" else "auto"
    async with AsyncExitStack() as stack:
        run.client = await open_client(run, stack, mode, "scenarios connection")
        await tool_listed(run)
        if run.tool is None:
            return
        if run.type_name == "BKN-PRC":
            await check_pc_prompt(run, f"probe-pc-{uuid.uuid4().hex[:6]}")
        scenarios: list[Callable[[ProbeRun], Any]] = [interleaved_scenario, bad_request_scenario]
        if run.type_name == "BKN-DAC":
            scenarios[:0] = [commitments_scenario, feasibility_scenario]
        for scenario in scenarios:
            await scenario(run)
        run.client = None
    await cancellation_scenario(run)


def _jsonrpc_responses(run: ProbeRun) -> None:
    if not run.wires:
        return
    problems = [(wire, text, message) for wire in run.wires for text, message in wire.problems]
    responses = sum(sum(wire.answered.values()) for wire in run.wires)
    if problems:
        shown = "; ".join(f"{text} ({wire.label})" for wire, text, _ in problems[:4])
        more = f" (and {len(problems) - 4} more)" if len(problems) > 4 else ""
        run.record("jsonrpc-responses", "fail", f"{shown}{more}", [m for _, _, m in problems[:6]])
    elif responses:
        run.record(
            "jsonrpc-responses",
            "pass",
            f"{responses} responses over {len(run.wires)} connections, each to a request sent, once",
        )
    else:
        run.record("jsonrpc-responses", "skip", "no response came back")


def _not_applicable(run: ProbeRun, check: CheckSpec) -> str | None:
    if run.transport in check.transports:
        return None
    if check.transports == ("http",):
        return (
            f"over HTTP only: this partner is reached {'in process' if run.transport == 'inprocess' else 'over stdio'}"
        )
    return "in process: no JSON-RPC wire to check (probe it over stdio or HTTP)"


async def _probe_one(role: str, endpoint: Endpoint, timeout: float) -> list[Check]:
    run = ProbeRun(role, endpoint, timeout=timeout)
    keep = AsyncExitStack()  # the connections kept for later checks
    if endpoint.server is not None:  # its SDK logs in this process: evidence, not stderr
        keep.enter_context(sdk_log(run.log))
    try:
        await handshakes(run, keep)
        try:
            await after_handshakes(run)
            if run.transport == "http":
                await http_checks(run)
            await _scenarios(run)
        except Exception as exc:
            # The checks not judged yet fail with the reason: an exit, a time limit, a broken connection.
            said = run.why(exc) if not isinstance(exc, PartnerExited) else str(exc)
            for check in _applicable(role):
                if check.id not in run.results and not run.parts.get(check.id):
                    run.record(check.id, "fail", f"not judged: {said}")
        for settled in _SETTLED:
            if settled not in run.results:
                run.settle(settled)
        _jsonrpc_responses(run)
        judge_exchanges(run)
        judge_tool_schemas(run)
        for check in _applicable(role):
            reason = _not_applicable(run, check)
            if reason is not None:
                run.record(check.id, "skip", reason)
            elif check.id not in run.results:
                run.record(check.id, "skip", "not run: the tool is not listed")
        return [run.results[c.id] for c in _applicable(role)]
    finally:
        try:
            await keep.aclose()
        except Exception as exc:  # a kept connection that broke has failed its checks already
            run.facts.setdefault("teardown", run.why(exc))
        run.close()


def _applicable(role: str) -> list[CheckSpec]:
    return [c for c in CHECKS if role in c.roles]


async def probe(partners: Mapping[str, Endpoint], *, timeout: float = DEFAULT_TIMEOUT) -> list[Check]:
    """Run every check on each partner, in the order prc, dac, pal; raises Unreachable.

    ``timeout``: how long each call waits for its answer, in seconds.
    """
    results: list[Check] = []
    for role in ROLES:
        if role in partners:
            results.extend(await _probe_one(role, partners[role], timeout))
    return results


def probe_sync(partners: Mapping[str, Endpoint], *, timeout: float = DEFAULT_TIMEOUT) -> list[Check]:
    """:func:`probe` with its own event loop (not inside Jupyter: there, ``await probe(...)``)."""
    return anyio.run(lambda: probe(partners, timeout=timeout))
