"""``pgm-explore check``: the messages as one transcript, streamed (layer 4, docs/rules.md).

The loop is :func:`pgm_explore.dialogue.check_paths`'s, with the message and dialogue counts
of the summary line.
"""

from __future__ import annotations

import argparse
import io
import os
from collections.abc import Sequence
from itertools import groupby
from typing import IO, TYPE_CHECKING, NamedTuple

from pgm_explore._progress import Progress, progress
from pgm_explore.cli._options import Command, add_corpus_options, add_engine_options, add_reading_options
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
    palette_for,
    shared,
    stdin_notice,
    write_text,
)
from pgm_explore.cli._process import keep_to_the_end
from pgm_explore.io import UnreadablePath, iter_documents
from pgm_explore.io._read import located

if TYPE_CHECKING:
    from pgm_explore._engine import Engine
    from pgm_explore.dialogue import TranscriptFinding

__all__ = [
    "COMMAND",
    "BatchChecked",
    "FileCheck",
    "FileChecked",
    "check_block",
    "check_file",
    "check_files",
    "check_transcript",
    "refuse",
    "run_corpus",
    "unreadable",
]

EPILOG = """\
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

where the work runs:
  Reading, decoding and validating a message depends on that message alone; the
  transcript rules need the messages in order. A big JSON Lines file is therefore
  cut into partitions of whole lines (1 to 16 MiB), worked on by Dask workers,
  and the rules run here over what comes back, in order. By default, transcripts
  of 512 MiB or more are worked on by one local worker process per core (starting
  them and their first work takes seconds), smaller ones, standard input
  and pipes in this process. --workers N says how many local workers (0: this process only);
  --scheduler ADDRESS sends the work to an existing Dask cluster (dask.distributed:
  'dask scheduler' and 'dask worker'), whose workers must see the same files (a
  relative PATH is read from this command's folder, and named as given).
  PGM_EXPLORE_PARALLEL=0 in the environment means --workers 0. The findings
  are the same bytes wherever the work runs.

corpus (--corpus):
  Each file is a transcript of its own, checked as 'pgm-explore check FILE' checks
  it. A directory stands for its *.jsonl and *.json files, recursively, sorted by
  their path inside it; the PATHs in the order given. A file in a directory is named
  as the directory given joined with its path inside it (logs/day1/a.jsonl).
  --format json prints, for each transcript in that order, exactly the lines that
  'pgm-explore check --format json FILE' prints; text prints each transcript's
  findings and ends with one summary line for the corpus:
  "74 transcripts, 362 messages in 81 dialogues: 48 errors, 27 warnings".
  A file that cannot be read is reported on stderr and the others are checked.
  Each transcript is checked whole on one worker: in this process for a small
  corpus (--workers 0 always), on N local worker processes with --workers N (one
  per core by default from 512 MiB on), or on an existing Dask cluster with
  --scheduler ADDRESS; the output is the same bytes in every case.

progress:
  On a terminal, work that takes more than two seconds shows a progress bar on
  stderr (bytes or transcripts done, rate, time left); never on stdout, never when
  stderr is not a terminal. --no-progress hides it.

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
  2    usage error, a PATH (with --corpus: a transcript) that could not be read,
       the output that could not be written (a full disk), workers that died under
       the work, or a cluster with no worker
  130  interrupted (Ctrl-C)
  141  the output was closed early (e.g. piped into head)
  143  stopped by SIGTERM (kill, timeout)

examples:
  pgm-explore check session.jsonl
  pgm-explore check --format json monday.jsonl tuesday.jsonl | jq -r 'select(.severity == "error") | .source'
  zcat session.jsonl.gz | pgm-explore check -
  pgm-explore check --corpus logs/ --workers 2
  pgm-explore check --corpus --scheduler tcp://10.0.0.5:8786 /shared/logs/
"""


def arguments(parser: argparse.ArgumentParser) -> None:
    """The options and arguments of ``pgm-explore check``."""
    add_reading_options(
        parser,
        "a .json or .jsonl file, or - for standard input; all PATHs form one transcript, in order "
        "(with --corpus: files and directories, each file a transcript)",
        "finding",
    )
    add_engine_options(parser)
    add_corpus_options(parser)


class Tally(Severities):
    __slots__ = ("dialogues", "messages", "stopped")

    def __init__(self) -> None:
        super().__init__()
        # Both counted by the checker, at the end: counting here too cost a call a message.
        self.messages = 0
        self.dialogues = 0
        self.stopped = False

    @property
    def status(self) -> int:
        if self.stopped:
            return EXIT_USAGE
        return EXIT_NONCONFORMING if self.errors else EXIT_OK

    def counted(self, findings: str) -> str:
        """What the summary counts.

        >>> t = Tally(); t.messages, t.errors, t.warnings = 105, 0, 2
        >>> t.dialogues = 3
        >>> t.summary()
        '105 messages in 3 dialogues: 0 errors, 2 warnings'
        >>> t.messages, t.errors, t.warnings, t.dialogues, t.stopped = 1, 1, 0, 1, True
        >>> t.summary()
        '1 message in 1 dialogue: 1 error, 0 warnings; stopped at a path that could not be read'
        """
        return f"{count(self.messages, 'message')} in {count(self.dialogues, 'dialogue')}: {findings}"

    def problem(self) -> str | None:
        return "stopped at a path that could not be read" if self.stopped else None


def unreadable(paths: Sequence[str]) -> list[UnreadablePath]:
    """The PATHs that plainly cannot be read, each with the reason ``iter_documents`` gives.

    Nothing is opened that would be read later: thousands of log files would exceed the
    limit on open files, and a pipe (``<(zcat log.gz)``) can be read only once. Only a
    path that does not exist, is a directory or is not readable is tried here, which
    raises at once; should it open after all (created meanwhile), it is closed again.
    """
    found = []
    for path in dict.fromkeys(paths):  # a path given twice is reported once
        where = located(path)
        if path == "-" or (os.path.exists(where) and not os.path.isdir(where) and os.access(where, os.R_OK)):
            continue
        try:
            items = iter_documents(path)
        except UnreadablePath as exc:
            found.append(exc)
        else:
            next(items, None)  # a started generator closes its file on close()
            items.close()  # type: ignore[attr-defined]  # iter_documents gives a generator
    return found


def refuse(command: str, problems: Sequence[UnreadablePath], paths: Sequence[str], err: IO[str]) -> int:
    """Say why nothing was read (``check`` and ``table`` read all PATHs or none)."""
    for problem in problems:
        err.write(f"{PROG} {command}: {clean(str(problem))}\n")
    if len(paths) > 1:
        err.write(f"{PROG} {command}: nothing was read: all PATHs form one transcript\n")
    return EXIT_USAGE


def run(args: argparse.Namespace, out: IO[str], err: IO[str]) -> int:
    if args.corpus:
        return run_corpus(args, out, err)
    # Imported here: validate does not need the dialogue layer, and starts faster without it.
    from pgm_explore._engine import EngineUnavailable, engine_for
    from pgm_explore.dialogue._transcript import CHECK_BYTES, PRELOAD

    problems = unreadable(args.paths)
    if problems:
        return refuse("check", problems, args.paths, err)
    palette = palette_for(args.color, out)
    try:
        # The workers run what they run for the library's check_paths, so they start with its
        # module imported, as for it (this one they would import with their first work).
        engine = engine_for(
            args.paths,
            workers=args.workers,
            scheduler=args.scheduler,
            min_bytes=CHECK_BYTES,
            preload=PRELOAD,
        )
    except EngineUnavailable as exc:
        err.write(f"{PROG} check: {clean(str(exc))}\n")
        return EXIT_USAGE
    with engine, progress(input_size(args.paths), "B", stream=err, show=args.progress, what="check") as bar:
        tally = check_transcript(
            args.paths, args.format, palette, shared(out, bar), err, engine=engine, bar=bar, ends_process=True
        )
    if args.format == "text":
        write_text(out, summary_line(tally, palette))
    return tally.status


def summary_line(tally: Tally, palette: Palette) -> str:
    colour = palette.red if tally.errors or tally.stopped else palette.yellow if tally.warnings else palette.green
    return f"{colour}{tally.summary()}{palette.reset}\n"


def check_transcript(
    paths: Sequence[str],
    form: str,
    palette: Palette,
    out: IO[str],
    err: IO[str],
    *,
    engine: Engine | None = None,
    bar: Progress | None = None,
    ends_process: bool = False,
) -> Tally:
    """Check ``paths`` as one transcript, writing its findings to ``out`` as ``check`` does in
    the format ``form`` (all but the text summary line), and what stopped it to ``err``.
    ``ends_process``: the last work of the command's process, which may leave what the checker
    kept unfreed (:func:`~._process.keep_to_the_end`).

    This is the body of ``pgm-explore check``, and of each transcript of ``check --corpus``
    (on a worker, into a buffer), so that the two print the same bytes. ``engine`` works on
    big files (None: this process); ``bar`` is told the bytes done.
    """
    from pgm_explore.dialogue import TranscriptChecker
    from pgm_explore.dialogue._checker import older_objects_frozen
    from pgm_explore.dialogue._facts import iter_facts

    if form == "json":
        write = out.write

        def emit(findings: Sequence[TranscriptFinding]) -> None:
            for finding in findings:
                write(encode(finding.to_dict()) + "\n")

    else:
        last: list[tuple[str, str | None, str | None]] = []  # the message the previous block was about

        def emit(findings: Sequence[TranscriptFinding]) -> None:
            # The findings of one message come together; those of the end (unanswered
            # Requests) are about several messages, one block each. A block about the
            # message just shown (the last one, never answered) goes on under its name.
            for key, block in groupby(findings, key=lambda f: (f.source, f.dialog, f.type)):
                text = check_block(list(block), palette)
                if last and last[0] == key:
                    text = text.partition("\n")[2]
                last[:] = [key]
                write_text(out, text + "\n")

    tally = Tally()
    # The loop of pgm_explore.dialogue.check_paths, writing the findings as they come (the
    # facts of a big file's messages made by the engine's workers); the checker counts the
    # messages and dialogues of the summary.
    checker = TranscriptChecker(contexts=False)
    counted = bar.counter() if bar is not None else None
    feed = checker.feed_run
    with older_objects_frozen():
        for path in paths:
            stdin_notice("check", path, err)
            before = bar.done if bar is not None else 0
            try:
                for head, lines, facts in iter_facts(path, engine, counted):
                    for message in feed(head, lines, facts):
                        found = message.findings
                        tally.add_findings(found)
                        emit(found)
                        # Findings are rare next to messages: flushing each lets a reader of
                        # a live log (tail -f log | pgm-explore check -) see them at once.
                        out.flush()
            except UnreadablePath as exc:
                # The rest of the transcript is missing: what only its end could show
                # (unanswered Requests) is not reported.
                tally.stopped = True
                out.flush()  # keep stderr in order with what was already reported
                err.write(f"{PROG} check: {clean(str(exc))}; checking stopped there\n")
                err.flush()
                break
            if bar is not None:
                bar.top_up(before, input_size([path]))
        else:
            found = checker.finish().findings
            tally.add_findings(found)
            emit(found)
    tally.messages, tally.dialogues = checker.messages, checker.dialogues()
    if ends_process:
        keep_to_the_end(checker)
    return tally


def check_block(findings: Sequence[TranscriptFinding], p: Palette) -> str:
    """The findings of one message: a line naming it, then each finding as validate shows them.

    >>> from pgm_explore.cli._output import PLAIN
    >>> from pgm_explore.dialogue import TranscriptFinding
    >>> from pgm_explore.validation import Finding
    >>> f = Finding.of("turn-gap", ("TurnIndex",), "TurnIndex 3 follows 0.", "Table 1, TurnIndex")
    >>> print(check_block([TranscriptFinding("t.jsonl:4", "dlg-1", "BKN-PAL", f)], PLAIN))
    t.jsonl:4: BKN-PAL, dialogue dlg-1
      warning [turn-gap] $.TurnIndex: TurnIndex 3 follows 0.
          spec: Table 1, TurnIndex
    """
    first = findings[0]
    about = ", ".join(part for part in (first.type, first.dialog and f"dialogue {first.dialog}") if part)
    lines = [f"{p.bold}{clean(first.source)}{p.reset}" + (f": {clean(about)}" if about else "")]
    for f in findings:
        colour = p.red if f.severity == "error" else p.yellow
        where = f" (line {f.finding.line}, column {f.finding.column})" if f.finding.line is not None else ""
        lines.append(
            f"  {colour}{f.severity}{p.reset} {p.cyan}[{f.rule}]{p.reset} {clean(f.path)}{where}: {clean(f.message)}"
        )
        lines.append(f"      {p.dim}spec: {clean(f.spec)}{p.reset}")
    return "\n".join(lines)


# --- corpus mode --------------------------------------------------------------------------


class FileCheck(NamedTuple):
    """Transcripts of a corpus to check (a batch, each file on its own), and how to write
    their findings."""

    paths: tuple[str, ...]
    form: str
    palette: Palette
    directory: str | None = None
    """Where the relative paths are read from (:func:`~pgm_explore.io._read.reading_from`): the
    command's directory, for workers of a Dask cluster, whose own may be any; None: where they run."""


class FileChecked(NamedTuple):
    """What checking one transcript of a corpus wrote, and its counts for the summary line."""

    out: str
    err: str
    messages: int
    dialogues: int
    errors: int
    warnings: int
    status: int


def check_file(path: str, form: str, palette: Palette) -> FileChecked:
    """``pgm-explore check PATH`` without its summary line, into buffers: the work of one
    transcript of a corpus."""
    out, err = io.StringIO(), io.StringIO()
    problems = unreadable([path])
    if problems:
        status = refuse("check", problems, [path], err)
        return FileChecked("", err.getvalue(), 0, 0, 0, 0, status)
    # In the worker's own process: the corpus is spread over the workers file by file.
    tally = check_transcript([path], form, palette, out, err)
    return FileChecked(
        out.getvalue(), err.getvalue(), tally.messages, tally.dialogues, tally.errors, tally.warnings, tally.status
    )


class BatchChecked(NamedTuple):
    """What checking a batch of transcripts of a corpus wrote, and its counts: one value a
    batch, however many transcripts it holds, so that the client takes in few objects.

    ``written`` holds what the transcripts wrote to standard output and then to standard
    error, one pair a run of transcripts up to one that wrote to standard error (the two
    streams stay in order with each other, transcript by transcript)."""

    written: tuple[tuple[str, str], ...]
    transcripts: int
    messages: int
    dialogues: int
    errors: int
    warnings: int
    unread: int
    status: int


def check_files(job: FileCheck) -> BatchChecked:
    """:func:`check_file` of each transcript of a batch, in order, on whichever worker runs
    it (top-level, so workers find it by name). The files of a corpus come from one producer,
    as far as the reader's fast path knows (``one_producer``)."""
    from pgm_explore.io._read import one_producer, reading_from

    tally = CorpusTally()
    written: list[tuple[str, str]] = []
    out: list[str] = []
    with one_producer(), reading_from(job.directory):
        for path in job.paths:
            done = check_file(path, job.form, job.palette)
            tally.add(done)
            out.append(done.out)
            if done.err:
                written.append(("".join(out), done.err))
                out = []
    if out:
        written.append(("".join(out), ""))
    return BatchChecked(
        tuple(written),
        tally.transcripts,
        tally.messages,
        tally.dialogues,
        tally.errors,
        tally.warnings,
        tally.unread,
        tally.status,
    )


class CorpusTally(Severities):
    __slots__ = ("dialogues", "messages", "status", "transcripts", "unread")

    def __init__(self) -> None:
        super().__init__()
        self.transcripts = self.messages = self.dialogues = self.unread = 0
        self.status = EXIT_OK

    def add(self, done: FileChecked) -> None:
        self.transcripts += 1
        self.messages += done.messages
        self.dialogues += done.dialogues
        self.errors += done.errors
        self.warnings += done.warnings
        if done.status == EXIT_USAGE:
            self.unread += 1
        self.status = max(self.status, done.status)

    def merge(self, done: BatchChecked) -> None:
        """Count the transcripts of a batch."""
        self.transcripts += done.transcripts
        self.messages += done.messages
        self.dialogues += done.dialogues
        self.errors += done.errors
        self.warnings += done.warnings
        self.unread += done.unread
        self.status = max(self.status, done.status)

    def counted(self, findings: str) -> str:
        """What the last line of ``check --corpus`` in the text format counts.

        >>> t = CorpusTally(); t.transcripts, t.messages, t.dialogues, t.warnings = 2, 105, 3, 2
        >>> t.summary()
        '2 transcripts, 105 messages in 3 dialogues: 0 errors, 2 warnings'
        >>> t.unread = 1; t.summary()
        '2 transcripts, 105 messages in 3 dialogues: 0 errors, 2 warnings; 1 transcript could not be read'
        """
        return (
            f"{count(self.transcripts, 'transcript')}, {count(self.messages, 'message')} in "
            f"{count(self.dialogues, 'dialogue')}: {findings}"
        )

    def problem(self) -> str | None:
        return f"{count(self.unread, 'transcript')} could not be read" if self.unread else None


def run_corpus(args: argparse.Namespace, out: IO[str], err: IO[str]) -> int:
    """``check --corpus``: each file a transcript, checked wherever the engine runs it,
    written in the corpus's order."""
    from pgm_explore._engine import EngineUnavailable, engine_for
    from pgm_explore.dialogue import corpus_files
    from pgm_explore.dialogue._corpus import LOCAL_WORKERS_FROM, batches
    from pgm_explore.io._partitions import sent_from
    from pgm_explore.io._read import one_producer
    from pgm_explore.validation._schema import EXPLAINER

    problems = [exc for exc in map(_missing, dict.fromkeys(args.paths)) if exc is not None]
    if problems:
        for problem in problems:
            err.write(f"{PROG} check: {clean(str(problem))}\n")
        return EXIT_USAGE
    try:
        files = corpus_files(args.paths)
    except UnreadablePath as exc:  # a folder that cannot be listed: which files it holds is unknown
        err.write(f"{PROG} check: {clean(str(exc))}\n")
        return EXIT_USAGE
    palette = palette_for(args.color, out)
    tally = CorpusTally()
    try:
        work = engine_for(
            files,
            workers=args.workers,
            scheduler=args.scheduler,
            min_bytes=LOCAL_WORKERS_FROM,
            # (python-jsonschema explains what does not conform: see dialogue._transcript.PRELOAD)
            preload=[__name__, EXPLAINER],
        )
    except EngineUnavailable as exc:
        err.write(f"{PROG} check: {clean(str(exc))}\n")
        return EXIT_USAGE
    # Batches save round trips to workers; here, one file at a time keeps the bar exact (and
    # the files are one producer's all the same).
    cut = [(name,) for name in files] if work.in_process else batches(files, work.workers)
    home = sent_from(work)
    jobs = [FileCheck(batch, args.format, palette, home) for batch in cut]
    with work, one_producer(), progress(len(files), "files", stream=err, show=args.progress, what="check") as bar:
        to_out = shared(out, bar)
        for done in work.map(check_files, jobs):
            for text, said in done.written:
                if text:
                    write_text(to_out, text)
                    out.flush()
                if said:
                    err.write(said)
                    err.flush()
            tally.merge(done)
            bar.update(done.transcripts)
    if args.format == "text":
        colour = palette.red if tally.errors or tally.unread else palette.yellow if tally.warnings else palette.green
        write_text(out, f"{colour}{tally.summary()}{palette.reset}\n")
    return tally.status


def _missing(path: str) -> UnreadablePath | None:
    """Why a PATH given to ``--corpus`` names no files at all (corpus_files says it)."""
    from pgm_explore.dialogue import corpus_files

    if path != "-" and os.path.lexists(path):
        return None  # (a file in it that cannot be read stops only its own transcript)
    try:
        corpus_files([path])
    except UnreadablePath as exc:
        return exc
    return None  # pragma: no cover - created meanwhile


COMMAND = Command(
    "check",
    help="check a transcript: every message, and the rules between messages",
    description="Check a PGM-AUA V1.0 transcript: the PC Prompts, Requests and Responses one Basic\n"
    "Knowledge exchanged, in the order they happened. Every message is validated, and the\n"
    "transcript rules check it against the messages before it: Requests paired with their\n"
    "Responses, turns, identifiers, dialogues, commitments and feasibility.",
    epilog=EPILOG,
    arguments=arguments,
    run=run,
)
