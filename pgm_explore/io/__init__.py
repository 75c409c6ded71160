"""Reading messages from JSON and JSON Lines files and streams, and validating them in bulk.

The reading rules are those of ``pgm-explore validate`` and ``check`` (their ``--help``; line
numbers as DECISIONS D18 says), so that a notebook, a script and the command agree on every
message and its name:

- ``.json``: one JSON value; an object is one message (source ``PATH``), an array a list
  of messages (``PATH#0``, ``PATH#1``, ...);
- ``.jsonl`` and ``.ndjson``: one message per line (``PATH:LINE``, the 1-based physical
  line; blank lines are skipped but counted), streamed: a file larger than memory is fine;
- ``-`` (standard input) and any other extension: recognised by the content.

A path that cannot be read at all (missing, a directory, no permission) raises
:class:`UnreadablePath`; everything wrong *inside* a file (not UTF-8, not JSON, NaN, too deep,
too long) is a finding on its message, and the next message is read as usual.

>>> import io
>>> stream = io.BytesIO(b'{"Header": "PGM-KPA-V1.0", "Mode": "RQ"}\\n\\n{oops\\n')
>>> [(item.source, item.problem and item.problem.rule) for item in iter_stream(stream, "two.jsonl", "jsonl")]
[('two.jsonl:1', None), ('two.jsonl:3', 'syntax')]

This package is the reading layer: its private modules read (``_read``) and cut a big
JSON Lines file into partitions worked on by local worker processes or a Dask cluster
(``_partitions``, on :mod:`pgm_explore._engine`); this module is their public face.
"""

from __future__ import annotations

import io
import os
from collections.abc import Callable, Iterator
from pathlib import PurePath
from typing import IO, Any

from pgm_explore._engine import Engine, engine_for
from pgm_explore.io._partitions import Batch, Growth, Held, LineBatch, Pushed, iter_batched, iter_reported, iter_worked
from pgm_explore.io._read import InputKind, Item, UnreadablePath, report_fields
from pgm_explore.io._read import input_kind as _input_kind
from pgm_explore.io._read import iter_documents as _iter_documents
from pgm_explore.io._read import iter_stream as _iter_stream
from pgm_explore.io._read import report as _report
from pgm_explore.validation import Report
from pgm_explore.validation._schema import EXPLAINER

__all__ = [
    "Batch",
    "Growth",
    "Held",
    "InputKind",
    "Item",
    "LineBatch",
    "Pushed",
    "UnreadablePath",
    "input_kind",
    "iter_batched",
    "iter_documents",
    "iter_reports",
    "iter_stream",
    "iter_worked",
    "report",
    "report_fields",
    "validate_file",
]

# Documented where they are imported from: the reader's own modules are private.
UnreadablePath.__module__ = __name__
Item.__module__ = __name__
iter_worked.__module__ = __name__
iter_batched.__module__ = __name__
Batch.__module__ = __name__
Growth.__module__ = __name__
Held.__module__ = __name__
LineBatch.__module__ = __name__
Pushed.__module__ = __name__
report_fields.__module__ = __name__


def input_kind(path: str) -> InputKind:
    """How :func:`iter_documents` reads ``path`` when not told otherwise, by its extension.

    >>> input_kind("a.json"), input_kind("b.JSONL"), input_kind("c.ndjson"), input_kind("-"), input_kind("d.txt")
    ('json', 'jsonl', 'jsonl', 'auto', 'auto')
    """
    return _input_kind(path)


def iter_documents(path: str | os.PathLike[str], *, kind: InputKind | None = None) -> Iterator[Item]:
    """Every message in the file at ``path`` (``"-"`` for standard input), in order, as an
    :class:`Item` (its ``source``, and the parsed ``document`` or the ``problem`` that kept
    it from being read).

    The path is opened at once: :class:`UnreadablePath` comes from this call, not from the
    first ``next()`` (a read error later on raises it from the iterator). ``kind`` (``"json"``,
    ``"jsonl"`` or ``"auto"``) overrides the choice :func:`input_kind` makes from the name.

    >>> next(iter_documents("no/such/file.jsonl"))
    Traceback (most recent call last):
    ...
    pgm_explore.io.UnreadablePath: cannot read no/such/file.jsonl: no such file
    """
    return _iter_documents(path, kind=kind)


def iter_stream(stream: IO[bytes], source: str, kind: InputKind = "auto") -> Iterator[Item]:
    """Every message in a binary stream (an upload, a socket, a decompressed file); ``source``
    names the stream in the items' sources, as a path would. With ``kind="auto"`` the content
    decides between JSON Lines and one JSON value (see ``pgm-explore validate --help``).

    >>> import io
    >>> [item.source for item in iter_stream(io.BytesIO(b'[{"a": 1}, {"b": 2}]'), "upload")]
    ['upload#0', 'upload#1']
    """
    return _iter_stream(stream, source, kind)


def report(item: Item, *, built: bool = False) -> Report:
    """The validation :class:`~pgm_explore.Report` on one item, named by its source: the
    problem that kept it from being read is all it reports (with its further findings:
    a lone surrogate in each of several strings); otherwise its document is
    validated and what the text said that the value cannot show (``item.notes``) is added.

    A document that is a JSON string is a message that is not an object (not JSON text to
    read again, as ``validate()`` takes a ``str``). ``built``: the item's document was built
    in Python rather than read (``Item(source, None, None, document, None)``), so it is
    looked through for values JSON cannot hold first, as ``validate()`` does.

    >>> [report(item).verdict for item in iter_stream(io.BytesIO(b'"text"\\n{"Header": 1}\\n'), "t.jsonl")]
    ['does not conform', 'does not conform']
    >>> report(Item("built", None, None, {"Header": "PGM-KPA-V1.0", "Tags": {1}}, None), built=True).findings[0].rule
    'not-json'
    """
    return _report(item, built=built)


_VALIDATE_BYTES = 512 * 1024 * 1024
"""The size of input from which ``validate`` (and :func:`iter_reports` with ``parallel``)
starts local worker processes by itself: starting them and their first work takes seconds,
which validating wins back only over about this much. Measured with
benchmarks/bench_threshold.py (session 12, 2 cores, a load average of 4.6 to 6.3):
``validate --workers 2`` was as fast as ``--workers 0`` on 512 MiB (1.01x), slower on 256 MiB
and less (0.61x); see ``CHECK_BYTES`` in ``pgm_explore.dialogue``."""


def iter_reports(
    path: str | os.PathLike[str],
    *,
    kind: InputKind | None = None,
    parallel: bool = True,
    engine: Engine | None = None,
    progress: Callable[[int], object] | None = None,
) -> Iterator[Report]:
    """The validation :class:`~pgm_explore.Report` of every message in ``path``, in order, as
    ``pgm-explore validate`` makes them.

    Raises :class:`UnreadablePath` like :func:`iter_documents`. ``engine`` (from
    ``pgm_explore._engine.engine``) says where the work runs; without one and with
    ``parallel`` (the default), a regular file of :data:`_VALIDATE_BYTES` or more is
    validated on local worker processes (one per core), started for it and stopped when
    the iteration ends. The reports are the same wherever they are made. ``progress`` is
    told the bytes done, as :func:`iter_worked` says.
    """
    own = (
        # (python-jsonschema imported before the workers are forked, as for pgm-explore validate)
        engine_for([os.fspath(path)], min_bytes=_VALIDATE_BYTES, preload=[__name__, EXPLAINER])
        if engine is None and parallel
        else None
    )
    try:
        pairs = iter_reported(path, kind=kind, engine=engine or own, progress=progress)
    except BaseException:
        if own is not None:
            own.close()
        raise
    return _reports(pairs, own)


def _reports(pairs: Iterator[tuple[str, tuple[Any, ...]]], own: Engine | None) -> Iterator[Report]:
    try:
        for source, (type_name, mode, conforms, findings) in pairs:
            yield Report(type_name, mode, conforms, findings, source)
    finally:
        if own is not None:
            own.close()


def validate_file(source: str | os.PathLike[str], content: bytes | None = None) -> list[Report]:
    """Every message of a file, validated: one :class:`~pgm_explore.Report` per message, in order.

    Without ``content`` the file at the path ``source`` is read (an unreadable path raises
    :class:`UnreadablePath`). With ``content`` (the bytes of an upload) ``source`` is only
    the file's name: its extension says how to read it, and the reports name their
    messages after it. Whatever is wrong inside the file is a finding.

    >>> reports = validate_file("two.jsonl", b'{"Header": "PGM-KPA-V1.0", "Mode": "RQ"}\\n\\nnot json\\n')
    >>> [(r.source, r.type, r.conforms) for r in reports]
    [('two.jsonl:1', 'BKN-PAL', False), ('two.jsonl:3', None, False)]
    >>> reports[1].findings[0].rule
    'syntax'
    """
    if content is None:
        return [_report(item) for item in _iter_documents(source)]
    name = PurePath(os.fspath(source)).name or "upload"
    return [_report(item) for item in _iter_stream(io.BytesIO(bytes(content)), name, _input_kind(name))]
