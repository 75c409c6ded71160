"""Reading messages in bulk: files, JSON Lines and standard input, as a stream of items.

Every later layer that reads messages from disk (``pgm-explore validate``, the transcript
checker, tables) goes through :func:`iter_documents`, so that they all agree on what a
source is called (``PATH``, ``PATH:LINE``, ``PATH#INDEX``) and on what counts as a line.

How a path is read:

- ``.json``: one JSON value. An object is one message (source ``PATH``); an array is a
  list of messages (sources ``PATH#0``, ``PATH#1``, ...); anything else is one
  non-conforming message. The file is read whole.
- ``.jsonl`` and ``.ndjson``: JSON Lines, one message per line (source ``PATH:LINE``, the
  1-based physical line; blank lines are skipped but counted, DECISIONS D18). Read line
  by line, so a file larger than memory is fine.
- ``-`` (standard input) and any other extension: sniffed, see :func:`iter_stream`.

An unreadable path (missing, a directory, no permission) raises :class:`UnreadablePath`;
everything wrong *inside* a file is an item with a :class:`~pgm_explore.validation.Finding`,
so that one bad line never stops the rest.

The module is longer than most (about 550 lines) because what it holds belongs together:
the three readers, the bounds they keep, and the one way to cut a stream into pieces of
whole lines and to decode them, which :mod:`pgm_explore.io._partitions` uses for the
partitions of a big file too. Its special representations (an :class:`Item` built as a
plain tuple, the pieces) stay inside the ``io`` package: what it gives out is items and
reports.

>>> import io
>>> items = list(iter_stream(io.BytesIO(b'{"a": 1}\\n\\n[1, 2]\\n{oops\\n'), "t.jsonl", "jsonl"))
>>> [(i.source, i.document, i.problem and i.problem.rule) for i in items]
[('t.jsonl:1', {'a': 1}, None), ('t.jsonl:3', [1, 2], None), ('t.jsonl:4', None, 'syntax')]
"""

from __future__ import annotations

import io
import json
import os
import sys
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, replace
from typing import IO, Any, Literal, NamedTuple, TypeVar

import msgspec

from pgm_explore.errors import PgmExploreError
from pgm_explore.validation import (
    Finding,
    InputProblem,
    Report,
    ReportFields,
    Way,
    duplicate_keys,
    learn_order,
    parse_json,
    read_clean,
    read_clean_typed,
    read_double,
    read_number,
)
from pgm_explore.validation import report_fields as _report_fields

__all__ = [
    "InputKind",
    "Item",
    "MAX_LINE_BYTES",
    "REFUSED",
    "UnreadablePath",
    "input_kind",
    "iter_documents",
    "decoded",
    "iter_stream",
    "located",
    "one_producer",
    "reading_from",
    "report",
    "report_fields",
]

T = TypeVar("T")

InputKind = Literal["json", "jsonl", "auto"]
"""How to read a source: one JSON value, JSON Lines, or decide from the content."""

STDIN = "-"
_JSONL_SUFFIXES = (".jsonl", ".ndjson")
# A text too long to read, not a number too long (the clause of `too-large`): RFC 8259's limit on texts.
_SIZE_SPEC = "RFC 8259 section 9: an implementation may set limits on the size of texts that it accepts"


class Item(NamedTuple):
    """One message as read from a source, before validation.

    ``problem`` is set when the text could not be read as JSON (``document`` is then
    ``None``); otherwise ``document`` is the parsed value, which may itself be ``None``
    for a line reading ``null``. ``line`` is the physical line of a JSON Lines message,
    ``index`` the position of a message in a top-level array. For JSON Lines, ``raw`` is
    the line as read and ``offset`` where it starts in its file, in bytes. ``notes`` are
    what the text says that the value cannot show (``duplicate-key`` warnings), or, beside a
    ``problem``, the problem's further findings (a lone surrogate in each of several
    strings): the report on the item adds them to its findings.
    """

    # A NamedTuple rather than a frozen dataclass: it is built once per message in
    # the bulk path, and a tuple is built in a third of the time.
    source: str
    line: int | None
    index: int | None  # type: ignore[assignment]  # (shadows tuple.index: "index" is what PATH#INDEX calls it)
    document: Any
    problem: Finding | None
    raw: bytes | None = None
    offset: int | None = None
    notes: tuple[Finding, ...] = ()


def _item(fields: tuple[Any, ...]) -> Item:
    """``Item(*fields)`` at C speed: a NamedTuple's own ``__new__`` is a Python function, and
    the readers make an item for every message."""
    return tuple.__new__(Item, fields)


class UnreadablePath(PgmExploreError):
    """A path that cannot be read at all: missing, a directory, permission denied.

    ``str()`` of it is a complete sentence naming the path, for a message on stderr.
    """

    def __init__(self, path: str, reason: str) -> None:
        super().__init__(f"cannot read {path}: {reason}")
        self.path = path
        self.reason = reason


def _reason(exc: OSError) -> str:
    if isinstance(exc, FileNotFoundError):
        return "no such file"
    if isinstance(exc, IsADirectoryError):
        return "it is a directory (give the files inside it)"
    if isinstance(exc, PermissionError):
        return "permission denied"
    return exc.strerror or str(exc)


def input_kind(path: str) -> InputKind:
    """How :func:`iter_documents` reads ``path`` when not told otherwise.

    >>> input_kind("a.json"), input_kind("b.JSONL"), input_kind("c.ndjson"), input_kind("-"), input_kind("d.txt")
    ('json', 'jsonl', 'jsonl', 'auto', 'auto')
    """
    lowered = path.lower()
    if lowered.endswith(".json"):
        return "json"
    if lowered.endswith(_JSONL_SUFFIXES):
        return "jsonl"
    return "auto"


def iter_documents(
    path: str | os.PathLike[str], *, kind: InputKind | None = None, typed: bool = False
) -> Iterator[Item]:
    """Every message in ``path`` (``"-"`` for standard input), in order.

    The path is opened at once, so :class:`UnreadablePath` comes from this call rather
    than from the first ``next()``; a read error later on raises it from the iterator.
    ``kind`` overrides the choice :func:`input_kind` makes from the extension. ``typed``:
    the items go straight to :func:`report_fields` (the bulk paths), so a line that the
    typed reader finds clean is marked so (see :func:`decoded`).
    """
    path = os.fspath(path)
    kind = kind or input_kind(path)
    if path == STDIN:
        # Bytes, not text: the reader decides about UTF-8 itself and reports bad bytes
        # as a finding at their line instead of dying in the text layer.
        buffer = getattr(sys.stdin, "buffer", None)
        if buffer is None:  # no stdin at all, or a notebook's stand-in
            raise UnreadablePath(path, "standard input is not available here")
        return _guarded(iter_stream(buffer, STDIN, kind, typed=typed), path)
    try:
        where = located(path)
        if os.path.isdir(where):  # Windows would report a directory as PermissionError
            raise IsADirectoryError(path)
        stream = open(where, "rb")  # noqa: SIM115 -- closed by _owned when the iterator ends
    except OSError as exc:
        raise UnreadablePath(path, _reason(exc)) from None
    return _guarded(_owned(stream, iter_stream(stream, path, kind, typed=typed)), path)


def _owned(stream: IO[bytes], items: Iterator[Item]) -> Iterator[Item]:
    with stream:
        yield from items


def _guarded(items: Iterator[Item], path: str) -> Iterator[Item]:
    try:
        yield from items
    except OSError as exc:
        raise UnreadablePath(path, _reason(exc)) from None


def iter_stream(stream: IO[bytes], source: str, kind: InputKind = "auto", *, typed: bool = False) -> Iterator[Item]:
    """Every message in a binary stream; ``source`` names it in the items.

    With ``kind="auto"`` (standard input and unknown extensions) the content decides:
    the input is **JSON Lines** when its first non-blank line is a complete JSON value
    by itself, or is broken in a way no later line could mend, *and* another non-blank
    line follows. Otherwise it is **one JSON value**, read like a ``.json`` file: a
    pretty-printed document, a one-line message, or a one-line array of messages.
    Only a first line that stops in the middle of a value makes the reader take the
    whole input in memory; JSON Lines stream. ``typed`` as :func:`iter_documents` says.
    """
    if kind == "json":
        return _whole(source, _bounded_read(stream, MAX_LINE_BYTES + 1), 1)
    if kind == "jsonl":
        return _lines(source, _pieces(stream), None, typed)
    return _sniffed(stream, source, typed)


# --- parsing one piece of text ------------------------------------------------------------


def _reject_constant(name: str) -> Any:
    raise ValueError(name)


# One decoder for the whole run: json.loads(text, parse_constant=...) would build a new
# decoder for every line, which costs as much as validating a short message.
_decode = json.JSONDecoder(parse_constant=_reject_constant, parse_float=read_number).decode

# The fast path: msgspec reads UTF-8 bytes three times as fast as the json module and gives
# the same values, integers of any length included (orjson turns those beyond 64 bits into
# floats). What it refuses -- bad JSON, bad UTF-8, lone surrogates, NaN, numbers out of a
# double's range, deep nesting -- goes to the json module's path, so the values and the
# findings stay exactly those of the json module (tests/test_sources.py holds the two equal).
# Neither tells a name written twice in one object: duplicate_keys() does, cheaply.
_encode_fast = msgspec.json.Encoder().encode


def _noted(raw: bytes, document: Any) -> tuple[Finding, ...]:
    """``duplicate_keys(raw, document)``, with its common cases first. The value written out
    again is the very text (a compact line, as programs write them, with its line break):
    a text that one value writes has no name twice. Or a text without a backslash (no
    escaped colon, nothing msgspec cannot write) has exactly as many colons as the value
    written out again: no name was dropped."""
    written = _encode_fast(document)
    rest = len(raw) - len(written)
    if raw.startswith(written) and (rest == 0 or raw[-rest:].isspace()):
        return ()
    if b"\\" not in raw and raw.count(b":") == written.count(b":"):
        return ()
    return duplicate_keys(raw, document)


# (Its numbers with a fraction or an exponent go through read_double: a number that a double
# would move onto an integer goes to the json module's path too, which reads it as written.)
_decode_fast = msgspec.json.Decoder(float_hook=read_double).decode


class _Refused:
    def __repr__(self) -> str:
        return "REFUSED"


REFUSED: Any = _Refused()
"""The document :func:`decoded` gives for a line the fast decoder refuses."""


_TRIES = 8
"""Lines of a piece the typed reader may refuse before :func:`decoded` stops offering it the
rest (unless it took as many): a file of messages in another order of names loses little."""


class _Tries:
    """How many lines the typed reader took and refused over the pieces of one producer."""

    __slots__ = ("refused", "taken")

    def __init__(self) -> None:
        self.taken = self.refused = 0


_producer: ContextVar[_Tries | None] = ContextVar("_producer", default=None)


@contextmanager
def one_producer() -> Iterator[None]:
    """Within, the pieces :func:`decoded` reads are taken for lines of one producer: what the
    typed reader took and refused counts from piece to piece, where it otherwise starts again
    with each. A corpus of small files, a piece each, would otherwise pay :data:`_TRIES` typed
    reads for nothing in every file whose messages the typed reader refuses. (Within one that
    is already under way: that one goes on.)"""
    if _producer.get() is not None:
        yield
        return
    token = _producer.set(_Tries())
    try:
        yield
    finally:
        _producer.reset(token)


_base: ContextVar[str | None] = ContextVar("_base", default=None)


@contextmanager
def reading_from(directory: str | None) -> Iterator[None]:
    """Within, a relative path is read from ``directory`` (None: the current directory), and named
    as it is given: sources, findings and messages are the same as where it was given.

    Work sent to a Dask cluster runs in the workers' directory, not the caller's: the caller's is
    sent with it (a corpus's transcripts), or its paths made absolute (:func:`located`), so that
    workers that see the caller's files read the same ones."""
    token = _base.set(directory)
    try:
        yield
    finally:
        _base.reset(token)


def located(path: str) -> str:
    """Where ``path`` is opened (see :func:`reading_from`): as it is, or from the directory given.

    >>> with reading_from("/srv/logs"):
    ...     located("day1/a.jsonl"), located("/tmp/b.jsonl"), located("-")
    ('/srv/logs/day1/a.jsonl', '/tmp/b.jsonl', '-')
    >>> located("day1/a.jsonl")
    'day1/a.jsonl'
    """
    base = _base.get()
    # (Joined, not normalised: "a/../b" is for the system to resolve, through a link at "a" too.)
    return path if base is None or path == STDIN else os.path.join(base, path)


class _Clean(tuple):
    """The notes of a line the typed reader read (``read_clean``): none, as for any line read
    without a word to say, and the message is clean, so :func:`report_fields` does not ask
    the schema engines about it again. An empty tuple to everyone else."""

    __slots__ = ()


CLEAN: tuple[Finding, ...] = _Clean()
"""The notes :func:`decoded` gives, with ``typed``, for a line the typed reader found clean."""


class _NotTaken(tuple):
    """The notes of a line the typed reader was offered and did not take (one that does not
    conform, mostly; a line it had not learnt the order of): none, as for any line read without
    a word to say, and :func:`report_fields` asks the schema engines straight away rather than
    the typed and combined verdicts first, which would only say no to most such lines (the
    report is the same: ``tests/test_typed.py``). An empty tuple to everyone else."""

    __slots__ = ()


NOT_TAKEN: tuple[Finding, ...] = _NotTaken()
"""The notes :func:`decoded` gives, with ``typed``, for a line the typed reader did not take."""


def decoded(
    piece: _Piece, typed: bool = False, clean: Callable[[int, Way, Any], object] | None = None
) -> Iterator[tuple[int, bytes, int, Any, tuple[Finding, ...]]]:
    """(number, raw, offset, document, notes) of every message of a piece of whole lines, blank
    lines skipped: the one way a stream and a partition of a file split and decode lines.
    ``document`` is :data:`REFUSED` for a line the fast decoder refuses; such a line's
    findings name its line, which only the reader of the whole file knows, so it words them
    (``_parse_slowly``).

    With ``typed`` (the items go straight to :func:`report_fields`), each line is first offered
    to the typed reader (``pgm_explore.validation.read_clean``): a clean message written as
    programs write them is read and judged in one pass, and its notes are :data:`CLEAN`. Its
    document is the very dict the other decoder makes (the same names in the same order).
    A clean line it refuses for the order of its names teaches it that order
    (``learn_order``); a piece whose lines it keeps refusing (or the pieces of a producer, under
    :func:`one_producer`) is read the usual way from then on: each refusal costs a typed read
    for nothing.

    With ``clean`` (and ``typed``), a line the typed reader takes is not given out but handed
    to ``clean(number, way, value)`` as :func:`~pgm_explore.validation.read_clean_typed` read
    it, the Struct, with no dict made of it (the bulk paths' own loop: see
    :func:`~pgm_explore.io._partitions.work_on_partition`)."""
    decode, noted = _decode_fast, _noted
    tries = _producer.get() or _Tries()
    taken, refused = tries.taken, tries.refused
    read: Callable[[bytes], Any] | None = None
    if typed and (refused <= _TRIES or refused <= taken):
        read = read_clean if clean is None else read_clean_typed
    offset = piece.start
    try:
        # (The lines of a piece were split in C by _pieces: this loop runs once per message of
        # a transcript.)
        for number, raw in enumerate(piece.rows, piece.first):
            start = offset
            offset += len(raw)
            teach = read is not None
            if read is not None:
                if (got := read(raw)) is not None:  # (never a blank line: it begins as a message does)
                    taken += 1
                    if clean is None:
                        yield number, raw, start, got, CLEAN
                    else:
                        way, value = got  # (a call with *got would build a tuple again)
                        clean(number, way, value)
                    continue
                if raw.isspace():
                    continue
                refused += 1
                if refused > _TRIES and refused > taken:
                    read = None
            elif raw.isspace():  # never empty: a line keeps its b"\n"
                continue
            try:
                document = decode(raw)
            except (ValueError, RecursionError):
                yield number, raw, start, REFUSED, ()
                continue
            notes = noted(raw, document)
            if teach and not notes:
                learn_order(raw, document)  # (names in another order than the schema's: the next such lines are taken)
                notes = NOT_TAKEN
            yield number, raw, start, document, notes
    finally:
        # (Counted in locals, read once a line: what the next piece of the producer starts from.)
        if typed:
            tries.taken, tries.refused = taken, refused


def _parse(raw: bytes, line: int) -> tuple[Any, Finding | None, tuple[Finding, ...]]:
    """(value, None, notes) or (None, finding, ()). The fast path takes well-formed UTF-8
    JSON; all else goes through :func:`pgm_explore.validation.parse_json`, which words the
    finding."""
    try:
        document = _decode_fast(raw)
    except (ValueError, RecursionError):
        return _parse_slowly(raw, line)
    return document, None, _noted(raw, document)


def _parse_slowly(raw: bytes, line: int) -> tuple[Any, Finding | None, tuple[Finding, ...]]:
    try:
        # Succeeds for what the json module reads and msgspec does not: a UTF-8 BOM, a number
        # beyond a double's range. (A lone surrogate escape is read, then refused: encoding.)
        document, notes = parse_json(raw, first_line=line)
    except InputProblem as problem:
        return None, problem.finding, problem.findings[1:]
    return document, None, notes


def _incomplete(raw: bytes) -> bool:
    """True when ``raw`` fails only because it stops in the middle of a JSON value,
    so that the lines after it may complete it (a pretty-printed document)."""
    try:
        text = raw.decode().removeprefix("\ufeff")
        _decode(text)
    except json.JSONDecodeError as exc:
        # The decoder reports the first offending character (an unterminated string at
        # its opening quote: a string cannot span lines); only at the end of the line
        # could more text still make a value.
        return exc.pos >= len(text.rstrip())
    except (ValueError, RecursionError):
        return False
    return False


# --- the three readers --------------------------------------------------------------------


def _empty(source: str, message: str) -> Item:
    return Item(source, None, None, None, Finding.of("empty", (), message))


def _whole(source: str, data: bytes, first_line: int) -> Iterator[Item]:
    if len(data) > MAX_LINE_BYTES:
        yield _too_long(source)
        return
    try:
        value, notes = parse_json(data, first_line=first_line)
    except InputProblem as problem:
        yield Item(source, None, None, None, problem.finding, notes=problem.findings[1:])
        return
    if not isinstance(value, list):
        yield Item(source, None, None, value, None, notes=notes)
    elif not value:
        yield _empty(source, "The array holds no messages: there is nothing to validate.")
    else:
        # A note about the array's items goes to its item, at a path within it.
        per_item: dict[int, list[Finding]] = {}
        for note in notes:
            if note.path and isinstance(first := note.path[0], int):
                per_item.setdefault(first, []).append(note)
        for index, document in enumerate(value):
            mine = tuple(replace(note, path=note.path[1:]) for note in per_item.get(index, ()))
            yield Item(f"{source}#{index}", None, index, document, None, notes=mine)


def _lines(source: str, pieces: Iterable[_Piece], first: Item | None, typed: bool = False) -> Iterator[Item]:
    """Items of JSON Lines, from pieces of whole lines as :func:`_pieces` makes them."""
    seen = first is not None
    if first is not None:
        yield first
    for piece in pieces:
        if piece.long:
            seen = True
            yield _long_line(source, piece.first, piece.start)
            continue
        for number, raw, offset, document, notes in decoded(piece, typed):
            seen = True
            if document is REFUSED:
                document, problem, notes = _parse_slowly(raw, number)
                yield _item((f"{source}:{number}", number, None, document, problem, raw, offset, notes))
            else:
                yield _item((f"{source}:{number}", number, None, document, None, raw, offset, notes))
    if not seen:
        yield _empty(source, "There is no JSON here: the file is empty or has only blank lines.")


def _sniffed(stream: IO[bytes], source: str, typed: bool) -> Iterator[Item]:
    numbered = _numbered(stream)
    first = _next_content(numbered)
    if first is None:
        yield from _whole(source, b"", 1)  # "empty", with the loads() wording
        return
    first_number, first_offset, first_raw = first
    if first_raw is _LONG:
        # Beyond repair, and said at once (before the rest of it is skipped, which for
        # `cat /dev/zero` is never): the input is taken for JSON Lines.
        yield from _lines(source, _one_by_one(numbered), _long_line(source, first_number, first_offset), typed)
        return
    if not _incomplete(first_raw):
        # Complete or beyond repair: JSON Lines exactly when another message follows.
        second = _next_content(numbered)
        if second is None:
            yield from _whole(source, first_raw, first_number)
            return
        document, problem, notes = _parse(first_raw, first_number)
        lead = Item(f"{source}:{first_number}", first_number, None, document, problem, first_raw, first_offset, notes)
        number, offset, raw = second
        if raw is _LONG:  # (its rest is still to be skipped, line by line)
            yield from _lines(source, _one_by_one(_chain(second, numbered)), lead, typed)
            return
        # The stream stands just after the second line: the rest is read in pieces.
        rest = _pieces(stream, offset + len(raw), number + 1)
        yield from _lines(source, _chain(_Piece(offset, number, [raw], 1), rest), lead, typed)
        return
    # A value that goes on over several lines: read it all, like a .json file.
    yield from _whole(source, first_raw + _bounded_read(stream, MAX_LINE_BYTES + 1 - len(first_raw)), first_number)


def _one_by_one(numbered: Iterable[tuple[int, int, bytes]]) -> Iterator[_Piece]:
    """The lines :func:`_numbered` reads, each a piece of its own."""
    for number, offset, raw in numbered:
        yield _Piece(offset, number, [], 1, long=True) if raw is _LONG else _Piece(offset, number, [raw], 1)


def _next_content(numbered: Iterator[tuple[int, int, bytes]]) -> tuple[int, int, bytes] | None:
    for number, offset, raw in numbered:
        if raw is _LONG or not raw.isspace():
            return number, offset, raw
    return None


def _chain(head: T, rest: Iterator[T]) -> Iterator[T]:
    yield head
    yield from rest


# --- bounds ---------------------------------------------------------------------------------

MAX_LINE_BYTES = 64 * 1024 * 1024
"""The longest line of JSON Lines (its final ``\\n`` not counted, a ``\\r`` before it is), and the largest JSON value read
whole (a ``.json`` file, a pretty-printed document on standard input), in bytes: 64 MiB. A
longer line is a ``too-large`` finding at its line, and reading goes on with the next one; a
longer value read whole is a ``too-large`` finding for its source. Documented in docs/rules.md."""
_SKIP = 1 << 20  # bytes read at a time while skipping the rest of a line that is too long


class _Long:
    def __repr__(self) -> str:
        return "LONG"


_LONG: Any = _Long()
"""The line in place of one longer than :data:`MAX_LINE_BYTES` (see :func:`_numbered`)."""


_PIECE = 1 << 20
"""Bytes read at a time from a JSON Lines stream (a pipe gives what it has, a line at least)."""


@dataclass(slots=True)
class _Piece:
    """Whole lines of a stream: ``rows``, each with its line break (the last line of a stream may
    have none), from byte ``start``, ``lines`` lines whose first is line ``first``; or (``long``)
    one line longer than :data:`MAX_LINE_BYTES`, without its bytes."""

    start: int
    first: int
    rows: list[bytes]
    lines: int
    long: bool = False


def _pieces(stream: IO[bytes], start: int = 0, first: int = 1, size: int = _PIECE) -> Iterator[_Piece]:
    """The rest of ``stream`` (at byte ``start``, line ``first``) in pieces of whole lines of
    about ``size`` bytes; a line longer than :data:`MAX_LINE_BYTES` is a ``long`` piece of its
    own, said as soon as it is known, its bytes skipped as they are read. A pipe gives what it
    has (``read1``), so a live log's lines come as they arrive.

    What is read is split into lines by C (``io.BytesIO(...).readlines()``), where reading line
    by line with a bound costs a call for each, and the bytes are copied once, into the lines:
    the line that a read cuts in two is the only one joined. (Cutting each read at its last line
    break and joining the rest to the next read copied every piece twice more and split it twice,
    to count its lines: 0.3 µs a message of ``bench_check.py``'s short mix, measured.)"""
    limit = MAX_LINE_BYTES
    size = min(size, limit)  # (so that a line found whole in one read is never too long)
    read = getattr(stream, "read1", stream.read)
    held: list[bytes] = []  # the beginning of a line that the reads so far hold no end of
    held_size = 0
    skipping = False  # in a line too long: its bytes are dropped up to its line break
    while data := read(size):
        if skipping:
            end = data.find(b"\n") + 1
            if not end:
                start += len(data)
                continue
            start, first, skipping, data = start + end, first + 1, False, data[end:]
        if held:
            end = data.find(b"\n") + 1
            if held_size + (end - 1 if end else len(data)) > limit:
                yield _Piece(start, first, [], 1, long=True)
                if end:
                    start, first, data = start + held_size + end, first + 1, data[end:]
                else:
                    start, skipping, data = start + held_size + len(data), True, b""
                held, held_size = [], 0
        if data.rfind(b"\n") < 0:
            if data:
                held.append(data)
                held_size += len(data)
            continue
        rows = io.BytesIO(data).readlines()
        region = held_size + len(data)
        if held:
            rows[0] = b"".join([*held, rows[0]])
        last = rows[-1]
        if last[-1] == 10:  # (10 is b"\n")
            held, held_size = [], 0
        else:  # (the beginning of the next piece's first line)
            rows.pop()
            held, held_size = [last], len(last)
        lines = len(rows)
        yield _Piece(start, first, rows, lines)
        start += region - held_size
        first += lines
    if held:  # the last line, without its line break
        if held_size > limit:
            yield _Piece(start, first, [], 1, long=True)
        else:
            yield _Piece(start, first, [b"".join(held)], 1)


def _numbered(stream: IO[bytes]) -> Iterator[tuple[int, int, bytes]]:
    """(number, offset, line) of every line of ``stream`` (1-based number, byte offset, the
    bytes with their line break); :data:`_LONG` in place of a line longer than
    :data:`MAX_LINE_BYTES`, whose rest is skipped, a piece at a time, once the caller has
    taken the placeholder: neither memory nor the wait for a finding grows with the line."""
    limit = MAX_LINE_BYTES
    readline = stream.readline
    number, offset = 1, 0
    while raw := readline(limit + 1):
        if len(raw) <= limit or raw[-1] == 10:  # (10 is b"\n")
            yield number, offset, raw
            offset += len(raw)
        else:
            yield number, offset, _LONG
            offset += len(raw)
            while (piece := readline(_SKIP)) and piece[-1] != 10:
                offset += len(piece)
            offset += len(piece)
        number += 1


def _bounded_read(stream: IO[bytes], size: int) -> bytes:
    """At most ``size`` bytes of ``stream``, to its end."""
    return stream.read(max(size, 0))


def _size() -> str:
    """:data:`MAX_LINE_BYTES` in words: "67,108,864 bytes (64 MiB)"."""
    return f"{MAX_LINE_BYTES:,} bytes ({MAX_LINE_BYTES / 2**20:g} MiB)"


def _long_line(source: str, number: int, offset: int) -> Item:
    finding = Finding.of(
        "too-large",
        (),
        f"Line {number:,} is longer than pgm-explore reads: a line holds at most {_size()}, "
        "and no PGM-AUA message needs more. It is skipped; reading goes on with the next line.",
        _SIZE_SPEC,
        line=number,
        column=1,
    )
    return _item((f"{source}:{number}", number, None, None, finding, None, offset, ()))


def _too_long(source: str) -> Item:
    finding = Finding.of(
        "too-large",
        (),
        f"The input is longer than pgm-explore reads as one JSON value: at most {_size()}. "
        "Write one message per line (JSON Lines): lines are read one at a time, each of up to "
        "the same size.",
        _SIZE_SPEC,
    )
    return Item(source, None, None, None, finding)


# --- validating what was read ---------------------------------------------------------------


def report(item: Item, *, built: bool = False) -> Report:
    """The validation report on one item; a reading problem (with its further findings) is all it reports.
    ``built``: the document was built in Python, not read here (see :func:`report_fields`)."""
    type_name, mode, conforms, findings = report_fields(item, built=built)
    return Report(type_name, mode, conforms, findings, item.source)


def report_fields(item: Item, *, built: bool = False) -> ReportFields:
    """:func:`report` but its source, as a tuple (type, mode, conforms, findings), for the bulk paths.

    A document the reader made holds JSON values only; one built in Python (``built``) is
    looked through for what JSON cannot hold first, as ``validate()`` does
    (:func:`pgm_explore.validation.report_fields`). Equal findings of several messages come
    as one tuple (see :func:`_shared`).

    >>> import io
    >>> report_fields(next(iter_stream(io.BytesIO(b'{"Header": "PGM-KPA-V1.0", "Mode": "RS"}'), "m.json")))[:3]
    ('BKN-PAL', 'RS', False)
    """
    type_name, mode, conforms, findings = _fields(item, built)
    return type_name, mode, conforms, _shared(findings) if findings else findings


_SHARED: dict[tuple[Finding, ...], tuple[Finding, ...]] = {}
_SHARED_MAX = 4096


def _shared(findings: tuple[Finding, ...]) -> tuple[Finding, ...]:
    """One tuple for equal findings: a log that repeats one mistake on every line (a header-only
    message has nine findings) then costs the memory of one set of findings, not one per line,
    where many messages' results are held at once: a partition's results, pickled on a worker
    (pickle writes an object it has written before as a reference) and read back here. At most
    :data:`_SHARED_MAX` sets are kept, then forgotten all at once."""
    try:
        kept = _SHARED.get(findings)
    except TypeError:  # (a finding about a value that cannot be hashed: kept as it is)
        return findings
    if kept is None:
        if len(_SHARED) >= _SHARED_MAX:
            _SHARED.clear()
        _SHARED[findings] = kept = findings
    return kept


def _fields(item: Item, built: bool) -> ReportFields:
    if item.problem is not None:
        return None, None, False, (item.problem, *item.notes)
    document = item.document
    if isinstance(document, str):
        # validate() takes a str as JSON text to parse; a document that *is* a JSON
        # string goes back to being text, so that it is reported as not an object.
        document = json.dumps(document)
    try:
        if item.notes is CLEAN and not built:
            return _report_fields(document, built=False, clean=True)
        if item.notes is NOT_TAKEN and not built:
            return _report_fields(document, built=False, refused=True)
        if item.notes:
            type_name, mode, conforms, findings = _report_fields(document, built=built)
            return type_name, mode, conforms, findings + item.notes
        return _report_fields(document, built=built)
    except RecursionError:
        # A value nested nearly as deep as the reader allows can still exhaust the
        # stack of the schema engines; in bulk that is one message's problem, not the run's.
        finding = Finding.of(
            "too-deep",
            (),
            "The message nests too deeply to be checked: reading it worked, validating it ran out of stack.",
        )
        return None, None, False, (finding,)
