"""The ``pgm-explore`` command (also ``python -m pgm_explore``).

Each subcommand is a pair of functions: ``_add_<name>(commands)`` declares its parser
and sets ``run=`` to ``_run_<name>(args, out, err) -> int``, which writes to the two
streams it is given and returns the exit status. :func:`build_parser` lists them; that
is all a new subcommand (``check``, ``table``, ``dialogue``) has to touch.

This module imports only argparse and the validation layer, so that the command starts
fast: no pandas, no Jupyter.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections.abc import Callable, Sequence
from json.encoder import encode_basestring_ascii
from typing import IO, Any, NamedTuple

from pgm_explore._sources import InputKind, UnreadablePath, iter_documents, report
from pgm_explore.validation import Report

__all__ = ["build_parser", "main"]

PROG = "pgm-explore"

EXIT_OK = 0
EXIT_NONCONFORMING = 1
EXIT_USAGE = 2
EXIT_INTERRUPTED = 130  # 128 + SIGINT, as shells report Ctrl-C
EXIT_BROKEN_PIPE = 141  # 128 + SIGPIPE, as `yes | head -1` reports it

Runner = Callable[[argparse.Namespace, IO[str], IO[str]], int]


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line ``argv`` (default ``sys.argv[1:]``) and return the exit status.

    Never raises ``SystemExit``: usage errors and ``--help`` come back as statuses 2
    and 0, so the function can be called from tests and notebooks.
    """
    parser = build_parser()
    try:
        args = parser.parse_args(argv)
    except SystemExit as exc:
        return exc.code if isinstance(exc.code, int) else EXIT_USAGE
    out, err = sys.stdout, sys.stderr
    run: Runner = args.run
    try:
        status = run(args, out, err)
        out.flush()  # inside the try: a closed pipe often shows only here
    except BrokenPipeError:
        _silence(out)
        return EXIT_BROKEN_PIPE
    except KeyboardInterrupt:
        return EXIT_INTERRUPTED
    return status


def _silence(stream: IO[str]) -> None:
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


class _Version(argparse.Action):
    """``--version``, looked up only when asked for (importlib.metadata is slow to import)."""

    def __init__(self, option_strings: Sequence[str], dest: str, **kwargs: Any) -> None:
        super().__init__(option_strings, dest, nargs=0, help="show the version and exit")

    def __call__(self, parser: argparse.ArgumentParser, *args: Any, **kwargs: Any) -> None:
        from importlib.metadata import PackageNotFoundError, version

        try:
            number = version("pgm-explore")
        except PackageNotFoundError:
            number = "unknown"
        sys.stdout.write(f"{PROG} {number}\n")
        parser.exit()


def build_parser() -> argparse.ArgumentParser:
    """The parser of the whole command, with every subcommand."""
    parser = argparse.ArgumentParser(
        prog=PROG,
        description="Explore and validate MPAI PGM-AUA V1.0 messages: PC Prompt, BKN-PRC, BKN-DAC and BKN-PAL.",
        epilog=f"Run '{PROG} COMMAND --help' for the options of a command.",
    )
    parser.add_argument("--version", action=_Version)
    commands = parser.add_subparsers(title="commands", metavar="COMMAND", dest="command", required=True)
    _add_validate(commands)
    return parser


# --- validate -----------------------------------------------------------------------------

_VALIDATE_EPILOG = """\
inputs:
  PATH.json          one message, or an array of messages (reported as PATH#0, PATH#1, ...)
  PATH.jsonl         JSON Lines, one message per line (reported as PATH:LINE, the file's
                     1-based line; blank lines are skipped but counted); also .ndjson
  -                  standard input, read as bytes and recognised by its content:
                     JSON Lines when the first non-blank line is a complete JSON value (or
                     is broken beyond repair) and more non-blank lines follow; otherwise
                     one JSON value, like a .json file. Reported as -, -:LINE or -#INDEX.
  any other PATH     recognised by its content, like standard input.
  --input-format json or jsonl overrides the choice.

  Every problem in the text (not UTF-8, not JSON, NaN, nesting deeper than 1,000
  levels, an empty file or array) is a finding on a message that does not conform;
  the next message is read as usual.

output:
  text (default)     a block per message: its source, type, mode and verdict, then each
                     finding with its JSON path and the spec clause; a summary at the end.
                     Coloured on a terminal unless NO_COLOR is set; --color and
                     --no-color decide instead.
  json               one JSON object per message and line, nothing else:
                     {"source": ..., "type": ..., "mode": ..., "conforms": ...,
                      "findings": [{"severity", "rule", "path", "message", "spec"
                                    (, "line", "column")}, ...]}

exit status:
  0    every message conforms
  1    at least one message does not conform
  2    usage error, or a PATH could not be read (the other PATHs are still validated)
  141  the output was closed early (e.g. piped into head)

examples:
  pgm-explore validate message.json
  pgm-explore validate --format json transcript.jsonl | jq 'select(.conforms | not)'
  cat messages.jsonl | pgm-explore validate -
"""


def _add_validate(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = commands.add_parser(
        "validate",
        help="check messages against the PGM-AUA V1.0 specification",
        description="Validate PGM-AUA V1.0 messages: tell each message's data type and mode from its\n"
        "Header and Mode, check it against the schema of its type, and list every finding with\n"
        "the spec clause behind it. A message conforms when it validates against its schema;\n"
        "warnings (consistency, empty values) never change that verdict.",
        epilog=_VALIDATE_EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument(
        "paths",
        nargs="+",
        metavar="PATH",
        help="a .json or .jsonl file, or - for standard input",
    )
    parser.add_argument(
        "--format",
        choices=("text", "json"),
        default="text",
        help="text for people (default), json for programs: one object per message and line",
    )
    parser.add_argument(
        "--color",
        dest="color",
        action=argparse.BooleanOptionalAction,
        default=None,
        help="colour the text output (default: only on a terminal and when NO_COLOR is not set)",
    )
    parser.add_argument(
        "--input-format",
        choices=("auto", "json", "jsonl"),
        default=None,
        help="read every PATH as one JSON value (json) or as JSON Lines (jsonl), whatever its "
        "extension (default: by extension, see below)",
    )
    parser.set_defaults(run=_run_validate)


class _Tally:
    __slots__ = ("errors", "messages", "nonconforming", "unreadable", "warnings")

    def __init__(self) -> None:
        self.messages = self.nonconforming = self.errors = self.warnings = self.unreadable = 0

    def add(self, rep: Report) -> None:
        self.messages += 1
        if not rep.conforms:
            self.nonconforming += 1
        for finding in rep.findings:
            if finding.severity == "error":
                self.errors += 1
            else:
                self.warnings += 1

    @property
    def status(self) -> int:
        if self.unreadable:
            return EXIT_USAGE
        return EXIT_NONCONFORMING if self.nonconforming else EXIT_OK

    def summary(self) -> str:
        """The last line of the text output.

        >>> t = _Tally(); t.messages, t.nonconforming, t.errors, t.warnings = 12, 2, 3, 1
        >>> t.summary()
        '12 messages: 10 conform, 2 do not conform (3 errors, 1 warning)'
        >>> t.messages, t.nonconforming, t.errors, t.warnings, t.unreadable = 1, 1, 1, 0, 1
        >>> t.summary()
        '1 message: 0 conform, 1 does not conform (1 error, 0 warnings); 1 path could not be read'
        """
        conforming = self.messages - self.nonconforming
        text = (
            f"{_count(self.messages, 'message')}: "
            f"{conforming} {'conforms' if conforming == 1 else 'conform'}, "
            f"{self.nonconforming} {'does not conform' if self.nonconforming == 1 else 'do not conform'} "
            f"({_count(self.errors, 'error')}, {_count(self.warnings, 'warning')})"
        )
        if self.unreadable:
            text += f"; {_count(self.unreadable, 'path')} could not be read"
        return text


def _count(n: int, noun: str) -> str:
    return f"{n} {noun}{'' if n == 1 else 's'}"


def _run_validate(args: argparse.Namespace, out: IO[str], err: IO[str]) -> int:
    tally = _Tally()
    kind: InputKind | None = args.input_format
    palette = _ANSI if _use_colour(args.color, out) else _PLAIN
    if args.format == "json":
        write = out.write

        def emit(rep: Report) -> None:
            write(_json_line(rep) + "\n")

    else:

        def emit(rep: Report) -> None:
            _write_text(out, _text_block(rep, palette) + "\n")

    add = tally.add
    for path in args.paths:
        if path == "-" and _is_terminal(sys.stdin):
            err.write(f"{PROG} validate: reading messages from the terminal; end them with Ctrl-D\n")
        try:
            for item in iter_documents(path, kind=kind):
                rep = report(item)
                add(rep)
                emit(rep)
        except UnreadablePath as exc:
            tally.unreadable += 1
            out.flush()  # keep stderr in order with what was already reported
            err.write(f"{PROG} validate: {exc}\n")
            err.flush()
    if args.format == "text":
        colour = palette.green if tally.status == EXIT_OK else palette.red
        _write_text(out, f"{colour}{tally.summary()}{palette.reset}\n")
    return tally.status


# --- json output --------------------------------------------------------------------------

# ASCII output (\uXXXX escapes): valid whatever the locale's encoding, and a lone
# surrogate from a message ("\ud800") comes out as the escape it came in as.
_encode = json.JSONEncoder(separators=(",", ":"), check_circular=False).encode


def _json_line(rep: Report) -> str:
    """``json.dumps(rep.to_dict())`` in compact form.

    Most messages in bulk conform without findings; their line is put together from
    strings, which is five times faster than encoding the dict (a test holds the two
    forms equal).

    >>> _json_line(Report("BKN-PAL", "RQ", True, (), "a.jsonl:3"))
    '{"source":"a.jsonl:3","type":"BKN-PAL","mode":"RQ","conforms":true,"findings":[]}'
    """
    if rep.findings:
        return _encode(rep.to_dict())
    return (
        f'{{"source":{_json_str(rep.source)},"type":{_json_str(rep.type)},"mode":{_json_str(rep.mode)},'
        f'"conforms":{"true" if rep.conforms else "false"},"findings":[]}}'
    )


def _json_str(value: str | None) -> str:
    return "null" if value is None else encode_basestring_ascii(value)


# --- text output --------------------------------------------------------------------------


class _Palette(NamedTuple):
    bold: str
    dim: str
    red: str
    green: str
    yellow: str
    cyan: str
    reset: str


_PLAIN = _Palette("", "", "", "", "", "", "")
_ANSI = _Palette("\x1b[1m", "\x1b[2m", "\x1b[31m", "\x1b[32m", "\x1b[33m", "\x1b[36m", "\x1b[0m")


def _use_colour(flag: bool | None, stream: IO[str]) -> bool:
    if flag is not None:  # --color / --no-color win over everything
        return flag
    if os.environ.get("NO_COLOR") or os.environ.get("TERM") == "dumb":  # https://no-color.org
        return False
    return _is_terminal(stream)


def _is_terminal(stream: IO[str] | None) -> bool:
    try:
        return bool(stream and stream.isatty())
    except (AttributeError, OSError, ValueError):  # no isatty(), or already closed
        return False


# Control characters from a message (quoted in findings, or in a file name) are shown
# as escapes: raw, they could move the cursor, retitle the terminal or break the layout.
_CONTROLS = {c: f"\\x{c:02x}" for c in (*range(0x20), *range(0x7F, 0xA0)) if c != 0x09} | {0x0A: "\\n"}


def _clean(text: str) -> str:
    return text.translate(_CONTROLS)


def _text_block(rep: Report, p: _Palette) -> str:
    """The lines of ``str(rep)``, with colour when the palette has any (a test holds the two equal)."""
    kind = " ".join(part for part in (rep.type or "unknown type", rep.mode) if part)
    verdict = f"{p.green}conforms{p.reset}" if rep.conforms else f"{p.red}{p.bold}does not conform{p.reset}"
    source = f"{p.bold}{_clean(rep.source)}{p.reset}: " if rep.source else ""
    lines = [f"{source}{_clean(kind)}: {verdict}"]
    for f in rep.findings:
        colour = p.red if f.severity == "error" else p.yellow
        where = f" (line {f.line}, column {f.column})" if f.line is not None else ""
        lines.append(
            f"  {colour}{f.severity}{p.reset} {p.cyan}[{f.rule}]{p.reset} "
            f"{_clean(f.json_path)}{where}: {_clean(f.message)}"
        )
        lines.append(f"      {p.dim}spec: {_clean(f.spec)}{p.reset}")
    return "\n".join(lines)


def _write_text(out: IO[str], text: str) -> None:
    """Write, replacing what the stream's encoding cannot take (a lone surrogate from a
    message, or any non-ASCII character on an ASCII terminal) by its escape."""
    try:
        out.write(text)
    except UnicodeEncodeError:
        # The text layer encodes before writing anything, so nothing was written yet.
        encoding = getattr(out, "encoding", None) or "utf-8"
        out.write(text.encode(encoding, "backslashreplace").decode(encoding))


if __name__ == "__main__":  # pragma: no cover - `python -m pgm_explore.cli`
    sys.exit(main())
