"""The dialogue script format (``pgm-explore dialogue --script``): reading and checking a script.

A script is a JSON object ``{"steps": [STEP, ...]}`` (with an optional ``dialog_id`` and
``description``) or just the list of steps; the epilog of ``pgm-explore dialogue --help``
documents it for people, and ``dialogue-script.schema.json`` (JSON Schema 2020-12, next to
this module) for programs. The schema takes the Kind values of BKN-PRC and BKN-DAC from their
schemas (:func:`pgm_explore.spec.schema_resources`, by ``$ref``), so the format follows the
spec by itself.

The schema also carries what a person is told about a script that fails it: each sub-schema's
``x-message``, the deepest one on the path of the first error python-jsonschema reports. The
errors come in the schema's order, which is the order the checks were made in by hand before:
the script's keys, its ``dialog_id``, then each step's partner, keys, question, kind, lists and
objects, and the rules between them.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from functools import cache
from importlib.resources import files
from typing import TYPE_CHECKING, Any, NamedTuple

from pgm_explore.errors import PgmExploreError
from pgm_explore.spec import schema_resources
from pgm_explore.validation import InputProblem, loads

if TYPE_CHECKING:
    from jsonschema import ValidationError
    from jsonschema.protocols import Validator
    from referencing import Registry

__all__ = ["SCHEMA", "Script", "ScriptError", "Step", "load_script"]

SCHEMA = "dialogue-script.schema.json"
"""The schema's file, in this package."""

_SCRIPT_BYTES = 16 * 1024 * 1024  # a script is a few kilobytes: this only bounds what is read


class ScriptError(PgmExploreError, ValueError):
    """A dialogue script that cannot be run; the message names the step."""


@dataclass(frozen=True)
class Step:
    index: int
    partner: str
    kind: str | None
    question: str | None
    fields: dict[str, Any]
    """Request fields other than Kind and Question, as the client passes them (None left out)."""


class Script(NamedTuple):
    dialog_id: str | None
    steps: list[Step]


def load_script(path: str) -> Script:
    """Read and validate a dialogue script; raises :class:`ScriptError`."""
    try:
        with open(path, "rb") as handle:
            data = handle.read(_SCRIPT_BYTES + 1)
        if len(data) > _SCRIPT_BYTES:
            raise ScriptError(f"the script {path} is larger than {_SCRIPT_BYTES:,} bytes: no script needs that much")
        # The reader of messages: the same findings for bad bytes, NaN, deep nesting and a lone
        # surrogate ("\ud800"), which would end up in a Request that no file can hold.
        document = loads(data)
    except OSError as exc:
        raise ScriptError(f"cannot read the script {path}: {exc.strerror or exc}") from exc
    except InputProblem as problem:
        finding = problem.finding
        where = f" (line {finding.line}, column {finding.column})" if finding.line is not None else ""
        raise ScriptError(f"the script {path} is not JSON{where}: {finding.message}") from None
    error = next(_validator().iter_errors(document), None)
    if error is not None:
        raise ScriptError(_message(error))
    if isinstance(document, dict):
        return Script(document.get("dialog_id"), [_step(i, s) for i, s in enumerate(document["steps"])])
    return Script(None, [_step(i, s) for i, s in enumerate(document)])


def _step(index: int, step: Mapping[str, Any]) -> Step:
    """A valid step as the Request fields the client's helpers take."""
    partner, question = step["partner"], step.get("question")
    if partner == "pal":
        return Step(index, partner, None, question, {"Constraints": step.get("constraints")})
    fields: dict[str, Any] = {"EntityIDs": step.get("entity_ids")}
    if partner == "prc":
        return Step(index, partner, step["kind"], question, fields)
    fields.update(step.get("fields") or {})
    if (statements := step.get("statements")) is not None:
        fields["ProcessActions"] = [{"Step": i, "Statement": s} for i, s in enumerate(statements)]
    if (retain := step.get("retain")) is not None:
        fields["Commitments"] = [{"CommitmentID": c, "Statement": s} for c, s in retain.items()]
    fields["ReleasedCommitmentIDs"] = step.get("release")
    return Step(index, partner, step["kind"], question, fields)


# --- the schema and its messages ----------------------------------------------------------


@cache
def _schema() -> dict[str, Any]:
    schema: dict[str, Any] = json.loads(files(__package__).joinpath(SCHEMA).read_text(encoding="utf-8"))
    return schema


@cache
def _registry() -> Registry[Any]:
    # Imported here: python-jsonschema is slow to import, and only --script needs it.
    from referencing import Registry, Resource
    from referencing.jsonschema import DRAFT202012

    resources = [(uri, Resource.from_contents(contents, DRAFT202012)) for uri, contents in schema_resources().items()]
    schema = _schema()
    registry: Registry[Any] = Registry().with_resources(
        [*resources, (schema["$id"], DRAFT202012.create_resource(schema))]
    )
    return registry


@cache
def _validator() -> Validator:
    from jsonschema import Draft202012Validator

    return Draft202012Validator(_schema(), registry=_registry())


def _resolved(schema: Any) -> Any:
    """``schema``, or what its ``$ref`` points at (python-jsonschema's error paths skip ``$ref``)."""
    while isinstance(schema, dict) and "$ref" in schema:
        schema = _registry().resolver(_schema()["$id"]).lookup(schema["$ref"]).contents
    return schema


def _message_schema(error: ValidationError) -> dict[str, Any]:
    """The deepest sub-schema with an ``x-message`` on the error's schema path; for a missing
    property, the property's own sub-schema counts as the deepest step of that path."""
    found: dict[str, Any] = _schema()

    def note(schema: Any) -> None:
        nonlocal found
        if isinstance(schema, dict) and "x-message" in schema:
            found = schema

    path: list[str | int] = list(error.absolute_schema_path)
    if error.validator == "required":
        path = [*path[:-1], "properties", _missing(error)]
    here: Any = found
    for part in path:
        if isinstance(here, dict) and part not in here and "$ref" in here:
            here = _resolved(here)
            note(here)
        inside = isinstance(here, dict) and isinstance(part, str) and part in here
        if not (inside or (isinstance(here, list) and isinstance(part, int))):
            break  # a keyword's value (an enum, a type): no sub-schema below
        here = here[part]
        note(here)
    else:
        if isinstance(here, dict) and "x-message" not in here:
            note(_resolved(here))  # a missing property whose sub-schema is a $ref
    return found


def _missing(error: ValidationError) -> str:
    # (Any: the stubs type these as "Any | Unset", set only while the error is being made.)
    required: Any = error.validator_value
    instance: Any = error.instance
    return next(name for name in required if name not in instance)


class _Fields(dict[str, Any]):
    """What an ``x-message`` may name, worked out when it does."""

    def __init__(self, error: ValidationError, schema: Mapping[str, Any]) -> None:
        super().__init__()
        self.error, self.schema = error, schema

    def __missing__(self, name: str) -> Any:
        error = self.error
        instance: Any = error.instance
        holder: Any = error.schema  # the sub-schema whose keyword failed
        if name == "got":  # the value at fault; a missing one is None, as step.get() gave
            return None if error.validator == "required" else instance
        if name == "key":
            if error.validator == "required":
                return _missing(error)
            return next(part for part in reversed(error.path) if isinstance(part, str))
        if name == "type":
            return type(instance).__name__
        if name == "enum":
            return ", ".join(_resolved(self.schema)["enum"])
        if name == "unknown":
            return ", ".join(map(repr, sorted(set(instance) - set(holder["properties"]))))
        if name == "known":
            return str(sorted(holder["properties"]))
        if name == "partner":
            return instance.get("partner")
        raise KeyError(name)


def _message(error: ValidationError) -> str:
    """What the person is told: the ``x-message``, filled in, after the step's index."""
    schema = _message_schema(error)
    text: str = schema["x-message"].format_map(_Fields(error, schema))
    where = list(error.path)
    if where and where[0] == "steps":
        where = where[1:]
    return f"step {where[0]}: {text}" if where and isinstance(where[0], int) else text
