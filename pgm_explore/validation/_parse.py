"""Reading JSON text safely: every way it can be wrong becomes a finding.

Python's reader accepts NaN and Infinity (not JSON) and lone surrogate escapes (no
character UTF-8 can encode), raises RecursionError on deep nesting, ValueError on
integers longer than its digit limit and UnicodeDecodeError on bad bytes; each of these is turned into a :class:`InputProblem` carrying a finding with
the line and column, so that callers can report it like any other problem and go on with
the next message.
"""

from __future__ import annotations

import json
import re
import sys
from functools import cache
from typing import Any

from pgm_explore.errors import PgmExploreError
from pgm_explore.validation._values import lone_surrogate, surrogate_finding
from pgm_explore.validation.findings import Finding, RuleCode

__all__ = ["InputProblem", "loads", "position"]

_SPEC = "RFC 8259 (JSON), as the spec texts' Syntax sections require"
_LIMIT_SPEC = "RFC 8259 section 9: an implementation may set limits on the range and precision of numbers"
# A JSON string (skipped whole, so that "NaN" inside one is not taken for the constant), or
# what is looked for, outside strings: the first match of the group is the culprit.
_STRING = r'"[^"\\]*(?:\\.[^"\\]*)*"'
_NON_JSON_CONSTANT = re.compile(_STRING + r"|(-?Infinity|NaN)", re.DOTALL)


class InputProblem(PgmExploreError, ValueError):
    """The text could not be read as one JSON value; ``finding`` says why and where."""

    def __init__(self, finding: Finding) -> None:
        super().__init__(finding.message)
        self.finding = finding


def position(text: str, offset: int) -> tuple[int, int]:
    """1-based (line, column) of a character offset."""
    line = text.count("\n", 0, offset) + 1
    return line, offset - (text.rfind("\n", 0, offset) + 1) + 1


def _problem(rule: RuleCode, message: str, line: int | None = None, column: int | None = None) -> InputProblem:
    return InputProblem(Finding.of(rule, (), message, _SPEC, line=line, column=column))


class _NonJsonConstant(Exception):
    """Raised by the reader's hook for NaN, Infinity and -Infinity (never a ValueError, so
    that no other complaint of the reader can be mistaken for it)."""


def _reject_constant(name: str) -> Any:
    raise _NonJsonConstant(name)


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


def loads(data: str | bytes, *, first_line: int = 1) -> Any:
    """Parse one JSON value, or raise :class:`InputProblem`.

    ``first_line`` is the line of the file the text starts on (JSON Lines), so that
    positions in findings are positions in the file.
    """
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
        value = json.loads(text, parse_constant=_reject_constant)
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
                _LIMIT_SPEC,
                line=line + first_line - 1,
                column=column,
            )
        ) from None
    # The reader lets a lone surrogate escape through ("\ud800"); UTF-8 cannot encode it, so
    # it is no JSON text a file could hold: an encoding finding, here, so no later stage meets it.
    surrogate = lone_surrogate(text, value)
    if surrogate is not None:
        path, code_point, key, offset = surrogate
        line, column = position(text, offset) if offset is not None else (1, None)
        where = {"line": line + first_line - 1, "column": column} if column is not None else {}
        raise InputProblem(surrogate_finding(path, code_point, key=key, **where))
    return value
