"""PC Prompt (Header ``PGM-PCP-V1.0``).

Source: MPAI PGM-AUA V1.0 data-type text "PC Prompt" (``pgm_explore/spec/texts/PC-Prompt.txt``),
Table 1 "Semantics of PC Prompt"; schema ``$id``
``https://schemas.mpai.community/PGM1/V1.0/data/PCPrompt.json`` (reconstructed, DECISIONS D1-D12).
PC Prompt has no Mode: Prompt Creation sends it to Basic Knowledge to open the dialogue.

The object types that BKN-PRC repeats inside its ``Representation`` (Proposition, Resolved
Referent, Expressive Configuration, Action Context, Affordance) are defined here, once.
"""

from pydantic import Field, StrictStr

from pgm_explore.models._base import (
    DescrText,
    MPAIModel,
    NonNegativeNumber,
    ObjectOrString,
    Omittable,
    OpenObject,
    PositiveInteger,
    Probability,
    StringList,
    describe,
)
from pgm_explore.models.common import DataExchangeMetadata, SimpleTime
from pgm_explore.spec import PCPromptHeader

__all__ = [
    "ActionContextModel",
    "Affordance",
    "ExpressiveConfigurationModel",
    "PCPrompt",
    "Proposition",
    "ResolvedReferent",
]

_TYPE = "PC Prompt"


def _d(*labels: str) -> str:
    return describe(_TYPE, *labels)


class Proposition(MPAIModel):
    """A proposition linking a subject, a predicate and an object, with its spatial and temporal context."""

    Subject: StrictStr = Field(description=_d("Propositions", "Subject"))
    Predicate: StrictStr = Field(description=_d("Propositions", "Predicate"))
    Object: Omittable[StrictStr] = Field(None, description=_d("Propositions", "Object"))
    Spatial: Omittable[ObjectOrString] = Field(None, description=_d("Propositions", "Spatial"))
    Temporal: Omittable[ObjectOrString] = Field(None, description=_d("Propositions", "Temporal"))


class ResolvedReferent(MPAIModel):
    """A referring expression resolved to an Entity of the scene."""

    Expression: StrictStr = Field(description=_d("ResolvedReferents", "Expression"))
    EntityID: Omittable[StrictStr] = Field(None, description=_d("ResolvedReferents", "EntityID"))
    Confidence: Omittable[Probability] = Field(None, description=_d("ResolvedReferents", "Confidence"))


class ExpressiveConfigurationModel(MPAIModel):
    """The expressive configuration of the A-User."""

    Personality: Omittable[ObjectOrString] = Field(None, description=_d("ExpressiveConfiguration", "Personality"))
    Role: Omittable[StrictStr] = Field(None, description=_d("ExpressiveConfiguration", "Role"))
    Locale: Omittable[StrictStr] = Field(None, description=_d("ExpressiveConfiguration", "Locale"))
    Constraints: Omittable[StringList] = Field(None, description=_d("ExpressiveConfiguration", "Constraints"))


class Affordance(MPAIModel):
    """An affordance of the Space: an Action that an Entity or a Class of Entities offers."""

    # PC Prompt's table lists no sub-properties for ActionContext – Affordances; BKN-DAC's
    # Answer – Affordances has the same items (DECISIONS D11) and describes them.
    EntityID: Omittable[StrictStr] = Field(None, description=describe("BKN-DAC", "Answer", "Affordances", "EntityID"))
    Class: Omittable[StrictStr] = Field(None, description=describe("BKN-DAC", "Answer", "Affordances", "Class"))
    Action: StrictStr = Field(description=describe("BKN-DAC", "Answer", "Affordances", "Action"))


class ActionContextModel(MPAIModel):
    """The context Basic Knowledge needs to produce Process Actions and Action Objects."""

    Repertoire: Omittable[StringList] = Field(None, description=_d("ActionContext", "Repertoire"))
    Vocabularies: Omittable[StringList] = Field(None, description=_d("ActionContext", "Vocabularies"))
    MaxSteps: Omittable[PositiveInteger] = Field(None, description=_d("ActionContext", "MaxSteps"))
    MLocations: Omittable[StringList] = Field(None, description=_d("ActionContext", "MLocations"))
    RightsRefs: Omittable[StringList] = Field(None, description=_d("ActionContext", "RightsRefs"))
    WalletLimit: Omittable[NonNegativeNumber] = Field(None, description=_d("ActionContext", "WalletLimit"))
    Rules: Omittable[StringList] = Field(None, description=_d("ActionContext", "Rules"))
    Affordances: Omittable[list[Affordance]] = Field(None, description=_d("ActionContext", "Affordances"))


class PCPrompt(MPAIModel):
    """PC Prompt V1.0: the structured prompt that Prompt Creation submits to Basic Knowledge."""

    Header: PCPromptHeader = Field(description=_d("Header"))
    MInstance: StrictStr = Field(description=_d("MInstance"))
    UEnvironment: StrictStr = Field(description=_d("UEnvironment"))
    SessionID: StrictStr = Field(description=_d("SessionID"))
    PCPromptID: StrictStr = Field(description=_d("PCPromptID"))
    PCPromptTime: SimpleTime = Field(description=_d("PCPromptTime"))
    DialogID: StrictStr = Field(description=_d("DialogID"))
    Prompt: StrictStr = Field(description=_d("Prompt"))
    SceneContext: Omittable[OpenObject] = Field(None, description=_d("SceneContext"))
    Intent: Omittable[ObjectOrString] = Field(None, description=_d("Intent"))
    Propositions: Omittable[list[Proposition]] = Field(None, description=_d("Propositions"))
    ResolvedReferents: Omittable[list[ResolvedReferent]] = Field(None, description=_d("ResolvedReferents"))
    GoalConstraints: Omittable[StringList] = Field(None, description=_d("GoalConstraints"))
    ExpressiveConfiguration: Omittable[ExpressiveConfigurationModel] = Field(
        None, description=_d("ExpressiveConfiguration")
    )
    ActionContext: Omittable[ActionContextModel] = Field(None, description=_d("ActionContext"))
    DataXMData: DataExchangeMetadata = Field(description=_d("DataXMData"))
    DescrMetadata: Omittable[DescrText] = Field(None, description=_d("DescrMetadata"))
