"""Generated documents: for each one, the models accept it exactly when the schema does.

For each of the seven message kinds (PC Prompt, and Request and Response of BKN-PRC, BKN-DAC,
BKN-PAL) hypothesis-jsonschema draws ``VALID_PER_KIND`` documents from the bundled schema, and
each document is mutated ``MUTANTS_PER_VALID`` times (a key dropped or added, a value replaced
by one of another type, a number made fractional, boolean or textual, Mode swapped, an array
emptied, a string made too long, ...): 7 x 150 x (1 + 2) = 3,150 documents. The verdict of the
schema (jsonschema-rs, the project's verdict) and of the models must agree on every one, and
every accepted document must dump back to itself exactly.

The documents are drawn from a copy of the schema with everything inlined, narrowed to one
mode, with Simple Time's if/then rewritten as an equivalent anyOf and with size bounds on
strings, arrays and open objects (hypothesis-jsonschema handles none of these well or fast);
the verdict always comes from the real schema.
"""

from __future__ import annotations

import copy
import json
from collections import Counter
from collections.abc import Iterator
from typing import Any

import jsonschema_rs
import pytest
from hypothesis import HealthCheck, Phase, assume, given, settings
from hypothesis import strategies as st
from pydantic import ValidationError

from pgm_explore.models import adapter_for, parse_message
from pgm_explore.spec import DATA_TYPES, HEADERS, data_type, schema_resources

pytestmark = pytest.mark.slow

VALID_PER_KIND = 150
MUTANTS_PER_VALID = 2
KINDS = [("PC Prompt", None)] + [(t, m) for t in ("BKN-PRC", "BKN-DAC", "BKN-PAL") for m in ("RQ", "RS")]
SETTINGS = settings(
    max_examples=VALID_PER_KIND,
    deadline=None,
    derandomize=True,  # the same documents on every run and every machine
    database=None,
    # No shrinking: every example costs a draw of a large document, so shrinking a failure
    # takes minutes; the assertion messages show the failing document and both verdicts.
    phases=[Phase.explicit, Phase.generate],
    suppress_health_check=[
        HealthCheck.too_slow,
        HealthCheck.data_too_large,
        HealthCheck.filter_too_much,
        HealthCheck.large_base_example,
    ],
)

_REGISTRY = jsonschema_rs.Registry(list(schema_resources().items()))
_VALIDATORS = {dt.name: jsonschema_rs.validator_for(dict(dt.schema), registry=_REGISTRY) for dt in DATA_TYPES}


# --- hypothesis-jsonschema speed ------------------------------------------------------------------
# (pyproject pins hypothesis below 6.170.10, whose `many` no longer has the `more()` that
# hypothesis-jsonschema 0.23.1 calls.)


@pytest.fixture(scope="module", autouse=True)
def _memoised_strategies() -> Iterator[None]:
    import hypothesis_jsonschema._from_schema as from_schema_module

    build = from_schema_module.__dict__["__from_schema"]
    built: dict[tuple[str, int, int], tuple[Any, ...]] = {}

    def memoised(schema: Any, *, alphabet: Any, custom_formats: Any) -> Any:
        # hypothesis-jsonschema rebuilds (and re-canonicalises) the strategy of every
        # sub-schema at every draw of an object; building each once is ten times faster and
        # draws the same documents. The value keeps alphabet and formats alive, so ids stay unique.
        key = (from_schema_module.encode_canonical_json(schema), id(alphabet), id(custom_formats))
        if key not in built:
            built[key] = (build(schema, alphabet=alphabet, custom_formats=custom_formats), alphabet, custom_formats)
        return built[key][0]

    with pytest.MonkeyPatch.context() as patch:
        patch.setitem(from_schema_module.__dict__, "__from_schema", memoised)
        yield


# --- the generation schema -------------------------------------------------------------------------

# Simple Time's two if/then blocks, as the three cases they allow (see test_models.py).
_SEGMENT_CASES = [
    {"required": ["AccuracyMode", "AccuracyPlusMinus"], "properties": {"AccuracyMode": {"const": "single"}}},
    {
        "required": ["AccuracyMode", "AccuracyStartPlusMinus", "AccuracyEndPlusMinus"],
        "properties": {"AccuracyMode": {"const": "separate"}},
    },
    {
        "required": ["AccuracyPlusMinus", "AccuracyStartPlusMinus", "AccuracyEndPlusMinus"],
        "properties": {"AccuracyMode": False},
    },
]
_ANNOTATIONS = {"description", "title", "$comment", "$schema", "$id", "$defs", "default"}


def _for_generation(node: Any, bounded: bool) -> Any:
    if isinstance(node, list):
        return [_for_generation(item, bounded) for item in node]
    if not isinstance(node, dict):
        return node
    out = {k: _for_generation(v, bounded) for k, v in node.items() if k not in _ANNOTATIONS}
    if any("AccuracyMode" in json.dumps(branch.get("if", {})) for branch in out.get("allOf", [])):
        del out["allOf"]
        out["anyOf"] = copy.deepcopy(_SEGMENT_CASES)
    kinds = out.get("type", []) if bounded else []
    kinds = [kinds] if isinstance(kinds, str) else kinds
    # Size bounds only narrow what is drawn; they keep documents small enough to draw quickly.
    if "string" in kinds and not {"pattern", "enum", "const"} & set(out):
        out["maxLength"] = min(out.get("maxLength", 32), 32)
    if "array" in kinds:
        out["maxItems"] = 3
    if "object" in kinds and "properties" not in out:
        out["maxProperties"] = 3
    return out


def generation_schema(type_name: str, mode: str | None, bounded: bool = True) -> dict[str, Any]:
    schema = jsonschema_rs.dereference(dict(data_type(type_name).schema), registry=_REGISTRY)
    if mode is not None:
        # The mode's if/then, applied: its required properties, none of the other mode's.
        for branch in schema.pop("allOf"):
            if branch["if"]["properties"]["Mode"]["const"] == mode:
                for name in branch["then"].get("properties", {}):
                    del schema["properties"][name]
                schema["required"] = [*schema["required"], *branch["then"].get("required", [])]
        schema["properties"]["Mode"] = {"const": mode}
    return _for_generation(schema, bounded)


# --- mutations -------------------------------------------------------------------------------------

_ODD_VALUES: list[Any] = [
    None,
    True,
    False,
    0,
    1,
    -1,
    0.5,
    1.0,
    2.0,
    -1.0,
    1.5,
    256,
    10**20,
    "",
    "1",
    "RQ",
    "RS",
    "PGM-KDA-V1.0",
    "x" * 2049,
    [],
    ["x"],
    [1],
    [{}],
    {},
    {"AIMID": "x"},
    {"Unknown": 1},
]
_OPERATIONS = ["drop", "add", "replace", "number", "mode", "array", "string"]


def _nodes(value: Any, path: tuple[Any, ...] = ()) -> Iterator[tuple[tuple[Any, ...], Any]]:
    yield path, value
    if isinstance(value, dict):
        for key, item in value.items():
            yield from _nodes(item, (*path, key))
    elif isinstance(value, list):
        for index, item in enumerate(value):
            yield from _nodes(item, (*path, index))


def _set(doc: Any, path: tuple[Any, ...], value: Any) -> None:
    for key in path[:-1]:
        doc = doc[key]
    doc[path[-1]] = value


def _property_names(schema: Any) -> set[str]:
    return {n for path, _ in _nodes(schema) if len(path) > 1 and path[-2] == "properties" for n in [path[-1]]}


_NAMES = {dt.name: sorted(_property_names(generation_schema(dt.name, None)) | {"Unknown"}) for dt in DATA_TYPES}


def _number_variants(value: int | float) -> list[Any]:
    return [float(value), value + 0.5, -1, -1.0, str(value), value == 0, None, [value], 2**64, value * 1000]


@st.composite
def mutants(draw: st.DrawFn, original: dict[str, Any], type_name: str, operation: str) -> tuple[str, Any]:
    doc = copy.deepcopy(original)
    nodes = list(_nodes(doc))

    def pick(candidates: list[Any]) -> Any:
        return draw(st.sampled_from(candidates))

    objects = [(p, v) for p, v in nodes if isinstance(v, dict) and v]
    numbers = [(p, v) for p, v in nodes if isinstance(v, int | float) and not isinstance(v, bool)]
    arrays = [(p, v) for p, v in nodes if isinstance(v, list)]
    strings = [(p, v) for p, v in nodes if isinstance(v, str)]
    if operation == "drop" and objects:
        path, value = pick(objects)
        del value[pick(sorted(value))]
    elif operation == "number" and numbers:
        path, value = pick(numbers)
        _set(doc, path, pick(_number_variants(value)))
    elif operation == "mode":
        change = pick(["swap", "drop", "header"])
        if change == "swap" and "Mode" in doc:
            doc["Mode"] = {"RQ": "RS", "RS": "RQ"}.get(doc["Mode"], "RQ")
        elif change == "drop":
            doc.pop("Mode" if "Mode" in doc else "Header")
        else:
            doc["Header"] = pick(sorted(HEADERS))
    elif operation == "array" and arrays:
        path, value = pick(arrays)
        change = pick(["empty", "repeat", "odd"])
        _set(
            doc,
            path,
            [] if change == "empty" else [*value, value[0] if value and change == "repeat" else pick(_ODD_VALUES)],
        )
    elif operation == "string" and strings:
        path, value = pick(strings)
        _set(doc, path, pick([value + "\n", value.upper(), "y" * 2049, 7, [value], {}]))
    elif operation == "replace":
        path, _ = pick(nodes[1:])
        _set(doc, path, copy.deepcopy(pick([v for _, v in nodes[1:40]] + _ODD_VALUES)))
    else:
        operation = "add"
        path, value = pick([(p, v) for p, v in nodes if isinstance(v, dict)])
        value[pick(_NAMES[type_name])] = copy.deepcopy(pick(_ODD_VALUES + [v for _, v in nodes[1:40]]))
    return operation, doc


# --- the check -------------------------------------------------------------------------------------


def _exact(doc: Any) -> str:
    # 1 == 1.0 == True in Python; JSON text tells them apart.
    return json.dumps(doc, sort_keys=True)


def verdicts_agree(type_name: str, doc: Any) -> bool:
    """Assert that the models and the schema agree on ``doc``; return the verdict."""
    schema_ok = _VALIDATORS[type_name].is_valid(doc)
    try:
        message = adapter_for(type_name).validate_python(doc)
    except ValidationError as error:
        assert not schema_ok, f"the models reject what the schema accepts:\n{error}\n{_exact(doc)[:3000]}"
    else:
        why = next(iter(_VALIDATORS[type_name].iter_errors(doc)), None)
        assert schema_ok, f"the models accept what the schema rejects ({why}):\n{_exact(doc)[:3000]}"
        assert _exact(message.model_dump(mode="json", exclude_unset=True)) == _exact(doc)
    # The top-level union agrees with the schema its Header names.
    named = HEADERS.get(doc.get("Header")) if isinstance(doc, dict) and isinstance(doc.get("Header"), str) else None
    try:
        parse_message(doc)
        parsed = True
    except ValidationError:
        parsed = False
    assert parsed == (named is not None and _VALIDATORS[named.name].is_valid(doc))
    return schema_ok


def _is_json(value: Any) -> bool:
    try:
        json.dumps(value, allow_nan=False)
    except ValueError:
        return False
    return True


@pytest.mark.parametrize(("type_name", "mode"), KINDS)
def test_models_and_schema_agree_on_generated_documents(type_name: str, mode: str | None) -> None:
    from hypothesis_jsonschema import from_schema

    tally: Counter[str] = Counter()
    distinct: set[str] = set()

    @SETTINGS
    @given(doc=from_schema(generation_schema(type_name, mode)), data=st.data())
    def run(doc: dict[str, Any], data: st.DataObject) -> None:
        # hypothesis-jsonschema fills open objects ({"type": "object"}) with any Python value,
        # infinities included; those are not JSON, so they cannot round-trip as JSON.
        assume(_is_json(doc))
        distinct.add(_exact(doc))
        tally["valid documents"] += 1
        tally["valid documents accepted"] += verdicts_agree(type_name, doc)
        for index in range(MUTANTS_PER_VALID):
            # Spread the operations evenly (hypothesis would favour the first one), with a choice
            # that depends on the document only, as hypothesis requires of a strategy.
            planned = _OPERATIONS[(len(_exact(doc)) + index) % len(_OPERATIONS)]
            operation, mutant = data.draw(mutants(doc, type_name, planned), label="mutant")
            tally["mutants"] += 1
            tally[f"mutants ({operation})"] += 1
            tally[f"mutants rejected ({operation})"] += not verdicts_agree(type_name, mutant)

    run()
    assert tally["valid documents"] >= VALID_PER_KIND
    assert len(distinct) >= 0.9 * VALID_PER_KIND, "hypothesis drew the same documents over and over"
    # The generation schema only narrows the real one: what it draws conforms.
    assert tally["valid documents accepted"] >= 0.95 * tally["valid documents"], tally
    assert tally["mutants"] >= MUTANTS_PER_VALID * VALID_PER_KIND
    rejected = sum(n for key, n in tally.items() if key.startswith("mutants rejected"))
    assert 0.3 * tally["mutants"] <= rejected < tally["mutants"], tally


@pytest.mark.parametrize(("type_name", "mode"), KINDS)
def test_generation_schema_keeps_the_meaning_of_the_schema(type_name: str, mode: str | None) -> None:
    # Without its size bounds, the generation schema is the schema restricted to one mode:
    # it accepts the valid examples of that mode and no document of the other mode.
    from pathlib import Path

    schema = generation_schema(type_name, mode, bounded=False)
    assert "allOf" not in json.dumps(schema)
    validator = jsonschema_rs.validator_for(schema)
    folder = type_name.lower().replace(" ", "-")
    root = Path(__file__).resolve().parents[1] / "data" / "examples" / folder / "valid"
    examples = [json.loads(p.read_text(encoding="utf-8")) for p in sorted(root.glob("*.json"))]
    for doc in examples:
        assert validator.is_valid(doc) == (doc.get("Mode") == mode), doc.get("QueryID")
    if not any(doc.get("Mode") == mode for doc in examples):
        pytest.skip(f"no valid {type_name} {mode} example yet")
