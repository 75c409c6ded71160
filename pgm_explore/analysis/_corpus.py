"""A corpus of transcripts (one file each) and its tables: pandas when they fit, dask when asked.

Each transcript is read and tabulated on its own, by the same functions as one transcript's
tables (:data:`~pgm_explore.analysis.TABLES`), with the transcript's path as the first column,
wherever :mod:`pgm_explore._engine` runs the work. A worker puts the tables of its partition's
transcripts one under the other and sends that one table back (a DataFrame a file cost a round
of pickling each, which thousands of small files felt); the partitions' tables come back in the
corpus's order and are put one under the other with plain pandas. Nothing is shuffled between
workers: a table of a transcript is small next to the work of reading it.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Sequence
from typing import IO, TYPE_CHECKING, Any, NamedTuple

import pandas as pd

from pgm_explore import _display
from pgm_explore._engine import engine_for
from pgm_explore._progress import progress
from pgm_explore.analysis._tables import TABLES, TABULATIONS
from pgm_explore.analysis._tabulation import Tabulation
from pgm_explore.dialogue import Message, Transcript, TranscriptFinding, corpus_files, dialogue_key, iter_checked
from pgm_explore.dialogue._corpus import LOCAL_WORKERS_FROM, batches, corpus_size
from pgm_explore.io import UnreadablePath, iter_documents
from pgm_explore.io._partitions import sent_from
from pgm_explore.io._read import one_producer, reading_from
from pgm_explore.validation._schema import EXPLAINER

if TYPE_CHECKING:
    import dask.dataframe as dd

    from pgm_explore.dialogue.precheck import Prediction

__all__ = ["SUMMARY_COLUMNS", "TRANSCRIPT", "Corpus", "corpus_table"]

TRANSCRIPT = "transcript"
"""The first column of every corpus table: the path of the transcript a row comes from."""

SUMMARY_COLUMNS = (TRANSCRIPT, "messages", "dialogues", "errors", "warnings")
_SUMMARY_DTYPES = {
    TRANSCRIPT: "string",
    "messages": "int64",
    "dialogues": "int64",
    "errors": "int64",
    "warnings": "int64",
}

_SHOWN = 20  # files listed by the notebook display


class _Job(NamedTuple):
    what: str
    paths: tuple[str, ...]  # a batch of transcripts, each tabulated on its own
    directory: str | None = None  # where relative paths are read from (a Dask cluster's workers: the caller's)


class _Done(NamedTuple):
    path: str
    frame: pd.DataFrame | None
    problem: str | None  # why the file could not be read (an UnreadablePath's reason)


class _Partition(NamedTuple):
    """What a worker sends back for a batch: its transcripts' tables, one under the other."""

    files: int  # transcripts tabulated
    frame: pd.DataFrame | None  # None: no transcript, or one could not be read
    unreadable: _Done | None  # the first transcript that could not be read (the rest are not read)


def _with_transcript(frame: pd.DataFrame, path: str) -> pd.DataFrame:
    frame.insert(0, TRANSCRIPT, pd.array([path] * len(frame), dtype="string"))
    return frame


class _Summary(Tabulation):
    """One transcript's row of :meth:`Corpus.summary`: its messages, its dialogues
    (:meth:`Transcript.dialogues <pgm_explore.dialogue.Transcript.dialogues>`), its errors and warnings."""

    def __init__(self) -> None:
        self.messages = self.errors = self.warnings = 0
        self.dialogues: set[tuple[str, str]] = set()

    def add(self, message: Message, predictions: list[Prediction] | None) -> None:
        self.messages += 1
        if message.dialog is not None and message.type is not None:
            self.dialogues.add(dialogue_key(message.dialog, message.type))

    def note(self, findings: Sequence[TranscriptFinding]) -> None:
        for finding in findings:
            if finding.severity == "error":
                self.errors += 1
            elif finding.severity == "warning":
                self.warnings += 1

    def frame(self) -> pd.DataFrame:
        row = (self.messages, len(self.dialogues), self.errors, self.warnings)
        return pd.DataFrame([row], columns=list(SUMMARY_COLUMNS[1:])).astype(
            {name: _SUMMARY_DTYPES[name] for name in SUMMARY_COLUMNS[1:]}
        )


def _tabulate(what: str, path: str) -> _Done:
    """One transcript's table, its messages read as a stream (one file may be a big log)."""
    tabulation = _Summary() if what == "summary" else TABULATIONS[what]()
    try:
        # (The item reader: the bulk path's start costs more than a corpus's small files win by it.)
        frame = tabulation.streamed(iter_checked(iter_documents(path)))
    except UnreadablePath as exc:
        # Returned, not raised: the reason reaches the client as it was written.
        return _Done(path, None, exc.reason)
    return _Done(path, _with_transcript(frame, path), None)


def _tabulate_batch(job: _Job) -> _Partition:
    """The tables of the transcripts of a batch, one under the other, on whichever worker runs
    it (top-level, so workers find it by name); it stops at a transcript that cannot be read.
    The files of a corpus come from one producer, as far as the reader's fast path knows
    (``one_producer``)."""
    frames: list[pd.DataFrame] = []
    with one_producer(), reading_from(job.directory):
        for path in job.paths:
            done = _tabulate(job.what, path)
            if done.frame is None:
                return _Partition(len(frames), None, done)
            frames.append(done.frame)
    return _Partition(len(frames), corpus_table(job.what, frames) if frames else None, None)


def _partition(path: str, what: str, directory: str | None = None) -> pd.DataFrame:
    """A partition of a dask DataFrame: one transcript's table (raises if it cannot be read),
    ``path`` read from ``directory`` when relative (the caller's: the DataFrame may be computed on
    any Dask cluster)."""
    with reading_from(directory):
        done = _tabulate(what, path)
    if done.frame is None:
        raise UnreadablePath(path, done.problem or "it could not be read")
    return done.frame


def _empty(what: str) -> pd.DataFrame:
    frame = (_Summary() if what == "summary" else TABULATIONS[what]()).over(Transcript()).iloc[:0]
    return _with_transcript(frame, "")


def corpus_table(what: str, frames: Iterable[pd.DataFrame]) -> pd.DataFrame:
    """The tables of a corpus's transcripts, one under the other (an empty corpus: no rows,
    the same columns)."""
    frames = list(frames)
    if not frames:
        return _empty(what)
    return pd.concat(frames, ignore_index=True)


class Corpus:
    """Many transcripts, one file each: a directory stands for its ``*.jsonl`` and ``*.json``
    files, recursively, sorted by path (as ``pgm-explore check --corpus`` reads them).

    Tables are pandas DataFrames by default; ``lazy=True`` gives a dask DataFrame with one
    partition per transcript, computed where the caller's Dask client (or dask's default
    scheduler) runs it. ``workers`` and ``scheduler`` decide where the pandas tables are
    built, as ``--workers`` and ``--scheduler`` do on the command line (``None``: in this
    process for a small corpus). In a notebook, or on a terminal, a progress bar shows the
    transcripts done once the work takes more than two seconds (``progress=False``: never).

    >>> import pathlib, tempfile
    >>> root = pathlib.Path(tempfile.mkdtemp())
    >>> line = '{"Header": "PGM-KPA-V1.0", "Mode": "RQ"}\\n'
    >>> _ = (root / "a.jsonl").write_text(line); _ = (root / "b.jsonl").write_text(line * 2)
    >>> corpus = Corpus(root, workers=0)
    >>> len(corpus), corpus.summary()["messages"].tolist()
    (2, [1, 2])
    """

    def __init__(
        self,
        *paths: str | os.PathLike[str],
        workers: int | None = None,
        scheduler: str | None = None,
        progress: bool = True,
    ) -> None:
        self.paths = tuple(os.fspath(path) for path in paths)
        self.files: tuple[str, ...] = tuple(corpus_files(self.paths))
        self.workers = workers
        self.scheduler = scheduler
        self.progress = progress

    def __len__(self) -> int:
        return len(self.files)

    def table(self, what: str, *, lazy: bool = False) -> pd.DataFrame | dd.DataFrame:
        """The table ``what`` (a name of :data:`~pgm_explore.analysis.TABLES`, or ``"summary"``)
        over every transcript, with the transcript's path as the first column.

        Raises :class:`~pgm_explore.io.UnreadablePath` if a transcript cannot be read.
        """
        if what != "summary" and what not in TABLES:
            raise ValueError(f"no table {what!r}: one of {', '.join(['summary', *TABLES])}")
        if lazy:
            try:
                import dask.dataframe as dd
            except ImportError as exc:  # pyarrow comes with the notebook extra
                raise ImportError(
                    f"dask DataFrames need pyarrow: pip install 'pgm-explore[notebook]' ({exc})"
                ) from None

            return dd.from_map(
                _partition, self.files, what=what, directory=os.getcwd(), meta=_empty(what), enforce_metadata=False
            )
        return self._frame(what)

    def _frame(self, what: str, stream: IO[str] | None = None) -> pd.DataFrame:
        """The pandas table, with a progress bar on ``stream`` (None: a notebook's, or stderr's)."""
        frames = []
        with (
            engine_for(
                self.files,
                workers=self.workers,
                scheduler=self.scheduler,
                min_bytes=LOCAL_WORKERS_FROM,
                # (python-jsonschema explains what does not conform: see dialogue._transcript.PRELOAD)
                preload=[__name__, EXPLAINER],
            ) as work,
            progress(len(self.files), "transcripts", stream=stream, show=self.progress, what=what) as bar,
            one_producer(),
        ):
            # Batches save round trips to workers; here, one file at a time keeps the bar exact.
            cut = [(name,) for name in self.files] if work.in_process else batches(self.files, work.workers)
            home = sent_from(work)
            for part in work.map(_tabulate_batch, [_Job(what, b, home) for b in cut]):
                if part.unreadable is not None:
                    done = part.unreadable
                    raise UnreadablePath(done.path, done.problem or "it could not be read")
                if part.frame is not None:
                    frames.append(part.frame)
                bar.update(part.files)
        return corpus_table(what, frames)

    def summary(self) -> pd.DataFrame:
        """One row per transcript: its path, messages, dialogues, errors and warnings."""
        return self.table("summary")

    def messages(self, *, lazy: bool = False) -> pd.DataFrame | dd.DataFrame:
        return self.table("messages", lazy=lazy)

    def exchanges(self, *, lazy: bool = False) -> pd.DataFrame | dd.DataFrame:
        return self.table("exchanges", lazy=lazy)

    def feasibility(self, *, lazy: bool = False) -> pd.DataFrame | dd.DataFrame:
        return self.table("feasibility", lazy=lazy)

    def pastatus(self, *, lazy: bool = False) -> pd.DataFrame | dd.DataFrame:
        """The ten PA Status counts of each transcript (ten rows a transcript)."""
        return self.table("pastatus", lazy=lazy)

    def outcomes(self, *, lazy: bool = False) -> pd.DataFrame | dd.DataFrame:
        return self.table("outcomes", lazy=lazy)

    def commitments(self, *, lazy: bool = False) -> pd.DataFrame | dd.DataFrame:
        return self.table("commitments", lazy=lazy)

    def findings(self, *, lazy: bool = False) -> pd.DataFrame | dd.DataFrame:
        return self.table("findings", lazy=lazy)

    # --- display --------------------------------------------------------------------------

    def _head(self) -> str:
        size = corpus_size(self.files)
        where = ", ".join(self.paths) or "no paths"
        return f"Corpus of {_display.count(len(self.files), 'transcript')} ({size:,} bytes) from {where}"

    def __repr__(self) -> str:
        return f"Corpus({', '.join(map(repr, self.paths))})"

    def __str__(self) -> str:
        lines = [self._head(), *(f"  {name}" for name in self.files[:_SHOWN])]
        if len(self.files) > _SHOWN:
            lines.append(f"  ... and {len(self.files) - _SHOWN:,} more")
        return "\n".join(_clean(line) for line in lines)

    def _html(self) -> str:
        rows = [[name] for name in self.files[:_SHOWN]]
        more = f"<p>... and {len(self.files) - _SHOWN:,} more</p>" if len(self.files) > _SHOWN else ""
        return f"<p>{_display.esc(self._head())}</p>" + (_display.table([TRANSCRIPT], rows) if rows else "") + more

    def _repr_mimebundle_(self, include: Any = None, exclude: Any = None, **kwargs: Any) -> dict[str, str]:
        return _display.mimebundle(self, self.__str__, self._html, include, exclude)


def _clean(text: str) -> str:
    """A file name's control characters as escapes (a name may hold any byte but / and NUL)."""
    return text.encode("unicode_escape", "backslashreplace").decode("ascii") if not text.isprintable() else text
