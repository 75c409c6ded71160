"""Types the four PGM-AUA data types borrow from other MPAI standards.

* Simple Time, MPAI-OSD V1.5, schema ``https://schemas.mpai.community/OSD/V1.5/data/SimpleTime.json``
  (``QueryTime``, ``PCPromptTime``; DECISIONS D5), bundled as published, its if/then quirk included.
* Data Exchange Metadata, MPAI-PTF V1.0, schema
  ``https://schemas.mpai.community/PTF/V1.0/data/DataExchangeMetadata.json`` (``DataXMData``;
  DECISIONS D6), the newer published copy with Header ``PTF-DEM-V1.0``. What it refers to in
  other standards (Legality, Security, Annotation, SpatialAttitude, Rights) is bundled as a
  stand-in accepting any JSON object, and so is it here.

Field descriptions of Simple Time come from its bundled schema; Data Exchange Metadata has none.
"""

from typing import Annotated, Any, Self

from pydantic import Field, StrictBool, StrictStr, WithJsonSchema, model_validator
from pydantic_core import PydanticCustomError

from pgm_explore.models._base import (
    DescrText,
    Integer,
    MPAIModel,
    NonNegativeNumber,
    Number,
    Omittable,
    OpenObject,
    Probability,
)
from pgm_explore.spec import (
    DATA_EXCHANGE_METADATA_ID,
    SIMPLE_TIME_ID,
    AccuracyModeValue,
    DataExchangeMetadataHeader,
    Mode,
    SimpleTimeHeader,
    TimeUnitCode,
    header_of,
    schema_resources,
    simple_time_now,
)
from pgm_explore.spec import data_type as _data_type

__all__ = [
    "AIM_PATTERN",
    "DATA_EXCHANGE_METADATA_ID",
    "DataExchangeMetadata",
    "SIMPLE_TIME_ID",
    "SimpleTime",
    "SimpleTimeSegment",
    "data_exchange_metadata",
    "simple_time_now",
]


def _st(*path: str) -> str:
    # Walks "properties"/"items" of the bundled Simple Time schema: ("SimpleTimeData", "FlagsByte")
    # is a property of the segments, the items of the SimpleTimeData array.
    node: Any = schema_resources()[SIMPLE_TIME_ID]
    for name in path:
        if node.get("type") == "array":
            node = node["items"]
        node = node["properties"][name]
    return str(node["description"])


_FlagsByte = Annotated[Integer, Field(ge=0, le=255), WithJsonSchema({"type": "integer", "minimum": 0, "maximum": 255})]
_Reserved = Annotated[Integer, Field(ge=0, le=31), WithJsonSchema({"type": "integer", "minimum": 0, "maximum": 31})]
AIM_PATTERN: str = schema_resources()[DATA_EXCHANGE_METADATA_ID]["$defs"]["Pattern"]["pattern"]
"""``$defs/Pattern`` of Data Exchange Metadata: a data or AIM type with its version, e.g. ``PGM-KDA-V1.0``."""
_Acronym = Annotated[StrictStr, Field(pattern=AIM_PATTERN)]


class SimpleTimeSegment(MPAIModel):
    """A time segment of Simple Time, with its accuracy and decoded flag fields."""

    FlagsByte: _FlagsByte = Field(description=_st("SimpleTimeData", "FlagsByte"))
    StartTime: Number = Field(description=_st("SimpleTimeData", "StartTime"))
    EndTime: Number = Field(description=_st("SimpleTimeData", "EndTime"))
    # The schema's "default": "single" is an annotation only: an absent AccuracyMode stays absent.
    AccuracyMode: Omittable[AccuracyModeValue] = Field(None, description=_st("SimpleTimeData", "AccuracyMode"))
    AccuracyPlusMinus: Omittable[NonNegativeNumber] = Field(
        None, description=_st("SimpleTimeData", "AccuracyPlusMinus")
    )
    AccuracyStartPlusMinus: Omittable[NonNegativeNumber] = Field(
        None, description=_st("SimpleTimeData", "AccuracyStartPlusMinus")
    )
    AccuracyEndPlusMinus: Omittable[NonNegativeNumber] = Field(
        None, description=_st("SimpleTimeData", "AccuracyEndPlusMinus")
    )
    TimeType: Omittable[StrictBool] = Field(None, description=_st("SimpleTimeData", "TimeType"))
    TimeUnit: Omittable[TimeUnitCode] = Field(None, description=_st("SimpleTimeData", "TimeUnit"))
    Reserved: Omittable[_Reserved] = Field(None, description=_st("SimpleTimeData", "Reserved"))

    @model_validator(mode="after")
    def _accuracy_for_mode(self) -> Self:
        # The schema's two if/then blocks test `properties: {AccuracyMode: {const: ...}}`
        # without `required`, so both conditions hold when AccuracyMode is absent: such a
        # segment needs all three accuracy fields (OSD V1.5 as published; DECISIONS D5).
        needed: list[str] = []
        if self.AccuracyMode in (None, "single"):
            needed.append("AccuracyPlusMinus")
        if self.AccuracyMode in (None, "separate"):
            needed += ["AccuracyStartPlusMinus", "AccuracyEndPlusMinus"]
        missing = [name for name in needed if getattr(self, name) is None]
        if missing:
            mode = f"AccuracyMode {self.AccuracyMode!r}" if self.AccuracyMode else "no AccuracyMode"
            raise PydanticCustomError(
                "simple_time_accuracy",
                "A Simple Time segment with {mode} must carry {missing}",
                {"mode": mode, "missing": ", ".join(missing)},
            )
        return self


class SimpleTime(MPAIModel):
    """Simple Time V1.5 (MPAI-OSD): time segments with flags and absolute accuracy."""

    Header: SimpleTimeHeader = Field(description=_st("Header"))
    MInstanceID: Omittable[StrictStr] = Field(None, description=_st("MInstanceID"))
    UEnvironmentID: Omittable[StrictStr] = Field(None, description=_st("UEnvironmentID"))
    SimpleTimeID: StrictStr = Field(description=_st("SimpleTimeID"))
    SimpleTimeData: list[SimpleTimeSegment] = Field(description=_st("SimpleTimeData"))
    DescrMetadata: Omittable[DescrText] = None


# Data Exchange Metadata. Its oneOf alternatives are closed objects whose required keys
# differ, so at most one alternative can ever match: a plain union has oneOf's meaning.


class AIMIDEntry(MPAIModel):
    """An AI Module named by its AIMID."""

    AIMID: StrictStr


class ImplementerAIMIDEntry(MPAIModel):
    """An AI Module named by its ImplementerAIMID."""

    ImplementerAIMID: StrictStr


class AIMTypeEntry(MPAIModel):
    """An AI Module named by its type (acronym and version)."""

    AIMType: _Acronym


class DataTypeEntry(MPAIModel):
    """Data named by its type (acronym and version)."""

    DataType: _Acronym


class DataIDEntry(MPAIModel):
    """Data named by its identifier."""

    DataID: StrictStr


_ProcessInstance = Annotated[list[AIMIDEntry | ImplementerAIMIDEntry], Field(min_length=1)]
_AIMInstance = Annotated[list[AIMTypeEntry | AIMIDEntry | ImplementerAIMIDEntry], Field(min_length=1)]
_Data = Annotated[list[DataTypeEntry | DataIDEntry], Field(min_length=1)]


class AIMAuthorisation(MPAIModel):
    """Data that AI Module instances are authorised to access."""

    AIMInstance: _AIMInstance
    Data: _Data


class ProcessAuthorisation(MPAIModel):
    """Data that Process Instances are authorised to access."""

    ProcessInstance: _ProcessInstance
    Data: _Data


class AnnotationEntry(MPAIModel):
    """An annotation of the Data (its parts other than Simple Time are stand-ins)."""

    Annotation: OpenObject
    AnnotationSpace: Omittable[OpenObject] = None
    AnnotationTime: Omittable[SimpleTime] = None
    AnnotationRights: Omittable[OpenObject] = None


class DataExchangeMetadata(MPAIModel):
    """Data Exchange Metadata V1.0 (MPAI-PTF): provenance, authorisations, legality, security
    and annotations of data exchanged between Process Instances."""

    Header: DataExchangeMetadataHeader
    MInstanceID: Omittable[StrictStr] = None
    DataExchangeMetadataID: Omittable[StrictStr] = None
    DataExchangeMetadataTime: Omittable[SimpleTime] = None
    DataID: StrictStr
    DataType: Omittable[_Acronym] = None
    Source: _ProcessInstance
    Authorisations: Omittable[list[AIMAuthorisation | ProcessAuthorisation]] = None
    Legality: Omittable[OpenObject] = None
    Security: Omittable[OpenObject] = None
    Confidence: Omittable[Probability] = None
    Annotations: Omittable[Annotated[list[AnnotationEntry], Field(min_length=1)]] = None
    DescrMetadata: Omittable[DescrText] = None


def data_exchange_metadata(data_type: str, mode: Mode | None, data_id: str) -> dict[str, Any]:
    """Minimal Data Exchange Metadata for a message of ``data_type`` in ``mode``.

    ``Source`` is the AI Module that sends the message: Basic Knowledge for a Request, the
    partner (Prompt Creation, Domain Access, Personality Alignment) for a Response and for
    PC Prompt. ``mode`` must be "RQ" or "RS" for the BKN types and ``None`` for PC Prompt;
    anything else raises ``ValueError``.

    >>> data_exchange_metadata("BKN-DAC", "RS", "Q-2")
    {'Header': 'PTF-DEM-V1.0', 'DataID': 'Q-2', 'DataType': 'PGM-KDA-V1.0', 'Source': [{'AIMID': 'PGM-DAC'}]}
    >>> data_exchange_metadata("BKN-DAC", "RQ", "Q-1")["Source"]
    [{'AIMID': 'PGM-BKN'}]
    """
    spec = _data_type(data_type)
    if spec.has_modes and mode not in spec.modes:
        raise ValueError(f"{spec.name} needs mode 'RQ' or 'RS', not {mode!r}")
    if not spec.has_modes and mode is not None:
        raise ValueError(f"{spec.name} has no Mode; pass mode=None, not {mode!r}")
    _, aim_id = spec.sender_for(mode)
    return {
        "Header": header_of(DataExchangeMetadataHeader),
        "DataID": data_id,
        "DataType": spec.header,
        "Source": [{"AIMID": aim_id}],
    }
