"""Work on every message of a long input, on two cores.

Checking a transcript is three kinds of work per message: reading and parsing it,
validating it (the schema engine and the consistency rules), and the transcript rules. The
rules need the messages in order, in one process; everything else depends on one message
alone. So, for a large regular file, a helper process (a fresh interpreter running
:func:`serve`) does a :class:`Job` on each message -- parse it and validate it for
``pgm-explore validate`` (:data:`SUMMARY`), and also read what the transcript rules need
of it for ``check`` (``pgm_explore.dialogue._facts.FACTS``) -- while this process reads
the lines, hands them over batch by batch and goes on with what its caller does with the
results (the transcript rules): the two cores work side by side. The helper is told where
each batch lies in the file and reads it there, so only the results travel between the
processes, in a compact encoding, decoded when their batch goes out.

Both processes do a job with the same function on the same bytes (a CRC-32 of each batch
shows they are the same bytes), so a result is the same wherever it was made
(``tests/test_bulk.py`` holds them equal). The helper is an optimisation and nothing else:
if it cannot start, dies, goes silent, sends something unreadable or has read other bytes
(the file changed), its batches are done here, slower and otherwise the same. When it
falls behind, this process does the batches it reads meanwhile.

Standard input, pipes and small files are done here, one message at a time: a live log
(``tail -f log | pgm-explore check -``) must show a finding when its line arrives, not
when a batch is full. ``PGM_EXPLORE_PARALLEL=0`` in the environment turns the helper off.
"""

from __future__ import annotations

import contextlib
import importlib
import io
import os
import pickle
import select
import stat
import struct
import subprocess
import sys
import time
import zlib
from collections import deque
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any, Generic, TypeVar

from pgm_explore._sources import STDIN, UNREAD, InputKind, Item, _item, iter_documents, read, report
from pgm_explore.validation import Finding, Report
from pgm_explore.validation._report import _new_report

__all__ = ["SUMMARY", "Job", "Request", "Summary", "answer", "iter_reported", "iter_worked", "serve", "summary"]

T = TypeVar("T")


def _pickled(results: list[Any]) -> bytes:
    return pickle.dumps(results, protocol=pickle.HIGHEST_PROTOCOL)


@dataclass(frozen=True)
class Job(Generic[T]):
    """What is done with each message, here or in the helper process.

    ``work`` goes from an item (perhaps :data:`~pgm_explore._sources.UNREAD`) to a value;
    ``encode`` and ``decode`` carry a batch of values from the helper (pickle unless a
    faster way is given; a batch that ``encode`` refuses goes as a pickle). ``name`` is
    where the job is, ``module:attribute``, for the helper to import it. ``min_bytes`` is
    the smallest file worth a helper: it takes about 0.2 s to start, and the less work a
    job leaves this process, the more messages it takes to win that back.
    """

    name: str
    work: Callable[[Item], T]
    encode: Callable[[list[T]], bytes] = _pickled
    decode: Callable[[bytes], list[T]] = pickle.loads
    min_bytes: int = 16 * 1024 * 1024


_BATCH = 128
"""Messages per batch: enough that a batch's hand-over is small next to its work."""
_IN_FLIGHT = 12
"""Batches the helper holds at once; a batch read while it holds this many is done here.
Enough that it still has work while this process goes through the results that came."""
_AHEAD = 24
"""Batches read ahead of the caller at most: what bounds the memory that reading ahead takes."""
_PATIENCE = 120.0
"""Seconds to wait for one batch (a batch takes milliseconds) before the helper is taken
for stuck and its batches are done here: slow, never a hang."""
_FRAME = struct.Struct("<Q")  # every frame on the pipes: its length, then its bytes

Summary = tuple[str | None, str | None, bool, tuple[Finding, ...]]
"""A report without its source: (type, mode, conforms, findings)."""


def summary(item: Item) -> Summary:
    """The :data:`Summary` of ``item``'s report (the work of :func:`iter_reported`)."""
    made = report(read(item))
    return made.type, made.mode, made.conforms, made.findings


# Measured: validating alone, a helper is even with this process at about 50,000 messages
# and 20% faster at 200,000 (a transcript check wins from about 12,000).
SUMMARY: Job[Summary] = Job("pgm_explore._bulk:SUMMARY", summary, min_bytes=96 * 1024 * 1024)


def iter_reported(
    path: str | os.PathLike[str], *, kind: InputKind | None = None, parallel: bool = True
) -> Iterator[tuple[Item, Report]]:
    """Every message in ``path``, in order, with its validation report.

    Raises :class:`~pgm_explore._sources.UnreadablePath` at once for a path that cannot
    be opened, like :func:`~pgm_explore._sources.iter_documents`; one that fails later is
    raised after every message read before it has been given out. With ``parallel`` (the
    default), a large regular file is validated by a helper process (see the module).
    """
    path = os.fspath(path)
    if not (parallel and _worth_a_helper(path, SUMMARY.min_bytes)):
        return ((item, report(item)) for item in iter_documents(path, kind=kind))
    return (
        (read(item), _new_report(t, m, c, f, item.source) if t is not None else Report(None, None, c, f, item.source))
        for item, (t, m, c, f) in _with_helper(iter_documents(path, kind=kind, unread=True), path, SUMMARY)
    )


def iter_worked(
    path: str | os.PathLike[str], job: Job[T], *, kind: InputKind | None = None, parallel: bool = True
) -> Iterator[tuple[Item, T]]:
    """Every message in ``path``, in order, with ``job`` done on it, here or (for a large
    regular file, with ``parallel``) by a helper process. The items the helper did the
    job on are :data:`~pgm_explore._sources.UNREAD`: what is needed of the message is in
    what the job made of it. Raises like :func:`iter_reported`."""
    path = os.fspath(path)
    if not (parallel and _worth_a_helper(path, job.min_bytes)):
        work = job.work
        return ((item, work(item)) for item in iter_documents(path, kind=kind))
    return _with_helper(iter_documents(path, kind=kind, unread=True), path, job)


def _cores() -> int:
    if hasattr(os, "process_cpu_count"):  # Python 3.13: the cores this process may use
        return os.process_cpu_count() or 1
    if hasattr(os, "sched_getaffinity"):
        return len(os.sched_getaffinity(0))
    return os.cpu_count() or 1


def _worth_a_helper(path: str, min_bytes: int) -> bool:
    # (POSIX: the answers are read without blocking, which Windows pipes do not offer.)
    if path == STDIN or os.name != "posix" or os.environ.get("PGM_EXPLORE_PARALLEL", "").strip() == "0":
        return False
    if _cores() < 2:
        return False
    try:
        info = os.stat(path)
    except OSError:
        return False
    return stat.S_ISREG(info.st_mode) and info.st_size >= min_bytes


@dataclass(slots=True)
class _Batch(Generic[T]):
    items: list[Item]
    results: list[T] | None = None
    """None while the helper has the batch."""
    answer: bytes | None = None
    """The helper's answer, still encoded: it is decoded when the batch goes out, so that
    the values are fresh in the caches when the caller uses them."""

    @property
    def ready(self) -> bool:
        return self.results is not None or self.answer is not None


def _with_helper(items: Iterator[Item], path: str, job: Job[T]) -> Iterator[tuple[Item, T]]:
    helper = _Helper.start(path, job)
    ahead: deque[_Batch[T]] = deque()
    work = job.work

    # The lines are read (parsed) only by ``work``, when it is done: here only for the
    # batches the helper does not take, and then at once. Parsed messages waiting in
    # memory (thousands of small objects each) would make all the parsing twice as slow.
    def dispatch(chunk: list[Item]) -> None:
        batch: _Batch[T] = _Batch(chunk)
        if helper is None or not helper.take(batch):
            batch.results = [work(item) for item in chunk]
        ahead.append(batch)

    def front() -> Iterator[tuple[Item, T]]:
        batch = ahead.popleft()
        if batch.results is None and helper is not None:
            if batch.answer is None:
                helper.collect(until=batch)
            if batch.answer is not None:
                batch.results = _decoded(job, batch.answer, len(batch.items))
                if batch.results is None:
                    helper.give_up()
        if batch.results is None:  # the helper failed: this process does its work
            batch.results = [work(item) for item in batch.items]
        return zip(batch.items, batch.results, strict=True)

    failure: Exception | None = None
    try:
        chunk: list[Item] = []
        try:
            for item in items:
                chunk.append(item)
                if len(chunk) == _BATCH:
                    if helper is not None:
                        helper.collect()
                    dispatch(chunk)
                    chunk = []
                    while ahead and (ahead[0].ready or len(ahead) >= _AHEAD):
                        yield from front()
        except Exception as exc:  # raised again below, once what was read is out
            failure = exc
        if chunk:
            dispatch(chunk)
        while ahead:
            yield from front()
    finally:
        if helper is not None:
            helper.close()
    if failure is not None:
        raise failure


# --- the helper process -------------------------------------------------------------------

Request = tuple[int, int, int, int]
"""What the helper is asked: the bytes from ``start`` to ``end`` of its file, whose first
line is line ``first``, hold ``count`` messages."""
_CRC = struct.Struct("<I")
_ENCODED, _PICKLED = b"E", b"P"


def answer(data: bytes, first: int, job: Job[Any]) -> bytes:
    """The helper's answer for ``data``, JSON Lines whose first line is line ``first``: the
    CRC-32 of the message lines (are they the bytes read here?), how the rest is written,
    and the job's values for them."""
    work = job.work
    # A BytesIO splits lines as iterating over the file did; blank ones are skipped alike.
    lines = [(number, raw) for number, raw in enumerate(io.BytesIO(data), first) if not raw.isspace()]
    crc = zlib.crc32(b"".join([raw for _, raw in lines]))
    out = [work(_item(("", number, None, UNREAD, None, raw, None))) for number, raw in lines]
    try:
        return _CRC.pack(crc) + _ENCODED + job.encode(out)
    except (TypeError, ValueError, OverflowError):  # an int beyond 64 bits, a lone surrogate
        return _CRC.pack(crc) + _PICKLED + _pickled(out)


def _decoded(job: Job[T], answer: bytes, count: int) -> list[T] | None:
    """The values in an answer (after its CRC), or None when they cannot be read or are not ``count``."""
    how, payload = answer[:1], answer[1:]
    try:
        results = job.decode(payload) if how == _ENCODED else pickle.loads(payload)
    except Exception:  # any failure to read it means the same: no answer
        return None
    return results if isinstance(results, list) and len(results) == count else None


def _job_named(name: str) -> Job[Any]:
    module, _, attribute = name.partition(":")
    job = getattr(importlib.import_module(module), attribute)
    if not isinstance(job, Job):
        raise TypeError(f"{name} is not a Job")
    return job


def serve(path: str, job: str, requests: IO[bytes] | None = None, answers: IO[bytes] | None = None) -> None:
    """The helper's loop over the file ``path``: a :data:`Request` in, an :func:`answer`
    out, until the requests end. ``job`` names the :class:`Job` (``module:attribute``)."""
    reader = requests if requests is not None else sys.stdin.buffer
    writer = answers if answers is not None else sys.stdout.buffer
    found = _job_named(job)
    with open(path, "rb") as file:
        while (request := _read_frame(reader)) is not None:
            start, end, first, _ = pickle.loads(request)
            file.seek(start)
            _write_frame(writer, answer(file.read(end - start), first, found))


def _write_frame(stream: IO[bytes], data: bytes) -> None:
    stream.write(_FRAME.pack(len(data)) + data)
    stream.flush()


def _read_frame(stream: IO[bytes]) -> bytes | None:
    """The next frame on ``stream``, or None at its end (a frame cut short included)."""
    head = stream.read(_FRAME.size)
    if len(head) < _FRAME.size:
        return None
    (size,) = _FRAME.unpack(head)
    data = stream.read(size)
    return data if len(data) == size else None


def _command(path: str, job: Job[Any]) -> list[str]:
    # The helper imports this very copy of the package, wherever it was imported from.
    root = str(Path(__file__).resolve().parent.parent)
    code = f"import sys; sys.path.insert(0, {root!r}); from pgm_explore._bulk import serve; serve(*sys.argv[1:])"
    return [sys.executable, "-c", code, path, job.name]


class _Helper:
    """The helper process, seen from here.

    This process writes the requests and reads the answers itself, at batch boundaries
    and without blocking, rather than leave the pipes to threads: a thread waiting for the
    GIL behind a busy main thread waits up to the switch interval (5 ms) every time, and
    that alone would starve the helper.
    """

    def __init__(self, process: subprocess.Popen[bytes]) -> None:
        assert process.stdin is not None and process.stdout is not None
        self._process = process
        self._requests = process.stdin
        self._answers = process.stdout.fileno()
        os.set_blocking(self._answers, False)
        self._received = bytearray()
        # The batches it has, in the order sent, each with the CRC-32 of its lines as read here.
        self._waiting: deque[tuple[_Batch, int]] = deque()
        self.gone = False

    @classmethod
    def start(cls, path: str, job: Job[Any]) -> _Helper | None:
        """A running helper, or None where none can start (no interpreter to run, no processes)."""
        if not sys.executable:
            return None
        try:
            process = subprocess.Popen(
                _command(path, job),
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.DEVNULL,  # its failures are handled here, by doing its work
            )
        except (OSError, ValueError):
            return None
        return cls(process)

    def take(self, batch: _Batch) -> bool:
        """Hand ``batch`` over, unless the helper is gone, holds enough already, or the
        batch is not JSON Lines of the file (then it is for this process)."""
        items = batch.items
        if self.gone or len(self._waiting) >= _IN_FLIGHT:
            return False
        if any(item.raw is None or item.offset is None or item.line is None for item in items):
            return False
        first, last = items[0], items[-1]
        request: Request = (first.offset, last.offset + len(last.raw), first.line, len(items))  # type: ignore[operator, arg-type]
        crc = zlib.crc32(b"".join([item.raw for item in items]))  # type: ignore[misc]
        try:
            _write_frame(self._requests, pickle.dumps(request))
        except (OSError, ValueError):
            self.give_up()
            return False
        self._waiting.append((batch, crc))
        return True

    def collect(self, *, until: _Batch | None = None) -> None:
        """Take in the answers that have come; with ``until``, wait for that batch's (at
        most :data:`_PATIENCE` seconds)."""
        deadline = None
        while not self.gone:
            self._receive()
            if until is None or until.ready or self.gone:
                return
            if deadline is None:
                deadline = time.monotonic() + _PATIENCE
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                self.give_up()
                return
            select.select([self._answers], [], [], remaining)

    def _receive(self) -> None:
        while True:
            try:
                chunk = os.read(self._answers, 1 << 20)
            except BlockingIOError:
                break
            except OSError:
                self.give_up()
                return
            if not chunk:  # the helper has ended
                self.give_up()
                break
            self._received += chunk
        received = self._received
        while len(received) >= _FRAME.size:
            (size,) = _FRAME.unpack_from(received)
            if len(received) < _FRAME.size + size:
                break
            data = bytes(received[_FRAME.size : _FRAME.size + size])
            del received[: _FRAME.size + size]
            if not self._waiting or not self._accept(data):
                self.give_up()
                return

    def _accept(self, data: bytes) -> bool:
        """Give the oldest batch the helper's answer; False when it is about other bytes than
        were read here (or is no answer at all)."""
        batch, crc = self._waiting.popleft()
        if len(data) <= _CRC.size or _CRC.unpack_from(data)[0] != crc:
            return False
        batch.answer = data[_CRC.size :]
        return True

    def give_up(self) -> None:
        """Take the helper for gone: the batches it had are done here, and it is stopped."""
        self.gone = True
        self._waiting.clear()
        if self._process.poll() is None:
            self._process.kill()

    def close(self) -> None:
        """Stop the helper: it ends when its requests do, or at once if it still has batches."""
        if self._waiting:
            self.give_up()
        with contextlib.suppress(OSError):  # a helper gone already
            self._requests.close()
        try:
            self._process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self._process.kill()
            self._process.wait()
        if self._process.stdout is not None:
            self._process.stdout.close()
