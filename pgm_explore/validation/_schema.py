"""Schema validation: a compiled verdict, and plain-language reasons when it is "no".

The verdict comes from jsonschema-rs (hundreds of thousands of messages a second).
Only a message that fails is handed to python-jsonschema, whose errors carry the
sub-schema, the schema path and the alternatives of a failed ``oneOf``, which is what a
message for a person needs. A test holds the two engines to the same verdict; should
they ever differ at run time, the compiled engine's own error is reported rather than
nothing.
"""

from __future__ import annotations

import difflib
import re
import sys
from collections.abc import Iterable, Iterator, Mapping
from functools import cache, lru_cache
from itertools import islice
from typing import TYPE_CHECKING, Any

import jsonschema_rs

from pgm_explore.spec import (
    DATA_EXCHANGE_METADATA_ID,
    MODE_WORDS,
    SIMPLE_TIME_ID,
    DataType,
    resolve,
    schema_resources,
)
from pgm_explore.spec import registry as spec_registry
from pgm_explore.validation.findings import CLIPPED, Finding, RuleCode, clip, written

if TYPE_CHECKING:
    from jsonschema import ValidationError
    from jsonschema.protocols import Validator

__all__ = [
    "advisory_findings",
    "is_clean",
    "is_valid",
    "iter_advisory_findings",
    "iter_schema_findings",
    "schema_findings",
]

_TYPE_WORDS = {
    "string": "a string",
    "integer": "an integer",
    "number": "a number",
    "object": "an object",
    "array": "an array",
    "boolean": "true or false",
    "null": "null",
}
_SHOWN = CLIPPED
_DATA_TYPE_PATTERN = r"^[A-Z]{3}-[A-Z]{3}-V[0-9]{1,2}\.[0-9]{1,2}$"
"""Data Exchange Metadata's form of a data type or AI Module type (``$defs/Pattern``)."""
_SUGGESTED = 60
"""Names and values longer than this get no "Did you mean" (difflib is quadratic in them)."""


@cache
def _rs_registry() -> jsonschema_rs.Registry:
    return jsonschema_rs.Registry([(uri, dict(resource)) for uri, resource in schema_resources().items()])


@cache
def _rs_validator(dt: DataType) -> jsonschema_rs.Validator:
    return jsonschema_rs.validator_for(dict(dt.schema), registry=_rs_registry(), offline=True)


@cache
def _rs_clean_validator(dt: DataType) -> jsonschema_rs.Validator:
    """The schema and the advisory checks in one: most messages pass both, in one pass."""
    both = {"allOf": [{"$ref": dt.schema_id}, _advisory(dict(dt.schema), dt.schema)]}
    return jsonschema_rs.validator_for(both, registry=_rs_registry(), offline=True)


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


@cache
def _validator_class() -> type[Validator]:
    """Draft 2020-12 of python-jsonschema, with ``pattern`` read as ECMA-262 reads it, so
    that its explanations agree with the verdict of jsonschema-rs."""
    from jsonschema import Draft202012Validator, ValidationError, validators

    def pattern(validator: Validator, value: str, instance: Any, schema: Mapping[str, Any]) -> Iterator[Any]:
        if validator.is_type(instance, "string") and not _ecma_regex(value).search(instance):
            yield ValidationError(f"{_shown(instance)} does not match {value!r}")

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

    written_keywords = ("type", "enum", "const", "minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum")
    return validators.extend(
        Draft202012Validator, {"pattern": pattern} | {keyword: writing_safely(keyword) for keyword in written_keywords}
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


@lru_cache(maxsize=256)
def _rs_part(dt: DataType, keyword: str, name: str | int) -> jsonschema_rs.Validator:
    """The compiled sub-schema ``keyword/name`` of ``dt``'s schema (a property, a Mode branch)."""
    pointer = str(name).replace("~", "~0").replace("/", "~1")
    reference = {"$ref": f"{dt.schema_id}#/{keyword}/{pointer}"}
    return jsonschema_rs.validator_for(reference, registry=_rs_registry(), offline=True)


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


def is_clean(dt: DataType, document: Any) -> bool:
    """True when ``document`` conforms *and* has no empty value to warn about (most
    messages): then neither :func:`schema_findings` nor :func:`advisory_findings` has
    anything to say. False says only that one of them may."""
    try:
        return _rs_clean_validator(dt).is_valid(document)
    except (ValueError, TypeError, OverflowError):
        return False


# --- explaining a failure -------------------------------------------------------------


def _shown(value: Any) -> str:
    """A short, safe rendering of a value for a message (never the whole of a 10 MB string)."""
    if isinstance(value, bool) or value is None:
        return {True: "true", False: "false", None: "null"}[value]
    if isinstance(value, str):
        text = value if len(value) <= _SHOWN else value[:_SHOWN] + "…"
        return f'the string "{text}"'
    if isinstance(value, int | float):
        text = written(value)
        return text if text.startswith(("an ", "about ")) else f"the number {text}"
    if isinstance(value, list):
        return f"an array of {len(value)} item{'s' if len(value) != 1 else ''}"
    if isinstance(value, dict):
        return "an object"
    return type(value).__name__


def _name(path: tuple[str | int, ...], dt: DataType) -> str:
    """How a sentence about the value at ``path`` starts: its property, or an item of it.

    >>> from pgm_explore.spec import data_type
    >>> _name(("Commitments", 0), data_type("BKN-DAC")), _name((), data_type("BKN-DAC"))
    ('Each item of Commitments', 'A BKN-DAC message')
    """
    if not path:
        return f"A {dt.name} message"
    last = path[-1]
    if isinstance(last, int):
        parent = next((p for p in reversed(path) if isinstance(p, str)), "the array")
        return f"Each item of {clip(parent)}"
    return clip(str(last))


def _owner(path: tuple[str | int, ...], dt: DataType) -> str:
    """How a sentence names, after its start, the object at ``path`` that holds a property.

    >>> from pgm_explore.spec import data_type
    >>> _owner(("Commitments", 0), data_type("BKN-DAC")), _owner((), data_type("BKN-DAC"))
    ('an item of Commitments', 'a BKN-DAC message')
    >>> _owner(("Failure",), data_type("BKN-DAC"))
    'Failure'
    """
    if not path:
        return f"a {dt.name} message"
    last = path[-1]
    if isinstance(last, int):
        parent = next((p for p in reversed(path) if isinstance(p, str)), "the array")
        return f"an item of {clip(parent)}"
    return clip(str(last))


def _labels(path: tuple[str | int, ...]) -> tuple[str, ...]:
    return tuple(p for p in path if isinstance(p, str))


# The properties whose value is a type of another MPAI standard, bundled as published:
# what is inside them is that standard's, not the data type's tables'.
_BUNDLED = {
    "DataXMData": ("PTF V1.0 Data Exchange Metadata", "D6"),
    "QueryTime": ("OSD V1.5 Simple Time", "D5"),
    "PCPromptTime": ("OSD V1.5 Simple Time", "D5"),
}
# The bundled schemas by $id: what a value that must be one of them is called.
_BUNDLED_TYPES = {
    DATA_EXCHANGE_METADATA_ID: "a PTF V1.0 Data Exchange Metadata",
    SIMPLE_TIME_ID: "an OSD V1.5 Simple Time",
}


def spec_reference(dt: DataType, path: tuple[str | int, ...]) -> str:
    """The spec clause behind the value at ``path``, through the bundled schemas.

    >>> from pgm_explore.spec import data_type
    >>> spec_reference(data_type("BKN-PAL"), ("DataXMData", "Owner"))
    'PTF V1.0 Data Exchange Metadata (DECISIONS D6), via BKN-PAL Table 1, DataXMData'
    """
    labels = _labels(path)
    if len(labels) > 1 and labels[0] in _BUNDLED:
        standard, decision = _BUNDLED[labels[0]]
        return f"{standard} (DECISIONS {decision}), via {dt.clause(labels[:1])}"
    return dt.clause(labels)


def _value(error: ValidationError) -> Any:
    """The value of the keyword that ``error`` broke. (Typed "maybe unset" for errors made by
    hand; the engine's errors always have it.)"""
    return error.validator_value


def _instance(error: ValidationError) -> Any:
    """The value that broke it (see :func:`_value`)."""
    return error.instance


def _schema_of(error: ValidationError) -> Mapping[str, Any]:
    """The (sub)schema holding the keyword, or nothing (see :func:`_value`)."""
    schema = error.schema
    return schema if isinstance(schema, Mapping) else {}


def _one_of(error: ValidationError) -> str:
    """Describe the alternatives of a failed oneOf/anyOf by the property each requires."""
    forms = []
    for alternative in _value(error):
        required = alternative.get("required") if isinstance(alternative, dict) else None
        if not required:
            return "matches none of the allowed forms"
        forms.append("{" + ", ".join(required) + "}")
    if not isinstance(error.instance, dict):
        return f"must be an object of one of the forms {' or '.join(forms)}, not {_shown(error.instance)}"
    if error.validator == "oneOf":
        return "must be an object with exactly one of the forms " + " or ".join(forms)
    return "must have one of the forms " + " or ".join(forms)


def _shaped_branch(error: ValidationError) -> int | None:
    """The one alternative of a failed oneOf/anyOf whose shape the value has (an object
    holding every property that alternative requires), or None when no single one does.

    Then the value was meant as that alternative, and what is wrong is inside it: an
    ``{"AIMID": 5}`` is an ``{AIMID}`` whose AIMID is not a string, not a value of
    neither form. (python-jsonschema's ``best_match`` guesses by the depth and the
    keyword of the errors; the required properties say what the sender meant.)
    """
    instance = error.instance
    if not isinstance(instance, dict):
        return None
    shaped = [
        index
        for index, alternative in enumerate(_value(error))
        if isinstance(alternative, dict)
        and alternative.get("type", "object") == "object"
        and alternative.get("required")
        and all(name in instance for name in alternative["required"])
    ]
    return shaped[0] if len(shaped) == 1 else None


def _close(word: str, options: list[str]) -> str:
    """' Did you mean "X"?' for the option closest to ``word``, or nothing."""
    if len(word) > _SUGGESTED:  # no typo of a name; and difflib is quadratic in the length
        return ""
    match = closest(word, tuple(options))
    return f' Did you mean "{match}"?' if match else ""


@lru_cache(maxsize=1024)
def closest(word: str, options: tuple[str, ...]) -> str | None:
    """The option most like ``word`` (difflib, cutoff 0.6), remembered: the same mistake
    tends to come in every message of a producer, and difflib takes ~50 µs a time."""
    match = difflib.get_close_matches(word, options, n=1, cutoff=0.6)
    return match[0] if match else None


def _translate(dt: DataType, mode: str | None, error: ValidationError) -> Iterator[Finding]:
    path = tuple(error.absolute_path)
    schema_path = tuple(error.absolute_schema_path)
    keyword = error.validator
    name = _name(path, dt)
    spec = spec_reference(dt, path)

    if keyword == "required":
        # python-jsonschema yields one error per missing property; naming each one at
        # its own path lets a form put the message beside the empty field.
        instance = error.instance if isinstance(error.instance, dict) else {}
        for prop in _value(error):
            if prop in instance:
                continue
            where = (*path, prop)
            if not path and "then" in schema_path and (word := MODE_WORDS.get(mode or "")):
                requirement = {"Kind": "Request", "RequestID": "Correlation"}.get(prop, "Response")
                yield Finding.of(
                    "mode-required",
                    where,
                    f"{prop} is missing: a {dt.name} {word} must state its {prop}.",
                    f"{dt.requirement(requirement)} (DECISIONS D7)",
                )
            elif not path and prop == "DataXMData":
                yield Finding.of(
                    "required",
                    where,
                    f"DataXMData is missing: every {dt.name} message shall include its Data Exchange Metadata.",
                    f"{dt.requirement('Metadata')} (DECISIONS D6)",
                )
            elif "then" in schema_path:
                accuracy = instance.get("AccuracyMode")
                why = (
                    f'AccuracyMode is "{clip(accuracy)}", which requires it'
                    if isinstance(accuracy, str)
                    else "a Simple Time segment without AccuracyMode must carry AccuracyPlusMinus, "
                    "AccuracyStartPlusMinus and AccuracyEndPlusMinus (a quirk of the published schema)"
                )
                yield Finding.of("required", where, f"{prop} is missing: {why}.", spec)
            else:
                yield Finding.of(
                    "required",
                    where,
                    f"{prop} is missing: it is required in {_owner(path, dt)}.",
                    spec_reference(dt, where),
                )
    elif keyword is None:
        # A `false` sub-schema: only the Mode branches have them. python-jsonschema
        # reports these without the property's path, so read the names off the branch.
        branch = _branch(dt, schema_path)
        if branch is None:
            yield Finding.of("schema", path, error.message[:200], spec)
            return
        other = "RS" if mode == "RQ" else "RQ"
        for prop in branch:
            yield Finding.of(
                "mode-forbidden",
                (prop,),
                f"{prop} is a {MODE_WORDS[other]} property and may not appear in a {MODE_WORDS.get(mode or '', '')}.",
                f"{dt.requirement('Header')}; {dt.clause((prop,))} (DECISIONS D8)",
            )
    elif keyword == "additionalProperties":
        declared = list(_schema_of(error).get("properties", {}))
        for extra in _instance(error):
            if extra in declared:
                continue
            where = (*path, extra)
            # Directly inside a bundled type, the clause is that type's, not the row holding it.
            clause = spec_reference(dt, where) if _labels(path)[:1] and _labels(path)[0] in _BUNDLED else spec
            yield Finding.of(
                "unknown-property",
                where,
                f"{clip(extra)} is not a property of {_owner(path, dt)}.{_close(extra, declared)}",
                f"{clause}: the properties the tables list (DECISIONS D3)"
                if path
                else f"{dt.name} Tables (DECISIONS D3)",
            )
    elif keyword == "type":
        expected = _value(error) if isinstance(_value(error), list) else [_value(error)]
        words = " or ".join(_TYPE_WORDS.get(t, t) for t in expected)
        schema = error.schema if isinstance(error.schema, dict) else {}
        bundled = _BUNDLED_TYPES.get(schema.get("$id", ""))
        # The type is the one problem reported (see _one_per_problem); what else the schema
        # asks of the value is said with it, so that the message says what to write.
        if isinstance(schema.get("const"), str):
            words = f'the string "{schema["const"]}"'
        elif schema.get("enum") and expected == ["string"]:
            words = f"{words}, one of {', '.join(str(option) for option in schema['enum'])}"
        if bundled and expected == ["object"]:
            # The value must be a whole type of another MPAI standard, which the row names.
            words = f"{bundled} object"
            if len(path) == 1 and path[0] in _BUNDLED:
                spec = f"{spec}: {_BUNDLED[path[0]][0]} (DECISIONS {_BUNDLED[path[0]][1]})"
        yield Finding.of("type", path, f"{name} must be {words}, not {_shown(error.instance)}.", spec)
    elif keyword == "enum":
        options = [str(o) for o in _value(error)]
        hint = _close(error.instance, options) if isinstance(error.instance, str) else ""
        yield Finding.of(
            "enum",
            path,
            f"{name} must be one of {', '.join(options)}; {_shown(error.instance)} is not allowed.{hint}",
            spec,
        )
    elif keyword == "const":
        yield Finding.of(
            "const", path, f'{name} must be "{error.validator_value}", not {_shown(error.instance)}.', spec
        )
    elif keyword in ("minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum"):
        bound = {
            "minimum": "at least",
            "maximum": "at most",
            "exclusiveMinimum": "more than",
            "exclusiveMaximum": "less than",
        }[keyword]
        yield Finding.of(
            "range", path, f"{name} must be {bound} {error.validator_value}, not {written(error.instance)}.", spec
        )
    elif keyword == "maxLength":
        yield Finding.of(
            "max-length",
            path,
            f"{name} has {len(_instance(error)):,} characters; at most {error.validator_value:,} are allowed.",
            spec,
        )
    elif keyword == "pattern":
        # The one pattern of the bundled schemas, in words; any other as it is written.
        form = (
            "have the form AAA-BBB-Vx.y (three capital letters, a hyphen, three capital letters, "
            "a hyphen, V and a version), for example PGM-KDA-V1.0"
            if error.validator_value == _DATA_TYPE_PATTERN
            else f"match the pattern {error.validator_value}"
        )
        yield Finding.of("pattern", path, f"{name} must {form}; {_shown(error.instance)} does not.", spec)
    elif keyword == "minItems":
        count = error.validator_value
        yield Finding.of("min-items", path, f"{name} must have at least {count} item{'s' if count != 1 else ''}.", spec)
    elif keyword in ("oneOf", "anyOf"):
        branch = _shaped_branch(error)
        if branch is None:
            yield Finding.of("one-of", path, f"{name} {_one_of(error)}.", spec)
            return
        # The value has the shape of one alternative: its own errors, each at its own place.
        for sub in error.context or ():
            if sub.relative_schema_path and sub.relative_schema_path[0] == branch:
                yield from _translate(dt, mode, sub)
    else:
        yield Finding.of("schema", path, f"{name}: {error.message[:200]}", spec)


def _branch(dt: DataType, schema_path: tuple[str | int, ...]) -> list[str] | None:
    """Names of the properties a Mode branch forbids, from ``allOf/i/then/properties``."""
    if len(schema_path) != 4 or schema_path[0] != "allOf" or schema_path[2:] != ("then", "properties"):
        return None
    branch = dt.schema["allOf"][schema_path[1]]["then"]["properties"]
    return [prop for prop, sub in branch.items() if sub is False]


def schema_findings(
    dt: DataType, document: Mapping[str, Any], mode: str | None, *, exact: bool = False
) -> list[Finding]:
    """Why ``document`` does not conform: one finding per real problem, in schema order.
    With ``exact``, python-jsonschema alone decides where to look (see :func:`is_valid`)."""
    return list(iter_schema_findings(dt, document, mode, exact=exact))


def iter_schema_findings(
    dt: DataType, document: Mapping[str, Any], mode: str | None, *, exact: bool = False
) -> Iterator[Finding]:
    """:func:`schema_findings` one at a time, worked out only as they are asked for."""
    return _one_per_problem(_schema_findings(dt, document, mode, exact))


def _schema_findings(dt: DataType, document: Mapping[str, Any], mode: str | None, exact: bool) -> Iterator[Finding]:
    seen: set[tuple[str, tuple[str | int, ...]]] = set()
    explainer = _py_validator(dt) if exact else _explainer(dt, document)
    for error in explainer.iter_errors(document):
        for finding in _translate(dt, mode, error):
            # A forbidden property is only a problem when present; the branch lists them all.
            if finding.rule == "mode-forbidden" and finding.path[0] not in document:
                continue
            key = (finding.rule, finding.path)
            if key not in seen:
                seen.add(key)
                yield finding
    if not seen:
        yield from _rs_findings(dt, document)


# A value that may not be there at all, or is not even of its type: what else its schema
# says of it (its enum, its bounds, the properties inside it) is no second problem.
_COVERS = {"mode-forbidden": 0, "type": 1}


def _one_per_problem(findings: Iterable[Finding]) -> Iterator[Finding]:
    """``findings`` less those about a value another finding already rejects whole: inside
    a forbidden property, or at or inside a value of the wrong type.

    A finding may come before the one that covers it, so the first :data:`_JUDGED_WHOLE`
    are looked at together; past them (a report keeps far fewer, and only counts the rest
    up to a bound) the findings stream, each judged by the coverings seen so far: a million
    wrong items must not be held at once.

    >>> from pgm_explore.validation.findings import Finding
    >>> found = [Finding.of(r, p, "", "") for r, p in
    ...          [("type", ("Mode",)), ("enum", ("Mode",)), ("required", ("Failure", "Nature")),
    ...           ("mode-forbidden", ("Failure",)), ("type", ("Failure",)), ("range", ("TurnIndex",))]]
    >>> [(f.rule, f.json_path) for f in _one_per_problem(found)]
    [('type', '$.Mode'), ('mode-forbidden', '$.Failure'), ('range', '$.TurnIndex')]
    """
    stream = iter(findings)
    first = list(islice(stream, _JUDGED_WHOLE))
    covering: dict[tuple[str | int, ...], int] = {}
    for finding in first:
        _cover(covering, finding)
    for finding in first:
        if not _covered(covering, finding):
            yield finding
    for finding in stream:
        _cover(covering, finding)
        if not _covered(covering, finding):
            yield finding


_JUDGED_WHOLE = 4096


def _cover(covering: dict[tuple[str | int, ...], int], finding: Finding) -> None:
    rank = _COVERS.get(finding.rule)
    if rank is not None and rank < covering.get(finding.path, len(_COVERS)):
        covering[finding.path] = rank


def _covered(covering: dict[tuple[str | int, ...], int], finding: Finding) -> bool:
    if not covering:
        return False
    path = finding.path
    rank = _COVERS.get(finding.rule, len(_COVERS))
    return any(
        (cover := covering.get(path[:depth])) is not None and (depth < len(path) or cover < rank)
        for depth in range(len(path) + 1)
    )


def _rs_findings(dt: DataType, document: Any) -> Iterator[Finding]:
    """The compiled engine's own words, for the case where the two engines disagree."""
    try:
        errors = list(_rs_validator(dt).iter_errors(document))
    except (ValueError, TypeError, OverflowError) as exc:
        yield Finding.of("schema", (), f"The message could not be checked: {exc}", dt.name)
        return
    for error in errors:
        path = tuple(error.instance_path)
        yield Finding.of("schema", path, f"{_name(path, dt)}: {error.message[:200]}", spec_reference(dt, path))


# --- advisory checks (DECISIONS D9b) ---------------------------------------------------

# Open properties hold whatever their producer put there, and the bundled schemas
# already say what they require of their own arrays.
_NOT_CHECKED = frozenset({"SceneContext", "Intent", "Personality", "Spatial", "Temporal", "DataXMData"})


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
    props = {
        key: sub
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
    for path, value in _empty(_advisory_schema(dt), document, ()):
        if isinstance(value, int | float) and not isinstance(value, bool):
            yield Finding.of(
                "beyond-double",
                path,
                f"{_name(path, dt)} is {_shown(value)}, beyond the range of a double (about 1.8e308): "
                "pgm-explore reads the number written, but a reader that uses doubles (JavaScript, "
                "most JSON libraries) makes it infinite.",
                f"{spec_reference(dt, path)}; RFC 8259 section 6: numbers beyond IEEE 754 double "
                "precision may not be read alike",
            )
            continue
        what = "an empty string" if isinstance(value, str) else "an empty list"
        rule: RuleCode = "empty-value"
        yield Finding.of(
            rule,
            path,
            f"{_name(path, dt)} is {what}; the spec expects content here (leave it out if there is none).",
            f"{spec_reference(dt, path)} (DECISIONS D9b)",
        )


def _empty(
    node: Mapping[str, Any], value: Any, path: tuple[str | int, ...]
) -> Iterator[tuple[tuple[str | int, ...], Any]]:
    """(path, value) of each value that an advisory schema ``node`` (:func:`_advisory`) finds
    empty, or beyond a double's range."""
    if isinstance(value, int | float) and not isinstance(value, bool):
        if "maximum" in node and not -sys.float_info.max <= value <= sys.float_info.max:
            yield path, value
    elif isinstance(value, str):
        if not value and "minLength" in node:
            yield path, value
    elif isinstance(value, list):
        if not value and "minItems" in node:
            yield path, value
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
