"""``pgm-explore validate``: each message on its own, against its schema (layer 3).

The messages are read and validated through :func:`pgm_explore.io.iter_batched`, which cuts
a JSON Lines file into partitions (worked on in this process, or by Dask workers: see
``--workers``). The worker of a partition also writes its messages' output and counts them
for the summary (:class:`Writer`), with each source's line number left out: only the client
knows how many lines the partitions before it hold, so it puts the numbers in
(:meth:`Lines.text`) and writes the text. The client's work per message is then a number to
format, which lets two workers go about twice as fast as one process. Everything read here
message by message (standard input, a JSON file, the first line, a line the worker left for
the client to word) is reported and written one at a time, by the same functions.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable, Iterator
from functools import partial
from typing import IO, NamedTuple

from pgm_explore._engine import Engine, EngineUnavailable, engine_for
from pgm_explore._progress import progress
from pgm_explore.cli._options import Command, add_engine_options, add_progress_option, add_reading_options
from pgm_explore.cli._output import (
    EXIT_NONCONFORMING,
    EXIT_OK,
    EXIT_USAGE,
    PROG,
    Palette,
    Severities,
    clean,
    count,
    encode,
    input_size,
    json_str,
    palette_for,
    shared,
    stdin_notice,
    write_text,
)
from pgm_explore.io import _VALIDATE_BYTES as VALIDATE_BYTES
from pgm_explore.io import (
    Batch,
    Growth,
    Held,
    InputKind,
    Item,
    Pushed,
    UnreadablePath,
    iter_batched,
    report_fields,
)
from pgm_explore.validation import Finding, Report, ReportFields, Way, clean_fields
from pgm_explore.validation._schema import EXPLAINER

__all__ = ["COMMAND", "PRELOAD", "Lines", "Writer", "json_line", "run_on", "text_block"]

PRELOAD = (__name__, EXPLAINER)
"""What the forkserver of the command's local workers imports before it forks them: this module
(the work's functions) and python-jsonschema, which explains the messages that do not conform and
which a big input always holds: imported once, not by each worker, and without building
``rfc3987_syntax``'s grammars (0.8 s) for formats that no PGM-AUA schema has (see
:mod:`pgm_explore.validation._preload`)."""

LARGEST = 64 * 2**20
"""The largest partition of a file on workers (see :func:`pgm_explore.io._partitions.partitions`):
a partition costs the client and its worker some milliseconds whatever its size, and what comes
back of one is the output of its messages, about a tenth of what they were for messages without
findings. Partitions of up to 64 MiB while much of the file is left, 16 MiB at its end, against
16 MiB throughout: 0.3 µs of CPU a message less (docs/performance.md). They grow only while the
output of those done so far is no larger than their input (:class:`~pgm_explore.io.Growth`):
a worker holds a partition's output until it sends it."""


def output_size(lines: Lines) -> int:
    """About how many characters ``lines`` writes (its numbers not counted): what a worker held of it."""
    return sum(map(len, lines.parts))


EPILOG = """\
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

where the work runs:
  A big JSON Lines file is cut into partitions of whole lines (1 to 64 MiB, smaller
  towards its end), read, decoded, validated and reported by Dask workers; the
  reports come back in order. By default, inputs of 512 MiB or more are validated
  by one local worker process per core (starting them and their first work takes
  seconds), smaller ones, standard input and pipes in this process. --workers N
  says how many local workers (0: this process only); --scheduler ADDRESS sends the
  work to an existing Dask cluster (dask.distributed: 'dask scheduler' and 'dask
  worker'), whose workers must see the same files (a relative PATH is read from
  this command's folder, and named as given). PGM_EXPLORE_PARALLEL=0 in the
  environment means --workers 0. The reports are the same bytes wherever the work
  runs.

output:
  text (default)     a block per message: its source, type, mode and verdict, then each
                     finding with its JSON path and the spec clause; a summary at the end.
                     Coloured on a terminal unless NO_COLOR is set; --color and
                     --no-color decide instead.
  json               one JSON object per message and line, nothing else:
                     {"source": ..., "type": ..., "mode": ..., "conforms": ...,
                      "findings": [{"severity", "rule", "path", "message", "spec"
                                    (, "line", "column")}, ...]}

progress:
  On a terminal, work that takes more than two seconds shows a progress bar on
  stderr (bytes done, rate, time left); never on stdout, never when stderr is not
  a terminal. --no-progress hides it.

exit status:
  0    every message conforms
  1    at least one message does not conform
  2    usage error, a PATH that could not be read (the other PATHs are still
       validated), the output that could not be written (a full disk), workers
       that died under the work, or a cluster with no worker
  130  interrupted (Ctrl-C)
  141  the output was closed early (e.g. piped into head)
  143  stopped by SIGTERM (kill, timeout)

examples:
  pgm-explore validate message.json
  pgm-explore validate --format json transcript.jsonl | jq 'select(.conforms | not)'
  cat messages.jsonl | pgm-explore validate -
"""


def arguments(parser: argparse.ArgumentParser) -> None:
    """The options and arguments of ``pgm-explore validate``."""
    add_reading_options(parser, "a .json or .jsonl file, or - for standard input", "message")
    add_engine_options(parser)
    parser.add_argument(
        "--input-format",
        choices=("auto", "json", "jsonl"),
        default=None,
        help="read every PATH as one JSON value (json) or as JSON Lines (jsonl), whatever its "
        "extension (default: by extension, see below)",
    )
    add_progress_option(parser)


class Tally(Severities):
    __slots__ = ("messages", "nonconforming", "unreadable")

    def __init__(self) -> None:
        super().__init__()
        self.messages = self.nonconforming = self.unreadable = 0

    def add(self, rep: Report) -> None:
        self.messages += 1
        if not rep.conforms:
            self.nonconforming += 1
        if rep.findings:  # most messages in bulk have none: no call for them
            self.add_findings(rep.findings)

    def add_lines(self, lines: Lines) -> None:
        """Count what a worker counted of the messages whose output it wrote."""
        self.messages += lines.messages
        self.nonconforming += lines.nonconforming
        self.errors += lines.errors
        self.warnings += lines.warnings

    @property
    def status(self) -> int:
        if self.unreadable:
            return EXIT_USAGE
        return EXIT_NONCONFORMING if self.nonconforming else EXIT_OK

    def counted(self, findings: str) -> str:
        """What the last line of the text output counts.

        >>> t = Tally(); t.messages, t.nonconforming, t.errors, t.warnings = 12, 2, 3, 1
        >>> t.summary()
        '12 messages: 10 conform, 2 do not conform (3 errors, 1 warning)'
        >>> t.messages, t.nonconforming, t.errors, t.warnings, t.unreadable = 1, 1, 1, 0, 1
        >>> t.summary()
        '1 message: 0 conform, 1 does not conform (1 error, 0 warnings); 1 path could not be read'
        """
        conforming = self.messages - self.nonconforming
        return (
            f"{count(self.messages, 'message')}: "
            f"{conforming} {'conforms' if conforming == 1 else 'conform'}, "
            f"{self.nonconforming} {'does not conform' if self.nonconforming == 1 else 'do not conform'} "
            f"({findings})"
        )

    def problem(self) -> str | None:
        return f"{count(self.unreadable, 'path')} could not be read" if self.unreadable else None


def run(args: argparse.Namespace, out: IO[str], err: IO[str]) -> int:
    try:
        engine = engine_for(
            args.paths, workers=args.workers, scheduler=args.scheduler, min_bytes=VALIDATE_BYTES, preload=PRELOAD
        )
    except EngineUnavailable as exc:
        err.write(f"{PROG} validate: {clean(str(exc))}\n")
        return EXIT_USAGE
    with engine:
        return run_on(engine, args, out, err)


def run_on(engine: Engine, args: argparse.Namespace, out: IO[str], err: IO[str]) -> int:
    """The command's work once its engine is there (``run`` makes it from ``--workers`` and
    ``--scheduler``, and stops it after): benchmarks/bench_validate.py gives it workers
    started beforehand, to measure the command's steady rate as a user gets it."""
    tally = Tally()
    kind: InputKind | None = args.input_format
    palette = palette_for(args.color, out)
    bar = progress(input_size(args.paths), "B", stream=err, show=args.progress, what="validate")
    to_out = shared(out, bar)  # (out itself when no bar is drawn)
    write: Callable[[str], object]
    if args.format == "json":
        write = to_out.write

        def emit(rep: Report) -> None:
            write(json_line(rep) + "\n")

    else:
        write = partial(write_text, to_out)

        def emit(rep: Report) -> None:
            write_text(to_out, text_block(rep, palette) + "\n")

    add, add_lines = tally.add, tally.add_lines
    with bar:
        for path in args.paths:
            stdin_notice("validate", path, err)
            before = bar.done
            batch = Pushed(partial(Writer, args.format, palette, path))
            growth = Growth(LARGEST, output_size)
            try:
                cut = iter_batched(
                    path, report_fields, batch, kind=kind, engine=engine, progress=bar.counter(), largest=growth
                )
                for got in cut:
                    if isinstance(got, Batch):
                        lines: Lines = got.value
                        add_lines(lines)
                        for piece in lines.pieces(got.base):
                            write(piece)
                    else:
                        source, (type_name, mode, conforms, findings) = got
                        rep = Report(type_name, mode, conforms, findings, source)
                        add(rep)
                        emit(rep)
            except UnreadablePath as exc:
                tally.unreadable += 1
                out.flush()  # keep stderr in order with what was already reported
                err.write(f"{PROG} validate: {exc}\n")
                err.flush()
            bar.top_up(before, input_size([path]))
    if args.format == "text":
        colour = palette.green if tally.status == EXIT_OK else palette.red
        write_text(out, f"{colour}{tally.summary()}{palette.reset}\n")
    return tally.status


def json_line(rep: Report) -> str:
    """``json.dumps(rep.to_dict())`` in compact form.

    >>> json_line(Report("BKN-PAL", "RQ", True, (), "a.jsonl:3"))
    '{"source":"a.jsonl:3","type":"BKN-PAL","mode":"RQ","conforms":true,"findings":[]}'
    """
    return f'{{"source":{json_str(rep.source)}{json_tail(rep.type, rep.mode, rep.conforms, rep.findings)}'


def json_tail(type_name: str | None, mode: str | None, conforms: bool, findings: tuple[Finding, ...]) -> str:
    """The JSON line of a report after its source, from ``,"type":`` on.

    Most messages in bulk conform without findings; their line is put together from
    strings, which is five times faster than encoding the dict (a test holds the two
    forms equal).
    """
    if findings:
        whole = {"type": type_name, "mode": mode, "conforms": conforms, "findings": [f.to_dict() for f in findings]}
        return f",{encode(whole)[1:]}"
    return (
        f',"type":{json_str(type_name)},"mode":{json_str(mode)},'
        f'"conforms":{"true" if conforms else "false"},"findings":[]}}'
    )


def text_block(rep: Report, p: Palette) -> str:
    """The lines of ``str(rep)``, with colour when the palette has any (a test holds the two equal)."""
    source = f"{p.bold}{clean(rep.source)}{p.reset}: " if rep.source else ""
    return source + text_tail(rep.type, rep.mode, rep.conforms, rep.findings, p)


def text_tail(
    type_name: str | None, mode: str | None, conforms: bool, findings: tuple[Finding, ...], p: Palette
) -> str:
    """The text block of a report after its source and ``": "``."""
    kind = " ".join(part for part in (type_name or "unknown type", mode) if part)
    verdict = f"{p.green}conforms{p.reset}" if conforms else f"{p.red}{p.bold}does not conform{p.reset}"
    lines = [f"{clean(kind)}: {verdict}"]
    for f in findings:
        colour = p.red if f.severity == "error" else p.yellow
        where = f" (line {f.line}, column {f.column})" if f.line is not None else ""
        lines.append(
            f"  {colour}{f.severity}{p.reset} {p.cyan}[{f.rule}]{p.reset} "
            f"{clean(f.json_path)}{where}: {clean(f.message)}"
        )
        lines.append(f"      {p.dim}spec: {clean(f.spec)}{p.reset}")
    return "\n".join(lines)


class Lines(NamedTuple):
    """The output of consecutive messages of a partition, written by its worker, and their counts
    for the summary.

    Each message's source is ``PATH:LINE``; the worker knows the line only within its
    partition (``numbers``, rising: a ``range`` when there is no gap between them, as in most
    partitions), so it writes the text around the numbers (``parts``, one more than ``numbers``)
    and :meth:`text` puts the file's numbers in.
    """

    parts: list[str]
    numbers: list[int] | range
    messages: int
    nonconforming: int
    errors: int
    warnings: int

    def text(self, base: int) -> str:
        r"""The output, the partition's line numbers moved on by ``base`` (the file's lines before it).

        >>> Lines(["a:", " x\na:", " y\n"], [1, 3], 2, 0, 0, 0).text(10)
        'a:11 x\na:13 y\n'
        >>> Lines(["a:", " x\na:", " y\na:", " z\n"], range(1, 4), 3, 0, 0, 0).text(998)
        'a:999 x\na:1000 y\na:1001 z\n'
        """
        return "".join(self.pieces(base))

    def pieces(self, base: int) -> Iterator[str]:
        """:meth:`text` in pieces, the output of :data:`PIECE` messages at most each: written one
        after the other, a piece stays in the processor's cache while it is joined and written,
        and the whole output of a partition is never held at once (36 ns a message joined and
        written against 85 for the whole of a partition of 64 MiB of ``bench_validate.py``'s file)."""
        numbers = self.numbers
        count = len(numbers)
        if not count:
            return
        # (Made by slices and joined in C.)
        columns: tuple[list[str], ...]
        if numbers[-1] - numbers[0] != count - 1:  # a gap (a blank line): each number written on its own
            columns = (list(map(str, map(base.__add__, numbers))),)
        else:
            columns = _decimals(base + numbers[0], count)
        parts, width = self.parts, len(columns) + 1
        for start in range(0, count, PIECE):
            end = min(start + PIECE, count)
            out = [""] * (width * (end - start) + 1)
            out[0::width] = parts[start : end + 1]
            for place, column in enumerate(columns, 1):
                out[place::width] = column[start:end]
            if end < count:
                out.pop()  # (what comes after the piece's last number begins the next piece)
            yield "".join(out)


PIECE = 2048
"""The most messages whose output :meth:`Lines.pieces` joins at a time (about 256 KB of
``--format json``)."""


_THOUSANDS = [f"{n:03d}" for n in range(1000)]
_BELOW_THOUSAND = [str(n) for n in range(1000)]


def _decimals(first: int, count: int) -> tuple[list[str], list[str]]:
    """The decimal numbers ``first`` to ``first + count - 1`` cut in two, the thousands and the
    three digits after them (what :meth:`Lines.text` writes for each message, where ``str`` of
    each number took five times as long, 140 ns a message: the client's largest work a message).

    >>> [a + b for a, b in zip(*_decimals(998, 4))]
    ['998', '999', '1000', '1001']
    """
    thousands: list[str] = []
    digits: list[str] = []
    end = first + count
    high, low = divmod(first, 1000)
    while first < end:
        take = min(1000 - low, end - first)
        if high:
            thousands += [str(high)] * take
            digits += _THOUSANDS[low : low + take]
        else:
            thousands += [""] * take
            digits += _BELOW_THOUSAND[low : low + take]
        first += take
        high, low = high + 1, 0
    return thousands, digits


class Writer:
    """The output of the messages of a partition of ``path`` in the ``form`` of ``--format``
    (``json``, or ``text`` in the colours of ``palette``), as :class:`Lines`: the
    :class:`~pgm_explore.io.LineBatch` of ``validate``, told the messages on the worker of the
    partition (see :func:`pgm_explore.io.iter_batched`).

    Most messages in bulk are clean and have nothing to be said about them: their output after
    the line number is the same for every message of a data type and Mode, made once.

    A message that the typed reader did not take (one that does not conform, mostly) is judged
    with others of its kind (:class:`~pgm_explore.io.Held`), its place in the output kept for it:
    a partition of 16 MiB of ``bench_validate.py``'s file took 0.5 µs a message less
    (docs/performance.md). Messages that have the same findings (a log that repeats one mistake,
    whose findings :func:`~pgm_explore.io.report_fields` gives as one tuple) share one output
    text, made once: a partition then holds, and sends, that text once, not once a message."""

    __slots__ = (
        "_errors",
        "_form",
        "_head",
        "_held",
        "_made",
        "_nonconforming",
        "_numbers",
        "_palette",
        "_parts",
        "_said",
        "_warnings",
    )

    def __init__(self, form: str, palette: Palette, path: str) -> None:
        self._form, self._palette = form, palette
        # (In JSON, the source's closing quote comes after the number.)
        self._head = f'{{"source":{json_str(path)[:-1]}:' if form == "json" else f"{palette.bold}{clean(path)}:"
        self._said: dict[Way, str] = {}  # what follows the number of a clean message without findings, by its way
        self._held = Held()  # (its places are in _parts)
        # The output of the messages judged, by their type, Mode, verdict and findings (the tuple
        # itself, kept beside the text: its id is not given to another while it is held here).
        self._made: dict[tuple[str | None, str | None, bool, int], tuple[tuple[Finding, ...], str]] = {}
        self._start()

    def _start(self) -> None:
        self._parts: list[str] = [self._head]
        self._numbers: list[int] = []
        self._nonconforming = self._errors = self._warnings = 0

    def typed(self, line: int, way: Way, value: object) -> None:
        fields = clean_fields(way, value)
        if fields[3]:
            self._add(line, fields)
            return
        said = self._said.get(way)
        if said is None:
            said = self._said[way] = self._after(fields)
        self._numbers.append(line)
        self._parts.append(said)

    def item(self, item: Item) -> None:
        self._numbers.append(item.line)  # type: ignore[arg-type]  # (a partition's item has a line)
        parts = self._parts
        parts.append("")  # (its output, once judged)
        if self._held.hold(len(parts) - 1, item):
            self._judge()

    def _judge(self) -> None:
        """Judge the messages held and put their output in its place."""
        parts, made = self._parts, self._made
        for place, fields in self._held.judged():
            self._count(fields)
            type_name, mode, conforms, findings = fields
            key = (type_name, mode, conforms, id(findings))
            known = made.get(key)
            if known is None or known[0] is not findings:
                known = made[key] = (findings, self._after(fields))
            parts[place] = known[1]

    def _add(self, line: int, fields: ReportFields) -> None:
        self._count(fields)
        self._numbers.append(line)
        self._parts.append(self._after(fields))

    def _count(self, fields: ReportFields) -> None:
        conforms, findings = fields[2], fields[3]
        if not conforms:
            self._nonconforming += 1
        for finding in findings:
            if finding.severity == "error":
                self._errors += 1
            else:
                self._warnings += 1

    def _after(self, fields: ReportFields) -> str:
        """What follows the line number of a message, to the head of the next."""
        type_name, mode, conforms, findings = fields
        if self._form == "json":
            return f'"{json_tail(type_name, mode, conforms, findings)}\n{self._head}'
        palette = self._palette
        return f"{palette.reset}: {text_tail(type_name, mode, conforms, findings, palette)}\n{self._head}"

    def cut(self) -> Lines:
        if self._held:
            self._judge()
        parts, numbers = self._parts, self._numbers
        parts[-1] = parts[-1][: -len(self._head)] if numbers else ""
        count = len(numbers)
        # (Rising numbers without a gap travel as a range, not one int each.)
        sent = range(numbers[0], numbers[-1] + 1) if count and numbers[-1] - numbers[0] == count - 1 else numbers
        lines = Lines(parts, sent, count, self._nonconforming, self._errors, self._warnings)
        self._start()
        return lines


COMMAND = Command(
    "validate",
    help="check messages against the PGM-AUA V1.0 specification",
    description="Validate PGM-AUA V1.0 messages: tell each message's data type and mode from its\n"
    "Header and Mode, check it against the schema of its type, and list every finding with\n"
    "the spec clause behind it. A message conforms when it validates against its schema;\n"
    "warnings (consistency, empty values) never change that verdict.",
    epilog=EPILOG,
    arguments=arguments,
    run=run,
)
