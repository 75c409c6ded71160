"""Transcripts in memory: messages, dialogues and exchanges, for notebooks and tables.

``pgm-explore check`` streams through :func:`check_paths`; a :class:`Transcript` keeps
every message, which is what plots and a notebook's exploring need; :func:`iter_checked` gives
the messages one at a time with what was found at each, which is all a table needs.
"""

from __future__ import annotations

import io
import math
import os
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from decimal import Decimal
from typing import Any

from pgm_explore import _display
from pgm_explore._engine import Engine, engine_for
from pgm_explore.dialogue._checker import Found, TranscriptChecker, TranscriptFinding, older_objects_frozen
from pgm_explore.dialogue._facts import iter_facts
from pgm_explore.dialogue.precheck import Prediction
from pgm_explore.io import Item, input_kind, iter_documents, iter_stream, report
from pgm_explore.spec import simple_time_seconds
from pgm_explore.validation import Report
from pgm_explore.validation._schema import EXPLAINER

__all__ = ["Exchange", "Message", "Pairing", "Transcript", "check_paths", "dialogue_key", "iter_checked", "latency"]


def dialogue_key(dialog: str, type_name: str) -> tuple[str, str]:
    """The dialogue a message belongs to (D15): turns are counted per (DialogID, data type),
    and a PC Prompt belongs to the BKN-PRC dialogue it opens.

    >>> dialogue_key("d-1", "PC Prompt"), dialogue_key("d-1", "BKN-DAC")
    (('d-1', 'BKN-PRC'), ('d-1', 'BKN-DAC'))
    """
    return (dialog, "BKN-PRC" if type_name == "PC Prompt" else type_name)


@dataclass(frozen=True, slots=True)
class Message:
    """One message of a transcript, where it was read, and its validation report."""

    position: int
    """0-based order in the transcript."""
    source: str
    document: Any
    report: Report

    @property
    def type(self) -> str | None:
        return self.report.type

    @property
    def mode(self) -> str | None:
        return self.report.mode

    def get(self, key: str, default: Any = None) -> Any:
        return self.document.get(key, default) if isinstance(self.document, dict) else default

    @property
    def dialog(self) -> str | None:
        value = self.get("DialogID")
        return value if isinstance(value, str) else None

    @property
    def clock(self) -> tuple[bool, float] | None:
        """(absolute?, seconds) of the QueryTime (or PCPromptTime): times on different
        epochs (absolute and relative Simple Time) cannot be compared."""
        return simple_time_seconds(self.get("QueryTime", self.get("PCPromptTime")))

    @property
    def time(self) -> float | None:
        """Seconds of the QueryTime (or PCPromptTime), on its own epoch."""
        clock = self.clock
        return clock[1] if clock else None


@dataclass(frozen=True, slots=True)
class Exchange:
    """A Request and its Response (``None`` while unanswered)."""

    type: str
    dialog: str
    request: Message
    response: Message | None

    @property
    def latency(self) -> float | None:
        """Seconds from the Request's QueryTime to the Response's, when both can be read."""
        return latency(self.request.clock, self.response.clock if self.response is not None else None)


def latency(sent: tuple[bool, float] | None, answered: tuple[bool, float] | None) -> float | None:
    """Seconds from ``sent`` to ``answered`` (:attr:`Message.clock` of a Request and of its
    Response), None unless both can be read and are on the same epoch.

    >>> latency((True, 1794826200.0), (True, 1794826200.7)), latency((True, 1.0), (False, 2.0))
    (0.7, None)
    """
    if sent is None or answered is None or sent[0] != answered[0]:
        return None
    return _difference(answered[1], sent[1])


def _difference(later: float, earlier: float) -> float:
    """``later - earlier`` without float noise: two epoch times a tenth of a second apart subtract to
    0.7000000476837158 in binary floats, so the shortest decimals that read back as each float are
    subtracted instead (0.7), which is what the messages wrote.

    >>> _difference(1794826200.7, 1794826200.0)
    0.7
    """
    if not (math.isfinite(later) and math.isfinite(earlier)):
        return later - earlier
    return float(Decimal(repr(later)) - Decimal(repr(earlier)))


@dataclass
class Transcript:
    """Every message of one or more transcript files, in order, with every finding.

    >>> t = Transcript.from_documents([{"Header": "PGM-KPA-V1.0", "Mode": "RQ"}])
    >>> len(t.messages), t.errors > 0
    (1, True)
    """

    messages: list[Message] = field(default_factory=list)
    findings: list[TranscriptFinding] = field(default_factory=list)
    action_contexts: dict[int, Mapping[str, Any]] = field(default_factory=dict, repr=False)
    """The ActionContext in force at each BKN-DAC Request (by position), as the checker saw it."""
    predictions: dict[int, list[Prediction]] = field(default_factory=dict, repr=False)
    """The checker's HEURISTIC pre-check of the steps of each BKN-DAC Request (by position) that
    has steps and an ActionContext in force."""

    @classmethod
    def from_documents(cls, documents: Iterable[Any], *, source: str = "transcript") -> Transcript:
        """A transcript from parsed messages (sources ``NAME#INDEX``). Built in Python, they are
        looked through for values JSON cannot hold (a set, NaN, a lone surrogate), as
        ``validate()`` looks: such a message is reported, never passed on to the tables."""
        return cls.from_items(
            (Item(f"{source}#{i}", None, None, doc, None) for i, doc in enumerate(documents)), built=True
        )

    @classmethod
    def load(cls, *paths: str | os.PathLike[str]) -> Transcript:
        """Read ``.json`` / ``.jsonl`` transcript files (raises ``UnreadablePath``)."""
        return cls.from_items(item for path in paths for item in iter_documents(path))

    @classmethod
    def from_bytes(cls, data: bytes, *, source: str = "transcript") -> Transcript:
        """A transcript from the bytes of a ``.json`` / ``.jsonl`` file (an upload), read as
        :meth:`load` reads the file: its messages are named ``SOURCE:LINE`` or ``SOURCE#INDEX``.

        >>> Transcript.from_bytes(b'{"Header": "PGM-KPA-V1.0"}\\n', source="up.jsonl").messages[0].source
        'up.jsonl:1'
        """
        return cls.from_items(iter_stream(io.BytesIO(data), source, input_kind(source)))

    @classmethod
    def from_items(cls, items: Iterable[Item], *, built: bool = False) -> Transcript:
        """A transcript from the items of :mod:`pgm_explore.io`'s readers (``iter_documents``,
        ``iter_stream``), in order: what :meth:`load` does, for a caller that watches the items
        go by (``pgm-explore table`` counts the bytes read for its progress bar). ``built``: the
        documents were made in Python, not read from JSON text (see :meth:`from_documents`).
        """
        transcript = cls()
        for message, found in iter_checked(items, built=built):
            transcript.findings += found.findings
            if message is None:
                break
            if found.action_context is not None:
                transcript.action_contexts[message.position] = found.action_context
            if found.predictions is not None:
                transcript.predictions[message.position] = found.predictions
            transcript.messages.append(message)
        return transcript

    @property
    def errors(self) -> int:
        return sum(f.severity == "error" for f in self.findings)

    @property
    def warnings(self) -> int:
        return sum(f.severity == "warning" for f in self.findings)

    def dialogues(self) -> Mapping[tuple[str, str], list[Message]]:
        """Messages grouped by :func:`dialogue_key`: a PC Prompt with the BKN-PRC turns of the
        dialogue it opens, every other type per (DialogID, data type) (D15)."""
        groups: dict[tuple[str, str], list[Message]] = {}
        for message in self.messages:
            if message.dialog is not None and message.type is not None:
                groups.setdefault(dialogue_key(message.dialog, message.type), []).append(message)
        return groups

    def action_context(self, message: Message) -> Mapping[str, Any] | None:
        """The ActionContext that applied to a BKN-DAC Request when it was sent (None if none)."""
        return self.action_contexts.get(message.position)

    def predicted(self, message: Message) -> list[Prediction] | None:
        """HEURISTIC: the PA Status the pre-check expects for each step of a BKN-DAC Request, under
        its :meth:`action_context` (the predictions behind the checker's ``precheck-differs``);
        None when it has no steps or no ActionContext was in force."""
        return self.predictions.get(message.position)

    def exchanges(self) -> list[Exchange]:
        """Every Request with the first later Response that names it, in the order of the Requests.

        A Response that comes before any Request it could answer stays unpaired, as the
        checker's ``request-unknown`` says.
        """
        pairing = Pairing()
        for message in self.messages:
            pairing.pair(message)
        return [
            Exchange(kind, dialog, request, response)
            for (kind, dialog, _), (request, response) in pairing.pairs.items()
        ]

    def __str__(self) -> str:
        count = _display.count
        head = (
            f"{count(len(self.messages), 'message')}, {count(self.errors, 'error')}, {count(self.warnings, 'warning')}"
        )
        lines = [head] + [f"  {f.source}: {f.severity} [{f.rule}] {f.message}" for f in self.findings]
        return "\n".join(lines)

    def _html(self) -> str:
        state = "ok" if not self.errors else "bad"
        head = (
            f"<p>{_display.count(len(self.messages), 'message')} in {_display.count(len(self.dialogues()), 'dialogue')} "
            f"{_display.badge(_display.count(self.errors, 'error'), state)} "
            f"{_display.badge(_display.count(self.warnings, 'warning'), 'warn' if self.warnings else 'ok')}</p>"
        )
        rows = [[f.source, f.dialog or "", f.type or "", f.severity, f.rule, f.message] for f in self.findings]
        return head + (
            _display.table(["source", "dialog", "type", "severity", "rule", "message"], rows) if rows else ""
        )

    def _repr_mimebundle_(self, include: Any = None, exclude: Any = None, **kwargs: Any) -> dict[str, str]:
        return _display.mimebundle(self, self.__str__, self._html, include, exclude)


class Pairing:
    """Each Request with the first later Response that names it, paired as the messages go by
    (:meth:`Transcript.exchanges` lists them): a Request opens an exchange when no earlier one of its
    data type, DialogID and QueryID did, and a Response answers the exchange its RequestID names
    while that has no Response yet. What is kept of each is :meth:`request`'s and :meth:`response`'s
    (the messages themselves, unless a subclass keeps less), in :attr:`pairs`, in the order of the
    Requests. ``types``: only the messages of those data types (None: all)."""

    def __init__(self, types: frozenset[str] | None = None) -> None:
        self.pairs: dict[tuple[str, str, str], list[Any]] = {}
        """(data type, DialogID, QueryID) -> [what is kept of the Request, of its Response or None]."""
        self.types = types

    def request(self, m: Message) -> Any:
        """What is kept of a Request that opens an exchange."""
        return m

    def response(self, m: Message, request: Any) -> Any:
        """What is kept of the Response that answers the Request kept as ``request`` (never None)."""
        return m

    def pair(self, m: Message) -> None:
        """Take the next message of the transcript."""
        dialog, kind = m.dialog, m.type
        if not dialog or not kind or (self.types is not None and kind not in self.types):
            return
        mode = m.mode
        if mode == "RQ":
            query = m.get("QueryID")
            if isinstance(query, str) and (kind, dialog, query) not in self.pairs:
                self.pairs[kind, dialog, query] = [self.request(m), None]
        elif mode == "RS":
            answered = m.get("RequestID")
            if isinstance(answered, str):
                pair = self.pairs.get((kind, dialog, answered))
                if pair is not None and pair[1] is None:
                    pair[1] = self.response(m, pair[0])


def iter_checked(items: Iterable[Item], *, built: bool = False) -> Iterator[tuple[Message | None, Found]]:
    """Each message of ``items`` (as :meth:`Transcript.from_items` takes them), in order, with what
    the transcript checker found at it, then ``(None, found)`` with what only the end of the
    transcript shows (Requests never answered).

    This is what a :class:`Transcript` keeps, one message at a time: a caller that keeps less (the
    tables of ``pgm-explore table`` keep their rows, not the messages) reads a transcript of any
    length in the memory of what it keeps.

    >>> from pgm_explore.io import Item
    >>> items = [Item("t#0", None, None, {"Header": "PGM-KPA-V1.0", "Mode": "RQ", "QueryID": "q", "DialogID": "d"}, None)]
    >>> [(m and m.source, sorted({f.rule for f in found})) for m, found in iter_checked(items, built=True)]
    [('t#0', ['required']), (None, ['unanswered'])]
    """
    checker = TranscriptChecker()
    for position, item in enumerate(items):
        source, document = item.source, item.document
        reported = report(item, built=built)  # (with what the reader noted: names written twice)
        yield Message(position, source, document, reported), checker.feed_report(source, document, reported)
    yield None, checker.finish()


CHECK_BYTES = 512 * 1024 * 1024
"""The size of a transcript from which checking it starts local worker processes by itself
(``pgm-explore check`` without ``--workers``): below it, their start-up costs more than
they win. Measured with benchmarks/bench_threshold.py (session 12, 2 cores, a load average of
4.6 to 6.3): ``check --workers 2`` was 1.13 times as fast as ``--workers 0`` on 512 MiB, and slower
on 256 MiB and less (0.56x); 1 GiB was chosen when the workers took 8 s to start."""

PRELOAD = (__name__, EXPLAINER)
"""What the forkserver of a check's local workers imports before it forks them: this module (the
work's functions) and python-jsonschema, which explains a message that does not conform, without
building rfc3987_syntax's grammars (:mod:`pgm_explore.validation._preload`): a tenth of a second
there, once, where each worker spent more than a second on it at its first such message."""


def check_paths(
    paths: Iterable[str | os.PathLike[str]],
    *,
    parallel: bool = True,
    workers: int | None = None,
    scheduler: str | None = None,
) -> Iterator[TranscriptFinding]:
    """Stream every finding of a transcript spread over ``paths`` (read in order, one checker).

    Only findings are produced; nothing about a message is kept once it is checked
    beyond what later messages can refer to. Each message is read, decoded and validated,
    and what the rules read of it (its facts) made, where the work runs: ``scheduler`` (a
    Dask scheduler's address), or ``workers`` local worker processes (0: this process),
    or by default (with ``parallel``) local workers for a transcript of
    :data:`CHECK_BYTES` or more; the rules then run here, in order. The findings are the
    same wherever the work runs.
    """
    names = [os.fspath(path) for path in paths]
    if not parallel and workers is None and scheduler is None:
        workers = 0
    with engine_for(names, workers=workers, scheduler=scheduler, min_bytes=CHECK_BYTES, preload=PRELOAD) as engine:
        yield from check_facts(names, engine)


def check_facts(paths: Iterable[str], engine: Engine) -> Iterator[TranscriptFinding]:
    """The findings of the transcript ``paths``, the facts of its messages made by ``engine``."""
    checker = TranscriptChecker(contexts=False)
    feed = checker.feed_run
    with older_objects_frozen():
        for path in paths:
            for head, lines, facts in iter_facts(path, engine):
                for found in feed(head, lines, facts):
                    yield from found.findings
    yield from checker.finish()
