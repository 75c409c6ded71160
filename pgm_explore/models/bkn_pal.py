"""BKN-PAL (Header ``PGM-KPA-V1.0``): Basic Knowledge <-> Personality Alignment.

Source: MPAI PGM-AUA V1.0 data-type text "BKN-PAL" (``pgm_explore/spec/texts/BKN-PAL.txt``),
Tables 1 (common), 2 (Request, Mode RQ) and 3 (Response, Mode RS); schema ``$id``
``https://schemas.mpai.community/PGM1/V1.0/data/BKNPAL.json`` (reconstructed, DECISIONS D1-D12).
BKN-PAL has no ``Kind``: a Request's own properties are all optional; a Response requires
``RequestID`` and ``Outcome`` (D7). Each class lacks the other mode's properties, so
``extra="forbid"`` rejects them (D8).
"""

from typing import Annotated

from pydantic import Field, StrictStr

from pgm_explore.models._base import (
    MPAIModel,
    Omittable,
    StringList,
    describe,
)
from pgm_explore.models._bkn import BKNMessage
from pgm_explore.spec import BKNPALHeader, OutcomeValue, RequestMode, ResponseMode

__all__ = [
    "BKNPAL",
    "BKNPALRequest",
    "BKNPALResponse",
    "ConstraintsModel",
    "StanceModel",
]

_TYPE = "BKN-PAL"


def _d(*labels: str) -> str:
    return describe(_TYPE, *labels)


class ConstraintsModel(MPAIModel):
    """Constraints that Basic Knowledge asks the stance to satisfy."""

    Role: Omittable[StrictStr] = Field(None, description=_d("Constraints", "Role"))
    Locale: Omittable[StrictStr] = Field(None, description=_d("Constraints", "Locale"))
    ExpressiveConstraints: Omittable[StringList] = Field(None, description=_d("Constraints", "ExpressiveConstraints"))


class StanceModel(MPAIModel):
    """The personality-aligned stance of the A-User."""

    Label: StrictStr = Field(description=_d("Stance", "Label"))
    Role: Omittable[StrictStr] = Field(None, description=_d("Stance", "Role"))
    Locale: Omittable[StrictStr] = Field(None, description=_d("Stance", "Locale"))
    ExpressiveConstraints: Omittable[StringList] = Field(None, description=_d("Stance", "ExpressiveConstraints"))
    Rationale: Omittable[StrictStr] = Field(None, description=_d("Stance", "Rationale"))


class _BKNPALCommon(BKNMessage):
    """Table 1 of BKN-PAL: the properties every BKN-PAL message shares with the other BKN types."""

    data_type_name = _TYPE
    Header: BKNPALHeader


class BKNPALRequest(_BKNPALCommon):
    """BKN-PAL V1.0 Request (Mode RQ), sent by Basic Knowledge."""

    Mode: RequestMode = Field(description=_d("Mode"))
    Question: Omittable[StrictStr] = Field(None, description=_d("Question"))
    Constraints: Omittable[ConstraintsModel] = Field(None, description=_d("Constraints"))


class BKNPALResponse(_BKNPALCommon):
    """BKN-PAL V1.0 Response (Mode RS), sent by Personality Alignment."""

    Mode: ResponseMode = Field(description=_d("Mode"))
    RequestID: StrictStr = Field(description=_d("RequestID"))
    Outcome: OutcomeValue = Field(description=_d("Outcome"))
    Stance: Omittable[StanceModel] = Field(None, description=_d("Stance"))


BKNPAL = Annotated[BKNPALRequest | BKNPALResponse, Field(discriminator="Mode")]
"""A BKN-PAL message: Request or Response, told apart by ``Mode``."""
