"""Tidy tables of a transcript: one pure function per table, each with a fixed column order and dtypes.

Every table is built row by row in plain Python and turned into a DataFrame once, with the dtypes of
its ``*_DTYPES`` mapping, so that an empty transcript gives an empty frame with the same columns and
dtypes as a full one. Text is the nullable ``string`` dtype and whole numbers that may be missing are
``Int64``, both with ``pd.NA`` for "missing"; seconds are ``float64`` with ``NaN``. A value that has the
wrong JSON type in the message (a number where an identifier belongs) is shown as missing: the
findings say what is wrong with it, the tables only show what can be read. A whole number beyond the
64-bit range, which the schemas allow for TurnIndex and Step, makes its column ``object`` dtype holding
exact Python ints, in that table only: never a wrong value, never an exception (docs/tables.md).
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import pandas as pd

from pgm_explore._progress import Progress
from pgm_explore.analysis._catalog import CATALOG
from pgm_explore.analysis._columns import (
    _COMMITMENTS_DTYPES,
    _EXCHANGES_DTYPES,
    _FINDINGS_DTYPES,
    _MESSAGES_DTYPES,
    OUTCOMES_DTYPES,
    _frame,
    _int,
    _list,
    _ms,
    _str,
    _utc,
)
from pgm_explore.analysis._feasibility import _Feasibility, _PAStatus, feasibility, pa_status_counts  # noqa: F401 - tables, by name
from pgm_explore.analysis._tabulation import CLOCK, Pairs, Tabulation
from pgm_explore.dialogue import Message, Transcript, TranscriptFinding
from pgm_explore.dialogue._stream import iter_checked_paths
from pgm_explore.dialogue._transcript import latency
from pgm_explore.dialogue.precheck import Prediction
from pgm_explore.spec import DATA_TYPES, OUTCOMES, data_type

__all__ = ["TABLES", "commitments", "exchanges", "findings", "messages", "outcomes"]

# CommitmentStatus[].Status -> event; "released" gets its own name so that a Request's release and a
# Response's confirmation of it stay apart in the timeline.
_STATUS_EVENTS: Mapping[str, str] = {
    "retained": "retained",
    "conflicting": "conflicting",
    "released": "status-released",
}


# --- messages ---------------------------------------------------------------------------------------


def messages(t: Transcript) -> pd.DataFrame:
    """One row per message of the transcript, in transcript order (columns :data:`MESSAGES_COLUMNS`).

    ``query_id`` is the QueryID, or the PCPromptID of a PC Prompt; ``kind`` and ``outcome`` are the
    message's own Kind (Requests) and Outcome (Responses); ``time`` is the QueryTime (PCPromptTime) in
    seconds on its own clock; ``errors`` and ``warnings`` count every finding of the transcript at the
    message's source, the dialogue rules included.

    >>> from pgm_explore.dialogue import Transcript
    >>> t = Transcript.from_documents([{"Header": "PGM-KDA-V1.0", "Mode": "RQ", "QueryID": "q-1", "Kind": "feasibility"}])
    >>> messages(t)[["type", "mode", "query_id", "turn", "kind", "conforms"]].to_dict("records")
    [{'type': 'BKN-DAC', 'mode': 'RQ', 'query_id': 'q-1', 'turn': None, 'kind': 'feasibility', 'conforms': False}]
    """
    return _Messages().over(t)


class _Messages(Tabulation):
    """:func:`messages`, a message at a time: each row is made as its message goes by, and its
    counts of errors and warnings added at the end (an unanswered Request's finding comes last)."""

    members = (
        frozenset({"DialogID", "SessionID", "PCPromptID", "QueryID", "RequestID", "TurnIndex", "Kind", "Outcome"})
        | CLOCK
    )

    def __init__(self) -> None:
        self.rows: list[tuple[Any, ...]] = []
        self.counts: Counter[tuple[str, str]] = Counter()

    def add(self, m: Message, predictions: list[Prediction] | None) -> None:
        id_field = "PCPromptID" if m.type == "PC Prompt" else "QueryID"
        clock = m.clock
        self.rows.append(
            (
                m.position,
                m.source,
                m.type,
                m.mode,
                m.dialog,
                _str(m.get("SessionID")),
                _str(m.get(id_field)),
                _str(m.get("RequestID")),
                _int(m.get("TurnIndex")),
                _str(m.get("Kind")),
                _str(m.get("Outcome")),
                clock[1] if clock else None,
                _utc(clock),
                m.report.conforms,
            )
        )

    def note(self, findings: Sequence[TranscriptFinding]) -> None:
        counts = self.counts
        for f in findings:
            counts[f.source, f.severity] += 1

    def frame(self) -> pd.DataFrame:
        counts = self.counts
        rows = [(*row, counts[row[1], "error"], counts[row[1], "warning"]) for row in self.rows]
        return _frame(rows, _MESSAGES_DTYPES)


# --- exchanges and outcomes -------------------------------------------------------------------------


def exchanges(t: Transcript) -> pd.DataFrame:
    """One row per Request with its Response, in the order of the Requests (columns :data:`EXCHANGES_COLUMNS`).

    The pairs are those of :meth:`Transcript.exchanges`: a Request needs a QueryID, a DialogID and a
    known type to be listed. ``turn`` and ``kind`` are the Request's; ``response``,
    ``response_source`` and ``outcome`` are missing while the Request is unanswered; ``latency`` is
    in seconds, missing unless both QueryTimes are readable and both absolute or both relative.

    >>> from pgm_explore.dialogue import Transcript
    >>> t = Transcript.from_documents([
    ...     {"Header": "PGM-KPA-V1.0", "Mode": "RQ", "QueryID": "q-1", "DialogID": "d", "TurnIndex": 0},
    ...     {"Header": "PGM-KPA-V1.0", "Mode": "RS", "QueryID": "q-2", "DialogID": "d", "RequestID": "q-1",
    ...      "TurnIndex": 0, "Outcome": "not_answered"}])
    >>> exchanges(t)[["type", "request", "response", "outcome"]].values.tolist()
    [['BKN-PAL', 'q-1', 'q-2', 'not_answered']]
    """
    return _Exchanges().over(t)


class _Exchanges(Pairs):
    """:func:`exchanges`, a message at a time."""

    members = Pairs.members | {"TurnIndex", "Kind", "Outcome"} | CLOCK

    def request(self, m: Message) -> Any:
        return (m.type, m.dialog, _int(m.get("TurnIndex")), _str(m.get("Kind")), m.get("QueryID"), m.source, m.clock)

    def response(self, m: Message, request: Any) -> Any:
        return (_str(m.get("QueryID")), m.source, m.clock, _str(m.get("Outcome")))

    def frame(self) -> pd.DataFrame:
        rows: list[tuple[Any, ...]] = []
        for (type_name, dialog, turn, kind, query, source, sent), answer in self.pairs.values():
            if answer is None:
                rows.append((type_name, dialog, turn, kind, query, source, None, None, None, None, None))
                continue
            response, response_source, answered, outcome = answer
            seconds = latency(sent, answered)
            rows.append(
                (
                    type_name,
                    dialog,
                    turn,
                    kind,
                    query,
                    source,
                    response,
                    response_source,
                    seconds,
                    _ms(seconds),
                    outcome,
                )
            )
        return _frame(rows, _EXCHANGES_DTYPES)


def _kind_order(type_name: str) -> Sequence[str]:
    try:
        enum = data_type(type_name).schema["properties"]["Kind"]["enum"]
    except (ValueError, KeyError):  # BKN-PAL Requests have no Kind
        return ()
    return tuple(enum)


def outcomes(t: Transcript) -> pd.DataFrame:
    """Outcomes of the Requests per data type and Kind (columns :data:`OUTCOMES_COLUMNS`).

    One row per (type, Kind) that occurs among the :func:`exchanges`; BKN-PAL Requests have no Kind
    (``kind`` missing). ``answered``, ``partially_answered`` and ``not_answered`` count the
    Responses' Outcomes, ``unanswered`` the Requests without a Response, ``total`` every Request: a
    Response whose Outcome is missing or none of the three counts in ``total`` only. Rows are in the
    order of the spec: data types as in the texts, Kinds as in their Kind row, then other Kinds
    alphabetically, then no Kind.

    >>> from pgm_explore.dialogue import Transcript
    >>> outcomes(Transcript()).columns.tolist()
    ['type', 'kind', 'answered', 'partially_answered', 'not_answered', 'unanswered', 'total']
    """
    return _Outcomes().over(t)


class _Outcomes(Pairs):
    """:func:`outcomes`, a message at a time: of each exchange, its type and Kind, and its
    Response's Outcome."""

    members = Pairs.members | {"Kind", "Outcome"}

    def request(self, m: Message) -> Any:
        return (m.type, _str(m.get("Kind")))

    def response(self, m: Message, request: Any) -> Any:
        return (_str(m.get("Outcome")),)  # (a tuple: never None, whatever the Outcome)

    def frame(self) -> pd.DataFrame:
        counts: dict[tuple[str, str | None], Counter[str]] = defaultdict(Counter)
        for key, answer in self.pairs.values():
            tally = counts[key]
            tally["total"] += 1
            if answer is None:
                tally["unanswered"] += 1
            elif (outcome := answer[0]) in OUTCOMES:
                tally[outcome] += 1
        type_rank = {dt.name: i for i, dt in enumerate(DATA_TYPES)}

        def rank(key: tuple[str, str | None]) -> tuple[Any, ...]:
            type_name, kind = key
            kinds = _kind_order(type_name)
            kind_rank = (
                (0, kinds.index(kind), "") if kind in kinds else (1, 0, kind) if kind is not None else (2, 0, "")
            )
            return (type_rank.get(type_name, len(type_rank)), type_name, *kind_rank)

        rows = [
            (type_name, kind, *(tally[o] for o in OUTCOMES), tally["unanswered"], tally["total"])
            for (type_name, kind), tally in sorted(counts.items(), key=lambda item: rank(item[0]))
        ]
        return _frame(rows, OUTCOMES_DTYPES)


# --- commitments ------------------------------------------------------------------------------------


def commitments(t: Transcript) -> pd.DataFrame:
    """The BKN-DAC commitments timeline: one row per event, in transcript order (columns :data:`COMMITMENTS_COLUMNS`).

    A Request's ``Commitments`` items are ``submitted`` events and its ``ReleasedCommitmentIDs``
    ``released`` ones; a Response's ``CommitmentStatus`` items are ``retained``, ``conflicting`` or
    ``status-released`` events (a Status outside the three gives no row). ``statement`` is the
    submitted Statement, and for the other events the Statement most recently submitted under that
    CommitmentID in the dialogue (missing if none was). ``position`` is the message's.

    >>> from pgm_explore.dialogue import Transcript
    >>> t = Transcript.from_documents([
    ...     {"Header": "PGM-KDA-V1.0", "Mode": "RQ", "DialogID": "d", "Kind": "commitment",
    ...      "Commitments": [{"CommitmentID": "c-1", "Statement": "Budget is 150."}], "ReleasedCommitmentIDs": ["c-0"]},
    ...     {"Header": "PGM-KDA-V1.0", "Mode": "RS", "DialogID": "d",
    ...      "CommitmentStatus": [{"CommitmentID": "c-1", "Status": "retained"}]}])
    >>> commitments(t)[["position", "commitment", "event", "statement"]].astype(object).values.tolist()
    [[0, 'c-1', 'submitted', 'Budget is 150.'], [0, 'c-0', 'released', <NA>], [1, 'c-1', 'retained', 'Budget is 150.']]
    """
    return _Commitments().over(t)


class _Commitments(Tabulation):
    """:func:`commitments`, a message at a time: its rows, and the latest Statement of each
    CommitmentID of each dialogue."""

    members = frozenset({"DialogID", "Commitments", "ReleasedCommitmentIDs", "CommitmentStatus"})

    def __init__(self) -> None:
        self.statements: dict[tuple[str | None, str], str] = {}
        self.rows: list[tuple[Any, ...]] = []

    def add(self, m: Message, predictions: list[Prediction] | None) -> None:
        if m.type != "BKN-DAC":
            return
        statements, rows = self.statements, self.rows
        dialog = m.dialog
        if m.mode == "RQ":
            for item in _list(m.get("Commitments")):
                if isinstance(item, dict) and isinstance(cid := item.get("CommitmentID"), str):
                    statement = _str(item.get("Statement"))
                    if statement is not None:
                        statements[dialog, cid] = statement
                    rows.append((dialog, m.source, m.position, cid, "submitted", statement))
            for cid in _list(m.get("ReleasedCommitmentIDs")):
                if isinstance(cid, str):
                    rows.append((dialog, m.source, m.position, cid, "released", statements.get((dialog, cid))))
        elif m.mode == "RS":
            for item in _list(m.get("CommitmentStatus")):
                if not isinstance(item, dict) or not isinstance(cid := item.get("CommitmentID"), str):
                    continue
                event = _STATUS_EVENTS.get(item["Status"]) if isinstance(item.get("Status"), str) else None
                if event is not None:
                    rows.append((dialog, m.source, m.position, cid, event, statements.get((dialog, cid))))

    def frame(self) -> pd.DataFrame:
        return _frame(self.rows, _COMMITMENTS_DTYPES)


# --- findings ---------------------------------------------------------------------------------------


def findings(t: Transcript) -> pd.DataFrame:
    """One row per finding of the transcript, in the order found (columns :data:`FINDINGS_COLUMNS`).

    ``path`` is a JSONPath; ``spec`` the clause the finding rests on; ``dialog`` and ``type`` are
    missing when the message has no DialogID or no known type.

    >>> from pgm_explore.dialogue import Transcript
    >>> findings(Transcript.from_documents([{"Header": "nope"}]))[["severity", "rule", "path"]].values.tolist()
    [['error', 'header-unknown', '$.Header']]
    """
    return _Findings().over(t)


class _Findings(Tabulation):
    """:func:`findings`, a finding at a time."""

    def __init__(self) -> None:
        self.rows: list[tuple[Any, ...]] = []

    def note(self, findings: Sequence[TranscriptFinding]) -> None:
        self.rows += [(f.source, f.dialog, f.type, f.severity, f.rule, f.path, f.message, f.spec) for f in findings]

    def frame(self) -> pd.DataFrame:
        return _frame(self.rows, _FINDINGS_DTYPES)


# Each function is found by the name CATALOG gives it: a new table is declared there, once.
TABLES: Mapping[str, Callable[[Transcript], pd.DataFrame]] = {
    table.name: globals()[table.function] for table in CATALOG
}
"""Every table by its name on the command line (``pgm-explore table NAME``), in the order of
:data:`~pgm_explore.analysis.TABLE_CATALOG`, where each is declared; :data:`DTYPES` has the same keys."""

_MADE_BY: Mapping[str, Callable[[], Tabulation]] = {
    "messages": _Messages,
    "exchanges": _Exchanges,
    "feasibility": _Feasibility,
    "pa_status_counts": _PAStatus,
    "outcomes": _Outcomes,
    "commitments": _Commitments,
    "findings": _Findings,
}
"""The :class:`Tabulation` each table function is made by (its function is ``_MADE_BY[name]().over``), by
the function's name."""

TABULATIONS: Mapping[str, Callable[[], Tabulation]] = {table.name: _MADE_BY[table.function] for table in CATALOG}
"""How each table of :data:`TABLES` is made, by the same name: what :func:`path_table` (and each
transcript of a corpus) tells the messages of a stream."""


def path_table(
    what: str,
    paths: Sequence[str],
    *,
    bar: Progress | None = None,
) -> pd.DataFrame:
    """The table ``what`` (a name of :data:`TABLES`) of the transcript in the files ``paths`` (one
    transcript, in order), made as it is read in this process on the bulk path, as ``check`` reads them
    (:func:`~pgm_explore.dialogue._stream.iter_checked_paths`); ``bar`` is told the bytes done.
    Raises ``UnreadablePath`` as a reader does."""
    tabulation = TABULATIONS[what]()
    return tabulation.streamed(iter_checked_paths(paths, tabulation.members, bar=bar))
