"""The pydantic models (layer 2) accept exactly what the bundled JSON Schemas accept.

Each case states the expected verdict and checks it three ways: jsonschema-rs (the project's
verdict), python-jsonschema (the explainer) and the model. Descriptions and structure are held
to the spec tables and the schemas, not to copies of them.
"""

from __future__ import annotations

import copy
import json
import time
import types
import typing
from pathlib import Path
from typing import Any

import jsonschema
import jsonschema_rs
import pytest
from pydantic import BaseModel, ValidationError

import pgm_explore.models as models
from pgm_explore import spec
from pgm_explore.models import (
    BKNDACRequest,
    BKNDACResponse,
    BKNPALRequest,
    BKNPALResponse,
    BKNPRCRequest,
    BKNPRCResponse,
    DataExchangeMetadata,
    PCPrompt,
    SimpleTime,
    adapter_for,
    bkn_dac,
    bkn_pal,
    bkn_prc,
    common,
    data_exchange_metadata,
    model_for,
    parse_message,
    pc_prompt,
    simple_time_now,
)
from pgm_explore.models._bkn import BKNMessage
from pgm_explore.spec import DATA_TYPES, data_type, registry, schema_resources
from pgm_explore.spec.process_actions import PAStatusCode
from pgm_explore.validation import loads

ROOT = Path(__file__).resolve().parents[1]
SIMPLE_TIME = common.SIMPLE_TIME_ID
DEM = common.DATA_EXCHANGE_METADATA_ID
KINDS = [("PC Prompt", None)] + [(t, m) for t in ("BKN-PRC", "BKN-DAC", "BKN-PAL") for m in ("RQ", "RS")]
CLASSES: dict[tuple[str, str | None], type[BaseModel]] = {
    ("PC Prompt", None): PCPrompt,
    ("BKN-PRC", "RQ"): BKNPRCRequest,
    ("BKN-PRC", "RS"): BKNPRCResponse,
    ("BKN-DAC", "RQ"): BKNDACRequest,
    ("BKN-DAC", "RS"): BKNDACResponse,
    ("BKN-PAL", "RQ"): BKNPALRequest,
    ("BKN-PAL", "RS"): BKNPALResponse,
}
MODULES = [common, pc_prompt, bkn_prc, bkn_dac, bkn_pal]

_RS_REGISTRY = jsonschema_rs.Registry(list(schema_resources().items()))
_PY_REGISTRY = registry()


def _schema_id(name: str) -> str:
    return name if name.startswith("https://") else data_type(name).schema_id


def schema_verdicts(name: str, doc: Any) -> tuple[bool, bool]:
    """(jsonschema-rs, python-jsonschema) verdicts for a data type name or a schema ``$id``."""
    schema = schema_resources()[_schema_id(name)]
    rs = jsonschema_rs.validator_for(schema, registry=_RS_REGISTRY).is_valid(doc)
    py = jsonschema.Draft202012Validator(schema, registry=_PY_REGISTRY).is_valid(doc)
    return rs, py


def model_accepts(name: str, doc: Any) -> bool:
    model: Any = {SIMPLE_TIME: SimpleTime, DEM: DataExchangeMetadata}.get(name)
    try:
        if model is not None:
            model.model_validate(doc)
        else:
            adapter_for(name).validate_python(doc)
    except ValidationError:
        return False
    return True


def check(name: str, doc: Any, expected: bool) -> None:
    rs, py = schema_verdicts(name, doc)
    assert (rs, py, model_accepts(name, doc)) == (expected, expected, expected)


def minimal(type_name: str, mode: str | None) -> dict[str, Any]:
    """The smallest conforming message, built with the models' own helpers."""
    spec = data_type(type_name)
    doc: dict[str, Any] = {"Header": spec.header}
    if mode:
        doc["Mode"] = mode
    doc |= {
        "MInstance": "M-1",
        "UEnvironment": "U-1",
        "SessionID": "S-1",
        spec.id_field: "X-1",
        spec.time_field: simple_time_now(time_id="T-1"),
        "DialogID": "D-1",
    }
    if spec.has_modes:
        doc["TurnIndex"] = 0
    else:
        doc["Prompt"] = "Show me the lanterns."
    if mode == "RQ" and type_name != "BKN-PAL":
        doc["Kind"] = "clarification"
    if mode == "RS":
        doc |= {"RequestID": "X-0", "Outcome": "answered"}
    doc["DataXMData"] = data_exchange_metadata(type_name, mode, "X-1")
    return doc


def with_value(doc: dict[str, Any], path: tuple[str | int, ...], value: Any) -> dict[str, Any]:
    """A copy of ``doc`` with ``value`` at ``path``; missing objects on the way are created."""
    out = copy.deepcopy(doc)
    node: Any = out
    for key in path[:-1]:
        if isinstance(key, str) and key not in node:
            node[key] = {}
        node = node[key]
    node[path[-1]] = value
    return out


# --- minimal messages, discrimination, helpers -------------------------------------------------


@pytest.mark.parametrize(("type_name", "mode"), KINDS)
def test_minimal_message_conforms_and_round_trips(type_name: str, mode: str | None) -> None:
    doc = minimal(type_name, mode)
    check(type_name, doc, True)
    message = parse_message(doc)
    assert type(message) is CLASSES[(type_name, mode)] is model_for(type_name, mode)
    assert message.model_dump(mode="json", exclude_unset=True) == doc


@pytest.mark.parametrize(("type_name", "mode"), [k for k in KINDS if k[1]])
def test_mode_selects_the_class(type_name: str, mode: str) -> None:
    doc = minimal(type_name, mode)
    assert type(adapter_for(type_name).validate_python(doc)) is CLASSES[(type_name, mode)]
    for bad_mode in ("rq", "RQRS", "", 1, None):
        check(type_name, {**doc, "Mode": bad_mode}, False)
    check(type_name, {k: v for k, v in doc.items() if k != "Mode"}, False)


@pytest.mark.parametrize(("type_name", "mode"), [k for k in KINDS if k[1]])
def test_other_mode_properties_are_forbidden(type_name: str, mode: str) -> None:
    spec = data_type(type_name)
    other = "RS" if mode == "RQ" else "RQ"
    sample = minimal(type_name, other)
    for label in spec.mode_properties(other):  # type: ignore[arg-type]
        doc = {**minimal(type_name, mode), label: sample.get(label, "x")}
        check(type_name, doc, False)
        with pytest.raises(ValidationError) as raised:
            model_for(type_name, mode).model_validate(doc)
        assert {"type": "extra_forbidden", "loc": (label,)}.items() <= raised.value.errors()[0].items()


@pytest.mark.parametrize(
    ("type_name", "mode", "field", "required"),
    [
        ("BKN-PRC", "RQ", "Kind", True),
        ("BKN-DAC", "RQ", "Kind", True),
        *[(t, "RS", f, True) for t in ("BKN-PRC", "BKN-DAC", "BKN-PAL") for f in ("RequestID", "Outcome")],
        *[(t, m, "DataXMData", True) for t, m in KINDS],
        *[(t, m, data_type(t).time_field, True) for t, m in KINDS],
        ("BKN-PAL", "RQ", "DialogID", True),
    ],
)
def test_required_by_mode(type_name: str, mode: str | None, field: str, required: bool) -> None:
    doc = {k: v for k, v in minimal(type_name, mode).items() if k != field}
    check(type_name, doc, not required)


def test_bkn_pal_has_no_kind() -> None:
    check("BKN-PAL", minimal("BKN-PAL", "RQ"), True)
    check("BKN-PAL", {**minimal("BKN-PAL", "RQ"), "Kind": "clarification"}, False)


def test_pc_prompt_has_no_mode() -> None:
    check("PC Prompt", {**minimal("PC Prompt", None), "Mode": "RQ"}, False)


def test_parse_message_routes_by_header() -> None:
    for (type_name, mode), cls in CLASSES.items():
        assert type(parse_message(minimal(type_name, mode))) is cls
    for bad in ({**minimal("BKN-DAC", "RQ"), "Header": "PGM-KDA-V1.1"}, {"Mode": "RQ"}, [], "PGM-KDA-V1.0", None):
        with pytest.raises(ValidationError):
            parse_message(bad)  # type: ignore[arg-type]


def test_model_for_and_adapter_for() -> None:
    assert model_for("PGM-KPR", "RQ") is BKNPRCRequest
    assert model_for("PCPrompt") is PCPrompt
    assert adapter_for("BKN-PAL") is adapter_for("PGM-KPA-V1.0")
    for args in (("BKN-XYZ", "RQ"), ("PC Prompt", "RQ"), ("BKN-DAC", None), ("BKN-DAC", "rq")):
        with pytest.raises(ValueError):
            model_for(*args)
    with pytest.raises(ValueError):
        adapter_for("nothing")


# --- scalar semantics ------------------------------------------------------------------------------

_INTEGER_CASES = [
    (0, True),
    (7, True),
    (1.0, True),
    (2.0, True),
    (-0.0, True),
    (1e20, True),
    (10**30, True),
    (-1, False),
    (-1.0, False),
    (1.5, False),
    ("1", False),
    (True, False),
    (False, False),
    (None, False),
    ([1], False),
]


@pytest.mark.parametrize(("value", "ok"), _INTEGER_CASES, ids=repr)
@pytest.mark.parametrize(
    ("type_name", "mode", "path"),
    [
        ("BKN-PAL", "RS", ("TurnIndex",)),
        ("BKN-DAC", "RQ", ("ProcessActions", 0, "Step")),
        ("BKN-DAC", "RS", ("Feasibility", "Steps", 0, "Step")),
    ],
)
def test_integer_is_json_schema_integer(
    type_name: str, mode: str, path: tuple[str | int, ...], value: Any, ok: bool
) -> None:
    doc = minimal(type_name, mode)
    if path[0] == "ProcessActions":
        doc["ProcessActions"] = [{"Step": 0, "Statement": "MM-Add (A-User) Item at M-Location"}]
    if path[0] == "Feasibility":
        doc["Feasibility"] = {"Steps": [{"Step": 0, "PAStatus": "Ack"}], "Overall": "feasible"}
    check(type_name, with_value(doc, path, value), ok)


@pytest.mark.parametrize(
    ("value", "ok"), [(1, True), (1.0, True), (40, True), (0, False), (0.0, False), (0.5, False), (True, False)]
)
def test_max_steps_is_integer_from_one(value: Any, ok: bool) -> None:
    check("PC Prompt", with_value(minimal("PC Prompt", None), ("ActionContext", "MaxSteps"), value), ok)


def test_integral_float_is_kept_as_given() -> None:
    doc = {**minimal("BKN-DAC", "RS"), "TurnIndex": 3.0}
    dumped = parse_message(doc).model_dump(mode="json", exclude_unset=True)
    assert dumped == doc
    assert isinstance(dumped["TurnIndex"], float)
    assert json.dumps(dumped, sort_keys=True) == json.dumps(doc, sort_keys=True)


_PROBABILITY_CASES = [
    (0, True),
    (1, True),
    (0.25, True),
    (1.0, True),
    (-0.0, True),
    (1.0001, False),
    (-0.1, False),
    (2, False),
    (True, False),
    (False, False),
    ("0.5", False),
    (None, False),
    ({}, False),
]


@pytest.mark.parametrize(("value", "ok"), _PROBABILITY_CASES, ids=repr)
def test_confidence_is_number_in_unit_interval(value: Any, ok: bool) -> None:
    doc = {**minimal("PC Prompt", None), "ResolvedReferents": [{"Expression": "the blue one", "Confidence": value}]}
    check("PC Prompt", doc, ok)
    dac = {**minimal("BKN-DAC", "RS"), "Answer": {"ObjectClasses": [{"Class": "Lantern", "Confidence": value}]}}
    check("BKN-DAC", dac, ok)
    check(DEM, {**data_exchange_metadata("BKN-DAC", "RS", "d"), "Confidence": value}, ok)


@pytest.mark.parametrize(
    ("value", "ok"), [(0, True), (150, True), (149.5, True), (10**40, True), (-1, False), (True, False), ("9", False)]
)
def test_wallet_limit_is_non_negative_number(value: Any, ok: bool) -> None:
    check(
        "BKN-PRC", with_value(minimal("BKN-PRC", "RS"), ("Representation", "ActionContext", "WalletLimit"), value), ok
    )


@pytest.mark.parametrize("value", [float("nan"), float("inf"), float("-inf")], ids=repr)
def test_non_finite_numbers_are_rejected(value: float) -> None:
    # Not JSON at all; jsonschema-rs (the verdict) and the models both refuse them.
    doc = {**minimal("PC Prompt", None), "ResolvedReferents": [{"Expression": "it", "Confidence": value}]}
    assert schema_verdicts("PC Prompt", doc)[0] is False
    assert model_accepts("PC Prompt", doc) is False


@pytest.mark.parametrize(
    ("path", "value", "ok"),
    [
        (("MInstance",), "", True),
        (("MInstance",), 1, False),
        (("MInstance",), None, False),
        (("Question",), "Which lantern?", True),
        (("Question",), True, False),
        (("Question",), ["Which lantern?"], False),
        (("EntityIDs",), [], True),
        (("EntityIDs",), ["e-1", ""], True),
        (("EntityIDs",), "e-1", False),
        (("EntityIDs",), ["e-1", 2], False),
        (("EntityIDs",), None, False),
        (("Kind",), "Clarification", False),
        (("Kind",), "intent", True),
        (("DescrMetadata",), "x" * 2048, True),
        (("DescrMetadata",), "x" * 2049, False),
        (("DescrMetadata",), "\U0001f3ee" * 2048, True),  # one code point each, two UTF-16 units
        (("DescrMetadata",), "\U0001f3ee" * 2049, False),
        (("DescrMetadata",), None, False),
        (("Unknown",), "x", False),
    ],
    ids=lambda v: repr(v)[:40],
)
def test_strings_enums_and_closed_objects(path: tuple[str, ...], value: Any, ok: bool) -> None:
    check("BKN-PRC", with_value(minimal("BKN-PRC", "RQ"), path, value), ok)


@pytest.mark.parametrize(
    ("value", "ok"),
    [("helpful", True), ("", True), ({}, True), ({"a": [1, None, 2.5, {"b": False}]}, True), ([], False), (1, False)],
    ids=repr,
)
@pytest.mark.parametrize(
    "path",
    [
        ("Intent",),
        ("Propositions", 0, "Spatial"),
        ("Propositions", 0, "Temporal"),
        ("ExpressiveConfiguration", "Personality"),
        ("SceneContext",),
    ],
)
def test_open_fields(path: tuple[str | int, ...], value: Any, ok: bool) -> None:
    doc = {**minimal("PC Prompt", None), "Propositions": [{"Subject": "A-User", "Predicate": "wants"}]}
    if path == ("SceneContext",):
        ok = ok and isinstance(value, dict)  # {"type": "object"}: strings are not open here
    doc = with_value(doc, path, value)
    check("PC Prompt", doc, ok)
    if ok:
        assert parse_message(doc).model_dump(mode="json", exclude_unset=True) == doc


def test_null_is_never_a_value() -> None:
    for type_name, mode in KINDS:
        cls = CLASSES[(type_name, mode)]
        for name, field in cls.model_fields.items():
            if not field.is_required():
                check(type_name, {**minimal(type_name, mode), name: None}, False)


# --- Simple Time and Data Exchange Metadata --------------------------------------------------------

_SEGMENT = {"FlagsByte": 3, "StartTime": 10, "EndTime": 20.5}
_ALL3 = {"AccuracyPlusMinus": 1, "AccuracyStartPlusMinus": 1, "AccuracyEndPlusMinus": 2}


@pytest.mark.parametrize(
    ("extra", "ok"),
    [
        ({}, False),
        (_ALL3, True),
        ({"AccuracyPlusMinus": 1}, False),
        ({"AccuracyStartPlusMinus": 1, "AccuracyEndPlusMinus": 1}, False),
        ({"AccuracyMode": "single", "AccuracyPlusMinus": 0}, True),
        ({"AccuracyMode": "single"}, False),
        ({"AccuracyMode": "single", "AccuracyStartPlusMinus": 1, "AccuracyEndPlusMinus": 1}, False),
        ({"AccuracyMode": "separate", "AccuracyStartPlusMinus": 1, "AccuracyEndPlusMinus": 1}, True),
        ({"AccuracyMode": "separate", "AccuracyStartPlusMinus": 1}, False),
        ({"AccuracyMode": "separate", "AccuracyPlusMinus": 1}, False),
        ({"AccuracyMode": "separate", **_ALL3}, True),
        ({"AccuracyMode": "Single", "AccuracyPlusMinus": 1}, False),
        ({"AccuracyMode": None, **_ALL3}, False),
        ({**_ALL3, "AccuracyPlusMinus": -1}, False),
        ({**_ALL3, "TimeType": True, "TimeUnit": "11", "Reserved": 31}, True),
        ({**_ALL3, "TimeType": 1}, False),
        ({**_ALL3, "TimeUnit": "1"}, False),
        ({**_ALL3, "Reserved": 32}, False),
        ({**_ALL3, "FlagsByte": 255.0}, True),
        ({**_ALL3, "FlagsByte": 256}, False),
        ({**_ALL3, "StartTime": -5.25}, True),
        ({**_ALL3, "StartTime": "10"}, False),
        ({**_ALL3, "EndTime": False}, False),
    ],
    ids=repr,
)
def test_simple_time_accuracy_quirk(extra: dict[str, Any], ok: bool) -> None:
    doc = {"Header": "OSD-STM-V1.5", "SimpleTimeID": "t", "SimpleTimeData": [{**_SEGMENT, **extra}]}
    check(SIMPLE_TIME, doc, ok)
    if ok:
        assert SimpleTime.model_validate(doc).model_dump(mode="json", exclude_unset=True) == doc


def test_simple_time_quirk_error_names_the_missing_fields() -> None:
    doc = {"Header": "OSD-STM-V1.5", "SimpleTimeID": "t", "SimpleTimeData": [{**_SEGMENT, "AccuracyPlusMinus": 1}]}
    with pytest.raises(ValidationError) as raised:
        SimpleTime.model_validate(doc)
    (error,) = raised.value.errors()
    assert error["type"] == "simple_time_accuracy"
    assert error["loc"] == ("SimpleTimeData", 0)
    assert "AccuracyStartPlusMinus, AccuracyEndPlusMinus" in error["msg"]


_DEM_CASES = [
    ({}, True),
    ({"Source": [{"AIMID": "PGM-DAC"}, {"ImplementerAIMID": "acme-dac-2"}]}, True),
    ({"Source": [{"AIMID": "PGM-DAC", "ImplementerAIMID": "acme-dac-2"}]}, False),
    ({"Source": [{}]}, False),
    ({"Source": []}, False),
    ({"Source": {"AIMID": "PGM-DAC"}}, False),
    ({"Source": [{"AIMID": 7}]}, False),
    ({"Source": [{"AIMType": "PGM-DAC-V1.0"}]}, False),
    ({"Header": "PTF-DEM-V2.0"}, False),
    ({"DataType": "PGM-KDA-V10.10"}, True),
    ({"DataType": "pgm-kda-v1.0"}, False),
    ({"DataType": "PGM-KDA-V1"}, False),
    ({"DataType": "xPGM-KDA-V1.0"}, False),
    ({"DataType": "PGM-KDA-V1.0x"}, False),
    ({"Authorisations": []}, True),
    ({"Authorisations": [{"AIMInstance": [{"AIMType": "PGM-BKN-V1.0"}], "Data": [{"DataID": "d"}]}]}, True),
    ({"Authorisations": [{"ProcessInstance": [{"AIMID": "a"}], "Data": [{"DataType": "PGM-KDA-V1.0"}]}]}, True),
    ({"Authorisations": [{"ProcessInstance": [{"AIMType": "PGM-BKN-V1.0"}], "Data": [{"DataID": "d"}]}]}, False),
    ({"Authorisations": [{"AIMInstance": [{"AIMID": "a"}], "ProcessInstance": [{"AIMID": "a"}], "Data": []}]}, False),
    ({"Authorisations": [{"AIMInstance": [{"AIMID": "a"}], "Data": []}]}, False),
    (
        {"Authorisations": [{"AIMInstance": [{"AIMID": "a"}], "Data": [{"DataID": "d", "DataType": "PGM-KDA-V1.0"}]}]},
        False,
    ),
    ({"Legality": {"anything": ["goes"]}, "Security": {}}, True),
    ({"Legality": "lawful"}, False),
    ({"Annotations": []}, False),
    ({"Annotations": [{"Annotation": {}}]}, True),
    ({"Annotations": [{"Annotation": {}, "AnnotationSpace": {}, "AnnotationRights": {"r": 1}}]}, True),
    ({"Annotations": [{"Annotation": {}, "AnnotationTime": {"Header": "OSD-STM-V1.5"}}]}, False),
    ({"Annotations": [{"AnnotationSpace": {}}]}, False),
    ({"DataExchangeMetadataTime": simple_time_now(time_id="t")}, True),
    ({"MInstanceID": "m", "DataExchangeMetadataID": "x", "DescrMetadata": "y" * 2048}, True),
    ({"Confidence": 0.9, "Extra": 1}, False),
]


@pytest.mark.parametrize(("change", "ok"), _DEM_CASES, ids=lambda v: json.dumps(v)[:60])
def test_data_exchange_metadata(change: dict[str, Any], ok: bool) -> None:
    doc = {**data_exchange_metadata("BKN-DAC", "RS", "q-1"), **change}
    check(DEM, doc, ok)
    if ok:
        assert DataExchangeMetadata.model_validate(doc).model_dump(mode="json", exclude_unset=True) == doc


def test_pattern_anchors_like_ecma_regexes() -> None:
    # ECMA-262 and jsonschema-rs: `$` is the end of the string. Python's `re`, which
    # python-jsonschema uses, also lets `$` match before a final newline, so the explainer
    # accepts what the verdict and the models refuse.
    doc = {**data_exchange_metadata("BKN-DAC", "RS", "q-1"), "DataType": "PGM-KDA-V1.0\n"}
    assert schema_verdicts(DEM, doc) == (False, True)
    assert model_accepts(DEM, doc) is False


@pytest.mark.parametrize(
    ("type_name", "mode", "aim"),
    [
        ("PC Prompt", None, "PGM-PRC"),
        ("BKN-PRC", "RQ", "PGM-BKN"),
        ("BKN-PRC", "RS", "PGM-PRC"),
        ("BKN-DAC", "RQ", "PGM-BKN"),
        ("BKN-DAC", "RS", "PGM-DAC"),
        ("BKN-PAL", "RQ", "PGM-BKN"),
        ("BKN-PAL", "RS", "PGM-PAL"),
    ],
)
def test_data_exchange_metadata_helper(type_name: str, mode: Any, aim: str) -> None:
    dem = data_exchange_metadata(type_name, mode, "id-1")
    assert dem == {
        "Header": "PTF-DEM-V1.0",
        "DataID": "id-1",
        "DataType": data_type(type_name).header,
        "Source": [{"AIMID": aim}],
    }
    check(DEM, dem, True)


@pytest.mark.parametrize(
    ("type_name", "mode"), [("PC Prompt", "RS"), ("BKN-DAC", None), ("BKN-DAC", "Rq"), ("X", None)]
)
def test_data_exchange_metadata_helper_rejects_bad_modes(type_name: str, mode: Any) -> None:
    with pytest.raises(ValueError):
        data_exchange_metadata(type_name, mode, "id-1")


def test_simple_time_now() -> None:
    import time

    before = time.time() * 1000
    now = simple_time_now()
    after = time.time() * 1000
    check(SIMPLE_TIME, now, True)
    (segment,) = now["SimpleTimeData"]
    assert before - 1 <= segment["StartTime"] == segment["EndTime"] <= after + 1
    assert isinstance(segment["StartTime"], int)
    # FlagsByte repeats the decoded fields: bit 0 TimeType (absolute), bits 2..1 TimeUnit ("01" = ms).
    assert segment["FlagsByte"] == (int(segment["TimeUnit"], 2) << 1) | int(segment["TimeType"])
    assert (segment["TimeType"], segment["TimeUnit"], segment["AccuracyMode"]) == (True, "01", "single")
    assert simple_time_now()["SimpleTimeID"] != now["SimpleTimeID"]
    assert simple_time_now(time_id="t-9")["SimpleTimeID"] == "t-9"


# --- descriptions and structure are the spec's -----------------------------------------------------


def _model_classes(annotation: Any) -> list[type[BaseModel]]:
    """The model classes an annotation refers to (through Optional, list, Annotated, unions)."""
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return [annotation]
    found: list[type[BaseModel]] = []
    for arg in typing.get_args(annotation):
        found += _model_classes(arg)
    return found


def _resolve(type_name: str, mode: str | None, path: tuple[str, ...]) -> Any:
    cls: type[BaseModel] = CLASSES[(type_name, mode)]
    for label in path[:-1]:
        (cls,) = _model_classes(cls.model_fields[label].annotation)
    return cls.model_fields[path[-1]]


_ROWS = [
    (dt.name, mode, row)
    for dt in DATA_TYPES
    for table in dt.tables
    for row in table.rows
    for mode in ([table.mode] if table.mode else list(dt.modes) or [None])
]


@pytest.mark.parametrize(("type_name", "mode", "row"), _ROWS, ids=[f"{t}-{m}-{'.'.join(r.path)}" for t, m, r in _ROWS])
def test_every_table_row_is_a_field_with_its_description(type_name: str, mode: str | None, row: Any) -> None:
    field = _resolve(type_name, mode, row.path)
    assert field.description == row.description
    # The "(required)" marks hold inside their object (D12); D7's mode rules add the rest.
    if row.required:
        assert field.is_required()


def _schema_node(node: dict[str, Any]) -> dict[str, Any]:
    while node.get("type") == "array":
        node = node["items"]
    return node


def _compare(schema: dict[str, Any], cls: type[BaseModel], where: str, forbidden: set[str], required: set[str]) -> int:
    """Same properties, same required ones, recursively where both sides are closed objects."""
    properties = {k for k in schema.get("properties", {}) if k not in forbidden}
    assert set(cls.model_fields) == properties, where
    assert {n for n, f in cls.model_fields.items() if f.is_required()} == set(schema.get("required", [])) | required
    compared = 1
    for name, field in cls.model_fields.items():
        node = _schema_node(schema["properties"][name])
        inner = _model_classes(field.annotation)
        if len(inner) == 1 and "properties" in node:
            compared += _compare(node, inner[0], f"{where}.{name}", set(), set())
    return compared


@pytest.mark.parametrize(("type_name", "mode"), KINDS)
def test_models_have_the_schema_structure(type_name: str, mode: str | None) -> None:
    schema = jsonschema_rs.dereference(dict(data_type(type_name).schema), registry=_RS_REGISTRY)
    forbidden: set[str] = set()
    required: set[str] = set()
    for branch in schema.get("allOf", []):
        if branch["if"]["properties"]["Mode"]["const"] == mode:
            forbidden = {k for k, v in branch["then"].get("properties", {}).items() if v is False}
            required = set(branch["then"].get("required", []))
    assert _compare(schema, CLASSES[(type_name, mode)], type_name, forbidden, required) > 3


def test_borrowed_models_have_the_schema_structure() -> None:
    for schema_id, cls in ((SIMPLE_TIME, SimpleTime), (DEM, DataExchangeMetadata)):
        schema = jsonschema_rs.dereference(dict(schema_resources()[schema_id]), registry=_RS_REGISTRY)
        _compare(schema, cls, schema_id, set(), set())


@pytest.mark.parametrize(
    ("literal", "type_name", "path"),
    [
        (bkn_prc.PRCKind, "BKN-PRC", ("Kind",)),
        (bkn_dac.DACKind, "BKN-DAC", ("Kind",)),
        (models._base.OutcomeValue, "BKN-PAL", ("Outcome",)),
        (bkn_dac.PAStatusCode, "BKN-DAC", ("Feasibility", "Steps", "PAStatus")),
    ],
)
def test_enumerations_are_the_tables(literal: Any, type_name: str, path: tuple[str, ...]) -> None:
    found = data_type(type_name).row(path)
    assert found is not None
    assert typing.get_args(literal) == found[1].enum


@pytest.mark.parametrize(
    ("cls", "field", "literal"),
    [
        (BKNPRCRequest, "Kind", spec.PRCKind),
        (BKNDACRequest, "Kind", spec.DACKind),
        *((cls, "Outcome", spec.OutcomeValue) for cls in (BKNPRCResponse, BKNDACResponse, BKNPALResponse)),
        *((cls, "Mode", spec.RequestMode) for cls in (BKNPRCRequest, BKNDACRequest, BKNPALRequest)),
        *((cls, "Mode", spec.ResponseMode) for cls in (BKNPRCResponse, BKNDACResponse, BKNPALResponse)),
        (bkn_dac.FeasibilityStep, "PAStatus", PAStatusCode),
        (bkn_dac.FeasibilityModel, "Overall", spec.OverallValue),
        (bkn_dac.CommitmentStatusEntry, "Status", spec.CommitmentState),
        (bkn_dac.FailureModel, "Nature", spec.FailureNature),
        (PCPrompt, "Header", spec.PCPromptHeader),
        *((cls, "Header", spec.BKNPRCHeader) for cls in (BKNPRCRequest, BKNPRCResponse)),
        *((cls, "Header", spec.BKNDACHeader) for cls in (BKNDACRequest, BKNDACResponse)),
        *((cls, "Header", spec.BKNPALHeader) for cls in (BKNPALRequest, BKNPALResponse)),
        (SimpleTime, "Header", spec.SimpleTimeHeader),
        (DataExchangeMetadata, "Header", spec.DataExchangeMetadataHeader),
    ],
    ids=lambda v: getattr(v, "__name__", str(v)),
)
def test_models_take_their_enumerations_from_spec(cls: type[BaseModel], field: str, literal: Any) -> None:
    assert cls.model_fields[field].annotation == literal


def test_the_bkn_types_share_table_1_with_their_own_descriptions() -> None:
    shared = set(BKNMessage.model_fields)
    assert shared == {row.label for row in data_type("BKN-PAL").tables[0].rows}
    for cls in (BKNPRCRequest, BKNPRCResponse, BKNDACRequest, BKNDACResponse, BKNPALRequest, BKNPALResponse):
        assert issubclass(cls, BKNMessage)
        for name in shared:  # the base's own fields stay undescribed: each type has its own text
            assert cls.model_fields[name].description == data_type(cls.data_type_name).row((name,))[1].description
    assert all(field.description is None for field in BKNMessage.model_fields.values())
    dialog = {cls.model_fields["DialogID"].description for cls in (BKNPRCRequest, BKNDACRequest, BKNPALRequest)}
    assert len(dialog) == 2  # BKN-DAC's DialogID row says more than the other two
    assert BKNDACResponse.model_json_schema()["properties"]["DialogID"]["description"].startswith("Identifier")


def test_simple_time_is_written_and_read_by_spec() -> None:
    assert models.simple_time_now is spec.simple_time_now
    before = spec.simple_time_seconds(simple_time_now())
    assert before is not None and before[0] is True and abs(before[1] - time.time()) < 5


def test_no_field_is_named_like_a_module_level_name() -> None:
    # A class attribute assigned before its annotation is evaluated replaces the global of the
    # same name (NOTES 7.3): `MaxSteps: Omittable[MaxSteps] = Field(...)` would type the field
    # as a FieldInfo. Keep every field name distinct from the names of its module.
    for module in MODULES:
        for value in vars(module).values():
            if isinstance(value, type) and issubclass(value, BaseModel) and value.__module__ == module.__name__:
                clashes = set(value.model_fields) & set(vars(module))
                assert not clashes, f"{value.__name__}: {clashes}"


def test_modules_name_their_sources() -> None:
    for module in (pc_prompt, bkn_prc, bkn_dac, bkn_pal):
        spec = next(dt for dt in DATA_TYPES if f'"{dt.name}"' in (module.__doc__ or ""))
        assert spec.schema_id in (module.__doc__ or "")
        assert "V1.0" in (module.__doc__ or "")


def test_models_layer_imports_only_spec_pydantic_and_stdlib() -> None:
    # Keeps `import pgm_explore.models` light: no jsonschema, referencing or pandas here.
    import ast
    import sys

    allowed = set(sys.stdlib_module_names) | {"pydantic", "pydantic_core"}
    for path in (ROOT / "pgm_explore" / "models").glob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            names = [a.name for a in node.names] if isinstance(node, ast.Import) else []
            if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                names = [node.module]
            for name in names:
                own = name.startswith(("pgm_explore.spec", "pgm_explore.models"))
                assert own or name.split(".")[0] in allowed, f"{path.name} imports {name}"


# --- the examples ----------------------------------------------------------------------------------


def _examples(kind: str) -> list[Path]:
    return sorted(
        p for p in (ROOT / "data" / "examples").glob(f"*/{kind}/*.json") if not p.name.endswith(".expected.json")
    )


def _type_of(doc: Any) -> str | None:
    header = doc.get("Header") if isinstance(doc, dict) else None
    return next((dt.name for dt in DATA_TYPES if dt.header == header), None)


@pytest.mark.parametrize("path", _examples("valid"), ids=lambda p: str(p.relative_to(ROOT)))
def test_valid_examples_parse_and_round_trip(path: Path) -> None:
    doc = loads(path.read_bytes())  # (the project's reader: 1e400 is the number written)
    type_name = _type_of(doc)
    assert type_name is not None
    check(type_name, doc, True)
    message = parse_message(doc)
    assert message.model_dump(mode="json", exclude_unset=True) == doc


@pytest.mark.parametrize("path", _examples("invalid"), ids=lambda p: str(p.relative_to(ROOT)))
def test_invalid_examples_get_the_schema_verdict(path: Path) -> None:
    # "invalid" examples break the schema or only a consistency rule (D14); either way the
    # model's verdict is the schema's.
    doc = loads(path.read_bytes())  # (the project's reader: 1e400 is the number written)
    type_name = _type_of(doc)
    if type_name is None:
        pytest.skip("no known Header")
    rs, py = schema_verdicts(type_name, doc)
    assert rs == py == model_accepts(type_name, doc)


def test_generated_json_schema_offers_no_null_and_accepts_the_examples() -> None:
    # What pydantic generates from the models (for tools and notebooks) is not the normative
    # schema, but it must not invite null values or reject a conforming message.
    from pydantic import TypeAdapter

    schema = TypeAdapter(models.Message).json_schema()
    assert '"null"' not in json.dumps(schema)
    validator = jsonschema_rs.validator_for(schema)
    for doc in [minimal(t, m) for t, m in KINDS] + [json.loads(p.read_text("utf-8")) for p in _examples("valid")]:
        assert validator.is_valid(doc)
    assert (
        BKNDACResponse.model_json_schema()["$defs"]["FeasibilityStep"]["properties"]["PAStatus"]["title"] == "PAStatus"
    )


def test_union_types_are_exported() -> None:
    assert isinstance(models.AnyMessage, types.UnionType)
    assert len(typing.get_args(models.AnyMessage)) == len(CLASSES)
