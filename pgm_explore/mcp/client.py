"""A Basic Knowledge client of the three partner servers, recording every message as a transcript.

The reference partners are reached over ``"inprocess"`` (default; ``mcp.Client(server)``), ``"stdio"``
(one ``python -m pgm_explore.mcp.serve`` subprocess per partner) or ``"http"`` (the same subprocesses
with streamable HTTP on 127.0.0.1, each on a free port). Any partner can instead be someone else's
server, by URL or command (``partners={"dac": "http://..."}``, :mod:`pgm_explore.mcp.connect`). Every
Response is validated when it arrives and its findings are kept beside it (:attr:`BasicKnowledge.findings`);
a tool error, a JSON-RPC error or an unreadable result is a finding too, and the transcript recorded so
far is kept. Everything is async (anyio); :func:`run_demo_sync` wraps the demo for the command line.
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
import uuid
from collections.abc import Iterable, Mapping, Sequence
from contextlib import AbstractAsyncContextManager, AsyncExitStack
from pathlib import Path
from typing import Any, Literal

import anyio
from mcp import Client, StdioServerParameters
from mcp.shared.exceptions import MCPError

from pgm_explore.dialogue import documents
from pgm_explore.errors import PgmExploreError
from pgm_explore.mcp._held import Held
from pgm_explore.mcp._partners import Source
from pgm_explore.mcp.connect import ROLES, Endpoint, call_tool, parse_partner
from pgm_explore.mcp.servers import domain_access_server, personality_alignment_server, prompt_creation_server
from pgm_explore.spec import data_type
from pgm_explore.validation import validate
from pgm_explore.validation.findings import Finding

__all__ = ["BasicKnowledge", "PartnerError", "Transport", "run_demo", "run_demo_sync"]

Transport = Literal["inprocess", "stdio", "http"]
_TOOLS = {"BKN-PRC": "bkn_prc", "BKN-DAC": "bkn_dac", "BKN-PAL": "bkn_pal"}
_PARTNERS = {"BKN-PRC": "prompt-creation", "BKN-DAC": "domain-access", "BKN-PAL": "personality-alignment"}


class PartnerError(PgmExploreError):
    """No Response to a Request: a tool error (``findings`` as the partner sent them), a JSON-RPC error,
    a broken connection or a result with nothing to read. Recorded in the client's findings first."""

    def __init__(self, text: str) -> None:
        super().__init__(text)
        start = text.find("{")
        try:
            self.findings: list[dict[str, Any]] = json.loads(text[start:])["findings"] if start >= 0 else []
        except (ValueError, KeyError):
            self.findings = []


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


async def _wait_for_port(port: int, process: subprocess.Popen[bytes], timeout: float) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"the server on port {port} exited with {process.returncode}")
        try:
            # A TCP connect, not an HTTP request: readiness without side effects.
            stream = await anyio.connect_tcp("127.0.0.1", port)
        except OSError:
            await anyio.sleep(0.05)
        else:
            await stream.aclose()
            return
    raise TimeoutError(f"no server on 127.0.0.1:{port} after {timeout} s")


class BasicKnowledge:
    """Basic Knowledge talking to Prompt Creation, Domain Access and Personality Alignment.

    Use as ``async with BasicKnowledge() as bk:``, or in a notebook (where an ``async with`` cannot
    span cells) ``await bk.start()`` ... ``await bk.stop()``: the connections are then held open in a
    background task, and reopened when the client is used after :meth:`stop` (the reference partners
    of the ``inprocess`` transport are the same servers, with what they remember). Then
    :meth:`open_dialogue` first (it reads the PC Prompt), then the ``ask_*`` helpers. :attr:`transcript` holds every message in order, and
    :attr:`findings` what was found about them as they arrived. ``partners`` maps a role (``prc``,
    ``dac``, ``pal``) to a URL or a command line of another server (or an :class:`Endpoint`); the
    others are the reference partners over ``transport``.
    BKN-PRC uses the PC Prompt's DialogID; BKN-DAC and BKN-PAL have their own (``<id>-dac``,
    ``<id>-pal``: one MCP session per partner, D15). TurnIndex counts per (DialogID, type) from 0, over the Requests sent (the transcript), the
    helpers' and those composed by hand alike.
    """

    def __init__(
        self,
        *,
        transport: Transport = "inprocess",
        scenario: Source | None = None,
        domain: Source | None = None,
        profile: Source | None = None,
        partners: Mapping[str, str | Endpoint] | None = None,
        startup_timeout: float = 20.0,
        call_timeout: float | None = 120.0,
    ) -> None:
        if transport not in ("inprocess", "stdio", "http"):
            raise ValueError(f"unknown transport {transport!r}")
        self.transport = transport
        self.endpoints: dict[str, Endpoint] = {}
        """Type name -> someone else's server, for the partners given by URL or command."""
        for role, where in (partners or {}).items():
            if role not in ROLES:
                raise ValueError(f"unknown partner {role!r}: one of {', '.join(ROLES)}")
            self.endpoints[ROLES[role]] = where if isinstance(where, Endpoint) else parse_partner(f"{role}={where}")[1]
        self.call_timeout = call_timeout
        self.findings: list[tuple[int, Finding]] = []
        """(index in :attr:`transcript`, finding): the findings of each message as it arrived, and of
        each exchange that gave no Response (then at the Request's index)."""
        self.sources = {"BKN-PRC": scenario, "BKN-DAC": domain, "BKN-PAL": profile}
        self.startup_timeout = startup_timeout
        self.transcript: list[dict[str, Any]] = []
        self.pc_prompt: dict[str, Any] | None = None
        self.action_context: dict[str, Any] | None = None
        self.dialogs: dict[str, str] = {}
        self.servers: dict[str, Any] = {}
        """The in-process MCPServer of each type (empty for the subprocess transports)."""
        self._clients: dict[str, Client] = {}
        self._processes: list[subprocess.Popen[bytes]] = []
        self._stack = AsyncExitStack()
        self._held: Held[BasicKnowledge] | None = None

    # -- connections ------------------------------------------------------------------------------

    async def __aenter__(self) -> BasicKnowledge:
        try:
            for type_name in _TOOLS:
                self._clients[type_name] = await self._stack.enter_async_context(self._client(type_name))
        except BaseException:
            await self.aclose()
            raise
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()

    async def start(self) -> BasicKnowledge:
        """Open the connections in a background task of their own (a notebook's cells can then use
        the client in any order); raises what opening them raised. Already open: nothing happens."""
        if self._held is None:
            self._held = Held()
        if not self._held.is_open:
            await self._held.open(self)
        return self

    async def stop(self) -> None:
        """Close the connections that :meth:`start` opened; using the client later opens them again."""
        if self._held is not None:
            await self._held.close()

    @property
    def is_open(self) -> bool:
        """Whether the connections are open (inside ``async with``, or between start and stop)."""
        return bool(self._clients)

    async def _connected(self, type_name: str) -> Client:
        """The client of ``type_name``; reopened first when :meth:`start` opened it and it was closed since."""
        if type_name not in self._clients and self._held is not None:
            await self.start()
        if type_name not in self._clients:
            raise PartnerError(
                "the client is closed: use it inside `async with BasicKnowledge() as bk:`, or open it with `await bk.start()`"
            )
        return self._clients[type_name]

    async def aclose(self) -> None:
        self._clients.clear()
        try:
            await self._stack.aclose()
        finally:
            for process in self._processes:
                process.terminate()
                try:
                    process.wait(timeout=5)
                except subprocess.TimeoutExpired:
                    process.kill()
                    process.wait()
            self._processes.clear()

    def _command(self, type_name: str) -> list[str]:
        args = ["-m", "pgm_explore.mcp.serve", _PARTNERS[type_name]]
        source = self.sources[type_name]
        if isinstance(source, Mapping):
            raise ValueError(f"the {self.transport} transport needs a file, not a mapping, for {type_name}")
        if source is not None:
            args += ["--source", str(Path(source).resolve())]
        return args

    def _client(self, type_name: str) -> AbstractAsyncContextManager[Client]:
        if type_name in self.endpoints:
            return self.endpoints[type_name].client(timeout=self.call_timeout)
        if self.transport == "inprocess":
            factory = {
                "BKN-PRC": prompt_creation_server,
                "BKN-DAC": domain_access_server,
                "BKN-PAL": personality_alignment_server,
            }[type_name]
            # Opened again (after stop), the same server: it still knows the dialogues it answered.
            if type_name not in self.servers:
                self.servers[type_name] = factory(self.sources[type_name])
            return Client(self.servers[type_name])
        if self.transport == "stdio":
            return Client(StdioServerParameters(command=sys.executable, args=self._command(type_name)))
        return _HTTPClient(self, type_name)

    # -- messages ---------------------------------------------------------------------------------

    def _envelope(self, type_name: str, dialog: str) -> dict[str, Any]:
        if self.pc_prompt is None:
            raise RuntimeError("open_dialogue() first: the PC Prompt opens the deliberation")
        return documents.request_envelope(
            type_name, self.pc_prompt, dialog_id=dialog, turn_index=self._next_turn(type_name, dialog)
        )

    def _next_turn(self, type_name: str, dialog: Any) -> int:
        """One more than the last Request of ``type_name`` in ``dialog`` that was sent, or 0: read from
        the transcript, so that Requests composed by hand and the helpers' share one count."""
        header = data_type(type_name).header
        turns = [
            m["TurnIndex"]
            for m in self.transcript
            if isinstance(m, Mapping)
            and m.get("Header") == header
            and m.get("Mode") == "RQ"
            and m.get("DialogID") == dialog
            and type(m.get("TurnIndex")) is int
        ]
        return max(turns) + 1 if turns else 0

    async def open_dialogue(self, dialog_id: str | None = None) -> dict[str, Any]:
        """Read the PC Prompt of a new dialogue from Prompt Creation (recorded first)."""
        dialog_id = dialog_id or f"dlg-{uuid.uuid4().hex[:8]}"
        uri = f"pc-prompt://{dialog_id}"
        client = await self._connected("BKN-PRC")
        try:
            result = await client.read_resource(uri)
            text = getattr(result.contents[0], "text", None) if result.contents else None
            prompt = json.loads(text) if text else None
        except (MCPError, ValueError, RecursionError, anyio.ClosedResourceError, anyio.BrokenResourceError) as exc:
            why = f"reading {uri} failed: {exc}"
            self.findings.append((len(self.transcript), Finding.of("partner-error", (), why)))
            raise PartnerError(why) from None
        if not isinstance(prompt, dict):
            why = f"reading {uri} gave no JSON object"
            self.findings.append((len(self.transcript), Finding.of("partner-unreadable", (), why)))
            raise PartnerError(why)
        self._arrived(prompt)
        self.pc_prompt = prompt
        self.action_context = prompt.get("ActionContext")
        self.dialogs = {"BKN-PRC": dialog_id, "BKN-DAC": f"{dialog_id}-dac", "BKN-PAL": f"{dialog_id}-pal"}
        return prompt

    def _arrived(self, document: dict[str, Any], extra: Iterable[Finding] = ()) -> None:
        """Record a document from a partner, with its findings (validated now, not when the file is read)."""
        index = len(self.transcript)
        self.transcript.append(document)
        self.findings.extend((index, f) for f in (*extra, *validate(document).findings))

    async def send(self, type_name: str, message: Any, **arguments: Any) -> dict[str, Any]:
        """Send any document (recorded as is) and return the Response (recorded with its findings).

        When no Response comes (a tool error, a JSON-RPC error, a broken connection, a result with
        nothing to read) the finding is recorded at the Request and :class:`PartnerError` raised.
        A Request is recorded only once sent: one that could not be sent (the client is closed)
        leaves the transcript as it was.
        """
        client = await self._connected(type_name)
        reply = await call_tool(client, _TOOLS[type_name], {"message": message, **arguments}, timeout=self.call_timeout)
        if not reply.sent:
            raise PartnerError(reply.error or "the Request could not be sent")
        index = len(self.transcript)
        self.transcript.append(message)
        if reply.document is None:
            self.findings.extend((index, f) for f in reply.findings)
            raise PartnerError(reply.error or (reply.findings[0].message if reply.findings else "no Response"))
        self._arrived(reply.document, reply.findings)
        return reply.document

    async def request(self, type_name: str, **fields: Any) -> dict[str, Any]:
        """Build a Request of ``type_name`` with ``fields`` (None values left out) and send it."""
        message = self._envelope(type_name, self.dialogs[type_name])
        message.update({k: v for k, v in fields.items() if v is not None})
        message = documents.with_metadata(message)
        extra = {"action_context": self.action_context} if type_name == "BKN-DAC" else {}
        return await self.send(type_name, message, **extra)

    async def ask_prc(
        self, kind: str, question: str | None = None, entity_ids: Sequence[str] | None = None
    ) -> dict[str, Any]:
        response = await self.request(
            "BKN-PRC", Kind=kind, Question=question, EntityIDs=list(entity_ids) if entity_ids else None
        )
        # A refined ActionContext replaces the PC Prompt's for later feasibility checks.
        if context := (response.get("Representation") or {}).get("ActionContext"):
            self.action_context = context
        return response

    async def ask_dac(self, kind: str, question: str | None = None, **fields: Any) -> dict[str, Any]:
        return await self.request("BKN-DAC", Kind=kind, Question=question, **fields)

    async def check_feasibility(self, steps: Iterable[str], question: str | None = None) -> dict[str, Any]:
        actions = [{"Step": i, "Statement": s} for i, s in enumerate(steps)]
        return await self.ask_dac("feasibility", question, ProcessActions=actions)

    async def retain(self, commitments: Mapping[str, str], question: str | None = None) -> dict[str, Any]:
        items = [{"CommitmentID": c, "Statement": s} for c, s in commitments.items()]
        return await self.ask_dac("commitment", question, Commitments=items)

    async def release(self, ids: Iterable[str], question: str | None = None) -> dict[str, Any]:
        return await self.ask_dac("commitment", question, ReleasedCommitmentIDs=list(ids))

    async def ask_pal(self, question: str, constraints: Mapping[str, Any] | None = None) -> dict[str, Any]:
        return await self.request("BKN-PAL", Question=question, Constraints=dict(constraints) if constraints else None)

    def next_turn(self, message: Mapping[str, Any]) -> dict[str, Any]:
        """``message`` ready to be sent again as a new turn: when its QueryID was sent already, a fresh
        QueryID (with its QueryTime and Data Exchange Metadata) and the next TurnIndex of its
        dialogue; otherwise unchanged (a copy). A partner answers each QueryID once (D16).

        >>> bk = BasicKnowledge()
        >>> rq = documents.skeleton("BKN-PAL", "RQ", context={"DialogID": "d", "TurnIndex": 0})
        >>> bk.transcript.append(rq)
        >>> again = bk.next_turn(rq)
        >>> again["QueryID"] != rq["QueryID"], again["TurnIndex"], again["DataXMData"]["DataID"] == again["QueryID"]
        (True, 1, True)
        >>> bk.next_turn(again) == again
        True
        """
        sent = {m.get("QueryID") for m in self.transcript if isinstance(m, Mapping) and m.get("Mode") == "RQ"}
        spec = documents.type_of(message)
        if spec is None or message.get("QueryID") not in sent:
            return dict(message)
        query = documents.fresh_id(spec.name)
        renewed = {**message, "QueryID": query, "QueryTime": documents.auto_time(query)}
        renewed["TurnIndex"] = self._next_turn(spec.name, message.get("DialogID"))
        return documents.with_metadata(renewed)

    def save(self, path: str | os.PathLike[str]) -> Path:
        """Write the transcript as JSONL (one message per line), ready for ``pgm-explore check``."""
        target = Path(path)
        target.write_text("".join(json.dumps(m, ensure_ascii=False) + "\n" for m in self.transcript), encoding="utf-8")
        return target


class _HTTPClient:
    """Starts a partner in a subprocess on a free loopback port, then connects with streamable HTTP."""

    def __init__(self, owner: BasicKnowledge, type_name: str) -> None:
        self.owner, self.type_name = owner, type_name
        self.client: Client | None = None

    async def __aenter__(self) -> Client:
        port = _free_port()
        command = [sys.executable, *self.owner._command(self.type_name), "--http", "--port", str(port)]
        process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        self.owner._processes.append(process)
        await _wait_for_port(port, process, self.owner.startup_timeout)
        self.client = Client(f"http://127.0.0.1:{port}/mcp")
        return await self.client.__aenter__()

    async def __aexit__(self, *exc: Any) -> None:
        if self.client is not None:
            await self.client.__aexit__(*exc)


async def run_demo(bk: BasicKnowledge) -> BasicKnowledge:
    """A built-in deliberation over the market scenario, with all three partners.

    Referents and goal constraints from Prompt Creation; affordances and constraints from Domain
    Access; a plan found partially feasible (the cobalt lantern is over budget), a cheaper plan found
    feasible; a commitment retained, then released; the stance from Personality Alignment.
    """
    await bk.open_dialogue()
    await bk.ask_prc("referents", "Which lantern did the User mean?", ["item-lantern-blue-114"])
    await bk.ask_dac("affordances", "What can be done with the lanterns of stall seven?", EntityIDs=["stall-07"])
    await bk.ask_dac(
        "constraints",
        "What applies to buying a lantern and placing it on the balcony?",
        EntityIDs=["item-lantern-blue-114", "item-lantern-blue-115"],
    )
    await bk.check_feasibility(
        [
            "MM-Move Nil aua-shopper-03 From ML-Plaza-Gate To ML-Stall-07",
            "Transact With Transaction=item-lantern-blue-114 With SPM=180 AGR",
            "MM-Add Nil item-lantern-blue-114 At ML-Balcony-Lucia With PerceptibilityState=1",
        ],
        "Can the A-User buy the cobalt lantern and place it on the balcony?",
    )
    await bk.ask_prc("goal_constraints", "Is a cheaper lantern acceptable?")
    await bk.retain({"cm-lantern": "The lantern to buy is item-lantern-blue-115 (95 AGR)."}, "Keep the choice.")
    await bk.check_feasibility(
        [
            "MM-Move Nil aua-shopper-03 From ML-Plaza-Gate To ML-Stall-07",
            "Transact With Transaction=item-lantern-blue-115 With SPM=95 AGR",
            "MM-Add Nil item-lantern-blue-115 At ML-Balcony-Lucia With PerceptibilityState=1",
        ],
        "Can the A-User buy the pale lantern instead?",
    )
    await bk.ask_pal(
        "The cobalt lantern is over budget; a cheaper one fits. How should the assistant tell the User?",
        {"Role": "shopping assistant", "Locale": "en-GB", "ExpressiveConstraints": ["state the price before paying"]},
    )
    await bk.release(["cm-lantern"], "The purchase is done; the choice need not be kept.")
    return bk


def run_demo_sync(transport: Transport = "inprocess", out: str | os.PathLike[str] | None = None) -> list[dict]:
    """Run :func:`run_demo` over ``transport`` (uses ``asyncio.run``: not inside Jupyter) and
    return the transcript, also written to ``out`` as JSONL when given."""

    async def main() -> list[dict]:
        async with BasicKnowledge(transport=transport) as bk:
            await run_demo(bk)
            if out is not None:
                bk.save(out)
            return bk.transcript

    return anyio.run(main)
