"""Consistency rules within one message (DECISIONS D14).

Each rule is a small function named after what it checks, registered for the data type
and mode it applies to and for the top-level property it reads, in the manner of
python-jsonschema's keyword functions. It returns its findings as a list rather than
yielding them (a generator costs more to start than most rules cost to run, and they run
for every message of a transcript; most find nothing). A rule runs only when its property is present:
without it there is nothing for the rule to find, and a message carries few of them.
The rules see messages that may not conform, so they look before they touch: a value of
the wrong type is the schema's business, not theirs. They never change the verdict.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Mapping
from functools import cache
from typing import Any

import msgspec

from pgm_explore.spec import RESPONSE_PAYLOAD, DataType, overall_of
from pgm_explore.spec.process_actions import StatementError, parse_statement
from pgm_explore.validation._limits import MAX_COUNTED, MAX_FINDINGS
from pgm_explore.validation.findings import Finding, clip, written

__all__ = ["RULE_FUNCTIONS", "consistency_findings", "struct_findings"]

Document = Mapping[str, Any]
RuleFunction = Callable[[DataType, Document], list[Finding]]
Items = list[tuple[int, Mapping[str, Any]]]

RULE_FUNCTIONS: dict[tuple[str, str], list[RuleFunction]] = {}
"""The rules of each (data type, mode), in the order their findings are reported."""

_READS: dict[tuple[str, str], list[tuple[str, RuleFunction]]] = {}
"""The same rules, each with the top-level property it looks at (it has nothing to find without it)."""

_READ: dict[tuple[str, str], set[str]] = {}
"""Every top-level property the rules of each (data type, mode) read: a message read as a
Struct is converted only as far as these (:func:`struct_findings`; a test holds the rules to them)."""


def _rule(type_name: str, mode: str, reads: str, *also: str) -> Callable[[RuleFunction], RuleFunction]:
    """Register a rule for ``type_name`` and ``mode`` that looks at the property ``reads``, and
    reads the properties ``also`` besides."""

    def register(function: RuleFunction) -> RuleFunction:
        RULE_FUNCTIONS.setdefault((type_name, mode), []).append(function)
        _READS.setdefault((type_name, mode), []).append((reads, function))
        _READ.setdefault((type_name, mode), set()).update((reads, *also))
        return function

    return register


def _objects(value: Any) -> Items:
    return [(i, item) for i, item in enumerate(value) if isinstance(item, dict)] if isinstance(value, list) else []


_KEYS = (str, int)
_BOUND = MAX_FINDINGS + MAX_COUNTED
"""Findings a rule that finds one per item makes at most: the report keeps no more, nor counts
them (a long list of bad items must not cost a parse or a finding each)."""


def _duplicates(items: Items, key: str) -> list[tuple[int, Any]]:
    """Every (index, value of ``key``) whose value was already seen earlier in the list."""
    seen: set[Any] = set()
    again = []
    for index, item in items:
        value = item.get(key)
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


@_rule("BKN-DAC", "RQ", "ProcessActions", "Kind")
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


def _statement_problem(statement: str) -> tuple[int, str] | None:
    """(column, message) of what is wrong with ``statement``, or None when it parses."""
    try:
        parse_statement(statement)
    except StatementError as error:
        # The parser quotes the words it stumbled on: a 10 MB word must not make a 10 MB message.
        return error.column, " ".join(clip(word) for word in error.message.split(" "))
    return None


def statements_parse(dt: DataType, actions: Items) -> list[Finding]:
    found: list[Finding] = []
    for index, item in actions:
        if len(found) >= _BOUND:
            break
        statement = item.get("Statement")
        if not isinstance(statement, str) or not statement:
            continue
        problem = _statement_problem(statement)  # (parse_statement remembers the texts it parsed)
        if problem is not None:
            column, message = problem
            found.append(
                Finding.of(
                    "statement-syntax",
                    ("ProcessActions", index, "Statement"),
                    f"Step {_echo(item.get('Step'))}: column {column}: {message}",
                    data_type=dt,
                    column=column,
                )
            )
    return found


@_rule("BKN-DAC", "RQ", "Kind", "Commitments", "ReleasedCommitmentIDs")
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
    return [
        Finding.of(
            "duplicate-commitment",
            (key, index, "CommitmentID"),
            f"CommitmentID {_echo(commitment)} {what}.",
            data_type=dt,
        )
        for index, commitment in _duplicates(_objects(doc.get(key)), "CommitmentID")
    ]


# --- BKN-DAC Responses ------------------------------------------------------------------


@cache
def _enum(dt: DataType, *labels: str) -> frozenset[str]:
    found = dt.row(labels)
    return frozenset(found[1].enum or ()) if found else frozenset()


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
    return (
        feasibility_steps_unique(dt, steps)
        + overall_agrees_with_steps(dt, feasibility, steps)
        + non_ack_steps_have_reason(dt, steps)
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


def overall_agrees_with_steps(dt: DataType, feasibility: Mapping[str, Any], steps: Items) -> list[Finding]:
    if not isinstance(overall := feasibility.get("Overall"), str):
        return []
    statuses = [item.get("PAStatus") for _, item in steps]
    # A value outside the enumerations (a string not listed, or no string at all) is
    # already a conformance error; judging it again is noise.
    if overall not in _enum(dt, "Feasibility", "Overall") or not _all_in(
        statuses, _enum(dt, "Feasibility", "Steps", "PAStatus")
    ):
        return []
    expected = overall_of(statuses)
    if expected is None or expected == overall:
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


def non_ack_steps_have_reason(dt: DataType, steps: Items) -> list[Finding]:
    found: list[Finding] = []
    known = _enum(dt, "Feasibility", "Steps", "PAStatus")
    for index, item in steps:
        if len(found) >= _BOUND:
            break
        status = item.get("PAStatus")
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
    _rule(_name, "RS", "Outcome", *RESPONSE_PAYLOAD[_name])(outcome_matches_payload)
_rule("BKN-DAC", "RS", "Failure", "Outcome")(failure_degrades_outcome)


def consistency_findings(dt: DataType, doc: Document, mode: str | None) -> list[Finding]:
    """Every consistency finding for ``doc`` (already known to be an object of type ``dt``)."""
    found: list[Finding] = []
    for reads, rule in _READS.get((dt.name, mode or ""), ()):
        if reads in doc:
            found += rule(dt, doc)
    return found


_UNSET = msgspec.UNSET
_to_builtins = msgspec.to_builtins


_STRUCT_RULES: dict[type, tuple[list[tuple[str, RuleFunction]], tuple[tuple[str, str], ...]]] = {}
"""For each Struct type: the rules of its data type and Mode, each with the attribute of the
property it looks at; and (property, attribute) of every property they read."""


def _struct_rules(
    kind: type, dt: DataType, mode: str | None
) -> tuple[list[tuple[str, RuleFunction]], tuple[tuple[str, str], ...]]:
    names = {field.encode_name: field.name for field in msgspec.structs.fields(kind)}
    key = (dt.name, mode or "")
    rules = [(names[reads], rule) for reads, rule in _READS.get(key, ()) if reads in names]
    # (A property the Struct has no field for cannot be in the message: the Struct is closed.)
    read = tuple((name, names[name]) for name in sorted(_READ.get(key, ())) if name in names)
    _STRUCT_RULES[kind] = found = (rules, read)
    return found


def struct_findings(dt: DataType, value: Any, mode: str | None) -> list[Finding]:
    """:func:`consistency_findings` for a message read as a Struct (``validation._typed``): the
    rules read a dict of only the properties they read (``msgspec.to_builtins`` of each), made
    when one of them has something to look at, so that a message whose rules read little (an
    Outcome, a Kind) is never converted whole."""
    kind = type(value)
    known = _STRUCT_RULES.get(kind)
    rules, read = known if known is not None else _struct_rules(kind, dt, mode)
    doc: dict[str, Any] | None = None
    found: list[Finding] = []
    for attribute, rule in rules:
        if getattr(value, attribute) is not _UNSET:
            if doc is None:
                doc = {}
                for name, field in read:
                    if (item := getattr(value, field)) is not _UNSET:
                        doc[name] = _to_builtins(item)
            found += rule(dt, doc)
    return found
