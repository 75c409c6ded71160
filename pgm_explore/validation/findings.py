"""Findings: what validation says about a message, as data.

A :class:`Finding` is an immutable record with a rule code from the closed list
:data:`RULES` (documented, one heading per code, in ``docs/rules.md``; a test keeps the
two equal), a JSON path, a plain-language message and the spec reference.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any, Literal, get_args

__all__ = ["RULES", "Finding", "Rule", "RuleCode", "Severity", "json_path"]

Severity = Literal["error", "warning"]

RuleCode = Literal[
    # Reading the input (the message could not be looked at as a message).
    "syntax",
    "encoding",
    "empty",
    "too-deep",
    "not-object",
    # Telling the data type and mode.
    "header-missing",
    "header-unknown",
    # Conformance: the message does not validate against its schema (DECISIONS D13).
    "required",
    "mode-required",
    "mode-forbidden",
    "unknown-property",
    "type",
    "enum",
    "const",
    "range",
    "max-length",
    "pattern",
    "min-items",
    "one-of",
    "schema",
    # Consistency within one message (DECISIONS D14): never changes the verdict.
    "feasibility-kind",
    "feasibility-missing",
    "duplicate-step",
    "overall-mismatch",
    "reason-missing",
    "commitment-kind",
    "duplicate-commitment",
    "outcome-payload",
    "failure-outcome",
    "empty-value",
]


@dataclass(frozen=True, slots=True)
class Rule:
    code: RuleCode
    severity: Severity
    conformance: bool
    """True when breaking the rule makes the message non-conforming (D13)."""
    summary: str


def _rules(*rules: Rule) -> Mapping[str, Rule]:
    return {rule.code: rule for rule in rules}


RULES: Mapping[str, Rule] = _rules(
    Rule("syntax", "error", True, "The text is not JSON (RFC 8259): the line and column are given."),
    Rule("encoding", "error", True, "The bytes are not UTF-8 text."),
    Rule("empty", "error", True, "There is nothing to read: an empty file or an empty array."),
    Rule("too-deep", "error", True, "The JSON nests deeper than pgm-explore reads (1,000 levels)."),
    Rule("not-object", "error", True, "A message must be a JSON object."),
    Rule("header-missing", "error", True, "The message has no Header, so its data type cannot be told."),
    Rule("header-unknown", "error", True, "The Header is not that of a PGM-AUA V1.0 data type."),
    Rule("required", "error", True, "A property marked (required) in the Semantics tables is missing."),
    Rule("mode-required", "error", True, "A property the mode requires is missing (Kind; RequestID, Outcome)."),
    Rule("mode-forbidden", "error", True, "A property of the other mode is present (D8)."),
    Rule("unknown-property", "error", True, "A property that the tables do not list for this object."),
    Rule("type", "error", True, "A value of the wrong JSON type."),
    Rule("enum", "error", True, "A value outside the listed enumeration."),
    Rule("const", "error", True, "A value that must be exactly one constant (the Header of a bundled type)."),
    Rule("range", "error", True, "A number outside its bounds (TurnIndex, Step, MaxSteps, Confidence, ...)."),
    Rule("max-length", "error", True, "A string longer than allowed (DescrMetadata: 2048 characters)."),
    Rule("pattern", "error", True, "A string that does not have the required form."),
    Rule("min-items", "error", True, "An array with fewer items than the bundled schema requires."),
    Rule("one-of", "error", True, "A value that matches none of the allowed alternatives."),
    Rule("schema", "error", True, "Any other schema violation."),
    Rule("feasibility-kind", "warning", False, "ProcessActions in a Request whose Kind is not feasibility."),
    Rule("feasibility-missing", "warning", False, "A feasibility Request without ProcessActions."),
    Rule("duplicate-step", "warning", False, "Two Process Actions or two Feasibility steps with the same Step."),
    Rule("overall-mismatch", "error", False, "Feasibility.Overall contradicts the PA Status of the steps."),
    Rule("reason-missing", "warning", False, "A step whose PA Status is not Ack gives no Reason."),
    Rule(
        "commitment-kind",
        "warning",
        False,
        "A commitment Request carries no Commitments or ReleasedCommitmentIDs.",
    ),
    Rule("duplicate-commitment", "warning", False, "One Request names the same CommitmentID twice."),
    Rule("outcome-payload", "warning", False, "The Outcome does not match the payload of the Response."),
    Rule("failure-outcome", "warning", False, "A Response reports a Failure but says Outcome answered."),
    Rule("empty-value", "warning", False, "An empty string or list where the spec expects content."),
)

assert set(RULES) == set(get_args(RuleCode)), "RULES and RuleCode must list the same codes"


def json_path(path: Iterable[str | int]) -> str:
    """JSONPath of a location, as python-jsonschema writes it.

    >>> json_path(["Feasibility", "Steps", 0, "PAStatus"])
    '$.Feasibility.Steps[0].PAStatus'
    >>> json_path([])
    '$'
    """
    out = ["$"]
    for part in path:
        if isinstance(part, int):
            out.append(f"[{part}]")
        elif part.isidentifier():
            out.append(f".{part}")
        else:
            out.append("[" + repr(part) + "]")
    return "".join(out)


@dataclass(frozen=True, slots=True)
class Finding:
    """One problem found in a message, at one place.

    ``path`` is the location as a tuple of keys and indices; ``json_path`` renders it.
    ``line`` and ``column`` are set for findings about the text itself (``syntax``).
    """

    rule: RuleCode
    path: tuple[str | int, ...]
    message: str
    spec: str
    severity: Severity = "error"
    line: int | None = None
    column: int | None = None

    @classmethod
    def of(cls, rule: RuleCode, path: Iterable[str | int], message: str, spec: str, **where: Any) -> Finding:
        """A finding with the severity its rule has in :data:`RULES`."""
        return cls(rule, tuple(path), message, spec, RULES[rule].severity, **where)

    @property
    def json_path(self) -> str:
        return json_path(self.path)

    @property
    def conformance(self) -> bool:
        """True when this finding makes the message non-conforming."""
        return RULES[self.rule].conformance

    def to_dict(self) -> dict[str, Any]:
        """The form ``pgm-explore validate --format json`` prints."""
        out: dict[str, Any] = {
            "severity": self.severity,
            "rule": self.rule,
            "path": self.json_path,
            "message": self.message,
            "spec": self.spec,
        }
        if self.line is not None:
            out["line"] = self.line
            out["column"] = self.column
        return out
