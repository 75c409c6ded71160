"""Layer 2: pydantic v2 models of the PGM-AUA V1.0 data types.

One module per data type (``pc_prompt``, ``bkn_prc``, ``bkn_dac``, ``bkn_pal``) and one for the
types borrowed from other MPAI standards (``common``: Simple Time, Data Exchange Metadata).
Field names are the MPAI labels and field descriptions the Semantics-table text. The models
accept exactly the documents the bundled JSON Schemas accept (tests/test_models_generated.py
holds them to that); a Request and a Response are separate classes, told apart by ``Mode``.

>>> doc = {
...     "Header": "PGM-KPA-V1.0", "Mode": "RQ", "MInstance": "M-1", "UEnvironment": "U-1",
...     "SessionID": "S-1", "QueryID": "Q-1", "QueryTime": simple_time_now(), "DialogID": "D-1",
...     "TurnIndex": 0, "DataXMData": data_exchange_metadata("BKN-PAL", "RQ", "Q-1"),
... }
>>> message = parse_message(doc)
>>> type(message).__name__, message.TurnIndex
('BKNPALRequest', 0)
>>> message.model_dump(mode="json", exclude_unset=True) == doc
True
>>> model_for("PGM-KDA-V1.0", "RS").__name__
'BKNDACResponse'
"""

from functools import cache
from typing import Annotated, Any

from pydantic import Field, TypeAdapter

from pgm_explore.models._base import MPAIModel
from pgm_explore.models.bkn_dac import BKNDAC, BKNDACRequest, BKNDACResponse
from pgm_explore.models.bkn_pal import BKNPAL, BKNPALRequest, BKNPALResponse
from pgm_explore.models.bkn_prc import BKNPRC, BKNPRCRequest, BKNPRCResponse
from pgm_explore.models.common import (
    DataExchangeMetadata,
    SimpleTime,
    data_exchange_metadata,
    simple_time_now,
)
from pgm_explore.models.pc_prompt import PCPrompt
from pgm_explore.spec import data_type

__all__ = [
    "AnyMessage",
    "BKNDAC",
    "BKNDACRequest",
    "BKNDACResponse",
    "BKNPAL",
    "BKNPALRequest",
    "BKNPALResponse",
    "BKNPRC",
    "BKNPRCRequest",
    "BKNPRCResponse",
    "DataExchangeMetadata",
    "Message",
    "PCPrompt",
    "SimpleTime",
    "adapter_for",
    "data_exchange_metadata",
    "model_for",
    "parse_message",
    "simple_time_now",
]

Message = Annotated[PCPrompt | BKNPRC | BKNDAC | BKNPAL, Field(discriminator="Header")]
"""Any PGM-AUA message: told apart by ``Header``, then (BKN types) by ``Mode``."""

AnyMessage = PCPrompt | BKNPRCRequest | BKNPRCResponse | BKNDACRequest | BKNDACResponse | BKNPALRequest | BKNPALResponse
"""What :func:`parse_message` returns: an instance of one of the seven message classes."""

_MODELS: dict[tuple[str, str | None], type[MPAIModel]] = {
    ("PC Prompt", None): PCPrompt,
    ("BKN-PRC", "RQ"): BKNPRCRequest,
    ("BKN-PRC", "RS"): BKNPRCResponse,
    ("BKN-DAC", "RQ"): BKNDACRequest,
    ("BKN-DAC", "RS"): BKNDACResponse,
    ("BKN-PAL", "RQ"): BKNPALRequest,
    ("BKN-PAL", "RS"): BKNPALResponse,
}
_TYPES: dict[str, Any] = {"PC Prompt": PCPrompt, "BKN-PRC": BKNPRC, "BKN-DAC": BKNDAC, "BKN-PAL": BKNPAL}


@cache
def _message_adapter() -> TypeAdapter[AnyMessage]:
    # Built on first use, not at import: a notebook that only browses the spec pays nothing.
    return TypeAdapter(Message)


def parse_message(doc: dict[str, Any]) -> AnyMessage:
    """Validate a decoded JSON document as whichever PGM-AUA message its Header and Mode name.

    Raises ``pydantic.ValidationError`` when the document does not conform (anything not a JSON
    object included); the error locations start with the Header (and Mode) tag.
    """
    return _message_adapter().validate_python(doc)


def model_for(type_name: str, mode: str | None = None) -> type[MPAIModel]:
    """The model class of one data type (name, acronym or Header) and mode.

    ``mode`` is "RQ" or "RS" for the BKN types and ``None`` for PC Prompt; an unknown data type
    or a mode the type does not have raises ``ValueError``. :func:`adapter_for` validates a
    document of a BKN type whatever its mode.
    """
    spec = data_type(type_name)
    try:
        return _MODELS[(spec.name, mode)]
    except KeyError:
        expected = " or ".join(repr(m) for m in spec.modes) if spec.has_modes else "None"
        raise ValueError(f"{spec.name} has no mode {mode!r}; expected {expected}") from None


def adapter_for(type_name: str) -> TypeAdapter[Any]:
    """A cached ``TypeAdapter`` validating any document of one data type (both modes).

    Raises ``ValueError`` for an unknown data type.
    """
    return _type_adapter(data_type(type_name).name)


@cache
def _type_adapter(name: str) -> TypeAdapter[Any]:
    return TypeAdapter(_TYPES[name])
