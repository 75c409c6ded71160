"""``pgm-explore probe``: PGM-AUA conformance checks of someone else's partner server (docs/probe.md).

:func:`probe` connects to each partner (a URL or a command, :mod:`pgm_explore.mcp.connect`), plays a
few short scenarios with it as Basic Knowledge would, and judges what came back: one :class:`Check`
per check id, ``pass``, ``fail`` or ``skip``, with a message, the spec clause and the evidence (the
messages exchanged). Nothing here knows the partner's domain: the Requests are built from the spec
alone, so a check judges what every partner must do, never what it should know.
"""

from __future__ import annotations

import tempfile
import uuid
from collections.abc import Callable, Mapping
from contextlib import AsyncExitStack
from typing import Any

import anyio

from pgm_explore.mcp._probe_base import CHECKS, Check, CheckSpec, Unreachable, _connect, _handshakes, _Run, _why
from pgm_explore.mcp._probe_judge import _over_exchanges, _tool_schemas
from pgm_explore.mcp._probe_scenarios import (
    _bad_request,
    _cancellation,
    _check_pc_prompt,
    _commitments,
    _feasibility,
    _interleaved,
    _tool_listed,
)
from pgm_explore.mcp.connect import ROLES, Endpoint

__all__ = ["CHECKS", "Check", "CheckSpec", "Unreachable", "probe", "probe_sync"]

# Public names are documented where they are imported from, not in private modules.
for _public in (Check, CheckSpec, Unreachable):
    _public.__module__ = __name__

# -- the whole probe -------------------------------------------------------------------------------


async def _probe_one(role: str, endpoint: Endpoint) -> list[Check]:
    with tempfile.TemporaryFile("w+", encoding="utf-8", errors="replace") as errlog:
        run = _Run(role, endpoint, errlog)
        await _handshakes(run)
        mode = "legacy" if run.results["handshake-current"].status != "pass" else "auto"
        try:
            async with AsyncExitStack() as stack:
                run.client = await _connect(run, stack, mode)
                await _tool_listed(run)
                if run.tool is not None:
                    if run.type_name == "BKN-PRC":
                        await _check_pc_prompt(run, f"probe-pc-{uuid.uuid4().hex[:6]}")
                    scenarios: list[Callable[[_Run], Any]] = [_interleaved, _bad_request]
                    if run.type_name == "BKN-DAC":
                        scenarios[:0] = [_commitments, _feasibility]
                    for scenario in scenarios:
                        await scenario(run)
                    run.client = None
                    await _cancellation(run)
        except Exception as exc:
            for check in _applicable(role):
                if check.id not in run.results:
                    run.record(check.id, "fail", f"the connection broke during the probe: {_why(exc)}")
        _over_exchanges(run)
        _tool_schemas(run)
        for check in _applicable(role):
            if check.id not in run.results:
                run.record(check.id, "skip", "not run: the tool is not listed")
        return [run.results[c.id] for c in _applicable(role)]


def _applicable(role: str) -> list[CheckSpec]:
    return [c for c in CHECKS if role in c.roles]


async def probe(partners: Mapping[str, Endpoint]) -> list[Check]:
    """Run every check on each partner, in the order prc, dac, pal; raises Unreachable."""
    results: list[Check] = []
    for role in ROLES:
        if role in partners:
            results.extend(await _probe_one(role, partners[role]))
    return results


def probe_sync(partners: Mapping[str, Endpoint]) -> list[Check]:
    """:func:`probe` with its own event loop (not inside Jupyter: there, ``await probe(...)``)."""
    return anyio.run(probe, partners)
