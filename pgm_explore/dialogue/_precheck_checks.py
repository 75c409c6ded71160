"""The pre-check's working parts: what an ActionContext allows, what a statement says, and the plan so far.

:mod:`pgm_explore.dialogue.precheck` states the heuristic (the NOTES 4.7 mapping table and the
project's conventions, in its module docstring) and runs it step by step; this module holds what
each row of the table reads. An ActionContext is compiled once into :class:`ContextRules` (a
transcript checker keeps one per distinct ActionContext); a statement is read once into
:class:`StatementFacts` (cached by its text); :class:`Plan` is what the earlier steps of one plan did.
"""

from __future__ import annotations

import math
import re
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any, Literal

from pgm_explore.spec.process_actions import (
    OPERAND_TYPES,
    ProcessRule,
    Statement,
    StatementError,
    covers,
    parse_rule,
    parse_statement,
    resolve_action,
    signature_problems,
)

__all__ = [
    "CheckName",
    "ContextRules",
    "Plan",
    "StatementFacts",
    "context_rules",
    "record",
    "run_checks",
    "statement_facts",
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
class ContextRules:
    """What an ActionContext allows, read once: the sets and limits the checks look up for every step."""

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
def _rule_or_none(text: str) -> ProcessRule | None:
    # RightsRefs and Rules are mostly opaque ids that never parse; a transcript names the
    # same few thousand times, and a failed parse (an exception) is the costly case.
    try:
        return parse_rule(text)
    except StatementError:
        return None


def _readable(entry: str, definitions: Mapping[str, str | Sequence[str]]) -> list[ProcessRule] | None:
    defined = definitions.get(entry, entry)
    if isinstance(defined, str):  # the usual case (no definitions), without building lists
        rule = _rule_or_none(defined)
        return None if rule is None else [rule]
    rules = [rule for t in defined if isinstance(t, str) and (rule := _rule_or_none(t)) is not None]
    if not rules or len(rules) != sum(isinstance(t, str) for t in defined):
        return None
    return rules


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


def context_rules(
    action_context: Mapping[str, Any] | None,
    definitions: Mapping[str, str | Sequence[str]],
    requester: str | None,
) -> ContextRules:
    """Compile ``action_context`` (``definitions`` and ``requester`` as :func:`~pgm_explore.dialogue.precheck.predict`
    takes them)."""
    if action_context is None:
        return ContextRules()
    if not isinstance(action_context, Mapping) and hasattr(action_context, "model_dump"):
        action_context = action_context.model_dump(exclude_none=True)  # a pgm_explore.models ActionContextModel
    ctx = ContextRules()
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


_SHARED: dict[int, tuple[Mapping[str, Any], ContextRules]] = {}

# --- the checks ---------------------------------------------------------------------------------------


@dataclass(slots=True)
class Plan:
    """What the earlier steps predicted Ack have done: spending, and where Items were placed."""

    spent: float = 0.0
    currencies: set[str] = field(default_factory=set)
    placed: dict[tuple[str, str], dict[str, int]] = field(default_factory=dict)
    """(family, Item) → {location: step that put it there}."""


@dataclass(frozen=True, slots=True)
class StatementFacts:
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
def statement_facts(text: str, lenient: bool) -> StatementFacts:
    # A transcript repeats the same statements in Request after Request, and each step goes
    # through several rows: reading a statement once per text (as many as parse_statement
    # caches) leaves to each step only what depends on the ActionContext and the plan.
    try:
        s = parse_statement(text, lenient=lenient)
    except StatementError as e:
        return StatementFacts(None, f"the statement does not parse: {e.message} (column {e.column})")
    if s.deontic is not None:
        return StatementFacts(s, f"'{s.deontic}' makes the statement a Right, not a Process Action Request")
    if problems := signature_problems(s):
        return StatementFacts(s, problems[0])
    nil = s.nil
    family = _PLACING.get(s.action) or _MOVING.get(s.action)
    return StatementFacts(
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


def _check_rights(s: Statement, f: StatementFacts, ctx: ContextRules) -> str | None:
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


def _check_wallet(amount: tuple[float, str | None], limit: float, plan: Plan) -> str | None:
    value, currency = amount
    if len(plan.currencies) + (1 if currency and currency not in plan.currencies else 0) > 1:
        return None  # amounts in two currencies cannot be added up
    total = plan.spent + value
    if total > limit:
        shown = f"{_fmt(value)} {currency}" if currency else _fmt(value)
        return f"{shown} would bring the spending to {_fmt(total)}, over the WalletLimit {_fmt(limit)}"
    return None


def _check_qualifier(f: StatementFacts, vocabularies: set[str]) -> str | None:
    for term, value in f.qualifiers:
        if value not in vocabularies:
            return f"{term} {value} is not among the ActionContext's Vocabularies"
    return None


def _check_clash(f: StatementFacts, placement: tuple[str, str], plan: Plan) -> str | None:
    item = placement[1]
    earlier = plan.placed.get(placement, {})
    if f.placing:
        if f.at is not None and f.at in earlier:
            return f"step {earlier[f.at]} already placed {item} at {f.at}"
    elif f.source is not None and earlier and f.source not in earlier:
        where = ", ".join(f"{loc} (step {step})" for loc, step in earlier.items())
        return f"{item} is at {where}, not at {f.source}"
    return None


def record(f: StatementFacts, step: int, plan: Plan) -> None:
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


def run_checks(
    s: Statement, f: StatementFacts, ctx: ContextRules, plan: Plan, known_ids: Collection[str] | None
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
