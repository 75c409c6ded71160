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
string's path, from the reader (:func:`lone_surrogates`) and from ``validate()`` of a dict alike:
every such string, the same findings for the same document.

>>> [(f.rule, f.json_path) for f in json_value_problems({"a": {1, 2}, "b": ["ok", "\\ud800"], 3: None})]
[('not-json', '$.a'), ('encoding', '$.b[1]'), ('not-json', '$')]
"""

from __future__ import annotations

import json
import math
import re
from dataclasses import replace
from json.decoder import scanstring  # type: ignore[attr-defined]  # (the reader's own, typeshed omits it)
from typing import Any

from pgm_explore.validation.findings import Finding, clip, json_path

__all__ = ["json_value_problems", "lone_surrogates", "surrogate_finding", "surrogate_position"]

_SURROGATE = re.compile("[\ud800-\udfff]")
# An escape of a surrogate in JSON text, or a surrogate character itself (text given as a str).
_MAYBE = re.compile(r"\\u[dD][89abcdefABCDEF]|[\ud800-\udfff]")
# Every escape of JSON text in order (backslashes occur only inside strings), or a surrogate character.
_ESCAPE = re.compile(r"\\(?:u([0-9a-fA-F]{4})|.)|([\ud800-\udfff])", re.DOTALL)
# Steps over one JSON value (NaN and numbers beyond a double too: the text has been read already).
_RAW_DECODE = json.JSONDecoder().raw_decode


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


def lone_surrogates(text: str, value: Any, limit: int | None = None) -> list[Finding]:
    """The ``encoding`` findings of ``value`` read from JSON ``text``: one for each string or
    property name holding a surrogate, in document order (at most ``limit``), as
    :func:`json_value_problems` gives them for the same value built in Python, each with the
    ``line`` and ``column`` where its first lone surrogate is written. Quick for text without one.

    >>> text = '{"a": "\\\\ud800",' + chr(10) + ' "b": ["ok", "\\\\udc00"]}'
    >>> [(f.json_path, f.line, f.column) for f in lone_surrogates(text, json.loads(text))]
    [('$.a', 1, 8), ('$.b[1]', 2, 15)]
    """
    if _MAYBE.search(text) is None:
        return []
    problems = [f for f in json_value_problems(value, limit) if f.rule == "encoding"]
    wanted = {(f.path, _is_key(f)) for f in problems}
    try:
        places = _string_places(text, wanted)
    except RecursionError:  # (a value nested nearly as deep as the reader allows: no places then)
        places = {}
    found = []
    for finding in problems:
        offset = places.get((finding.path, _is_key(finding)))
        if offset is None:
            found.append(finding)
            continue
        line = text.count("\n", 0, offset) + 1
        column = offset - (text.rfind("\n", 0, offset) + 1) + 1
        found.append(replace(finding, line=line, column=column))
    return found


def _is_key(finding: Finding) -> bool:
    """A finding on a property name (its path ends in the name; a string under such a name is
    never reported, since the name is)."""
    return bool(finding.path) and isinstance(finding.path[-1], str) and _surrogate(finding.path[-1]) is not None


_WHITESPACE = re.compile(r"[ \t\n\r]*")


def _string_places(text: str, wanted: set[tuple[tuple[str | int, ...], bool]]) -> dict[tuple[Any, bool], int]:
    """Where the first lone surrogate of each wanted string (path, is it a property name) is
    written in the JSON ``text``. Only the containers on the way to a wanted string are walked
    here; every other value is stepped over by the json module's own reader. A name written
    twice is found where its last value is written, the value the reader keeps."""
    prefixes = {path[:depth] for path, _ in wanted for depth in range(len(path) + 1)}
    step_over = _RAW_DECODE
    found: dict[tuple[Any, bool], int] = {}

    def space(index: int) -> int:
        match = _WHITESPACE.match(text, index)
        assert match is not None  # (it matches the empty string)
        return match.end()

    def walk(index: int, path: tuple[str | int, ...]) -> int:
        """The end of the value that starts at ``index``, noting the places wanted in it."""
        char = text[index]
        if char == '"':
            end = scanstring(text, index + 1)[1]
            if (path, False) in wanted:
                found[(path, False)] = index + (surrogate_position(text[index:end]) or 0)
            return end
        if char not in "{[":
            return int(step_over(text, index)[1])
        close = "}" if char == "{" else "]"
        index = space(index + 1)
        position = 0
        while text[index] != close:
            if char == "{":
                key, after = scanstring(text, index + 1)
                member: tuple[str | int, ...] = (*path, key)
                if (member, True) in wanted:
                    found[(member, True)] = index + (surrogate_position(text[index:after]) or 0)
                index = space(space(after) + 1)  # past the colon
            else:
                member = (*path, position)
                position += 1
            index = walk(index, member) if member in prefixes else int(step_over(text, index)[1])
            index = space(index)
            if text[index] == ",":
                index = space(index + 1)
        return index + 1

    walk(space(0), ())
    return found
