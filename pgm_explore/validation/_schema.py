"""Schema validation: the verdict, from two engines held to agree.

The verdict comes from jsonschema-rs (hundreds of thousands of messages a second).
Only a message that fails is handed to python-jsonschema (:mod:`._explain`), whose errors
carry the sub-schema, the schema path and the alternatives of a failed ``oneOf``, which is
what a message for a person needs. A test holds the two engines to the same verdict; should
they ever differ at run time, the compiled engine's own error is reported rather than
nothing. The advisory checks of DECISIONS D9b are in :mod:`._advisory`.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from functools import cache, lru_cache
from importlib import import_module
from typing import TYPE_CHECKING, Any

import jsonschema_rs

from pgm_explore.spec import (
    DataType,
    schema_resources,
)
from pgm_explore.spec import registry as spec_registry
from pgm_explore.validation.findings import shown, written

if TYPE_CHECKING:
    from jsonschema.protocols import Validator

__all__ = ["is_valid"]


@cache
def _rs_registry() -> jsonschema_rs.Registry:
    return jsonschema_rs.Registry([(uri, dict(resource)) for uri, resource in schema_resources().items()])


@cache
def _rs_validator(dt: DataType) -> jsonschema_rs.Validator:
    return jsonschema_rs.validator_for(dict(dt.schema), registry=_rs_registry(), offline=True)


def _ecma_dollars(pattern: str) -> str:
    r"""``pattern`` with each ``$`` anchor made ``\Z``: in ECMA-262, which JSON Schema
    prescribes, ``$`` matches only at the end of the string; in Python also before a
    final newline. An escaped ``\$`` and a ``$`` in a character class stay as they are.

    >>> print(_ecma_dollars(r"^a\.b$|^c[$]\$$"))
    ^a\.b\Z|^c[$]\$\Z
    """
    out = []
    escaped = in_class = False
    for char in pattern:
        if escaped:
            escaped = False
        elif char == "\\":
            escaped = True
        elif in_class:
            in_class = char != "]"
        elif char == "[":
            in_class = True
        elif char == "$":
            out.append(r"\Z")
            continue
        out.append(char)
    return "".join(out)


@cache
def _ecma_regex(pattern: str) -> re.Pattern[str]:
    return re.compile(_ecma_dollars(pattern))


EXPLAINER = "pgm_explore.validation._preload"
"""The module a process imports to have python-jsonschema ready to explain, ``rfc3987_syntax``'s
grammars built at their first use (:mod:`._preload`): what the forkservers of local workers
preload, by this name, and what :func:`own_process` has the command's own process import."""

_OWN_PROCESS = False
"""True in a process that is the command's own (:func:`own_process`): python-jsonschema is then
imported as the forkserver of the local workers imports it, ``rfc3987_syntax``'s grammars built
at its first use rather than at the import (:mod:`._preload`). Elsewhere (a notebook's kernel, a
user's program) it is imported as it is."""


def own_process() -> None:
    """Say that this process is the command's own: ``pgm_explore.cli.main`` run as the process's
    command line (the ``pgm-explore`` script, ``python -m pgm_explore``), not called by a program.
    Its first message that does not conform then waits 0.1 s for python-jsonschema, not 0.95 s
    (docs/performance.md)."""
    global _OWN_PROCESS
    _OWN_PROCESS = True


@cache
def _validator_class() -> type[Validator]:
    """Draft 2020-12 of python-jsonschema, with ``pattern`` read as ECMA-262 reads it, so
    that its explanations agree with the verdict of jsonschema-rs."""
    if _OWN_PROCESS:
        import_module(EXPLAINER)
    from jsonschema import Draft202012Validator, ValidationError, validators

    def pattern(validator: Validator, value: str, instance: Any, schema: Mapping[str, Any]) -> Iterator[Any]:
        if validator.is_type(instance, "string") and not _ecma_regex(value).search(instance):
            yield ValidationError(f"{shown(instance)} does not match {value!r}")

    def writing_safely(keyword: str) -> Any:
        # These keywords put repr(instance) in their message, which raises for an int
        # longer than Python writes (a dict built in Python may hold one): the verdict is
        # still theirs, with a message that says the size instead.
        check = Draft202012Validator.VALIDATORS[keyword]

        def safely(validator: Validator, value: Any, instance: Any, schema: Mapping[str, Any]) -> Iterator[Any]:
            try:
                errors = list(check(validator, value, instance, schema))
            except ValueError as exc:
                if "integer string conversion" not in str(exc):
                    raise
                errors = [ValidationError(f"{written(instance)} fails {keyword} {value}")]
            yield from errors

        return safely

    # properties and allOf as python-jsonschema has them, a `true` sub-schema passed over rather
    # than descended into (it has nothing to say of any value): the explainer makes `true` of
    # each part jsonschema-rs found right (_py_validator_within), and descending into each cost
    # a generator and a call, about a tenth of explaining a message (docs/performance.md).
    # (validator: Any, as python-jsonschema's own keywords have it: its Validator protocol has no descend.)
    def properties(validator: Any, value: Any, instance: Any, schema: Mapping[str, Any]) -> Iterator[Any]:
        if not validator.is_type(instance, "object"):
            return
        for name, sub in value.items():
            if sub is not True and name in instance:
                yield from validator.descend(instance[name], sub, path=name, schema_path=name)

    def all_of(validator: Any, value: Any, instance: Any, schema: Mapping[str, Any]) -> Iterator[Any]:
        for index, sub in enumerate(value):
            if sub is not True:
                yield from validator.descend(instance, sub, schema_path=index)

    written_keywords = ("type", "enum", "const", "minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum")
    return validators.extend(
        Draft202012Validator,
        {"pattern": pattern, "properties": properties, "allOf": all_of}
        | {keyword: writing_safely(keyword) for keyword in written_keywords},
    )


@cache
def _py_validator(dt: DataType) -> Validator:
    return _validator_class()(dt.schema, registry=spec_registry())


@lru_cache(maxsize=256)
def _py_validator_within(dt: DataType, properties: frozenset[str], branches: frozenset[int]) -> Validator:
    """The schema of ``dt`` with the sub-schemas of the top-level properties not in
    ``properties`` and the ``allOf`` items (the Mode branches) not in ``branches`` made
    ``true``. python-jsonschema walks the whole of a message and of its schema to explain
    it (hundreds of microseconds), yet only where jsonschema-rs saw a problem is there
    anything to explain. The names and positions stay, so ``additionalProperties`` and
    the schema paths of the errors are unchanged."""
    schema = dict(dt.schema)
    schema["properties"] = {name: sub if name in properties else True for name, sub in dt.schema["properties"].items()}
    if "allOf" in schema:
        schema["allOf"] = [sub if i in branches else True for i, sub in enumerate(dt.schema["allOf"])]
    return _validator_class()(schema, registry=spec_registry())


def _explainer(dt: DataType, document: Mapping[str, Any]) -> Validator:
    """The python-jsonschema validator that explains ``document``: only the top-level
    properties and Mode branches that jsonschema-rs finds wrong, each asked on its own
    (``is_valid`` stops at the first problem: a million wrong items cost no more than one),
    or the whole schema when it cannot say."""
    declared = dt.schema["properties"]
    try:
        if _rs_parts(dt).is_valid(document):
            # Every property and Mode branch is right (what is wrong is the root's own: a property
            # missing or not declared): one call instead of one for each part.
            return _py_validator_within(dt, frozenset(), frozenset())
        properties = frozenset(
            name
            for name, value in document.items()
            if name in declared and not _rs_part(dt, "properties", name).is_valid(value)
        )
        branches = frozenset(
            index
            for index in range(len(dt.schema.get("allOf", ())))
            if not _rs_part(dt, "allOf", index).is_valid(document)
        )
    except (ValueError, TypeError, OverflowError):
        return _py_validator(dt)
    return _py_validator_within(dt, properties, branches)


@cache
def _rs_parts(dt: DataType) -> jsonschema_rs.Validator:
    """Every part of ``dt``'s schema that :func:`_explainer` asks about, at once: the top-level
    properties' sub-schemas and the Mode branches, none of the root's other keywords."""
    parts: dict[str, Any] = {
        "properties": {name: _reference(dt, "properties", name) for name in dt.schema["properties"]}
    }
    if "allOf" in dt.schema:
        parts["allOf"] = [_reference(dt, "allOf", index) for index in range(len(dt.schema["allOf"]))]
    return jsonschema_rs.validator_for(parts, registry=_rs_registry(), offline=True)


def _reference(dt: DataType, keyword: str, name: str | int) -> dict[str, str]:
    """A reference to the sub-schema ``keyword/name`` of ``dt``'s schema."""
    pointer = str(name).replace("~", "~0").replace("/", "~1")
    return {"$ref": f"{dt.schema_id}#/{keyword}/{pointer}"}


@lru_cache(maxsize=256)
def _rs_part(dt: DataType, keyword: str, name: str | int) -> jsonschema_rs.Validator:
    """The compiled sub-schema ``keyword/name`` of ``dt``'s schema (a property, a Mode branch)."""
    return jsonschema_rs.validator_for(_reference(dt, keyword, name), registry=_rs_registry(), offline=True)


def is_valid(dt: DataType, document: Any, *, exact: bool = False) -> bool:
    """The verdict of the compiled validator (falls back to python-jsonschema for
    values it cannot take, such as strings with lone surrogates). With ``exact``, the
    verdict of python-jsonschema: jsonschema-rs takes an int longer than Python writes
    (more than 4,300 digits) for something that passes any ``minimum`` and ``maximum``."""
    if exact:
        return _py_validator(dt).is_valid(document)
    try:
        return _rs_validator(dt).is_valid(document)
    except (ValueError, TypeError, OverflowError):
        return _py_validator(dt).is_valid(document)
