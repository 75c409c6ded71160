"""What JSON can hold: values a message built in Python may carry that no JSON text can.

The JSON reader only ever makes dicts with string keys, lists, strings, numbers, booleans and
null. A message built in Python (a notebook, a composer, ``Transcript.from_documents``) may hold
anything: a set, a tuple, bytes, a complex number, NaN, a key that is not a string. Such a
value is a ``not-json`` finding at its path, so that ``validate()`` keeps its promise never to
raise and no later stage (schema engines, models, tables, files) meets it.

A string holding a UTF-16 surrogate code point (``"\\ud800"``) is no character: UTF-8 cannot
encode it, so no UTF-8 JSON text holds it, and no file, model or transcript could carry it. The
JSON reader lets the escape ``"\\ud800"`` through (RFC 8259 section 8.2 leaves such strings
"unpredictable"); pgm-explore gives it one verdict everywhere: an ``encoding`` finding at the
string's path, from the reader (:func:`lone_surrogate`) and from ``validate()`` of a dict alike.

>>> [(f.rule, f.json_path) for f in json_value_problems({"a": {1, 2}, "b": ["ok", "\\ud800"], 3: None})]
[('not-json', '$.a'), ('encoding', '$.b[1]'), ('not-json', '$')]
"""

from __future__ import annotations

import math
import re
from typing import Any

from pgm_explore.validation.findings import Finding, clip, json_path

__all__ = ["ENCODING_SPEC", "json_value_problems", "lone_surrogate", "surrogate_finding", "surrogate_position"]

_NOT_JSON_SPEC = "RFC 8259 (JSON): objects with string names, arrays, strings, numbers, true, false and null"
ENCODING_SPEC = "RFC 8259 section 8.1 (JSON text shall be encoded in UTF-8) and 8.2 (unpaired surrogates)"
_SURROGATE = re.compile("[\ud800-\udfff]")
# An escape of a surrogate in JSON text, or a surrogate character itself (text given as a str).
_MAYBE = re.compile(r"\\u[dD][89abcdefABCDEF]|[\ud800-\udfff]")
# Every escape of JSON text in order (backslashes occur only inside strings), or a surrogate character.
_ESCAPE = re.compile(r"\\(?:u([0-9a-fA-F]{4})|.)|([\ud800-\udfff])", re.DOTALL)


def _surrogate(text: str) -> str | None:
    """The first surrogate code point in ``text``, or None (ASCII text has none: the quick answer)."""
    if text.isascii():
        return None
    found = _SURROGATE.search(text)
    return found.group() if found else None


def surrogate_finding(path: tuple[str | int, ...], surrogate: str, *, key: bool = False, **where: Any) -> Finding:
    """The ``encoding`` finding for a string (or a property name, ``key``) at ``path`` that
    holds ``surrogate``. The message writes the code point as an escape, never itself."""
    what = "The property name" if key else "The string"
    return Finding.of(
        "encoding",
        path,
        f"{what} at {json_path(path)} holds \\u{ord(surrogate):04x}, half of a UTF-16 surrogate pair "
        "without its other half: that is not a character, UTF-8 cannot encode it, and JSON text must be UTF-8.",
        ENCODING_SPEC,
        **where,
    )


def json_value_problems(document: Any, limit: int | None = None) -> list[Finding]:
    """A finding for each value of ``document`` that JSON cannot hold, in document order (at
    most ``limit``): ``not-json`` for a value of another Python type, NaN or infinity, and a
    key that is not a string (reported at its object); ``encoding`` for a string or key
    holding a surrogate. Empty for anything the JSON reader could have made."""
    found: list[Finding] = []
    pending: list[tuple[tuple[str | int, ...], Any]] = [((), document)]
    while pending and (limit is None or len(found) < limit):
        path, value = pending.pop()
        if isinstance(value, str):
            if (surrogate := _surrogate(value)) is not None:
                found.append(surrogate_finding(path, surrogate))
        elif value is None or isinstance(value, bool | int):
            continue
        elif isinstance(value, float):
            if not math.isfinite(value):
                found.append(_not_json(path, f"the number {value!r}", "JSON has no NaN or Infinity"))
        elif isinstance(value, dict):
            children: list[tuple[tuple[str | int, ...], Any]] = []
            for key, item in value.items():
                if not isinstance(key, str):
                    children.append((path, _Key(key)))  # reported in its place, at its object
                elif (surrogate := _surrogate(key)) is not None:
                    children.append(((*path, key), _Key(key, surrogate)))
                else:
                    children.append(((*path, key), item))
            pending.extend(reversed(children))
        elif isinstance(value, _Key):
            if value.surrogate is not None:
                found.append(surrogate_finding(path, value.surrogate, key=True))
            else:
                found.append(
                    _not_json(
                        path,
                        f"a property name {_written(value.key)} ({type(value.key).__name__})",
                        "the names of a JSON object are strings",
                    )
                )
        elif isinstance(value, list):
            pending.extend(((*path, index), item) for index, item in reversed(list(enumerate(value))))
        else:
            hint = "a JSON array is a list" if isinstance(value, tuple | set | frozenset) else "it is no JSON value"
            found.append(_not_json(path, f"a Python {type(value).__name__}", hint))
    return found if limit is None else found[:limit]


class _Key:
    """A property name that is a problem in itself, waiting in the walk for its turn."""

    __slots__ = ("key", "surrogate")

    def __init__(self, key: Any, surrogate: str | None = None) -> None:
        self.key = key
        self.surrogate = surrogate


def _written(value: Any) -> str:
    try:
        return clip(repr(value))
    except Exception:  # a key type with a broken repr is still a key that is not a string
        return "?"


def _not_json(path: tuple[str | int, ...], what: str, why: str) -> Finding:
    where = "The message" if not path else json_path(path)
    return Finding.of(
        "not-json",
        path,
        f"{where} holds {what}, which JSON cannot hold: {why}.",
        _NOT_JSON_SPEC,
    )


def surrogate_position(text: str) -> int | None:
    """Where the first surrogate of JSON ``text`` is written: an escape ``\\udXXX`` that is not
    half of a pair of escapes (high then low), or a surrogate character itself.

    >>> surrogate_position(r'["\\ud83d\\ude00", "\\\\ud800", "x\\udc00"]')
    30
    >>> surrogate_position(r'["\\ud83d\\ude00"]') is None
    True
    """
    high_end = -1  # where an escape of a high surrogate ended, if the last escape was one
    high_start = -1
    for match in _ESCAPE.finditer(text):
        if match.group(2) is not None:
            return high_start if high_end >= 0 else match.start()
        code = int(match.group(1), 16) if match.group(1) is not None else -1
        if high_end >= 0:
            if match.start() == high_end and 0xDC00 <= code <= 0xDFFF:
                high_end = -1
                continue
            return high_start
        if 0xD800 <= code <= 0xDBFF:
            high_start, high_end = match.start(), match.end()
        elif 0xDC00 <= code <= 0xDFFF:
            return match.start()
    return high_start if high_end >= 0 else None


def lone_surrogate(text: str, value: Any) -> tuple[tuple[str | int, ...], str, bool, int | None] | None:
    """For ``value`` read from JSON ``text``: (path, surrogate, is it a key, offset in the text)
    of the first string holding a surrogate, or None. Quick for text without one."""
    if _MAYBE.search(text) is None:
        return None
    problems = json_value_problems(value, limit=1)
    if not problems or problems[0].rule != "encoding":
        return None
    path = problems[0].path
    key = bool(path) and isinstance(path[-1], str) and _surrogate(path[-1]) is not None
    string: Any = path[-1] if key else value
    if not key:
        for part in path:
            string = string[part]
    return path, _surrogate(string) or "\ud800", key, surrogate_position(text)
