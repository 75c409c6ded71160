"""BKN-PRC (Header ``PGM-KPR-V1.0``): Basic Knowledge <-> Prompt Creation.

Source: MPAI PGM-AUA V1.0 data-type text "BKN-PRC" (``pgm_explore/spec/texts/BKN-PRC.txt``),
Tables 1 (common), 2 (Request, Mode RQ) and 3 (Response, Mode RS); schema ``$id``
``https://schemas.mpai.community/PGM1/V1.0/data/BKNPRC.json`` (reconstructed, DECISIONS D1-D12).
A Request requires ``Kind``, a Response ``RequestID`` and ``Outcome`` (D7); each class lacks the
other mode's properties, so ``extra="forbid"`` rejects them (D8).
"""

from typing import Annotated, Literal

from pydantic import Field, StrictStr

from pgm_explore.models._base import (
    DescrText,
    MPAIModel,
    NonNegativeInteger,
    ObjectOrString,
    Omittable,
    OutcomeValue,
    StringList,
    describe,
)
from pgm_explore.models.common import DataExchangeMetadata, SimpleTime
from pgm_explore.models.pc_prompt import (
    ActionContextModel,
    ExpressiveConfigurationModel,
    Proposition,
    ResolvedReferent,
)

__all__ = [
    "BKNPRC",
    "BKNPRCRequest",
    "BKNPRCResponse",
    "PRCKind",
    "RepresentationModel",
]

_TYPE = "BKN-PRC"

PRCKind = Literal[
    "more_context", "clarification", "referents", "intent", "propositions", "goal_constraints", "action_context"
]


def _d(*labels: str) -> str:
    return describe(_TYPE, *labels)


class RepresentationModel(MPAIModel):
    """A more complete or different representation of the understanding of the context."""

    Text: Omittable[StrictStr] = Field(None, description=_d("Representation", "Text"))
    Intent: Omittable[ObjectOrString] = Field(None, description=_d("Representation", "Intent"))
    Propositions: Omittable[list[Proposition]] = Field(None, description=_d("Representation", "Propositions"))
    ResolvedReferents: Omittable[list[ResolvedReferent]] = Field(
        None, description=_d("Representation", "ResolvedReferents")
    )
    GoalConstraints: Omittable[StringList] = Field(None, description=_d("Representation", "GoalConstraints"))
    ExpressiveConfiguration: Omittable[ExpressiveConfigurationModel] = Field(
        None, description=_d("Representation", "ExpressiveConfiguration")
    )
    ActionContext: Omittable[ActionContextModel] = Field(None, description=_d("Representation", "ActionContext"))


class _BKNPRCCommon(MPAIModel):
    """Table 1: the properties of every BKN-PRC message."""

    Header: Literal["PGM-KPR-V1.0"] = Field(description=_d("Header"))
    Mode: Literal["RQ", "RS"] = Field(description=_d("Mode"))
    MInstance: StrictStr = Field(description=_d("MInstance"))
    UEnvironment: StrictStr = Field(description=_d("UEnvironment"))
    SessionID: StrictStr = Field(description=_d("SessionID"))
    QueryID: StrictStr = Field(description=_d("QueryID"))
    QueryTime: SimpleTime = Field(description=_d("QueryTime"))
    DialogID: StrictStr = Field(description=_d("DialogID"))
    TurnIndex: NonNegativeInteger = Field(description=_d("TurnIndex"))
    DataXMData: DataExchangeMetadata = Field(description=_d("DataXMData"))
    DescrMetadata: Omittable[DescrText] = Field(None, description=_d("DescrMetadata"))


class BKNPRCRequest(_BKNPRCCommon):
    """BKN-PRC V1.0 Request (Mode RQ), sent by Basic Knowledge."""

    Mode: Literal["RQ"] = Field(description=_d("Mode"))
    Kind: PRCKind = Field(description=_d("Kind"))
    Question: Omittable[StrictStr] = Field(None, description=_d("Question"))
    EntityIDs: Omittable[StringList] = Field(None, description=_d("EntityIDs"))


class BKNPRCResponse(_BKNPRCCommon):
    """BKN-PRC V1.0 Response (Mode RS), sent by Prompt Creation."""

    Mode: Literal["RS"] = Field(description=_d("Mode"))
    RequestID: StrictStr = Field(description=_d("RequestID"))
    Outcome: OutcomeValue = Field(description=_d("Outcome"))
    Representation: Omittable[RepresentationModel] = Field(None, description=_d("Representation"))


BKNPRC = Annotated[BKNPRCRequest | BKNPRCResponse, Field(discriminator="Mode")]
"""A BKN-PRC message: Request or Response, told apart by ``Mode``."""
