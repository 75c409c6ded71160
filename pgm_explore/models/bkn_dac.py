"""BKN-DAC (Header ``PGM-KDA-V1.0``): Basic Knowledge <-> Domain Access.

Source: MPAI PGM-AUA V1.0 data-type text "BKN-DAC" (``pgm_explore/spec/texts/BKN-DAC.txt``),
Tables 1 (common), 2 (Request, Mode RQ) and 3 (Response, Mode RS); schema ``$id``
``https://schemas.mpai.community/PGM1/V1.0/data/BKNDAC.json`` (reconstructed, DECISIONS D1-D12).
A Request requires ``Kind``, a Response ``RequestID`` and ``Outcome`` (D7); each class lacks the
other mode's properties, so ``extra="forbid"`` rejects them (D8).
"""

from typing import Annotated

from pydantic import Field, StrictStr

from pgm_explore.models._base import (
    MPAIModel,
    NonNegativeInteger,
    Omittable,
    Probability,
    StringList,
    describe,
)
from pgm_explore.models._bkn import BKNMessage
from pgm_explore.models.pc_prompt import Affordance
from pgm_explore.spec import (
    BKNDACHeader,
    CommitmentState,
    DACKind,
    FailureNature,
    OutcomeValue,
    OverallValue,
    RequestMode,
    ResponseMode,
)
from pgm_explore.spec.process_actions import PAStatusCode

__all__ = [
    "AnswerModel",
    "BKNDAC",
    "BKNDACRequest",
    "BKNDACResponse",
    "Commitment",
    "CommitmentStatusEntry",
    "DACKind",
    "FailureModel",
    "FeasibilityModel",
    "FeasibilityStep",
    "ObjectClass",
    "PAStatusCode",
    "ProcessAction",
    "Relation",
    "SpaceModel",
    "Term",
]

_TYPE = "BKN-DAC"


def _d(*labels: str) -> str:
    return describe(_TYPE, *labels)


# Request (Table 2)


class Term(MPAIModel):
    """A term to be grounded in the domain."""

    Text: StrictStr = Field(description=_d("Terms", "Text"))
    Class: Omittable[StrictStr] = Field(None, description=_d("Terms", "Class"))


class SpaceModel(MPAIModel):
    """The Space a Request concerns."""

    SpaceID: Omittable[StrictStr] = Field(None, description=_d("Space", "SpaceID"))
    MLocation: Omittable[StringList] = Field(None, description=_d("Space", "MLocation"))


class ProcessAction(MPAIModel):
    """A Process Action whose feasibility is to be validated."""

    Step: NonNegativeInteger = Field(description=_d("ProcessActions", "Step"))
    Statement: StrictStr = Field(description=_d("ProcessActions", "Statement"))


class Commitment(MPAIModel):
    """A semantic commitment Domain Access is asked to retain."""

    CommitmentID: StrictStr = Field(description=_d("Commitments", "CommitmentID"))
    Statement: StrictStr = Field(description=_d("Commitments", "Statement"))


# Response (Table 3)


class ObjectClass(MPAIModel):
    """An object class, with its label and confidence."""

    Class: StrictStr = Field(description=_d("Answer", "ObjectClasses", "Class"))
    Label: Omittable[StrictStr] = Field(None, description=_d("Answer", "ObjectClasses", "Label"))
    Confidence: Omittable[Probability] = Field(None, description=_d("Answer", "ObjectClasses", "Confidence"))


class Relation(MPAIModel):
    """A subject-predicate-object relation."""

    Subject: StrictStr = Field(description=_d("Answer", "Relations", "Subject"))
    Predicate: StrictStr = Field(description=_d("Answer", "Relations", "Predicate"))
    Object: StrictStr = Field(description=_d("Answer", "Relations", "Object"))


class AnswerModel(MPAIModel):
    """The domain knowledge returned, as appropriate to the Kind of the Request."""

    ObjectClasses: Omittable[list[ObjectClass]] = Field(None, description=_d("Answer", "ObjectClasses"))
    Relations: Omittable[list[Relation]] = Field(None, description=_d("Answer", "Relations"))
    # The spec text's description of Answer – Affordances is editorial noise (NOTES 2.6 #1);
    # it is kept verbatim because it is the table's text.
    Affordances: Omittable[list[Affordance]] = Field(None, description=_d("Answer", "Affordances"))
    Constraints: Omittable[StringList] = Field(None, description=_d("Answer", "Constraints"))
    BehaviouralExpectations: Omittable[StringList] = Field(None, description=_d("Answer", "BehaviouralExpectations"))
    Text: Omittable[StrictStr] = Field(None, description=_d("Answer", "Text"))


class CommitmentStatusEntry(MPAIModel):
    """The status of one commitment of the dialogue."""

    CommitmentID: StrictStr = Field(description=_d("CommitmentStatus", "CommitmentID"))
    Status: CommitmentState = Field(description=_d("CommitmentStatus", "Status"))


class FeasibilityStep(MPAIModel):
    """The PA Status one Process Action of the Request would receive."""

    Step: NonNegativeInteger = Field(description=_d("Feasibility", "Steps", "Step"))
    PAStatus: PAStatusCode = Field(description=_d("Feasibility", "Steps", "PAStatus"))
    Reason: Omittable[StrictStr] = Field(None, description=_d("Feasibility", "Steps", "Reason"))


class FeasibilityModel(MPAIModel):
    """Result of the validation of the Process Actions of the Request."""

    Steps: list[FeasibilityStep] = Field(description=_d("Feasibility", "Steps"))
    Overall: OverallValue = Field(description=_d("Feasibility", "Overall"))


class FailureModel(MPAIModel):
    """Failure of a source of domain knowledge."""

    Service: StrictStr = Field(description=_d("Failure", "Service"))
    Request: Omittable[StrictStr] = Field(None, description=_d("Failure", "Request"))
    Nature: FailureNature = Field(description=_d("Failure", "Nature"))


class _BKNDACCommon(BKNMessage):
    """Table 1 of BKN-DAC: the properties every BKN-DAC message shares with the other BKN types."""

    data_type_name = _TYPE
    Header: BKNDACHeader


class BKNDACRequest(_BKNDACCommon):
    """BKN-DAC V1.0 Request (Mode RQ), sent by Basic Knowledge."""

    Mode: RequestMode = Field(description=_d("Mode"))
    Kind: DACKind = Field(description=_d("Kind"))
    Question: Omittable[StrictStr] = Field(None, description=_d("Question"))
    Terms: Omittable[list[Term]] = Field(None, description=_d("Terms"))
    EntityIDs: Omittable[StringList] = Field(None, description=_d("EntityIDs"))
    Space: Omittable[SpaceModel] = Field(None, description=_d("Space"))
    ProcessActions: Omittable[list[ProcessAction]] = Field(None, description=_d("ProcessActions"))
    Commitments: Omittable[list[Commitment]] = Field(None, description=_d("Commitments"))
    ReleasedCommitmentIDs: Omittable[StringList] = Field(None, description=_d("ReleasedCommitmentIDs"))


class BKNDACResponse(_BKNDACCommon):
    """BKN-DAC V1.0 Response (Mode RS), sent by Domain Access."""

    Mode: ResponseMode = Field(description=_d("Mode"))
    RequestID: StrictStr = Field(description=_d("RequestID"))
    Outcome: OutcomeValue = Field(description=_d("Outcome"))
    Answer: Omittable[AnswerModel] = Field(None, description=_d("Answer"))
    CommitmentStatus: Omittable[list[CommitmentStatusEntry]] = Field(None, description=_d("CommitmentStatus"))
    Feasibility: Omittable[FeasibilityModel] = Field(None, description=_d("Feasibility"))
    SourcesUsed: Omittable[StringList] = Field(None, description=_d("SourcesUsed"))
    Failure: Omittable[FailureModel] = Field(None, description=_d("Failure"))


BKNDAC = Annotated[BKNDACRequest | BKNDACResponse, Field(discriminator="Mode")]
"""A BKN-DAC message: Request or Response, told apart by ``Mode``."""
