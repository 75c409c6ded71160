"""The facts of a PGM-AUA exchange that code acts on: Headers, modes, enumerations, payloads, Overall.

Sources: the PGM-AUA V1.0 data-type texts (``texts/``: Tables 1-3 of each type, their "One of:"
enumerations and Functional Requirements), DECISIONS D2 (Headers), D7 (Kind, RequestID, Outcome),
D16 (Overall from the steps) and NOTES 6.3 O2 (the payload a Kind calls for).

Each fact is written here once; the models (their ``Literal`` types), the validator, the transcript
rules, the widgets and the MCP partners import it. The enumerations are ``Literal`` types so that a
type checker and pydantic read them; ``tests/test_spec_tables.py`` holds each one to the enumeration
its spec table lists, so the code and the text cannot drift apart.

>>> MODE_WORDS["RS"], header_of(BKNDACHeader)
('Response', 'PGM-KDA-V1.0')
>>> overall_of(["Ack", "InsValue"]), overall_of(["Ack", "Ack"]), overall_of([])
('partially_feasible', 'feasible', None)
>>> RESPONSE_PAYLOAD["BKN-PAL"], PAYLOAD_FOR_KIND[("BKN-PRC", "intent")]
(('Stance',), ('Representation', ('Intent',)))
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any, Literal, get_args

__all__ = [
    "BKNDACHeader",
    "BKNPALHeader",
    "BKNPRCHeader",
    "CommitmentState",
    "DACKind",
    "DATA_EXCHANGE_METADATA_ID",
    "DataExchangeMetadataHeader",
    "FailureNature",
    "MODE_WORDS",
    "Mode",
    "OUTCOMES",
    "OVERALLS",
    "OutcomeValue",
    "OverallValue",
    "PAYLOAD_FOR_KIND",
    "PCPromptHeader",
    "PRCKind",
    "RESPONSE_PAYLOAD",
    "RequestMode",
    "ResponseMode",
    "header_of",
    "overall_of",
]

# --- Headers (DECISIONS D2): "<acronym>-V<version>", one Literal per type --------------------------

PCPromptHeader = Literal["PGM-PCP-V1.0"]
BKNPRCHeader = Literal["PGM-KPR-V1.0"]
BKNDACHeader = Literal["PGM-KDA-V1.0"]
BKNPALHeader = Literal["PGM-KPA-V1.0"]
DataExchangeMetadataHeader = Literal["PTF-DEM-V1.0"]
"""Header of MPAI-PTF V1.0 Data Exchange Metadata (``DataXMData``, DECISIONS D6)."""

DATA_EXCHANGE_METADATA_ID = "https://schemas.mpai.community/PTF/V1.0/data/DataExchangeMetadata.json"


def header_of(literal: Any) -> str:
    """The one value of a one-value ``Literal`` (a Header type): how :data:`DATA_TYPES` reads them."""
    (value,) = get_args(literal)
    return str(value)


# --- Modes (Table 1 of the BKN types: "RQ for a Request, RS for a Response") -----------------------

RequestMode = Literal["RQ"]
ResponseMode = Literal["RS"]
Mode = Literal[RequestMode, ResponseMode]
MODE_WORDS: Mapping[str, str] = {"RQ": "Request", "RS": "Response"}
"""What each Mode is called in the spec texts' prose and table titles."""

# --- Enumerations of the spec tables ---------------------------------------------------------------

OutcomeValue = Literal["answered", "partially_answered", "not_answered"]
"""``Outcome`` of a Response, the same in the three BKN types (Table 3)."""
OUTCOMES: tuple[str, ...] = get_args(OutcomeValue)

PRCKind = Literal[
    "more_context", "clarification", "referents", "intent", "propositions", "goal_constraints", "action_context"
]
"""BKN-PRC Table 2, ``Kind``."""
DACKind = Literal[
    "semantic_grounding",
    "affordances",
    "constraints",
    "behavioural_expectations",
    "feasibility",
    "clarification",
    "commitment",
]
"""BKN-DAC Table 2, ``Kind``."""
CommitmentState = Literal["retained", "released", "conflicting"]
"""BKN-DAC Table 3, ``CommitmentStatus – Status``."""
FailureNature = Literal["transient", "permanent"]
"""BKN-DAC Table 3, ``Failure – Nature``."""
OverallValue = Literal["feasible", "partially_feasible", "infeasible"]
"""BKN-DAC Table 3, ``Feasibility – Overall``."""
OVERALLS: tuple[str, ...] = get_args(OverallValue)


def overall_of(statuses: Iterable[object]) -> OverallValue | None:
    """What ``Feasibility.Overall`` must say given the PA Status of the steps (DECISIONS D16):
    all Ack is feasible, no Ack is infeasible, anything else is partially_feasible; no steps, nothing.

    >>> overall_of(["InsRights", "LocOOR"])
    'infeasible'
    """
    steps = acks = 0
    for status in statuses:
        steps += 1
        acks += status == "Ack"
    if not steps:
        return None
    if acks == steps:
        return "feasible"
    return "infeasible" if acks == 0 else "partially_feasible"


# --- Payloads of a Response ------------------------------------------------------------------------

RESPONSE_PAYLOAD: Mapping[str, tuple[str, ...]] = {
    "BKN-PRC": ("Representation",),
    "BKN-DAC": ("Answer", "CommitmentStatus", "Feasibility", "SourcesUsed"),
    "BKN-PAL": ("Stance",),
}
"""The Response properties of each BKN type that answer the Request (Table 3 less the identities,
Outcome and Failure): what an Outcome of answered promises and not_answered rules out."""

PAYLOAD_FOR_KIND: Mapping[tuple[str, str], tuple[str, tuple[str, ...]]] = {
    ("BKN-PRC", "referents"): ("Representation", ("ResolvedReferents",)),
    ("BKN-PRC", "intent"): ("Representation", ("Intent",)),
    ("BKN-PRC", "propositions"): ("Representation", ("Propositions",)),
    ("BKN-PRC", "goal_constraints"): ("Representation", ("GoalConstraints",)),
    ("BKN-PRC", "action_context"): ("Representation", ("ActionContext",)),
    ("BKN-DAC", "semantic_grounding"): ("Answer", ("ObjectClasses", "Relations", "Text")),
    ("BKN-DAC", "affordances"): ("Answer", ("Affordances",)),
    ("BKN-DAC", "constraints"): ("Answer", ("Constraints",)),
    ("BKN-DAC", "behavioural_expectations"): ("Answer", ("BehaviouralExpectations",)),
    ("BKN-DAC", "clarification"): ("Answer", ("Text",)),
}
"""(data type, Kind of the Request) → (payload property, its members one of which an answered Response
should carry) (NOTES 6.3 O2). Kinds not listed (more_context, clarification of BKN-PRC, feasibility,
commitment) are answered in a way no single member shows."""
