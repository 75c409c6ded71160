"""Layer 1: the PGM-AUA V1.0 specification as data.

The four data types, their spec texts (vendored verbatim under ``texts/``), the
Semantics tables parsed from those texts, the reconstructed JSON Schemas and the
bundled MPAI schemas they refer to (``schemas/``). Everything is read from package
files; nothing is ever fetched over the network (DECISIONS D1).

>>> DAC = data_type("BKN-DAC")
>>> DAC.header, DAC.title
('PGM-KDA-V1.0', 'BKN-DAC V1.0')
>>> data_type("PGM-PCP-V1.0").name
'PC Prompt'
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass
from functools import cache, cached_property
from importlib import resources
from typing import Any

from pgm_explore.spec._exchange import (
    DATA_EXCHANGE_METADATA_ID,
    MODE_WORDS,
    OUTCOMES,
    OVERALLS,
    PAYLOAD_FOR_KIND,
    RESPONSE_PAYLOAD,
    BKNDACHeader,
    BKNPALHeader,
    BKNPRCHeader,
    CommitmentState,
    DACKind,
    DataExchangeMetadataHeader,
    FailureNature,
    Mode,
    OutcomeValue,
    OverallValue,
    PCPromptHeader,
    PRCKind,
    RequestMode,
    ResponseMode,
    header_of,
    overall_of,
)
from pgm_explore.spec._properties import PropertyRow, PropertyTable, properties
from pgm_explore.spec._references import registry, resolve
from pgm_explore.spec._simple_time import (
    SIMPLE_TIME_ID,
    AccuracyModeValue,
    SimpleTimeHeader,
    TimeUnitCode,
    simple_time_now,
    simple_time_seconds,
)
from pgm_explore.spec._tables import SpecRow, SpecTable, parse_tables

__all__ = [
    "AccuracyModeValue",
    "BKNDACHeader",
    "BKNPALHeader",
    "BKNPRCHeader",
    "CommitmentState",
    "DACKind",
    "DATA_EXCHANGE_METADATA_ID",
    "DATA_TYPES",
    "DataExchangeMetadataHeader",
    "DataType",
    "FailureNature",
    "HEADERS",
    "MODE_WORDS",
    "Mode",
    "OUTCOMES",
    "OVERALLS",
    "OutcomeValue",
    "OverallValue",
    "PAYLOAD_FOR_KIND",
    "PCPromptHeader",
    "PRCKind",
    "PropertyRow",
    "PropertyTable",
    "RESPONSE_PAYLOAD",
    "RequestMode",
    "ResponseMode",
    "SIMPLE_TIME_ID",
    "SimpleTimeHeader",
    "SpecRow",
    "SpecTable",
    "TimeUnitCode",
    "data_type",
    "header_of",
    "overall_of",
    "properties",
    "registry",
    "resolve",
    "schema_resources",
    "simple_time_now",
    "simple_time_seconds",
]

_FILES = resources.files(__name__)
_REQUIREMENT = re.compile(r"^\s*(?:-|\d+\.)\s+([A-Za-z]+): (.*)$", re.MULTILINE)


@dataclass(frozen=True, eq=False)
class DataType:
    """One of the four PGM-AUA data types, with the facts its spec text fixes."""

    name: str
    acronym: str
    header: str
    schema_file: str
    text_file: str
    sender: str
    """AI Module that sends the data (for BKN-xxx: the Response sender; Requests come from Basic Knowledge)."""
    sender_aim: str
    modes: tuple[Mode, ...] = ()
    id_field: str = "QueryID"
    time_field: str = "QueryTime"

    @property
    def title(self) -> str:
        return f"{self.name} V1.0"

    @property
    def schema_id(self) -> str:
        return f"https://schemas.mpai.community/PGM1/V1.0/data/{self.schema_file}"

    @property
    def has_modes(self) -> bool:
        return bool(self.modes)

    @cached_property
    def schema(self) -> Mapping[str, Any]:
        """The data type's JSON Schema (draft 2020-12), as shipped in the package."""
        return schema_resources()[self.schema_id]

    @cached_property
    def text(self) -> str:
        return (_FILES / "texts" / self.text_file).read_text(encoding="utf-8")

    @cached_property
    def tables(self) -> tuple[SpecTable, ...]:
        return tuple(parse_tables(self.text))

    @cached_property
    def requirements(self) -> Mapping[str, str]:
        """Functional Requirements by their name ("Header", "Request", ...)."""
        return {m.group(1): m.group(2).strip() for m in _REQUIREMENT.finditer(self.text)}

    @cached_property
    def _rows(self) -> Mapping[tuple[str, ...], tuple[SpecTable, SpecRow]]:
        return {row.path: (table, row) for table in self.tables for row in table.rows}

    def row(self, labels: tuple[str, ...]) -> tuple[SpecTable, SpecRow] | None:
        """The table row describing the property at ``labels`` (array indices left out)."""
        return self._rows.get(labels)

    def mode_properties(self, mode: Mode) -> tuple[str, ...]:
        """Top-level properties that belong to ``mode`` only (Table 2 for RQ, Table 3 for RS)."""
        return tuple(r.label for t in self.tables if t.mode == mode for r in t.rows if r.depth == 0)

    def sender_for(self, mode: Mode | None) -> tuple[str, str]:
        """(AI Module name, AIM identifier) of whoever sends a message of this type and mode."""
        if mode == "RQ":
            return ("Basic Knowledge", "PGM-BKN")
        return (self.sender, self.sender_aim)

    def clause(self, labels: tuple[str, ...]) -> str:
        """Spec reference of the property at ``labels``: text, table and row.

        >>> data_type("BKN-DAC").clause(("Feasibility", "Steps", "PAStatus"))
        'BKN-DAC Table 3 (Response), Feasibility – Steps – PAStatus'
        """
        for depth in range(len(labels), 0, -1):
            found = self.row(labels[:depth])
            if found:
                table, row = found
                part = f" ({MODE_WORDS[table.mode]})" if table.mode is not None else ""
                return f"{self.name} Table {table.number}{part}, {' – '.join(row.path)}"
        return self.name

    def requirement(self, name: str) -> str:
        """Spec reference of a Functional Requirement, e.g. ``BKN-DAC FR "Request"``."""
        return f'{self.name} Functional Requirement "{name}"'


DATA_TYPES: tuple[DataType, ...] = (
    DataType(
        name="PC Prompt",
        acronym=header_of(PCPromptHeader).removesuffix("-V1.0"),
        header=header_of(PCPromptHeader),
        schema_file="PCPrompt.json",
        text_file="PC-Prompt.txt",
        sender="Prompt Creation",
        sender_aim="PGM-PRC",
        id_field="PCPromptID",
        time_field="PCPromptTime",
    ),
    DataType(
        name="BKN-PRC",
        acronym=header_of(BKNPRCHeader).removesuffix("-V1.0"),
        header=header_of(BKNPRCHeader),
        schema_file="BKNPRC.json",
        text_file="BKN-PRC.txt",
        sender="Prompt Creation",
        sender_aim="PGM-PRC",
        modes=("RQ", "RS"),
    ),
    DataType(
        name="BKN-DAC",
        acronym=header_of(BKNDACHeader).removesuffix("-V1.0"),
        header=header_of(BKNDACHeader),
        schema_file="BKNDAC.json",
        text_file="BKN-DAC.txt",
        sender="Domain Access",
        sender_aim="PGM-DAC",
        modes=("RQ", "RS"),
    ),
    DataType(
        name="BKN-PAL",
        acronym=header_of(BKNPALHeader).removesuffix("-V1.0"),
        header=header_of(BKNPALHeader),
        schema_file="BKNPAL.json",
        text_file="BKN-PAL.txt",
        sender="Personality Alignment",
        sender_aim="PGM-PAL",
        modes=("RQ", "RS"),
    ),
)

HEADERS: Mapping[str, DataType] = {dt.header: dt for dt in DATA_TYPES}
_BY_NAME: Mapping[str, DataType] = {
    key: dt for dt in DATA_TYPES for key in (dt.name, dt.acronym, dt.header, dt.name.replace(" ", ""))
}


def data_type(name: str) -> DataType:
    """Look a data type up by name ("BKN-DAC"), acronym ("PGM-KDA") or Header ("PGM-KDA-V1.0")."""
    try:
        return _BY_NAME[name]
    except KeyError:
        known = ", ".join(dt.name for dt in DATA_TYPES)
        raise ValueError(f"unknown PGM-AUA data type {name!r}; known: {known}") from None


@cache
def schema_resources() -> Mapping[str, Mapping[str, Any]]:
    """Every bundled schema by its ``$id``: the four PGM schemas, Simple Time, Data
    Exchange Metadata and the stand-ins for what Data Exchange Metadata refers to."""
    found: dict[str, Mapping[str, Any]] = {}
    pending = [_FILES / "schemas"]
    while pending:
        folder = pending.pop()
        for entry in folder.iterdir():
            if entry.is_dir():
                pending.append(entry)
            elif entry.name.endswith(".json"):
                schema = json.loads(entry.read_text(encoding="utf-8"))
                found[schema["$id"]] = schema
    return found


# Reprs and documentation name the public module, not the private one a name is written in.
_PUBLIC: tuple[Any, ...] = (SpecRow, SpecTable, PropertyRow, PropertyTable, properties, registry, resolve)
for _public in (*_PUBLIC, header_of, overall_of, simple_time_now, simple_time_seconds):
    _public.__module__ = __name__
del _public
