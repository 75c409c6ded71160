"""One big JSON Lines file cut into partitions of whole lines, worked on anywhere, put back in order.

A regular JSON Lines file is cut into byte ranges of about :data:`PARTITION_BYTES` (the
client only knows the file's size); each partition is read, decoded and worked on where
the :class:`~pgm_explore._engine.Engine` runs it, and gives back what a *batch* function
made of its messages, numbered by line *within the partition*, and how many lines it holds.
The client adds the lines of the partitions before it, in order, to name each message
``PATH:LINE`` exactly as the reader of the whole file does (DECISIONS D18). The batch of
:func:`iter_worked` keeps one value per message; that of ``validate`` writes the output of
all of them, so that the client has next to nothing to do per message
(:func:`iter_batched`).

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
"""

from __future__ import annotations

import io
import os
import stat
from collections import deque
from collections.abc import Callable, Generator, Iterator
from dataclasses import dataclass
from functools import partial
from typing import IO, Any, Generic, NamedTuple, Protocol, TypeVar

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
    _shared,
    decoded,
    iter_documents,
    located,
    report_fields,
)
from pgm_explore.validation import ReportFields, Way, clean_fields

__all__ = [
    "PARTITION_BYTES",
    "Batch",
    "Held",
    "Left",
    "LineBatch",
    "Partition",
    "Pushed",
    "Reread",
    "TooLong",
    "iter_batched",
    "iter_partitioned",
    "iter_reported",
    "iter_worked",
    "partition_bytes",
    "partitions",
    "work_on_partition",
]

T = TypeVar("T")
R = TypeVar("R")
R_co = TypeVar("R_co", covariant=True)

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


def partitions(
    path: str,
    start: int,
    size: int,
    step: int,
    largest: int | Callable[[], int] = 0,
    workers: int = 1,
    least: int | None = None,
) -> Iterator[Partition]:
    """``path`` from byte ``start`` on, in partitions of ``step`` bytes; the last goes to the
    end of the file, however long it is by then.

    With ``largest`` above ``step``, each partition is a ``2 * workers``-th of what is left of
    the ``size`` bytes, from ``step`` to ``largest`` bytes: large while much is left (each
    partition costs the client and its worker some milliseconds, whatever its size), ``step``
    at the end, so that the workers still finish together. ``largest`` may be a function,
    asked as each partition is cut (see :class:`Growth`). With ``least`` below ``step``, the
    partitions go on shrinking at the end down to ``least`` bytes, whether they grew or not:
    what the client still has to do once the workers are done (the transcript rules over the
    partitions in flight) is then small too."""
    spread = 2 * max(workers, 1)
    least = step if least is None else min(least, step)
    while True:
        top = largest() if callable(largest) else largest
        length = min(max(top, step), max(least, (size - start) // spread))
        if start + length >= size:
            break
        yield Partition(path, start, start + length)
        start += length
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


class Left(NamedTuple):
    """A message of a partition left for the client: line ``number`` (within the partition)
    and what the client needs to word its findings (a :class:`Reread` or a :class:`TooLong`)."""

    number: int
    value: Reread | TooLong


class Batch(NamedTuple, Generic[R]):
    """What ``batch`` made on a worker of consecutive messages of a partition (``value``).

    The batch was given the messages numbered by line *within the partition*; ``base`` is the
    number of the file's lines before the partition, which the client adds to name them
    ``PATH:LINE``."""

    base: int
    value: R


class LineBatch(Protocol[R_co]):
    """A batch told the messages of a partition one at a time (see :class:`Pushed`), in order:
    a clean line as :func:`~pgm_explore.validation.read_clean_typed` read it (``typed``: its
    line within the partition, its way, the Struct), any other message as an :class:`Item`
    (``item``: source ``""``, ``line`` within the partition); ``cut`` gives what it made of the
    messages it was told since the last cut (a line left for the client comes between two)."""

    def typed(self, line: int, way: Way, value: Any) -> object: ...

    def item(self, item: Item) -> object: ...

    def cut(self) -> R_co: ...


class Pushed(NamedTuple, Generic[R]):
    """A batch of :func:`iter_batched` that is told each message (a :class:`LineBatch` made by
    ``make()`` for each partition on its worker) instead of reading them from an iterator: a
    clean line then costs the reader no dict, no item and no generator step, only the typed
    read and a call (the loop of ``pgm-explore validate``). ``make`` must be defined at the top
    of a module (a ``partial`` of one is fine), as the engine says."""

    make: Callable[[], LineBatch[R]]


HELD = 64
"""The most messages not read by the typed reader that a :class:`Held` holds (see there)."""
HELD_BYTES = 1 << 20
"""The most text of such messages a :class:`Held` holds (a line may hold 64 MiB)."""


class Held:
    """The messages of a partition that the typed reader did not take (those that do not
    conform, mostly), held by a :class:`LineBatch` to be judged a few together, each with the
    place the batch kept for its result.

    Explaining a message that does not conform runs python-jsonschema, whose code is cold
    between clean lines: 195-241 µs a message of ``bench_validate.py`` (1 in 200 does not
    conform) one at a time, against 79-102 µs a few together (docs/performance.md). ``hold``
    says when :data:`HELD` of them or :data:`HELD_BYTES` of their text are held: the batch
    then judges them (``judged``), and at its ``cut`` in any case."""

    __slots__ = ("_bytes", "_items")

    def __init__(self) -> None:
        self._items: list[tuple[int, Item]] = []
        self._bytes = 0

    def __bool__(self) -> bool:
        return bool(self._items)

    def hold(self, place: int, item: Item) -> bool:
        """Hold ``item``, whose result goes to ``place``; true when it is time to judge them."""
        self._items.append((place, item))
        self._bytes += len(item.raw or b"")
        return len(self._items) >= HELD or self._bytes >= HELD_BYTES

    def judged(self) -> list[tuple[int, ReportFields]]:
        """The place and report fields of each message held, in order; none held afterwards."""
        items, self._items, self._bytes = self._items, [], 0
        return [(place, report_fields(item)) for place, item in items]


def work_on_partition(
    batch: Callable[[Iterator[Item]], R] | Pushed[R], partition: Partition
) -> tuple[int, list[R | Left]]:
    """How many lines the partition holds, and what ``batch`` made of its messages: one value
    for each run of messages between the lines left for the client (a :class:`Left` each,
    in place). ``batch`` is given the items of a run (source ``""``, ``line`` counted from 1
    within the partition) and must read them all; or it is :class:`Pushed`, and told them.
    Runs on a worker."""
    with open(located(partition.path), "rb") as file:
        first = _first_line(file, partition.start, partition.end) if partition.start else 0
        if first is None:
            return 0, []
        file.seek(first)
        stream: IO[bytes] = _Through(file, first, partition.end)  # type: ignore[assignment]
        if type(batch) is Pushed:
            return _pushed(batch.make(), stream, first)
        counted = [0]
        entries = _entries(stream, first, counted)
        done: list[R | Left] = []
        left: list[Left] = []
        while True:
            done.append(batch(_run(entries, left)))  # type: ignore[operator]  # (not Pushed: a function)
            if not left:
                return counted[0], done
            done.append(left.pop())


def _pushed(batch: LineBatch[R], stream: IO[bytes], first: int) -> tuple[int, list[R | Left]]:
    """:func:`work_on_partition` for a :class:`LineBatch`: the lines of each piece are split and
    read by :func:`decoded`, which hands the clean ones straight to ``batch.typed``."""
    typed, item = batch.typed, batch.item
    lines = 0
    done: list[R | Left] = []
    for piece in _pieces(stream, first, 1):
        lines += piece.lines
        if piece.long:
            done += (batch.cut(), Left(piece.first, TooLong(piece.start)))
            continue
        for number, raw, offset, document, notes in decoded(piece, True, typed):
            if document is REFUSED:
                done += (batch.cut(), Left(number, Reread(raw)))
            else:
                item(_item(("", number, None, document, None, raw, offset, notes)))
    done.append(batch.cut())
    return lines, done


def _entries(stream: IO[bytes], first: int, counted: list[int]) -> Iterator[Item | Left]:
    """The partition's messages, or a :class:`Left` for each line the client words;
    ``counted[0]`` is the lines read so far."""
    for piece in _pieces(stream, first, 1):
        counted[0] += piece.lines
        if piece.long:
            yield Left(piece.first, TooLong(piece.start))
            continue
        for number, raw, offset, document, notes in decoded(piece, typed=True):
            if document is REFUSED:
                yield Left(number, Reread(raw))
            else:
                yield _item(("", number, None, document, None, raw, offset, notes))


def _run(entries: Iterator[Item | Left], left: list[Left]) -> Iterator[Item]:
    """The items of ``entries`` up to the next line left for the client, which goes to ``left``."""
    for entry in entries:
        if type(entry) is Left:
            left.append(entry)
            return
        yield entry  # type: ignore[misc]  # (an Item: what is not Left)


def _each(work: Callable[[Item], T], items: Iterator[Item]) -> list[tuple[int, T]]:
    """``(line, work(item))`` of each item: the batch of :func:`iter_worked`."""
    return [(item.line, work(item)) for item in items]  # type: ignore[misc]  # (items of a partition have a line)


class Growth(Generic[R]):
    """How large the partitions of a file on workers may grow (see :func:`partitions`): up to
    ``largest`` bytes while what came back of the partitions done so far (``size_of`` a batch's
    value, in bytes) is no more than :data:`GROWTH_OUTPUT` of their bytes, else ``step``'s size.

    A worker holds what it makes of a whole partition until it sends it. For messages that
    conform (``validate``'s lines: about a tenth of what they were) a large partition costs
    little; a file of small lines that each make a long report (a number a line: 270 bytes of
    ``--format json`` for 2 bytes of input, measured) would make a worker hold 135 times its
    partition, 2.6 GB at its peak for 16 MiB of them, measured. Partitions grow only once what
    came back says so: the first ones, cut before any came back, and those after output grew,
    have the step's size, as without growth."""

    __slots__ = ("_largest", "_made", "_read", "_size_of")

    def __init__(self, largest: int, size_of: Callable[[R], int]) -> None:
        self._largest, self._size_of = largest, size_of
        self._read = self._made = 0

    def largest(self) -> int:
        """The largest partition to cut now (0: the step's size)."""
        read = self._read
        return self._largest if read and self._made <= read * GROWTH_OUTPUT else 0

    def told(self, read: int, done: list[Any]) -> None:
        """A partition of ``read`` bytes came back as ``done`` (its batches' values and lines left)."""
        self._read += read
        size_of = self._size_of
        for value in done:
            if not isinstance(value, Left):
                self._made += size_of(value)


GROWTH_OUTPUT = 1
"""What the partitions' output may be, against their bytes, for later partitions to grow (see
:class:`Growth`): a worker then holds about as much output as it read."""


def iter_partitioned(
    path: str,
    work: Callable[[Item], T],
    batch: Callable[[Iterator[Item]], R] | Pushed[R],
    engine: Engine,
    start: int,
    line: int,
    step: int,
    progress: Callable[[int], object] | None = None,
    largest: int | Growth[R] = 0,
    *,
    shrink: bool = False,
) -> Iterator[tuple[str, T] | Batch[R]]:
    """What ``batch`` made of the messages of the JSON Lines file ``path`` from byte ``start``
    (line ``line``) on, the file cut into partitions of ``step`` bytes (up to ``largest`` while
    much is left, or as a :class:`Growth` says, and with ``shrink`` on workers down to
    :data:`PARTITION_BYTES` at the end: see :func:`partitions`) worked on by ``engine``,
    in order, as :class:`Batch` values; ``(source, work(item))`` in their place for the lines
    the client words. A read error is raised as :class:`UnreadablePath` after what the
    partitions before it made. ``progress`` is told the bytes of each partition whose messages
    are about to come."""
    where = located(path)
    home = sent_from(engine)
    if home is not None:  # (the workers open the file this process would: the names stay as given)
        where = os.path.join(home, where)
    try:
        size = os.stat(where).st_size
    except OSError as exc:
        raise UnreadablePath(path, _reason(exc)) from None
    prefix = f"{path}:"
    growth, top = (largest, largest.largest) if isinstance(largest, Growth) else (None, largest)
    # (In this process, one partition after the other, there is no end to even out.)
    least = PARTITION_BYTES if shrink and not engine.in_process else None
    cut = partitions(where, start, size, step, top, engine.workers, least)
    if progress is not None or growth is not None:  # (the bytes of each partition, taken as its result comes, in order)
        cut, sizes = _sized(cut, size)
    results = engine.map(partial(work_on_partition, batch), cut)
    base = line - 1
    while True:
        try:
            got = next(results, None)
        except OSError as exc:
            raise UnreadablePath(path, _reason(exc)) from None
        if got is None:
            return
        lines, done = got
        if progress is not None or growth is not None:
            read = sizes.popleft()
            if progress is not None:
                progress(read)
            if growth is not None:
                growth.told(read, done)
        for value in done:
            if not isinstance(value, Left):
                yield Batch(base, value)
                continue
            number = base + value.number
            source = f"{prefix}{number}"
            left = value.value
            if isinstance(left, Reread):
                document, problem, notes = _parse_slowly(left.raw, number)
                yield source, work(Item(source, number, None, document, problem, left.raw, None, notes))
            else:
                yield source, work(_long_line(path, number, left.offset))
        base += lines


def sent_from(engine: Engine) -> str | None:
    """The folder that work ``engine`` runs reads a relative path from (see
    :func:`~pgm_explore.io._read.reading_from`): this process's, when the work leaves it (the
    workers of a Dask cluster run in a folder of their own); None when it runs here."""
    return None if engine.in_process else os.getcwd()


def _sized(cut: Iterator[Partition], size: int) -> tuple[Iterator[Partition], deque[int]]:
    """``cut``, and the bytes of each partition it has given so far (the last: to ``size``),
    left in the deque until taken."""
    sizes: deque[int] = deque()

    def noted() -> Iterator[Partition]:
        for partition in cut:
            sizes.append(max((size if partition.end is None else partition.end) - partition.start, 0))
            yield partition

    return noted(), sizes


def iter_worked(
    path: str | os.PathLike[str],
    work: Callable[[Item], T],
    *,
    kind: InputKind | None = None,
    engine: Engine | None = None,
    step: int | None = None,
    progress: Callable[[int], object] | None = None,
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
    """
    path = os.fspath(path)
    items, spread = _reading(path, kind, engine, step, progress)
    if spread is None:
        return _worked(work, items)
    return _unbatched(_split(items, path, work, partial(_each, work), *spread), f"{path}:")


class _Reported:
    """The :class:`LineBatch` of :func:`iter_reported`: ``(line, report fields)`` of each message,
    those the typed reader did not take judged a few together (:class:`Held`)."""

    __slots__ = ("_got", "_held")

    def __init__(self) -> None:
        self._got: list[tuple[int, ReportFields | None]] = []
        self._held = Held()

    def typed(self, line: int, way: Way, value: Any) -> None:
        fields = clean_fields(way, value)
        if fields[3]:  # (equal findings of many messages held once, as report_fields holds them)
            fields = (fields[0], fields[1], fields[2], _shared(fields[3]))
        self._got.append((line, fields))

    def item(self, item: Item) -> None:
        got = self._got
        got.append((item.line, None))  # type: ignore[arg-type]  # (a partition's item has a line)
        if self._held.hold(len(got) - 1, item):
            self._judge()

    def _judge(self) -> None:
        got = self._got
        for place, fields in self._held.judged():
            got[place] = (got[place][0], fields)

    def cut(self) -> list[tuple[int, ReportFields]]:
        if self._held:
            self._judge()
        got, self._got = self._got, []
        return got  # type: ignore[return-value]  # (every place judged now)


def iter_reported(
    path: str | os.PathLike[str],
    *,
    kind: InputKind | None = None,
    engine: Engine | None = None,
    progress: Callable[[int], object] | None = None,
) -> Iterator[tuple[str, ReportFields]]:
    """``iter_worked(path, report_fields, ...)``: the source and report fields of every message
    of ``path``, in order, the clean lines of a JSON Lines file judged from the Structs the
    typed reader read (no dict made of them: :class:`Pushed`), a partition at a time."""
    path = os.fspath(path)
    return _unbatched(
        iter_batched(path, report_fields, Pushed(_Reported), kind=kind, engine=engine, progress=progress), f"{path}:"
    )


def _unbatched(got: Iterator[tuple[str, T] | Batch[list[tuple[int, T]]]], prefix: str) -> Iterator[tuple[str, T]]:
    for entry in got:
        if type(entry) is Batch:
            base = entry.base
            for number, value in entry.value:
                yield f"{prefix}{base + number}", value
        else:
            yield entry  # type: ignore[misc]  # (a (source, value) pair: what is not a Batch)


def iter_batched(
    path: str | os.PathLike[str],
    work: Callable[[Item], T],
    batch: Callable[[Iterator[Item]], R] | Pushed[R],
    *,
    kind: InputKind | None = None,
    engine: Engine | None = None,
    step: int | None = None,
    progress: Callable[[int], object] | None = None,
    largest: int | Growth[R] = 0,
    shrink: bool = False,
) -> Iterator[tuple[str, T] | Batch[R]]:
    """:func:`iter_worked`, where the messages of a partition are given to ``batch`` together
    on the worker, which makes of them what the client needs (the finished lines of
    ``pgm-explore validate``, say) so that the client does next to nothing per message.

    A regular JSON Lines file is cut into partitions wherever it is worked on, in this
    process too (a batch costs less than a value per message there as well). What is read
    in this process message by message (standard input, a pipe, a JSON file, the first
    message of a file, a line the worker left for the client to word) comes as
    ``(source, work(item))``; what ``batch`` made of consecutive messages of a partition as
    a :class:`Batch`, in place. ``batch`` is given items whose source is ``""`` and whose
    ``line`` is counted from 1 within the partition (the batch's ``base`` added gives the
    line in the file); it must read them all, and be defined at the top of a module, as
    ``work``. Or ``batch`` is :class:`Pushed`: it is told the messages one by one, the clean
    ones as the Structs the typed reader read (see :class:`LineBatch`). The same arguments and errors as :func:`iter_worked`, but that on workers the
    partitions are larger by default (up to 16 MiB, about eight a worker): what comes back
    of them is compact. With ``largest`` (and no ``step`` asked for), partitions on workers
    grow up to ``largest`` bytes while much of the file is left (see :func:`partitions`), or
    as a :class:`Growth` says from what came back of them (``validate``'s lines). With
    ``shrink``, the last partitions on workers shrink down to :data:`PARTITION_BYTES`: for a caller with
    work of its own on each batch (a check's transcript rules, which go on alone with the
    batches in flight once the workers are done); where the caller has little (``validate``),
    each partition more costs more than the workers finishing together saves (3-8%, measured).
    """
    path = os.fspath(path)
    items, spread = _reading(path, kind, engine, step, progress, BATCH_BYTES, always=True, grow=largest)
    if spread is None:
        return _worked(work, items)
    return _split(items, path, work, batch, *spread, shrink=shrink)


def _reading(
    path: str,
    kind: InputKind | None,
    engine: Engine | None,
    step: int | None,
    progress: Callable[[int], object] | None,
    largest: int = PARTITION_BYTES,
    always: bool = False,
    grow: int | Growth[Any] = 0,
) -> tuple[Iterator[Item], tuple[Engine, int, Callable[[int], object] | None, int | Growth[Any]] | None]:
    """The items of ``path``, and how to cut it into partitions (None: read it here, message
    by message): the engine, the step, ``progress`` and the largest partition (see
    :func:`partitions`); ``largest``, see :func:`_step`; ``always``: a regular file is cut even
    where it is worked on in this process; ``grow``: the largest partition on workers, when no
    step was asked for."""
    asked = step = step or partition_bytes()
    items = iter_documents(path, kind=kind, typed=True)  # (raises now, not at the first message)
    spread = engine is not None and not engine.in_process
    if path == STDIN or not (always or spread or step or progress) or not _regular(path):
        return items, None
    if not step:
        step = _step(path, engine.workers if engine is not None and spread else 0, largest)
    return items, (engine or Engine(), step, progress, grow if spread and not asked else 0)


BATCH_BYTES = 16 * 1024 * 1024
"""The largest partition of :func:`iter_batched` on workers (see :func:`_step`)."""


def _step(path: str, workers: int, largest: int) -> int:
    """The size of the partitions of ``path``: :data:`PARTITION_BYTES`, or where the work is
    spread over ``workers`` and what comes back of a partition is compact (a batch), about
    eight partitions a worker, from :data:`PARTITION_BYTES` to ``largest`` bytes. Each
    partition costs the client some milliseconds of its own, whatever its size (submitting
    it, waiting for it, taking its result in: a third of the client's work on partitions of
    1 MiB); eight a worker keep the workers busy to the end, a few in flight each."""
    if not workers or largest <= PARTITION_BYTES:
        return PARTITION_BYTES
    try:
        size = os.stat(located(path)).st_size
    except OSError:
        return PARTITION_BYTES
    return max(PARTITION_BYTES, min(largest, size // (8 * workers)))


def _regular(path: str) -> bool:
    try:
        return stat.S_ISREG(os.stat(located(path)).st_mode)
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
    batch: Callable[[Iterator[Item]], R] | Pushed[R],
    engine: Engine,
    step: int,
    progress: Callable[[int], object] | None = None,
    largest: int | Growth[R] = 0,
    *,
    shrink: bool = False,
) -> Iterator[tuple[str, T] | Batch[R]]:
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
    yield from iter_partitioned(
        path, work, batch, engine, start, first.line + 1, step, progress, largest, shrink=shrink
    )
