"""The ``pgm-explore`` command (also ``python -m pgm_explore``).

Each subcommand is a pair of functions: ``_add_<name>(commands)`` declares its parser
and sets ``run=`` to ``_run_<name>(args, out, err) -> int``, which writes to the two
streams it is given and returns the exit status. :func:`build_parser` lists them; that
is all a new subcommand has to touch.

- ``validate``: each message on its own (layer 3);
- ``check``: the messages as one transcript, streamed (layer 4);
- ``table``: a table of a transcript, in memory (layer 5, pandas);
- ``dialogue``: deliberate with the MCP reference partners and record the transcript
  (layer 6, the ``mcp`` extra);
- ``probe``: PGM-AUA conformance checks of someone else's partner server (the ``mcp`` extra);
- ``lab`` and ``app``: JupyterLab on the repository, and the Voilà app page
  (:mod:`pgm_explore._launch`, the ``notebook`` and ``app`` extras).

This module imports only argparse and the validation layer, so that the command starts
fast: the dialogue layer is imported by ``check``, ``table`` and ``dialogue`` when they
run, pandas only by ``table``, the MCP SDK only by ``dialogue`` and ``probe``; never Jupyter.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import sys
from collections.abc import Callable, Sequence
from itertools import groupby
from json.encoder import encode_basestring_ascii
from typing import IO, TYPE_CHECKING, Any, NamedTuple

from pgm_explore import _launch
from pgm_explore._bulk import iter_reported, iter_worked
from pgm_explore._files import atomic_write
from pgm_explore._sources import InputKind, UnreadablePath, iter_documents
from pgm_explore.dialogue import dialogue_key
from pgm_explore.errors import PgmExploreError
from pgm_explore.validation import InputProblem, Report, loads

if TYPE_CHECKING:
    import pandas as pd

    from pgm_explore.dialogue import TranscriptFinding

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
    _add_check(commands)
    _add_table(commands)
    _add_dialogue(commands)
    _add_probe(commands)
    _launch.add_lab(commands)
    _launch.add_app(commands)
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
  the next message is read as usual. A line longer than 64 MiB, or a JSON value read
  whole of more, is a too-large finding: the line is skipped, never held in memory.
  A report keeps at most 100 findings per message and says how many it left out.

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


def _add_reading_options(parser: argparse.ArgumentParser, paths_help: str, unit: str) -> None:
    """PATH..., --format and --color, which validate and check share."""
    parser.add_argument("paths", nargs="+", metavar="PATH", help=paths_help)
    parser.add_argument(
        "--format",
        choices=("text", "json"),
        default="text",
        help=f"text for people (default), json for programs: one object per {unit} and line",
    )
    parser.add_argument(
        "--color",
        dest="color",
        action=argparse.BooleanOptionalAction,
        default=None,
        help="colour the text output (default: only on a terminal and when NO_COLOR is not set)",
    )


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
    _add_reading_options(parser, "a .json or .jsonl file, or - for standard input", "message")
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
            for rep in iter_reported(path, kind=kind):
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


# --- check --------------------------------------------------------------------------------

_CHECK_EPILOG = """\
inputs:
  Each PATH is read as 'pgm-explore validate' reads it (PATH.json, PATH.jsonl, - for
  standard input, other extensions by their content), and all the PATHs together are
  ONE transcript, read in the order given: a Response in the second file answers a
  Request of the first. A finding names its message as PATH:LINE (JSON Lines, 1-based
  physical line), PATH#INDEX (JSON array, 0-based) or PATH.

  The transcript is checked as a stream: no message is kept, only what later
  messages can refer to (identifiers, dialogues, open Requests). Before anything is
  read, every PATH is looked at: if one is missing, a directory or not readable,
  nothing is checked (part of a transcript would give findings the whole has not);
  a PATH that fails later stops the check there.

  A large file (16 MB or more) is read by two processes on a machine with two
  cores: a helper reads, parses and validates its lines while this one applies the
  transcript rules in order. The findings are the same either way;
  PGM_EXPLORE_PARALLEL=0 in the environment keeps to one process.

checks:
  every message as 'pgm-explore validate' checks it, then against the messages before
  it (docs/rules.md): a Response answers an earlier Request of its dialogue, once,
  with its TurnIndex; QueryIDs and PCPromptIDs are not reused; BKN-PRC runs in a
  dialogue a PC Prompt opened; turns, times, commitments, feasibility and stances
  agree. Requests still unanswered at the end are reported last, at the Request.
  Errors are what the spec texts require (DECISIONS D16); all else is a warning.

output:
  text (default)     the findings in transcript order, under the message they are
                     about (its source, data type and DialogID), each with its severity,
                     rule, JSON path, message and spec clause; then a summary line:
                     "13 messages in 3 dialogues: 1 error, 2 warnings". A dialogue is a
                     DialogID with one data type, a PC Prompt counting with the BKN-PRC
                     exchanges it opens (DECISIONS D15). Coloured as by validate: on a
                     terminal unless NO_COLOR is set; --color and --no-color decide instead.
  json               one JSON object per finding and line, in transcript order, nothing
                     else (no output when nothing is found), keys in this order:
                     {"source": ..., "dialog": ..., "type": ..., "rule": ...,
                      "severity": ..., "message": ..., "spec": ..., "path": ...}
                     dialog and type are null when the message has none; path is
                     the JSON path of the finding in its message ($ for the whole).

exit status:
  0    no error-level finding (warnings allowed)
  1    at least one error-level finding
  2    usage error, or a PATH could not be read
  141  the output was closed early (e.g. piped into head)

examples:
  pgm-explore check session.jsonl
  pgm-explore check --format json monday.jsonl tuesday.jsonl | jq -r 'select(.severity == "error") | .source'
  zcat session.jsonl.gz | pgm-explore check -
"""


def _add_check(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = commands.add_parser(
        "check",
        help="check a transcript: every message, and the rules between messages",
        description="Check a PGM-AUA V1.0 transcript: the PC Prompts, Requests and Responses one Basic\n"
        "Knowledge exchanged, in the order they happened. Every message is validated, and the\n"
        "transcript rules check it against the messages before it: Requests paired with their\n"
        "Responses, turns, identifiers, dialogues, commitments and feasibility.",
        epilog=_CHECK_EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    _add_reading_options(
        parser, "a .json or .jsonl file, or - for standard input; all PATHs form one transcript, in order", "finding"
    )
    parser.set_defaults(run=_run_check)


class _CheckTally:
    __slots__ = ("dialogues", "errors", "messages", "stopped", "warnings")

    def __init__(self) -> None:
        self.messages = self.errors = self.warnings = 0
        # (DialogID, data type) of every dialogue seen: grows with dialogues, like the checker.
        self.dialogues: set[tuple[str, str]] = set()
        self.stopped = False

    def message(self, dialog: str | None, type_name: str | None) -> None:
        self.messages += 1
        if dialog is not None and type_name is not None:
            self.dialogues.add(dialogue_key(dialog, type_name))

    def add(self, findings: Sequence[TranscriptFinding]) -> None:
        for finding in findings:
            if finding.severity == "error":
                self.errors += 1
            else:
                self.warnings += 1

    @property
    def status(self) -> int:
        if self.stopped:
            return EXIT_USAGE
        return EXIT_NONCONFORMING if self.errors else EXIT_OK

    def summary(self) -> str:
        """The last line of the text output.

        >>> t = _CheckTally(); t.messages, t.errors, t.warnings = 105, 0, 2
        >>> t.dialogues = {("d-1", "BKN-PRC"), ("d-1", "BKN-DAC"), ("d-2", "BKN-PAL")}
        >>> t.summary()
        '105 messages in 3 dialogues: 0 errors, 2 warnings'
        >>> t.messages, t.errors, t.warnings, t.dialogues, t.stopped = 1, 1, 0, {("d", "BKN-PAL")}, True
        >>> t.summary()
        '1 message in 1 dialogue: 1 error, 0 warnings; stopped at a path that could not be read'
        """
        text = (
            f"{_count(self.messages, 'message')} in {_count(len(self.dialogues), 'dialogue')}: "
            f"{_count(self.errors, 'error')}, {_count(self.warnings, 'warning')}"
        )
        if self.stopped:
            text += "; stopped at a path that could not be read"
        return text


def _unreadable(paths: Sequence[str]) -> list[UnreadablePath]:
    """The PATHs that plainly cannot be read, each with the reason ``iter_documents`` gives.

    Nothing is opened that would be read later: thousands of log files would exceed the
    limit on open files, and a pipe (``<(zcat log.gz)``) can be read only once. Only a
    path that does not exist, is a directory or is not readable is tried here, which
    raises at once; should it open after all (created meanwhile), it is closed again.
    """
    found = []
    for path in dict.fromkeys(paths):  # a path given twice is reported once
        if path == "-" or (os.path.exists(path) and not os.path.isdir(path) and os.access(path, os.R_OK)):
            continue
        try:
            items = iter_documents(path)
        except UnreadablePath as exc:
            found.append(exc)
        else:
            next(items, None)  # a started generator closes its file on close()
            items.close()
    return found


def _refuse(command: str, problems: Sequence[UnreadablePath], paths: Sequence[str], err: IO[str]) -> int:
    for problem in problems:
        err.write(f"{PROG} {command}: {_clean(str(problem))}\n")
    if len(paths) > 1:
        err.write(f"{PROG} {command}: nothing was read: all PATHs form one transcript\n")
    return EXIT_USAGE


def _stdin_notice(command: str, path: str, err: IO[str]) -> None:
    if path == "-" and _is_terminal(sys.stdin):
        err.write(f"{PROG} {command}: reading messages from the terminal; end them with Ctrl-D\n")


def _run_check(args: argparse.Namespace, out: IO[str], err: IO[str]) -> int:
    # Imported here: validate does not need the dialogue layer, and starts faster without it.
    from pgm_explore.dialogue import TranscriptChecker
    from pgm_explore.dialogue._facts import FACTS

    problems = _unreadable(args.paths)
    if problems:
        return _refuse("check", problems, args.paths, err)
    palette = _ANSI if _use_colour(args.color, out) else _PLAIN
    if args.format == "json":
        write = out.write

        def emit(findings: Sequence[TranscriptFinding]) -> None:
            for finding in findings:
                write(_encode(finding.to_dict()) + "\n")

    else:
        last: list[tuple[str, str | None, str | None]] = []  # the message the previous block was about

        def emit(findings: Sequence[TranscriptFinding]) -> None:
            # The findings of one message come together; those of the end (unanswered
            # Requests) are about several messages, one block each. A block about the
            # message just shown (the last one, never answered) goes on under its name.
            for key, block in groupby(findings, key=lambda f: (f.source, f.dialog, f.type)):
                text = _check_block(list(block), palette)
                if last and last[0] == key:
                    text = text.partition("\n")[2]
                last[:] = [key]
                _write_text(out, text + "\n")

    tally = _CheckTally()
    # The loop of pgm_explore.dialogue.check_paths, with the message and dialogue counts
    # of the summary (a helper process reads and validates a large file on a second core).
    checker = TranscriptChecker()
    for path in args.paths:
        _stdin_notice("check", path, err)
        try:
            for source, facts in iter_worked(path, FACTS):
                found = checker.feed_facts(source, facts)
                tally.message(facts.dialog, facts.type)
                if found:
                    tally.add(found)
                    emit(found)
                    # Findings are rare next to messages: flushing each lets a reader of
                    # a live log (tail -f log | pgm-explore check -) see them at once.
                    out.flush()
        except UnreadablePath as exc:
            # The rest of the transcript is missing: what only its end could show
            # (unanswered Requests) is not reported.
            tally.stopped = True
            out.flush()  # keep stderr in order with what was already reported
            err.write(f"{PROG} check: {_clean(str(exc))}; checking stopped there\n")
            err.flush()
            break
    else:
        found = checker.finish()
        tally.add(found)
        emit(found)
    if args.format == "text":
        colour = palette.red if tally.errors or tally.stopped else palette.yellow if tally.warnings else palette.green
        _write_text(out, f"{colour}{tally.summary()}{palette.reset}\n")
    return tally.status


def _check_block(findings: Sequence[TranscriptFinding], p: _Palette) -> str:
    """The findings of one message: a line naming it, then each finding as validate shows them.

    >>> from pgm_explore.dialogue import TranscriptFinding
    >>> from pgm_explore.validation import Finding
    >>> f = Finding.of("turn-gap", ("TurnIndex",), "TurnIndex 3 follows 0.", "Table 1, TurnIndex")
    >>> print(_check_block([TranscriptFinding("t.jsonl:4", "dlg-1", "BKN-PAL", f)], _PLAIN))
    t.jsonl:4: BKN-PAL, dialogue dlg-1
      warning [turn-gap] $.TurnIndex: TurnIndex 3 follows 0.
          spec: Table 1, TurnIndex
    """
    first = findings[0]
    about = ", ".join(part for part in (first.type, first.dialog and f"dialogue {first.dialog}") if part)
    lines = [f"{p.bold}{_clean(first.source)}{p.reset}" + (f": {_clean(about)}" if about else "")]
    for f in findings:
        colour = p.red if f.severity == "error" else p.yellow
        where = f" (line {f.finding.line}, column {f.finding.column})" if f.finding.line is not None else ""
        lines.append(
            f"  {colour}{f.severity}{p.reset} {p.cyan}[{f.rule}]{p.reset} {_clean(f.path)}{where}: {_clean(f.message)}"
        )
        lines.append(f"      {p.dim}spec: {_clean(f.spec)}{p.reset}")
    return "\n".join(lines)


# --- table --------------------------------------------------------------------------------

# The names of pgm_explore.analysis.TABLES, in the order of docs/tables.md. Spelled out
# here so that the parser (and --help) does not import pandas; a test keeps them equal.
_CHUNK = 1 << 16  # characters per write of a table

TABLE_NAMES = ("messages", "exchanges", "feasibility", "pastatus", "outcomes", "commitments", "findings")

_TABLE_EPILOG = """\
tables (docs/tables.md describes every column, its dtype and meaning):
  messages       one row per message, in transcript order
  exchanges      one row per Request, with its Response (latency, Outcome)
  feasibility    one row per Process Action of a BKN-DAC feasibility Request: PAStatus,
                 Reason, Overall, and the heuristic's PredictedPAStatus
  pastatus       two columns, PAStatus and count: the ten PA Status codes, always ten rows
  outcomes       one row per data type and Kind: how its Requests were answered
  commitments    one row per BKN-DAC commitment event (submitted, released, retained, ...)
  findings       one row per finding, as 'pgm-explore check' reports them

inputs:
  As for 'pgm-explore check': all PATHs form one transcript, read in order; - is
  standard input. The transcript is held in memory. Findings never change the exit
  status: 'pgm-explore check' is the command for that.

output:
  csv (default)      a header row with the column names in the documented order, then
                     one line per row, no index column; a missing value is an empty field.
                     A text cell that a spreadsheet would run as a formula (it starts with
                     = + - @, a tab or a carriage return: messages may carry such text, e.g.
                     a QueryID =HYPERLINK(...)) gets a leading ', as the OWASP guidance on
                     CSV injection says; --no-csv-escape writes every cell as it is
  json               ONE JSON array of records, one record (an object with the columns
                     as keys, in the same order) per line; a missing value (NA, NaN) is
                     null; an empty table is []

exit status:
  0    the table was written
  2    usage error, or a PATH could not be read (nothing is written)
  141  the output was closed early (e.g. piped into head)

examples:
  pgm-explore table feasibility session.jsonl
  pgm-explore table exchanges --format json session.jsonl | jq '.[] | select(.response == null)'
  pgm-explore table pastatus monday.jsonl tuesday.jsonl > pa-status.csv
"""


def _add_table(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = commands.add_parser(
        "table",
        help="print a table of a transcript (messages, exchanges, feasibility, ...) as CSV or JSON",
        description="Print one table of a PGM-AUA V1.0 transcript, as pgm_explore.analysis builds it:\n"
        "fixed columns in a fixed order, one row per message, exchange, Process Action, ...",
        epilog=_TABLE_EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("what", choices=TABLE_NAMES, metavar="WHAT", help=f"the table: {', '.join(TABLE_NAMES)}")
    parser.add_argument(
        "paths",
        nargs="+",
        metavar="PATH",
        help="a .json or .jsonl file, or - for standard input; all PATHs form one transcript, in order",
    )
    parser.add_argument(
        "--format",
        choices=("csv", "json"),
        default="csv",
        help="csv (default): header row, no index; json: one array of records, null where a value is missing",
    )
    parser.add_argument(
        "--no-csv-escape",
        dest="csv_escape",
        action="store_false",
        help="write text cells as they are, even those a spreadsheet would run as a formula "
        "(default: a cell starting with = + - @, a tab or a carriage return gets a leading ')",
    )
    parser.set_defaults(run=_run_table)


def _run_table(args: argparse.Namespace, out: IO[str], err: IO[str]) -> int:
    problems = _unreadable(args.paths)
    if problems:
        return _refuse("table", problems, args.paths, err)
    for path in args.paths:
        _stdin_notice("table", path, err)
    # Imported here: pandas takes longer to import than validating thousands of messages.
    from pgm_explore import analysis
    from pgm_explore.dialogue import Transcript

    try:
        transcript = Transcript.load(*args.paths)
    except UnreadablePath as exc:
        return _refuse("table", [exc], args.paths, err)
    frame = analysis.TABLES[args.what](transcript)
    if args.format == "csv":
        text = (_formulas_defused(frame) if args.csv_escape else frame).to_csv(index=False, lineterminator="\n")
    else:
        text = _json_records(frame)
    # In pieces: one large write to a pipe whose reader left (| head) can end without an
    # error, where validate and check end with status 141; pieces end the same way.
    for start in range(0, len(text), _CHUNK):
        _write_text(out, text[start : start + _CHUNK])
    return EXIT_OK


_FORMULA_START = ("=", "+", "-", "@", "\t", "\r")
"""What makes a spreadsheet take a cell for a formula (OWASP, CSV Injection)."""


def _formulas_defused(frame: pd.DataFrame) -> pd.DataFrame:
    """``frame`` with every text cell that a spreadsheet would run as a formula (it starts with
    ``=``, ``+``, ``-``, ``@``, a tab or a carriage return) prefixed with a single quote, as the
    OWASP guidance on CSV injection says: the cells come from messages, which anyone may write.
    Numbers stay numbers (``-1`` is no formula).

    >>> import pandas as pd
    >>> frame = pd.DataFrame({"a": pd.Series(['=HYPERLINK("http://x")', "ok", None], dtype="string"), "n": [-1, 2, 3]})
    >>> print(_formulas_defused(frame).to_csv(index=False), end="")
    a,n
    "'=HYPERLINK(""http://x"")",-1
    ok,2
    ,3
    """

    def defused(value: Any) -> Any:
        return "'" + value if isinstance(value, str) and value.startswith(_FORMULA_START) else value

    out = frame.copy()
    for name in out.columns:
        if out[name].dtype == "string" or out[name].dtype == object:
            out[name] = out[name].map(defused).astype(out[name].dtype)
    return out


def _json_records(frame: pd.DataFrame) -> str:
    """The table as one JSON array, a record per line, ``null`` for NA and NaN.

    Not ``DataFrame.to_json``: it writes ``/`` as ``\\/`` and rounds floats to ten digits.

    >>> import pandas as pd
    >>> frame = pd.DataFrame({"a": pd.Series(["x", None], dtype="string"), "b": [1.5, float("nan")]})
    >>> print(_json_records(frame), end="")
    [
    {"a":"x","b":1.5},
    {"a":null,"b":null}
    ]
    >>> _json_records(frame.iloc[:0])
    '[]\\n'
    """
    import pandas as pd

    columns = [str(name) for name in frame.columns]

    def plain(value: Any) -> Any:
        if hasattr(value, "item"):  # a NumPy scalar
            value = value.item()
        if value is None or value is pd.NA or (isinstance(value, float) and not math.isfinite(value)):
            return None
        return value

    records = [
        _encode(dict(zip(columns, map(plain, row), strict=True))) for row in frame.itertuples(index=False, name=None)
    ]
    return "[\n" + ",\n".join(records) + "\n]\n" if records else "[]\n"


# --- dialogue -----------------------------------------------------------------------------

_DIALOGUE_EPILOG = """\
what it does:
  Starts the three reference partners (Prompt Creation, Domain Access, Personality
  Alignment), opens a dialogue (Basic Knowledge reads the PC Prompt), sends the
  Requests of the demo or of a script, records every message as JSON Lines in PATH,
  then checks the recorded transcript as 'pgm-explore check' would (the findings and a
  summary line: "recorded 18 messages to PATH: 0 errors, 0 warnings").

transports (of the reference partners):
  inprocess (default)  the servers run in this process (no subprocess, no socket)
  stdio                one 'python -m pgm_explore.mcp.serve' subprocess per partner
  http                 the same subprocesses with streamable HTTP on 127.0.0.1

partners (--partner ROLE=URL|CMD, ROLE one of prc, dac, pal): someone else's server
  instead of the reference one, by streamable-HTTP URL (http:// or https://) or by a
  command line (split as a shell would split it, not run through a shell) started as
  a stdio server. Every Response is validated as it arrives; a tool error, a JSON-RPC
  error or a result that is not a Response is reported on stderr as a finding of its
  message ("message 7: [partner-refused] ...") and the transcript up to there is kept.

script (--script FILE): a JSON object {"steps": [STEP, ...]} with an optional
  "dialog_id" (the DialogID of the PC Prompt; default a fresh one) and "description";
  or just the list of steps. Each STEP is an object with a "partner" and the keys of
  that partner (anything else is an error, reported with the step's index):
    {"partner": "prc", "kind": KIND, "question": TEXT, "entity_ids": [ID, ...]}
        a BKN-PRC Request; KIND one of referents, intent, goal_constraints, ...
    {"partner": "dac", "kind": KIND, "question": TEXT, "entity_ids": [ID, ...],
     "fields": {"Terms": [...], "Space": {...}}}
        a BKN-DAC Knowledge Request (affordances, constraints, ...)
    {"partner": "dac", "kind": "feasibility", "question": TEXT,
     "statements": ["MM-Move ...", "Transact ...", ...]}
        a feasibility check: the statements become the ProcessActions, in order
    {"partner": "dac", "kind": "commitment", "question": TEXT,
     "retain": {"cm-id": STATEMENT, ...}, "release": ["cm-id", ...]}
        commitments retained and/or released (at least one of the two)
    {"partner": "pal", "question": TEXT, "constraints": {"Role": ..., "Locale": ...}}
        a BKN-PAL Request
  "question" is optional except for pal. The dialogue is opened before the first step.
  Example: data/dialogue-scripts/market.json.

exit status:
  0    the transcript was recorded and has no error-level finding (warnings allowed)
  1    the transcript was recorded and has at least one error-level finding, or a
       partner gave no Response to a Request (a tool error, a JSON-RPC error, an
       unreadable result: the transcript up to there is recorded)
  2    usage error, a script that cannot be read or is not valid, an --out PATH that
       cannot be written, partners that could not be started or reached, or the mcp
       extra is not installed (pip install "pgm-explore[mcp]")

examples:
  pgm-explore dialogue --demo --out demo.jsonl
  pgm-explore dialogue --script data/dialogue-scripts/market.json --out market.jsonl --transport http
  pgm-explore dialogue --demo --out demo.jsonl --partner dac=http://127.0.0.1:8000/mcp
  pgm-explore table feasibility demo.jsonl
"""

_PARTNER_TYPES = {"prc": "BKN-PRC", "dac": "BKN-DAC", "pal": "BKN-PAL"}
_STEP_KEYS = {
    "prc": {"partner", "kind", "question", "entity_ids"},
    "dac": {"partner", "kind", "question", "entity_ids", "fields", "statements", "retain", "release"},
    "pal": {"partner", "question", "constraints"},
}
_DAC_FIELDS = ("Terms", "Space")
_SCRIPT_KEYS = {"steps", "dialog_id", "description"}
_SCRIPT_BYTES = 16 * 1024 * 1024  # a script is a few kilobytes: this only bounds what is read


class ScriptError(PgmExploreError, ValueError):
    """A dialogue script that cannot be run; the message names the step."""


class _Step(NamedTuple):
    index: int
    partner: str
    kind: str | None
    question: str | None
    fields: dict[str, Any]
    """Request fields other than Kind and Question, as the client passes them (None left out)."""


class _Script(NamedTuple):
    dialog_id: str | None
    steps: list[_Step]


def _load_script(path: str) -> _Script:
    """Read and validate a dialogue script (see the epilog of ``dialogue``); raises ScriptError."""
    try:
        with open(path, "rb") as handle:
            data = handle.read(_SCRIPT_BYTES + 1)
        if len(data) > _SCRIPT_BYTES:
            raise ScriptError(f"the script {path} is larger than {_SCRIPT_BYTES:,} bytes: no script needs that much")
        # The reader of messages: the same findings for bad bytes, NaN, deep nesting and a lone
        # surrogate ("\ud800"), which would end up in a Request that no file can hold.
        document = loads(data)
    except OSError as exc:
        raise ScriptError(f"cannot read the script {path}: {exc.strerror or exc}") from exc
    except InputProblem as problem:
        finding = problem.finding
        where = f" (line {finding.line}, column {finding.column})" if finding.line is not None else ""
        raise ScriptError(f"the script {path} is not JSON{where}: {finding.message}") from None
    dialog_id = None
    if isinstance(document, dict):
        unknown = sorted(set(document) - _SCRIPT_KEYS)
        if unknown:
            raise ScriptError(f"unknown key(s) {', '.join(map(repr, unknown))}: a script has {sorted(_SCRIPT_KEYS)}")
        dialog_id = document.get("dialog_id")
        if dialog_id is not None and (not isinstance(dialog_id, str) or not dialog_id):
            raise ScriptError("dialog_id must be a non-empty string")
        steps = document.get("steps")
    else:
        steps = document
    if not isinstance(steps, list) or not steps:
        raise ScriptError('a script is a non-empty list of steps, or an object with one under "steps"')
    return _Script(dialog_id, [_parse_step(index, step) for index, step in enumerate(steps)])


def _kinds(type_name: str) -> list[str]:
    from pgm_explore.spec import data_type

    return list(data_type(type_name).schema["properties"]["Kind"]["enum"])


def _parse_step(index: int, step: Any) -> _Step:
    def fail(message: str) -> ScriptError:
        return ScriptError(f"step {index}: {message}")

    if not isinstance(step, dict):
        raise fail(f"a step is an object, not {type(step).__name__}")
    partner = step.get("partner")
    if partner not in _STEP_KEYS:
        raise fail(f"partner must be one of prc, dac, pal (got {partner!r})")
    unknown = sorted(set(step) - _STEP_KEYS[partner])
    if unknown:
        raise fail(f"unknown key(s) {', '.join(map(repr, unknown))} for partner {partner}")

    def strings(key: str) -> list[str] | None:
        value = step.get(key)
        if value is None:
            return None
        if not isinstance(value, list) or not value or not all(isinstance(v, str) and v for v in value):
            raise fail(f"{key} must be a non-empty list of non-empty strings")
        return value

    def mapping(key: str) -> dict[str, Any] | None:
        value = step.get(key)
        if value is None:
            return None
        if not isinstance(value, dict) or not value:
            raise fail(f"{key} must be a non-empty object")
        return value

    question = step.get("question")
    if question is not None and (not isinstance(question, str) or not question):
        raise fail("question must be a non-empty string")
    if partner == "pal":
        if question is None:
            raise fail("a pal step needs a question")
        return _Step(index, partner, None, question, {"Constraints": mapping("constraints")})
    kind = step.get("kind")
    kinds = _kinds(_PARTNER_TYPES[partner])
    if kind not in kinds:
        raise fail(f"kind must be one of {', '.join(kinds)} (got {kind!r})")
    fields: dict[str, Any] = {"EntityIDs": strings("entity_ids")}
    if partner == "prc":
        return _Step(index, partner, kind, question, fields)
    extra = mapping("fields") or {}
    if not set(extra) <= set(_DAC_FIELDS):
        raise fail(f"fields may hold {' and '.join(_DAC_FIELDS)} only (the other keys have keys of their own)")
    fields.update(extra)
    statements = strings("statements")
    retain = mapping("retain")
    release = strings("release")
    if (statements is not None) != (kind == "feasibility"):
        raise fail("statements are what a feasibility step checks: a feasibility step needs them, others take none")
    if (retain is not None or release is not None) != (kind == "commitment"):
        raise fail("a commitment step needs retain or release (or both), and only a commitment step takes them")
    if retain is not None and not all(isinstance(v, str) and v for v in retain.values()):
        raise fail("retain maps each CommitmentID to its Statement, a non-empty string")
    if statements is not None:
        fields["ProcessActions"] = [{"Step": i, "Statement": s} for i, s in enumerate(statements)]
    if retain is not None:
        fields["Commitments"] = [{"CommitmentID": c, "Statement": s} for c, s in retain.items()]
    fields["ReleasedCommitmentIDs"] = release
    return _Step(index, partner, kind, question, fields)


def _add_dialogue(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = commands.add_parser(
        "dialogue",
        help="deliberate with the MCP reference partners and record the transcript (needs the mcp extra)",
        description="Run a deliberation of Basic Knowledge with the three MCP reference partners\n"
        "(docs/mcp.md): the built-in demo or a script of your own. Every message is recorded as a\n"
        "transcript in PATH, which is then checked as 'pgm-explore check' checks it.",
        epilog=_DIALOGUE_EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    what = parser.add_mutually_exclusive_group(required=True)
    what.add_argument(
        "--demo",
        action="store_true",
        help="the built-in deliberation: all three partners, two feasibility checks, a commitment",
    )
    what.add_argument("--script", metavar="FILE", help="a JSON script of Requests (format below)")
    parser.add_argument(
        "--out",
        metavar="PATH",
        required=True,
        help="where to write the transcript (JSON Lines): whole or not at all (a temporary file in "
        "the same folder, renamed into place); a link at PATH is replaced, not followed",
    )
    parser.add_argument(
        "--transport",
        choices=("inprocess", "stdio", "http"),
        default="inprocess",
        help="how to reach the reference partners (default: inprocess)",
    )
    parser.add_argument(
        "--partner",
        action="append",
        default=[],
        metavar="ROLE=URL|CMD",
        help="someone else's server for prc, dac or pal instead of the reference partner: a streamable-HTTP "
        "URL, or a command line started as a stdio server (repeat for several)",
    )
    parser.add_argument(
        "--color",
        dest="color",
        action=argparse.BooleanOptionalAction,
        default=None,
        help="colour the findings (default: only on a terminal and when NO_COLOR is not set)",
    )
    parser.set_defaults(run=_run_dialogue)


def _unwritable(path: str) -> str | None:
    """Why ``path`` cannot be written, or None; nothing is created."""
    if os.path.isdir(path):
        return "is a directory"
    parent = os.path.dirname(os.path.abspath(path))
    if not os.path.isdir(parent):
        return "its folder does not exist"
    if os.path.exists(path):
        return None if os.access(path, os.W_OK) else "is not writable"
    return None if os.access(parent, os.W_OK) else "its folder is not writable"


def _run_dialogue(args: argparse.Namespace, out: IO[str], err: IO[str]) -> int:
    command = f"{PROG} dialogue"
    script = None
    if args.script is not None:
        try:
            script = _load_script(args.script)
        except ScriptError as exc:
            err.write(f"{command}: {_clean(str(exc))}\n")
            return EXIT_USAGE
    why = _unwritable(args.out)
    if why is not None:
        err.write(f"{command}: cannot write --out {_clean(args.out)}: {why}\n")
        return EXIT_USAGE
    try:
        # Imported here: the MCP SDK is an extra, and takes about a second to import.
        import pgm_explore.mcp  # noqa: F401 - says at once when the SDK is missing
        from pgm_explore.mcp.connect import PartnerArgumentError
        from pgm_explore.mcp.deliberate import deliberate
    except ImportError as exc:
        err.write(f'{command}: needs the mcp extra: pip install "pgm-explore[mcp]" ({exc})\n')
        return EXIT_USAGE
    try:
        partners = _partners(args.partner)
    except PartnerArgumentError as exc:
        err.write(f"{command}: {_clean(str(exc))}\n")
        return EXIT_USAGE
    steps = None if script is None else [(s.index, lambda bk, s=s: _send_step(bk, s)) for s in script.steps]
    outcome = deliberate(
        transport=args.transport, partners=partners, steps=steps, dialog_id=script.dialog_id if script else None
    )
    if outcome.unreachable is not None:
        err.write(f"{command}: the partners could not be reached: {_clean(outcome.unreachable)}\n")
        return EXIT_USAGE
    try:
        # Whole or not at all, and into a file of its own: a link planted at --out is replaced,
        # never followed (pgm_explore._files).
        atomic_write(args.out, "".join(map(_recorded_line, outcome.transcript)), durable=True, make_parents=False)
    except OSError as exc:
        err.write(f"{command}: cannot write --out {_clean(args.out)}: {exc.strerror or exc}\n")
        return EXIT_USAGE
    for problem in outcome.problems:
        err.write(f"{command}: {_clean(problem)}\n")
    status = _report_recorded(args, len(outcome.transcript), out)
    return EXIT_NONCONFORMING if outcome.failed else status


def _recorded_line(message: Any) -> str:
    r"""One message of a recorded transcript as a line of JSON: UTF-8 as it is, or, should a
    partner ever send a string UTF-8 cannot encode (a lone surrogate), with ``\u`` escapes:
    the message is kept, and the check of the recording reports it.

    >>> _recorded_line({"Question": "Où?"}), _recorded_line({"Question": chr(0xD800)})
    ('{"Question": "Où?"}\n', '{"Question": "\\ud800"}\n')
    """
    line = json.dumps(message, ensure_ascii=False)
    try:
        line.encode("utf-8")
    except UnicodeEncodeError:
        line = json.dumps(message)
    return line + "\n"


def _partners(values: list[str]) -> dict[str, Any]:
    """``--partner ROLE=URL|COMMAND`` values as {role: endpoint}, one server per role
    (``PartnerArgumentError`` otherwise). Needs the mcp extra, as its callers do."""
    from pgm_explore.mcp.connect import PartnerArgumentError, parse_partner

    partners: dict[str, Any] = {}
    for value in values:
        role, endpoint = parse_partner(value)
        if role in partners:
            raise PartnerArgumentError(f"--partner {role}= given twice: one server per role")
        partners[role] = endpoint
    return partners


async def _send_step(bk: Any, step: _Step) -> None:
    """One script step as a Request, through the client's helpers."""
    fields = {key: value for key, value in step.fields.items() if value is not None}
    if step.partner == "prc":
        await bk.ask_prc(step.kind, step.question, fields.get("EntityIDs"))
    elif step.partner == "dac":
        await bk.ask_dac(step.kind, step.question, **fields)
    else:
        await bk.ask_pal(step.question, fields.get("Constraints"))


def _report_recorded(args: argparse.Namespace, count: int, out: IO[str]) -> int:
    """Check the recorded transcript; print its findings and the summary; EXIT_NONCONFORMING on an error."""
    from pgm_explore.dialogue import check_paths

    palette = _ANSI if _use_colour(args.color, out) else _PLAIN
    findings = list(check_paths([args.out]))
    for _key, block in groupby(findings, key=lambda f: (f.source, f.dialog, f.type)):
        _write_text(out, _check_block(list(block), palette) + "\n")
    errors = sum(f.severity == "error" for f in findings)
    warnings = len(findings) - errors
    colour = palette.red if errors else palette.yellow if warnings else palette.green
    summary = (
        f"recorded {_count(count, 'message')} to {args.out}: {_count(errors, 'error')}, {_count(warnings, 'warning')}"
    )
    _write_text(out, f"{colour}{_clean(summary)}{palette.reset}\n")
    return EXIT_NONCONFORMING if errors else EXIT_OK


# --- probe --------------------------------------------------------------------------------

_PROBE_EPILOG = """\
partners:
  --partner ROLE=TARGET, ROLE one of prc (Prompt Creation), dac (Domain Access),
  pal (Personality Alignment); at least one, each role at most once. A TARGET
  starting with http:// or https:// is a streamable-HTTP URL; anything else is a
  command line, split as a shell would split it but not run through a shell, and
  started as a stdio server.

checks (docs/probe.md): the MCP handshake (current and older protocol), the tool and
  its schemas, the PC Prompt resource (prc), structured results, conforming
  Responses, echoed identities, Outcome, commitments and feasibility (dac), bad
  Requests, two interleaved dialogues, cancellation.

output (--format):
  text   per partner, one line per check; a failure with its spec clause and the
         messages exchanged
  json   one JSON object per line: {"partner", "check", "status", "message", "spec"},
         status pass, fail or skip
  junit  JUnit XML: a testsuite per partner, a testcase per check

exit status:
  0    no check failed
  1    at least one check failed
  2    usage error, a partner that cannot be reached (with the reason), or the mcp
       extra is not installed (pip install "pgm-explore[mcp]")

examples:
  pgm-explore probe --partner dac=http://127.0.0.1:8000/mcp
  pgm-explore probe --partner "dac=python -m my_domain_access" --format junit > probe.xml
"""


def _add_probe(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = commands.add_parser(
        "probe",
        help="check someone else's partner server against PGM-AUA over MCP (needs the mcp extra)",
        description="Drive a battery of PGM-AUA scenarios against each partner server given and report,\n"
        "per check, pass, fail or skip with the evidence (docs/probe.md).",
        epilog=_PROBE_EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument(
        "--partner",
        action="append",
        required=True,
        metavar="ROLE=URL|CMD",
        help="a partner to probe: prc, dac or pal, = a URL or a command (repeat for several)",
    )
    parser.add_argument("--format", choices=("text", "json", "junit"), default="text", help="output (default: text)")
    parser.add_argument(
        "--color",
        dest="color",
        action=argparse.BooleanOptionalAction,
        default=None,
        help="colour the text output (default: only on a terminal and when NO_COLOR is not set)",
    )
    parser.set_defaults(run=_run_probe)


def _run_probe(args: argparse.Namespace, out: IO[str], err: IO[str]) -> int:
    command = f"{PROG} probe"
    try:
        # Imported here: the MCP SDK is an extra, and takes about a second to import.
        import pgm_explore.mcp  # noqa: F401 - says at once when the SDK is missing
        from pgm_explore.mcp.connect import PartnerArgumentError
        from pgm_explore.mcp.probe import Unreachable, probe_sync
        from pgm_explore.mcp.report import as_json_lines, as_junit, as_text
    except ImportError as exc:
        err.write(f'{command}: needs the mcp extra: pip install "pgm-explore[mcp]" ({exc})\n')
        return EXIT_USAGE
    try:
        partners = _partners(args.partner)
    except PartnerArgumentError as exc:
        err.write(f"{command}: {_clean(str(exc))}\n")
        return EXIT_USAGE
    try:
        checks = probe_sync(partners)
    except Unreachable as exc:
        err.write(f"{command}: cannot reach the {_clean(str(exc))}\n")
        return EXIT_USAGE
    if args.format == "json":
        _write_text(out, as_json_lines(checks))
    elif args.format == "junit":
        _write_text(out, as_junit(checks))
    else:
        palette = _ANSI if _use_colour(args.color, out) else _PLAIN
        colours = {"pass": palette.green, "fail": palette.red, "skip": palette.yellow}
        colours.update(bold=palette.bold, reset=palette.reset)
        _write_text(out, as_text(checks, _clean, colours))
    return EXIT_NONCONFORMING if any(c.status == "fail" for c in checks) else EXIT_OK


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
