"""Shared configuration, JSON-Schema-faithful types and the Table 1 base of the models layer.

The models must accept exactly the documents the schemas accept (DECISIONS D9, D13), so
nothing here coerces: every scalar type below reproduces one JSON Schema ``type`` with
its draft 2020-12 meaning, and values are kept as given so that
``model_dump(mode="json", exclude_unset=True)`` gives the input document back.

Where the facts come from: every enumeration (``Literal``) and Header is imported from
:mod:`pgm_explore.spec`, and every description is the spec table's text. The properties that
the three BKN types share (their Table 1) are written once, in ``_bkn.BKNMessage``.

Why hand-written models on a shared base rather than models generated from the schemas: what the models
add to the schemas is written by hand anyway (the spec-table descriptions, the no-coercion
scalar types, Simple Time's published if/then quirk, the lone-surrogate check), and a generator
would have to be taught each of them and then kept beside its output. The agreement that
generation would give is tested instead: ``tests/test_models.py`` compares the structure of
every model with its schema, and ``tests/test_models_generated.py`` checks that the models and
the schema give the same verdict on thousands of documents drawn from the schema.
"""

import math
import re
from functools import cache
from typing import Annotated, Any, TypeVar

from pydantic import (
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    PlainValidator,
    StrictStr,
    WithJsonSchema,
    model_validator,
)
from pydantic_core import PydanticCustomError, PydanticKnownError

from pgm_explore.spec import OutcomeValue, data_type

__all__ = [
    "DescrText",
    "Integer",
    "MPAIModel",
    "NonNegativeInteger",
    "NonNegativeNumber",
    "Number",
    "ObjectOrString",
    "Omittable",
    "OpenObject",
    "OutcomeValue",
    "PositiveInteger",
    "Probability",
    "StringList",
    "describe",
]

T = TypeVar("T")


def _omit_null_alternatives(schema: dict[str, Any]) -> None:
    # An Omittable property reads as None in Python, but JSON may only leave it out (see
    # Omittable): the JSON Schema pydantic generates for the models should not offer null.
    for prop in schema.get("properties", {}).values():
        alternatives = prop.get("anyOf", [])
        if {"type": "null"} in alternatives:
            rest = [a for a in prop.pop("anyOf") if a != {"type": "null"}]
            if len(rest) == 1:
                prop.update(rest[0])
            else:
                prop["anyOf"] = rest
            prop.pop("default", None)


class MPAIModel(BaseModel):
    """Base of every model: closed objects (``additionalProperties: false``), no coercion."""

    model_config = ConfigDict(
        extra="forbid",
        strict=True,
        json_schema_extra=_omit_null_alternatives,
        field_title_generator=lambda name, _: name,  # the MPAI label, not pydantic's "Pastatus"
        # pydantic's Rust regex engine anchors ``$`` at the very end of the string, as the
        # ECMA-262 regexes of JSON Schema (and jsonschema-rs) do; Python's ``re`` would also
        # match before a trailing newline.
        regex_engine="rust-regex",
    )

    @model_validator(mode="before")
    @classmethod
    def _utf8_only(cls, data: Any) -> Any:
        # A lone surrogate ("\ud800") is no character: no UTF-8 file holds it, and validate()
        # reports it as an encoding finding. The models give the same verdict (issue 11).
        if isinstance(data, dict) and (where := _surrogate_at(data)) is not None:
            path, code = where
            raise PydanticCustomError(
                "lone_surrogate",
                "{path} holds \\u{code}, half of a UTF-16 surrogate pair: not a character, and UTF-8 cannot encode it",
                {"path": path, "code": code},
            )
        return data


_SURROGATE = re.compile("[\ud800-\udfff]")


def _surrogate_at(value: Any, path: str = "$") -> tuple[str, str] | None:
    """(JSONPath-like place, code point in hex) of the first string or key holding a surrogate."""
    if isinstance(value, str):
        match = None if value.isascii() else _SURROGATE.search(value)
        return (path, f"{ord(match.group()):04x}") if match else None
    items = value.items() if isinstance(value, dict) else enumerate(value) if isinstance(value, list) else ()
    for key, item in items:
        if isinstance(key, str) and (found := _surrogate_at(key, f"{path}[{key!r}]")) is not None:
            return found
        where = f"{path}[{key}]" if isinstance(key, int) else f"{path}.{key}"
        if (found := _surrogate_at(item, where)) is not None:
            return found
    return None


def _reject_null(value: object) -> object:
    # No property of these schemas admits null: an optional property is either absent or
    # has a value. The ``None`` default only stands for "absent" and is never validated.
    if value is None:
        raise PydanticCustomError(
            "null_forbidden", "Input should not be null: leave the property out if it has no value"
        )
    return value


Omittable = Annotated[T | None, BeforeValidator(_reject_null)]
"""An optional property: may be left out (reads as ``None``) but never be ``null``."""


def _json_integer(value: object) -> int | float:
    # JSON Schema "integer" is a mathematical test: 1.0 is an integer, true and "1" are not.
    # An integral float is kept as a float so that dumps round-trip the document.
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise PydanticKnownError("int_type")
    if isinstance(value, float) and not (math.isfinite(value) and value.is_integer()):
        raise PydanticKnownError("int_from_float")
    return value


def _json_number(value: object) -> int | float:
    # JSON Schema "number" takes ints and floats but not booleans (a bool is an int in Python).
    # NaN and infinities are not JSON and jsonschema-rs rejects them.
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise PydanticKnownError("float_type")
    if isinstance(value, float) and not math.isfinite(value):
        raise PydanticKnownError("finite_number")
    return value


# The WithJsonSchema annotations describe the types in the JSON Schema that pydantic
# generates for the models (a plain validator has none of its own).
Integer = Annotated[int | float, PlainValidator(_json_integer), WithJsonSchema({"type": "integer"})]
NonNegativeInteger = Annotated[
    int | float, PlainValidator(_json_integer), Field(ge=0), WithJsonSchema({"type": "integer", "minimum": 0})
]
PositiveInteger = Annotated[
    int | float, PlainValidator(_json_integer), Field(ge=1), WithJsonSchema({"type": "integer", "minimum": 1})
]
Number = Annotated[int | float, PlainValidator(_json_number), WithJsonSchema({"type": "number"})]
NonNegativeNumber = Annotated[
    int | float, PlainValidator(_json_number), Field(ge=0), WithJsonSchema({"type": "number", "minimum": 0})
]
Probability = Annotated[
    int | float,
    PlainValidator(_json_number),
    Field(ge=0, le=1),
    WithJsonSchema({"type": "number", "minimum": 0, "maximum": 1}),
]
DescrText = Annotated[StrictStr, Field(max_length=2048)]
"""Plain text of at most 2048 characters; like JSON Schema, Python counts code points."""
OpenObject = dict[StrictStr, Any]
"""``{"type": "object"}``: any JSON object, kept as given (DECISIONS D3, D6)."""
ObjectOrString = OpenObject | StrictStr
"""``{"type": ["object", "string"]}`` (DECISIONS D3)."""
StringList = list[StrictStr]


@cache
def describe(type_name: str, *labels: str) -> str:
    """The Semantics-table description of the property at ``labels`` of a data type.

    Raises ``LookupError`` when the table has no such row, so a model that names a
    property the spec text does not describe fails at import time.

    >>> describe("BKN-DAC", "Feasibility", "Overall")
    'Overall. One of: feasible, partially_feasible, infeasible. (required)'
    """
    found = data_type(type_name).row(labels)
    if found is None:
        raise LookupError(f"{type_name} has no Semantics-table row {' – '.join(labels)}")
    return found[1].description
