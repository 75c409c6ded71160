"""The base of the three BKN types: their Table 1, written once.

Source: Table 1 of the PGM-AUA V1.0 texts BKN-PRC, BKN-DAC and BKN-PAL (the same labels, types and
requirements in the three; DECISIONS D2, D6, D9). Why a base model and not models generated from
the schemas: see :mod:`pgm_explore.models._base`.
"""

from copy import copy
from typing import Any, ClassVar

from pydantic import StrictStr

from pgm_explore.models._base import DescrText, MPAIModel, NonNegativeInteger, Omittable, describe
from pgm_explore.models.common import DataExchangeMetadata, SimpleTime
from pgm_explore.spec import Mode as _Mode  # (the field is called Mode too)

__all__ = ["BKNMessage"]


class BKNMessage(MPAIModel):
    """Table 1 of BKN-PRC, BKN-DAC and BKN-PAL: the properties of every message of the three types.

    A subclass names its data type in ``data_type_name`` and narrows ``Header`` to that type's
    Header; each field it declares without a description, and each field it inherits from here,
    takes the text of its own type's Semantics-table row (the types word some rows differently:
    BKN-DAC's DialogID adds that commitments last for the dialogue).
    """

    data_type_name: ClassVar[str] = ""

    Header: StrictStr
    Mode: _Mode
    MInstance: StrictStr
    UEnvironment: StrictStr
    SessionID: StrictStr
    QueryID: StrictStr
    QueryTime: SimpleTime
    DialogID: StrictStr
    TurnIndex: NonNegativeInteger
    DataXMData: DataExchangeMetadata
    DescrMetadata: Omittable[DescrText] = None

    @classmethod
    def __pydantic_init_subclass__(cls, **kwargs: Any) -> None:
        super().__pydantic_init_subclass__(**kwargs)
        if not cls.data_type_name:
            return
        described = False
        for name, field in cls.__pydantic_fields__.items():
            if field.description is None:
                # A copy: the inherited FieldInfo is the base class's, shared by the three types.
                field = cls.__pydantic_fields__[name] = copy(field)
                field.description = describe(cls.data_type_name, name)
                described = True
        if described:
            cls.model_rebuild(force=True)  # the JSON Schema pydantic writes shows the descriptions too
