"""BKN-PRC (Header ``PGM-KPR-V1.0``): Basic Knowledge <-> Prompt Creation.

Source: MPAI PGM-AUA V1.0 data-type text "BKN-PRC" (``pgm_explore/spec/texts/BKN-PRC.txt``),
Tables 1 (common), 2 (Request, Mode RQ) and 3 (Response, Mode RS); schema ``$id``
``https://schemas.mpai.community/PGM1/V1.0/data/BKNPRC.json`` (reconstructed, DECISIONS D1-D12).
A Request requires ``Kind``, a Response ``RequestID`` and ``Outcome`` (D7); each class lacks the
other mode's properties, so ``extra="forbid"`` rejects them (D8).
"""

from typing import Annotated

from pydantic import Field, StrictStr

from pgm_explore.models._base import (
    MPAIModel,
    ObjectOrString,
    Omittable,
    StringList,
    describe,
)
from pgm_explore.models._bkn import BKNMessage
from pgm_explore.models.pc_prompt import (
    ActionContextModel,
    ExpressiveConfigurationModel,
    Proposition,
    ResolvedReferent,
)
from pgm_explore.spec import BKNPRCHeader, OutcomeValue, PRCKind, RequestMode, ResponseMode

__all__ = [
    "BKNPRC",
    "BKNPRCRequest",
    "BKNPRCResponse",
    "PRCKind",
    "RepresentationModel",
]

_TYPE = "BKN-PRC"


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


class _BKNPRCCommon(BKNMessage):
    """Table 1 of BKN-PRC: the properties every BKN-PRC message shares with the other BKN types."""

    data_type_name = _TYPE
    Header: BKNPRCHeader


class BKNPRCRequest(_BKNPRCCommon):
    """BKN-PRC V1.0 Request (Mode RQ), sent by Basic Knowledge."""

    Mode: RequestMode = Field(description=_d("Mode"))
    Kind: PRCKind = Field(description=_d("Kind"))
    Question: Omittable[StrictStr] = Field(None, description=_d("Question"))
    EntityIDs: Omittable[StringList] = Field(None, description=_d("EntityIDs"))


class BKNPRCResponse(_BKNPRCCommon):
    """BKN-PRC V1.0 Response (Mode RS), sent by Prompt Creation."""

    Mode: ResponseMode = Field(description=_d("Mode"))
    RequestID: StrictStr = Field(description=_d("RequestID"))
    Outcome: OutcomeValue = Field(description=_d("Outcome"))
    Representation: Omittable[RepresentationModel] = Field(None, description=_d("Representation"))


BKNPRC = Annotated[BKNPRCRequest | BKNPRCResponse, Field(discriminator="Mode")]
"""A BKN-PRC message: Request or Response, told apart by ``Mode``."""
