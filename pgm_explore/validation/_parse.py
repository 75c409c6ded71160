"""Reading JSON text safely: every way it can be wrong becomes a finding.

Python's reader accepts NaN and Infinity (not JSON) and lone surrogate escapes (no
character UTF-8 can encode), raises RecursionError on deep nesting, ValueError on
integers longer than its digit limit and UnicodeDecodeError on bad bytes; each of these
is turned into a :class:`InputProblem` carrying a finding with the line and column, so that callers can report it like any other problem and go on with
the next message.

Three things JSON allows are read with care. A number beyond the range of a double
(``1e400``: RFC 8259 sets no range) would become ``inf``, which no schema takes for a
number; it is read as the integer it is (a double that large has no fraction either), so
that the schema judges the number that was written. A number so close to an integer that
the nearest double is that integer (``1.00000000000000000001``, ``-1e-400``) would pass a
bound or an integer type that the number written fails (every bound of the schemas is an
integer); it is read as the double next to the integer on the side of the number written,
so that the verdict is again that of the number written, and :func:`parse_json` says so,
with a ``beyond-double`` warning at its path. And a name that appears twice in one object
(RFC 8259: names SHOULD be unique) is kept as every reader keeps it, the last value
winning, but :func:`parse_json` says so, with a ``duplicate-key`` warning at the object.
"""

from __future__ import annotations

import json
import math
import re
import sys
from collections.abc import Callable, Iterator
from dataclasses import replace
from functools import cache
from typing import Any

from pgm_explore.errors import PgmExploreError
from pgm_explore.validation._limits import MAX_FINDINGS
from pgm_explore.validation._values import lone_surrogates
from pgm_explore.validation.findings import RULES, Finding, RuleCode, clip

__all__ = [
    "InputProblem",
    "duplicate_keys",
    "loads",
    "parse_json",
    "position",
    "read_double",
    "read_number",
]

# A JSON string (skipped whole, so that "NaN" inside one is not taken for the constant), or
# what is looked for, outside strings: the first match of the group is the culprit.
_STRING = r'"[^"\\]*(?:\\.[^"\\]*)*"'
_NON_JSON_CONSTANT = re.compile(_STRING + r"|(-?Infinity|NaN)", re.DOTALL)


class InputProblem(PgmExploreError, ValueError):
    """The text could not be read as one JSON value; ``finding`` says why and where, and
    ``findings`` are all the reasons found (each string holding a lone surrogate has its own,
    as ``validate()`` of the same document reports them), ``finding`` the first."""

    def __init__(self, finding: Finding, *more: Finding) -> None:
        super().__init__(finding.message)
        self.finding = finding
        self.findings = (finding, *more)


def position(text: str, offset: int) -> tuple[int, int]:
    """1-based (line, column) of a character offset."""
    line = text.count("\n", 0, offset) + 1
    return line, offset - (text.rfind("\n", 0, offset) + 1) + 1


def _problem(rule: RuleCode, message: str, line: int | None = None, column: int | None = None) -> InputProblem:
    # Whatever the reader stumbled on, the text is no JSON: the clause is JSON's own, that of `syntax`.
    return InputProblem(Finding.of(rule, (), message, RULES["syntax"].spec, line=line, column=column))


class _NonJsonConstant(PgmExploreError):
    """Raised by the reader's hook for NaN, Infinity and -Infinity (never a ValueError, so
    that no other complaint of the reader can be mistaken for it)."""


def _reject_constant(name: str) -> Any:
    raise _NonJsonConstant(name)


class _LongNumber(PgmExploreError, ValueError):
    """Raised by :func:`read_number` for a number whose integer would have more digits
    than Python writes: the ``too-large`` of a long integer, written with an exponent."""

    def __init__(self, text: str) -> None:
        super().__init__(text)
        self.text = text


_INTEGERS_ONLY = 2.0**53
"""From here on every double is an integer: a fraction written there is dropped, as a double drops it."""


def _side(text: str, value: float) -> int:
    """Where the number written in ``text`` lies from ``value``, the integer its double is
    (below 2**53): -1 below, 0 on it, 1 above."""
    if len(text) < 16 and "e" not in text and "E" not in text:
        # At most 14 digits and no exponent: a number that is not an integer is far enough
        # from one that its double is not one either (the quick answer for "1.0" and "255.0").
        return 0
    from decimal import Decimal, InvalidOperation  # (only for the rare number written with many digits or an exponent)

    try:
        number = Decimal(text)
    except InvalidOperation:
        # An exponent longer than Decimal takes, and negative (a positive one makes no finite double):
        # the number is 0 or as near to it as no double is.
        if not text.lower().partition("e")[0].strip("+-0."):
            return 0
        return -1 if text.startswith("-") else 1
    return (number > value) - (number < value)  # (a Decimal compares with a float exactly)


def read_number(text: str) -> float | int:
    """The value of a JSON number with a fraction or an exponent: a float, or, beyond the
    range of a double, the integer it stands for (no double that large has a fraction:
    the fraction of a longer number is dropped as a double would drop it). A number whose
    nearest double is an integer it is not (``1.00000000000000000001``, ``-1e-400``) is read
    as the double next to that integer on its own side, so that a bound or an integer type
    judges the number written.

    >>> read_number("2.5"), read_number("1e400") == 10**400, read_number("-1.5e309") == -15 * 10**308
    (2.5, True, True)
    >>> read_number("1.0"), read_number("1.00000000000000000001"), read_number("-1e-400")
    (1.0, 1.0000000000000002, -5e-324)
    """
    value = float(text)
    if math.isfinite(value):
        if value.is_integer() and abs(value) < _INTEGERS_ONLY and (side := _side(text, value)):
            return math.nextafter(value, side * math.inf)
        return value
    from decimal import Decimal  # (only for numbers no double holds)

    number = Decimal(text)
    if number.adjusted() >= sys.get_int_max_str_digits():
        raise _LongNumber(text)  # (an int of a billion digits must not even be built)
    return int(number)


def read_double(text: str) -> float:
    """The double of a JSON number with a fraction or an exponent, for a fast reader that
    keeps to doubles (msgspec's ``float_hook``): ValueError for a number :func:`read_number`
    reads otherwise (beyond a double's range, or next to an integer), so that such a reader
    hands the text to :func:`parse_json`, which reads it and says what it did.

    >>> read_double("0.5")
    0.5
    >>> read_double("1.00000000000000000001")
    Traceback (most recent call last):
    ValueError: 1.00000000000000000001 is not read as its double
    """
    value = float(text)
    if not math.isfinite(value) or (value.is_integer() and abs(value) < _INTEGERS_ONLY and _side(text, value)):
        raise ValueError(f"{text} is not read as its double")
    return value


@cache
def _long_integer(limit: int) -> re.Pattern[str]:
    """Strings, or an integer of more than ``limit`` digits outside them: a whole number, not
    the fraction or exponent of one, nor followed by them (Python reads those as floats)."""
    return re.compile(_STRING + rf"|(?<![0-9.eE+\-])(-?[0-9]{{{limit + 1},}})(?!\.[0-9]|[eE][-+]?[0-9])", re.DOTALL)


def _outside_strings(pattern: re.Pattern[str], text: str) -> tuple[int, int] | None:
    """(start, end) of the first match of ``pattern``'s group 1, skipping JSON strings."""
    for match in pattern.finditer(text):
        if match.group(1) is not None:
            return match.span(1)
    return None


def loads(data: str | bytes | bytearray, *, first_line: int = 1) -> Any:
    """Parse one JSON value, or raise :class:`InputProblem`.

    ``first_line`` is the line of the file the text starts on (JSON Lines), so that
    positions in findings are positions in the file.
    """
    return _loads(data, first_line, read_number)


def _loads(data: str | bytes | bytearray, first_line: int, parse_float: Callable[[str], Any]) -> Any:
    if isinstance(data, bytes | bytearray):
        try:
            text = bytes(data).decode("utf-8-sig")
        except UnicodeDecodeError as exc:
            prefix = bytes(data[: exc.start]).decode("utf-8", "replace")
            line, column = position(prefix, len(prefix))
            raise _problem(
                "encoding",
                f"Byte {exc.start} (0x{data[exc.start]:02x}) is not valid UTF-8; JSON text must be UTF-8.",
                line + first_line - 1,
                column,
            ) from None
    else:
        text = data
    if not text.strip():
        raise _problem("empty", "There is no JSON here: the text is empty.")
    try:
        value = json.loads(text, parse_constant=_reject_constant, parse_float=parse_float)
    except _LongNumber as exc:
        start = _number_at(text, exc.text)
        line, column = position(text, start) if start is not None else (1, 1)
        raise InputProblem(
            Finding.of(
                "too-large",
                (),
                f"The number {clip(exc.text)} is too large to read: its integer would have more than "
                f"{sys.get_int_max_str_digits():,} digits (Python's limit), and no PGM-AUA value needs more.",
                line=line + first_line - 1,
                column=column,
            )
        ) from None
    except json.JSONDecodeError as exc:
        raise _problem("syntax", f"Not valid JSON: {exc.msg}.", exc.lineno + first_line - 1, exc.colno) from None
    except RecursionError:
        raise _problem("too-deep", "The JSON nests too deeply to be read (more than about 1,000 levels).") from None
    except _NonJsonConstant as exc:
        span = _outside_strings(_NON_JSON_CONSTANT, text)
        line, column = position(text, span[0]) if span is not None else (1, 1)
        raise _problem(
            "syntax",
            f"{exc} is not a JSON value (JSON has no NaN or Infinity).",
            line + first_line - 1,
            column,
        ) from None
    except ValueError as exc:
        # An integer longer than Python converts (sys.get_int_max_str_digits(), 4,300 digits
        # unless changed): the one other ValueError the reader is known to raise.
        if "integer string conversion" not in str(exc):
            raise _problem("syntax", f"Not valid JSON: {str(exc)[:200]}.") from None
        limit = sys.get_int_max_str_digits()
        span = _outside_strings(_long_integer(limit), text)
        if span is None:
            raise _problem("too-large", f"A number is too long to read (more than {limit:,} digits).") from None
        start, end = span
        digits = end - start - (text[start] == "-")
        line, column = position(text, start)
        raise InputProblem(
            Finding.of(
                "too-large",
                (),
                f"A number of {digits:,} digits is too long to read: pgm-explore reads integers of "
                f"at most {limit:,} digits (Python's limit), and no PGM-AUA value needs more.",
                line=line + first_line - 1,
                column=column,
            )
        ) from None
    # The reader lets a lone surrogate escape through ("\ud800"); UTF-8 cannot encode it, so
    # it is no JSON text a file could hold: an encoding finding for each string holding one,
    # here, so no later stage meets it.
    surrogates = lone_surrogates(text, value, MAX_FINDINGS)
    if surrogates:
        if first_line != 1:
            surrogates = [replace(f, line=f.line + first_line - 1) if f.line is not None else f for f in surrogates]
        raise InputProblem(*surrogates)
    return value


def _number_at(text: str, number: str) -> int | None:
    """Where the JSON number ``number`` is written in ``text``, outside strings."""
    pattern = re.compile(_STRING + r"|(?<![0-9.eE+\-])(" + re.escape(number) + r")(?![0-9.eE+\-])", re.DOTALL)
    span = _outside_strings(pattern, text)
    return span[0] if span is not None else None


# --- names that appear twice in one object ----------------------------------------------


@cache
def _encoder() -> Callable[[Any], bytes]:
    """msgspec's JSON encoder, once it is needed: msgspec (with typing_extensions) would double
    the time ``import pgm_explore`` takes, and only reading JSON text needs it."""
    import msgspec

    return msgspec.json.Encoder().encode


def parse_json(data: str | bytes | bytearray, *, first_line: int = 1) -> tuple[Any, tuple[Finding, ...]]:
    """Parse one JSON value like :func:`loads`, and say what the value cannot show: the
    names that appear more than once in one object (``duplicate-key`` warnings, one per
    object and name, at the object's path). Raises :class:`InputProblem` like ``loads``.

    >>> value, notes = parse_json('{"Header": "PGM-KDA-V1.0", "Header": "PGM-KPA-V1.0"}')
    >>> value, [(f.rule, f.json_path) for f in notes]
    ({'Header': 'PGM-KPA-V1.0'}, [('duplicate-key', '$')])
    """
    moved: dict[int, tuple[float, str]] = {}

    def read(text: str) -> float | int:
        value = read_number(text)
        if type(value) is float and value != float(text):
            moved[id(value)] = (value, text)  # (the value is kept alive, so its id stays its own)
        return value

    value = _loads(data, first_line, read)
    notes = duplicate_keys(data, value)
    return value, (notes + _moved_numbers(value, moved)) if moved else notes


def _moved_numbers(value: Any, moved: dict[int, tuple[float, str]]) -> tuple[Finding, ...]:
    """The ``beyond-double`` warnings of the numbers :func:`read_number` read as the double
    next to an integer (``moved``, by the id of the value it made), in document order.

    >>> [(f.json_path, f.message) for f in parse_json('{"Confidence": 1.00000000000000000001}')[1]]
    [('$.Confidence', 'The number 1.00000000000000000001 is above 1, but no double holds it: a reader that uses doubles (JavaScript, most JSON libraries) reads 1. pgm-explore reads it as 1.0000000000000002, the next double above 1, so that a bound or an integer type judges the number written.')]
    """
    findings = []
    pending: list[tuple[tuple[str | int, ...], Any]] = [((), value)]
    while pending:
        path, item = pending.pop()
        if isinstance(item, dict):
            pending.extend(((*path, key), sub) for key, sub in reversed(item.items()))
        elif isinstance(item, list):
            pending.extend(((*path, index), sub) for index, sub in reversed(list(enumerate(item))))
        elif type(item) is float and id(item) in moved:
            number, text = moved[id(item)]
            integer = int(float(text))
            side = "above" if number > integer else "below"
            findings.append(
                Finding.of(
                    "beyond-double",
                    path,
                    f"The number {clip(text)} is {side} {integer}, but no double holds it: a reader that uses "
                    f"doubles (JavaScript, most JSON libraries) reads {integer}. pgm-explore reads it as "
                    f"{number!r}, the next double {side} {integer}, so that a bound or an integer type judges "
                    "the number written.",
                )
            )
    return tuple(findings)


def duplicate_keys(raw: str | bytes | bytearray, value: Any) -> tuple[Finding, ...]:
    """The ``duplicate-key`` warnings of the JSON text ``raw``, which reads as ``value``.

    Cheap when there are none (one more encode and two counts of a byte; the bulk reader
    inlines it, and benchmarks/bench_reading.py measures it): each name in the text is
    followed by a colon, and every other colon is inside a string, where the value keeps
    it; so the text has more colons than ``value`` written out again exactly when a name
    was dropped. Only then, or when a colon may be written as the escape ``\\u003a``, is
    the text read again, noting the names of each object.
    """
    try:
        written = _encoder()(value)
    except (TypeError, ValueError, OverflowError):  # (a lone surrogate, which msgspec will not write)
        return _duplicates_slowly(raw)
    if isinstance(raw, str):
        colons = raw.count(":")
        escaped = "\\" in raw and "\\u003" in raw
    else:
        colons = raw.count(b":")
        escaped = b"\\" in raw and b"\\u003" in raw  # (most texts have no backslash: one memchr)
    if colons > written.count(b":") or escaped:
        return _duplicates_slowly(raw)
    return ()


class _Repeated(dict[str, Any]):
    """An object in which a name is written more than once: ``counts`` says how many times."""

    counts: dict[str, int]


def _pairs(items: list[tuple[str, Any]]) -> dict[str, Any]:
    """The object of ``items``, as the json module makes it, told apart when a name repeats."""
    obj = dict(items)
    if len(obj) == len(items):
        return obj
    counts: dict[str, int] = {}
    for name, _ in items:
        counts[name] = counts.get(name, 0) + 1
    repeated = _Repeated(obj)
    repeated.counts = {name: n for name, n in counts.items() if n > 1}
    return repeated


def _duplicates_slowly(raw: str | bytes | bytearray) -> tuple[Finding, ...]:
    text = raw.decode("utf-8-sig") if isinstance(raw, bytes | bytearray) else raw
    try:
        value = json.loads(text, parse_constant=_reject_constant, parse_float=read_number, object_pairs_hook=_pairs)
    except (ValueError, RecursionError):
        return ()
    findings = []
    for path, obj in _objects(value):
        if isinstance(obj, _Repeated):
            for name, count in obj.counts.items():
                times = "twice" if count == 2 else f"{count} times"
                findings.append(
                    Finding.of(
                        "duplicate-key",
                        path,
                        f'The name "{clip(name)}" is written {times} in one object: only its last value is read, '
                        "and another reader may keep another one. Write each name once.",
                    )
                )
    return tuple(findings)


def _objects(value: Any) -> Iterator[tuple[tuple[str | int, ...], dict[str, Any]]]:
    """Every object in ``value`` with its path, in document order (without recursion)."""
    pending: list[tuple[tuple[str | int, ...], Any]] = [((), value)]
    while pending:
        path, item = pending.pop()
        if isinstance(item, dict):
            yield path, item
            pending.extend(((*path, key), sub) for key, sub in reversed(item.items()))
        elif isinstance(item, list):
            pending.extend(((*path, index), sub) for index, sub in reversed(list(enumerate(item))))
