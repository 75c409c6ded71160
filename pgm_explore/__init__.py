"""pgm-explore: explore, compose and validate MPAI PGM-AUA V1.0 data types.

The four data types of the Basic Knowledge deliberation (PC Prompt, BKN-PRC, BKN-DAC,
BKN-PAL), their reconstructed schemas, pydantic models and a validator that says, at
the field and in plain words, what is wrong and which spec clause says so.

>>> import pgm_explore
>>> report = pgm_explore.validate({"Header": "PGM-KPA-V1.0", "Mode": "RQ", "Outcome": "answered"})
>>> report.conforms
False
>>> print(report.at(["Outcome"])[0].message)
Outcome is a Response property and may not appear in a Request.

The layers, each importing only from those before it: ``spec`` (texts, tables,
schemas) -> ``models`` (pydantic) -> ``validation`` -> dialogue -> analysis -> widgets.
The models are imported on first use, so that ``import pgm_explore`` stays fast.
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

from pgm_explore._version import __version__
from pgm_explore.errors import PgmExploreError
from pgm_explore.spec import DATA_TYPES, DataType, data_type
from pgm_explore.validation import RULES, Finding, Report, validate, validate_json

if TYPE_CHECKING:
    from pgm_explore.io import validate_file
    from pgm_explore.models import Message, data_exchange_metadata, parse_message, simple_time_now


__all__ = [
    "DATA_TYPES",
    "DataType",
    "Finding",
    "Message",
    "PgmExploreError",
    "RULES",
    "Report",
    "__version__",
    "data_exchange_metadata",
    "data_type",
    "parse_message",
    "simple_time_now",
    "validate",
    "validate_file",
    "validate_json",
]

_LAZY = {
    name: "pgm_explore.models" for name in ("Message", "data_exchange_metadata", "parse_message", "simple_time_now")
}
_LAZY["validate_file"] = "pgm_explore.io"  # the bulk reader (msgspec), needed only for files


def __getattr__(name: str) -> Any:
    # pydantic models cost a noticeable part of a second to build; validation does not need them.
    if name in _LAZY:
        value = getattr(import_module(_LAZY[name]), name)
        globals()[name] = value
        return value
    raise AttributeError(f"module 'pgm_explore' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted(__all__)
