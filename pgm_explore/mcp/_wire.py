"""The messages between pgm-explore and a partner as they were on the wire, and the partner process.

The SDK's transports hide two things a checker needs: the partner process (its exit status, and
what it wrote to stderr before it died) and the messages as they came (a response sent twice, one
to a request nobody sent, a line that is not JSON-RPC: the SDK's session drops those without a
word). So a partner command runs under :func:`stdio_transport`, which does the SDK stdio transport's
work in the open: the same newline-delimited JSON-RPC, the same shutdown (close stdin, wait, then
terminate the process group), with the caller's environment, and a :class:`Wire` that records every
message. An HTTP transport is wrapped by :func:`tapped`, which records what the session sends and
receives. A :class:`Wire` also sends what no SDK session would (a batch, ``"jsonrpc": "1.0"``) with
:meth:`Wire.exchange`, on the same connection.
"""

from __future__ import annotations

import json
import os
import signal
import sys
import tempfile
from collections import Counter
from collections.abc import AsyncIterator, Callable, Coroutine, Mapping, Sequence
from contextlib import AsyncExitStack, asynccontextmanager, suppress
from dataclasses import dataclass, field
from typing import Any, TextIO

import anyio
import anyio.abc
from anyio.streams.memory import MemoryObjectReceiveStream, MemoryObjectSendStream
from mcp import types
from mcp.client import Transport
from mcp.shared.message import SessionMessage
from pydantic import ValidationError

from pgm_explore.mcp._sdk import TransportStreams

__all__ = ["PartnerExited", "Wire", "running", "stdio_transport", "tapped"]

_TAIL_LINES = 6
_LINE_CHARS = 300
_LOG_LIMIT = 400
# After the fence of an exchange is answered, how long a concurrent server may still take to
# answer what was sent before it.
_GRACE = 0.3
_EXIT_WAIT = 2.0


class PartnerExited(Exception):
    """The partner process ended while pgm-explore was talking to it; the message says how."""


def _shown(value: Any) -> str:
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
    return text if len(text) <= 200 else text[:199] + "…"


@dataclass
class Wire:
    """One connection to a partner: the JSON-RPC messages both ways, and what was wrong with them.

    ``problems`` holds the partner's messages that break JSON-RPC 2.0 as MCP uses it: a response
    to an id already answered, or to an id never sent, or a line that is not a JSON-RPC message.
    """

    label: str
    log: list[tuple[str, Any]] = field(default_factory=list)
    sent: dict[Any, str] = field(default_factory=dict)
    answered: Counter[Any] = field(default_factory=Counter)
    problems: list[tuple[str, Any]] = field(default_factory=list)
    log_limit: int = _LOG_LIMIT
    """Messages kept in :attr:`log` (the first ones: a checker quotes the start of a conversation)."""
    capture_stderr: bool = True
    """Keep the partner's stderr to quote it (the probe); else the partner writes to this process's."""
    stderr: TextIO | None = None
    returncode: int | None = None
    ended: bool = False
    """The partner closed its output (stdio) before pgm-explore closed the connection."""
    closing: bool = False
    _process: anyio.abc.Process | None = None
    _raw_ids: set[Any] = field(default_factory=set)
    _inbox: tuple[MemoryObjectSendStream[Any], MemoryObjectReceiveStream[Any]] | None = None
    _session: tuple[MemoryObjectSendStream[Any], MemoryObjectReceiveStream[Any]] | None = None
    _write_lock: anyio.Lock = field(default_factory=anyio.Lock)

    # -- recording -----------------------------------------------------------------------------

    def _log(self, direction: str, message: Any) -> None:
        if len(self.log) < self.log_limit:
            self.log.append((direction, message))

    def note_sent(self, message: Any) -> None:
        """A message pgm-explore wrote (a request's id is then expected back once)."""
        self._log("sent", message)
        for item in message if isinstance(message, list) else [message]:
            if isinstance(item, dict) and "method" in item and item.get("id") is not None:
                self.sent[item["id"]] = str(item["method"])

    def note_received(self, message: Any) -> None:
        """A message the partner wrote: judged against what was sent."""
        self._log("received", message)
        for item in message if isinstance(message, list) else [message]:
            if not isinstance(item, dict) or item.get("jsonrpc") != "2.0":
                self.problems.append(("a message that is not JSON-RPC 2.0", item))
                continue
            if "method" in item or ("result" not in item and "error" not in item):
                continue  # a request or notification of the partner's: not judged here
            ident = item.get("id")
            if ident is None:
                continue  # an error about a message whose id could not be read
            self.answered[ident] += 1
            if ident not in self.sent:
                self.problems.append((f"a response to id {ident!r}, which was never sent", item))
            elif self.answered[ident] > 1:
                self.problems.append((f"a second response to id {ident!r} ({self.sent[ident]})", item))

    def note_line(self, line: bytes) -> Any:
        """One line of a partner's stdout: its JSON, or None when it is not JSON (a problem)."""
        try:
            message = json.loads(line)
        except (ValueError, RecursionError):
            self._log("received", line.decode("utf-8", "replace"))
            self.problems.append(("a line that is not JSON", line.decode("utf-8", "replace")))
            return None
        self.note_received(message)
        return message

    # -- the process ---------------------------------------------------------------------------

    def stderr_tail(self) -> list[str]:
        """The last lines the partner wrote to stderr, whole (a very long one is shortened)."""
        if self.stderr is None:
            return []
        with suppress(OSError, ValueError):
            self.stderr.flush()
            self.stderr.seek(0)
            lines = [line.rstrip() for line in self.stderr.read().splitlines() if line.strip()]
            return [
                line if len(line) <= _LINE_CHARS else line[: _LINE_CHARS - 1] + "…" for line in lines[-_TAIL_LINES:]
            ]
        return []

    def exit_summary(self) -> str:
        """How the partner ended, in a few words."""
        if self.returncode is None:
            return "the partner closed its output"
        if self.returncode < 0:
            return f"the partner was killed by signal {-self.returncode}"
        return f"the partner exited with status {self.returncode}"

    def exit_text(self) -> str:
        """How the partner ended, in plain words, with the last lines of its stderr."""
        said = self.exit_summary()
        tail = self.stderr_tail()
        if tail:
            said += "; the last lines it wrote to stderr:\n" + "\n".join(f"  {line}" for line in tail)
        return said

    # -- raw exchanges ---------------------------------------------------------------------------

    @property
    def writable(self) -> bool:
        """Whether raw messages can be written (a command's stdin; an HTTP tap has none)."""
        return self._process is not None and not self.ended

    async def write(self, message: Any) -> None:
        """Write one message (anything JSON, or a ready line) to the partner's stdin."""
        assert self._process is not None and self._process.stdin is not None
        text = message if isinstance(message, str) else json.dumps(message, ensure_ascii=False)
        self.note_sent(message if not isinstance(message, str) else _loads_or(message))
        async with self._write_lock:
            await self._process.stdin.send(text.encode("utf-8") + b"\n")

    async def exchange(self, message: Any, fence: Mapping[str, Any], timeout: float) -> tuple[list[Any], bool]:
        """Send ``message`` (anything, also what is not JSON-RPC) then ``fence``, a request the partner
        answers; the partner's messages that are not for the SDK session, until the fence is answered
        (and :data:`_GRACE` after), and whether it was. The fence's answer is not in the list."""
        assert self._inbox is not None
        self._drain()
        parsed = message if not isinstance(message, str) else _loads_or(message)
        for item in parsed if isinstance(parsed, list) else [parsed]:
            if isinstance(item, dict) and item.get("id") is not None:
                self._raw_ids.add(item["id"])
        self._raw_ids.add(fence["id"])
        await self.write(message)
        await self.write(dict(fence))
        got: list[Any] = []
        fenced = False
        with anyio.move_on_after(timeout):
            while not fenced:
                item = await self._inbox[1].receive()
                if isinstance(item, dict) and item.get("id") == fence["id"]:
                    fenced = True
                else:
                    got.append(item)
        if fenced:
            with anyio.move_on_after(_GRACE):
                while True:
                    got.append(await self._inbox[1].receive())
        return got, fenced

    async def request(self, message: Mapping[str, Any], timeout: float) -> Any:
        """Send one request that no SDK session knows of; its answer, or None when none came in time."""
        assert self._inbox is not None
        self._drain()
        self._raw_ids.add(message["id"])
        await self.write(dict(message))
        with anyio.move_on_after(timeout):
            while True:
                item = await self._inbox[1].receive()
                if isinstance(item, dict) and item.get("id") == message["id"]:
                    return item
        return None

    def _drain(self) -> None:
        # What came late for an earlier exchange is not an answer to the next one.
        assert self._inbox is not None
        with suppress(anyio.WouldBlock):
            while True:
                self._inbox[1].receive_nowait()

    def _is_raw(self, message: Any) -> bool:
        if isinstance(message, list):
            return True
        if not isinstance(message, dict) or "method" in message:
            return False
        ident = message.get("id")
        return ident is None or ident in self._raw_ids


def _loads_or(text: str) -> Any:
    try:
        return json.loads(text)
    except (ValueError, RecursionError):
        return text


# -- stdio -----------------------------------------------------------------------------------------


async def _stop(process: anyio.abc.Process) -> None:
    """Close stdin, wait, then terminate the process group, then kill it (the MCP shutdown sequence)."""
    with suppress(OSError, anyio.BrokenResourceError, anyio.ClosedResourceError):
        assert process.stdin is not None
        await process.stdin.aclose()
    for escalation in (None, signal.SIGTERM, getattr(signal, "SIGKILL", signal.SIGTERM)):
        if escalation is not None:
            with suppress(ProcessLookupError, PermissionError, OSError):
                if sys.platform != "win32":
                    os.killpg(process.pid, escalation)  # its children too: it was started in a session of its own
                else:  # pragma: no cover - not run on this project's machines
                    process.kill()
        with anyio.move_on_after(_EXIT_WAIT):
            while process.returncode is None:
                await anyio.sleep(0.01)
        if process.returncode is not None:
            return


@asynccontextmanager
async def running(wire: Wire, argv: Sequence[str], env: Mapping[str, str] | None) -> AsyncIterator[Wire]:
    """Start ``argv`` (with ``env``, the whole environment of the process) and read its stdout into
    ``wire``; on exit, stop it. Messages for an SDK session are put on ``wire``'s session stream."""
    if wire.capture_stderr:
        # Not closed here: the probe quotes the tail after the connection is gone, then closes it.
        wire.stderr = tempfile.TemporaryFile("w+", encoding="utf-8", errors="replace")  # noqa: SIM115
    process = await anyio.open_process(
        list(argv), env=dict(env) if env is not None else None, stderr=wire.stderr, start_new_session=True
    )
    wire._process = process
    inbox = wire._inbox = anyio.create_memory_object_stream[Any](1000)
    session = wire._session = anyio.create_memory_object_stream[SessionMessage | Exception](1000)
    to_session = wire._session[0]

    async def read() -> None:
        assert process.stdout is not None
        buffer = b""
        try:
            async for chunk in process.stdout:
                lines = (buffer + chunk).split(b"\n")
                buffer = lines.pop()
                for line in lines:
                    if line.strip():
                        await _deliver(wire, wire.note_line(line), to_session)
        except (anyio.ClosedResourceError, anyio.BrokenResourceError, OSError):
            pass
        if not wire.closing:
            wire.ended = True
            with anyio.move_on_after(_EXIT_WAIT):
                while process.returncode is None:
                    await anyio.sleep(0.01)
            wire.returncode = process.returncode
        to_session.close()

    try:
        async with anyio.create_task_group() as tg:
            tg.start_soon(read)
            try:
                yield wire
            finally:
                wire.closing = True
                with anyio.CancelScope(shield=True):
                    await _stop(process)
                    if wire.returncode is None and wire.ended:
                        wire.returncode = process.returncode
                tg.cancel_scope.cancel()
    finally:
        for stream in (*inbox, *session):
            stream.close()


async def _deliver(wire: Wire, message: Any, to_session: MemoryObjectSendStream[SessionMessage | Exception]) -> None:
    if message is None:
        return
    if wire._is_raw(message):
        assert wire._inbox is not None
        with suppress(anyio.WouldBlock):
            wire._inbox[0].send_nowait(message)
        return
    ident = message.get("id") if isinstance(message, dict) and "method" not in message else None
    if ident is not None and (ident not in wire.sent or wire.answered[ident] > 1):
        return  # the session would drop it anyway; the wire has noted it
    try:
        item: SessionMessage | Exception = SessionMessage(types.jsonrpc_message_adapter.validate_python(message))
    except ValidationError as exc:
        item = exc
    with suppress(anyio.ClosedResourceError, anyio.BrokenResourceError):
        await to_session.send(item)


@asynccontextmanager
async def _serving(
    tasks: Sequence[Callable[[], Coroutine[Any, Any, None]]],
    streams: tuple[MemoryObjectReceiveStream[Any], MemoryObjectSendStream[Any]],
    closing: Sequence[MemoryObjectReceiveStream[Any] | MemoryObjectSendStream[Any]],
) -> AsyncIterator[TransportStreams]:
    """Run ``tasks`` while a session holds ``streams``; after, close every stream, whatever happened."""
    try:
        async with anyio.create_task_group() as tg:
            for task in tasks:
                tg.start_soon(task)
            try:
                yield streams
            finally:
                streams[1].close()
                tg.cancel_scope.cancel()
    finally:
        for stream in (*streams, *closing):
            stream.close()


@asynccontextmanager
async def stdio_transport(argv: Sequence[str], env: Mapping[str, str], wire: Wire) -> AsyncIterator[TransportStreams]:
    """An MCP client transport to the command ``argv``, run with the environment ``env``."""
    async with running(wire, argv, env):
        assert wire._session is not None
        to_session, from_partner = wire._session
        to_partner, from_session = anyio.create_memory_object_stream[SessionMessage](0)

        async def write() -> None:
            async with from_session:
                async for session_message in from_session:
                    text = session_message.message.model_dump_json(by_alias=True, exclude_unset=True)
                    try:
                        await wire.write(text)
                    except (anyio.ClosedResourceError, anyio.BrokenResourceError, OSError):
                        to_session.close()  # the session sees the connection end, not a hang
                        return

        async with _serving([write], (from_partner, to_partner), [from_session]) as streams:
            yield streams


# -- any transport (HTTP) ------------------------------------------------------------------------


@asynccontextmanager
async def tapped(transport: Transport, wire: Wire) -> AsyncIterator[TransportStreams]:
    """``transport`` with every message the session sends and receives noted on ``wire``."""
    async with AsyncExitStack() as stack:
        inner_read, inner_write = await stack.enter_async_context(transport)
        to_session, from_partner = anyio.create_memory_object_stream[SessionMessage | Exception](0)
        to_partner, from_session = anyio.create_memory_object_stream[SessionMessage](0)

        def plain(message: SessionMessage) -> Any:
            return json.loads(message.message.model_dump_json(by_alias=True, exclude_unset=True))

        async def inbound() -> None:
            async with to_session:
                async for item in inner_read:
                    if isinstance(item, SessionMessage):
                        wire.note_received(plain(item))
                    with suppress(anyio.ClosedResourceError, anyio.BrokenResourceError):
                        await to_session.send(item)

        async def outbound() -> None:
            async with from_session:
                async for item in from_session:
                    wire.note_sent(plain(item))
                    await inner_write.send(item)

        async with _serving([inbound, outbound], (from_partner, to_partner), [to_session, from_session]) as streams:
            yield streams
