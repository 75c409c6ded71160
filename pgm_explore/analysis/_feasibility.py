"""The feasibility tables: each step of a BKN-DAC feasibility Request, its reported and its predicted
PA Status (MMM-TEC), and the counts of each status (BKN-DAC Table 3, Feasibility; NOTES 6.3 F1-F7).
"""

from __future__ import annotations

from collections import Counter, defaultdict, deque
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

import pandas as pd

from pgm_explore.analysis._columns import (
    _FEASIBILITY_DTYPES,
    _PA_STATUS_DTYPES,
    FEASIBILITY_COLUMNS,
    _dict,
    _frame,
    _int,
    _list,
    _step_key,
    _str,
)
from pgm_explore.dialogue import Transcript
from pgm_explore.spec.process_actions import PA_STATUS_CODES, StatementError, parse_statement

__all__ = ["feasibility", "pa_status_counts"]

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
    reports for that Step (its first report), missing while the Request is unanswered or when the
    Response reports nothing for the Step; ``Overall`` is the Response's Feasibility.Overall, on every
    row of the Request (missing while it is unanswered).
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
