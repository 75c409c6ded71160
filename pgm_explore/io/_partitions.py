"""One big JSON Lines file cut into partitions of whole lines, worked on anywhere, put back in order.

A regular JSON Lines file is cut into byte ranges of about :data:`PARTITION_BYTES` (the
client only knows the file's size); each partition is read, decoded and worked on where
the :class:`~pgm_explore._engine.Engine` runs it, and gives back what the work made of each
message, numbered by line *within the partition*, and how many lines it holds. The client
adds the lines of the partitions before it, in order, to name each message ``PATH:LINE``
exactly as the reader of the whole file does (DECISIONS D18).

The cut is that of ``dask.bytes.read_bytes`` and fsspec's ``read_block(..., delimiter=b"\\n")``,
shifted by one byte so that a partition may start on a line start it is given: a partition
nominally ``[start, end)`` holds the lines that *begin* in that range (a line begins at byte 0
or just after a line break), each to its end. Those helpers are not used as they are:
``read_block`` holds a whole line in memory however long it is (a 10 GB file without a line break would be one 10 GB
read), and ``seek_delimiter`` scans on past ``end`` for a partition that starts inside a long
line. Here a partition looks for its first line break within its own range only (none there:
the partition holds no line), and its lines are read through the same reader as a whole
file's (``_pieces`` and :func:`~pgm_explore.io._read.decoded`), which skip a line too
long without holding it.

What a line's number changes is made in the client: a line whose text the fast decoder
refuses comes back as its bytes (:class:`Reread`) and a line too long as its place
(:class:`TooLong`), and the client words their findings with the line's number in the file.
Such lines are rare; everything else is made on the worker.

What the work makes of the messages of a partition may travel back packed (:class:`Packing`):
say one ``bytes`` object for the whole partition, which the transport copies instead of
pickling a thousand small objects, and which the client unpacks as it reads them.
"""

from __future__ import annotations

import io
import os
import stat
from collections.abc import Callable, Generator, Iterator
from dataclasses import dataclass
from functools import partial
from operator import itemgetter
from typing import IO, Any, NamedTuple, TypeVar

from pgm_explore._engine import Engine
from pgm_explore.io._read import (
    REFUSED,
    STDIN,
    InputKind,
    Item,
    UnreadablePath,
    _item,
    _long_line,
    _parse_slowly,
    _pieces,
    _reason,
    decoded,
    iter_documents,
)

__all__ = [
    "PARTITION_BYTES",
    "Packing",
    "Partition",
    "Reread",
    "TooLong",
    "iter_partitioned",
    "iter_worked",
    "partition_bytes",
    "partitions",
    "work_on_partition",
]

T = TypeVar("T")

PARTITION_BYTES = 1024 * 1024
"""The size of a partition, in bytes: about 1,000 messages of a typical transcript, enough
that a partition's trip to a worker is small next to its work, small enough that the few
partitions in flight per worker take little memory even when each message has many findings. ``PGM_EXPLORE_PARTITION_BYTES`` in the
environment sets another (tests cut small files into many partitions with it)."""

_SCAN = 1 << 16  # bytes read at a time while looking for a partition's first line break


def partition_bytes() -> int | None:
    """The partition size set in the environment (``PGM_EXPLORE_PARTITION_BYTES``), or None."""
    value = os.environ.get("PGM_EXPLORE_PARTITION_BYTES", "").strip()
    return max(int(value), 1) if value.isdigit() else None


@dataclass(frozen=True, slots=True)
class Partition:
    """Bytes ``start`` to ``end`` of the JSON Lines file ``path`` (``end`` None: to its end),
    cut at line ends as the module says."""

    path: str
    start: int
    end: int | None


class Reread(NamedTuple):
    """A line the fast decoder refused: its findings name its line, so the client words them."""

    raw: bytes


class TooLong(NamedTuple):
    """A line longer than the reader takes, at byte ``offset`` of the file (its bytes skipped)."""

    offset: int


class Packing(NamedTuple):
    """How the values of a partition travel back from where it was worked on: ``pack`` (run
    there) turns the list of them into what costs less to send (bytes, and few objects),
    ``unpack`` (run here) turns that back into the list. Both must be defined at the top of
    a module, as the work must."""

    pack: Callable[[list[Any]], Any]
    unpack: Callable[[Any], list[Any]]


class Packed(NamedTuple):
    """The messages of a partition, packed: the line of each value, the values packed, and
    the rare lines the client finishes (:class:`Reread`, :class:`TooLong`) with their lines."""

    numbers: list[int]
    values: Any
    rare: list[tuple[int, Any]]


def partitions(path: str, start: int, size: int, step: int) -> Iterator[Partition]:
    """``path`` from byte ``start`` on, in partitions of ``step`` bytes; the last goes to the
    end of the file, however long it is by then."""
    while start + step < size:
        yield Partition(path, start, start + step)
        start += step
    yield Partition(path, start, None)


def _first_line(file: IO[bytes], start: int, end: int | None) -> int | None:
    """Where the partition's first line begins: the first line start at or after ``start``
    (just after a line break) and before ``end``, or None when there is none (the partition
    lies inside one long line, and holds none)."""
    if start == 0:
        return 0
    position = start - 1
    file.seek(position)
    limit = None if end is None else end - 1  # (a line break at end - 1 starts a line at end: the next partition's)
    while limit is None or position < limit:
        block = file.read(_SCAN if limit is None else min(_SCAN, limit - position))
        if not block:
            return None
        found = block.find(b"\n")
        if found >= 0:
            return position + found + 1
        position += len(block)
    return None


class _Through(io.RawIOBase):
    """``file`` from where it stands (byte ``position``) to the end of the line that holds
    byte ``end - 1``, its line break included (``end`` None: to the end of the file)."""

    def __init__(self, file: IO[bytes], position: int, end: int | None) -> None:
        self._file = file
        self._position = position
        self._end = end
        self._done = False

    def readable(self) -> bool:
        return True

    def read1(self, size: int = -1) -> bytes:
        if self._done:
            return b""
        data = self._file.read(size if size > 0 else 1 << 20)
        if not data:
            self._done = True
            return b""
        end = self._end
        if end is not None and self._position + len(data) >= end:
            cut = data.find(b"\n", max(end - 1 - self._position, 0))
            if cut >= 0:
                data = data[: cut + 1]
                self._done = True
        self._position += len(data)
        return data

    read = read1


def work_on_partition(
    work: Callable[[Item], T], partition: Partition, pack: Callable[[list[Any]], Any] | None = None
) -> tuple[int, list[tuple[int, Any]] | Packed]:
    """How many lines the partition holds, and ``(line, value)`` for each of its messages
    (``line`` counted from 1 within the partition; ``value`` is ``work(item)``, or a
    :class:`Reread` or :class:`TooLong` for the client to finish), or with ``pack`` the same
    :class:`Packed`. Runs on a worker."""
    lines, done = _work_on_lines(work, partition)
    if pack is None:
        return lines, done
    numbers: list[int] = []
    values: list[Any] = []
    rare: list[tuple[int, Any]] = []
    for number, value in done:
        if type(value) is Reread or type(value) is TooLong:
            rare.append((number, value))
        else:
            numbers.append(number)
            values.append(value)
    return lines, Packed(numbers, pack(values), rare)


def _unpacked(packed: Packed, unpack: Callable[[Any], list[Any]]) -> list[tuple[int, Any]]:
    """The ``(line, value)`` pairs of a :class:`Packed` partition, in the order of its lines."""
    done = list(zip(packed.numbers, unpack(packed.values), strict=True))
    if packed.rare:
        done += packed.rare
        done.sort(key=itemgetter(0))
    return done


def _work_on_lines(work: Callable[[Item], T], partition: Partition) -> tuple[int, list[tuple[int, Any]]]:
    with open(partition.path, "rb") as file:
        first = _first_line(file, partition.start, partition.end) if partition.start else 0
        if first is None:
            return 0, []
        file.seek(first)
        lines = 0
        done: list[tuple[int, Any]] = []
        append = done.append
        for piece in _pieces(_Through(file, first, partition.end), first, 1):  # type: ignore[arg-type]
            lines += piece.lines
            if piece.long:
                append((piece.first, TooLong(piece.start)))
                continue
            for number, raw, offset, document, notes in decoded(piece):
                if document is REFUSED:
                    append((number, Reread(raw)))
                else:
                    append((number, work(_item(("", number, None, document, None, raw, offset, notes)))))
        return lines, done


def iter_partitioned(
    path: str,
    work: Callable[[Item], T],
    engine: Engine,
    start: int,
    line: int,
    step: int,
    progress: Callable[[int], object] | None = None,
    packing: Packing | None = None,
) -> Iterator[tuple[str, T]]:
    """(source, value) of every message of the JSON Lines file ``path`` from byte ``start``
    (line ``line``) on, the file cut into partitions of ``step`` bytes worked on by
    ``engine``, in order. A read error is raised as :class:`UnreadablePath` after the
    messages of the partitions before it. ``progress`` is told the bytes of each partition
    whose messages are about to come; ``packing``, how their values travel (only where the
    engine spreads the work: in this process they are handed over as they are)."""
    try:
        size = os.stat(path).st_size
    except OSError as exc:
        raise UnreadablePath(path, _reason(exc)) from None
    prefix = f"{path}:"
    pack = packing.pack if packing is not None and not engine.in_process else None
    results = engine.map(partial(work_on_partition, work, pack=pack), partitions(path, start, size, step))
    base = line - 1
    while True:
        try:
            got = next(results, None)
        except OSError as exc:
            raise UnreadablePath(path, _reason(exc)) from None
        if got is None:
            return
        lines, done = got
        if progress is not None:  # (the partitions come in order: this one starts where the last ended)
            progress(step if start + step < size else max(size - start, 0))  # (the last: to the end)
            start += step
        if isinstance(done, Packed):
            assert packing is not None  # (packed only with a packing)
            if not done.rare:  # (the common case: every value made where the partition was)
                for number, value in zip(done.numbers, packing.unpack(done.values), strict=True):
                    yield f"{prefix}{number + base}", value
                base += lines
                continue
            pairs = _unpacked(done, packing.unpack)
        else:
            pairs = done
        for number, value in pairs:
            number += base
            source = f"{prefix}{number}"
            if type(value) is Reread:
                document, problem, notes = _parse_slowly(value.raw, number)
                yield source, work(Item(source, number, None, document, problem, value.raw, None, notes))
            elif type(value) is TooLong:
                yield source, work(_long_line(path, number, value.offset))
            else:
                yield source, value
        base += lines


def iter_worked(
    path: str | os.PathLike[str],
    work: Callable[[Item], T],
    *,
    kind: InputKind | None = None,
    engine: Engine | None = None,
    step: int | None = None,
    progress: Callable[[int], object] | None = None,
    packing: Packing | None = None,
) -> Iterator[tuple[str, T]]:
    """Every message in ``path``, in order, as its source (``PATH:LINE``, ``PATH#INDEX``)
    and ``work(item)``: the one reading path of ``validate``, ``check`` and the library.

    In this process (no ``engine``, or one that runs here), the file is read and worked on
    one message at a time: what standard input, pipes and live logs (``tail -f``) need.
    With an engine whose work is spread, a regular JSON Lines file is cut into partitions
    of ``step`` bytes (default :data:`PARTITION_BYTES`, or ``PGM_EXPLORE_PARTITION_BYTES``,
    which also has this process work partition by partition) done where the engine runs
    them; ``work`` must then be defined at the top of a module, as the engine says.

    Raises :class:`UnreadablePath` at once for a path that cannot be opened, and one that
    fails later after every message read before it; an exception of ``work`` is raised
    with a note naming the message (in this process) or its partition (elsewhere).

    ``progress`` (a progress bar's ``update``) is told the bytes read as partitions are
    done: a regular JSON Lines file is then worked on partition by partition in this
    process too (the same values); anything else is not counted here.

    ``packing`` (a :class:`Packing`) packs the values of each partition worked on elsewhere
    into what costs the transport less than a list of objects.
    """
    path = os.fspath(path)
    step = step or partition_bytes()
    items = iter_documents(path, kind=kind)  # (raises now, not at the first message)
    spread = engine is not None and not engine.in_process
    if path == STDIN or not (spread or step or progress) or not _regular(path):
        return _worked(work, items)
    return _split(items, path, work, engine or Engine(), step or PARTITION_BYTES, progress, packing)


def _regular(path: str) -> bool:
    try:
        return stat.S_ISREG(os.stat(path).st_mode)
    except OSError:
        return False


def _worked(work: Callable[[Item], T], items: Iterator[Item]) -> Iterator[tuple[str, T]]:
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


def _split(
    items: Iterator[Item],
    path: str,
    work: Callable[[Item], T],
    engine: Engine,
    step: int,
    progress: Callable[[int], object] | None = None,
    packing: Packing | None = None,
) -> Iterator[tuple[str, T]]:
    # The reader decides what the file is from its first lines (the extension, or the
    # content): JSON Lines are cut into partitions after the first message, anything else
    # (one JSON value, read whole) is worked on here.
    first = next(items, None)
    if first is None:
        return
    yield from _worked(work, iter([first]))
    if first.raw is None or first.offset is None or first.line is None:
        yield from _worked(work, items)
        return
    items.close()  # type: ignore[attr-defined]  # (a generator: iter_documents makes one)
    start = first.offset + len(first.raw)
    if progress is not None:
        progress(start)
    yield from iter_partitioned(path, work, engine, start, first.line + 1, step, progress, packing)
