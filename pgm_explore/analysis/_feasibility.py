"""The feasibility tables: each step of a BKN-DAC feasibility Request, its reported and its predicted
PA Status (MMM-TEC), and the counts of each status (BKN-DAC Table 3, Feasibility; NOTES 6.3 F1-F7).
"""

from __future__ import annotations

from collections import Counter, defaultdict, deque
from collections.abc import Mapping
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
from pgm_explore.analysis._tabulation import Pairs
from pgm_explore.dialogue import Message, Transcript
from pgm_explore.dialogue.precheck import Prediction
from pgm_explore.spec.process_actions import PA_STATUS_CODES, StatementError, parse_statement

__all__ = ["feasibility", "pa_status_counts"]

# --- feasibility ------------------------------------------------------------------------------------


@dataclass
class _FeasibilityRequest:
    """One BKN-DAC feasibility Request with what the table and the plots need of it: its steps as
    they were asked (Step, Statement, the action the parser reads, the prediction), and, once its
    Response comes, what that reports of each Step."""

    dialog: str | None
    request_id: str | None
    steps: list[tuple[Any, Any, str | None, str | None]]
    overall: str | None = None
    """The Response's Feasibility.Overall (None while unanswered)."""
    reported: dict[Any, tuple[str | None, str | None]] = field(default_factory=dict)
    """Step -> (PAStatus, Reason) of the Response's first report of each Step."""

    @property
    def rows(self) -> list[tuple[Any, ...]]:
        """Its rows of :func:`feasibility`."""
        nothing = (None, None)
        return [
            (
                self.dialog,
                self.request_id,
                _int(step),
                _str(statement),
                action,
                *self.reported.get(_step_key(step), nothing),
                self.overall,
                predicted,
            )
            for step, statement, action, predicted in self.steps
        ]


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


class _Feasibility(Pairs):
    """Every BKN-DAC feasibility Request in transcript order, its steps as rows of :func:`feasibility`,
    each answered by the Response :meth:`Transcript.exchanges <pgm_explore.dialogue.Transcript.exchanges>`
    pairs it with, as the messages go by.

    The predictions are the checker's own (:meth:`Transcript.predicted
    <pgm_explore.dialogue.Transcript.predicted>`), made under the ActionContext it had in force when
    the Request came: the ones behind its ``precheck-differs`` warnings.
    """

    members = Pairs.members | {"Kind", "ProcessActions", "Feasibility"}

    def __init__(self) -> None:
        super().__init__(frozenset({"BKN-DAC"}))
        self.requests: list[_FeasibilityRequest] = []
        self._asked: _FeasibilityRequest | None = None  # (the message being told, if a feasibility Request)

    def add(self, m: Message, predictions: list[Prediction] | None) -> None:
        self._asked = self._request(m, predictions) if m.type == "BKN-DAC" and m.mode == "RQ" else None
        if self._asked is not None:
            self.requests.append(self._asked)
        super().add(m, predictions)

    @staticmethod
    def _request(m: Message, predictions: list[Prediction] | None) -> _FeasibilityRequest | None:
        items = m.get("ProcessActions")
        if m.get("Kind") != "feasibility" and not isinstance(items, list):
            return None
        # The checker pre-checks the steps with an integer Step and a string Statement, in Step order;
        # a Step given twice has a prediction for each, taken in turn.
        predicted: dict[Any, deque[str]] = defaultdict(deque)
        for prediction in predictions or ():
            predicted[prediction.step].append(prediction.predicted)
        steps = []
        for item in _list(items):
            if isinstance(item, dict):
                step, statement = item.get("Step"), item.get("Statement")
                queue = predicted.get(step) if _checked(item) else None
                steps.append((step, statement, _action(statement), queue.popleft() if queue else None))
        return _FeasibilityRequest(m.dialog, _str(m.get("QueryID")), steps)

    def request(self, m: Message) -> Any:
        return self._asked  # (a Request of another Kind holds its exchange, its Response unread)

    def response(self, m: Message, request: Any) -> Any:
        if request is not None:
            result = _dict(m.get("Feasibility"))
            request.overall = _str(result.get("Overall"))
            reported = request.reported
            for item in _list(result.get("Steps")):
                if isinstance(item, dict):
                    key = _step_key(item.get("Step"))
                    if key not in reported:  # (the first report counts, as in compare())
                        reported[key] = (_str(item.get("PAStatus")), _str(item.get("Reason")))
        return True

    def frame(self) -> pd.DataFrame:
        return _frame([row for request in self.requests for row in request.rows], _FEASIBILITY_DTYPES)


def _feasibility_requests(t: Transcript) -> list[_FeasibilityRequest]:
    """Every BKN-DAC feasibility Request of ``t`` in transcript order (see :class:`_Feasibility`)."""
    tabulation = _Feasibility()
    predictions = t.predictions
    for message in t.messages:
        tabulation.add(message, predictions.get(message.position))
    return tabulation.requests


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
    return _Feasibility().over(t)


def pa_status_counts(t: Transcript, *, predicted: bool = False) -> pd.DataFrame:
    """How many steps of :func:`feasibility` have each PA Status (columns :data:`PA_STATUS_COLUMNS`).

    Always ten rows, the codes of the BKN-DAC spec in its order, zeros included. ``predicted=True``
    counts the heuristic's ``PredictedPAStatus`` instead of the reported ``PAStatus``. Steps without
    a status, or with a value that is not one of the ten codes, are not counted.

    >>> from pgm_explore.dialogue import Transcript
    >>> pa_status_counts(Transcript())["PAStatus"].tolist()[:4]
    ['Ack', 'Clash', 'FaultyReq', 'IncID']
    """
    return _PAStatus(predicted=predicted).over(t)


class _PAStatus(_Feasibility):
    """:func:`pa_status_counts`, a message at a time: the steps of :class:`_Feasibility`, counted."""

    def __init__(self, *, predicted: bool = False) -> None:
        super().__init__()
        self.index = FEASIBILITY_COLUMNS.index("PredictedPAStatus" if predicted else "PAStatus")

    def frame(self) -> pd.DataFrame:
        index = self.index
        tally = Counter(row[index] for request in self.requests for row in request.rows)
        return _frame([(code, tally[code]) for code in PA_STATUS_CODES], _PA_STATUS_DTYPES)
