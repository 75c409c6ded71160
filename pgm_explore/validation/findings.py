"""Findings: what validation says about a message, as data.

A :class:`Finding` is an immutable record with a rule code from the closed list
:data:`RULES`, a JSON path, a plain-language message and the spec reference. Each rule is
declared once, as its :class:`Rule` there: severity, conformance, summary, the spec clause its
findings carry and its scope. ``docs/rules.py`` writes :data:`RuleCode` and the head of each
rule's heading in ``docs/rules.md`` from it; ``tests/test_rules_doc.py`` keeps them equal.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from functools import lru_cache
from typing import TYPE_CHECKING, Any, Literal

if TYPE_CHECKING:
    from pgm_explore.spec import DataType

__all__ = ["RULES", "Finding", "Rule", "RuleCode", "Severity", "json_path"]

Severity = Literal["error", "warning"]
Scope = Literal["message", "transcript", "partner"]

# BEGIN generated from RULES by `python docs/rules.py --write`: do not edit
RuleCode = Literal[
    "syntax",
    "encoding",
    "empty",
    "too-deep",
    "too-large",
    "not-object",
    "not-json",
    "duplicate-key",
    "beyond-double",
    "header-missing",
    "header-unknown",
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
    "too-many-findings",
]
# END generated


@dataclass(frozen=True, slots=True)
class Rule:
    """One rule, declared once: everything pgm-explore says about it comes from here.

    ``spec`` is the clause its findings carry. Where it depends on the message, it is a template:
    ``{type}`` is the data type's name, ``{row}`` the clause of the place the finding is at (its
    table row, or the bundled standard's; :func:`spec_reference`), filled by :meth:`clause` from
    the data type given to :meth:`Finding.of`.
    """

    code: RuleCode
    severity: Severity
    conformance: bool
    """True when breaking the rule makes the message non-conforming (D13)."""
    summary: str
    spec: str
    scope: Scope = "message"
    """Whether one message shows it, only the messages around it (``pgm-explore check``), or an exchange
    with a partner server over MCP (``pgm_explore.mcp``: the partner, the client, ``pgm-explore probe``)."""

    @property
    def anchor(self) -> str:
        """Where the rule is explained: its heading in docs/rules.md (``tests/test_rules_doc.py``)."""
        return f"docs/rules.md#{self.code}"

    def clause(self, path: tuple[str | int, ...] = (), data_type: DataType | str | None = None) -> str:
        """The spec clause of a finding of this rule at ``path`` of a message of ``data_type``.

        >>> RULES["turn-gap"].clause(("TurnIndex",), "BKN-PAL")
        'BKN-PAL Table 1, TurnIndex (NOTES 6.3 D9)'
        >>> RULES["overall-mismatch"].clause(("Feasibility", "Overall"), "BKN-DAC")
        'BKN-DAC Table 3 (Response), Feasibility – Overall (DECISIONS D16)'
        """
        if "{" not in self.spec:
            return self.spec
        if data_type is None:
            raise ValueError(f"the clause of {self.code} names the data type: give Finding.of a data_type")
        if "{row}" not in self.spec:
            return self.spec.format(type=data_type if isinstance(data_type, str) else data_type.name)
        if isinstance(data_type, str):
            from pgm_explore.spec import data_type as named

            data_type = named(data_type)
        return self.spec.format(type=data_type.name, row=spec_reference(data_type, path))


# The places whose value is a type of another MPAI standard, bundled as published: what is
# inside them is that standard's, not the data type's tables'.
BUNDLED = {
    "DataXMData": ("PTF V1.0 Data Exchange Metadata", "D6"),
    "QueryTime": ("OSD V1.5 Simple Time", "D5"),
    "PCPromptTime": ("OSD V1.5 Simple Time", "D5"),
}


def spec_reference(dt: DataType, path: tuple[str | int, ...]) -> str:
    """The spec clause behind the value at ``path``, through the bundled schemas.

    >>> from pgm_explore.spec import data_type
    >>> spec_reference(data_type("BKN-PAL"), ("DataXMData", "Owner"))
    'PTF V1.0 Data Exchange Metadata (DECISIONS D6), via BKN-PAL Table 1, DataXMData'
    """
    try:
        return _spec_reference(dt, path)
    except TypeError:  # (a path holding what cannot be hashed: worked out each time)
        return _spec_reference.__wrapped__(dt, path)


@lru_cache(maxsize=4096)
def _spec_reference(dt: DataType, path: tuple[str | int, ...]) -> str:
    # (Remembered: the findings of a log name the same few places over and over, and working a
    # clause out walks the data type's table rows, 1.5 µs a finding.)
    labels = tuple(p for p in path if isinstance(p, str))
    if len(labels) > 1 and labels[0] in BUNDLED:
        standard, decision = BUNDLED[labels[0]]
        return f"{standard} (DECISIONS {decision}), via {dt.clause(labels[:1])}"
    return dt.clause(labels)


def _rules(*rules: Rule) -> Mapping[str, Rule]:
    return {rule.code: rule for rule in rules}


def _listed(*rows: tuple[RuleCode, Severity, str, str]) -> tuple[tuple[RuleCode, Severity, str, str], ...]:
    # Typed rows, so that a misspelt code or severity in the tables below is a type error.
    return rows


_BINDING = "MCP binding of PGM-AUA, docs/mcp.md"

RULES: Mapping[str, Rule] = _rules(
    # Reading the input (the message could not be looked at as a message).
    Rule(
        "syntax",
        "error",
        True,
        "The text is not JSON (RFC 8259): the line and column are given.",
        spec="RFC 8259 (JSON), as the spec texts' Syntax sections require",
    ),
    Rule(
        "encoding",
        "error",
        True,
        "The bytes are not UTF-8 text, or a string holds a lone surrogate UTF-8 cannot encode.",
        spec="RFC 8259 section 8.1 (JSON text shall be encoded in UTF-8) and 8.2 (unpaired surrogates)",
    ),
    Rule(
        "empty",
        "error",
        True,
        "There is nothing to read: an empty file or an empty array.",
        spec="pgm-explore input: a .json file holds one message or an array of messages, a .jsonl file one per line",
    ),
    Rule(
        "too-deep",
        "error",
        True,
        "The JSON nests deeper than pgm-explore reads (1,000 levels).",
        spec="RFC 8259 section 9: an implementation may limit the depth of nesting",
    ),
    Rule(
        "too-large",
        "error",
        True,
        "A number too long to read (more than 4,300 digits), or a line over 64 MiB.",
        spec="RFC 8259 section 9: an implementation may set limits on the range and precision of numbers",
    ),
    Rule(
        "not-object",
        "error",
        True,
        "A message must be a JSON object.",
        spec="Syntax section of every PGM-AUA data type: the schema's top level is an object",
    ),
    Rule(
        "not-json",
        "error",
        True,
        "A value built in Python that JSON cannot hold (a set, NaN, a key that is no string).",
        spec="RFC 8259 (JSON): objects with string names, arrays, strings, numbers, true, false and null",
    ),
    # Read, yet worth a word (never changes the verdict).
    Rule(
        "duplicate-key",
        "warning",
        False,
        "A name appears twice in one object: only its last value is read.",
        spec="RFC 8259 section 4: the names within an object SHOULD be unique",
    ),
    Rule(
        "beyond-double",
        "warning",
        False,
        "A number beyond what a double holds (its range, 1.8e308; or so near an integer that a double makes it "
        "that integer), which many readers lose.",
        spec="RFC 8259 section 6: numbers beyond IEEE 754 double precision may not be read alike",
    ),
    # Telling the data type and mode.
    Rule(
        "header-missing",
        "error",
        True,
        "The message has no Header, so its data type cannot be told.",
        spec='Functional Requirement "Header" of every PGM-AUA data type (DECISIONS D2)',
    ),
    Rule(
        "header-unknown",
        "error",
        True,
        "The Header is not that of a PGM-AUA V1.0 data type.",
        spec='Functional Requirement "Header" of every PGM-AUA data type (DECISIONS D2)',
    ),
    # Conformance: the message does not validate against its schema (DECISIONS D13).
    Rule("required", "error", True, "A property marked (required) in the Semantics tables is missing.", spec="{row}"),
    Rule(
        "mode-required",
        "error",
        True,
        "A property the mode requires is missing (Kind; RequestID, Outcome).",
        spec='{type} Functional Requirement "Response" (DECISIONS D7)',
    ),
    Rule(
        "mode-forbidden",
        "error",
        True,
        "A property of the other mode is present (D8).",
        spec='{type} Functional Requirement "Header"; {row} (DECISIONS D8)',
    ),
    Rule(
        "unknown-property",
        "error",
        True,
        "A property that the tables do not list for this object.",
        spec="{row}: the properties the tables list (DECISIONS D3)",
    ),
    Rule("type", "error", True, "A value of the wrong JSON type.", spec="{row}"),
    Rule("enum", "error", True, "A value outside the listed enumeration.", spec="{row}"),
    Rule(
        "const",
        "error",
        True,
        "A value that must be exactly one constant (the Header of a bundled type).",
        spec="{row}",
    ),
    Rule(
        "range",
        "error",
        True,
        "A number outside its bounds (TurnIndex, Step, MaxSteps, Confidence, ...).",
        spec="{row}",
    ),
    Rule("max-length", "error", True, "A string longer than allowed (DescrMetadata: 2048 characters).", spec="{row}"),
    Rule("pattern", "error", True, "A string that does not have the required form.", spec="{row}"),
    Rule("min-items", "error", True, "An array with fewer items than the bundled schema requires.", spec="{row}"),
    Rule("one-of", "error", True, "A value that matches none of the allowed alternatives.", spec="{row}"),
    Rule("schema", "error", True, "Any other schema violation.", spec="{row}"),
    # Consistency within one message (DECISIONS D14): never changes the verdict.
    Rule(
        "feasibility-kind",
        "warning",
        False,
        "ProcessActions in a Request whose Kind is not feasibility.",
        spec="{row} (DECISIONS D14)",
    ),
    Rule(
        "feasibility-missing",
        "warning",
        False,
        "A feasibility Request without ProcessActions.",
        spec="{row} (DECISIONS D14)",
    ),
    Rule(
        "duplicate-step",
        "warning",
        False,
        "Two Process Actions or two Feasibility steps with the same Step.",
        spec="{row}",
    ),
    Rule(
        "overall-mismatch",
        "error",
        False,
        "Feasibility.Overall contradicts the PA Status of the steps.",
        spec="{row} (DECISIONS D16)",
    ),
    Rule("reason-missing", "warning", False, "A step whose PA Status is not Ack gives no Reason.", spec="{row}"),
    Rule(
        "commitment-kind",
        "warning",
        False,
        "A commitment Request carries no Commitments or ReleasedCommitmentIDs.",
        spec='{type} Functional Requirement "Request"; {row}',
    ),
    Rule("duplicate-commitment", "warning", False, "One Request names the same CommitmentID twice.", spec="{row}"),
    Rule(
        "outcome-payload",
        "warning",
        False,
        "The Outcome does not match the payload of the Response.",
        spec='{type} Functional Requirement "Response"; {row}',
    ),
    Rule("failure-outcome", "warning", False, "A Response reports a Failure but says Outcome answered.", spec="{row}"),
    Rule(
        "empty-value",
        "warning",
        False,
        "An empty string or list where the spec expects content.",
        spec="{row} (DECISIONS D9b)",
    ),
    Rule(
        "statement-syntax",
        "warning",
        False,
        "A Process Action statement that the MMM-TEC V2.2 grammar does not parse.",
        spec="{row}; docs/process-actions.md (DECISIONS D17)",
    ),
    # Transcript rules (DECISIONS D15-D16): errors where the texts require, else warnings.
    *(
        Rule(code, severity, False, summary, spec, "transcript")
        for code, severity, summary, spec in _listed(
            (
                "request-unknown",
                "error",
                "A Response whose RequestID names no earlier Request of its type and dialogue.",
                '{type} Functional Requirement "Correlation"; DECISIONS D16',
            ),
            (
                "turn-mismatch",
                "error",
                "A Response whose TurnIndex differs from its Request's.",
                '{type} Functional Requirement "Dialogue"; DECISIONS D16',
            ),
            (
                "response-duplicate",
                "error",
                "A second Response to the same Request.",
                '{type} Functional Requirement "Correlation"; DECISIONS D16',
            ),
            (
                "query-id-reused",
                "error",
                "A QueryID already used by another message of the transcript.",
                'Functional Requirement "Identification"; Table 1, QueryID; DECISIONS D16',
            ),
            (
                "prompt-id-reused",
                "error",
                "A PCPromptID already used by another PC Prompt.",
                "PC Prompt Table 1, PCPromptID; DECISIONS D16",
            ),
            (
                "dialog-not-opened",
                "error",
                "A BKN-PRC message in a DialogID that no earlier PC Prompt opened.",
                "BKN-PRC Definition; DECISIONS D15, D16",
            ),
            (
                "turn-start",
                "warning",
                "The first exchange of a dialogue has a TurnIndex other than 0.",
                "{type} Table 1, TurnIndex",
            ),
            (
                "turn-gap",
                "warning",
                "A Request's TurnIndex is not the previous Request's plus one.",
                "{type} Table 1, TurnIndex (NOTES 6.3 D9)",
            ),
            (
                "unanswered",
                "warning",
                "A Request that no Response answers by the end of the transcript.",
                '{type} Functional Requirement "Correlation"',
            ),
            (
                "context-mismatch",
                "warning",
                "MInstance, UEnvironment or SessionID differ from the dialogue's PC Prompt.",
                'Functional Requirement "Identification"; NOTES 6.3 D4',
            ),
            (
                "time-backwards",
                "warning",
                "A QueryTime earlier than the one before it in the dialogue.",
                "Table 1, QueryTime (NOTES 6.3 D13)",
            ),
            (
                "dialog-reopened",
                "warning",
                "A second PC Prompt opens a DialogID that is already open.",
                "PC Prompt Table 1, DialogID (NOTES 6.3 D3)",
            ),
            (
                "commitment-conflict",
                "warning",
                "A retained CommitmentID is submitted again with another Statement.",
                "BKN-DAC Table 2, Commitments (NOTES 6.3 C1)",
            ),
            (
                "release-unknown",
                "warning",
                "ReleasedCommitmentIDs names a commitment the dialogue never retained.",
                "BKN-DAC Table 2, ReleasedCommitmentIDs (NOTES 6.3 C2)",
            ),
            (
                "released-twice",
                "warning",
                "ReleasedCommitmentIDs names a commitment already released.",
                "BKN-DAC Table 2, ReleasedCommitmentIDs (NOTES 6.3 C2)",
            ),
            (
                "commitment-status-unknown",
                "warning",
                "CommitmentStatus names a commitment unknown in the dialogue.",
                "BKN-DAC Table 3, CommitmentStatus (NOTES 6.3 C3)",
            ),
            (
                "commitment-status-wrong",
                "warning",
                "CommitmentStatus contradicts what the Requests asked (released, retained).",
                "BKN-DAC Table 3, CommitmentStatus (NOTES 6.3 C3)",
            ),
            (
                "commitment-unconfirmed",
                "warning",
                "A commitment submitted in a Request is missing from its Response.",
                "BKN-DAC Table 3, CommitmentStatus (NOTES 6.3 C4)",
            ),
            (
                "steps-mismatch",
                "warning",
                "The Response's Feasibility steps differ from the Request's ProcessActions.",
                "BKN-DAC Table 3, Feasibility – Steps: 'Outcome for each Process Action' (NOTES 6.3 F7)",
            ),
            (
                "too-many-steps",
                "warning",
                "More Process Actions than the ActionContext's MaxSteps.",
                "PC Prompt Table 1, ActionContext – MaxSteps (NOTES 6.3 F5)",
            ),
            (
                "action-not-in-repertoire",
                "warning",
                "A Process Action outside the Repertoire of the ActionContext.",
                "PC Prompt Table 1, ActionContext – Repertoire (NOTES 6.3 F4)",
            ),
            (
                "payload-kind",
                "warning",
                "An answered Response whose payload does not suit the Kind of its Request.",
                "BKN-DAC Table 3 (NOTES 6.3 F6, O2)",
            ),
            (
                "entity-unknown",
                "warning",
                "EntityIDs that the dialogue's PC Prompt does not know.",
                "{type} Table 2, EntityIDs (NOTES 6.3 O4)",
            ),
            (
                "stance-constraints",
                "warning",
                "A Stance whose Role or Locale differs from the Request's Constraints.",
                "BKN-PAL Table 2, Constraints; Table 3, Stance (NOTES 6.3 O5)",
            ),
            (
                "precheck-differs",
                "warning",
                "The heuristic pre-check predicts another PA Status than the one reported.",
                "NOTES 4.7 mapping table (a heuristic of pgm-explore, not a spec rule)",
            ),
        )
    ),
    # Partners over MCP (pgm_explore.mcp, docs/mcp.md): what an exchange with a partner server shows.
    *(
        Rule(code, severity, False, summary, spec, "partner")
        for code, severity, summary, spec in _listed(
            (
                "unusable-request",
                "error",
                "A document sent to a partner that no Response could name (no QueryID, DialogID, TurnIndex, ...).",
                "{row}",
            ),
            (
                "tool-arguments",
                "error",
                "A tool call whose arguments are not the binding's: one it does not list, or no message.",
                "MCP binding of PGM-AUA version 1, docs/mcp.md: the tools and their arguments",
            ),
            (
                "query-reused",
                "error",
                "A Request whose QueryID the partner has answered already.",
                "DECISIONS D16",
            ),
            (
                "action-context",
                "error",
                "The action_context beside a BKN-DAC Request is not an ActionContext.",
                "PC Prompt Table 1, ActionContext",
            ),
            (
                "request-too-large",
                "error",
                "A Request larger than the partner accepts (docs/mcp.md).",
                "limits of pgm-explore's reference partners, docs/mcp.md",
            ),
            (
                "dialog-foreign",
                "error",
                "A Request names a dialogue that another session opened.",
                "BKN-DAC Table 1, DialogID: the Model Context Protocol session",
            ),
            (
                "partner-refused",
                "error",
                "The partner answered a Request with a tool error: no Response.",
                _BINDING,
            ),
            (
                "partner-error",
                "error",
                "A JSON-RPC error or a broken connection instead of a Response.",
                _BINDING,
            ),
            (
                "partner-text-only",
                "warning",
                "A tool result without structuredContent: the Response is read from text.",
                _BINDING,
            ),
            (
                "partner-unreadable",
                "error",
                "A tool result that holds no JSON object to read as a Response.",
                _BINDING,
            ),
        )
    ),
    # The report itself.
    Rule(
        "too-many-findings",
        "warning",
        False,
        "More findings than a report keeps per message: how many were left out.",
        spec="pgm-explore: a report keeps at most 100 findings per message (docs/rules.md, too-many-findings)",
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
    def of(
        cls,
        rule: RuleCode,
        path: Iterable[str | int],
        message: str,
        spec: str | None = None,
        *,
        data_type: DataType | str | None = None,
        line: int | None = None,
        column: int | None = None,
    ) -> Finding:
        """A finding of ``rule`` with the severity and the spec clause the rule has in :data:`RULES`.

        ``data_type`` (a :class:`~pgm_explore.spec.DataType` or its name) fills a clause that names
        the data type or the place (:meth:`Rule.clause`). ``spec`` replaces the rule's clause, for
        the few findings whose clause is another one (the table row of the field they are about).

        >>> Finding.of("turn-mismatch", ("TurnIndex",), "TurnIndex is 3.", data_type="BKN-DAC").spec
        'BKN-DAC Functional Requirement "Dialogue"; DECISIONS D16'
        """
        path = tuple(path)
        known = RULES[rule]
        return cls(
            rule, path, message, known.clause(path, data_type) if spec is None else spec, known.severity, line, column
        )

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
