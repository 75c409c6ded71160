"""What every command shares on its way out: exit statuses, colour, escaping and writing.

The exit statuses and the text forms are part of each command's contract (README.md, the
epilogs of ``--help``): other tools parse them, so they are written in one place.
"""

from __future__ import annotations

import argparse
import errno
import json
import os
import sys
from collections.abc import Callable, Iterable
from json.encoder import encode_basestring_ascii
from typing import IO, TYPE_CHECKING, NamedTuple, Protocol, cast

from pgm_explore._progress import input_size

if TYPE_CHECKING:
    from pgm_explore._progress import Progress

__all__ = [
    "ANSI",
    "EXIT_BROKEN_PIPE",
    "EXIT_INTERRUPTED",
    "EXIT_TERMINATED",
    "EXIT_NONCONFORMING",
    "EXIT_OK",
    "EXIT_USAGE",
    "PLAIN",
    "PROG",
    "Palette",
    "Runner",
    "Severities",
    "clean",
    "count",
    "encode",
    "input_size",
    "is_terminal",
    "json_str",
    "palette_for",
    "shared",
    "silence",
    "unwritable",
    "stdin_notice",
    "write_text",
]

PROG = "pgm-explore"

EXIT_OK = 0
EXIT_NONCONFORMING = 1
EXIT_USAGE = 2
EXIT_INTERRUPTED = 130  # 128 + SIGINT, as shells report Ctrl-C
EXIT_TERMINATED = 143  # 128 + SIGTERM, as shells report a command that `kill` or `timeout` ended
EXIT_BROKEN_PIPE = 141  # 128 + SIGPIPE, as `yes | head -1` reports it

Runner = Callable[[argparse.Namespace, IO[str], IO[str]], int]
"""A command's body: it writes to the two streams it is given and returns the exit status."""


def count(n: int, noun: str) -> str:
    """``n`` and the noun, plural unless ``n`` is one.

    >>> count(1, "message"), count(0, "warning")
    ('1 message', '0 warnings')
    """
    return f"{n} {noun}{'' if n == 1 else 's'}"


class _Graded(Protocol):
    @property
    def severity(self) -> str: ...


class Severities:
    """The errors and warnings among the findings reported so far, and the summary line they end.

    Each command's tally says what it counted (:meth:`counted`, around the "N errors, M warnings"
    it is given) and what went wrong on the way (:meth:`problem`); :meth:`summary` puts them
    together the same way for every command.
    """

    __slots__ = ("errors", "warnings")

    def __init__(self) -> None:
        self.errors = self.warnings = 0

    def add_findings(self, findings: Iterable[_Graded]) -> None:
        for finding in findings:
            if finding.severity == "error":
                self.errors += 1
            else:
                self.warnings += 1

    def counted(self, findings: str) -> str:
        """What was counted, around ``findings`` (the errors and warnings)."""
        return findings

    def problem(self) -> str | None:
        """What could not be done (an input that could not be read), or None."""
        return None

    def summary(self) -> str:
        """The last line of the text output (without colour).

        >>> t = Severities(); t.errors = 1; t.summary()
        '1 error, 0 warnings'
        """
        text = self.counted(f"{count(self.errors, 'error')}, {count(self.warnings, 'warning')}")
        problem = self.problem()
        return text if problem is None else f"{text}; {problem}"


# --- json ---------------------------------------------------------------------------------

# ASCII output (\uXXXX escapes): valid whatever the locale's encoding, and a lone
# surrogate from a message ("\ud800") comes out as the escape it came in as.
encode = json.JSONEncoder(separators=(",", ":"), check_circular=False).encode


def json_str(value: str | None) -> str:
    """A string (or None) as JSON, as :data:`encode` writes it."""
    return "null" if value is None else encode_basestring_ascii(value)


# --- text ---------------------------------------------------------------------------------


class Palette(NamedTuple):
    bold: str
    dim: str
    red: str
    green: str
    yellow: str
    cyan: str
    reset: str


PLAIN = Palette("", "", "", "", "", "", "")
ANSI = Palette("\x1b[1m", "\x1b[2m", "\x1b[31m", "\x1b[32m", "\x1b[33m", "\x1b[36m", "\x1b[0m")


def palette_for(flag: bool | None, stream: IO[str]) -> Palette:
    """The colours for ``stream``: ``--color`` / ``--no-color`` (``flag``) win over everything,
    then NO_COLOR and a dumb terminal (https://no-color.org), then whether it is a terminal."""
    if flag is not None:
        return ANSI if flag else PLAIN
    if os.environ.get("NO_COLOR") or os.environ.get("TERM") == "dumb":
        return PLAIN
    return ANSI if is_terminal(stream) else PLAIN


def is_terminal(stream: IO[str] | None) -> bool:
    try:
        return bool(stream and stream.isatty())
    except (AttributeError, OSError, ValueError):  # no isatty(), or already closed
        return False


# Control characters from a message (quoted in findings, or in a file name) are shown
# as escapes: raw, they could move the cursor, retitle the terminal or break the layout.
_CONTROLS = {c: f"\\x{c:02x}" for c in (*range(0x20), *range(0x7F, 0xA0)) if c != 0x09} | {0x0A: "\\n"}


def clean(text: str) -> str:
    r"""``text`` with its control characters (but tab) written as escapes.

    >>> clean("a\x1b[2Jb\nc\td")
    'a\\x1b[2Jb\\nc\td'
    """
    return text.translate(_CONTROLS)


def write_text(out: IO[str], text: str) -> None:
    """Write, replacing what the stream's encoding cannot take (a lone surrogate from a
    message, or any non-ASCII character on an ASCII terminal) by its escape."""
    try:
        out.write(text)
    except UnicodeEncodeError:
        # The text layer encodes before writing anything, so nothing was written yet.
        encoding = getattr(out, "encoding", None) or "utf-8"
        out.write(text.encode(encoding, "backslashreplace").decode(encoding))


def stdin_notice(command: str, path: str, err: IO[str]) -> None:
    """Tell a person who runs a command on ``-`` at a terminal that it waits for them."""
    if path == "-" and is_terminal(sys.stdin):
        err.write(f"{PROG} {command}: reading messages from the terminal; end them with Ctrl-D\n")


def silence(stream: IO[str]) -> None:
    """Point a stream whose reader went away at /dev/null, so that Python's own flush
    at exit does not print "Exception ignored ... BrokenPipeError"."""
    try:
        fd = stream.fileno()
    except (AttributeError, OSError, ValueError):
        return  # not a file (a test's StringIO): nothing will flush it at exit
    devnull = os.open(os.devnull, os.O_WRONLY)
    try:
        os.dup2(devnull, fd)
    finally:
        os.close(devnull)


def unwritable(exc: OSError) -> bool:
    """Whether ``exc`` says that what the command writes cannot be written: the disk (or the
    user's quota) is full, or the file would grow beyond what the system allows. Reading gives
    none of these, and an input that cannot be read comes up as ``UnreadablePath`` anyway.

    >>> unwritable(OSError(errno.ENOSPC, "No space left on device")), unwritable(OSError(errno.ENOENT, "x"))
    (True, False)
    """
    return exc.errno in _FULL


_FULL = frozenset(
    number for name in ("ENOSPC", "EDQUOT", "EFBIG") if (number := getattr(errno, name, None)) is not None
)


# --- progress -----------------------------------------------------------------------------


class _Shared:
    """Standard output while a progress bar is drawn on the same terminal: each write clears the bar first."""

    def __init__(self, out: IO[str], bar: Progress) -> None:
        self._out, self._bar = out, bar
        self.encoding = getattr(out, "encoding", None)

    def write(self, text: str) -> int:
        self._bar.write(self._out, text)
        return len(text)

    def flush(self) -> None:
        self._out.flush()

    def isatty(self) -> bool:
        return is_terminal(self._out)


def shared(out: IO[str], bar: Progress) -> IO[str]:
    """``out``, or while ``bar`` is drawn, ``out`` written around the bar."""
    return cast("IO[str]", _Shared(out, bar)) if bar.shown else out
