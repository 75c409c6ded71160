"""The facts the transcript rules read, read from the typed Structs of a clean message, are the
facts read from its dict (pgm_explore/dialogue/_facts.py).

A clean line is decoded into msgspec Structs compiled from the schemas (``_typed``), and the
bulk path reads its facts from them (``struct_facts``), with no dict built; every other message
is read from its dict (``facts_of``). The two readings must agree, field for field, over every
message of the repository, the messages the benchmarks generate (every mix of bench_check, those
of bench_validate), the mutations of test_typed.py (each clean one), messages whose names come in
another order (the types learn_order builds), and messages made to put Entity ids where only the
dict walk of an open object finds them.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import msgspec
import pytest

from pgm_explore.dialogue import TranscriptChecker
from pgm_explore.dialogue._facts import (
    FILLED,
    Facts,
    PackedFacts,
    _facts_of,
    _Packed,
    facts_of,
    struct_facts,
    unpacked_facts,
)
from pgm_explore.io import Pushed, iter_documents, report
from pgm_explore.io._partitions import Left, Partition, work_on_partition
from pgm_explore.spec import HEADERS
from pgm_explore.validation import Finding
from pgm_explore.validation import _typed as typed_module
from pgm_explore.validation._typed import all_clean_types, learn_order, read_clean
from tests.test_typed import (
    _bench,
    _compact,
    _reordered,
    _spaced,
    bench_check_lines,
    bench_validate_messages,
    clean_bases,
    mutations,
    repository_messages,
)

FINDINGS: tuple[Finding, ...] = (Finding.of("duplicate-key", ("DialogID",), "DialogID is written twice."),)


@pytest.fixture(autouse=True)
def _schema_order() -> Iterator[None]:
    """read_clean starts from the schemas' order of names (learn_order changes it)."""
    typed_module._decoders.cache_clear()
    yield
    typed_module._decoders.cache_clear()


def _kind(document: dict[str, Any]) -> tuple[str, Any]:
    dt = HEADERS[document["Header"]]
    return dt.name, document.get("Mode") if dt.modes else None


def _struct(document: Any) -> Any:
    """The typed Struct of ``document``, or None when the types refuse it (not clean, or no type)."""
    if not isinstance(document, dict) or type(header := document.get("Header")) is not str or header not in HEADERS:
        return None
    try:
        return msgspec.convert(document, all_clean_types()[_kind(document)], strict=True)
    except (msgspec.ValidationError, KeyError, TypeError):  # (a Mode that is no string: no type)
        return None


def _assert_same(value: Any, document: dict[str, Any], what: str) -> Facts:
    """The facts of the Struct ``value`` are those of ``document``, its dict as the reader makes it."""
    type_name, mode = _kind(document)
    for findings in ((), FINDINGS):
        from_struct = struct_facts(value, type_name, mode, findings)
        from_dict = _facts_of(document, type_name, mode, findings)
        assert from_struct == from_dict, f"{what}:\n struct {from_struct}\n dict   {from_dict}"
        # The same values of the same types (1 == 1.0 == True), sent the same way (but the order
        # of a set's members, which follows the order they were met in).
        assert _sent(from_struct) == _sent(from_dict), what
    return from_dict


def _sent(facts: Facts) -> bytes:
    return msgspec.msgpack.encode(msgspec.structs.replace(facts, entities=None))


def _assert_line(raw: bytes, what: str) -> bool:
    """A line read_clean takes has the same facts from its Struct as from its dict."""
    document = read_clean(raw)
    if document is None:
        return False
    way = typed_module._beginning(raw)
    assert way is not None and way.decode is not None
    _assert_same(way.decode(raw), json.loads(raw), what)
    return True


def _assert_document(document: Any, what: str) -> bool:
    """A clean document has the same facts from its Struct as from the dict the Struct writes
    (the dict read_clean gives for a line written as the Struct writes it: its names in the
    Struct's order, which is the order of ``filled``)."""
    value = _struct(document)
    if value is None:
        return False
    written = msgspec.to_builtins(value)
    assert written == document, what
    _assert_same(value, written, what)
    return True


def test_the_repository_and_the_benchmarks() -> None:
    documents = [d for _, _, d in repository_messages()] + list(bench_validate_messages())
    assert sum(_assert_document(d, "document") for d in documents) > 0.5 * len(documents)
    bench = _bench("bench_check")
    lines = [raw for _, raw, _ in repository_messages() if raw is not None] + list(bench_check_lines())
    for mix in bench.MIXES:
        lines += [line for number, template in enumerate(bench.templates(mix)) for line in template.episode(number)]
    lines += [_spaced(d) for d in bench_validate_messages()]
    taken = sum(_assert_line(raw, raw.decode("utf-8", "replace")[:80]) for raw in lines)
    assert taken > 0.5 * len(lines)  # (the repository holds invalid messages on purpose)
    # Every data type and Mode, each kind of facts, is among them.
    kinds = {_kind(json.loads(raw)) for raw in lines if read_clean(raw) is not None}
    assert kinds == set(all_clean_types())


@pytest.mark.slow  # (tens of thousands of messages)
def test_mutations_of_clean_messages() -> None:
    tried = accepted = 0
    for base in clean_bases():
        for what, changed in mutations(base):
            tried += 1
            accepted += _assert_document(changed, f"{base['Header']} {base.get('Mode')}: {what}")
    assert tried > 10_000 and 1_000 < accepted < tried


def test_names_in_another_order() -> None:
    """Lines whose names come in another order are read with the types learn_order builds, whose
    fields are in that order: the facts (``filled``, in the order of the names) follow it."""
    for base in clean_bases():
        for written in (_compact, _spaced):
            typed_module._decoders.cache_clear()
            raw = written(_reordered(base))
            learn_order(raw, json.loads(raw))
            assert _assert_line(raw, f"reordered {base['Header']} {base.get('Mode')}")


def _with(document: dict[str, Any], path: tuple[Any, ...], value: Any) -> dict[str, Any]:
    changed = copy.deepcopy(document)
    container = changed
    for step in path[:-1]:
        container = container.setdefault(step, {}) if isinstance(container, dict) else container[step]
    container[path[-1]] = value
    return changed


def _base(header: str, mode: str | None) -> dict[str, Any]:
    return next(d for d in clean_bases() if d["Header"] == header and d.get("Mode") == mode)


def test_entity_ids_where_the_types_leave_objects_open() -> None:
    """Ids in an open object (a PC Prompt's SceneContext) are found by the dict walk, at any depth,
    under names ending in ID or IDs, in lists of lists too; ids in typed members (ResolvedReferents,
    Affordances) by the paths worked out from the types; names that only look like ids are not."""
    prompt = _base("PGM-PCP-V1.0", None)
    scene = {
        "RoomID": "room-1",
        "Objects": [{"ObjectID": "obj-1", "PartIDs": ["part-1", ["part-2"]], "Name": "chair"}],
        "Ids": ["not-an-id"],
        "Nested": {"Deeper": {"SeatIDs": [["seat-1"]], "Count": 3}},
    }
    changed = _with(prompt, ("SceneContext",), scene)
    changed = _with(changed, ("ResolvedReferents",), [{"Expression": "it", "EntityID": "ent-1"}, {"Expression": "x"}])
    changed = _with(changed, ("ActionContext", "Affordances"), [{"EntityID": "ent-2", "Action": "sit"}])
    assert _assert_document(changed, "SceneContext with ids")
    facts = _facts_of(changed, "PC Prompt", None, ())
    assert facts.entities == {"room-1", "obj-1", "part-1", "part-2", "seat-1", "ent-1", "ent-2"}


def test_filled_members_and_empty_objects() -> None:
    """A Response's ``filled`` has the bit of each member with content that a rule asks about; an
    object whose members are all left out (``{}``) has none, read from the Struct as from the dict."""
    response = _base("PGM-KPR-V1.0", "RS")
    representation = {"Text": "a chair", "Intent": {}, "GoalConstraints": ["sit"], "Propositions": []}
    changed = _with(response, ("Representation",), representation)
    if _assert_document(changed, "an empty Intent"):
        facts = _facts_of(changed, "BKN-PRC", "RS", ())
        assert facts.filled == FILLED["Representation.GoalConstraints"]  # (no rule asks about Text)
    answer = {"Text": "a chair", "Affordances": [], "Relations": [{"Subject": "a", "Predicate": "b", "Object": "c"}]}
    dac = _with(_with(_base("PGM-KDA-V1.0", "RS"), ("Answer",), answer), ("CommitmentStatus",), [])
    _assert_document(dac, "an Answer with an empty list")
    assert _facts_of(dac, "BKN-DAC", "RS", ()).filled == FILLED["Answer.Text"] | FILLED["Answer.Relations"]
    stance = _with(_base("PGM-KPA-V1.0", "RS"), ("Stance",), {"Label": "polite"})
    assert _assert_document(stance, "a Stance without Role or Locale")
    assert _facts_of(stance, "BKN-PAL", "RS", ()).stance == (None, None)


def test_a_partition_is_packed_from_the_structs(tmp_path: Path) -> None:
    """A partition worked on as a worker does (clean lines as Structs, the rest as items, packed)
    gives, once unpacked, every message's facts as read from its dict, findings included: the
    consistency rules' on a clean line, the schema's on one that is not, each distinct tuple of
    findings sent once; a line the reader refuses is left for the client."""
    lines = list(bench_check_lines()[:200])
    request = next(line for line in lines if b'"ProcessActions"' in line)
    miswritten = request.replace(b'"Statement":"MM-', b'"Statement":"MM-Nonsense ', 1)
    assert read_clean(miswritten) is not None  # (clean to the schema: the rules have a word)
    header_only = b'{"Header": "PGM-KPA-V1.0"}\n'
    lines[10:10] = [miswritten, header_only, b"\n", header_only, b"{oops\n", miswritten, header_only]
    path = tmp_path / "partition.jsonl"
    path.write_bytes(b"".join(lines))

    count, done = work_on_partition(Pushed(_Packed), Partition(str(path), 0, None))
    assert count == len(lines)
    got: list[tuple[int, Facts]] = []
    packed = [value for value in done if not isinstance(value, Left)]
    assert [value.number for value in done if isinstance(value, Left)] == [15]
    for batch in packed:
        assert isinstance(batch, PackedFacts)
        numbers, facts = unpacked_facts(batch)
        got += zip(numbers, facts, strict=True)
    expected = [
        (item.line, facts_of(item.document, report(item))) for item in iter_documents(path) if item.problem is None
    ]
    assert got == expected
    findings = [facts.findings for _, facts in got if facts.findings]
    assert len(findings) == 5 and findings[0] == findings[3]
    assert any(f.rule == "statement-syntax" for f in findings[0])
    assert sum(len(batch.table) for batch in packed) == 2 + 2  # (one tuple of each kind a run)


def test_the_ids_travel_joined_and_a_nul_or_a_non_string_keeps_them_apart() -> None:
    """The ids are one string when all three are strings without a NUL, a tuple otherwise, read
    alike from the Struct and from the dict; the checker compares them either way, and names the
    values a context-mismatch finds, a NUL in them too."""
    prompt, request = _base("PGM-PCP-V1.0", None), _base("PGM-KPR-V1.0", "RQ")
    ids = tuple(prompt[key] for key in ("MInstance", "UEnvironment", "SessionID"))
    for key, value in (("DialogID", prompt["DialogID"]), ("UEnvironment", ids[1])):
        request = _with(request, (key,), value)
    assert _facts_of(prompt, "PC Prompt", None, ()).ids == "\0".join(ids)
    for session in ("s\0-1", 7):
        odd = _with(prompt, ("SessionID",), session)
        assert _facts_of(odd, "PC Prompt", None, ()).ids == (*ids[:2], session)
    assert _assert_document(_with(prompt, ("SessionID",), "s\0-1"), "a NUL in the SessionID")
    for session in (ids[2], "s\0-1"):
        for instance, wanted in ((ids[0], []), ("mi-\0other", ["MInstance is mi-\0other"])):
            checker = TranscriptChecker()
            opened = _with(prompt, ("SessionID",), session)
            asked = _with(_with(request, ("SessionID",), session), ("MInstance",), instance)
            assert not [f for f in checker.feed("t#0", opened) if f.rule == "context-mismatch"]
            found = [f.message for f in checker.feed("t#1", asked) if f.rule == "context-mismatch"]
            assert [message.split(",")[0] for message in found] == wanted, (session, instance)
