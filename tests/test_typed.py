"""The typed fast path (validation/_typed.py) is held to the schema engines.

Whatever the msgspec types accept must be clean as jsonschema-rs judges it (``is_clean``: the
message conforms and nothing in it is empty) and conform as python-jsonschema judges it:
over every message of the repository (examples, transcripts, corpora, invalid ones), the
messages the benchmarks generate, and systematic mutations of the valid ones. And
:func:`read_clean`, which reads the text itself, must give exactly what today's reader gives
(the same dict, its names in the same order) and refuse every text that reader reads
otherwise than msgspec does.
"""

from __future__ import annotations

import copy
import importlib.util
import json
import sys
import threading
from collections.abc import Callable, Iterator
from functools import cache
from pathlib import Path
from types import ModuleType
from typing import Any

import msgspec
import pytest

from pgm_explore.io import iter_documents, report
from pgm_explore.io._read import CLEAN, NOT_TAKEN, _parse, one_producer
from pgm_explore.io._read import iter_documents as read_documents
from pgm_explore.spec import DATA_TYPES, HEADERS, DataType, schema_resources
from pgm_explore.validation import _advisory, _schema, clean_fields, read_clean_typed, report_fields
from pgm_explore.validation import _typed as typed_module
from pgm_explore.validation._consistency import (
    _DECLARED,
    _GLANCES,
    RULE_FUNCTIONS,
    consistency_findings,
    struct_glance,
)
from pgm_explore.validation._typed import Unmapped, _Compiler, all_clean_types, is_clean_typed, read_clean
from tests.test_models_generated import _nodes

ROOT = Path(__file__).resolve().parents[1]
FOLDERS = [ROOT / "data", ROOT / "tests" / "data"]


def _bench(name: str) -> ModuleType:
    sys.dont_write_bytecode = True  # no __pycache__ inside benchmarks/
    folder = str(ROOT / "benchmarks")
    if folder not in sys.path:  # (a benchmark imports its siblings, as when run as a script)
        sys.path.append(folder)
    spec = importlib.util.spec_from_file_location(name, ROOT / "benchmarks" / f"{name}.py")
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module  # (dataclasses look their module up)
    spec.loader.exec_module(module)
    return module


def _typed(document: Any) -> tuple[DataType, Any] | None:
    if not isinstance(document, dict) or type(document.get("Header")) is not str:
        return None
    dt = HEADERS.get(document["Header"])
    return None if dt is None else (dt, document.get("Mode"))


def _judged(document: Any) -> tuple[bool, bool, bool] | None:
    """(typed accepts, is_clean, conforms by python-jsonschema) of a message with a known Header."""
    found = _typed(document)
    if found is None:
        return None
    dt, mode = found
    return (
        is_clean_typed(dt, mode, document),
        _advisory.is_clean(dt, document),
        _schema.is_valid(dt, document, exact=True),
    )


def _assert_sound(document: Any, what: str) -> bool:
    """Typed acceptance implies clean and conforming; returns whether the typed path accepted."""
    judged = _judged(document)
    if judged is None:
        return False
    typed, clean, conforms = judged
    if typed:
        assert clean and conforms, f"{what}: the typed path accepts what is_clean={clean}, conforms={conforms}"
    return typed


@pytest.fixture(autouse=True)
def _schema_order() -> Iterator[None]:
    """read_clean starts from the schemas' order of names (learn_order changes it)."""
    typed_module._decoders.cache_clear()
    yield
    typed_module._decoders.cache_clear()


# --- the messages ------------------------------------------------------------------------------


@cache
def repository_messages() -> tuple[tuple[str, bytes | None, Any], ...]:
    """(source, raw line or None, document) of every message in a data file of the repository."""
    found = []
    for folder in FOLDERS:
        for path in sorted(folder.rglob("*")):
            if path.suffix not in (".json", ".jsonl") or path.name.endswith(".expected.json"):
                continue
            for item in iter_documents(path):
                if item.problem is None:
                    found.append((item.source, item.raw, item.document))
    return tuple(found)


@cache
def bench_validate_messages() -> tuple[dict[str, Any], ...]:
    return tuple(_bench("bench_validate").messages(1_000))


@cache
def bench_check_lines() -> tuple[bytes, ...]:
    bench = _bench("bench_check")
    return tuple(
        line for number, template in enumerate(bench.templates("scenarios")) for line in template.episode(number)
    )


@cache
def clean_bases() -> tuple[dict[str, Any], ...]:
    """One clean message of each data type and Mode, and the richest clean ones (most values)."""
    clean = [d for _, _, d in repository_messages() if (judged := _judged(d)) and judged[1]]
    by_kind: dict[tuple[str, Any], dict[str, Any]] = {}
    for document in sorted(clean, key=lambda d: -len(json.dumps(d))):
        by_kind.setdefault((document["Header"], document.get("Mode")), document)
    return tuple(by_kind.values())


# --- the compiler --------------------------------------------------------------------------------


def test_every_data_type_and_mode_has_a_type() -> None:
    types = all_clean_types()
    assert set(types) == {(dt.name, mode) for dt in DATA_TYPES for mode in (dt.modes or (None,))}


@pytest.mark.parametrize(
    "schema",
    [
        {"type": "string", "format": "email"},
        {"type": "string", "pattern": r"^\d+$"},  # \d is Unicode in Python, ASCII in ECMA-262
        {"type": "string", "pattern": r"(?i)abc"},
        {"type": "number", "multipleOf": 2},
        {"type": "number", "maximum": 1.5},
        {"type": "object", "additionalProperties": {"type": "string"}},
        {"type": "object", "properties": {"a": {"type": "string"}}},  # open, with constraints
        {"type": "array", "uniqueItems": True},
        {"anyOf": [{"type": "string"}, {"type": "integer"}]},
        {"enum": [1, "a"]},
        {"type": "integer", "const": 1},
        {"$ref": "#/$defs/x", "minLength": 1},
    ],
    ids=json.dumps,
)
def test_what_is_not_mapped_exactly_raises_at_compile_time(schema: dict[str, Any]) -> None:
    with pytest.raises(Unmapped):
        _Compiler(DATA_TYPES[0]).node_type(schema, {"$defs": {"x": {"type": "string"}}}, {}, "x")


def test_the_bundled_schemas_are_what_the_compiler_was_written_for() -> None:
    """A keyword the compiler does not know in a bundled schema would raise at compile time; this
    lists the keywords there are, so that a new one is seen here first."""
    words: set[str] = set()

    def walk(node: Any, parent: str | None) -> None:
        if isinstance(node, dict):
            if parent not in ("properties", "$defs"):
                words.update(node)
            for key, value in node.items():
                walk(value, key)
        elif isinstance(node, list):
            for value in node:
                walk(value, None)

    for schema in schema_resources().values():
        walk(schema, None)
    known = {"$schema", "$id", "$ref", "$defs", "$comment", "title", "description", "default", "type", "const"}
    known |= {"enum", "properties", "required", "additionalProperties", "items", "minItems", "minLength"}
    known |= {"maxLength", "pattern", "minimum", "maximum", "oneOf", "allOf", "if", "then"}
    assert words <= known, f"new keywords in the bundled schemas: {sorted(words - known)}"


# --- soundness over the data -------------------------------------------------------------------


def test_repository_messages() -> None:
    accepted = clean = 0
    for source, _, document in repository_messages():
        accepted += _assert_sound(document, source)
        judged = _judged(document)
        clean += bool(judged and judged[1])
    assert clean > 100
    # Nearly every clean message of the repository goes the fast way.
    assert accepted >= 0.95 * clean, (accepted, clean)


def test_benchmark_messages_go_the_typed_way() -> None:
    """Every clean message the benchmarks generate is accepted, or the speed gain is lost."""
    documents = [*bench_validate_messages(), *(json.loads(line) for line in bench_check_lines())]
    clean = [d for d in documents if (j := _judged(d)) and j[1]]
    assert len(clean) > 0.9 * len(documents)
    missed = [d for d in clean if not _assert_sound(d, "benchmark")]
    assert not missed, f"{len(missed)} of {len(clean)} clean messages refused, e.g. {missed[0]}"


# --- soundness over mutations -----------------------------------------------------------------


def _replaced(document: dict[str, Any], path: tuple[Any, ...], value: Any) -> dict[str, Any]:
    changed = copy.deepcopy(document)
    container = changed
    for step in path[:-1]:
        container = container[step]
    container[path[-1]] = value
    return changed


def _dropped(document: dict[str, Any], path: tuple[Any, ...]) -> dict[str, Any]:
    changed = copy.deepcopy(document)
    container = changed
    for step in path[:-1]:
        container = container[step]
    del container[path[-1]]
    return changed


@cache
def _schema_strings() -> tuple[str, ...]:
    """Every enum and const string of the bundled schemas (each tried at every string)."""
    found: set[str] = set()

    def walk(node: Any) -> None:
        if isinstance(node, dict):
            for key, value in node.items():
                if key == "enum":
                    found.update(v for v in value if isinstance(v, str))
                elif key == "const" and isinstance(value, str):
                    found.add(value)
                else:
                    walk(value)
        elif isinstance(node, list):
            for value in node:
                walk(value)

    for schema in schema_resources().values():
        walk(schema)
    return tuple(sorted(found))


WRONG_VALUES: list[Any] = ["", "x", 0, -1, 1, 2, 256, 10**30, -(10**30), 2**63, 1.0, 0.5, -0.5, 1.5, 1e308, True]
WRONG_VALUES += [None, [], [""], {}, {"Unknown": 1}, [1], ["x"]]


def mutations(document: dict[str, Any]) -> Iterator[tuple[str, dict[str, Any]]]:
    for path, value in _nodes(document):
        if path:
            if isinstance(path[-1], str):
                yield f"drop {path}", _dropped(document, path)
            for wrong in WRONG_VALUES:
                if type(wrong) is not type(value) or wrong != value:
                    yield f"{path} = {wrong!r}", _replaced(document, path, wrong)
            if isinstance(value, str):
                for word in _schema_strings():
                    yield f"{path} = {word!r}", _replaced(document, path, word)
                yield f"{path} += duplicate key?", _replaced(document, path, value + "\n")
            if isinstance(value, list) and value:
                yield f"{path} doubled", _replaced(document, path, value + value)
                yield f"{path} + wrong", _replaced(document, path, [*value, "x"])
        if isinstance(value, dict):
            yield (
                f"unknown property in {path}",
                _replaced(document, (*path, "Unknown"), "x")
                if path
                else {
                    **document,
                    "Unknown": "x",
                },
            )
            yield f"empty object at {path}", _replaced(document, path, {}) if path else {}


@pytest.mark.slow  # (tens of thousands of messages, each judged by three engines)
def test_mutations_of_clean_messages() -> None:
    tried = accepted = 0
    for base in clean_bases():
        for what, changed in mutations(base):
            tried += 1
            accepted += _assert_sound(changed, f"{base['Header']} {base.get('Mode')}: {what}")
    assert len(clean_bases()) == sum(len(dt.modes or (None,)) for dt in DATA_TYPES)
    assert tried > 10_000
    assert 0 < accepted < tried  # (some mutations are clean too: another enum value, a number in range)


# --- read_clean: the text itself -------------------------------------------------------------


def _compact(document: Any) -> bytes:
    return json.dumps(document, separators=(",", ":"), ensure_ascii=False).encode() + b"\n"


def _spaced(document: Any, ascii_only: bool = False) -> bytes:
    """As Python's json module writes a line by default (with ``ensure_ascii=False`` as most do)."""
    return json.dumps(document, ensure_ascii=ascii_only).encode() + b"\n"


def _in_schema_order(document: Any, dt: DataType) -> Any:
    """``document`` with the names of each object in the order of its schema's properties."""
    return json.loads(msgspec.json.encode(msgspec.convert(document, all_clean_types()[_kind(dt, document)])))


def _kind(dt: DataType, document: Any) -> tuple[str, Any]:
    return dt.name, document.get("Mode") if dt.modes else None


def _as_today(raw: bytes) -> Any:
    """What today's reader makes of one line: the document, with no finding and no note, or None."""
    document, problem, notes = _parse(raw, 1)
    return document if problem is None and not notes else None


def _assert_reads_as_today(raw: bytes, what: str) -> bool:
    got = read_clean(raw)
    if got is None:
        return False
    today = _as_today(raw)
    assert today is not None, f"{what}: read_clean takes a text today's reader has a word about"
    # The same values, names in the same order, numbers of the same types.
    assert json.dumps(got) == json.dumps(today) and got == today, what
    found = _typed(got)
    assert found is not None and _advisory.is_clean(found[0], got), what
    # The bulk paths' report from the Struct, the rules reading only what they look at, is the
    # report on the dict, finding for finding.
    typed = read_clean_typed(raw)
    assert typed is not None and typed[0].dt is found[0] and typed[0].mode == (found[1] if found[0].modes else None)
    fields = clean_fields(*typed)
    assert fields == report_fields(got, built=False, clean=True) == report_fields(today, built=False), what
    return True


def test_read_clean_over_the_repository_and_the_benchmarks() -> None:
    lines = [raw for _, raw, _ in repository_messages() if raw is not None]
    lines += [*bench_check_lines(), *(_compact(d) for d in bench_validate_messages())]
    lines += [_spaced(d) for d in bench_validate_messages()] + [_spaced(json.loads(raw)) for raw in bench_check_lines()]
    # (bench_validate's messages written compactly have their names in another order: refused, sound.)
    accepted = sum(_assert_reads_as_today(raw, raw.decode("utf-8", "replace")[:80]) for raw in lines)
    # Written compactly, names in the schema's order (as nearly all the scenarios of bench_check are),
    # a clean message goes the fast way: the figures of that benchmark depend on it.
    scenarios = [raw for raw in bench_check_lines() if _judged(json.loads(raw))[1]]  # type: ignore[index]
    fast = sum(read_clean(raw) is not None for raw in scenarios)
    assert fast >= 0.98 * len(scenarios), (fast, len(scenarios))
    assert accepted > fast


def _text_mutations(raw: bytes) -> Iterator[tuple[str, bytes]]:
    text = raw.decode()
    document = json.loads(raw)
    for path, value in _nodes(document):
        if not path or not isinstance(path[-1], str):
            continue
        key = json.dumps(path[-1])
        at = text.find(key + ":")
        if at < 0:
            continue
        # A name written twice: first with another value, then with its own.
        yield f"{path} twice", (text[:at] + f'{key}:"other",' + text[at:]).encode()
        yield f"{path} twice, same value", (text[:at] + f"{key}:{json.dumps(value)}," + text[at:]).encode()
        start = at + len(key) + 1
        written = json.dumps(value, separators=(",", ":"), ensure_ascii=False)
        if not text.startswith(written, start):
            continue
        after = text[start + len(written) :]
        before = text[:start]
        if isinstance(value, str):
            for form in ('"\\ud800"', '"a\\ud800b"', '"\\u0041"', '"a\\/b"', '"\\u00e9"', '"é"', '"\\n"', '" "'):
                yield f"{path} = {form}", (before + form + after).encode()
        if isinstance(value, int | float) and not isinstance(value, bool):
            forms = ["0.99999999999999999999", "1.00000000000000000001", "-1e-400", "1e400", "1e0", "1.0", "1E2", "0.0"]
            forms += ["-0", "-0.0", "0.5", "5e-1", "100", "1e-7", "123456789012345678901234567890", "1.5", "2"]
            forms += ["9223372036854775808", "-9223372036854775809", "18446744073709551616"]
            for form in forms:
                yield f"{path} = {form}", (before + form + after).encode()
        yield f"{path} spaced", (before + " " + text[start:]).encode()
    yield "spaced at the end", raw.rstrip() + b"  \r\n"
    yield "no line break", raw.rstrip()
    yield "BOM", b"\xef\xbb\xbf" + raw
    yield "bad UTF-8", raw.replace(b'"', b'"\xff', 1)


def test_the_ways_a_message_begins() -> None:
    """read_clean looks a message's beginning up by its length: one for each way it knows."""
    lengths = {len(begins) for begins in typed_module._decoders()}
    assert lengths == {
        typed_module._WITH_MODE,
        typed_module._WITH_MODE_SPACED,
        typed_module._WITHOUT_MODE,
        typed_module._WITHOUT_MODE_SPACED,
    }


def test_read_clean_takes_spaced_lines_in_the_schemas_order() -> None:
    for base in clean_bases():
        ordered = _in_schema_order(base, HEADERS[base["Header"]])
        assert read_clean(_spaced(ordered)) == ordered
        assert read_clean(_compact(ordered)) == ordered
        # (Escaped as json.dumps does by default: read the same only if nothing was escaped.)
        escaped = _spaced(ordered, ascii_only=True)
        assert (read_clean(escaped) is None) == (b"\\u" in escaped)


def test_read_clean_over_text_mutations() -> None:
    ordered = [_in_schema_order(d, HEADERS[d["Header"]]) for d in clean_bases()]
    bases = [_compact(d) for d in ordered] + [_spaced(d) for d in ordered] + list(bench_check_lines()[:12])
    tried = accepted = 0
    for base in bases:
        assert read_clean(base) is not None
        for what, raw in _text_mutations(base):
            tried += 1
            accepted += _assert_reads_as_today(raw, what)
    assert tried > 2_000 and 0 < accepted < tried


def test_the_consistency_rules_read_the_struct_as_the_dict() -> None:
    """Clean messages on which the consistency rules have a word: each top-level property left out,
    or given each value its schema lists. Read as Structs (the rules converting only what they
    read), they are reported as their dicts are."""
    tried, empty_objects, seen = 0, 0, set()
    for base in clean_bases():
        dt = HEADERS[base["Header"]]
        properties = dt.schema.get("properties", {})
        names = list(base) + [name for name in properties if name not in base]
        for name in names:
            variants = [{k: v for k, v in base.items() if k != name}]
            variants += [{**base, name: value} for value in properties.get(name, {}).get("enum", ())]
            # An object whose properties may all be left out may be empty and still clean: the
            # rules read it as the dict does ({} is false), not as a Struct (always true).
            variants += [{**base, name: {}}, {**base, "Outcome": "answered", name: {}}]
            for variant in variants:
                raw = (
                    _compact(_in_schema_order(variant, dt))
                    if is_clean_typed(dt, variant.get("Mode"), variant)
                    else None
                )
                if raw is not None:
                    tried += 1
                    empty_objects += variant.get(name) == {}
                    assert _assert_reads_as_today(raw, f"{dt.name} {name}")
                    seen.update(f.rule for f in clean_fields(*read_clean_typed(raw))[3])  # type: ignore[misc]
    assert tried > 40
    assert {"outcome-payload", "feasibility-kind", "feasibility-missing", "commitment-kind"} <= seen, seen
    assert empty_objects >= 2  # (an empty Answer, an empty Representation)


def _glance_agrees(raw: bytes, what: str) -> set[str]:
    """The glance at the Struct the typed reader reads of ``raw`` says what the rules of its data
    type and Mode say of the message's dict: nothing to find, or something (see
    ``_consistency._glance``). Returns the codes the rules found."""
    typed = read_clean_typed(raw)
    if typed is None:
        return set()
    way, value = typed
    found = consistency_findings(way.dt, msgspec.to_builtins(value), way.mode)
    glance = struct_glance(type(value), way.dt, way.mode)
    if glance is None:
        assert not RULE_FUNCTIONS.get((way.dt.name, way.mode or "")), what
    else:
        assert glance(way.dt, value) is (not found), f"{what}: the rules found {found}"
    return {f.rule for f in found}


def _rich_bases() -> list[dict[str, Any]]:
    """The clean bases, the repository's first clean message with each of the properties that only
    some BKN-DAC messages have, and the benchmarks' first clean message of each data type and Mode."""
    bases = list(clean_bases())
    for name in ("Commitments", "ReleasedCommitmentIDs", "CommitmentStatus", "Failure", "Answer"):
        bases.append(next(d for _, _, d in repository_messages() if name in d and (j := _judged(d)) and j[1]))
    kinds = set()
    for document in bench_validate_messages():
        kind = (document["Header"], document.get("Mode"))
        if kind not in kinds and (judged := _judged(document)) and judged[1]:
            kinds.add(kind)
            bases.append(document)
    return bases


def test_the_rules_of_each_type_have_a_glance() -> None:
    """A message read as a Struct skips its rules only when they have a glance that looks for each
    of them: rules without one cost every clean message of their type a dict and the rules."""
    for key, rules in RULE_FUNCTIONS.items():
        assert key in _GLANCES and _GLANCES[key][1] == set(rules), key
    for (name, mode), kind in all_clean_types().items():
        dt = next(dt for dt in DATA_TYPES if dt.name == name)
        glance = struct_glance(kind, dt, mode)
        assert (glance is None) == (not RULE_FUNCTIONS.get((name, mode or ""))), (name, mode)
        assert glance is None or glance is _GLANCES[(name, mode or "")][0]


class _Unread:
    """A property a glance must not read (none of its rules reads it): any use of it fails."""

    def _read(self, *_: Any) -> Any:
        raise AssertionError("a glance reads a property its rules do not declare")

    __bool__ = __eq__ = __ne__ = __len__ = __iter__ = __getattr__ = _read  # type: ignore[assignment]
    __hash__ = None  # type: ignore[assignment]


def test_glances_read_only_what_their_rules_read() -> None:
    """Each glance, shown the Struct with every property that none of its rules declares made
    unusable, says what it says of the whole Struct."""
    glanced = 0
    for document in _rich_bases():
        dt = HEADERS[document["Header"]]
        typed = read_clean_typed(_compact(_in_schema_order(document, dt)))
        assert typed is not None
        way, value = typed
        key = (dt.name, way.mode or "")
        if key not in _GLANCES:
            continue
        read = set().union(*(read for _, read, _ in _DECLARED[key]))
        fields = {field.encode_name: field.name for field in msgspec.structs.fields(value)}
        shown = msgspec.structs.replace(value, **{a: _Unread() for name, a in fields.items() if name not in read})
        glance = _GLANCES[key][0]
        assert glance(dt, shown) is glance(dt, value), key
        glanced += 1
    assert glanced >= 8


def test_glances_say_what_their_rules_say() -> None:
    """Over the repository's messages, the benchmarks' and mutations of clean ones on which the
    rules have a word (steps and CommitmentIDs twice, each Kind, Outcome, Overall and PA Status,
    statements that do not parse, a Reason or a payload left out, an empty object), each glance
    says "nothing to find" exactly when its rules find nothing."""
    lines = [raw for _, raw, _ in repository_messages() if raw is not None]
    lines += [*bench_check_lines(), *(_spaced(d) for d in bench_validate_messages())]
    seen = set()
    for raw in lines:
        seen |= _glance_agrees(raw, raw.decode("utf-8", "replace")[:80])
    tried = 0
    for base in _rich_bases():
        dt = HEADERS[base["Header"]]
        if (dt.name, base.get("Mode") or "") not in _GLANCES:
            continue
        for what, changed in mutations(base):
            if is_clean_typed(dt, changed.get("Mode"), changed):
                tried += 1
                seen |= _glance_agrees(_compact(_in_schema_order(changed, dt)), f"{dt.name}: {what}")
    assert tried > 1_000
    codes = {"duplicate-step", "statement-syntax", "feasibility-kind", "feasibility-missing", "commitment-kind"}
    codes |= {"duplicate-commitment", "overall-mismatch", "reason-missing", "outcome-payload", "failure-outcome"}
    assert codes <= seen, codes - seen


@pytest.mark.parametrize("name", ["bench-check.jsonl", "bench-validate.jsonl", "repository.jsonl"])
def test_the_reading_path_reports_the_same_with_the_typed_reader(tmp_path: Path, name: str) -> None:
    """What the bulk paths read with the typed reader is what the plain reader reads, and their
    reports are the same, finding for finding; and the typed reader does read most lines."""
    path = tmp_path / name
    if name == "bench-check.jsonl":
        _bench("bench_check").generate(path, 2_000)
    elif name == "bench-validate.jsonl":
        _bench("bench_validate").generate(path, 2_000)
    else:  # every line of the repository's JSON Lines files, one after another
        path.write_bytes(
            b"".join(raw if raw.endswith(b"\n") else raw + b"\n" for _, raw, _ in repository_messages() if raw)
        )
    plain = list(read_documents(path))
    typed = list(read_documents(path, typed=True))
    assert [(i.source, i.problem, i.notes) for i in typed] == [(i.source, i.problem, i.notes) for i in plain]
    assert [json.dumps(i.document) for i in typed] == [json.dumps(i.document) for i in plain]
    assert [report(i) for i in typed] == [report(i) for i in plain]
    taken = sum(i.notes is CLEAN for i in typed)
    # (bench_validate writes its names in another order than the schemas': learn_order teaches it.)
    assert taken >= (0.9 * len(typed) if name.startswith("bench") else 0), (taken, len(typed))
    # The lines it refused, reported with no clean verdict asked first: as the plain reader's
    # (above), and among them every one that does not conform.
    refused = [report(i) for i in typed if i.notes is NOT_TAKEN]
    assert sum(not r.conforms for r in refused) == sum(not report(i).conforms for i in plain if i.problem is None)


def _reordered(value: Any, top: bool = True) -> Any:
    """``value`` with the names of each object in reverse order, but Header and Mode first (the
    beginning that says a message's data type and Mode)."""
    if isinstance(value, dict):
        first = [name for name in ("Header", "Mode") if top and name in value]
        names = first + [name for name in reversed(list(value)) if name not in first]
        return {name: _reordered(value[name], False) for name in names}
    if isinstance(value, list):
        return [_reordered(item, False) for item in value]
    return value


def test_learn_order_takes_another_order_of_names_soundly() -> None:
    """A producer that writes the names in another order than the schema's: once the reader has
    read one such clean line, read_clean takes the next ones, as today's reader reads them, and
    still refuses whatever today's reader reads otherwise (the text mutations)."""
    for base in clean_bases():
        for written in (_compact, _spaced):
            typed_module._decoders.cache_clear()
            raw = written(_reordered(base))
            assert read_clean(raw) is None or _reordered(base) == base
            typed_module.learn_order(raw, json.loads(raw))
            assert _assert_reads_as_today(raw, "reordered")
            tried = accepted = 0
            for what, mutated in _text_mutations(raw):
                tried += 1
                accepted += _assert_reads_as_today(mutated, f"reordered: {what}")
            assert 0 < accepted < tried
    # A message that is not clean teaches nothing.
    typed_module._decoders.cache_clear()
    spoiled = _reordered({**clean_bases()[0], "DialogID": ""})
    typed_module.learn_order(_compact(spoiled), spoiled)
    assert read_clean(_compact(_reordered(clean_bases()[0]))) is None


def test_learn_order_stops_teaching_after_its_lessons() -> None:
    """Lines whose orders cannot all be taught (each teaches its own) stop being lessons after
    ``_LESSONS`` of them, so that a producer whose orders never fit pays a lesson (a walk over the
    whole message) a bounded number of times, and its lines are still read as today."""
    base = clean_bases()[0]
    typed_module._decoders.cache_clear()
    way = typed_module._beginning(_compact(base))
    assert way is not None and way.lessons == typed_module._LESSONS
    for _ in range(typed_module._LESSONS + 5):
        raw = _compact(_reordered(base))
        typed_module.learn_order(raw, json.loads(raw))
    assert way.lessons == 0
    taught = way.decode
    typed_module.learn_order(_compact(base), base)  # (no lesson left: nothing changes)
    assert way.decode is taught
    assert _assert_reads_as_today(_compact(_reordered(base)), "taught before the lessons ran out")


def _rotated(value: dict[str, Any], by: int) -> dict[str, Any]:
    """``value`` with its names after Header turned round by ``by`` (the values as they are)."""
    rest = list(value)[1:]
    return {name: value[name] for name in ["Header", *rest[by:], *rest[:by]]}


def _several_orders(base: dict[str, Any], count: int) -> list[dict[str, Any]]:
    """``count`` orders of ``base``'s names (it has more than three) no two of which one type
    writes, a name before another in one and after it in the other: the schema's first."""
    return [base, _reordered(base)] + [_rotated(base, by) for by in range(1, count - 1)]


def _richest_prompt() -> dict[str, Any]:
    return next(b for b in clean_bases() if b["Header"] == "PGM-PCP-V1.0")


def test_several_orders_under_one_beginning_are_read_soundly() -> None:
    """A producer whose messages come in orders no one type writes (the scenarios' PC Prompts):
    each order taught is a layout of its own, and read_clean takes lines of every one of them,
    in any succession, as today's reader reads them; and still refuses whatever today's reader
    reads otherwise (the text mutations of each)."""
    for written in (_compact, _spaced):
        typed_module._decoders.cache_clear()
        orders = _several_orders(_richest_prompt(), typed_module._LAYOUTS)
        lines = [written(order) for order in orders]
        for raw, order in zip(lines[1:], orders[1:], strict=True):
            assert read_clean(raw) is None  # (not yet taught)
            typed_module.learn_order(raw, order)
        way = typed_module._beginning(lines[0])
        assert way is not None and len(way.layouts) == typed_module._LAYOUTS  # (the schema's kept)
        for raw in lines + lines[::-1] + lines:
            assert _assert_reads_as_today(raw, "one of several orders")
            assert way.decode is way.layouts[0][1] and read_clean(raw) is not None  # (the last that read, first)
        for raw in lines:
            tried = accepted = 0
            for what, mutated in _text_mutations(raw):
                way.misses = 0  # (every layout stays tried here: the bound has a test of its own)
                tried += 1
                accepted += _assert_reads_as_today(mutated, f"several orders: {what}")
            assert 0 < accepted < tried and len(way.layouts) == typed_module._LAYOUTS


def test_orders_that_merge_make_one_layout() -> None:
    """Messages that leave out different names, in orders that agree, teach one layout."""
    base = _richest_prompt()
    required = set(HEADERS[base["Header"]].schema.get("required", ()))
    optional = [name for name in base if name not in required][-2:]
    typed_module._decoders.cache_clear()
    reordered = _reordered(base)
    taught = 0
    for left_out in optional:
        partial = {name: value for name, value in reordered.items() if name != left_out}
        if _advisory.is_clean(HEADERS[base["Header"]], partial):
            typed_module.learn_order(_compact(partial), partial)
            taught += 1
    assert taught == 2, optional
    typed_module.learn_order(_compact(reordered), reordered)
    assert _assert_reads_as_today(_compact({n: v for n, v in reordered.items() if n != optional[0]}), "merged")
    way = typed_module._beginning(_compact(base))
    assert way is not None and len(way.layouts) == 2  # (the schema's order, and the one taught)
    assert _assert_reads_as_today(_compact(reordered), "merged")
    assert _assert_reads_as_today(_compact(base), "the schema's order")


def test_the_layouts_of_a_beginning_are_bounded() -> None:
    """A way of beginning keeps at most ``_LAYOUTS`` orders, dropping the one that read a line
    longest ago; and lines that fit none of them stop being tried with the others after
    ``_MISSES`` of them (each costs a decode with each), while those that fit the first are still
    taken: every line is still read as today's reader reads it."""
    typed_module._decoders.cache_clear()
    orders = _several_orders(_richest_prompt(), typed_module._LAYOUTS + 2)
    lines = [_compact(order) for order in orders]
    for raw, order in zip(lines[1:], orders[1:], strict=True):
        typed_module.learn_order(raw, order)
    way = typed_module._beginning(lines[0])
    assert way is not None and len(way.layouts) == typed_module._LAYOUTS
    # (Taught last to first: the schema's order and the first order taught were used longest ago.)
    assert read_clean(lines[0]) is None and read_clean(lines[1]) is None
    assert all(_assert_reads_as_today(raw, "kept") for raw in lines[2:])
    way.lessons = 0  # (what follows must not teach: the lines that fit none stay so)
    front = way.layouts[0][1]
    for _ in range(typed_module._MISSES + 1):
        assert read_clean(lines[0]) is None  # (fits none: each a decode with every layout)
    assert len(way.layouts) == 1 and way.decode is front
    assert _assert_reads_as_today(lines[-1], "the layout that read last")
    assert all(read_clean(raw) is None for raw in lines[:-1])


def test_orders_learnt_from_one_file_change_nothing_another_file_reads(tmp_path: Path) -> None:
    """The orders learn_order keeps, and its budgets of lessons and misses, are the process's (a
    notebook's kernel reads corpus after corpus): what a file reads as, item for item and report
    for report, is the same after another file taught its orders and spent those budgets as in a
    fresh process. Only which lines the typed reader takes may differ, never what they read as."""
    orders = _several_orders(_richest_prompt(), typed_module._LAYOUTS + 2)
    taught = tmp_path / "taught.jsonl"
    _bench("bench_validate").generate(taught, 300)
    with taught.open("ab") as out:  # (orders no one type writes, over and over: the lessons spent)
        for _ in range(typed_module._LESSONS + typed_module._MISSES):
            out.writelines(_compact(order) + b"\n" for order in orders)
    other = tmp_path / "other.jsonl"
    _bench("bench_check").generate(other, 300)
    with other.open("ab") as out:
        out.writelines(raw if raw.endswith(b"\n") else raw + b"\n" for _, raw, _ in repository_messages() if raw)
        out.writelines(_spaced(order) + b"\n" for order in orders[:3])
        out.writelines(_compact(order) + b"\n" for order in reversed(orders))
        # (an order the other file never taught: learnt here in a fresh process, not once its lessons are spent)
        unseen = _rotated(_richest_prompt(), len(orders))
        out.writelines(_compact(unseen) + b"\n" for _ in range(5))

    taken: list[int] = []

    def read(path: Path, typed: bool = True) -> list[tuple[Any, ...]]:
        items = list(read_documents(path, typed=typed))
        taken.append(sum(i.notes is CLEAN for i in items))
        return [(i.source, i.problem, i.notes, json.dumps(i.document), report(i)) for i in items]

    typed_module._decoders.cache_clear()
    fresh = read(other)
    typed_module._decoders.cache_clear()
    read(taught)
    way = typed_module._beginning(_compact(orders[0]))
    assert way is not None and way.lessons == 0 and way.layouts  # (taught, and its lessons spent)
    assert read(other) == fresh == read(other, typed=False)
    assert taken[0] != taken[2], taken  # (the history shows in the lines taken, not in what they read as)


def _in_threads(read: Callable[[int], None], count: int) -> None:
    """``read(start)`` in ``count`` threads at once, which change as often as they can."""
    switch = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)
    try:
        threads = [threading.Thread(target=read, args=(start,)) for start in range(count)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
    finally:
        sys.setswitchinterval(switch)


def test_threads_reading_several_orders_at_once() -> None:
    """Threads of one process (a Dask worker of several threads) reading lines of several orders,
    and lines that fit none, while the layouts change under them: every line is read as today's
    reader reads it, none raises."""
    typed_module._decoders.cache_clear()
    orders = _several_orders(_richest_prompt(), typed_module._LAYOUTS + 1)
    lines = [_compact(order) for order in orders]
    today = [json.dumps(_as_today(raw)) for raw in lines]
    unfit = lines[0].replace(b'"Header":"PGM-PCP-V1.0",', b'"Header":"PGM-PCP-V1.0", ', 1)
    failures: list[BaseException] = []

    def read(start: int) -> None:
        try:
            for turn in range(400):
                at = (start + turn) % len(lines)
                got = read_clean(lines[at])
                if got is None:
                    typed_module.learn_order(lines[at], orders[at])
                else:
                    assert json.dumps(got) == today[at]
                assert read_clean(unfit) is None
        except BaseException as error:  # (handed to the test's thread)
            failures.append(error)

    _in_threads(read, 4)
    assert not failures, failures
    way = typed_module._beginning(lines[0])
    assert way is not None and 1 <= len(way.layouts) <= typed_module._LAYOUTS


def test_a_corpus_of_small_files_in_several_orders_is_read_typed(tmp_path: Path) -> None:
    """The scenarios' transcripts in files of 10 messages (a PC Prompt opens most of their lines,
    in the orders of several producers): one producer's pieces are read on the typed path, and
    what it reads and reports is what the plain reader does."""
    bench = _bench("bench_check")
    scenarios = bench.templates("scenarios")
    paths = []
    for number in range(40):
        path = tmp_path / f"{number:03d}.jsonl"
        path.write_bytes(b"".join(bench.interleaved(scenarios, 10, at_once=8, first=number * 1000)))
        paths.append(path)
    with one_producer():
        typed = [item for path in paths for item in read_documents(path, typed=True)]
    plain = [item for path in paths for item in read_documents(path)]
    assert [json.dumps(i.document) for i in typed] == [json.dumps(i.document) for i in plain]
    assert [report(i) for i in typed] == [report(i) for i in plain]
    taken = sum(i.notes is CLEAN for i in typed)
    assert taken >= 0.9 * len(typed), (taken, len(typed))


def test_a_number_next_to_an_integer_is_refused() -> None:
    """``1.00000000000000000001`` is read as a double of 1.0 by msgspec, but as the double next to
    1 above it by today's reader: a Confidence (at most 1) that does not conform. So the text goes
    the old way."""
    line = next(raw for raw in bench_check_lines() if b'"Confidence":0.55' in raw)
    assert read_clean(line) is not None
    for form in (b"1.00000000000000000001", b"0.99999999999999999999", b"1e0"):
        assert read_clean(line.replace(b"0.55", form, 1)) is None
    document = _parse(line.replace(b"0.55", b"1.00000000000000000001", 1), 1)[0]
    assert not _schema.is_valid(HEADERS[document["Header"]], document)


def test_a_duplicate_name_and_a_lone_surrogate_are_refused() -> None:
    line = bench_check_lines()[0]
    assert read_clean(line) is not None
    twice = line.replace(b'"DialogID":', b'"DialogID":"dlg-other","DialogID":', 1)
    assert read_clean(twice) is None and _parse(twice, 1)[2]  # (today's reader notes it)
    surrogate = line.replace(b'"DialogID":"', b'"DialogID":"\\ud800', 1)
    assert read_clean(surrogate) is None and _parse(surrogate, 1)[1] is not None


def test_structs_written_back_omit_what_was_not_there() -> None:
    """The check that a text is exactly what msgspec writes relies on UNSET fields being left out."""
    line = bench_check_lines()[0]
    document = json.loads(line)
    dt, mode = _typed(document)  # type: ignore[misc]
    value = msgspec.json.decode(line, type=all_clean_types()[(dt.name, mode if dt.modes else None)])
    assert msgspec.json.encode(value) == line.rstrip()


def _with_separators_in_strings(document: dict[str, Any]) -> Iterator[tuple[str, dict[str, Any]]]:
    """``document`` with one string value at a time holding what separates JSON's tokens."""
    for path, value in _nodes(document):
        if path and isinstance(value, str) and path[-1] not in ("Header", "Mode"):
            for form in (", ", ": ", '", "', '": "', ",:", " , : ", "a,\tb"):
                yield f"{path} = {form!r}", _replaced(document, path, value + form)


def test_separators_inside_strings_are_read_as_today() -> None:
    """A value holding ", " or ": " (what Python's json module writes between tokens) is part of a
    string: compact or spaced, the line is read as today's reader reads it, or refused."""
    tried = accepted = 0
    for base in clean_bases():
        ordered = _in_schema_order(base, HEADERS[base["Header"]])
        for what, document in _with_separators_in_strings(ordered):
            for raw in (_compact(document), _spaced(document)):
                tried += 1
                accepted += _assert_reads_as_today(raw, what)
    # (Most values are free text: those lines go the fast way, spaced as well as compact.)
    assert tried > 200 and accepted > tried // 2, (tried, accepted)


def test_odd_spacing_is_read_as_today() -> None:
    """Lines spaced otherwise than Python's json module or msgspec write them, at the beginning
    (where the way a line is written is looked up) and after it, and lines too short to have a
    beginning: read as today or refused, never raising."""
    tried = accepted = 0
    for base in clean_bases():
        ordered = _in_schema_order(base, HEADERS[base["Header"]])
        compact, spaced = _compact(ordered), _spaced(ordered)
        odd = [
            compact.replace(b'{"Header":', b'{"Header": ', 1),  # (a spaced beginning, a compact rest)
            spaced.replace(b'{"Header": ', b'{"Header":', 1),  # (a compact beginning, a spaced rest)
            spaced.replace(b'{"Header": ', b'{"Header":  ', 1),
            spaced.replace(b'{"Header": ', b'{"Header" : ', 1),
            spaced.replace(b'{"Header": ', b'{"Header":\t', 1),
            spaced.replace(b'{"Header": ', b'{ "Header": ', 1),
            spaced.replace(b", ", b",  ", 1),
            spaced.replace(b", ", b" , ", 1),
            spaced.replace(b": ", b":", 1),
            spaced[: spaced.rindex(b", ")] + b",\n " + spaced[spaced.rindex(b", ") + 2 :],
            compact.replace(b",", b", ", 1),
            compact.replace(b",", b"\n,", 1),
        ]
        assert read_clean(compact) == ordered and read_clean(spaced) == ordered
        for number, raw in enumerate(odd):
            tried += 1
            accepted += _assert_reads_as_today(raw, f"{base['Header']} odd spacing {number}")
    assert tried > 50 and accepted < tried
    for short in (b"", b"\n", b"{}", b"{", b'{"Header"', b'{"Header": ', b'{"Header":"PGM-PCP-V1.0"}', b"[1, 2]"):
        assert read_clean(short) is None


def test_threads_writing_back_at_once() -> None:
    """Threads of one process reading lines of many lengths, compact and spaced, at once, each
    writing the text it compares into its own buffer: every line is read as today's reader does."""
    ordered = [_in_schema_order(d, HEADERS[d["Header"]]) for d in clean_bases()]
    lines = [_compact(d) for d in ordered] + [_spaced(d) for d in ordered]
    lines.sort(key=len)
    assert len(lines[-1]) > 2 * len(lines[0])
    today = [json.dumps(_as_today(raw)) for raw in lines]
    failures: list[BaseException] = []

    def read(start: int) -> None:
        try:
            for turn in range(4000):
                at = (start * 7 + turn * (start + 1)) % len(lines)
                got = read_clean(lines[at])
                assert got is not None and json.dumps(got) == today[at]
        except BaseException as error:  # (handed to the test's thread)
            failures.append(error)

    _in_threads(read, 4)
    assert not failures, failures[:1]


# (A Data Exchange Metadata's DataType, the one string of the schemas with a pattern, as producers
# write it and otherwise: the spec's codes, another code the pattern takes, and what it does not.)
_DATA_TYPES = (
    *HEADERS,
    "PGM-KDA-V1.1",
    "ABC-DEF-V12.34",
    "ABC-DEF-V1.0\n",  # (the pattern's $: JSON Schema's, an ECMA-262 end; a line break after is no end)
    "pgm-kda-v1.0",
    "ABC-DEF-V123.4",
    "ABC-DEF-V1.",
    "",
)


def test_a_datatype_the_spec_does_not_name_is_read_as_exactly_as_its_own() -> None:
    """The readers read a line with a fast type, where the DataType is one of the spec's codes (a
    table msgspec looks up, not its pattern matched each time), and with the exact type when it
    refuses: whatever the DataType, a line is taken exactly when its message is clean, and read as
    today's reader reads it, in the schema's order and in a taught one, compact and spaced."""
    bases = [base for base in clean_bases() if isinstance(base.get("DataXMData"), dict)]
    assert len(bases) == len(all_clean_types())  # (every data type and Mode has one)
    fast = typed = refused = 0
    for base in bases:
        for order in (None, _reordered):
            typed_module._decoders.cache_clear()
            if order is not None:
                for written in (_compact, _spaced):
                    typed_module.learn_order(written(order(base)), order(base))
            for value in _DATA_TYPES:
                document = copy.deepcopy(base)
                document["DataXMData"]["DataType"] = value
                dt, mode = _typed(document)  # type: ignore[misc]
                clean = _advisory.is_clean(dt, document)
                assert is_clean_typed(dt, mode, document) is clean, value
                for written in (_compact, _spaced):
                    raw = written(order(document) if order else document)
                    assert _assert_reads_as_today(raw, f"DataType {value!r}") is clean, value
                    got = read_clean_typed(raw)
                    way = typed_module._beginning(raw)
                    if got is None:
                        refused += 1
                    elif way is not None and way.exact is None:
                        fast += 1
                    else:
                        typed += 1
    # The spec's codes went the fast way, the other clean ones the exact way, the others neither.
    assert fast and typed and refused
