"""Findings: what validation says about a message, as data.

A :class:`Finding` is an immutable record with a rule code from the closed list
:data:`RULES` (documented, one heading per code, in ``docs/rules.md``; a test keeps the
two equal), a JSON path, a plain-language message and the spec reference.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any, Literal

__all__ = ["RULES", "Finding", "Rule", "RuleCode", "Severity", "json_path"]

Severity = Literal["error", "warning"]

RuleCode = Literal[
    # Reading the input (the message could not be looked at as a message).
    "syntax",
    "encoding",
    "empty",
    "too-deep",
    "too-large",
    "not-object",
    "not-json",
    # Read, yet worth a word (never changes the verdict).
    "duplicate-key",
    "beyond-double",
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
    "statement-syntax",
    # Transcript rules (DECISIONS D15-D16): errors where the texts require, else warnings.
    "request-unknown",
    "turn-mismatch",
    "response-duplicate",
    "query-id-reused",
    "prompt-id-reused",
    "dialog-not-opened",
    "turn-start",
    "turn-gap",
    "unanswered",
    "context-mismatch",
    "time-backwards",
    "dialog-reopened",
    "commitment-conflict",
    "release-unknown",
    "released-twice",
    "commitment-status-unknown",
    "commitment-status-wrong",
    "commitment-unconfirmed",
    "steps-mismatch",
    "too-many-steps",
    "action-not-in-repertoire",
    "payload-kind",
    "entity-unknown",
    "stance-constraints",
    "precheck-differs",
    # Partners over MCP (pgm_explore.mcp, docs/mcp.md): what an exchange with a partner server shows.
    "unusable-request",
    "tool-arguments",
    "query-reused",
    "action-context",
    "request-too-large",
    "dialog-foreign",
    "partner-refused",
    "partner-error",
    "partner-text-only",
    "partner-unreadable",
    # The report itself.
    "too-many-findings",
]


@dataclass(frozen=True, slots=True)
class Rule:
    code: RuleCode
    severity: Severity
    conformance: bool
    """True when breaking the rule makes the message non-conforming (D13)."""
    summary: str
    scope: Literal["message", "transcript", "partner"] = "message"
    """Whether one message shows it, only the messages around it (``pgm-explore check``), or an exchange
    with a partner server over MCP (``pgm_explore.mcp``: the partner, the client, ``pgm-explore probe``)."""


def _rules(*rules: Rule) -> Mapping[str, Rule]:
    return {rule.code: rule for rule in rules}


def _listed(*rows: tuple[RuleCode, Severity, str]) -> tuple[tuple[RuleCode, Severity, str], ...]:
    # Typed rows, so that a misspelt code or severity in the tables below is a type error.
    return rows


RULES: Mapping[str, Rule] = _rules(
    Rule("syntax", "error", True, "The text is not JSON (RFC 8259): the line and column are given."),
    Rule(
        "encoding",
        "error",
        True,
        "The bytes are not UTF-8 text, or a string holds a lone surrogate UTF-8 cannot encode.",
    ),
    Rule("empty", "error", True, "There is nothing to read: an empty file or an empty array."),
    Rule("too-deep", "error", True, "The JSON nests deeper than pgm-explore reads (1,000 levels)."),
    Rule("too-large", "error", True, "A number too long to read (more than 4,300 digits), or a line over 64 MiB."),
    Rule("not-object", "error", True, "A message must be a JSON object."),
    Rule(
        "not-json",
        "error",
        True,
        "A value built in Python that JSON cannot hold (a set, NaN, a key that is no string).",
    ),
    Rule("duplicate-key", "warning", False, "A name appears twice in one object: only its last value is read."),
    Rule(
        "beyond-double",
        "warning",
        False,
        "A number beyond what a double holds (its range, 1.8e308; or so near an integer that a double makes it "
        "that integer), which many readers lose.",
    ),
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
    Rule(
        "statement-syntax", "warning", False, "A Process Action statement that the MMM-TEC V2.2 grammar does not parse."
    ),
    *(
        Rule(code, severity, False, summary, "transcript")
        for code, severity, summary in _listed(
            (
                "request-unknown",
                "error",
                "A Response whose RequestID names no earlier Request of its type and dialogue.",
            ),
            ("turn-mismatch", "error", "A Response whose TurnIndex differs from its Request's."),
            ("response-duplicate", "error", "A second Response to the same Request."),
            ("query-id-reused", "error", "A QueryID already used by another message of the transcript."),
            ("prompt-id-reused", "error", "A PCPromptID already used by another PC Prompt."),
            ("dialog-not-opened", "error", "A BKN-PRC message in a DialogID that no earlier PC Prompt opened."),
            ("turn-start", "warning", "The first exchange of a dialogue has a TurnIndex other than 0."),
            ("turn-gap", "warning", "A Request's TurnIndex is not the previous Request's plus one."),
            ("unanswered", "warning", "A Request that no Response answers by the end of the transcript."),
            (
                "context-mismatch",
                "warning",
                "MInstance, UEnvironment or SessionID differ from the dialogue's PC Prompt.",
            ),
            ("time-backwards", "warning", "A QueryTime earlier than the one before it in the dialogue."),
            ("dialog-reopened", "warning", "A second PC Prompt opens a DialogID that is already open."),
            ("commitment-conflict", "warning", "A retained CommitmentID is submitted again with another Statement."),
            ("release-unknown", "warning", "ReleasedCommitmentIDs names a commitment the dialogue never retained."),
            ("released-twice", "warning", "ReleasedCommitmentIDs names a commitment already released."),
            ("commitment-status-unknown", "warning", "CommitmentStatus names a commitment unknown in the dialogue."),
            (
                "commitment-status-wrong",
                "warning",
                "CommitmentStatus contradicts what the Requests asked (released, retained).",
            ),
            ("commitment-unconfirmed", "warning", "A commitment submitted in a Request is missing from its Response."),
            ("steps-mismatch", "warning", "The Response's Feasibility steps differ from the Request's ProcessActions."),
            ("too-many-steps", "warning", "More Process Actions than the ActionContext's MaxSteps."),
            ("action-not-in-repertoire", "warning", "A Process Action outside the Repertoire of the ActionContext."),
            ("payload-kind", "warning", "An answered Response whose payload does not suit the Kind of its Request."),
            ("entity-unknown", "warning", "EntityIDs that the dialogue's PC Prompt does not know."),
            ("stance-constraints", "warning", "A Stance whose Role or Locale differs from the Request's Constraints."),
            (
                "precheck-differs",
                "warning",
                "The heuristic pre-check predicts another PA Status than the one reported.",
            ),
        )
    ),
    *(
        Rule(code, severity, False, summary, "partner")
        for code, severity, summary in _listed(
            (
                "unusable-request",
                "error",
                "A document sent to a partner that no Response could name (no QueryID, DialogID, TurnIndex, ...).",
            ),
            (
                "tool-arguments",
                "error",
                "A tool call whose arguments are not the binding's: one it does not list, or no message.",
            ),
            ("query-reused", "error", "A Request whose QueryID the partner has answered already."),
            ("action-context", "error", "The action_context beside a BKN-DAC Request is not an ActionContext."),
            ("request-too-large", "error", "A Request larger than the partner accepts (docs/mcp.md)."),
            ("dialog-foreign", "error", "A Request names a dialogue that another session opened."),
            ("partner-refused", "error", "The partner answered a Request with a tool error: no Response."),
            ("partner-error", "error", "A JSON-RPC error or a broken connection instead of a Response."),
            (
                "partner-text-only",
                "warning",
                "A tool result without structuredContent: the Response is read from text.",
            ),
            ("partner-unreadable", "error", "A tool result that holds no JSON object to read as a Response."),
        )
    ),
    Rule(
        "too-many-findings", "warning", False, "More findings than a report keeps per message: how many were left out."
    ),
)

CLIPPED = 40
"""Characters of a name or value from the message that a finding's message quotes at most."""


def clip(text: str, limit: int = CLIPPED) -> str:
    """``text`` cut to ``limit`` characters, with "…" when something was left out.

    Messages quote what the sender wrote (a property name, a Kind, a Step); a 10 MB name
    must not make a 10 MB message.

    >>> clip("Questoin"), clip("x" * 50)
    ('Questoin', 'xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx…')
    """
    return text if len(text) <= limit else text[:limit] + "…"


def shown(value: Any) -> str:
    """A short, safe rendering of a value for a message (never the whole of a 10 MB string)."""
    if isinstance(value, bool) or value is None:
        return {True: "true", False: "false", None: "null"}[value]
    if isinstance(value, str):
        text = value if len(value) <= CLIPPED else value[:CLIPPED] + "…"
        return f'the string "{text}"'
    if isinstance(value, int | float):
        text = written(value)
        return text if text.startswith(("an ", "about ")) else f"the number {text}"
    if isinstance(value, list):
        return f"an array of {len(value)} item{'s' if len(value) != 1 else ''}"
    if isinstance(value, dict):
        return "an object"
    return type(value).__name__


def written(value: Any) -> str:
    """``repr(value)`` clipped; an integer too long to quote in scientific notation, or by
    its size when Python will not write it (more than 4,300 digits: the reader refuses
    them, but a dict built in Python may hold one).

    >>> written(-1), written(2.5), written(10**400), written(-(10**45) - 1), written(10**5000)
    ('-1', '2.5', '1e+400', 'about -1e+45', 'an integer of about 5,000 digits')
    """
    try:
        text = repr(value)
    except ValueError:
        return f"an integer of about {int(abs(value).bit_length() * 0.30103):,} digits"
    if len(text) <= CLIPPED or not isinstance(value, int) or isinstance(value, bool):
        return clip(text)
    from decimal import Decimal  # (only for integers too long to quote)

    short = f"{Decimal(text):.5e}"  # (rounded to six significant digits)
    exact = Decimal(short) == Decimal(text)
    mantissa, _, exponent = short.partition("e")
    short = f"{mantissa.rstrip('0').rstrip('.')}e{exponent}"
    return short if exact else f"about {short}"


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
