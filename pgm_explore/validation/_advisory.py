"""Advisory checks (DECISIONS D9b): empty strings and lists, and numbers beyond a double.

The schemas accept them, so they are warnings, found by a compiled schema derived from
the data type's own (what it asks for non-empty values) and run together with the verdict
for most messages (:func:`is_clean`).
"""

from __future__ import annotations

import sys
from collections.abc import Iterator, Mapping
from functools import cache
from typing import Any

import jsonschema_rs

from pgm_explore.spec import DataType, resolve
from pgm_explore.validation._explain import _name
from pgm_explore.validation._schema import _rs_registry
from pgm_explore.validation.findings import RULES, Finding, shown, spec_reference

__all__ = ["advisory_findings", "is_clean", "iter_advisory_findings"]


@cache
def _rs_clean_validator(dt: DataType) -> jsonschema_rs.Validator:
    """The schema and the advisory checks in one: most messages pass both, in one pass."""
    both = {"allOf": [{"$ref": dt.schema_id}, _advisory(dict(dt.schema), dt.schema)]}
    return jsonschema_rs.validator_for(both, registry=_rs_registry(), offline=True)


def is_clean(dt: DataType, document: Any) -> bool:
    """True when ``document`` conforms *and* has no empty value to warn about (most
    messages): then neither :func:`schema_findings` nor :func:`advisory_findings` has
    anything to say. False says only that one of them may."""
    try:
        return _rs_clean_validator(dt).is_valid(document)
    except (ValueError, TypeError, OverflowError):
        return False


# --- advisory checks (DECISIONS D9b) ---------------------------------------------------

# Open properties hold whatever their producer put there, and the bundled schemas
# already say what they require of their own arrays.
_NOT_CHECKED = frozenset({"SceneContext", "Intent", "Personality", "Spatial", "Temporal", "DataXMData"})
# Marks a required property's advisory schema (an annotation: no validator reads it), so that the
# advice fits it: a required property cannot be left out, an optional one can.
_REQUIRED = "pgm-explore: required"


def _advisory(node: Any, root: Mapping[str, Any]) -> dict[str, Any]:
    """The part of a schema that asks for non-empty strings and arrays."""
    if not isinstance(node, dict):
        return {}
    if node.get("$ref", "").startswith("#/"):
        return _advisory(resolve(node["$ref"], root)[0], root)
    out: dict[str, Any] = {}
    types = node.get("type")
    types = types if isinstance(types, list) else [types]
    if "string" in types and "enum" not in node and "const" not in node:
        out["minLength"] = 1
    if "number" in types or "integer" in types:
        # Beyond a double's range, a number is read exactly but many readers lose it.
        out["minimum"], out["maximum"] = -sys.float_info.max, sys.float_info.max
    if "array" in types:
        out["minItems"] = 1
        items = _advisory(node.get("items"), root)
        if items:
            out["items"] = items
    required = set(node.get("required", ()))
    for rule in node.get("allOf", ()):  # required in one Mode (if/then): RequestID of a Response
        if isinstance(rule, dict) and isinstance(rule.get("then"), dict):
            required |= set(rule["then"].get("required", ()))
    props = {
        key: {**sub, "$comment": _REQUIRED} if key in required else sub
        for key, value in node.get("properties", {}).items()
        if key not in _NOT_CHECKED and (sub := _advisory(value, root))
    }
    if props:
        out["properties"] = props
    return out


@cache
def _advisory_schema(dt: DataType) -> dict[str, Any]:
    return _advisory(dict(dt.schema), dt.schema)


@cache
def _advisory_validator(dt: DataType) -> jsonschema_rs.Validator:
    return jsonschema_rs.validator_for(_advisory_schema(dt))


def advisory_findings(dt: DataType, document: Any) -> list[Finding]:
    """``empty-value`` warnings, empty strings and lists where the spec expects content, and
    ``beyond-double`` warnings, numbers a double cannot hold."""
    return list(iter_advisory_findings(dt, document))


def iter_advisory_findings(dt: DataType, document: Any) -> Iterator[Finding]:
    """:func:`advisory_findings` one at a time, in document order, as jsonschema-rs reports
    them (a test holds the two equal). A walk of the advisory schema rather than the compiled
    engine's errors: those come all at once, and a million empty strings must not."""
    validator = _advisory_validator(dt)
    try:
        if validator.is_valid(document):
            return
    except (ValueError, TypeError, OverflowError):
        return
    for path, value, node in _empty(_advisory_schema(dt), document, ()):
        if isinstance(value, int | float) and not isinstance(value, bool):
            yield Finding.of(
                "beyond-double",
                path,
                f"{_name(path, dt)} is {shown(value)}, beyond the range of a double (about 1.8e308): "
                "pgm-explore reads the number written, but a reader that uses doubles (JavaScript, "
                "most JSON libraries) makes it infinite.",
                # Where the schema expects the number: its row first, then the rule's clause.
                f"{spec_reference(dt, path)}; {RULES['beyond-double'].spec}",
            )
            continue
        what = "an empty string" if isinstance(value, str) else "an empty list"
        # A required property cannot be left out: the advice is to fill it in.
        advice = "fill it in" if node.get("$comment") == _REQUIRED else "leave it out if there is none"
        yield Finding.of(
            "empty-value", path, f"{_name(path, dt)} is {what}; the spec expects content here ({advice}).", data_type=dt
        )


def _empty(
    node: Mapping[str, Any], value: Any, path: tuple[str | int, ...]
) -> Iterator[tuple[tuple[str | int, ...], Any, Mapping[str, Any]]]:
    """(path, value, advisory schema) of each value that an advisory schema ``node``
    (:func:`_advisory`) finds empty, or beyond a double's range."""
    if isinstance(value, int | float) and not isinstance(value, bool):
        if "maximum" in node and not -sys.float_info.max <= value <= sys.float_info.max:
            yield path, value, node
    elif isinstance(value, str):
        if not value and "minLength" in node:
            yield path, value, node
    elif isinstance(value, list):
        if not value and "minItems" in node:
            yield path, value, node
        items = node.get("items")
        if items:
            for index, item in enumerate(value):
                yield from _empty(items, item, (*path, index))
    elif isinstance(value, dict):
        properties = node.get("properties")
        if properties:
            for key, item in value.items():
                sub = properties.get(key)
                if sub:
                    yield from _empty(sub, item, (*path, key))
