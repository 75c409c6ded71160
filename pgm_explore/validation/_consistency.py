"""Consistency rules within one message (DECISIONS D14).

Each rule is a small function named after what it checks, registered for the data type
and mode it applies to and for the top-level property it reads, in the manner of
python-jsonschema's keyword functions. It returns its findings as a list rather than
yielding them (a generator costs more to start than most rules cost to run, and they run
for every message of a transcript; most find nothing). A rule runs only when its property is present:
without it there is nothing for the rule to find, and a message carries few of them.
The rules see messages that may not conform, so they look before they touch: a value of
the wrong type is the schema's business, not theirs. They never change the verdict.
A rule declares the properties it reads, and those of them it reads only for whether they are
there and true (``present=``): of a message read as a Struct, the bulk paths convert no more than
the rest (:func:`struct_findings`).

The rules of a data type and Mode may have a glance (:func:`_glance`): how a message of theirs read
as a Struct, which conforms, shows in a few attribute reads that none of them has anything to find,
the common case. A glance is no second set of rules: it says only "nothing here", and where it does
not, the rules themselves run. ``tests/test_typed.py`` holds each glance to its rules, message for
message, both ways, and to the properties they declare.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Mapping
from functools import cache
from types import UnionType
from typing import Any, Union

import msgspec

from pgm_explore.spec import RESPONSE_PAYLOAD, DataType, overall_of
from pgm_explore.spec.process_actions import StatementError, parse_statement
from pgm_explore.validation._limits import MAX_COUNTED, MAX_FINDINGS
from pgm_explore.validation.findings import Finding, clip, written

__all__ = ["RULE_FUNCTIONS", "consistency_findings", "struct_findings", "struct_glance"]

Document = Mapping[str, Any]
RuleFunction = Callable[[DataType, Document], list[Finding]]
Items = list[tuple[int, Mapping[str, Any]]]
Glance = Callable[[DataType, Any], bool]

RULE_FUNCTIONS: dict[tuple[str, str], list[RuleFunction]] = {}
"""The rules of each (data type, mode), in the order their findings are reported."""

_READS: dict[tuple[str, str], list[tuple[str, RuleFunction]]] = {}
"""The same rules, each with the top-level property it looks at (it has nothing to find without it)."""

_READ: dict[tuple[str, str], set[str]] = {}
"""Every top-level property the rules of each (data type, mode) read: of a message read as a
Struct, only these are read (:func:`struct_findings`; a test holds the rules to them)."""

_CONTENT: dict[tuple[str, str], set[str]] = {}
"""Those of them that a rule reads more of than whether they are there and true: of a message read
as a Struct, only these are converted to what the JSON reader makes (:func:`struct_findings`)."""

_DECLARED: dict[tuple[str, str], list[tuple[RuleFunction, frozenset[str], frozenset[str]]]] = {}
"""Each rule of each (data type, mode) with the properties it reads, and those of them it reads
only for whether they are there and true (``tests/test_validation.py`` holds the rules to both)."""


def _rule(
    type_name: str, mode: str, reads: str, *also: str, present: tuple[str, ...] = ()
) -> Callable[[RuleFunction], RuleFunction]:
    """Register a rule for ``type_name`` and ``mode`` that looks at the property ``reads``, and
    reads the properties ``also`` besides; those of them in ``present`` it reads only for whether
    they are there and true (``"Failure" in doc``, ``if doc.get("Stance")``)."""
    read = frozenset((reads, *also))
    if not read.issuperset(present):
        raise ValueError(f"{type_name} {mode}: {sorted(set(present) - read)} are not read")

    def register(function: RuleFunction) -> RuleFunction:
        key = (type_name, mode)
        RULE_FUNCTIONS.setdefault(key, []).append(function)
        _READS.setdefault(key, []).append((reads, function))
        _READ.setdefault(key, set()).update(read)
        _CONTENT.setdefault(key, set()).update(read.difference(present))
        _DECLARED.setdefault(key, []).append((function, read, frozenset(present)))
        return function

    return register


def _objects(value: Any) -> Items:
    if not isinstance(value, list):
        return []
    items = list(enumerate(value))
    for item in value:
        if not isinstance(item, dict):
            return [(i, item) for i, item in items if isinstance(item, dict)]
    return items  # (every item is an object, as in a message that conforms: one pass, no filter)


_KEYS = (str, int)
_UNSET = msgspec.UNSET
_BOUND = MAX_FINDINGS + MAX_COUNTED
"""Findings a rule that finds one per item makes at most: the report keeps no more, nor counts
them (a long list of bad items must not cost a parse or a finding each)."""


def _duplicates(items: Items, key: str) -> list[tuple[int, Any]]:
    """Every (index, value of ``key``) whose value was already seen earlier in the list."""
    if len(items) < 2:
        return []
    values = []
    for _, item in items:  # (a loop, not a comprehension: these lists are short)
        values.append(item.get(key))
    try:
        if len(set(values)) == len(values):
            return []  # (no two values are equal, so none of those looked at below is seen twice)
    except TypeError:  # (an unhashable value, a list or an object, which is not looked at)
        pass
    seen: set[Any] = set()
    again = []
    for (index, _), value in zip(items, values, strict=True):
        if isinstance(value, _KEYS) and not isinstance(value, bool):
            if value in seen:
                again.append((index, value))
                if len(again) >= _BOUND:
                    break
            seen.add(value)
    return again


def _echo(value: Any) -> str:
    """A value from the message, as a message quotes it (never the whole of a long one)."""
    if isinstance(value, str):
        return clip(value)
    if isinstance(value, list):
        return "[…]"
    if isinstance(value, dict):
        return "{…}"
    return written(value)


# --- BKN-DAC Requests -------------------------------------------------------------------


@_rule("BKN-DAC", "RQ", "ProcessActions", "Kind", present=("ProcessActions",))
def process_actions_need_feasibility(dt: DataType, doc: Document) -> list[Finding]:
    kind = doc.get("Kind")
    if "ProcessActions" in doc and isinstance(kind, str) and kind != "feasibility":
        return [
            Finding.of(
                "feasibility-kind",
                ("ProcessActions",),
                f'ProcessActions are validated "when Kind is feasibility", but this Request has Kind {clip(kind)}.',
                data_type=dt,
            )
        ]
    return []


@_rule("BKN-DAC", "RQ", "Kind", "ProcessActions")
def feasibility_needs_process_actions(dt: DataType, doc: Document) -> list[Finding]:
    actions = doc.get("ProcessActions")
    if doc.get("Kind") == "feasibility" and (actions is None or actions == []):
        return [
            Finding.of(
                "feasibility-missing",
                ("ProcessActions",),
                "This Request asks for feasibility but carries no ProcessActions to validate.",
                data_type=dt,
            )
        ]
    return []


@_rule("BKN-DAC", "RQ", "ProcessActions")
def process_actions_agree(dt: DataType, doc: Document) -> list[Finding]:
    """The two checks of the ProcessActions, on the list read once."""
    actions = _objects(doc.get("ProcessActions"))
    return process_action_steps_unique(dt, actions) + statements_parse(dt, actions)


def process_action_steps_unique(dt: DataType, actions: Items) -> list[Finding]:
    found: list[Finding] = []
    for index, step in _duplicates(actions, "Step"):
        found.append(
            Finding.of(
                "duplicate-step",
                ("ProcessActions", index, "Step"),
                f"Step {_echo(step)} appears more than once among the ProcessActions; "
                "each Step indexes one Process Action.",
                data_type=dt,
            )
        )
    return found


def statements_parse(dt: DataType, actions: Items) -> list[Finding]:
    found: list[Finding] = []
    for index, item in actions:
        if len(found) >= _BOUND:
            break
        statement = item.get("Statement")
        if not isinstance(statement, str) or not statement:
            continue
        try:
            parse_statement(statement)  # (it remembers the texts it parsed)
        except StatementError as error:
            found.append(_statement_finding(dt, index, item, error))
    return found


def _statement_finding(dt: DataType, index: int, item: Mapping[str, Any], error: StatementError) -> Finding:
    # The parser quotes the words it stumbled on: a 10 MB word must not make a 10 MB message.
    message = " ".join(clip(word) for word in error.message.split(" "))
    return Finding.of(
        "statement-syntax",
        ("ProcessActions", index, "Statement"),
        f"Step {_echo(item.get('Step'))}: column {error.column}: {message}",
        data_type=dt,
        column=error.column,
    )


@_rule(
    "BKN-DAC", "RQ", "Kind", "Commitments", "ReleasedCommitmentIDs", present=("Commitments", "ReleasedCommitmentIDs")
)
def commitment_request_has_commitments(dt: DataType, doc: Document) -> list[Finding]:
    if doc.get("Kind") == "commitment" and not doc.get("Commitments") and not doc.get("ReleasedCommitmentIDs"):
        return [
            Finding.of(
                "commitment-kind",
                ("Commitments",),
                "This Request has Kind commitment but carries no Commitments to retain and no ReleasedCommitmentIDs.",
                data_type=dt,
            )
        ]
    return []


@_rule("BKN-DAC", "RQ", "Commitments")
def commitment_ids_unique(dt: DataType, doc: Document) -> list[Finding]:
    return _duplicate_commitments(dt, doc, "Commitments", "is submitted twice in this Request")


def _duplicate_commitments(dt: DataType, doc: Document, key: str, what: str) -> list[Finding]:
    again = _duplicates(_objects(doc.get(key)), "CommitmentID")
    if not again:
        return []  # (no comprehension started for nothing: the usual case)
    return [
        Finding.of(
            "duplicate-commitment",
            (key, index, "CommitmentID"),
            f"CommitmentID {_echo(commitment)} {what}.",
            data_type=dt,
        )
        for index, commitment in again
    ]


# --- BKN-DAC Responses ------------------------------------------------------------------


def _enum(dt: DataType, *labels: str) -> frozenset[str]:
    found = dt.row(labels)
    return frozenset(found[1].enum or ()) if found else frozenset()


@cache
def _feasibility_enums(dt: DataType) -> tuple[frozenset[str], frozenset[str]]:
    """The values of Feasibility.Overall and of a step's PAStatus (looked up once for both)."""
    return _enum(dt, "Feasibility", "Overall"), _enum(dt, "Feasibility", "Steps", "PAStatus")


def _all_in(values: list[Any], known: frozenset[str]) -> bool:
    """True when every value is one of ``known`` (a list or an object never is)."""
    try:
        return known.issuperset(values)
    except TypeError:  # unhashable: not a string, so not one of them
        return False


@_rule("BKN-DAC", "RS", "Feasibility")
def feasibility_agrees(dt: DataType, doc: Document) -> list[Finding]:
    """The three checks of Feasibility, on its steps read once."""
    feasibility = doc.get("Feasibility")
    if not isinstance(feasibility, dict):
        return []
    steps = _objects(feasibility.get("Steps"))
    statuses = [item.get("PAStatus") for _, item in steps]
    return (
        feasibility_steps_unique(dt, steps)
        + overall_agrees_with_steps(dt, feasibility, statuses)
        + non_ack_steps_have_reason(dt, steps, statuses)
    )


def feasibility_steps_unique(dt: DataType, steps: Items) -> list[Finding]:
    found: list[Finding] = []
    for index, step in _duplicates(steps, "Step"):
        found.append(
            Finding.of(
                "duplicate-step",
                ("Feasibility", "Steps", index, "Step"),
                f"Step {_echo(step)} has more than one outcome in Feasibility.Steps.",
                data_type=dt,
            )
        )
    return found


def overall_agrees_with_steps(dt: DataType, feasibility: Mapping[str, Any], statuses: list[Any]) -> list[Finding]:
    """``statuses``: the PAStatus of each step."""
    if not isinstance(overall := feasibility.get("Overall"), str):
        return []
    expected = overall_of(statuses)
    if expected is None or expected == overall:
        return []
    # A value outside the enumerations (a string not listed, or no string at all) is
    # already a conformance error; judging it again is noise.
    overalls, known = _feasibility_enums(dt)
    if overall not in overalls or not _all_in(statuses, known):
        return []
    counts = Counter(statuses)
    tally = ", ".join(f"{n} {status}" for status, n in counts.most_common())
    return [
        Finding.of(
            "overall-mismatch",
            ("Feasibility", "Overall"),
            f"Overall is {overall}, but the steps say {expected} ({tally}): "
            "all Ack is feasible, no Ack is infeasible, anything else is partially_feasible.",
            data_type=dt,
        )
    ]


def non_ack_steps_have_reason(dt: DataType, steps: Items, statuses: list[Any]) -> list[Finding]:
    """``statuses``: the PAStatus of each step."""
    found: list[Finding] = []
    if statuses.count("Ack") == len(statuses):
        return found  # (every step is Ack: none wants a Reason)
    known = _feasibility_enums(dt)[1]
    for (index, item), status in zip(steps, statuses, strict=True):
        if len(found) >= _BOUND:
            break
        if status != "Ack" and isinstance(status, str) and status in known and "Reason" not in item:
            found.append(
                Finding.of(
                    "reason-missing",
                    ("Feasibility", "Steps", index, "Reason"),
                    f"Step {_echo(item.get('Step'))} has PA Status {status} but gives no Reason; "
                    "Basic Knowledge cannot repair a step without knowing why it failed.",
                    data_type=dt,
                )
            )
    return found


@_rule("BKN-DAC", "RS", "CommitmentStatus")
def commitment_status_ids_unique(dt: DataType, doc: Document) -> list[Finding]:
    return _duplicate_commitments(dt, doc, "CommitmentStatus", "has more than one status in this Response")


# --- Responses of every interaction type -----------------------------------------------


def outcome_matches_payload(dt: DataType, doc: Document) -> list[Finding]:
    outcome = doc.get("Outcome")
    payload = RESPONSE_PAYLOAD[dt.name]
    if outcome == "not_answered":
        present = [key for key in payload if doc.get(key)]
        if present:
            return [
                Finding.of(
                    "outcome-payload",
                    (present[0],),
                    f"Outcome is not_answered, yet the Response carries {', '.join(present)}.",
                    # At the payload, yet about the Outcome: the clause is the Outcome row's.
                    f"{dt.requirement('Response')}; {dt.clause(('Outcome',))}",
                )
            ]
    elif outcome in ("answered", "partially_answered"):
        for key in payload:
            if doc.get(key):
                return []
        return [
            Finding.of(
                "outcome-payload",
                ("Outcome",),
                f"Outcome is {outcome}, yet the Response carries none of {', '.join(RESPONSE_PAYLOAD[dt.name])}.",
                data_type=dt,
            )
        ]
    return []


def failure_degrades_outcome(dt: DataType, doc: Document) -> list[Finding]:
    if "Failure" in doc and doc.get("Outcome") == "answered":
        return [
            Finding.of(
                "failure-outcome",
                ("Failure",),
                "The Response reports the Failure of a source yet says Outcome answered; "
                "a failed source normally leaves the answer partial (partially_answered) or missing (not_answered).",
                data_type=dt,
            )
        ]
    return []


for _name in RESPONSE_PAYLOAD:
    _rule(_name, "RS", "Outcome", *RESPONSE_PAYLOAD[_name], present=RESPONSE_PAYLOAD[_name])(outcome_matches_payload)
_rule("BKN-DAC", "RS", "Failure", "Outcome", present=("Failure",))(failure_degrades_outcome)


# --- Glances: the common case of a clean message, nothing to find --------------------------------

_GLANCES: dict[tuple[str, str], tuple[Glance, frozenset[RuleFunction]]] = {}
"""The glance of the rules of each (data type, mode) that has one, and the rules it looks for."""


def _glance(type_name: str, mode: str, *rules: RuleFunction) -> Callable[[Glance], Glance]:
    """Register ``glance(dt, value)`` for the ``rules`` of ``type_name`` and ``mode``: True when none
    of them finds anything in ``value``, a message of theirs read as a Struct (``validation._typed``:
    it conforms, so its types are the schema's), told from the Struct's attributes of the properties
    they read; False when one does. It is asked instead of the rules (:func:`struct_glance`) only
    while they are all the rules of that type and mode: a rule added later and not looked for by the
    glance sends every message of the type to the rules (``tests/test_typed.py`` fails until it is)."""

    def register(glance: Glance) -> Glance:
        _GLANCES[(type_name, mode)] = (glance, frozenset(rules))
        return glance

    return register


def _ids_unique(items: Any) -> bool:
    """No two of the Struct items ``items`` (or UNSET) have the same CommitmentID."""
    if items is _UNSET or len(items) < 2:
        return True
    ids = set()
    for item in items:  # (a loop, not a comprehension: these lists are short)
        ids.add(item.CommitmentID)
    return len(ids) == len(items)


@_glance(
    "BKN-DAC",
    "RQ",
    process_actions_need_feasibility,
    feasibility_needs_process_actions,
    process_actions_agree,
    commitment_request_has_commitments,
    commitment_ids_unique,
)
def _request_agrees(dt: DataType, value: Any) -> bool:
    kind = value.Kind  # (a string: the Struct's Kind is required)
    actions = value.ProcessActions
    if actions is not _UNSET and kind != "feasibility":
        return False
    if kind == "feasibility" and not actions:  # (UNSET is false)
        return False
    if actions:
        steps = set()
        for action in actions:
            steps.add(action.Step)
            try:
                parse_statement(action.Statement)  # (it remembers the texts it parsed)
            except StatementError:
                return False
        if len(steps) != len(actions):
            return False
    commitments = value.Commitments
    # (Commitments and ReleasedCommitmentIDs are lists: true as their dicts' are.)
    if kind == "commitment" and not commitments and not value.ReleasedCommitmentIDs:
        return False
    return _ids_unique(commitments)


_OUTCOMES = frozenset(("answered", "partially_answered", "not_answered"))
_PAYLOAD: dict[type, tuple[tuple[str, Any], ...]] = {}
"""For a Struct type of a Response: the attribute of each property of its payload, and its empty
Struct when it is an object that may be empty (see :func:`_reading`), else None."""


def _payload(kind: type, dt: DataType) -> tuple[tuple[str, Any], ...]:
    fields = {field.encode_name: field for field in msgspec.structs.fields(kind)}
    readings = [_reading(name, fields[name], False) for name in RESPONSE_PAYLOAD[dt.name] if name in fields]
    _PAYLOAD[kind] = found = tuple((attribute, empty) for _, attribute, _, empty in readings)
    return found


@_glance("BKN-PRC", "RS", outcome_matches_payload)
@_glance("BKN-PAL", "RS", outcome_matches_payload)
def _payload_agrees(dt: DataType, value: Any) -> bool:
    outcome = value.Outcome
    if outcome not in _OUTCOMES:
        return True
    payload = _PAYLOAD.get(type(value))
    # A property of the payload is carried when the rule reads it as true in the dict
    # struct_findings shows it: left out (UNSET) is false, and so is an empty object where one may be.
    for attribute, empty in payload if payload is not None else _payload(type(value), dt):
        item = getattr(value, attribute)
        if item and item != empty:  # (None != a Struct or a list)
            return outcome != "not_answered"
    return outcome == "not_answered"


@_glance(
    "BKN-DAC",
    "RS",
    feasibility_agrees,
    commitment_status_ids_unique,
    outcome_matches_payload,
    failure_degrades_outcome,
)
def _response_agrees(dt: DataType, value: Any) -> bool:
    feasibility = value.Feasibility
    if feasibility is not _UNSET:
        steps = feasibility.Steps
        numbers = set()
        statuses = []
        for step in steps:
            numbers.add(step.Step)
            status = step.PAStatus
            if status != "Ack" and step.Reason is _UNSET:
                return False
            statuses.append(status)
        if len(numbers) != len(steps) or overall_of(statuses) not in (None, feasibility.Overall):
            return False
    if value.Failure is not _UNSET and value.Outcome == "answered":
        return False
    return _ids_unique(value.CommitmentStatus) and _payload_agrees(dt, value)


def consistency_findings(dt: DataType, doc: Document, mode: str | None) -> list[Finding]:
    """Every consistency finding for ``doc`` (already known to be an object of type ``dt``)."""
    found: list[Finding] = []
    for reads, rule in _READS.get((dt.name, mode or ""), ()):
        if reads in doc:
            found += rule(dt, doc)
    return found


_to_builtins = msgspec.to_builtins


_Read = tuple[str, str, bool, Any]
_Plan = tuple[list[tuple[str, RuleFunction]], tuple[_Read, ...], Glance | None]
_STRUCT_RULES: dict[type, _Plan] = {}
"""For each Struct type: the rules of its data type and Mode, each with the property it looks
at; for every property they read, (name, attribute, converted, empty): see :func:`_reading`; and
the glance of its rules: see :func:`struct_glance`."""


def _struct_rules(kind: type, dt: DataType, mode: str | None) -> _Plan:
    fields = {field.encode_name: field for field in msgspec.structs.fields(kind)}
    key = (dt.name, mode or "")
    # (A property the Struct has no field for cannot be in the message: the Struct is closed.)
    rules = [(reads, rule) for reads, rule in _READS.get(key, ()) if reads in fields]
    content = _CONTENT.get(key, set())
    read = tuple(_reading(name, fields[name], name in content) for name in sorted(_READ.get(key, ())) if name in fields)
    glance, covers = _GLANCES.get(key, (_look, frozenset()))
    if not covers.issuperset(rule for _, rule in rules):
        glance = _look
    _STRUCT_RULES[kind] = found = (rules, read, glance if rules else None)
    return found


def _look(dt: DataType, value: Any) -> bool:
    """The glance of rules that have none: the rules must look."""
    return False


def _reading(name: str, field: msgspec.structs.FieldInfo, content: bool) -> _Read:
    """How the rules are shown a property of a Struct: converted to what the JSON reader makes
    (``msgspec.to_builtins``) when a rule reads its content and it may hold a Struct; else as it
    is (strings, numbers and lists of them are what the reader makes of them, and a list or a
    Struct with a required property is true as its dict is, a clean value being there). Only an
    object all of whose properties may be left out, read for whether it is true, is compared with
    its empty Struct (``empty``): shown as ``{}`` when it is empty, as it is otherwise."""
    kinds = [kind for kind in _members(field.type) if kind is not msgspec.UnsetType]
    structs = [kind for kind in kinds if isinstance(kind, type) and issubclass(kind, msgspec.Struct)]
    if content:
        return name, field.name, any(map(_holds_struct, kinds)), None
    empty = None
    for struct in structs:
        if not any(member.required for member in msgspec.structs.fields(struct)):
            empty = struct()
    return name, field.name, False, empty


def _members(kind: Any) -> tuple[Any, ...]:
    """The types of a union (``Annotated`` taken off), or the type itself."""
    while getattr(kind, "__metadata__", None) is not None:  # (Annotated[X, ...]: X)
        kind = kind.__origin__
    if isinstance(kind, UnionType) or getattr(kind, "__origin__", None) is Union:
        return tuple(member for argument in kind.__args__ for member in _members(argument))
    return (kind,)


def _holds_struct(kind: Any) -> bool:
    """True when a value of the type ``kind`` may hold a Struct."""
    if isinstance(kind, type) and issubclass(kind, msgspec.Struct):
        return True
    return any(_holds_struct(argument) for argument in getattr(kind, "__args__", ()))


def struct_glance(kind: type, dt: DataType, mode: str | None) -> Glance | None:
    """The glance of the rules of a message read as a Struct of type ``kind``, of data type ``dt``
    and Mode ``mode``: when it says there is nothing to find, :func:`struct_findings` finds nothing.
    None when there is no rule (nothing to find, ever)."""
    known = _STRUCT_RULES.get(kind)
    return (known if known is not None else _struct_rules(kind, dt, mode))[2]


def struct_findings(dt: DataType, value: Any, mode: str | None) -> list[Finding]:
    """:func:`consistency_findings` for a message read as a Struct (``validation._typed``): the
    rules read a dict of only the top-level properties they read, each shown as :func:`_reading`
    says: converted only where a rule reads its content and it holds a Struct."""
    kind = type(value)
    known = _STRUCT_RULES.get(kind)
    rules, read, _ = known if known is not None else _struct_rules(kind, dt, mode)
    found: list[Finding] = []
    if rules:
        doc = {}
        for name, attribute, convert, empty in read:
            if (item := getattr(value, attribute)) is not _UNSET:
                if convert:
                    item = _to_builtins(item)
                elif empty is not None and item == empty:
                    item = {}
                doc[name] = item
        for reads, rule in rules:
            if reads in doc:
                found += rule(dt, doc)
    return found
