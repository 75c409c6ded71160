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

import math
import re
from collections.abc import Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from operator import itemgetter
from typing import Any, Literal

from pgm_explore.spec.process_actions import (
    OPERAND_TYPES,
    PAStatusCode,
    Rule,
    Statement,
    StatementError,
    covers,
    parse_rule,
    parse_statement,
    resolve_action,
    signature_problems,
)

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

CheckName = Literal[
    "statement",
    "repertoire",
    "ids",
    "m-location",
    "rights",
    "wallet",
    "qualifier",
    "data-qualifier",
    "clash",
    "post",
    "max-steps",
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


@dataclass(frozen=True)
class Prediction:
    """The PA Status the heuristic expects for one step, and why. Always ``heuristic=True``."""

    step: int
    statement: str
    predicted: PAStatusCode
    reason: str
    """Plain words: what failed, or that nothing did."""
    check: CheckName | None
    """The row of :data:`CHECKS` that fired; None for Ack."""
    parsed: Statement | None = field(default=None, repr=False)
    """The parsed statement (None when it does not parse)."""
    heuristic: Literal[True] = True


def _prediction(
    step: Any, statement: Any, predicted: PAStatusCode, reason: str, check: CheckName | None, parsed: Statement | None
) -> Prediction:
    # The same object as Prediction(...), built without the frozen dataclass's __init__, which sets
    # each field through object.__setattr__: that was a fifth of predict's time (one per step).
    # tests/test_precheck.py checks that the two agree, should Prediction gain a field.
    prediction = object.__new__(Prediction)
    fields = prediction.__dict__
    fields["step"] = step
    fields["statement"] = statement
    fields["predicted"] = predicted
    fields["reason"] = reason
    fields["check"] = check
    fields["parsed"] = parsed
    fields["heuristic"] = True
    return prediction


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


# --- operand conventions ------------------------------------------------------------------------------

_MLOCATION_TERMS = frozenset({"MLocation", "MLocationID", "M-Location", "M-LocationID"})
_MLOCATION_PREFIX = "ML-"
_PLACE_PREPOSITIONS = frozenset({"At", "From", "To"})
_ID_PREPOSITIONS = frozenset({"Nil", "At", "From", "To"})
_ID_TYPES = frozenset({"Item", "Process", "Entity", "EntityID", *(t for t in OPERAND_TYPES if t.endswith("ID"))})
_ID_LIKE = re.compile(r"^[A-Za-z0-9][\w.:-]*$")
_RIGHTS_TERMS = frozenset({"Rights", "RightsID", "Right", "ModelRights", "Model Rights", "Requested Rights"})
_WALLET_TERMS = ("SPM", "Value", "Transaction")
_AMOUNT = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*([A-Za-z][A-Za-z0-9]{0,9})?\s*$")
_QUALIFIER_TERMS = frozenset({"Qualifier", "Qualifiers", "ModelQualifier", "Vocabulary"})
_ANY_PROCESS = frozenset({"", "any process", "any", "every process", "all processes"})
_PLACING = {"MM-Add": "MM", "MU-Add": "MU"}
_MOVING = {"MM-Move": "MM", "MU-Move": "MU"}


def _mlocation_operands(statement: Statement) -> tuple[str, ...]:
    """The operands that are M-Locations whatever the MLocations: typed, or untyped place words starting
    with ``ML-``. An untyped place word that is in MLocations is one too, but it is never out of range,
    so the ``m-location`` check need not see it."""
    found = []
    for c in statement.complements:
        if c.term in _MLOCATION_TERMS and c.value is not None:
            found.append(c.value)
        elif (
            c.preposition in _PLACE_PREPOSITIONS
            and c.value is None
            and " " not in c.term
            and c.term.startswith(_MLOCATION_PREFIX)
        ):
            found.append(c.term)
    return tuple(found)


def _id_operands(statement: Statement) -> tuple[tuple[str, bool], ...]:
    """The operands that are IDs, each with whether it is an untyped word: such a word is an
    M-Location, not an ID, when it is in MLocations (which only the check knows)."""
    found = []
    for c in statement.complements:
        if c.preposition not in _ID_PREPOSITIONS or c.term in _MLOCATION_TERMS:
            continue
        if c.value is not None:
            if c.term in _ID_TYPES:
                found.append((c.value, False))
        elif (
            " " not in c.term
            and c.term not in OPERAND_TYPES
            and _ID_LIKE.match(c.term)
            and any(ch.isdigit() or ch in "-_:" for ch in c.term)
            and not (c.preposition in _PLACE_PREPOSITIONS and c.term.startswith(_MLOCATION_PREFIX))
        ):
            found.append((c.term, True))
    return tuple(found)


def _with_values(statement: Statement, terms: Collection[str]) -> tuple[tuple[str, str], ...]:
    """``(term, value)`` of the ``With <term>=<value>`` complements whose term is one of ``terms``."""
    return tuple(
        (c.term, c.value)
        for c in statement.complements
        if c.preposition == "With" and c.term in terms and c.value is not None
    )


def _amount(statement: Statement) -> tuple[float, str | None] | None:
    best: tuple[float, str | None] | None = None
    for c in statement.complements:
        if c.preposition == "With" and c.term in _WALLET_TERMS and c.value is not None:
            m = _AMOUNT.match(c.value)
            if m and (best is None or float(m.group(1)) > best[0]):
                best = (float(m.group(1)), m.group(2))
    return best


def _number(value: Any) -> float | None:
    """A JSON number as a float; an integer beyond a float's range (which the schema allows for
    MaxSteps and WalletLimit) is infinite: a limit no plan can reach."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    try:
        number = float(value)
    except OverflowError:
        return math.inf if value > 0 else -math.inf
    return number if math.isfinite(number) else None


def _strings(value: Any) -> list[str] | None:
    """A list of strings from the ActionContext; None when absent or not a list (then nothing is checked)."""
    if not isinstance(value, (list, tuple)):
        return None
    return [v for v in value if isinstance(v, str)]


def _string_set(value: Any) -> set[str] | None:
    """:func:`_strings` as a set, in one pass."""
    if not isinstance(value, (list, tuple)):
        return None
    return {v for v in value if isinstance(v, str)}


def _fmt(x: float) -> str:
    return f"{x:g}"


# --- the context --------------------------------------------------------------------------------------


@dataclass(slots=True)
class _Context:
    repertoire: set[str] | None = None
    vocabularies: set[str] | None = None
    max_steps: int | None = None
    mlocations: set[str] | None = None
    rights_refs: list[str] | None = None
    wallet_limit: float | None = None
    forbidding: list[tuple[str, Statement]] = field(default_factory=list)
    """(where it comes from, May Not pattern) that apply to the requester."""
    granting: list[Statement] | None = None
    """May/Must Rights held, when every RightsRefs entry is readable; else None."""


@lru_cache(maxsize=4096)
def _rule_or_none(text: str) -> Rule | None:
    # RightsRefs and Rules are mostly opaque ids that never parse; a transcript names the
    # same few thousand times, and a failed parse (an exception) is the costly case.
    try:
        return parse_rule(text)
    except StatementError:
        return None


def _readable(entry: str, definitions: Mapping[str, str | Sequence[str]]) -> list[Rule] | None:
    defined = definitions.get(entry, entry)
    if isinstance(defined, str):  # the usual case (no definitions), without building lists
        rule = _rule_or_none(defined)
        return None if rule is None else [rule]
    rules = [_rule_or_none(t) for t in defined if isinstance(t, str)]
    if not rules or any(rule is None for rule in rules):
        return None
    return rules  # type: ignore[return-value]


@lru_cache(maxsize=1024)
def _repertoire_action(entry: str) -> str | None:
    # Every Repertoire of a transcript names the same few entries: resolve each once (an entry
    # that is no action would otherwise fail to parse, an exception, for each ActionContext).
    action = resolve_action(entry)
    if action is None:  # an entry written as a whole statement counts by its action
        try:
            action = parse_statement(entry).action
        except StatementError:
            return None
    return action


def _context(
    action_context: Mapping[str, Any] | None,
    definitions: Mapping[str, str | Sequence[str]],
    requester: str | None,
) -> _Context:
    if action_context is None:
        return _Context()
    if not isinstance(action_context, Mapping) and hasattr(action_context, "model_dump"):
        action_context = action_context.model_dump(exclude_none=True)  # a pgm_explore.models ActionContextModel
    ctx = _Context()
    if isinstance(repertoire := action_context.get("Repertoire"), (list, tuple)):
        ctx.repertoire = {
            action
            for entry in repertoire
            if isinstance(entry, str) and (action := _repertoire_action(entry)) is not None
        }
    ctx.vocabularies = _string_set(action_context.get("Vocabularies"))
    ctx.mlocations = _string_set(action_context.get("MLocations"))
    max_steps = _number(action_context.get("MaxSteps"))
    ctx.max_steps = int(max_steps) if max_steps is not None and max_steps.is_integer() else None
    ctx.wallet_limit = _number(action_context.get("WalletLimit"))

    ctx.rights_refs = _strings(action_context.get("RightsRefs"))
    if ctx.rights_refs is not None:
        granting: list[Statement] = []
        all_readable = bool(ctx.rights_refs)
        for ref in ctx.rights_refs:
            rules = _readable(ref, definitions)
            if rules is None or any(r.right.condition is not None for r in rules):
                all_readable = False
                continue
            for rule in rules:
                if rule.right.deontic == "May Not":
                    ctx.forbidding.append((f"the Right {ref}", rule.right))
                else:
                    granting.append(rule.right)
        ctx.granting = granting if all_readable else None
    for entry in _strings(action_context.get("Rules")) or ():
        for rule in _readable(entry, definitions) or ():
            process = (rule.process or "").casefold()
            applies = process in _ANY_PROCESS or (requester is not None and rule.process == requester)
            if applies and rule.right.deontic == "May Not" and rule.right.condition is None:
                ctx.forbidding.append((f"the Rule {entry!r}", rule.right))
    return ctx


_SHARED: dict[int, tuple[Mapping[str, Any], _Context]] = {}


def _shared_context(action_context: dict[str, Any]) -> _Context:
    """:func:`_context` for an ActionContext seen before: a transcript checks every feasibility
    Request of a dialogue against the same one. Keyed by identity (the entry keeps the dict
    alive, so its id cannot be reused) and bounded; callers never mutate an ActionContext."""
    hit = _SHARED.get(id(action_context))
    if hit is not None and hit[0] is action_context:
        return hit[1]
    if len(_SHARED) >= 256:
        _SHARED.pop(next(iter(_SHARED)))
    ctx = _context(action_context, {}, None)
    _SHARED[id(action_context)] = (action_context, ctx)
    return ctx


# --- the checks ---------------------------------------------------------------------------------------


@dataclass(slots=True)
class _Plan:
    """What the earlier steps predicted Ack have done: spending, and where Items were placed."""

    spent: float = 0.0
    currencies: set[str] = field(default_factory=set)
    placed: dict[tuple[str, str], dict[str, int]] = field(default_factory=dict)
    """(family, Item) → {location: step that put it there}."""


@dataclass(frozen=True, slots=True)
class _StatementFacts:
    """What the checks read from one statement, independent of the ActionContext and the plan."""

    parsed: Statement | None
    failure: str | None
    """Why the ``statement`` check fails. When it does, the facts below are left empty: no check reads them."""
    ids: tuple[tuple[str, bool], ...] = ()
    """:func:`_id_operands`."""
    mlocations: tuple[str, ...] = ()
    """:func:`_mlocation_operands`."""
    rights: tuple[tuple[str, str], ...] = ()
    """``With Rights=<id>`` and the like, as (term, id)."""
    qualifiers: tuple[tuple[str, str], ...] = ()
    """``With Qualifier=<q>`` and the like, as (term, q)."""
    amount: tuple[float, str | None] | None = None
    """:func:`_amount`."""
    placement: tuple[str, str] | None = None
    """(family, Item) when the statement places or moves its direct object (MM-Add, MU-Move...)."""
    placing: bool = False
    """Whether it places (MM-Add, MU-Add) rather than moves."""
    at: str | None = None
    """What the first ``At`` complement names; ``source`` and ``to`` likewise for ``From`` and ``To``."""
    source: str | None = None
    to: str | None = None


def _first(s: Statement, preposition: str) -> str | None:
    found = s.find(preposition)
    return found[0].ref if found else None


@lru_cache(maxsize=8192)
def _statement_facts(text: str, lenient: bool) -> _StatementFacts:
    # A transcript repeats the same statements in Request after Request, and each step goes
    # through several rows: reading a statement once per text (as many as parse_statement
    # caches) leaves to each step only what depends on the ActionContext and the plan.
    try:
        s = parse_statement(text, lenient=lenient)
    except StatementError as e:
        return _StatementFacts(None, f"the statement does not parse: {e.message} (column {e.column})")
    if s.deontic is not None:
        return _StatementFacts(s, f"'{s.deontic}' makes the statement a Right, not a Process Action Request")
    if problems := signature_problems(s):
        return _StatementFacts(s, problems[0])
    nil = s.nil
    family = _PLACING.get(s.action) or _MOVING.get(s.action)
    return _StatementFacts(
        s,
        None,
        ids=_id_operands(s),
        mlocations=_mlocation_operands(s),
        rights=_with_values(s, _RIGHTS_TERMS),
        qualifiers=_with_values(s, _QUALIFIER_TERMS),
        amount=_amount(s),
        placement=(family, nil.ref) if family is not None and nil is not None else None,
        placing=s.action in _PLACING,
        at=_first(s, "At"),
        source=_first(s, "From"),
        to=_first(s, "To"),
    )


def _check_rights(s: Statement, f: _StatementFacts, ctx: _Context) -> str | None:
    if ctx.rights_refs is not None:
        for term, value in f.rights:
            if value not in ctx.rights_refs:
                return f"With {term}={value} names a Right that is not among the ActionContext's RightsRefs"
    for where, pattern in ctx.forbidding:
        if covers(pattern, s):
            return f"{where} forbids it ({pattern}); May Not prevails"
    if ctx.granting is not None and not any(covers(p, s) for p in ctx.granting):
        return f"none of the RightsRefs (all readable) grants {s.action} with these operands"
    return None


def _check_wallet(amount: tuple[float, str | None], limit: float, plan: _Plan) -> str | None:
    value, currency = amount
    if len(plan.currencies) + (1 if currency and currency not in plan.currencies else 0) > 1:
        return None  # amounts in two currencies cannot be added up
    total = plan.spent + value
    if total > limit:
        shown = f"{_fmt(value)} {currency}" if currency else _fmt(value)
        return f"{shown} would bring the spending to {_fmt(total)}, over the WalletLimit {_fmt(limit)}"
    return None


def _check_qualifier(f: _StatementFacts, vocabularies: set[str]) -> str | None:
    for term, value in f.qualifiers:
        if value not in vocabularies:
            return f"{term} {value} is not among the ActionContext's Vocabularies"
    return None


def _check_clash(f: _StatementFacts, placement: tuple[str, str], plan: _Plan) -> str | None:
    item = placement[1]
    earlier = plan.placed.get(placement, {})
    if f.placing:
        if f.at is not None and f.at in earlier:
            return f"step {earlier[f.at]} already placed {item} at {f.at}"
    elif f.source is not None and earlier and f.source not in earlier:
        where = ", ".join(f"{loc} (step {step})" for loc, step in earlier.items())
        return f"{item} is at {where}, not at {f.source}"
    return None


def _record(f: _StatementFacts, step: int, plan: _Plan) -> None:
    """Let an Ack step change the plan's state."""
    if (amount := f.amount) is not None:
        plan.spent += amount[0]
        if amount[1]:
            plan.currencies.add(amount[1])
    if f.placement is None:
        return
    if f.placing:
        if f.at is not None:
            plan.placed.setdefault(f.placement, {})[f.at] = step
    elif f.to is not None:
        places = plan.placed.setdefault(f.placement, {})
        places.pop(f.source or "", None)
        places[f.to] = step


def _run_checks(
    s: Statement, f: _StatementFacts, ctx: _Context, plan: _Plan, known_ids: Collection[str] | None
) -> tuple[CheckName, str] | None:
    """The first check after ``statement`` that fails, in the table's order (``max-steps`` is separate)."""
    if ctx.repertoire is not None and s.action not in ctx.repertoire:
        return "repertoire", f"{s.action} is not in the ActionContext's Repertoire"
    if known_ids is not None:
        mlocations = ctx.mlocations or ()
        for operand, untyped in f.ids:
            if not (untyped and operand in mlocations) and operand not in known_ids:
                return "ids", f"{operand} is not a known ID"
    if ctx.mlocations is not None:
        for operand in f.mlocations:
            if operand not in ctx.mlocations:
                return "m-location", f"{operand} is not among the ActionContext's MLocations"
    # Each guard spares a call when there is nothing to check, as for most steps: no Right named
    # and none readable, no amount or no WalletLimit, no Qualifier, nothing placed yet.
    if (f.rights or ctx.forbidding or ctx.granting is not None) and (failure := _check_rights(s, f, ctx)) is not None:
        return "rights", failure
    if (
        f.amount is not None
        and ctx.wallet_limit is not None
        and (failure := _check_wallet(f.amount, ctx.wallet_limit, plan)) is not None
    ):
        return "wallet", failure
    if f.qualifiers and ctx.vocabularies is not None and (failure := _check_qualifier(f, ctx.vocabularies)) is not None:
        return "qualifier", failure
    if f.placement is not None and plan.placed and (failure := _check_clash(f, f.placement, plan)) is not None:
        return "clash", failure
    return None


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
    ctx = (
        _context(action_context, definitions or {}, requester)
        if definitions or requester or not isinstance(action_context, dict)
        else _shared_context(action_context)
    )
    plan = _Plan()
    predictions = []
    for position, (step, text) in enumerate(_step_pairs(steps), start=1):
        facts = (
            _statement_facts(text, lenient)
            if isinstance(text, str)
            else _StatementFacts(None, f"the statement is not a string ({type(text).__name__})")
        )
        parsed, failure = facts.parsed, facts.failure
        check: CheckName | None = "statement" if failure else None
        if parsed is not None and failure is None and (fired := _run_checks(parsed, facts, ctx, plan, known_ids)):
            check, failure = fired
        if failure is None and ctx.max_steps is not None and position > ctx.max_steps:
            check, failure = "max-steps", f"it is Process Action number {position}, beyond MaxSteps {ctx.max_steps}"
        if failure is None:
            predicted: PAStatusCode = "Ack"
            reason = "no check of the heuristic fails"
            if facts.amount is not None or facts.placement is not None:  # what an Ack step can change
                _record(facts, step, plan)
        else:
            assert check is not None
            predicted = _STATUS[check]
            reason = failure
        predictions.append(_prediction(step, text, predicted, reason, check, parsed))
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
