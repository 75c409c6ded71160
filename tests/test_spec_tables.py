"""The schemas against the spec texts: every table row, both ways, so neither can drift.

The texts are read from ../shared/spec (the project's normative copy) when it is there,
and the copy vendored in the package must equal it.
"""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any, get_args

import jsonschema
import pytest

from pgm_explore import spec
from pgm_explore.spec import DATA_TYPES, DataType, SpecRow, schema_resources
from pgm_explore.spec._tables import parse_tables
from pgm_explore.spec.process_actions import PAStatusCode

SHARED = Path(__file__).resolve().parents[2] / "shared" / "spec"
TYPES = [pytest.param(dt, id=dt.name) for dt in DATA_TYPES]


def _text(dt: DataType) -> str:
    shared = SHARED / dt.text_file
    return shared.read_text(encoding="utf-8") if shared.exists() else dt.text


def _resolve(schema: Mapping[str, Any], node: Mapping[str, Any]) -> Mapping[str, Any]:
    ref = node.get("$ref", "")
    return spec.resolve(ref, schema)[0] if ref.startswith("#") else node


def _object_at(schema: Mapping[str, Any], labels: tuple[str, ...]) -> Mapping[str, Any]:
    """The object schema holding the properties of the row at ``labels`` (arrays stepped through)."""
    node: Mapping[str, Any] = schema
    for label in labels:
        node = _resolve(schema, node["properties"][label])
        if node.get("type") == "array":
            node = _resolve(schema, node["items"])
    return node


def _rows(dt: DataType) -> Iterator[tuple[str | None, SpecRow]]:
    for table in parse_tables(_text(dt)):
        for row in table.rows:
            yield table.mode, row


@pytest.mark.parametrize("dt", TYPES)
def test_vendored_text_equals_shared_copy(dt: DataType) -> None:
    if not SHARED.exists():
        pytest.skip("../shared/spec is not beside this checkout")
    assert dt.text == (SHARED / dt.text_file).read_text(encoding="utf-8")


@pytest.mark.parametrize("dt", TYPES)
def test_tables_found(dt: DataType) -> None:
    tables = parse_tables(_text(dt))
    assert [t.number for t in tables] == ([1] if not dt.has_modes else [1, 2, 3])
    assert all(t.rows for t in tables)


@pytest.mark.parametrize("dt", TYPES)
def test_every_row_is_in_the_schema(dt: DataType) -> None:
    for _mode, row in _rows(dt):
        parent = _object_at(dt.schema, row.path[:-1])
        assert row.label in parent["properties"], f"{row.path} missing from {dt.schema_file}"
        node = parent["properties"][row.label]
        assert node.get("description") == row.description.replace(" (required)", ""), row.path
        node = _resolve(dt.schema, node)
        if row.enum is not None:
            assert node.get("enum", [node.get("const")]) == list(row.enum), row.path


@pytest.mark.parametrize("dt", TYPES)
def test_required_where_marked(dt: DataType) -> None:
    for _mode, row in _rows(dt):
        parent = _object_at(dt.schema, row.path[:-1])
        # D6: every Functional Requirement says "shall include DataXMData", which the tables do not mark.
        marked = row.required or row.path == ("DataXMData",)
        assert (row.label in parent.get("required", [])) == marked, row.path


@pytest.mark.parametrize("dt", TYPES)
def test_every_schema_property_is_in_a_table(dt: DataType) -> None:
    rows = {row.path for _mode, row in _rows(dt)}

    def walk(node: Mapping[str, Any], prefix: tuple[str, ...]) -> Iterator[tuple[str, ...]]:
        for label, sub in node.get("properties", {}).items():
            path = (*prefix, label)
            yield path
            sub = _resolve(dt.schema, sub)
            if sub.get("type") == "array":
                sub = _resolve(dt.schema, sub["items"])
            # Open properties and the bundled MPAI types are not described by the tables.
            if sub.get("additionalProperties") is False and "$ref" not in sub:
                yield from walk(sub, path)

    # D11: ActionContext.Affordances has the item shape of BKN-DAC Answer.Affordances,
    # which the tables give only there.
    beyond = {p for p in walk(dt.schema, ()) if "ActionContext" in p and p[-2:-1] == ("Affordances",)}
    assert set(walk(dt.schema, ())) - rows == beyond
    assert all(p[-1] in ("EntityID", "Class", "Action") for p in beyond)


@pytest.mark.parametrize("dt", [p for p in TYPES if p.values[0].has_modes])
def test_mode_branches_follow_tables_2_and_3(dt: DataType) -> None:
    rq = {row.label for mode, row in _rows(dt) if mode == "RQ" and row.depth == 0}
    rs = {row.label for mode, row in _rows(dt) if mode == "RS" and row.depth == 0}
    branches = {b["if"]["properties"]["Mode"]["const"]: b["then"] for b in dt.schema["allOf"]}
    forbidden_in_rq = {k for k, v in branches["RQ"]["properties"].items() if v is False}
    forbidden_in_rs = {k for k, v in branches["RS"]["properties"].items() if v is False}
    assert forbidden_in_rq == rs  # D8
    assert forbidden_in_rs == rq
    # D7: Kind in PRC and DAC Requests; RequestID and Outcome in every Response.
    assert branches["RQ"].get("required", []) == ([] if dt.name == "BKN-PAL" else ["Kind"])
    assert branches["RS"]["required"] == ["RequestID", "Outcome"]


@pytest.mark.parametrize("dt", TYPES)
def test_identity_and_metadata(dt: DataType) -> None:
    schema = dt.schema
    assert schema["$schema"] == "https://json-schema.org/draft/2020-12/schema"  # D1
    assert schema["$id"] == dt.schema_id
    assert schema["title"] == dt.title
    assert schema["properties"]["Header"]["const"] == dt.header  # D2
    assert ("Mode" in schema["properties"]) == dt.has_modes
    assert "DataXMData" in schema["required"]  # D6
    assert schema["properties"]["DescrMetadata"]["maxLength"] == 2048  # D9
    assert schema["additionalProperties"] is False  # D3


@pytest.mark.parametrize("uri", sorted(schema_resources()))
def test_every_bundled_schema_passes_its_metaschema(uri: str) -> None:
    jsonschema.Draft202012Validator.check_schema(schema_resources()[uri])


def _refs_in(node: Any) -> Iterator[str]:
    """Every ``$ref`` in a schema document."""
    if isinstance(node, dict):
        if isinstance(node.get("$ref"), str):
            yield node["$ref"]
        for value in node.values():
            yield from _refs_in(value)
    elif isinstance(node, list):
        for value in node:
            yield from _refs_in(value)


def test_every_reference_resolves_offline() -> None:
    known = schema_resources()
    for uri, schema in known.items():
        for ref in _refs_in(schema):
            if ref.startswith("#"):
                continue
            assert ref.split("#")[0] in known, f"{uri} refers to {ref}, which is not bundled"


# --- each spec fact the code acts on is written once, in pgm_explore.spec, and is the table's -------

ENUMERATIONS = [
    ("BKN-PRC", ("Kind",), spec.PRCKind),
    ("BKN-DAC", ("Kind",), spec.DACKind),
    ("BKN-DAC", ("CommitmentStatus", "Status"), spec.CommitmentState),
    ("BKN-DAC", ("Failure", "Nature"), spec.FailureNature),
    ("BKN-DAC", ("Feasibility", "Overall"), spec.OverallValue),
    ("BKN-DAC", ("Feasibility", "Steps", "PAStatus"), PAStatusCode),
    *((name, ("Outcome",), spec.OutcomeValue) for name in ("BKN-PRC", "BKN-DAC", "BKN-PAL")),
    *((name, ("Mode",), spec.Mode) for name in ("BKN-PRC", "BKN-DAC", "BKN-PAL")),
]


@pytest.mark.parametrize(("type_name", "labels", "literal"), ENUMERATIONS, ids=lambda v: str(v))
def test_each_enumeration_is_its_tables(type_name: str, labels: tuple[str, ...], literal: Any) -> None:
    found = spec.data_type(type_name).row(labels)
    assert found is not None and found[1].enum == get_args(literal)


def test_headers_and_mode_words_are_the_schemas_and_the_tables() -> None:
    literals = [spec.PCPromptHeader, spec.BKNPRCHeader, spec.BKNDACHeader, spec.BKNPALHeader]
    assert [spec.header_of(h) for h in literals] == [dt.header for dt in DATA_TYPES]
    assert all(dt.acronym + "-V1.0" == dt.header for dt in DATA_TYPES)
    dem = schema_resources()[spec.DATA_EXCHANGE_METADATA_ID]["properties"]["Header"]
    time = schema_resources()[spec.SIMPLE_TIME_ID]["properties"]["Header"]
    assert (dem.get("const"), time.get("const")) == (
        spec.header_of(spec.DataExchangeMetadataHeader),
        spec.header_of(spec.SimpleTimeHeader),
    )
    titles = {t.mode: t.title for dt in DATA_TYPES for t in dt.tables if t.mode}
    assert all(f"{spec.MODE_WORDS[mode]} (Mode {mode})" in title for mode, title in titles.items())


def test_payloads_are_response_properties() -> None:
    for type_name, payload in spec.RESPONSE_PAYLOAD.items():
        assert set(payload) <= set(spec.data_type(type_name).mode_properties("RS"))
    for (type_name, kind), (holder, members) in spec.PAYLOAD_FOR_KIND.items():
        dt = spec.data_type(type_name)
        found = dt.row(("Kind",))
        assert found is not None and kind in (found[1].enum or ())
        assert holder in spec.RESPONSE_PAYLOAD[type_name]
        assert all(dt.row((holder, member)) is not None for member in members)


@pytest.mark.parametrize(
    ("statuses", "overall"),
    [([], None), (["Ack"], "feasible"), (["Ack", "Clash"], "partially_feasible"), (["IncID", "QualNS"], "infeasible")],
)
def test_overall_of_the_steps(statuses: list[str], overall: str | None) -> None:
    assert spec.overall_of(statuses) == overall
    assert spec.overall_of(iter(statuses)) == overall  # read once: any iterable


# --- one $ref resolver ------------------------------------------------------------------------------


def test_resolve_unescapes_json_pointers() -> None:
    """RFC 6901: ``~1`` stands for ``/`` and ``~0`` for ``~`` (and percent-escapes for a URI fragment)."""
    root = {"$defs": {"a/b": {"const": 1}, "m~n": {"const": 2}, "x y": {"const": 3}}}
    assert spec.resolve("#/$defs/a~1b", root) == ({"const": 1}, root)
    assert spec.resolve("#/$defs/m~0n", root)[0] == {"const": 2}
    assert spec.resolve("#/$defs/x%20y", root)[0] == {"const": 3}
    with pytest.raises(LookupError):
        spec.resolve("#/$defs/a/b", root)


def test_resolve_follows_bundled_addresses_offline() -> None:
    prompt = spec.data_type("PC Prompt").schema
    node, document = spec.resolve(spec.SIMPLE_TIME_ID + "#/properties/Header", prompt)
    assert node["const"] == "OSD-STM-V1.5" and document is schema_resources()[spec.SIMPLE_TIME_ID]
    with pytest.raises(LookupError):
        spec.resolve("https://schemas.mpai.community/nowhere.json", prompt)


def test_plain_references_resolve_as_referencing_does(monkeypatch: pytest.MonkeyPatch) -> None:
    """``resolve`` walks a plain reference itself (no ``referencing`` to import on a worker): the
    very node and document ``referencing`` gives, for every reference of every bundled schema,
    and for references it leaves to ``referencing`` (or to its error)."""
    from pgm_explore.spec import _references

    known = schema_resources()
    asked = [(ref, schema) for schema in known.values() for ref in _refs_in(schema)]
    prompt = spec.data_type("PC Prompt").schema
    odd = {"$defs": {"a/b": {"const": 1}, "x y": {"const": 3}, "t": True}, "allOf": [{"const": 2}]}
    asked += [
        ("#/$defs/a~1b", odd),
        ("#/allOf/0", odd),
        ("#/allOf/1", odd),
        ("#/$defs/x%20y", odd),
        ("#/$defs/t", odd),
        ("#/$defs/nothing", odd),
        ("#", prompt),
        ("#/$schema", prompt),
        (spec.SIMPLE_TIME_ID, prompt),
        (spec.SIMPLE_TIME_ID + "#/properties/Header", prompt),
        (spec.SIMPLE_TIME_ID + "#/properties/Header", odd),
        ("https://schemas.mpai.community/nowhere.json#/a", prompt),
    ]
    walked = 0
    for ref, root in asked:
        plain = _references._plain(ref, root)
        walked += plain is not None
        with monkeypatch.context() as patched:
            patched.setattr(_references, "_plain", lambda ref, root: None)
            try:
                expected: Any = spec.resolve(ref, root)
            except LookupError:
                expected = LookupError
        if plain is None:
            if expected is LookupError:
                with pytest.raises(LookupError):
                    spec.resolve(ref, root)
            else:
                assert spec.resolve(ref, root) == expected
        else:
            assert plain[0] is expected[0] and plain[1] is expected[1], ref
    bundled = [(ref, schema) for schema in known.values() for ref in _refs_in(schema)]
    assert all(_references._plain(ref, root) is not None for ref, root in bundled)  # (no referencing to import)
    assert (
        walked == len(bundled) + 4
    )  # (and of the odd ones: ~1, an array's item, an address with and without a pointer)


def test_clean_messages_are_read_without_referencing() -> None:
    """Compiling the typed readers of clean messages imports no ``referencing`` (40-80 ms a
    process: each worker of a check paid it on its first partition)."""
    code = (
        "import sys\n"
        "from pathlib import Path\n"
        "from pgm_explore.validation import read_clean_typed\n"
        "for path in sorted(Path(sys.argv[1]).glob('*.jsonl')):\n"
        "    for line in path.read_bytes().splitlines(keepends=True):\n"
        "        read_clean_typed(line)\n"
        "assert 'referencing' not in sys.modules\n"
    )
    folder = Path(__file__).resolve().parents[1] / "data" / "transcripts"
    subprocess.run([sys.executable, "-c", code, str(folder)], check=True, timeout=300)


def test_the_registry_validates_across_bundled_schemas() -> None:
    dt = spec.data_type("BKN-PAL")
    validator = jsonschema.Draft202012Validator(dt.schema, registry=spec.registry())
    errors = list(validator.iter_errors({"QueryTime": {"Header": "nope"}}))
    assert any(list(e.absolute_path)[:2] == ["QueryTime", "Header"] for e in errors)
