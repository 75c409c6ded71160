"""The bulk reader's fast path gives exactly what the json module gives.

``pgm_explore.io._read`` reads JSON Lines with msgspec and leaves to the json module what
msgspec refuses. These tests hold the two paths equal: the same values (an int stays an
int of any length, -0.0 stays -0.0) and, for text that is not JSON or holds a lone
surrogate, the same finding.
"""

from __future__ import annotations

import io
import json
import math
from typing import Any

from hypothesis import example, given, settings
from hypothesis import strategies as st

from pgm_explore.io._read import _decode, _parse, _parse_slowly
from pgm_explore.validation import parse_json
from pgm_explore.validation._parse import _duplicates_slowly
from pgm_explore.validation._values import json_value_problems


def _reference(raw: bytes) -> tuple[Any, Any, Any]:
    """The reader as it was before the fast path: the json module, then the wording path
    (for what the json module refuses, and for a lone surrogate, which it lets through);
    every object's names noted as it is read (the fast path only reads again when a cheap
    count says a name was dropped)."""
    try:
        value = _decode(raw.decode())
    except (ValueError, RecursionError):
        return _parse_slowly(raw, 1)
    if json_value_problems(value):
        return _parse_slowly(raw, 1)
    moved = tuple(f for f in parse_json(raw)[1] if f.rule == "beyond-double")  # (numbers read next to an integer)
    return value, None, _duplicates_slowly(raw) + moved


def _typed(value: Any) -> Any:
    """``value`` with every scalar tagged by its type (1 == 1.0 == True in Python)."""
    if isinstance(value, dict):
        return ("dict", [(k, _typed(v)) for k, v in value.items()])
    if isinstance(value, list):
        return ("list", [_typed(v) for v in value])
    if isinstance(value, float):
        return ("float", "nan" if math.isnan(value) else repr(value))
    return (type(value).__name__, value)


def _same(raw: bytes) -> None:
    fast_value, fast_problem, fast_notes = _parse(raw, 1)
    slow_value, slow_problem, slow_notes = _reference(raw)
    assert _typed(fast_value) == _typed(slow_value)
    assert (fast_problem and fast_problem.to_dict()) == (slow_problem and slow_problem.to_dict())
    assert fast_notes == slow_notes


_SCALARS = (
    st.none()
    | st.booleans()
    | st.integers()
    | st.integers(min_value=-(10**40), max_value=10**40)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text()
)
_SCALARS_FOR_NAMES = st.none() | st.integers() | st.text(alphabet=':"\\ab', max_size=5)
_VALUES = st.recursive(
    _SCALARS,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4),
    max_leaves=20,
)


# A parse each (microseconds): a few hundred examples cost a second.
@settings(max_examples=300, deadline=None)
@given(_VALUES, st.booleans())
def test_json_values_read_alike(value: Any, ascii_only: bool) -> None:
    _same(json.dumps(value, ensure_ascii=ascii_only).encode("utf-8", "surrogatepass"))


@settings(max_examples=300, deadline=None)
@given(st.binary(max_size=40))
@example(b'{"a": 1, "a": 2}')  # the last of duplicate keys wins in both, and both say so
@example(b'{"a": {"b": ":", "b": 2}, "c": [{"d" : 1, "d":1}]}')  # at any depth, spaced or not
@example(b'{"a": "\\u003a", "a": 1}')  # a colon written as an escape
@example(b'{"a": "\\u003a", "b": 1}')
@example(b'{"\\u003a": 1, "\\u003a": 2, "b": "\\u003b"}')  # a name that is a colon, written twice
@example(b"[1e400]")  # beyond a double: the integer it is, from both
@example(b"[123456789012345678901234567890]")  # beyond 64 bits: still an int
@example(b"[1.00000000000000000001, -1e-400, 0.1, 2.0]")  # a double would move the first two onto an integer
@example(b"[" + b"9" * 5000 + b"]")  # beyond Python's digit limit: too-large
@example(b'["\\ud800"]')  # a lone surrogate escape: an encoding finding on both paths
@example(b'{"\\udbff\\udfff": "\\ud83d\\ude00"}')  # pairs of escapes: characters
@example(b'"\xed\xa0\x80"')  # a surrogate written in (invalid) UTF-8
@example(b'\xef\xbb\xbf{"a": 1}')  # a UTF-8 BOM
@example(b"[NaN, Infinity]")
@example(b"[" * 3000 + b"]" * 3000)
@example(b'{"a": 1}\r\n')
@example(b"\x0b[1]")
def test_any_bytes_read_alike(raw: bytes) -> None:
    _same(raw)


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet='{}[]":,0123456789.eE+- \\utrfalsn\t\n', max_size=30))
def test_json_like_text_reads_alike(text: str) -> None:
    _same(text.encode())


@settings(max_examples=200, deadline=None)
@given(st.dictionaries(st.text(max_size=3), _SCALARS_FOR_NAMES, min_size=1, max_size=4), st.data())
def test_a_name_written_twice_is_noted_by_every_path(value: dict[str, Any], data: st.DataObject) -> None:
    name = data.draw(st.sampled_from(sorted(value)))
    text = json.dumps(value)
    twice = text[:-1] + ", " + json.dumps(name) + ": " + json.dumps(value[name]) + "}"
    _same(twice.encode())
    assert [(f.rule, f.path) for f in _parse(twice.encode(), 1)[2]] == [("duplicate-key", ())]


def test_every_reader_notes_a_name_written_twice() -> None:
    # issue #12: JSON Lines, a .json file, an array, and sniffed input.
    from pgm_explore.io._read import iter_stream, report

    twice = b'{"a": 1, "b": {"c": 1, "c": 2}}'
    once = b'{"a": 1, "b": {"c": 2}}'
    jsonl = once + b"\n" + twice + b"\n"
    for kind, data in (
        ("jsonl", jsonl),
        ("auto", jsonl),
        ("json", b"[" + once + b", " + twice + b"]"),
    ):
        items = list(iter_stream(io.BytesIO(data), "t", kind))  # type: ignore[arg-type]
        assert [[(f.rule, f.path) for f in item.notes] for item in items] == [[], [("duplicate-key", ("b",))]], kind
        assert [f.rule for f in report(items[1]).findings][-1] == "duplicate-key"
    [item] = iter_stream(io.BytesIO(twice), "t", "json")
    assert [(f.rule, f.path) for f in item.notes] == [("duplicate-key", ("b",))]


class _Dribble:
    """A pipe: each read gives at most the next of ``sizes`` bytes (over and over), as a live log does."""

    def __init__(self, data: bytes, sizes: list[int]) -> None:
        self.data, self.sizes, self.reads = data, sizes, 0

    def read1(self, size: int) -> bytes:
        size = min(size, self.sizes[self.reads % len(self.sizes)])
        self.reads += 1
        got, self.data = self.data[:size], self.data[size:]
        return got

    read = read1


@settings(max_examples=400, deadline=None)
@given(
    st.binary(max_size=120).map(lambda raw: raw.replace(b"\x00", b"\n")),
    st.integers(min_value=1, max_value=40),
    st.integers(min_value=1, max_value=30),
    st.lists(st.integers(min_value=1, max_value=50), min_size=1, max_size=5),
)
@example(b"abc\ndef\n\nghij", 4, 3, [2])
@example(b"x" * 50 + b"\nab\n", 8, 10, [8])  # a line too long that the reads cut in many
def test_pieces_are_the_lines_of_the_stream(data: bytes, size: int, limit: int, sizes: list[int]) -> None:
    # The bulk reader's pieces, whatever the reads give, are the stream's lines in order, each at
    # its number and byte, a line longer than the limit said in its place without its bytes.
    from unittest import mock

    from pgm_explore.io import _read

    expected = []
    offset = 0
    for number, line in enumerate(io.BytesIO(data).readlines(), 1):
        expected.append((number, offset, "long" if len(line.removesuffix(b"\n")) > limit else line))
        offset += len(line)
    got = []
    with mock.patch.object(_read, "MAX_LINE_BYTES", limit):
        for piece in _read._pieces(_Dribble(data, sizes), 0, 1, size):  # type: ignore[arg-type]
            if piece.long:
                got.append((piece.first, piece.start, "long"))
                continue
            assert piece.lines == len(piece.rows)
            offset = piece.start
            for number, row in enumerate(piece.rows, piece.first):
                got.append((number, offset, row))
                offset += len(row)
    assert got == expected
