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
Every name here, and each layer as an attribute (``pgm_explore.spec``, ...), is imported on
first use: ``import pgm_explore`` itself imports nothing heavy, so that the ``pgm-explore`` command
(:mod:`pgm_explore.__main__`) holds Ctrl-C from the start of its own imports.
"""

from __future__ import annotations

# datetime before anything imports msgspec: msgspec's module init imports datetime's C API and
# does not look at the result (PyDateTime_IMPORT in PyInit__core, src/msgspec/_core.c, msgspec
# 0.23). Ctrl-C while that import runs left the API unset and the interrupt lost: the command
# went on, and crashed the interpreter (SIGSEGV) at its first typed decoder. Imported first, the
# import in msgspec's init runs no Python code, and Ctrl-C here is an ordinary KeyboardInterrupt.
import datetime  # noqa: F401
from importlib import import_module

from pgm_explore._version import __version__
from pgm_explore.errors import PgmExploreError

# (typing would be most of what the command's first step imports before it holds Ctrl-C: some
# 16 of 20 ms; type checkers read this name as typing's)
TYPE_CHECKING = False

if TYPE_CHECKING:
    from typing import Any

    from pgm_explore.io import validate_file
    from pgm_explore.models import Message, data_exchange_metadata, parse_message, simple_time_now
    from pgm_explore.spec import DATA_TYPES, DataType, data_type
    from pgm_explore.validation import RULES, Finding, Report, validate, validate_json


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

# (pydantic models cost a noticeable part of a second to build, the schemas and their validators
# about a tenth: what a name needs is imported when it is first asked for)
_LAZY = {
    **dict.fromkeys(("DATA_TYPES", "DataType", "data_type"), "pgm_explore.spec"),
    **dict.fromkeys(("RULES", "Finding", "Report", "validate", "validate_json"), "pgm_explore.validation"),
    **dict.fromkeys(("Message", "data_exchange_metadata", "parse_message", "simple_time_now"), "pgm_explore.models"),
    "validate_file": "pgm_explore.io",  # the bulk reader (msgspec), needed only for files
}
_UNITS = frozenset({"spec", "models", "validation", "io", "dialogue", "analysis", "widgets", "mcp", "cli"})


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        value = getattr(import_module(_LAZY[name]), name)
    elif name in _UNITS:  # (a layer as an attribute, as an eager import of it would have set it)
        value = import_module(f"pgm_explore.{name}")
    else:
        raise AttributeError(f"module 'pgm_explore' has no attribute {name!r}")
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(__all__)
