"""JSON Schema node -> form field: small predicates, each with doctested examples.

The form engine (``_form.py``) asks these functions what a schema node becomes, so that one
engine serves the four data types and the schemas they borrow (Simple Time, Data Exchange
Metadata): nothing here knows a property name.

A node is always looked at after :func:`resolve`, which follows ``$ref`` (local ``#/$defs/...``
and the bundled MPAI schemas by ``$id``) and keeps the description of the referring node: the
PGM schemas put the spec-table text beside each ``$ref``.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Mapping
from typing import Any, Literal

from pgm_explore.spec import schema_resources

__all__ = [
    "Kind",
    "alternatives",
    "bounds",
    "choose_alternative",
    "default_value",
    "fits",
    "kind",
    "resolve",
    "slug",
]

Schema = Mapping[str, Any]
Kind = Literal["const", "enum", "boolean", "integer", "number", "string", "object", "array", "union", "open"]

# Numbers a browser holds exactly (JavaScript doubles): an integer beyond this would be
# rounded by the number input, so such a value stays in the raw JSON editor instead.
SAFE_INTEGER = 2**53 - 1


def resolve(schema: Schema, root: Schema) -> tuple[Schema, Schema]:
    """The node ``schema`` stands for, and the document its own local ``$ref``s resolve in.

    >>> root = {"$defs": {"A": {"type": "string", "description": "from $defs"}}}
    >>> resolve({"$ref": "#/$defs/A", "description": "beside the $ref"}, root)[0]["description"]
    'beside the $ref'
    >>> node, where = resolve({"$ref": "https://schemas.mpai.community/OSD/V1.5/data/SimpleTime.json"}, root)
    >>> node["title"], where is node
    ('Simple Time V1.5', True)
    """
    seen = 0
    description = schema.get("description")
    while "$ref" in schema:
        seen += 1
        if seen > 32:  # the bundled schemas have no cycles; a broken one must not hang the form
            raise ValueError(f"$ref chain too long at {schema['$ref']!r}")
        ref = str(schema["$ref"])
        address, _, fragment = ref.partition("#")
        if address:
            root = schema_resources()[address]
        node: Any = root
        for part in (p for p in fragment.split("/") if p):
            node = node[part]
        schema = node
        description = description or schema.get("description")
    if description is not None and schema.get("description") != description:
        schema = {**schema, "description": description}
    return schema, root


def kind(schema: Schema) -> Kind:
    """What editor a (resolved) node gets.

    >>> kind({"type": "string", "const": "PGM-KDA-V1.0"}), kind({"type": "string", "enum": ["a", "b"]})
    ('const', 'enum')
    >>> kind({"type": "integer", "minimum": 0}), kind({"type": "number"}), kind({"type": "boolean"})
    ('integer', 'number', 'boolean')
    >>> kind({"type": "object", "properties": {"a": {}}}), kind({"type": "array", "items": {}})
    ('object', 'array')

    Open properties (an object without listed properties, several types, no type) are
    edited as JSON text:

    >>> kind({"type": "object"}), kind({"type": ["object", "string"]}), kind({})
    ('open', 'open', 'open')
    >>> kind({"oneOf": [{"type": "object", "properties": {"A": {}}}, {"type": "object", "properties": {"B": {}}}]})
    'union'
    """
    if "const" in schema:
        return "const"
    if "enum" in schema:
        return "enum"
    if "oneOf" in schema or "anyOf" in schema:
        options = schema.get("oneOf", schema.get("anyOf"))
        closed = all(isinstance(o, Mapping) and o.get("type") == "object" and "properties" in o for o in options)
        return "union" if closed and options else "open"
    typ = schema.get("type")
    if typ == "object":
        return "object" if "properties" in schema else "open"
    if typ in ("array", "boolean", "integer", "number", "string"):
        return typ
    return "open"


def alternatives(schema: Schema) -> list[Schema]:
    """The alternatives of a union node (``oneOf`` or ``anyOf``)."""
    return list(schema.get("oneOf", schema.get("anyOf", ())))


def choose_alternative(options: list[Schema], value: Any) -> int:
    """Which alternative of a union shows ``value`` best: all its required keys present, then
    the most keys it knows, then the fewest it does not.

    >>> opts = [{"properties": {"AIMID": {}}, "required": ["AIMID"]},
    ...         {"properties": {"ImplementerAIMID": {}}, "required": ["ImplementerAIMID"]}]
    >>> choose_alternative(opts, {"ImplementerAIMID": "x"}), choose_alternative(opts, {})
    (1, 0)
    """
    keys = set(value) if isinstance(value, Mapping) else set()

    def score(option: Schema) -> tuple[bool, int, int]:
        known = set(option.get("properties", {}))
        return (set(option.get("required", ())) <= keys, len(keys & known), -len(keys - known))

    return max(range(len(options)), key=lambda i: score(options[i]))


def bounds(schema: Schema) -> tuple[float | None, float | None]:
    """Inclusive (minimum, maximum) of a number node; exclusive bounds are left to validation.

    >>> bounds({"type": "number", "minimum": 0, "maximum": 1}), bounds({"type": "integer"})
    ((0, 1), (None, None))
    """
    return schema.get("minimum"), schema.get("maximum")


def _is_int(value: Any) -> bool:
    return type(value) is int


def _is_number(value: Any) -> bool:
    return (type(value) is int or type(value) is float) and math.isfinite(value)


def fits(schema: Schema, value: Any) -> bool:
    """Whether the typed editor of a (resolved) node can show ``value`` unchanged.

    A value that does not fit is kept and shown in a raw JSON editor next to its finding,
    never coerced: ``"3"`` is not put into a number box as 3, nor -1 into one bounded at 0.

    >>> fits({"type": "integer", "minimum": 0}, 3), fits({"type": "integer", "minimum": 0}, -1)
    (True, False)
    >>> fits({"type": "integer"}, "3"), fits({"type": "integer"}, True), fits({"type": "integer"}, 3.0)
    (False, False, False)
    >>> fits({"type": "number", "maximum": 1}, 0.5), fits({"type": "number", "maximum": 1}, 88)
    (True, False)
    >>> fits({"enum": ["Ack", "Clash"]}, "Ack"), fits({"enum": ["Ack", "Clash"]}, "ack")
    (True, False)
    >>> fits({"type": "object"}, [1, "anything"])
    True
    """
    k = kind(schema)
    if k == "const":
        return type(value) is type(schema["const"]) and value == schema["const"]
    if k == "enum":
        return any(type(value) is type(option) and value == option for option in schema["enum"])
    if k == "boolean":
        return type(value) is bool
    if k in ("integer", "number"):
        if not (_is_int(value) if k == "integer" else _is_number(value)) or abs(value) > SAFE_INTEGER:
            return False
        low, high = bounds(schema)
        return (low is None or value >= low) and (high is None or value <= high)
    if k == "string":
        return isinstance(value, str)
    if k in ("object", "union"):
        return isinstance(value, dict)
    if k == "array":
        return isinstance(value, list)
    return True  # an open property's JSON editor shows any JSON value


def default_value(schema: Schema, root: Schema) -> Any:
    """The value a property gets when it is switched on: the smallest that fits, with every
    required member (absent is not empty: switching on ``Steps`` gives ``[]``, not nothing).

    >>> default_value({"type": "integer", "minimum": 1}, {}), default_value({"enum": ["b", "a"]}, {})
    (1, 'b')
    >>> default_value({"type": "object", "required": ["Step"], "properties": {
    ...     "Step": {"type": "integer", "minimum": 0}, "Reason": {"type": "string"}}}, {})
    {'Step': 0}
    >>> default_value({"type": "array", "minItems": 1, "items": {"type": "string"}}, {})
    ['']
    >>> default_value({"type": ["object", "string"]}, {}), default_value({"type": "string"}, {})
    ({}, '')
    """
    schema, root = resolve(schema, root)
    k = kind(schema)
    if k == "const":
        return schema["const"]
    if k == "enum":
        return schema["enum"][0]
    if k == "boolean":
        return False
    if k in ("integer", "number"):
        low, high = bounds(schema)
        start = 0 if low is None else low
        return start if high is None else min(start, high)
    if k == "string":
        return ""
    if k == "object":
        props = schema["properties"]
        return {name: default_value(props[name], root) for name in props if name in schema.get("required", ())}
    if k == "array":
        item = schema.get("items", {})
        return [default_value(item, root) for _ in range(int(schema.get("minItems", 0)))]
    if k == "union":
        return default_value(alternatives(schema)[0], root)
    types = schema.get("type")
    if types == "string" or (isinstance(types, list) and "object" not in types and "string" in types):
        return ""
    return {}


_UNSAFE = re.compile(r"[^A-Za-z0-9_]")


def slug(path: Iterable[str | int]) -> str:
    """The CSS-class form of a path: parts joined by "-", other characters made "_".

    >>> slug(("Feasibility", "Steps", 0, "PAStatus")), slug(()), slug(("a b", "c-d"))
    ('Feasibility-Steps-0-PAStatus', 'root', 'a_b-c_d')
    """
    parts = [_UNSAFE.sub("_", str(part)) for part in path]
    return "-".join(parts) if parts else "root"
