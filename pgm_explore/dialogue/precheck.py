"""A HEURISTIC feasibility pre-check: which PA Status would each Process Action of a plan receive?

Given the Process Action statements of a BKN-DAC feasibility Request and the ``ActionContext`` a PC Prompt
(or a BKN-PRC Response) gave Basic Knowledge, :func:`predict` guesses the PA Status of every step, and
:func:`compare` sets the guesses beside the statuses a Response reports.

**This is a heuristic, not a spec rule.** Only Domain Access knows the M-Instance; the ActionContext
is a summary of it, and its Rights and Rules are mostly opaque identifiers. A prediction says what
the ActionContext *suggests*; a disagreement is something to look at, not an error. Every
:class:`Prediction` carries ``heuristic=True`` so that no consumer can forget it.

The checks, in the order of the "suggested mapping to PA Status" table of NOTES 4.7 (:data:`CHECKS`);
the first failing check gives the step its status, and a step no check fails is predicted ``Ack``:

==================  ===========  ===========================================================================
check               status       fails when
==================  ===========  ===========================================================================
``statement``       FaultyReq    the statement does not parse (strict V2.2 grammar), is a Right (has a
                                 deontic verb), or uses a preposition its action's V2.2 signature never uses
``repertoire``      FaultyReq    ``Repertoire`` is given and the action is not in it
``ids``             IncID        ``known_ids`` is given and an operand that is an ID is not in it
``m-location``      LocOOR       ``MLocations`` is given and an operand that is an M-Location is not in it
``rights``          InsRights    a ``With Rights=<id>`` is not in ``RightsRefs``; or a readable May Not
                                 Right or Rule covers the step; or no readable Right covers it
``wallet``          InsValue     the step's amount brings the spending over ``WalletLimit``
``qualifier``       QualNS       ``Vocabularies`` is given and a ``With Qualifier=<q>`` is not in it
``data-qualifier``  IncDQ        never decided (needs the Data)
``clash``           Clash        the step MM-Adds an Item an earlier step placed at the same M-Location, or
                                 moves an Item from where an earlier step did not leave it
``post``            PostRef      never decided (the Service's choice)
``max-steps``       FaultyReq    the step comes after the first ``MaxSteps`` steps
==================  ===========  ===========================================================================

Conventions of the project (none of them is in the spec):

* **Order.** Steps are taken in ascending ``Step`` order (stably, so duplicates keep their order); a
  step's position in that order is what ``MaxSteps`` counts. Predictions come back in that order.
* **Repertoire vs InsRights** (NOTES 7.5 item 8): an action outside ``Repertoire`` is ``FaultyReq``.
  The Repertoire is "The Process Actions that may be used" in *this* plan, a vocabulary agreed for
  planning like ``MaxSteps`` (whose excess NOTES 4.7 also maps to FaultyReq), not a Right: Rights are
  ``RightsRefs``. Repertoire entries are compared as canonical actions (``PropertyChange`` =
  ``Property Change``); an entry that is a whole statement counts by its action.
* **IDs** are checked only when the caller passes ``known_ids`` (the ActionContext lists none). An
  operand is an ID when it is ``ItemID=<id>`` (or another ``…ID`` type name, ``Item=``, ``Process=``)
  or a single untyped word after ``Nil``/``At``/``From``/``To`` that is no type name and has a digit,
  ``-``, ``_`` or ``:`` (``item-lantern-blue-114``, ``proc-user-lucia``; not ``Message``). M-Location
  operands are left to the ``m-location`` check.
* **M-Locations.** An operand is an M-Location when it is ``MLocation=<id>`` / ``MLocationID=<id>``
  (any preposition), or an untyped single word after ``At``/``From``/``To`` that either is in
  ``MLocations`` or starts with ``ML-`` (the naming convention of the project's examples). It is in
  range when it is in ``MLocations``, compared as exact strings (no hierarchy).
* **Rights.** ``RightsRefs`` are "Identifiers of the Rights that the A-User holds", so usually opaque.
  An entry is *readable* when it is itself a Right statement (``May MM-Add Nil Item At ML-1``) or when
  ``definitions`` maps it to one or more Right statements; ``Rules`` entries likewise (a Rule is a
  Process followed by a Right: ``Any Process May Not MM-Add Nil Item At ML-Plaza-Fountain``). Then, in
  this order: a ``With Rights=<id>`` (also ``RightsID=``, ``Right=``, ``ModelRights=``, ``Requested
  Rights=``) naming an id not in ``RightsRefs`` → InsRights; a readable May Not Right, or May Not Rule
  whose Process is ``Any Process`` (``Any``, ``Every Process``, ``All Processes``, none) or equals
  ``requester``, that covers the step (:func:`~pgm_explore.spec.process_actions.covers`) → InsRights
  (May Not prevails); and when ``RightsRefs`` is non-empty and *every* entry is readable, no May/Must
  Right covering the step → InsRights. Conditional Rights and Rules (``If …``) are ignored: the event
  cannot be evaluated. Opaque entries never produce a prediction.
* **Wallet.** A step's amount is the largest of its ``With SPM=…``, ``With Value=…`` and ``With
  Transaction=…`` values that are numbers, optionally followed by a currency (``180``, ``180 AGR``,
  ``12.5EUR``): they usually describe one payment (a price model and the Transaction that pays it).
  Spending is cumulative over the steps predicted ``Ack`` (a step that fails spends nothing); the
  step that would bring it over ``WalletLimit`` is predicted InsValue. ``WalletLimit`` has no
  currency, so amounts are taken to be in the Wallet's; once two different currencies have been seen
  the check stops deciding. Amounts that are not written in the statement (a price held by the
  Service's SPM) cannot be seen.
* **Qualifiers.** ``With Qualifier=<q>`` (also ``Qualifiers=``, ``ModelQualifier=``, ``Vocabulary=``)
  whose value is not in ``Vocabularies`` → QualNS.
* **Clash** is decided only from earlier steps of the same plan predicted ``Ack``: MM-Add (MU-Add) of
  an Item at an M-Location (U-Location) where an earlier step placed it, and MM-Move (MU-Move) ``From``
  a location where the Item is known not to be because an earlier step placed or moved it elsewhere.
  What was in the scene before the plan is unknown, so "never placed" is not decided.
* Without an ActionContext only the ``statement`` (and, with ``known_ids``, the ``ids``) and ``clash``
  checks can fail.

This module holds the table and runs it step by step; what each row reads (the operand conventions,
an ActionContext compiled into :class:`~pgm_explore.dialogue._precheck_checks.ContextRules`, a statement
read once, the plan so far) is in :mod:`pgm_explore.dialogue._precheck_checks`.

>>> context = {"Repertoire": ["MM-Move", "MM-Add", "Transact"], "MLocations": ["ML-Gate", "ML-Stall"], "WalletLimit": 150}
>>> for p in predict([(0, "MM-Move Nil me From ML-Gate To ML-Stall"),
...                   (1, "Transact With Transaction=180 AGR"),
...                   (2, "MM-Add Nil item-1 At ML-Balcony")], context):
...     print(p.step, p.predicted, p.check, "-", p.reason)
0 Ack None - no check of the heuristic fails
1 InsValue wallet - 180 AGR would bring the spending to 180, over the WalletLimit 150
2 LocOOR m-location - ML-Balcony is not among the ActionContext's MLocations
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass
from operator import itemgetter
from typing import Any, Literal

import msgspec

from pgm_explore.dialogue._precheck_checks import (
    CheckName,
    ContextRules,
    Plan,
    StatementFacts,
    context_rules,
    record,
    run_checks,
    statement_facts,
)
from pgm_explore.spec.process_actions import PAStatusCode, Statement

__all__ = [
    "CHECKS",
    "Check",
    "CheckName",
    "Comparison",
    "Prediction",
    "action_context_of",
    "compare",
    "predict",
    "steps_of",
]


@dataclass(frozen=True)
class Check:
    """One row of the NOTES 4.7 mapping table as the pre-check implements it."""

    name: CheckName
    status: PAStatusCode
    condition: str
    """What must hold for the step to pass this check."""
    decided: bool
    """False for rows the heuristic never decides (the ActionContext cannot tell)."""


CHECKS: tuple[Check, ...] = (
    Check(
        "statement",
        "FaultyReq",
        "the statement parses; its action is a V2.2 action; its complements fit the action",
        True,
    ),
    Check("repertoire", "FaultyReq", "the action is in Repertoire (when Repertoire is given)", True),
    Check("ids", "IncID", "every ID operand is known (when known_ids is given)", True),
    Check("m-location", "LocOOR", "every M-Location operand is in MLocations (when MLocations is given)", True),
    Check(
        "rights",
        "InsRights",
        "a Right covering the action is held, and no applicable May Not Right or Rule forbids it",
        True,
    ),
    Check("wallet", "InsValue", "the cumulative spending of the plan stays within WalletLimit", True),
    Check("qualifier", "QualNS", "the Qualifier or vocabulary used is in Vocabularies", True),
    Check("data-qualifier", "IncDQ", "Data and Qualifier are consistent (not decidable from the ActionContext)", False),
    Check("clash", "Clash", "no conflict with an earlier step of the plan", True),
    Check("post", "PostRef", "the target Service accepts the Post (not decidable from the ActionContext)", False),
    Check("max-steps", "FaultyReq", "the step is within the first MaxSteps steps", True),
)
"""The NOTES 4.7 mapping table, in its order (which is the order in which the checks are tried)."""


class Prediction(msgspec.Struct, frozen=True):
    """The PA Status the heuristic expects for one step, and why. Always ``heuristic=True``."""

    # A frozen msgspec Struct rather than a frozen dataclass: predict makes one per step, and a
    # Struct is built through its constructor in a tenth of the time the dataclass's takes.

    step: int
    statement: str
    predicted: PAStatusCode
    reason: str
    """Plain words: what failed, or that nothing did."""
    check: CheckName | None
    """The row of :data:`CHECKS` that fired; None for Ack."""
    parsed: Statement | None = None
    """The parsed statement (None when it does not parse); left out of the repr."""
    heuristic: Literal[True] = True

    def __repr__(self) -> str:
        return (
            f"Prediction(step={self.step!r}, statement={self.statement!r}, predicted={self.predicted!r}, "
            f"reason={self.reason!r}, check={self.check!r}, heuristic={self.heuristic!r})"
        )


ComparisonKind = Literal["agree", "missed", "differs", "stricter", "unreported"]


@dataclass(frozen=True)
class Comparison:
    """A prediction beside the PA Status a Response reports for the same step."""

    step: int
    predicted: PAStatusCode | None
    """None when the Response reports a step the predictions do not have."""
    reported: str | None
    """None when the Response reports nothing for the step."""
    agree: bool
    reason: str = ""
    """The prediction's reason."""
    check: CheckName | None = None
    heuristic: Literal[True] = True

    @property
    def kind(self) -> ComparisonKind:
        """How they differ: ``missed`` (predicted Ack, reported a failure the ActionContext did not show),
        ``differs`` (two different failures), ``stricter`` (predicted a failure, reported Ack),
        ``unreported`` (one side missing) or ``agree``.

        >>> Comparison(1, "Ack", "InsValue", False).kind
        'missed'
        """
        if self.agree:
            return "agree"
        if self.predicted is None or self.reported is None:
            return "unreported"
        if self.predicted == "Ack":
            return "missed"
        return "stricter" if self.reported == "Ack" else "differs"


def _step_pairs(steps: Iterable[tuple[int, str] | Mapping[str, Any]]) -> list[tuple[Any, Any]]:
    pairs: list[tuple[Any, Any]] = []
    for item in steps:
        if type(item) is tuple and len(item) == 2:  # the usual case, without the costlier Mapping check
            pairs.append(item)
        elif isinstance(item, Mapping):
            pairs.append((item.get("Step"), item.get("Statement")))
        else:
            step, text = item
            pairs.append((step, text))
    for step, _ in pairs:
        if not isinstance(step, int) or isinstance(step, bool):
            break
    else:
        pairs.sort(key=itemgetter(0))
    return pairs


_STATUS: Mapping[CheckName, PAStatusCode] = {c.name: c.status for c in CHECKS}


def predict(
    steps: Iterable[tuple[int, str] | Mapping[str, Any]],
    action_context: Mapping[str, Any] | None,
    *,
    known_ids: Collection[str] | None = None,
    definitions: Mapping[str, str | Sequence[str]] | None = None,
    requester: str | None = None,
    lenient: bool = False,
) -> list[Prediction]:
    """HEURISTIC: the PA Status each step would probably receive, given the ActionContext.

    ``steps`` are ``(Step, Statement)`` pairs or BKN-DAC ``ProcessActions`` items. ``known_ids``
    turns on the IncID check; ``definitions`` maps RightsRefs / Rules identifiers to the Right or
    Rule statements they stand for; ``requester`` is the Process whose Rules apply (besides
    ``Any Process``); ``lenient`` parses statements with the lenient grammar. See the module
    docstring for the conventions.

    >>> rules = {"Rules": ["Any Process May Not MM-Add Nil Item At ML-Fountain"], "MLocations": ["ML-Fountain"]}
    >>> p = predict([(0, "MM-Add Nil lantern-1 At ML-Fountain")], rules)[0]
    >>> p.predicted, p.check, p.heuristic
    ('InsRights', 'rights', True)
    """
    rules = context_rules(action_context, definitions or {}, requester)
    return predict_with_rules(steps, rules, known_ids=known_ids, lenient=lenient)


def predict_with_rules(
    steps: Iterable[tuple[int, str] | Mapping[str, Any]],
    rules: ContextRules,
    *,
    known_ids: Collection[str] | None = None,
    lenient: bool = False,
) -> list[Prediction]:
    """:func:`predict` under an ActionContext compiled beforehand (:func:`context_rules`): a transcript
    checker compiles each distinct ActionContext once for all the Requests made under it."""
    plan = Plan()
    predictions = []
    for position, (step, text) in enumerate(_step_pairs(steps), start=1):
        facts = (
            statement_facts(text, lenient)
            if isinstance(text, str)
            else StatementFacts(None, f"the statement is not a string ({type(text).__name__})")
        )
        parsed, failure = facts.parsed, facts.failure
        check: CheckName | None = "statement" if failure else None
        if parsed is not None and failure is None and (fired := run_checks(parsed, facts, rules, plan, known_ids)):
            check, failure = fired
        if failure is None and rules.max_steps is not None and position > rules.max_steps:
            check, failure = "max-steps", f"it is Process Action number {position}, beyond MaxSteps {rules.max_steps}"
        if failure is None:
            predicted: PAStatusCode = "Ack"
            reason = "no check of the heuristic fails"
            if facts.amount is not None or facts.placement is not None:  # what an Ack step can change
                record(facts, step, plan)
        else:
            assert check is not None
            predicted = _STATUS[check]
            reason = failure
        predictions.append(Prediction(step, text, predicted, reason, check, parsed))
    return predictions


def compare(
    predictions: Iterable[Prediction],
    reported_steps: Mapping[Any, Any] | Iterable[tuple[int, str] | Mapping[str, Any]],
) -> list[Comparison]:
    """Set each prediction beside the reported PA Status of the same step.

    ``reported_steps`` is a BKN-DAC ``Feasibility.Steps`` list, ``(Step, PAStatus)`` pairs, or a
    ``{Step: PAStatus}`` mapping. A step reported twice counts by its first report. Steps reported
    without a prediction come last, with ``predicted=None``.

    >>> preds = predict([(0, "MM-Send Nil Message To proc-1"), (1, "Track Nil x")], None)
    >>> [(c.step, c.predicted, c.reported, c.agree) for c in compare(preds, [{"Step": 0, "PAStatus": "Ack"}, {"Step": 1, "PAStatus": "Ack"}])]
    [(0, 'Ack', 'Ack', True), (1, 'FaultyReq', 'Ack', False)]
    """
    if isinstance(reported_steps, Mapping):
        pairs: list[tuple[Any, Any]] = list(reported_steps.items())
    else:
        pairs = [(r.get("Step"), r.get("PAStatus")) if isinstance(r, Mapping) else (r[0], r[1]) for r in reported_steps]
    reported: dict[Any, Any] = {}
    for step, status in pairs:
        reported.setdefault(step, status)
    out = []
    seen = set()
    for p in predictions:
        seen.add(p.step)
        status = reported.get(p.step)
        status = status if isinstance(status, str) else None
        out.append(Comparison(p.step, p.predicted, status, status == p.predicted, p.reason, p.check))
    for step, status in reported.items():
        if step not in seen:
            out.append(Comparison(step, None, status if isinstance(status, str) else None, False))
    return out


# --- helpers to feed it -------------------------------------------------------------------------------


def steps_of(request: Mapping[str, Any]) -> list[tuple[Any, Any]]:
    """The ``(Step, Statement)`` pairs of a BKN-DAC Request's ``ProcessActions`` (malformed items skipped).

    >>> steps_of({"ProcessActions": [{"Step": 0, "Statement": "MM-Send Nil Message To proc-1"}, "junk"]})
    [(0, 'MM-Send Nil Message To proc-1')]
    """
    items = request.get("ProcessActions")
    if not isinstance(items, list):
        return []
    return [(item.get("Step"), item.get("Statement")) for item in items if isinstance(item, Mapping)]


def action_context_of(message: Mapping[str, Any]) -> Mapping[str, Any] | None:
    """The ``ActionContext`` a PC Prompt carries, or a BKN-PRC Response in its ``Representation``.

    >>> action_context_of({"Header": "PGM-PCP-V1.0", "ActionContext": {"MaxSteps": 3}})
    {'MaxSteps': 3}
    >>> action_context_of({"Header": "PGM-KPR-V1.0", "Mode": "RS", "Representation": {"ActionContext": {"MaxSteps": 2}}})
    {'MaxSteps': 2}
    """
    found = message.get("ActionContext")
    if found is None and isinstance(rep := message.get("Representation"), Mapping):
        found = rep.get("ActionContext")
    return found if isinstance(found, Mapping) else None
