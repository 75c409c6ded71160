"""Why a message fails its schema, in plain words: python-jsonschema's errors translated.

python-jsonschema is asked only about the parts jsonschema-rs found wrong (:mod:`._schema`);
its errors become findings with a rule code, the JSON path, a sentence a person reads and
the spec clause (through the bundled schemas), one finding per problem.
"""

from __future__ import annotations

import difflib
from collections.abc import Callable, Iterable, Iterator, Mapping
from functools import lru_cache
from itertools import islice
from typing import TYPE_CHECKING, Any, NamedTuple

from pgm_explore.spec import (
    DATA_EXCHANGE_METADATA_ID,
    MODE_WORDS,
    SIMPLE_TIME_ID,
    DataType,
)
from pgm_explore.validation.findings import BUNDLED as _BUNDLED
from pgm_explore.validation.findings import Finding, clip, shown, spec_reference, written

if TYPE_CHECKING:
    from jsonschema import ValidationError

from pgm_explore.validation._schema import _explainer, _py_validator, _rs_validator

__all__ = ["closest", "iter_schema_findings", "schema_findings", "spec_reference"]

_TYPE_WORDS = {
    "string": "a string",
    "integer": "an integer",
    "number": "a number",
    "object": "an object",
    "array": "an array",
    "boolean": "true or false",
    "null": "null",
}
_DATA_TYPE_PATTERN = r"^[A-Z]{3}-[A-Z]{3}-V[0-9]{1,2}\.[0-9]{1,2}$"
"""Data Exchange Metadata's form of a data type or AI Module type (``$defs/Pattern``)."""
_SUGGESTED = 60
"""Names and values longer than this get no "Did you mean" (difflib is quadratic in them)."""


# --- explaining a failure -------------------------------------------------------------


def _name(path: tuple[str | int, ...], dt: DataType) -> str:
    """How a sentence about the value at ``path`` starts: its property, or an item of it.

    >>> from pgm_explore.spec import data_type
    >>> _name(("Commitments", 0), data_type("BKN-DAC")), _name((), data_type("BKN-DAC"))
    ('Each item of Commitments', 'A BKN-DAC message')
    """
    return _named(path, dt, ("A", "Each item of"))


def _owner(path: tuple[str | int, ...], dt: DataType) -> str:
    """How a sentence names, after its start, the object at ``path`` that holds a property.

    >>> from pgm_explore.spec import data_type
    >>> _owner(("Commitments", 0), data_type("BKN-DAC")), _owner((), data_type("BKN-DAC"))
    ('an item of Commitments', 'a BKN-DAC message')
    >>> _owner(("Failure",), data_type("BKN-DAC"))
    'Failure'
    """
    return _named(path, dt, ("a", "an item of"))


def _named(path: tuple[str | int, ...], dt: DataType, words: tuple[str, str]) -> str:
    article, item_of = words
    if not path:
        return f"{article} {dt.name} message"
    last = path[-1]
    if isinstance(last, int):
        parent = next((p for p in reversed(path) if isinstance(p, str)), "the array")
        return f"{item_of} {clip(parent)}"
    return clip(str(last))


# The bundled schemas by $id: what a value that must be one of them is called.
_BUNDLED_TYPES = {
    DATA_EXCHANGE_METADATA_ID: "a PTF V1.0 Data Exchange Metadata",
    SIMPLE_TIME_ID: "an OSD V1.5 Simple Time",
}


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
        return f"must be an object of one of the forms {' or '.join(forms)}, not {shown(error.instance)}"
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


# --- one function per keyword ------------------------------------------------------------
#
# As python-jsonschema checks each keyword with a function from a table (its ``VALIDATORS``),
# each keyword's errors are put in words by a function from :data:`_TRANSLATIONS`; a keyword
# without one gets the engine's own words (``schema``).


class _Failure(NamedTuple):
    """One error of python-jsonschema, with what every translation reads of it. (A tuple: one is
    made for each error, and a frozen dataclass took a microsecond to set its fields.)"""

    dt: DataType
    mode: str | None
    error: ValidationError
    path: tuple[str | int, ...]
    schema_path: tuple[str | int, ...]
    name: str
    """How a sentence about the value starts (:func:`_name`)."""

    @property
    def spec(self) -> str:
        """The spec clause behind the value (:func:`spec_reference`)."""
        return spec_reference(self.dt, self.path)

    @classmethod
    def of(cls, dt: DataType, mode: str | None, error: ValidationError) -> _Failure:
        path = tuple(error.absolute_path)
        return tuple.__new__(cls, (dt, mode, error, path, tuple(error.absolute_schema_path), _name(path, dt)))


Translation = Callable[[_Failure], Iterator[Finding]]
_TRANSLATIONS: dict[str | None, Translation] = {}
"""The translation of the errors of each keyword (``None``: a ``false`` sub-schema)."""


def _translates(*keywords: str | None) -> Callable[[Translation], Translation]:
    def register(function: Translation) -> Translation:
        for keyword in keywords:
            _TRANSLATIONS[keyword] = function
        return function

    return register


def _translate(dt: DataType, mode: str | None, error: ValidationError) -> Iterator[Finding]:
    keyword = error.validator
    translation = _TRANSLATIONS.get(keyword, _other) if keyword is None or isinstance(keyword, str) else _other
    return translation(_Failure.of(dt, mode, error))


def _other(f: _Failure) -> Iterator[Finding]:
    yield Finding.of("schema", f.path, f"{f.name}: {f.error.message[:200]}", data_type=f.dt)


@_translates("required")
def _required(f: _Failure) -> Iterator[Finding]:
    # python-jsonschema yields one error per missing property; naming each one at
    # its own path lets a form put the message beside the empty field.
    dt, path = f.dt, f.path
    instance = f.error.instance if isinstance(f.error.instance, dict) else {}
    for prop in _value(f.error):
        if prop in instance:
            continue
        where = (*path, prop)
        if not path and "then" in f.schema_path and (word := MODE_WORDS.get(f.mode or "")):
            # Kind and RequestID are asked for by Functional Requirements of their own.
            own = {"Kind": "Request", "RequestID": "Correlation"}.get(prop)
            yield Finding.of(
                "mode-required",
                where,
                f"{prop} is missing: a {dt.name} {word} must state its {prop}.",
                None if own is None else f"{dt.requirement(own)} (DECISIONS D7)",
                data_type=dt,
            )
        elif not path and prop == "DataXMData":
            yield Finding.of(
                "required",
                where,
                f"DataXMData is missing: every {dt.name} message shall include its Data Exchange Metadata.",
                f"{dt.requirement('Metadata')} (DECISIONS D6)",  # (the Functional Requirement that asks for it)
            )
        elif "then" in f.schema_path:
            accuracy = instance.get("AccuracyMode")
            why = (
                f'AccuracyMode is "{clip(accuracy)}", which requires it'
                if isinstance(accuracy, str)
                else "a Simple Time segment without AccuracyMode must carry AccuracyPlusMinus, "
                "AccuracyStartPlusMinus and AccuracyEndPlusMinus (a quirk of the published schema)"
            )
            # The clause of the Simple Time segment whose AccuracyMode asks for it.
            yield Finding.of("required", where, f"{prop} is missing: {why}.", f.spec)
        else:
            yield Finding.of(
                "required",
                where,
                f"{prop} is missing: it is required in {_owner(path, dt)}.",
                data_type=dt,
            )


@_translates(None)
def _false(f: _Failure) -> Iterator[Finding]:
    # A `false` sub-schema: only the Mode branches have them. python-jsonschema
    # reports these without the property's path, so read the names off the branch.
    branch = _branch(f.dt, f.schema_path)
    if branch is None:
        yield Finding.of("schema", f.path, f.error.message[:200], data_type=f.dt)
        return
    other = "RS" if f.mode == "RQ" else "RQ"
    for prop in branch:
        yield Finding.of(
            "mode-forbidden",
            (prop,),
            f"{prop} is a {MODE_WORDS[other]} property and may not appear in a {MODE_WORDS.get(f.mode or '', '')}.",
            data_type=f.dt,
        )


@_translates("additionalProperties")
def _additional_properties(f: _Failure) -> Iterator[Finding]:
    path = f.path
    properties = _schema_of(f.error).get("properties", {})
    for extra in _instance(f.error):
        if extra in properties:
            continue
        declared = list(properties)
        yield Finding.of(
            "unknown-property",
            (*path, extra),
            f"{clip(extra)} is not a property of {_owner(path, f.dt)}.{_close(extra, declared)}",
            # At the top level no row holds it: the clause is the type's tables as a whole.
            None if path else f"{f.dt.name} Tables (DECISIONS D3)",
            data_type=f.dt,
        )


@_translates("type")
def _type(f: _Failure) -> Iterator[Finding]:
    error, path = f.error, f.path
    spec = None
    expected = _value(error) if isinstance(_value(error), list) else [_value(error)]
    words = " or ".join(_TYPE_WORDS.get(t, t) for t in expected)
    schema = _schema_of(error)
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
            # The row holding a whole bundled type: the clause names that type's standard too.
            spec = f"{f.spec}: {_BUNDLED[path[0]][0]} (DECISIONS {_BUNDLED[path[0]][1]})"
    yield Finding.of("type", path, f"{f.name} must be {words}, not {shown(error.instance)}.", spec, data_type=f.dt)


@_translates("enum")
def _enum(f: _Failure) -> Iterator[Finding]:
    instance = f.error.instance
    options = [str(o) for o in _value(f.error)]
    hint = _close(instance, options) if isinstance(instance, str) else ""
    yield Finding.of(
        "enum",
        f.path,
        f"{f.name} must be one of {', '.join(options)}; {shown(instance)} is not allowed.{hint}",
        data_type=f.dt,
    )


@_translates("const")
def _const(f: _Failure) -> Iterator[Finding]:
    yield Finding.of(
        "const", f.path, f'{f.name} must be "{_value(f.error)}", not {shown(f.error.instance)}.', data_type=f.dt
    )


_BOUNDS = {
    "minimum": "at least",
    "maximum": "at most",
    "exclusiveMinimum": "more than",
    "exclusiveMaximum": "less than",
}


@_translates(*_BOUNDS)
def _range(f: _Failure) -> Iterator[Finding]:
    bound = _BOUNDS[str(f.error.validator)]
    yield Finding.of(
        "range", f.path, f"{f.name} must be {bound} {_value(f.error)}, not {written(f.error.instance)}.", data_type=f.dt
    )


@_translates("maxLength")
def _max_length(f: _Failure) -> Iterator[Finding]:
    yield Finding.of(
        "max-length",
        f.path,
        f"{f.name} has {len(_instance(f.error)):,} characters; at most {_value(f.error):,} are allowed.",
        data_type=f.dt,
    )


@_translates("pattern")
def _pattern(f: _Failure) -> Iterator[Finding]:
    # The one pattern of the bundled schemas, in words; any other as it is written.
    pattern = _value(f.error)
    form = (
        "have the form AAA-BBB-Vx.y (three capital letters, a hyphen, three capital letters, "
        "a hyphen, V and a version), for example PGM-KDA-V1.0"
        if pattern == _DATA_TYPE_PATTERN
        else f"match the pattern {pattern}"
    )
    yield Finding.of("pattern", f.path, f"{f.name} must {form}; {shown(f.error.instance)} does not.", data_type=f.dt)


@_translates("minItems")
def _min_items(f: _Failure) -> Iterator[Finding]:
    count = _value(f.error)
    yield Finding.of(
        "min-items", f.path, f"{f.name} must have at least {count} item{'s' if count != 1 else ''}.", data_type=f.dt
    )


@_translates("oneOf", "anyOf")
def _alternatives(f: _Failure) -> Iterator[Finding]:
    branch = _shaped_branch(f.error)
    if branch is None:
        yield Finding.of("one-of", f.path, f"{f.name} {_one_of(f.error)}.", data_type=f.dt)
        return
    # The value has the shape of one alternative: its own errors, each at its own place.
    for sub in f.error.context or ():
        if sub.relative_schema_path and sub.relative_schema_path[0] == branch:
            yield from _translate(f.dt, f.mode, sub)


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
        yield Finding.of("schema", (), f"The message could not be checked: {exc}", data_type=dt)
        return
    for error in errors:
        path = tuple(error.instance_path)
        yield Finding.of("schema", path, f"{_name(path, dt)}: {error.message[:200]}", data_type=dt)
