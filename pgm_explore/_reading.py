"""Validate a whole file, from its path or from its bytes (an upload), one report per message.

The file is read exactly as ``pgm-explore validate`` reads it (:mod:`pgm_explore._sources`): a
``.json`` file holds one message or an array of messages (sources ``NAME#INDEX``), a ``.jsonl`` or
``.ndjson`` file one message per line (``NAME:LINE``), anything else is recognised by its content.
Whatever is wrong inside the file (not UTF-8, not JSON, an empty array) is a finding.

>>> reports = validate_file("two.jsonl", b'{"Header": "PGM-KPA-V1.0", "Mode": "RQ"}\\n\\nnot json\\n')
>>> [(r.source, r.type, r.conforms) for r in reports]
[('two.jsonl:1', 'BKN-PAL', False), ('two.jsonl:3', None, False)]
>>> reports[1].findings[0].rule
'syntax'
"""

from __future__ import annotations

import io
import os
from pathlib import PurePath

from pgm_explore._sources import input_kind, iter_documents, iter_stream, report
from pgm_explore.validation import Report

__all__ = ["validate_file"]


def validate_file(source: str | os.PathLike[str], content: bytes | None = None) -> list[Report]:
    """Every message of a file, validated: one :class:`~pgm_explore.Report` per message, in order.

    Without ``content`` the file at the path ``source`` is read (an unreadable path raises
    ``pgm_explore._sources.UnreadablePath``, an ``OSError`` would be a surprise). With ``content``
    (the bytes of an upload) ``source`` is only the file's name: its extension says how to read it,
    and the reports name their messages after it.
    """
    if content is None:
        return [report(item) for item in iter_documents(source)]
    name = PurePath(os.fspath(source)).name or "upload"
    return [report(item) for item in iter_stream(io.BytesIO(bytes(content)), name, input_kind(name))]


validate_file.__module__ = "pgm_explore"  # documented where it is imported from
