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

import math
from collections import Counter, defaultdict, deque
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import pandas as pd

from pgm_explore.dialogue import Transcript
from pgm_explore.spec import DATA_TYPES, OUTCOMES, data_type
from pgm_explore.spec.process_actions import PA_STATUS_CODES, StatementError, parse_statement
from pgm_explore.validation.findings import written

__all__ = [
    "COMMITMENTS_COLUMNS",
    "COMMITMENT_EVENTS",
    "DTYPES",
    "EXCHANGES_COLUMNS",
    "FEASIBILITY_COLUMNS",
    "FINDINGS_COLUMNS",
    "MESSAGES_COLUMNS",
    "OUTCOMES_COLUMNS",
    "PA_STATUS_COLUMNS",
    "TABLES",
    "commitments",
    "exchanges",
    "feasibility",
    "findings",
    "messages",
    "outcomes",
    "pa_status_counts",
]

_MESSAGES_DTYPES: Mapping[str, str] = {
    "position": "int64",
    "source": "string",
    "type": "string",
    "mode": "string",
    "dialog": "string",
    "session": "string",
    "query_id": "string",
    "request_id": "string",
    "turn": "Int64",
    "kind": "string",
    "outcome": "string",
    "time": "float64",
    "conforms": "bool",
    "errors": "int64",
    "warnings": "int64",
}
_EXCHANGES_DTYPES: Mapping[str, str] = {
    "type": "string",
    "dialog": "string",
    "turn": "Int64",
    "kind": "string",
    "request": "string",
    "request_source": "string",
    "response": "string",
    "response_source": "string",
    "latency": "float64",
    "outcome": "string",
}
_FEASIBILITY_DTYPES: Mapping[str, str] = {
    "DialogID": "string",
    "RequestID": "string",
    "Step": "Int64",
    "Statement": "string",
    "Action": "string",
    "PAStatus": "string",
    "Reason": "string",
    "Overall": "string",
    "PredictedPAStatus": "string",
}
_PA_STATUS_DTYPES: Mapping[str, str] = {"PAStatus": "string", "count": "int64"}
OUTCOMES_DTYPES: Mapping[str, str] = {
    "type": "string",
    "kind": "string",
    "answered": "int64",
    "partially_answered": "int64",
    "not_answered": "int64",
    "unanswered": "int64",
    "total": "int64",
}
_COMMITMENTS_DTYPES: Mapping[str, str] = {
    "dialog": "string",
    "source": "string",
    "position": "int64",
    "commitment": "string",
    "event": "string",
    "statement": "string",
}
_FINDINGS_DTYPES: Mapping[str, str] = {
    "source": "string",
    "dialog": "string",
    "type": "string",
    "severity": "string",
    "rule": "string",
    "path": "string",
    "message": "string",
    "spec": "string",
}

DTYPES: Mapping[str, Mapping[str, str]] = {
    "messages": _MESSAGES_DTYPES,
    "exchanges": _EXCHANGES_DTYPES,
    "feasibility": _FEASIBILITY_DTYPES,
    "pastatus": _PA_STATUS_DTYPES,
    "outcomes": OUTCOMES_DTYPES,
    "commitments": _COMMITMENTS_DTYPES,
    "findings": _FINDINGS_DTYPES,
}
"""The dtype of every column of every table, by the table's name in :data:`TABLES`, in column order.

>>> DTYPES["messages"]["turn"], DTYPES["exchanges"]["latency"], DTYPES["feasibility"]["Step"]
('Int64', 'float64', 'Int64')
"""

MESSAGES_COLUMNS: tuple[str, ...] = tuple(_MESSAGES_DTYPES)
"""Columns of :func:`messages`, in order."""
EXCHANGES_COLUMNS: tuple[str, ...] = tuple(_EXCHANGES_DTYPES)
"""Columns of :func:`exchanges`, in order."""
FEASIBILITY_COLUMNS: tuple[str, ...] = tuple(_FEASIBILITY_DTYPES)
"""Columns of :func:`feasibility`, in order (named as in BKN-DAC, ``PredictedPAStatus`` is the heuristic's)."""
PA_STATUS_COLUMNS: tuple[str, ...] = tuple(_PA_STATUS_DTYPES)
"""Columns of :func:`pa_status_counts`, in order."""
OUTCOMES_COLUMNS: tuple[str, ...] = tuple(OUTCOMES_DTYPES)
"""Columns of :func:`outcomes`, in order."""
COMMITMENTS_COLUMNS: tuple[str, ...] = tuple(_COMMITMENTS_DTYPES)
"""Columns of :func:`commitments`, in order."""
FINDINGS_COLUMNS: tuple[str, ...] = tuple(_FINDINGS_DTYPES)
"""Columns of :func:`findings`, in order (unlike ``validation.FINDING_COLUMNS``: ``dialog``, no ``mode``)."""

COMMITMENT_EVENTS: tuple[str, ...] = ("submitted", "released", "retained", "conflicting", "status-released")
"""The values of the ``event`` column of :func:`commitments`: two a Request makes, three a Response reports."""

# CommitmentStatus[].Status -> event; "released" gets its own name so that a Request's release and a
# Response's confirmation of it stay apart in the timeline.
_STATUS_EVENTS: Mapping[str, str] = {
    "retained": "retained",
    "conflicting": "conflicting",
    "released": "status-released",
}


# --- reading values as the tables show them -------------------------------------------------------


def _str(value: Any) -> str | None:
    return value if isinstance(value, str) else None


def _int(value: Any) -> int | None:
    """An integral JSON number as an int (``2.0`` is 2, as the transcript checker reads TurnIndex)."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    if isinstance(value, float) and not (math.isfinite(value) and value.is_integer()):
        return None
    return int(value)


def _list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []


def _dict(value: Any) -> Mapping[str, Any]:
    return value if isinstance(value, dict) else {}


def _step_key(value: Any) -> Any:
    # Steps are compared the way the checker compares them (1 == 1.0), but a bool is no step number and
    # an unhashable value from a broken message must not raise.
    if isinstance(value, int | float | str) and not isinstance(value, bool):
        return value
    return ("not-a-step", repr(value))


_INT64 = range(-(2**63), 2**63)


def _series(values: Sequence[Any], dtype: str) -> pd.Series:
    """A column of ``dtype``; for Int64, ``object`` with exact ints when a value does not fit,
    and, for an int longer than Python writes (only a dict built in Python holds one), its size
    in words: no table, CSV or JSON could show it.

    >>> _series([1, None], "Int64").dtype, _series([2**64, None, 10**5000], "Int64").tolist()
    (Int64Dtype(), [18446744073709551616, <NA>, 'an integer of about 5,000 digits'])
    """
    if dtype == "Int64" and any(value is not None and value not in _INT64 for value in values):
        return pd.Series([_shown_int(value) for value in values], dtype="object")
    return pd.Series(list(values), dtype=dtype)


def _shown_int(value: Any) -> Any:
    if value is None:
        return pd.NA
    if isinstance(value, int) and value.bit_length() >= 14_000:  # near sys.get_int_max_str_digits()
        try:
            repr(value)
        except ValueError:
            return written(value)
    return value


def _frame(rows: Sequence[Sequence[Any]], dtypes: Mapping[str, str]) -> pd.DataFrame:
    """Rows (tuples in column order) as a DataFrame with exactly these columns and, save for whole
    numbers beyond 64 bits (:func:`_series`), these dtypes."""
    columns = list(zip(*rows, strict=True)) if rows else [() for _ in dtypes]
    return pd.DataFrame(
        {name: _series(values, dtype) for (name, dtype), values in zip(dtypes.items(), columns, strict=True)}
    )


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
    counts = Counter((f.source, f.severity) for f in t.findings)
    rows = []
    for m in t.messages:
        id_field = "PCPromptID" if m.type == "PC Prompt" else "QueryID"
        rows.append(
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
                m.time,
                m.report.conforms,
                counts[m.source, "error"],
                counts[m.source, "warning"],
            )
        )
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
    rows = []
    for e in t.exchanges():
        response = e.response
        rows.append(
            (
                e.type,
                e.dialog,
                _int(e.request.get("TurnIndex")),
                _str(e.request.get("Kind")),
                _str(e.request.get("QueryID")),
                e.request.source,
                _str(response.get("QueryID")) if response else None,
                response.source if response else None,
                e.latency,
                _str(response.get("Outcome")) if response else None,
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
    counts: dict[tuple[str, str | None], Counter[str]] = defaultdict(Counter)
    for e in t.exchanges():
        tally = counts[e.type, _str(e.request.get("Kind"))]
        tally["total"] += 1
        if e.response is None:
            tally["unanswered"] += 1
        elif (outcome := e.response.get("Outcome")) in OUTCOMES:
            tally[outcome] += 1
    type_rank = {dt.name: i for i, dt in enumerate(DATA_TYPES)}

    def rank(key: tuple[str, str | None]) -> tuple[Any, ...]:
        type_name, kind = key
        kinds = _kind_order(type_name)
        kind_rank = (0, kinds.index(kind), "") if kind in kinds else (1, 0, kind) if kind is not None else (2, 0, "")
        return (type_rank.get(type_name, len(type_rank)), type_name, *kind_rank)

    rows = [
        (type_name, kind, *(tally[o] for o in OUTCOMES), tally["unanswered"], tally["total"])
        for (type_name, kind), tally in sorted(counts.items(), key=lambda item: rank(item[0]))
    ]
    return _frame(rows, OUTCOMES_DTYPES)


# --- feasibility ------------------------------------------------------------------------------------


@dataclass
class _FeasibilityRequest:
    """One BKN-DAC feasibility Request with what the table and the plots need of it."""

    dialog: str | None
    request_id: str | None
    overall: str | None
    rows: list[tuple[Any, ...]] = field(default_factory=list)


def _action(statement: Any) -> str | None:
    if not isinstance(statement, str):
        return None
    try:
        return parse_statement(statement).action
    except StatementError:
        return None


def _checked(item: Mapping[str, Any]) -> bool:
    step = item.get("Step")
    return isinstance(step, int) and not isinstance(step, bool) and isinstance(item.get("Statement"), str)


def _feasibility_requests(t: Transcript) -> Iterator[_FeasibilityRequest]:
    """Every BKN-DAC feasibility Request in transcript order, its steps as rows of :func:`feasibility`.

    The predictions are the checker's own (:meth:`Transcript.predicted`), made under the ActionContext
    it had in force when the Request came: the ones behind its ``precheck-differs`` warnings.
    """
    responses = {e.request.position: e.response for e in t.exchanges()}
    for m in t.messages:
        if m.type != "BKN-DAC" or m.mode != "RQ":
            continue
        items = m.get("ProcessActions")
        if m.get("Kind") != "feasibility" and not isinstance(items, list):
            continue
        steps = [item for item in _list(items) if isinstance(item, dict)]
        response = responses.get(m.position)
        result = _dict(response.get("Feasibility")) if response else {}
        reported: dict[Any, Mapping[str, Any]] = {}
        for item in _list(result.get("Steps")):
            if isinstance(item, dict):
                reported.setdefault(_step_key(item.get("Step")), item)  # the first report counts, as in compare()

        # The checker pre-checks the steps with an integer Step and a string Statement, in Step order;
        # a Step given twice has a prediction for each, taken in turn.
        predicted: dict[Any, deque[str]] = defaultdict(deque)
        for prediction in t.predicted(m) or ():
            predicted[prediction.step].append(prediction.predicted)

        request = _FeasibilityRequest(m.dialog, _str(m.get("QueryID")), _str(result.get("Overall")))
        for item in steps:
            step, statement = item.get("Step"), item.get("Statement")
            answer = reported.get(_step_key(step), {})
            queue = predicted.get(step) if _checked(item) else None
            request.rows.append(
                (
                    m.dialog,
                    request.request_id,
                    _int(step),
                    _str(statement),
                    _action(statement),
                    _str(answer.get("PAStatus")),
                    _str(answer.get("Reason")),
                    request.overall,
                    queue.popleft() if queue else None,
                )
            )
        yield request


def feasibility(t: Transcript) -> pd.DataFrame:
    """One row per Process Action of every BKN-DAC feasibility Request (columns :data:`FEASIBILITY_COLUMNS`).

    A feasibility Request is a BKN-DAC Request with Kind ``feasibility`` or with ProcessActions.
    ``DialogID`` and ``RequestID`` (the Request's QueryID) say which Request; ``Step`` and
    ``Statement`` are the ProcessActions item's, ``Action`` the action the statement parser reads
    (missing when the statement does not parse). ``PAStatus`` and ``Reason`` are what the Response
    reports for that Step (its first report), ``Overall`` the Response's Feasibility.Overall; all
    three are missing while the Request is unanswered or when the Response reports nothing for it.
    Steps a Response reports that the Request did not ask about have no row.

    ``PredictedPAStatus`` is a HEURISTIC (:func:`pgm_explore.dialogue.precheck.predict`): the PA
    Status the ActionContext suggests, with the ActionContext of the PC Prompt that opened the
    dialogue, else of the latest earlier PC Prompt of the same SessionID. It is missing when that PC
    Prompt has no ActionContext (or there is none), and for steps without an integer Step and a
    string Statement, which the pre-check leaves out.

    >>> from pgm_explore.dialogue import Transcript
    >>> t = Transcript.from_documents([
    ...     {"Header": "PGM-PCP-V1.0", "DialogID": "d", "SessionID": "s", "ActionContext": {"Repertoire": ["MM-Move"]}},
    ...     {"Header": "PGM-KDA-V1.0", "Mode": "RQ", "QueryID": "q-1", "DialogID": "d-dac", "SessionID": "s",
    ...      "Kind": "feasibility", "ProcessActions": [{"Step": 0, "Statement": "MM-Add Nil item-1 At ML-Home"}]}])
    >>> feasibility(t)[["Step", "Action", "PAStatus", "PredictedPAStatus"]].astype(object).values.tolist()
    [[0, 'MM-Add', <NA>, 'FaultyReq']]
    """
    return _frame([row for request in _feasibility_requests(t) for row in request.rows], _FEASIBILITY_DTYPES)


def pa_status_counts(t: Transcript, *, predicted: bool = False) -> pd.DataFrame:
    """How many steps of :func:`feasibility` have each PA Status (columns :data:`PA_STATUS_COLUMNS`).

    Always ten rows, the codes of the BKN-DAC spec in its order, zeros included. ``predicted=True``
    counts the heuristic's ``PredictedPAStatus`` instead of the reported ``PAStatus``. Steps without
    a status, or with a value that is not one of the ten codes, are not counted.

    >>> from pgm_explore.dialogue import Transcript
    >>> pa_status_counts(Transcript())["PAStatus"].tolist()[:4]
    ['Ack', 'Clash', 'FaultyReq', 'IncID']
    """
    column = "PredictedPAStatus" if predicted else "PAStatus"
    index = FEASIBILITY_COLUMNS.index(column)
    tally = Counter(row[index] for request in _feasibility_requests(t) for row in request.rows)
    return _frame([(code, tally[code]) for code in PA_STATUS_CODES], _PA_STATUS_DTYPES)


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
    statements: dict[tuple[str | None, str], str] = {}
    rows: list[tuple[Any, ...]] = []
    for m in t.messages:
        if m.type != "BKN-DAC":
            continue
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
    return _frame(rows, _COMMITMENTS_DTYPES)


# --- findings ---------------------------------------------------------------------------------------


def findings(t: Transcript) -> pd.DataFrame:
    """One row per finding of the transcript, in the order found (columns :data:`FINDINGS_COLUMNS`).

    ``path`` is a JSONPath; ``spec`` the clause the finding rests on; ``dialog`` and ``type`` are
    missing when the message has no DialogID or no known type.

    >>> from pgm_explore.dialogue import Transcript
    >>> findings(Transcript.from_documents([{"Header": "nope"}]))[["severity", "rule", "path"]].values.tolist()
    [['error', 'header-unknown', '$.Header']]
    """
    rows = [(f.source, f.dialog, f.type, f.severity, f.rule, f.path, f.message, f.spec) for f in t.findings]
    return _frame(rows, _FINDINGS_DTYPES)


TABLES: Mapping[str, Callable[[Transcript], pd.DataFrame]] = {
    "messages": messages,
    "exchanges": exchanges,
    "feasibility": feasibility,
    "pastatus": pa_status_counts,
    "outcomes": outcomes,
    "commitments": commitments,
    "findings": findings,
}
"""Every table by its name on the command line (``pgm-explore table NAME``); :data:`DTYPES` has the same keys."""
