"""Work on every message of a long input, on two cores.

Checking a transcript is three kinds of work per message: reading and parsing it,
validating it (the schema engine and the consistency rules), and the transcript rules. The
rules need the messages in order, in one process; everything else depends on one message
alone. So, for a large regular file, a helper process (started by :mod:`multiprocessing`)
does a :class:`Job` on each message -- parse it and validate it for ``pgm-explore
validate`` (:data:`SUMMARY`), and also read what the transcript rules need of it for
``check`` (:data:`pgm_explore._facts.FACTS`) -- while this process reads the file in
batches of whole lines, hands them over and goes on with what its caller does with the
results (the transcript rules): the two cores work side by side. A job's ``work`` is a
function of this layer or a lower one (a spawned helper imports it by its name, as pickle
does). The helper is told where each batch lies in the file and reads it there, so only
the results travel between the processes, in a compact encoding, decoded when their batch
goes out. This process does not even split a batch it hands over into lines, unless it has
blank ones: the results name their messages by line.

Both processes do a job with the same function on the same lines, so a result is the
same wherever it was made (``tests/test_bulk.py`` holds them equal). The helper is an
optimisation and nothing else: if it cannot start, dies, goes silent, fails on a message,
or answers with another number of results than the batch has messages (the file
changed), its batches are done here, slower and otherwise the same -- a message whose
work fails raises here, the exception noting the message's source. When it falls behind,
this process does the batches it reads meanwhile. Memory stays bounded whatever the size
of the file: at most :data:`_AHEAD` batches are read ahead of the caller.

The helper is forked from this process where that is safe, and is a fresh interpreter
elsewhere (see :func:`_context`): there, like any :mod:`multiprocessing` worker, it imports
the main script again, so a script that checks a large file while running threads (or on
macOS) keeps its work under ``if __name__ == "__main__":``.
Standard input, pipes and small files are done here, one message at a time: a live log
(``tail -f log | pgm-explore check -``) must show a finding when its line arrives, not
when a batch is full. ``PGM_EXPLORE_PARALLEL=0`` in the environment turns the helper off.
"""

from __future__ import annotations

import contextlib
import gc
import io
import multiprocessing
import os
import pickle
import stat
import sys
import threading
from collections import deque
from collections.abc import Callable, Generator, Iterable, Iterator
from dataclasses import dataclass
from multiprocessing.connection import Connection
from multiprocessing.process import BaseProcess
from typing import IO, TYPE_CHECKING, Any, Generic, TypeVar

from pgm_explore import _sources
from pgm_explore._sources import (
    STDIN,
    UNREAD,
    InputKind,
    Item,
    UnreadablePath,
    _item,
    _pieces,
    _reason,
    iter_documents,
    read,
    report,
    report_fields,
)
from pgm_explore.validation import Report, ReportFields

if TYPE_CHECKING:
    from multiprocessing.context import ForkContext, SpawnContext  # (no fork on Windows)

__all__ = ["SUMMARY", "Job", "answer", "iter_reported", "iter_worked", "serve", "summary"]

T = TypeVar("T")


def _pickled(results: list[Any]) -> bytes:
    return pickle.dumps(results, protocol=pickle.HIGHEST_PROTOCOL)


@dataclass(frozen=True)
class Job(Generic[T]):
    """What is done with each message, here or in the helper process.

    ``work`` goes from an item (perhaps :data:`~pgm_explore._sources.UNREAD`) to a value;
    ``encode`` and ``decode`` carry a batch of values from the helper (pickle unless a
    faster way is given; a batch that ``encode`` refuses goes as a pickle). All three are
    functions defined at the top of a module of this layer or a lower one: the job goes to
    the helper as a pickle, which names them. A ``work`` that cannot go (a lambda) is
    simply done here.

    ``min_bytes`` is the smallest file worth a helper: it takes about 0.2 s to start, and
    the less work a job leaves this process, the more messages it takes to win that back.
    ``batch_bytes`` is the size of a batch handed over, in whole lines, and ``patience``
    the seconds to wait for one batch (a batch takes milliseconds) before the helper is
    taken for stuck and its batches are done here: slow, never a hang. (Tests make every
    file worth a helper and batches small with them.)
    """

    work: Callable[[Item], T]
    encode: Callable[[list[T]], bytes] = _pickled
    decode: Callable[[bytes], list[T]] = pickle.loads
    min_bytes: int = 16 * 1024 * 1024
    batch_bytes: int = 1 << 17
    """About 140 messages of a typical transcript: enough that a batch's hand-over is small
    next to its work."""
    patience: float = 120.0


_IN_FLIGHT = 12
"""Batches the helper holds at once; a batch read while it holds this many is done here.
Enough that it still has work while this process goes through the results that came."""
_AHEAD = 24
"""Batches read ahead of the caller at most: what bounds the memory that reading ahead takes."""


def _context() -> ForkContext | SpawnContext:
    """How the helper process starts: forked from this one where that is safe, a fresh
    interpreter elsewhere.

    A forked helper starts at once, with what this process has imported and compiled, and
    does not import the main script again (a fresh interpreter must: a script that checks a
    large file under ``spawn`` runs its top level twice unless it keeps it under ``if
    __name__ == "__main__":``). But a process forked while another thread runs (a notebook's
    kernel, a server) can inherit a lock that no thread will release, and macOS's system
    libraries do not survive a fork: there, a fresh interpreter.
    """
    if sys.platform != "darwin" and threading.active_count() == 1 and "fork" in multiprocessing.get_all_start_methods():
        return multiprocessing.get_context("fork")
    return multiprocessing.get_context("spawn")


def summary(item: Item) -> ReportFields:
    """``item``'s report without its source (the work of :func:`iter_reported`)."""
    return report_fields(read(item))


# Measured: validating alone, a helper is even with this process at about 50,000 messages
# and 20% faster at 200,000 (a transcript check wins from about 12,000).
SUMMARY: Job[ReportFields] = Job(summary, min_bytes=96 * 1024 * 1024)


def iter_reported(
    path: str | os.PathLike[str],
    *,
    kind: InputKind | None = None,
    parallel: bool = True,
    job: Job[ReportFields] = SUMMARY,
) -> Iterator[Report]:
    """The validation report of every message in ``path``, in order.

    Raises :class:`~pgm_explore._sources.UnreadablePath` at once for a path that cannot
    be opened, like :func:`~pgm_explore._sources.iter_documents`; one that fails later is
    raised after every message read before it has been given out. With ``parallel`` (the
    default), a large regular file is validated by a helper process (see the module);
    ``job`` is :data:`SUMMARY`, or a copy of it with other sizes.
    """
    path = os.fspath(path)
    if not (parallel and _worth_a_helper(path, job.min_bytes)):
        return (report(item) for item in iter_documents(path, kind=kind))
    items = iter_documents(path, kind=kind, unread=True)  # (raises now, not at the first message)
    return (Report(t, m, c, f, source) for source, (t, m, c, f) in _with_helper(items, path, job))


def iter_worked(
    path: str | os.PathLike[str], job: Job[T], *, kind: InputKind | None = None, parallel: bool = True
) -> Iterator[tuple[str, T]]:
    """Every message in ``path``, in order, as its source (``PATH:LINE``, ``PATH#INDEX``)
    and what ``job`` made of it, here or (for a large regular file, with ``parallel``) in
    a helper process. Raises like :func:`iter_reported`."""
    path = os.fspath(path)
    if not (parallel and _worth_a_helper(path, job.min_bytes)):
        return _worked(job.work, iter_documents(path, kind=kind))
    return _with_helper(iter_documents(path, kind=kind, unread=True), path, job)


def _worked(work: Callable[[Item], T], items: Iterable[Item]) -> Iterator[tuple[str, T]]:
    """(source, value) of each item; an exception says which message it came from."""
    for item in items:
        try:
            value = work(item)
        except Exception as exc:
            exc.add_note(f"(while working on the message at {item.source})")
            if isinstance(items, Generator):  # (the file it reads is closed now, not when collected)
                items.close()
            raise
        yield item.source, value


def _cores() -> int:
    if hasattr(os, "process_cpu_count"):  # Python 3.13: the cores this process may use
        return os.process_cpu_count() or 1
    if hasattr(os, "sched_getaffinity"):
        return len(os.sched_getaffinity(0))
    return os.cpu_count() or 1


def _worth_a_helper(path: str, min_bytes: int) -> bool:
    if path == STDIN or os.environ.get("PGM_EXPLORE_PARALLEL", "").strip() == "0" or _cores() < 2:
        return False
    try:
        info = os.stat(path)
    except OSError:
        return False
    return stat.S_ISREG(info.st_mode) and info.st_size >= min_bytes


@dataclass(slots=True)
class _Batch(Generic[T]):
    """Whole lines of the file: ``data``, from byte ``start``, ``lines`` lines whose first is line ``first``."""

    start: int
    first: int
    data: bytes
    lines: int
    pairs: list[tuple[str, T]] | None = None
    """(source, value) of each message; None while the helper has the batch."""
    answer: bytes | None = None
    """The helper's answer, still encoded: it is decoded when the batch goes out, so that
    the values are fresh in the caches when the caller uses them."""
    long: bool = False
    """One line longer than the reader takes (its bytes skipped): a too-large finding, done here."""

    @property
    def ready(self) -> bool:
        return self.pairs is not None or self.answer is not None


def _messages(data: bytes, first: int, prefix: str) -> list[Item]:
    """The messages of ``data``, whole JSON Lines whose first is line ``first``, as items
    named ``prefix`` + their line, unread. The one way both processes split a batch: a
    BytesIO splits lines as iterating over the file does, and blank ones are skipped alike."""
    return [
        _item((f"{prefix}{number}", number, None, UNREAD, None, raw, None, ()))
        for number, raw in enumerate(io.BytesIO(data), first)
        if not raw.isspace()
    ]


def _regions(file: IO[bytes], start: int, first: int, size: int) -> Iterator[_Batch[Any]]:
    """The rest of ``file`` (at byte ``start``, line ``first``) in batches of whole lines of
    about ``size`` bytes, as the reader cuts them (a line too long is a batch of its own)."""
    for piece in _pieces(file, start, first, size):
        yield _Batch(piece.start, piece.first, piece.data, piece.lines, long=piece.long)


def _with_helper(items: Iterator[Item], path: str, job: Job[T]) -> Iterator[tuple[str, T]]:
    """``items`` (unread, of ``path``) as (source, value) pairs."""
    # The reader decides what the file is from its first lines. For JSON Lines, this
    # process then reads the file in batches of whole lines and hands them over as they
    # are: it only splits into lines (and parses) the batches that it does itself.
    first = next(items, None)
    if first is None:
        return
    yield from _worked(job.work, [first])
    if first.raw is None or first.offset is None or first.line is None:  # one JSON value, read whole
        yield from _worked(job.work, items)
        return
    items.close()  # type: ignore[attr-defined]  # (a generator: iter_documents makes one)
    prefix = first.source[: len(first.source) - len(str(first.line))]  # "PATH:"
    yield from _in_batches(path, prefix, first.offset + len(first.raw), first.line + 1, job)


def _in_batches(path: str, prefix: str, start: int, line: int, job: Job[T]) -> Iterator[tuple[str, T]]:
    """The messages of the JSON Lines file ``path`` from byte ``start`` (line ``line``) on,
    each named ``prefix`` + its line, with the job done on it, here or by a helper."""
    try:
        file = open(path, "rb")  # noqa: SIM115 -- closed below, once read
    except OSError as exc:
        raise UnreadablePath(path, _reason(exc)) from None
    with file:
        file.seek(start)
        yield from _read_in_batches(file, path, prefix, line, job)


def _read_in_batches(file: IO[bytes], path: str, prefix: str, line: int, job: Job[T]) -> Iterator[tuple[str, T]]:
    """:func:`_in_batches` from ``file``, this process's reading of ``path``, open at the
    start of line ``line``; the helper reads ``path`` on its own. A read error of ``file`` is
    raised as :class:`UnreadablePath` once every message read before it has gone out."""
    work = job.work
    start = file.tell()
    helper = _Helper.start(path, job)
    ahead: deque[_Batch[T]] = deque()

    def done_here(batch: _Batch[T]) -> list[tuple[str, T]]:
        if batch.long:
            return list(_worked(work, [_sources._long_line(prefix[:-1], batch.first, batch.start)]))
        # Here the lines are parsed as the work is done, at once: parsed messages waiting
        # in memory (thousands of small objects each) would make all the parsing slower.
        return list(_worked(work, _messages(batch.data, batch.first, prefix)))

    def front() -> list[tuple[str, T]]:
        batch = ahead.popleft()
        pairs = batch.pairs
        if pairs is None and helper is not None:
            if batch.answer is None:
                helper.collect(until=batch)
            if batch.answer is not None:
                pairs = _answered(job, batch, prefix)
                if pairs is None:
                    helper.give_up()
        return pairs if pairs is not None else done_here(batch)  # (the helper failed)

    failure: Exception | None = None
    try:
        batches = _regions(file, start, line, job.batch_bytes)
        while True:
            try:
                batch = next(batches, None)
            except OSError as exc:  # raised below, once what was read is out
                failure = UnreadablePath(path, _reason(exc))
                break
            if batch is None:
                break
            if helper is not None:
                helper.collect()
            if helper is None or batch.long or not helper.take(batch):
                batch.pairs = done_here(batch)
            ahead.append(batch)
            while ahead and (ahead[0].ready or len(ahead) >= _AHEAD):
                yield from front()
        while ahead:
            yield from front()
    finally:
        if helper is not None:
            helper.close()
    if failure is not None:
        raise failure


def _answered(job: Job[T], batch: _Batch[T], prefix: str) -> list[tuple[str, T]] | None:
    """The (source, value) pairs of a batch the helper answered; None when its answer
    cannot be read or does not have a value for each message."""
    assert batch.answer is not None
    values = _decoded(job, batch.answer)
    if values is None:
        return None
    data, first, lines = batch.data, batch.first, batch.lines
    if len(values) == lines:  # no blank line: every line is a message
        return list(zip([f"{prefix}{number}" for number in range(first, first + lines)], values, strict=True))
    sources = [item.source for item in _messages(data, first, prefix)]
    return list(zip(sources, values, strict=True)) if len(sources) == len(values) else None


# --- the helper process -------------------------------------------------------------------

# How an answer is written: its first byte.
_ENCODED, _PICKLED, _FAILED = b"E", b"P", b"X"


def answer(data: bytes, first: int, job: Job[Any]) -> bytes:
    """The helper's answer for ``data``, JSON Lines whose first line is line ``first``: how
    it is written, then the job's values for its messages. A failure of the work is
    answered as such: this process does the batch again, and raises."""
    try:
        out = [job.work(item) for item in _messages(data, first, "")]
    except Exception:
        return _FAILED
    try:
        return _ENCODED + job.encode(out)
    except (TypeError, ValueError, OverflowError):  # an int beyond 64 bits, a lone surrogate
        return _PICKLED + _pickled(out)


def _decoded(job: Job[T], answer: bytes) -> list[T] | None:
    """The values in an answer, or None when it has none."""
    how, payload = answer[:1], answer[1:]
    try:
        if how == _ENCODED:
            results = job.decode(payload)
        elif how == _PICKLED:
            results = pickle.loads(payload)
        else:
            return None
    except Exception:  # any failure to read it means the same: no answer
        return None
    return results if isinstance(results, list) else None


def serve(connection: Connection, path: str, job: Job[Any]) -> None:
    """The helper's loop over the file ``path``: ``(start, end, first)`` in (the bytes from
    ``start`` to ``end``, whole lines whose first is line ``first``), an :func:`answer`
    out, until ``None`` comes or the other end of ``connection`` is closed."""
    with connection, open(path, "rb") as file:
        while True:
            try:
                request = connection.recv()
            except EOFError:  # this process has gone
                return
            if request is None:  # the end of the requests
                return
            start, end, first = request
            file.seek(start)
            connection.send_bytes(answer(file.read(end - start), first, job))


def _helper_main(connection: Connection, parents: Connection, path: str, job: Job[Any]) -> None:
    """What the helper process runs. ``parents`` is the other end of the pipe, which a forked
    helper holds too: closed, so that the helper sees its end when this process goes."""
    parents.close()
    # Everything alive now (the modules, the compiled schemas) lives as long as the helper
    # does: out of the collector's sight, its full passes need not walk it again.
    gc.freeze()
    serve(connection, path, job)


class _Helper:
    """The helper process, seen from here.

    This process sends the requests and takes in the answers itself, at batch boundaries
    and without blocking, rather than leave the pipe to threads (as a process pool does): a
    thread waiting for the GIL behind a busy main thread waits up to the switch interval
    (5 ms) every time, and that alone would starve the helper.
    """

    def __init__(self, process: BaseProcess, connection: Connection, patience: float) -> None:
        self._process = process
        self._connection = connection
        self._patience = patience
        self._waiting: deque[_Batch[Any]] = deque()  # the batches it has, in the order sent
        self.gone = False

    @classmethod
    def start(cls, path: str, job: Job[Any]) -> _Helper | None:
        """A running helper, or None where none can start (no processes, a job that cannot
        be pickled)."""
        context = _context()
        mine, theirs = context.Pipe()
        process = context.Process(
            target=_helper_main, args=(theirs, mine, path, job), name="pgm-explore helper", daemon=True
        )
        try:
            process.start()
        except Exception:  # whatever stops it (OSError, a PicklingError, ...) means the same: no helper
            mine.close()
            return None
        finally:
            theirs.close()  # the helper's end: this process keeps its own only, so that it sees the helper end
        return cls(process, mine, job.patience)

    def take(self, batch: _Batch[Any]) -> bool:
        """Hand ``batch`` over, unless the helper is gone or holds enough already."""
        if self.gone or len(self._waiting) >= _IN_FLIGHT:
            return False
        try:
            self._connection.send((batch.start, batch.start + len(batch.data), batch.first))
        except (OSError, ValueError):
            self.give_up()
            return False
        self._waiting.append(batch)
        return True

    def collect(self, *, until: _Batch[Any] | None = None) -> None:
        """Take in the answers that have come; with ``until``, wait for that batch's (at
        most ``patience`` seconds)."""
        connection = self._connection
        try:
            while not self.gone:
                while connection.poll():
                    if not self._waiting:  # an answer to nothing
                        self.give_up()
                        return
                    self._waiting.popleft().answer = connection.recv_bytes()
                if until is None or until.ready:
                    return
                if not connection.poll(self._patience):
                    self.give_up()
        except (OSError, EOFError):  # the helper has ended
            self.give_up()

    def give_up(self) -> None:
        """Take the helper for gone: the batches it had are done here, and it is stopped."""
        self.gone = True
        self._waiting.clear()
        if self._process.is_alive():
            self._process.kill()

    def close(self) -> None:
        """Stop the helper: it ends when its requests do, or at once if it still has batches."""
        if self._waiting:
            self.give_up()
        else:
            # Said rather than left to the end of the pipe, which a helper forked later holds too.
            with contextlib.suppress(OSError, ValueError):
                self._connection.send(None)
        self._connection.close()
        self._process.join(timeout=10)
        if self._process.is_alive():
            self._process.kill()
            self._process.join()
        self._process.close()
