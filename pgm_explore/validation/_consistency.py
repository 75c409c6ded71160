"""Consistency rules within one message (DECISIONS D14).

Each rule is a small generator named after what it checks, registered for the data
type and mode it applies to, in the manner of python-jsonschema's keyword functions.
The rules see messages that may not conform, so they look before they touch: a value of
the wrong type is the schema's business, not theirs. They never change the verdict.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterator, Mapping
from typing import Any

from pgm_explore.spec import DataType
from pgm_explore.spec.process_actions import StatementError, parse_statement
from pgm_explore.validation.findings import Finding

__all__ = ["RULE_FUNCTIONS", "consistency_findings"]

Document = Mapping[str, Any]
RuleFunction = Callable[[DataType, Document], Iterator[Finding]]

RULE_FUNCTIONS: dict[tuple[str, str], list[RuleFunction]] = {}


def _rule(type_name: str, mode: str) -> Callable[[RuleFunction], RuleFunction]:
    def register(function: RuleFunction) -> RuleFunction:
        RULE_FUNCTIONS.setdefault((type_name, mode), []).append(function)
        return function

    return register


def _objects(value: Any) -> list[tuple[int, Mapping[str, Any]]]:
    return [(i, item) for i, item in enumerate(value) if isinstance(item, dict)] if isinstance(value, list) else []


def _duplicates(items: list[tuple[int, Any]]) -> Iterator[tuple[int, Any]]:
    """Every (index, key) whose key was already seen earlier in the list."""
    seen: set[Any] = set()
    for index, key in items:
        if isinstance(key, str | int) and not isinstance(key, bool):
            if key in seen:
                yield index, key
            seen.add(key)


# --- BKN-DAC Requests -------------------------------------------------------------------


@_rule("BKN-DAC", "RQ")
def process_actions_need_feasibility(dt: DataType, doc: Document) -> Iterator[Finding]:
    kind = doc.get("Kind")
    if "ProcessActions" in doc and isinstance(kind, str) and kind != "feasibility":
        yield Finding.of(
            "feasibility-kind",
            ("ProcessActions",),
            f'ProcessActions are validated "when Kind is feasibility", but this Request has Kind {kind}.',
            f"{dt.clause(('ProcessActions',))} (DECISIONS D14)",
        )


@_rule("BKN-DAC", "RQ")
def feasibility_needs_process_actions(dt: DataType, doc: Document) -> Iterator[Finding]:
    actions = doc.get("ProcessActions")
    if doc.get("Kind") == "feasibility" and (actions is None or actions == []):
        yield Finding.of(
            "feasibility-missing",
            ("ProcessActions",),
            "This Request asks for feasibility but carries no ProcessActions to validate.",
            f"{dt.clause(('ProcessActions',))} (DECISIONS D14)",
        )


@_rule("BKN-DAC", "RQ")
def process_action_steps_unique(dt: DataType, doc: Document) -> Iterator[Finding]:
    steps = [(i, item.get("Step")) for i, item in _objects(doc.get("ProcessActions"))]
    for index, step in _duplicates(steps):
        yield Finding.of(
            "duplicate-step",
            ("ProcessActions", index, "Step"),
            f"Step {step} appears more than once among the ProcessActions; each Step indexes one Process Action.",
            dt.clause(("ProcessActions", "Step")),
        )


@_rule("BKN-DAC", "RQ")
def statements_parse(dt: DataType, doc: Document) -> Iterator[Finding]:
    for index, item in _objects(doc.get("ProcessActions")):
        statement = item.get("Statement")
        if not isinstance(statement, str) or not statement:
            continue
        try:
            parse_statement(statement)
        except StatementError as error:
            yield Finding.of(
                "statement-syntax",
                ("ProcessActions", index, "Statement"),
                f"Step {item.get('Step')}: column {error.column}: {error.message}",
                f"{dt.clause(('ProcessActions', 'Statement'))}; docs/process-actions.md (DECISIONS D17)",
                column=error.column,
            )


@_rule("BKN-DAC", "RQ")
def commitment_request_has_commitments(dt: DataType, doc: Document) -> Iterator[Finding]:
    if doc.get("Kind") == "commitment" and not doc.get("Commitments") and not doc.get("ReleasedCommitmentIDs"):
        yield Finding.of(
            "commitment-kind",
            ("Commitments",),
            "This Request has Kind commitment but carries no Commitments to retain and no ReleasedCommitmentIDs.",
            f"{dt.requirement('Request')}; {dt.clause(('Commitments',))}",
        )


@_rule("BKN-DAC", "RQ")
def commitment_ids_unique(dt: DataType, doc: Document) -> Iterator[Finding]:
    ids = [(i, item.get("CommitmentID")) for i, item in _objects(doc.get("Commitments"))]
    for index, commitment in _duplicates(ids):
        yield Finding.of(
            "duplicate-commitment",
            ("Commitments", index, "CommitmentID"),
            f"CommitmentID {commitment} is submitted twice in this Request.",
            dt.clause(("Commitments", "CommitmentID")),
        )


# --- BKN-DAC Responses ------------------------------------------------------------------


def _enum(dt: DataType, *labels: str) -> frozenset[str]:
    found = dt.row(labels)
    return frozenset(found[1].enum or ()) if found else frozenset()


def _feasibility_steps(doc: Document) -> list[tuple[int, Mapping[str, Any]]]:
    feasibility = doc.get("Feasibility")
    return _objects(feasibility.get("Steps")) if isinstance(feasibility, dict) else []


@_rule("BKN-DAC", "RS")
def feasibility_steps_unique(dt: DataType, doc: Document) -> Iterator[Finding]:
    steps = [(i, item.get("Step")) for i, item in _feasibility_steps(doc)]
    for index, step in _duplicates(steps):
        yield Finding.of(
            "duplicate-step",
            ("Feasibility", "Steps", index, "Step"),
            f"Step {step} has more than one outcome in Feasibility.Steps.",
            dt.clause(("Feasibility", "Steps", "Step")),
        )


def expected_overall(statuses: list[str]) -> str | None:
    """What Feasibility.Overall must say given the steps' PA Status (DECISIONS D16).

    >>> expected_overall(["Ack", "InsValue"])
    'partially_feasible'
    >>> expected_overall([]) is None
    True
    """
    if not statuses:
        return None
    acks = statuses.count("Ack")
    if acks == len(statuses):
        return "feasible"
    return "infeasible" if acks == 0 else "partially_feasible"


@_rule("BKN-DAC", "RS")
def overall_agrees_with_steps(dt: DataType, doc: Document) -> Iterator[Finding]:
    feasibility = doc.get("Feasibility")
    if not isinstance(feasibility, dict) or not isinstance(overall := feasibility.get("Overall"), str):
        return
    steps = _feasibility_steps(doc)
    statuses = [item.get("PAStatus") for _, item in steps]
    # A value outside the enumerations is already a conformance error; judging it again is noise.
    known = _enum(dt, "Feasibility", "Steps", "PAStatus")
    if overall not in _enum(dt, "Feasibility", "Overall") or not all(s in known for s in statuses):
        return
    expected = expected_overall(statuses)  # type: ignore[arg-type]
    if expected is None or expected == overall:
        return
    counts = Counter(statuses)
    tally = ", ".join(f"{n} {status}" for status, n in counts.most_common())
    yield Finding.of(
        "overall-mismatch",
        ("Feasibility", "Overall"),
        f"Overall is {overall}, but the steps say {expected} ({tally}): "
        "all Ack is feasible, no Ack is infeasible, anything else is partially_feasible.",
        f"{dt.clause(('Feasibility', 'Overall'))} (DECISIONS D16)",
    )


@_rule("BKN-DAC", "RS")
def non_ack_steps_have_reason(dt: DataType, doc: Document) -> Iterator[Finding]:
    for index, item in _feasibility_steps(doc):
        status = item.get("PAStatus")
        if status != "Ack" and status in _enum(dt, "Feasibility", "Steps", "PAStatus") and "Reason" not in item:
            yield Finding.of(
                "reason-missing",
                ("Feasibility", "Steps", index, "Reason"),
                f"Step {item.get('Step')} has PA Status {status} but gives no Reason; "
                "Basic Knowledge cannot repair a step without knowing why it failed.",
                dt.clause(("Feasibility", "Steps", "Reason")),
            )


@_rule("BKN-DAC", "RS")
def commitment_status_ids_unique(dt: DataType, doc: Document) -> Iterator[Finding]:
    ids = [(i, item.get("CommitmentID")) for i, item in _objects(doc.get("CommitmentStatus"))]
    for index, commitment in _duplicates(ids):
        yield Finding.of(
            "duplicate-commitment",
            ("CommitmentStatus", index, "CommitmentID"),
            f"CommitmentID {commitment} has more than one status in this Response.",
            dt.clause(("CommitmentStatus", "CommitmentID")),
        )


# --- Responses of every interaction type -----------------------------------------------

_PAYLOAD = {
    "BKN-PRC": ("Representation",),
    "BKN-DAC": ("Answer", "CommitmentStatus", "Feasibility", "SourcesUsed"),
    "BKN-PAL": ("Stance",),
}


def outcome_matches_payload(dt: DataType, doc: Document) -> Iterator[Finding]:
    outcome = doc.get("Outcome")
    present = [key for key in _PAYLOAD[dt.name] if doc.get(key)]
    if outcome == "not_answered" and present:
        yield Finding.of(
            "outcome-payload",
            (present[0],),
            f"Outcome is not_answered, yet the Response carries {', '.join(present)}.",
            f"{dt.requirement('Response')}; {dt.clause(('Outcome',))}",
        )
    elif outcome in ("answered", "partially_answered") and not present:
        yield Finding.of(
            "outcome-payload",
            ("Outcome",),
            f"Outcome is {outcome}, yet the Response carries none of {', '.join(_PAYLOAD[dt.name])}.",
            f"{dt.requirement('Response')}; {dt.clause(('Outcome',))}",
        )


def failure_degrades_outcome(dt: DataType, doc: Document) -> Iterator[Finding]:
    if "Failure" in doc and doc.get("Outcome") == "answered":
        yield Finding.of(
            "failure-outcome",
            ("Failure",),
            "The Response reports the Failure of a source yet says Outcome answered; "
            "a failed source normally leaves the answer partial (partially_answered) or missing (not_answered).",
            dt.clause(("Failure",)),
        )


for _name in _PAYLOAD:
    _rule(_name, "RS")(outcome_matches_payload)
_rule("BKN-DAC", "RS")(failure_degrades_outcome)


def consistency_findings(dt: DataType, doc: Document, mode: str | None) -> list[Finding]:
    """Every consistency finding for ``doc`` (already known to be an object of type ``dt``)."""
    return [finding for rule in RULE_FUNCTIONS.get((dt.name, mode or ""), ()) for finding in rule(dt, doc)]
