"""One deliberation from start to end, whatever the partners do: what ``pgm-explore dialogue`` runs.

:func:`deliberate` connects (reference partners or anyone's, :class:`BasicKnowledge`), runs the demo or
the steps of a script, and hands back the transcript recorded so far in every case: a partner that
refuses a Request, answers with a JSON-RPC error or drops the connection ends the deliberation there,
with the reason, and loses nothing.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import anyio

from pgm_explore.mcp.client import BasicKnowledge, PartnerError, Transport, run_demo
from pgm_explore.mcp.connect import Endpoint
from pgm_explore.validation import RULES

__all__ = ["Deliberation", "deliberate"]

Step = tuple[int, Callable[[BasicKnowledge], Awaitable[Any]]]


@dataclass
class Deliberation:
    transcript: list[dict[str, Any]] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)
    """Plain-language lines: the findings of exchanges (``message 7: [partner-refused] ...``) and where it stopped."""
    failed: bool = False
    """A Request got no Response, or an exchange has an error-level finding."""
    unreachable: str | None = None
    """Why the partners could not be reached (nothing was exchanged)."""


def _why(exc: BaseException) -> str:
    if isinstance(exc, BaseExceptionGroup):
        return "; ".join(_why(e) for e in exc.exceptions)
    return str(exc) or type(exc).__name__


def deliberate(
    *,
    transport: Transport = "inprocess",
    partners: Mapping[str, str | Endpoint] | None = None,
    steps: Sequence[Step] | None = None,
    dialog_id: str | None = None,
) -> Deliberation:
    """Run the demo (``steps`` None) or the steps, after opening ``dialog_id``; uses ``anyio.run``."""
    result = Deliberation()
    bk = BasicKnowledge(transport=transport, partners=partners)
    connected = False

    async def main() -> None:
        nonlocal connected
        async with bk:
            connected = True
            where = "the demo"
            try:
                if steps is None:
                    await run_demo(bk)
                else:
                    await bk.open_dialogue(dialog_id)
                    for index, step in steps:
                        where = f"step {index}"
                        await step(bk)
            except PartnerError as exc:
                result.failed = True
                result.problems.append(f"{where}: the partner refused the Request: {exc}")

    try:
        anyio.run(main)
    except Exception as exc:  # a partner that cannot be started or reached, or that breaks the connection
        if not connected:
            result.unreachable = _why(exc)
            return result
        result.failed = True
        result.problems.append(f"the connection to a partner broke: {_why(exc)}")
    result.transcript = list(bk.transcript)
    # Findings of the exchange itself; those of the messages come again when the recorded file is checked.
    exchange = [(i, f) for i, f in bk.findings if RULES[f.rule].scope == "partner"]
    result.problems[:0] = [f"message {i + 1}: [{f.rule}] {f.json_path}: {f.message}" for i, f in exchange]
    result.failed = result.failed or any(f.severity == "error" for _, f in exchange)
    return result
