"""Transcript files read as a stream of messages on the bulk reading path, each message with what
the transcript checker found at it: what a table of a big log is made from.

:func:`~pgm_explore.dialogue.iter_checked` reads the items of :mod:`pgm_explore.io` (a dict a message,
validated on its own); :func:`iter_checked_paths` reads files as ``check`` reads them: cut into
partitions of whole lines, a clean line read and judged by the typed reader, its facts made from the
Struct, and of its document only the members the caller reads (``members``), made plain values. The
messages and findings are the same as :func:`~pgm_explore.dialogue.iter_checked` gives for the
files' items, but for the members left out of each message's document.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from functools import partial
from typing import Any, cast

import msgspec

from pgm_explore._progress import Progress, input_size
from pgm_explore.dialogue._checker import Found, TranscriptChecker
from pgm_explore.dialogue._facts import Facts, _facts_of, struct_facts
from pgm_explore.dialogue._transcript import Message
from pgm_explore.io import Batch, Item, Pushed, iter_batched, report_fields
from pgm_explore.validation import Report, ReportFields, Way, clean_fields

__all__ = ["iter_checked_paths"]

_to_builtins = msgspec.to_builtins
_UNSET = msgspec.UNSET

Record = tuple[ReportFields, Facts, Any]
"""What is kept of a message: its report's fields (type, Mode, verdict, findings), its facts and the
members of its document asked for (a dict; None when the document is not a JSON object)."""


def _struct_members(kind: type, members: frozenset[str]) -> tuple[tuple[str, str], ...]:
    """(member, attribute) of each of ``members`` that the Struct type ``kind`` has."""
    return tuple(
        (field.encode_name, field.name) for field in msgspec.structs.fields(kind) if field.encode_name in members
    )


class _Records:
    """The :class:`Record` of each message of a partition, with its line (a
    :class:`~pgm_explore.io.LineBatch`): a clean line's from the Struct the typed reader read (no
    dict made), any other message's from its item."""

    __slots__ = ("attributes", "members", "records")

    def __init__(self, members: frozenset[str]) -> None:
        self.members = members
        self.attributes: dict[type, tuple[tuple[str, str], ...]] = {}
        self.records: list[tuple[int, ReportFields, Facts, Any]] = []

    def typed(self, line: int, way: Way, value: Any) -> None:
        fields = clean_fields(way, value)
        kind = type(value)
        attributes = self.attributes.get(kind)
        if attributes is None:
            attributes = self.attributes[kind] = _struct_members(kind, self.members)
        kept = {}
        for member, attribute in attributes:
            if (got := getattr(value, attribute)) is not _UNSET:
                kept[member] = _to_builtins(got)
        self.records.append((line, fields, struct_facts(value, way.dt.name, way.mode, fields[3]), kept))

    def item(self, item: Item) -> None:
        self.records.append((item.line, *item_record(item, self.members)))  # type: ignore[arg-type]  # (a partition's items have their line)

    def cut(self) -> list[tuple[int, ReportFields, Facts, Any]]:
        done, self.records = self.records, []
        return done


def item_record(item: Item, members: frozenset[str]) -> Record:
    """The :class:`Record` of a message read as an item."""
    fields = report_fields(item)
    document = item.document
    kept = {name: document[name] for name in members if name in document} if isinstance(document, dict) else None
    return fields, _facts_of(document, fields[0], fields[1], fields[3]), kept


def iter_checked_paths(
    paths: Sequence[str],
    members: frozenset[str],
    *,
    bar: Progress | None = None,
) -> Iterator[tuple[Message | None, Found]]:
    """:func:`~pgm_explore.dialogue.iter_checked` of the files ``paths``, one transcript in order, read
    on the bulk path in this process (see the module): each message's document holds only
    ``members`` (those of them it has). ``bar`` is told the bytes done.

    >>> from pgm_explore.io import iter_documents
    >>> from pgm_explore.dialogue import iter_checked
    >>> path = "data/transcripts/commitments.jsonl"
    >>> fast = [(m and (m.source, m.get("QueryID")), [f.rule for f in found]) for m, found in iter_checked_paths([path], frozenset({"QueryID"}))]
    >>> fast == [(m and (m.source, m.get("QueryID")), [f.rule for f in found]) for m, found in iter_checked(iter_documents(path))]
    True
    """
    checker = TranscriptChecker()
    feed = checker.feed_line
    position = 0
    work = partial(item_record, members=members)
    counted = bar.counter() if bar is not None else None
    for path in paths:
        head = f"{path}:"
        before = bar.done if bar is not None else 0
        for got in iter_batched(path, work, Pushed(partial(_Records, members)), progress=counted):
            if type(got) is Batch:
                base = got.base
                for number, fields, facts, kept in got.value:
                    line = base + number
                    source = f"{head}{line}"
                    yield _message(position, source, kept, fields), feed(head, line, facts)
                    position += 1
            else:
                source, (fields, facts, kept) = cast(tuple[str, Record], got)  # (what is not a Batch)
                yield _message(position, source, kept, fields), feed(source, -1, facts)
                position += 1
        if bar is not None:
            bar.top_up(before, input_size([path]))
    yield None, checker.finish()


def _message(position: int, source: str, kept: Any, fields: ReportFields) -> Message:
    type_name, mode, conforms, findings = fields
    return Message(position, source, kept, Report(type_name, mode, conforms, findings, source))
