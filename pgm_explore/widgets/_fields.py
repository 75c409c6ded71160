"""JSON Schema node -> form field: small predicates, each with doctested examples.

The form engine (``_form.py``) asks these functions what a schema node becomes, so that one
engine serves the four data types and the schemas they borrow (Simple Time, Data Exchange
Metadata): nothing here knows a property name.

A node is always looked at after :func:`resolve`, which follows ``$ref`` (local ``#/$defs/...``
and the bundled MPAI schemas by ``$id``) through :func:`pgm_explore.spec.resolve`, the resolver
of the validator's registry, and keeps the description of the referring node: the PGM schemas
put the spec-table text beside each ``$ref``.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Iterable, Mapping
from typing import Any, Literal

from pgm_explore.spec import resolve as resolve_ref
from pgm_explore.spec.process_actions import PA_STATUS

__all__ = [
    "Kind",
    "alternatives",
    "bounds",
    "choose_alternative",
    "constraint_text",
    "default_value",
    "enum_meanings",
    "fits",
    "kind",
    "number_from_text",
    "number_text",
    "resolve",
    "slug",
]

Schema = Mapping[str, Any]
Kind = Literal["const", "enum", "boolean", "integer", "number", "string", "object", "array", "union", "open"]


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
        schema, root = resolve_ref(str(schema["$ref"]), root)
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


def _is_number(value: Any) -> bool:
    return (type(value) is int or type(value) is float) and math.isfinite(value)


# The number grammar of RFC 8259 (no sign "+", no leading zeros, no "." without digits).
_JSON_NUMBER = re.compile(r"-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?")


def number_from_text(text: str) -> Any:
    """The JSON value of what is typed into a number box: the number when the whole text is a
    JSON number, otherwise the text itself, unchanged (the validator then says what is wrong).

    >>> number_from_text("1.5"), number_from_text("55"), number_from_text("-3"), number_from_text("1e3")
    (1.5, 55, -3, 1000.0)
    >>> number_from_text("2,5"), number_from_text("abc"), number_from_text(""), number_from_text(" 5")
    ('2,5', 'abc', '', ' 5')
    >>> number_from_text("007"), number_from_text("1."), number_from_text("1e999")
    ('007', '1.', '1e999')
    """
    if _JSON_NUMBER.fullmatch(text):
        value = json.loads(text)
        if _is_number(value):  # 1e999 overflows a double: kept as typed
            return value
    return text


def number_text(value: Any) -> str:
    """What a number box shows for a value it can hold: the JSON of a number, a text as it is.

    >>> number_text(5), number_text(5.0), number_text(1e20), number_text("2,5")
    ('5', '5.0', '1e+20', '2,5')
    """
    return value if isinstance(value, str) else json.dumps(value)


def _same(a: Any, b: Any) -> bool:
    return type(a) is type(b) and a == b


def fits(schema: Schema, value: Any) -> bool:
    """Whether the typed editor of a (resolved) node can show ``value`` unchanged.

    A value that does not fit is kept and shown in a raw JSON editor next to its finding,
    never coerced: ``"ack"`` is not put into a dropdown of ``"Ack"``. A number box is a text
    box read by JSON rules, so it shows any number, in bounds or not, and any text that does
    not read as a number; the text ``"3"`` would read as the number 3, so it stays raw.

    >>> fits({"type": "integer", "minimum": 0}, 3), fits({"type": "integer", "minimum": 0}, -1)
    (True, True)
    >>> fits({"type": "integer"}, 1.5), fits({"type": "integer"}, "abc"), fits({"type": "integer"}, "3")
    (True, True, False)
    >>> fits({"type": "integer"}, True), fits({"type": "number"}, None), fits({"type": "number"}, 10**30)
    (False, False, True)
    >>> fits({"enum": ["Ack", "Clash"]}, "Ack"), fits({"enum": ["Ack", "Clash"]}, "ack")
    (True, False)
    >>> fits({"type": "object"}, [1, "anything"])
    True
    """
    k = kind(schema)
    if k == "const":
        return _same(value, schema["const"])
    if k == "enum":
        return any(_same(value, option) for option in schema["enum"])
    if k == "boolean":
        return type(value) is bool
    if k in ("integer", "number"):
        if isinstance(value, str):
            return number_from_text(value) == value and type(number_from_text(value)) is str
        return _is_number(value) and _same(number_from_text(number_text(value)), value)
    if k == "string":
        return isinstance(value, str)
    if k in ("object", "union"):
        return isinstance(value, dict)
    if k == "array":
        return isinstance(value, list)
    return True  # an open property's JSON editor shows any JSON value


def constraint_text(schema: Schema) -> str:
    """The bounds of a number or the length limit of a text, as shown beside the label.

    >>> constraint_text({"type": "number", "minimum": 0, "maximum": 1}), constraint_text({"type": "integer", "minimum": 1})
    ('0 – 1', '≥ 1')
    >>> constraint_text({"type": "number", "exclusiveMinimum": 0}), constraint_text({"type": "string", "maxLength": 2048})
    ('> 0', '≤ 2048 characters')
    >>> constraint_text({"type": "string"})
    ''
    """
    k = kind(schema)
    if k == "string":
        most = schema.get("maxLength")
        return f"≤ {most} characters" if most is not None else ""
    if k not in ("integer", "number"):
        return ""
    low, high = bounds(schema)
    if low is not None and high is not None:
        return f"{low} – {high}"
    parts = []
    if low is not None:
        parts.append(f"≥ {low}")
    elif "exclusiveMinimum" in schema:
        parts.append(f"> {schema['exclusiveMinimum']}")
    if high is not None:
        parts.append(f"≤ {high}")
    elif "exclusiveMaximum" in schema:
        parts.append(f"< {schema['exclusiveMaximum']}")
    return ", ".join(parts)


def enum_meanings(schema: Schema) -> dict[str, str]:
    """What each value of an enumeration means, where the spec says it: the PA Status codes
    from :data:`pgm_explore.spec.process_actions.PA_STATUS`, otherwise ``value=meaning`` or
    ``value: meaning`` in the node's description (Simple Time's TimeUnit and AccuracyMode).

    >>> enum_meanings({"enum": ["Ack", "InsRights"]})["InsRights"]
    'Insufficient Rights.'
    >>> enum_meanings({"enum": ["00", "01"], "description": "From FlagsByte bits1..2: 00=sec, 01=ms."})
    {'00': 'sec', '01': 'ms'}
    >>> enum_meanings({"enum": ["single", "separate"], "description": "single: one ± for both; separate: one each."})
    {'single': 'one ± for both', 'separate': 'one each'}
    >>> enum_meanings({"enum": ["answered", "not_answered"], "description": "The outcome. One of: answered, not_answered."})
    {}
    """
    values = [v for v in schema.get("enum", ()) if isinstance(v, str)]
    if values and all(v in PA_STATUS for v in values):
        return {v: PA_STATUS[v].meaning for v in values}
    text = str(schema.get("description", ""))
    found: dict[str, str] = {}
    for value in values:
        match = re.search(rf"(?<![\w.]){re.escape(value)}\s*[=:]\s*([^,;]+?)\s*(?=[,;]|\.?$)", text)
        if match:
            found[value] = match.group(1)
    return found


LONG_TEXTS = frozenset(
    {
        "Prompt",
        "Question",
        "Statement",
        "Reason",
        "Rationale",
        "Text",
        "Rules",
        "Constraints",
        "GoalConstraints",
        "ExpressiveConstraints",
        "BehaviouralExpectations",
    }
)
"""Properties (or arrays of them) whose strings are sentences a person writes, not names or ids."""


def long_text(path: tuple[str | int, ...], schema: Schema) -> bool:
    """A string field that gets a multi-line box: sentences (:data:`LONG_TEXTS`, named by the
    property or the array holding the item) or a ``maxLength`` of 256 and more (DescrMetadata).

    >>> long_text(("ProcessActions", 0, "Statement"), {"type": "string"})
    True
    >>> long_text(("Answer", "Constraints", 2), {"type": "string"}), long_text(("QueryID",), {"type": "string"})
    (True, False)
    >>> long_text(("DescrMetadata",), {"type": "string", "maxLength": 2048})
    True
    """
    name = next((part for part in reversed(path) if isinstance(part, str)), "")
    return name in LONG_TEXTS or int(schema.get("maxLength", 0)) >= 256


def numbered(item: Any, siblings: list[Any]) -> Any:
    """A new array item that carries a ``Step`` (a Process Action, a feasibility step) gets the
    next free one: one more than the largest Step of its siblings (0 for the first), so that a
    new item never repeats a Step.

    >>> numbered({"Step": 0, "Statement": ""}, [{"Step": 0}, {"Step": 3}, {"Step": "x"}])
    {'Step': 4, 'Statement': ''}
    >>> numbered({"Step": 0}, []), numbered("", [""]), numbered({"Step": 0}, [{"Step": True}])
    ({'Step': 0}, '', {'Step': 0})
    """
    if not isinstance(item, dict) or not isinstance(item.get("Step"), int):
        return item
    steps = [
        s["Step"]
        for s in siblings
        if isinstance(s, dict) and isinstance(s.get("Step"), int) and not isinstance(s["Step"], bool)
    ]
    return {**item, "Step": max(steps) + 1} if steps else item


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
