"""The dialogue script format (``pgm-explore dialogue --script``): reading and checking a script.

A script is a JSON object ``{"steps": [STEP, ...]}`` (with an optional ``dialog_id`` and
``description``) or just the list of steps; the epilog of ``pgm-explore dialogue --help`` is
its documentation. Each step becomes a Request of the BKN-PRC, BKN-DAC or BKN-PAL data type
(their Kind values come from the schemas, :mod:`pgm_explore.spec`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, NamedTuple

from pgm_explore.errors import PgmExploreError
from pgm_explore.validation import InputProblem, loads

__all__ = ["Script", "ScriptError", "Step", "load_script"]

_PARTNER_TYPES = {"prc": "BKN-PRC", "dac": "BKN-DAC", "pal": "BKN-PAL"}
_STEP_KEYS = {
    "prc": {"partner", "kind", "question", "entity_ids"},
    "dac": {"partner", "kind", "question", "entity_ids", "fields", "statements", "retain", "release"},
    "pal": {"partner", "question", "constraints"},
}
_DAC_FIELDS = ("Terms", "Space")
_SCRIPT_KEYS = {"steps", "dialog_id", "description"}
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
    """Read and validate a dialogue script (see the epilog of ``dialogue``); raises ScriptError."""
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
    dialog_id = None
    if isinstance(document, dict):
        unknown = sorted(set(document) - _SCRIPT_KEYS)
        if unknown:
            raise ScriptError(f"unknown key(s) {', '.join(map(repr, unknown))}: a script has {sorted(_SCRIPT_KEYS)}")
        dialog_id = document.get("dialog_id")
        if dialog_id is not None and (not isinstance(dialog_id, str) or not dialog_id):
            raise ScriptError("dialog_id must be a non-empty string")
        steps = document.get("steps")
    else:
        steps = document
    if not isinstance(steps, list) or not steps:
        raise ScriptError('a script is a non-empty list of steps, or an object with one under "steps"')
    return Script(dialog_id, [_parse_step(index, step) for index, step in enumerate(steps)])


def _kinds(type_name: str) -> list[str]:
    from pgm_explore.spec import data_type

    return list(data_type(type_name).schema["properties"]["Kind"]["enum"])


def _parse_step(index: int, step: Any) -> Step:
    def fail(message: str) -> ScriptError:
        return ScriptError(f"step {index}: {message}")

    if not isinstance(step, dict):
        raise fail(f"a step is an object, not {type(step).__name__}")
    partner = step.get("partner")
    if partner not in _STEP_KEYS:
        raise fail(f"partner must be one of prc, dac, pal (got {partner!r})")
    unknown = sorted(set(step) - _STEP_KEYS[partner])
    if unknown:
        raise fail(f"unknown key(s) {', '.join(map(repr, unknown))} for partner {partner}")

    def strings(key: str) -> list[str] | None:
        value = step.get(key)
        if value is None:
            return None
        if not isinstance(value, list) or not value or not all(isinstance(v, str) and v for v in value):
            raise fail(f"{key} must be a non-empty list of non-empty strings")
        return value

    def mapping(key: str) -> dict[str, Any] | None:
        value = step.get(key)
        if value is None:
            return None
        if not isinstance(value, dict) or not value:
            raise fail(f"{key} must be a non-empty object")
        return value

    question = step.get("question")
    if question is not None and (not isinstance(question, str) or not question):
        raise fail("question must be a non-empty string")
    if partner == "pal":
        if question is None:
            raise fail("a pal step needs a question")
        return Step(index, partner, None, question, {"Constraints": mapping("constraints")})
    kind = step.get("kind")
    kinds = _kinds(_PARTNER_TYPES[partner])
    if kind not in kinds:
        raise fail(f"kind must be one of {', '.join(kinds)} (got {kind!r})")
    fields: dict[str, Any] = {"EntityIDs": strings("entity_ids")}
    if partner == "prc":
        return Step(index, partner, kind, question, fields)
    extra = mapping("fields") or {}
    if not set(extra) <= set(_DAC_FIELDS):
        raise fail(f"fields may hold {' and '.join(_DAC_FIELDS)} only (the other keys have keys of their own)")
    fields.update(extra)
    statements = strings("statements")
    retain = mapping("retain")
    release = strings("release")
    if (statements is not None) != (kind == "feasibility"):
        raise fail("statements are what a feasibility step checks: a feasibility step needs them, others take none")
    if (retain is not None or release is not None) != (kind == "commitment"):
        raise fail("a commitment step needs retain or release (or both), and only a commitment step takes them")
    if retain is not None and not all(isinstance(v, str) and v for v in retain.values()):
        raise fail("retain maps each CommitmentID to its Statement, a non-empty string")
    if statements is not None:
        fields["ProcessActions"] = [{"Step": i, "Statement": s} for i, s in enumerate(statements)]
    if retain is not None:
        fields["Commitments"] = [{"CommitmentID": c, "Statement": s} for c, s in retain.items()]
    fields["ReleasedCommitmentIDs"] = release
    return Step(index, partner, kind, question, fields)
