"""Reading JSON text safely: every way it can be wrong becomes a finding.

Python's reader accepts NaN and Infinity (not JSON), raises RecursionError on deep
nesting and UnicodeDecodeError on bad bytes; each of these is turned into a
:class:`InputProblem` carrying a finding with the line and column, so that callers can
report it like any other problem and go on with the next message.
"""

from __future__ import annotations

import json
import re
from typing import Any

from pgm_explore.validation.findings import Finding, RuleCode

__all__ = ["InputProblem", "loads", "position"]

_SPEC = "RFC 8259 (JSON), as the spec texts' Syntax sections require"
_NON_JSON_CONSTANT = re.compile(r"-?Infinity|NaN")


class InputProblem(ValueError):
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


def _reject_constant(name: str) -> Any:
    raise ValueError(name)


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
        return json.loads(text, parse_constant=_reject_constant)
    except json.JSONDecodeError as exc:
        raise _problem("syntax", f"Not valid JSON: {exc.msg}.", exc.lineno + first_line - 1, exc.colno) from None
    except RecursionError:
        raise _problem("too-deep", "The JSON nests too deeply to be read (more than about 1,000 levels).") from None
    except ValueError as exc:
        match = _NON_JSON_CONSTANT.search(text)
        line, column = position(text, match.start()) if match else (1, 1)
        raise _problem(
            "syntax",
            f"{exc} is not a JSON value (JSON has no NaN or Infinity).",
            line + first_line - 1,
            column,
        ) from None
