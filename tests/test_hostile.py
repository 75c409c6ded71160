"""Hostile input: whatever the bytes, a finding at the right place, never a traceback or a hang.

Each case goes through the reader (``pgm_explore.io._read``) and through the command
(in process, or in a subprocess with a timeout for the large inputs). The large inputs are
generated in ``tmp_path``.
"""

from __future__ import annotations

import io
import json
import os
import re
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from conftest import EXAMPLES, example_files, minimal_message
from hypothesis import given, settings
from hypothesis import strategies as st

from pgm_explore import analysis
from pgm_explore.cli import main
from pgm_explore.io import _read as _sources
from pgm_explore.io._read import Item, iter_documents, iter_stream, report
from pgm_explore.validation import validate

# The minimal conforming BKN-PAL Request of conftest, with a DataType, as the CLI examples use.
PAL_RQ: dict[str, Any] = minimal_message("BKN-PAL", "RQ") | {"QueryID": "q-1"}
PAL_RQ["DataXMData"] = {**PAL_RQ["DataXMData"], "DataID": "q-1", "DataType": "PGM-KPA-V1.0"}
GOOD = json.dumps(PAL_RQ).encode()


def items(tmp_path: Path, name: str, data: bytes) -> list[Item]:
    path = tmp_path / name
    path.write_bytes(data)
    return list(iter_documents(str(path)))


def problems(found: list[Item]) -> list[tuple[str, str | None, int | None, int | None]]:
    """(source, rule, line, column) of every item; rule None for a readable document."""
    out = []
    for item in found:
        p = item.problem
        out.append((item.source, p.rule if p else None, p.line if p else None, p.column if p else None))
    return out


def cli(capsys: pytest.CaptureFixture[str], path: Path) -> tuple[int, list[dict[str, Any]], str]:
    status = main(["validate", "--format", "json", str(path)])
    out, err = capsys.readouterr()
    return status, [json.loads(text) for text in out.splitlines()], err


def command(*args: str, stdin: bytes | None = None) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run(
        [sys.executable, "-m", "pgm_explore", *args],
        input=stdin,
        capture_output=True,
        timeout=60,
        check=False,
        # A strict UTF-8 stdout: what the command writes must survive it without help.
        env={**os.environ, "PYTHONIOENCODING": "utf-8:strict"},
    )


def rules(obj: dict[str, Any]) -> list[str]:
    return [f["rule"] for f in obj["findings"]]


# --- encoding ---------------------------------------------------------------------------------


def test_invalid_utf8_in_a_jsonl_line_is_a_finding_at_its_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    data = GOOD + b"\n\n" + b'{"Header": "PGM-KPA-V1.0", "Question": "O\xf9?"}\n' + GOOD + b"\n"
    assert problems(items(tmp_path, "m.jsonl", data)) == [
        (f"{tmp_path}/m.jsonl:1", None, None, None),
        (f"{tmp_path}/m.jsonl:3", "encoding", 3, 42),
        (f"{tmp_path}/m.jsonl:4", None, None, None),
    ]
    status, found, err = cli(capsys, tmp_path / "m.jsonl")
    assert (status, err) == (1, "")
    assert [(o["conforms"], rules(o)) for o in found] == [(True, []), (False, ["encoding"]), (True, [])]


def test_invalid_utf8_in_a_json_file(tmp_path: Path) -> None:
    data = b'{\n  "Header": "PGM-KPA-V1.0",\n  "Question": "\xff"\n}'
    assert problems(items(tmp_path, "m.json", data)) == [(f"{tmp_path}/m.json", "encoding", 3, 16)]


def test_binary_garbage(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    data = bytes(range(256)) * 64
    path = tmp_path / "noise.bin"
    path.write_bytes(data)
    status, found, err = cli(capsys, path)
    assert status == 1 and err == ""
    assert {rule for o in found for rule in rules(o)} <= {"encoding", "syntax", "empty"}


def test_lone_surrogates_are_one_encoding_finding_and_never_break_the_output(tmp_path: Path) -> None:
    # "\ud800" is a valid JSON escape but not a character: it cannot be written as UTF-8.
    # One verdict everywhere (issue 11): an encoding finding at the string, with its place.
    bad = rb'{"Header": "\ud800", "Mode": "RQ"}'
    odd_key = json.dumps(PAL_RQ).replace('"Mode"', r'"Mo\udfffde"', 1).encode()
    path = tmp_path / "s.jsonl"
    path.write_bytes(bad + b"\n" + odd_key + b"\n")
    as_json = command("validate", "--format", "json", str(path))
    assert as_json.returncode == 1 and as_json.stderr == b""
    found = [json.loads(text) for text in as_json.stdout.splitlines()]
    assert [(f["rule"], f["path"], f["line"], f["column"]) for o in found for f in o["findings"]] == [
        ("encoding", "$.Header", 1, 13),
        ("encoding", "$['Mo\\udfffde']", 2, odd_key.index(b"\\udfff") + 1),
    ]
    assert "\\ud800" in found[0]["findings"][0]["message"]  # named as the escape it came in as
    as_text = command("validate", str(path))
    assert as_text.returncode == 1 and as_text.stderr == b""
    assert b"\\ud800" in as_text.stdout


def test_terminal_escapes_in_a_message_are_shown_not_obeyed(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "m.json"
    path.write_text(json.dumps({"Header": "\x1b[2J\x1b]0;pwned\x07\nfake line"}))
    assert main(["validate", "--color", str(path)]) == 1
    out = capsys.readouterr().out
    shown = re.sub(r"\x1b\[[0-9;]*m", "", out)  # the command's own colours
    assert "\x1b" not in shown and "\x07" not in shown
    assert "\\x1b[2J\\x1b]0;pwned\\x07\\nfake line" in out
    assert len(out.splitlines()) == 4  # head, finding, spec, summary


def test_a_bom_is_allowed_at_the_start(tmp_path: Path) -> None:
    assert problems(items(tmp_path, "m.jsonl", b"\xef\xbb\xbf" + GOOD + b"\n" + GOOD)) == [
        (f"{tmp_path}/m.jsonl:1", None, None, None),
        (f"{tmp_path}/m.jsonl:2", None, None, None),
    ]
    assert problems(items(tmp_path, "m.json", b"\xef\xbb\xbf" + GOOD)) == [(f"{tmp_path}/m.json", None, None, None)]


# --- not JSON ---------------------------------------------------------------------------------


@pytest.mark.parametrize("constant", ["NaN", "Infinity", "-Infinity"])
def test_nan_and_infinity_are_syntax_findings(
    constant: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    bad = json.dumps(PAL_RQ | {"TurnIndex": "X"}).replace('"X"', constant).encode()
    column = bad.index(constant.encode()) + 1
    assert problems(items(tmp_path, "m.jsonl", b"\n" + GOOD + b"\n" + bad + b"\n")) == [
        (f"{tmp_path}/m.jsonl:2", None, None, None),
        (f"{tmp_path}/m.jsonl:3", "syntax", 3, column),
    ]
    status, found, _ = cli(capsys, tmp_path / "m.jsonl")
    assert status == 1
    assert found[1]["findings"][0] | {"message": "", "spec": ""} == {
        "severity": "error",
        "rule": "syntax",
        "path": "$",
        "message": "",
        "spec": "",
        "line": 3,
        "column": column,
    }
    assert constant.lstrip("-") in found[1]["findings"][0]["message"]


def test_a_truncated_line_is_one_syntax_finding(tmp_path: Path) -> None:
    data = GOOD + b"\n" + GOOD[:200] + b"\n" + GOOD + b"\n"
    assert [p[1] for p in problems(items(tmp_path, "m.jsonl", data))] == [None, "syntax", None]


def test_huge_integer_is_a_too_large_finding_at_its_place(tmp_path: Path) -> None:
    # Python refuses to convert integers of more than 4,300 digits: that is a finding too,
    # of its own (it used to be reported as a NaN, at the wrong place).
    data = b'{"Question": "1' + b"0" * 5000 + b'", "TurnIndex": 1' + b"0" * 5000 + b"}"
    column = data.rindex(b"1") + 1
    assert problems(items(tmp_path, "m.jsonl", GOOD + b"\n" + data)) == [
        (f"{tmp_path}/m.jsonl:1", None, None, None),
        (f"{tmp_path}/m.jsonl:2", "too-large", 2, column),
    ]


# --- not a message ----------------------------------------------------------------------------


def test_array_of_numbers_gives_a_not_object_finding_per_element(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "numbers.json"
    path.write_bytes(b"[1, 2.5, -3]")
    status, found, err = cli(capsys, path)
    assert (status, err) == (1, "")
    assert [(o["source"], rules(o), o["findings"][0]["path"]) for o in found] == [
        (f"{path}#{i}", ["not-object"], "$") for i in range(3)
    ]


@pytest.mark.parametrize("value", [b"42", b'"text"', b"null", b"true"])
def test_a_scalar_is_not_a_message(value: bytes, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "scalar.json"
    path.write_bytes(value)
    status, found, _ = cli(capsys, path)
    assert status == 1
    assert [(o["source"], rules(o)) for o in found] == [(str(path), ["not-object"])]


# --- nothing there -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("name", "data"),
    [
        ("empty.json", b""),
        ("empty.jsonl", b""),
        ("blank.jsonl", b"\n\n   \n\t\r\n"),
        ("blank.json", b"  \n\n"),
        ("empty-array.json", b"[]"),
        ("empty-array-pretty.json", b"[\n]\n"),
        ("empty.txt", b""),
        ("blank.txt", b"\n \n"),
    ],
)
def test_nothing_to_validate_is_one_empty_finding(
    name: str, data: bytes, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / name
    path.write_bytes(data)
    assert problems(list(iter_documents(str(path)))) == [(str(path), "empty", None, None)]
    status, found, err = cli(capsys, path)
    assert (status, err) == (1, "")
    assert [(o["source"], o["conforms"], rules(o)) for o in found] == [(str(path), False, ["empty"])]


def test_empty_stdin() -> None:
    result = command("validate", "--format", "json", "-", stdin=b"")
    assert result.returncode == 1 and result.stderr == b""
    assert [(o["source"], rules(o)) for o in map(json.loads, result.stdout.splitlines())] == [("-", ["empty"])]


def test_a_jsonl_line_holding_an_empty_array_is_not_an_object(tmp_path: Path) -> None:
    found = items(tmp_path, "m.jsonl", b"[]\n{}\n")
    assert [(i.source, report(i).findings[0].rule) for i in found] == [
        (f"{tmp_path}/m.jsonl:1", "not-object"),
        (f"{tmp_path}/m.jsonl:2", "header-missing"),
    ]


# --- too big, too deep ----------------------------------------------------------------------------


@pytest.mark.slow
def test_deep_nesting_is_a_finding_not_a_crash(tmp_path: Path) -> None:
    deep = b"[" * 100_000 + b"]" * 100_000
    nested = json.dumps(PAL_RQ | {"Question": "X"}).replace('"X"', "[" * 100_000 + "]" * 100_000).encode()
    jsonl = tmp_path / "deep.jsonl"
    jsonl.write_bytes(GOOD + b"\n" + deep + b"\n" + nested + b"\n" + GOOD + b"\n")
    whole = tmp_path / "deep.json"
    whole.write_bytes(b'{\n"a": ' + b'{"a": ' * 100_000 + b"1" + b"}" * 100_000 + b"\n}")
    assert problems(list(iter_documents(str(jsonl)))) == [
        (f"{jsonl}:1", None, None, None),
        (f"{jsonl}:2", "too-deep", None, None),
        (f"{jsonl}:3", "too-deep", None, None),
        (f"{jsonl}:4", None, None, None),
    ]
    result = command("validate", "--format", "json", str(jsonl), str(whole))
    assert result.returncode == 1, result.stderr
    assert result.stderr == b""
    found = [json.loads(text) for text in result.stdout.splitlines()]
    assert [(o["source"], rules(o)) for o in found] == [
        (f"{jsonl}:1", []),
        (f"{jsonl}:2", ["too-deep"]),
        (f"{jsonl}:3", ["too-deep"]),
        (f"{jsonl}:4", []),
        (str(whole), ["too-deep"]),
    ]
    piped = command("validate", "-", stdin=deep)
    assert piped.returncode == 1 and piped.stderr == b""
    assert b"too-deep" in piped.stdout


def test_nesting_just_within_the_limit_is_validated(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    doc = PAL_RQ | {"Question": "X"}
    text = json.dumps(doc).replace('"X"', "[" * 900 + "]" * 900)
    path = tmp_path / "m.json"
    path.write_text(text)
    status, found, err = cli(capsys, path)
    assert (status, err) == (1, "")
    assert rules(found[0]) == ["type"]


@pytest.mark.slow
def test_nesting_that_reads_but_is_too_deep_to_check(tmp_path: Path) -> None:
    # 985 levels is within what the reader takes in a fresh process, yet python-jsonschema
    # runs out of stack explaining why the value is wrong (a narrow window, ~980-989).
    doc = json.loads(json.dumps(PAL_RQ))
    doc["DataXMData"]["Source"] = "X"
    text = json.dumps(doc).replace('"X"', "[" * 985 + "]" * 985)
    path = tmp_path / "m.jsonl"
    path.write_text(text + "\n" + json.dumps(PAL_RQ) + "\n")
    result = command("validate", "--format", "json", str(path))
    assert result.returncode == 1 and result.stderr == b""
    first, second = (json.loads(text) for text in result.stdout.splitlines())
    assert (first["conforms"], rules(first)) == (False, ["too-deep"])
    assert second["conforms"] is True


@pytest.mark.slow
def test_a_value_too_deep_to_explain_is_a_finding_at_its_property() -> None:
    # Built in memory, so deeper than the reader would let through: python-jsonschema runs
    # out of stack writing its error about Source, and the core says where, for any depth.
    for depth in (1_000, 50_000):
        deep: list[Any] = []
        for _ in range(depth):
            deep = [deep]
        doc = json.loads(GOOD)
        doc["DataXMData"]["Source"] = deep
        for rep in (validate(doc), report(Item("m.jsonl:1", 1, None, doc, None))):
            assert (rep.type, rep.mode, rep.conforms) == ("BKN-PAL", "RQ", False)
            assert [(f.rule, f.json_path) for f in rep.findings] == [("too-deep", "$.DataXMData.Source")]
    assert validate(json.loads(GOOD)).conforms  # and the stack is whole again


_SHORT_OF_STACK = """
import json, sys
from pgm_explore.io import Item, report

item = Item("m.jsonl:7", 7, None, {"Header": "PGM-KPA-V1.0"}, None)


def down(frames):
    return report(item) if frames == 0 else down(frames - 1)


for frames in range(sys.getrecursionlimit(), 0, -1):
    try:
        rep = down(frames)
    except RecursionError:  # out of stack before the report began
        continue
    rules = [(f.rule, f.json_path) for f in rep.findings]
    print(json.dumps([rep.source, rep.type, rep.conforms, rules]))
    if rules[0][0] != "too-deep":
        break  # enough stack for the whole validation
"""


def test_running_out_of_stack_in_validation_is_one_messages_problem() -> None:
    # A caller that has used up nearly all of the stack itself (its own deep recursion) asks for
    # a report: at some depths validation runs out of stack before the core's own guard (whose
    # finding names the type), and that is this message's problem, not the run's. In a process of
    # its own: near the limit the schema libraries can leave their caches half updated.
    done = subprocess.run([sys.executable, "-c", _SHORT_OF_STACK], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    seen = [json.loads(line) for line in done.stdout.splitlines()]
    assert ["m.jsonl:7", None, False, [["too-deep", "$"]]] in seen
    assert seen[-1][3][0] == ["required", "$.Mode"]  # with the stack it needs, the usual findings


def _counts(rep: Any) -> dict[str, int]:
    counts: dict[str, int] = {}
    for finding in rep.findings:
        counts[finding.rule] = counts.get(finding.rule, 0) + 1
    return counts


def test_a_million_wrong_items_give_a_hundred_findings_and_a_count(tmp_path: Path) -> None:
    # Issue 11: a 2 MB line with 1M bad items took 76 s and 2.6 GB, a finding each. Now a
    # report keeps 100 findings and counts the rest (up to 1,000) in one last finding.
    line = json.dumps(PAL_RQ | {"Constraints": {"ExpressiveConstraints": [1] * 1_000_000}}).encode()
    assert len(line) > 2_000_000
    [item] = items(tmp_path, "m.jsonl", line + b"\n")
    rep = report(item)
    assert (rep.conforms, _counts(rep)) == (False, {"type": 100, "too-many-findings": 1})
    assert [f.json_path for f in rep.findings[:2]] == [f"$.Constraints.ExpressiveConstraints[{i}]" for i in (0, 1)]
    last = rep.findings[-1]
    assert (last.rule, last.severity, last.json_path) == ("too-many-findings", "warning", "$")
    assert last.message.startswith("At least 1,000 more findings were left out")


@pytest.mark.parametrize(
    ("items", "expected", "summary"),
    [
        (
            [1] * 150,
            {"type": 100},
            "50 more findings were left out (a report keeps at most 100 per message): 50 of rule type.",
        ),
        (
            [1, ""] * 75,
            {"type": 75, "empty-value": 25},
            "50 more findings were left out (a report keeps at most 100 per message): 50 of rule empty-value.",
        ),
        ([1] * 100, {"type": 100}, None),
    ],
    ids=["150 errors", "75 errors 75 warnings", "exactly 100"],
)
def test_findings_are_capped_at_100_per_message_with_a_count(
    items: list[Any], expected: dict[str, int], summary: str | None
) -> None:
    rep = validate(PAL_RQ | {"Constraints": {"ExpressiveConstraints": items}})
    counts = _counts(rep)
    assert counts.pop("too-many-findings", 0) == (summary is not None)
    assert counts == expected
    if summary is not None:
        assert rep.findings[-1].message == summary


def test_the_cap_keeps_errors_before_warnings() -> None:
    # 149 duplicate-step warnings come before the overall-mismatch error: the error keeps its
    # place, so the exit status of check is that of the whole message.
    doc = json.loads((EXAMPLES / "bkn-dac" / "valid" / "rs-feasibility-market.json").read_text())
    doc["Feasibility"] = {
        "Steps": [{"Step": 0, "PAStatus": "Ack"}] * 150 + [{"Step": 1, "PAStatus": "LocOOR", "Reason": "far"}],
        "Overall": "feasible",
    }
    rep = validate(doc)
    assert rep.conforms
    assert _counts(rep) == {"duplicate-step": 99, "overall-mismatch": 1, "too-many-findings": 1}
    assert rep.findings[-1].message.endswith(": 50 of rule duplicate-step.")
    assert rep.findings[-2].rule == "overall-mismatch"


def test_advice_inside_other_advice_is_kept_beside_a_schema_error() -> None:
    # Only advice inside a *wrong* value is dropped: a duplicate-step inside ProcessActions that
    # feasibility-kind is about stays (the cap's tally must not count advice as wrong).
    doc = minimal_message("BKN-DAC", "RQ") | {"Kind": "affordances", "Question": 5}
    doc["ProcessActions"] = [{"Step": 0, "Statement": "MM-Move Nil a From b To c"}] * 2
    assert [(f.rule, f.json_path) for f in validate(doc).findings] == [
        ("type", "$.Question"),
        ("feasibility-kind", "$.ProcessActions"),
        ("duplicate-step", "$.ProcessActions[1].Step"),
    ]


@pytest.mark.slow
def test_many_wrong_items_take_little_time() -> None:
    budget = 20.0  # seconds, for a loaded two-core machine; well under 1 s on a quiet one
    for items in ([1] * 200_000, [1, ""] * 100_000, [""] * 200_000):
        doc = PAL_RQ | {"Constraints": {"ExpressiveConstraints": items}}
        start = time.perf_counter()
        rep = validate(doc)
        elapsed = time.perf_counter() - start
        assert len(rep.findings) == 101
        assert elapsed < budget, f"{len(items)} wrong items took {elapsed:.1f} s"


@pytest.mark.slow
def test_a_10_mb_string(tmp_path: Path) -> None:
    big = "x" * 10_000_000
    jsonl = tmp_path / "big.jsonl"
    with jsonl.open("w") as f:
        f.write(json.dumps(PAL_RQ | {"Question": big}) + "\n")  # conforms
        f.write(json.dumps(PAL_RQ | {"TurnIndex": big}) + "\n")  # wrong type
        f.write(json.dumps({"Header": big}) + "\n")  # not a Header
    result = command("validate", "--format", "json", str(jsonl))
    assert result.returncode == 1 and result.stderr == b""
    found = [json.loads(text) for text in result.stdout.splitlines()]
    assert [(o["source"], o["conforms"], rules(o)) for o in found] == [
        (f"{jsonl}:1", True, []),
        (f"{jsonl}:2", False, ["type"]),
        (f"{jsonl}:3", False, ["header-unknown"]),
    ]
    # Findings quote a value, never the whole of it.
    assert max(len(text) for text in result.stdout.splitlines()) < 10_000


@pytest.mark.slow
def test_a_huge_line(tmp_path: Path) -> None:
    doc = PAL_RQ | {"Mode": "RQ", "Question": "q", "Constraints": {"ExpressiveConstraints": ["calm"] * 3_000_000}}
    path = tmp_path / "huge.jsonl"
    path.write_text(json.dumps(doc) + "\n" + json.dumps(PAL_RQ) + "\n")
    assert path.stat().st_size > 20_000_000
    result = command("validate", "--format", "json", str(path))
    assert result.returncode == 0 and result.stderr == b""
    assert [json.loads(text)["source"] for text in result.stdout.splitlines()] == [f"{path}:1", f"{path}:2"]


# --- the reader on its own ----------------------------------------------------------------------


def test_jsonl_streams_without_reading_ahead() -> None:
    class Endless(io.RawIOBase):
        """A stream that never ends: the reader must yield as it goes."""

        def readable(self) -> bool:
            return True

        def readinto(self, buffer: Any) -> int:
            chunk = GOOD + b"\n"
            n = min(len(buffer), len(chunk))
            buffer[:n] = chunk[:n]
            return n

    stream = io.BufferedReader(Endless())
    reader = iter_stream(stream, "endless", "auto")
    first = [next(reader) for _ in range(3)]
    assert [i.source for i in first] == ["endless:1", "endless:2", "endless:3"]


def test_every_byte_value_on_its_own_line(tmp_path: Path) -> None:
    data = b"\n".join(bytes([b]) for b in range(256))
    found = items(tmp_path, "bytes.jsonl", data)
    reports = [report(item) for item in found]  # never raises
    assert {f.rule for r in reports for f in r.findings} == {"syntax", "encoding", "not-object", "empty"}
    assert all(not r.conforms for r in reports)


# --- values built in Python (issue 11: validate() never raises) --------------------------------

_JSON_SCALARS = st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False, allow_infinity=False) | st.text()
_FOREIGN = (
    st.sets(st.integers(), max_size=3)
    | st.frozensets(st.text(max_size=3), max_size=3)
    | st.tuples(st.integers())
    | st.complex_numbers()
    | st.binary(max_size=4)
    | st.sampled_from([float("nan"), float("inf"), float("-inf"), object(), type, range(3), Ellipsis])
    | st.text(alphabet=st.characters(min_codepoint=0xD800, max_codepoint=0xDFFF), min_size=1, max_size=3)
)
_ODD_KEYS = (
    st.integers() | st.none() | st.booleans() | st.floats() | st.tuples(st.integers()) | st.frozensets(st.integers())
)


def _with_foreign(value: Any, foreign: Any, key: Any, where: int) -> tuple[Any, bool]:
    """``value`` with ``foreign`` put at the ``where``-th container (or under ``key`` there)."""
    containers: list[Any] = []
    pending = [value]
    while pending:
        item = pending.pop()
        if isinstance(item, dict):
            containers.append(item)
            pending.extend(item.values())
        elif isinstance(item, list):
            containers.append(item)
            pending.extend(item)
    target = containers[where % len(containers)]
    if isinstance(target, dict):
        target[key] = foreign
    else:
        target.append(foreign)
    return value, True


# Each example validates a message (about a millisecond): 100 keep the file fast.
@settings(max_examples=100, deadline=None)
@given(
    st.sampled_from([("BKN-PAL", "RQ"), ("BKN-DAC", "RS"), ("PC Prompt", None), ("BKN-PRC", "RQ")]),
    st.recursive(
        _JSON_SCALARS,
        lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner, max_size=3),
        max_leaves=8,
    ),
    _FOREIGN | st.builds(lambda k: {k: 1}, _ODD_KEYS),
    st.text(max_size=8) | _ODD_KEYS,
    st.integers(min_value=0, max_value=50),
)
def test_validate_never_raises_on_python_values(
    kind: tuple[str, str | None], extra: Any, foreign: Any, key: Any, where: int
) -> None:
    # Anything JSON cannot hold, anywhere in a message built in Python: a finding with a path,
    # never an exception, and a report that every output can write.
    doc = minimal_message(*kind) | {"Extra": extra}
    doc, _ = _with_foreign(doc, foreign, key, where)
    report = validate(doc)
    assert not report.conforms
    assert {f.rule for f in report.findings} <= {"not-json", "encoding"}
    assert report.findings and all(f.json_path.startswith("$") for f in report.findings)
    json.dumps([f.to_dict() for f in report.findings], ensure_ascii=False).encode("utf-8")  # no surrogate escapes
    assert "text/html" in report._repr_mimebundle_()
    str(report).encode("utf-8")
    from pgm_explore.dialogue import Transcript

    transcript = Transcript.from_documents([doc, minimal_message(*kind)])
    assert [m.report.conforms for m in transcript.messages] == [False, True]


@pytest.mark.parametrize(
    ("value", "rule", "path"),
    [
        ({1: "x"}, "not-json", "$.Constraints"),
        ({(1, 2): "x"}, "not-json", "$.Constraints"),
        ({None: "x", "Role": "tutor"}, "not-json", "$.Constraints"),
        ({"Role": 1j}, "not-json", "$.Constraints.Role"),
        ({"Role": {"a"}}, "not-json", "$.Constraints.Role"),
        ({"Role": ("a",)}, "not-json", "$.Constraints.Role"),
        ({"Role": b"tutor"}, "not-json", "$.Constraints.Role"),
        ({"Role": float("nan")}, "not-json", "$.Constraints.Role"),
        ({"Role": "tut\udc00or"}, "encoding", "$.Constraints.Role"),
        ({"R\ud800": "tutor"}, "encoding", "$.Constraints['R\\ud800']"),
    ],
    ids=repr,
)
def test_a_value_json_cannot_hold_is_a_finding_at_its_path(value: Any, rule: str, path: str) -> None:
    # These raised TypeError or AttributeError (non-string keys, complex) or passed (a tuple,
    # a lone surrogate) before issue 11.
    report = validate(PAL_RQ | {"Constraints": value})
    assert (report.conforms, [(f.rule, f.json_path) for f in report.findings]) == (False, [(rule, path)])


def _emptied(value: Any, draw: st.DrawFn) -> Any:
    """``value`` with some strings and lists emptied and every object's keys shuffled."""
    if isinstance(value, dict):
        keys = draw(st.permutations(list(value)))
        return {key: _emptied(value[key], draw) for key in keys}
    if isinstance(value, list):
        return [] if draw(st.integers(0, 4)) == 0 else [_emptied(item, draw) for item in value]
    if isinstance(value, str):
        return "" if draw(st.integers(0, 3)) == 0 else value
    return value


@st.composite
def _emptied_examples(draw: st.DrawFn) -> Any:
    original = json.loads(draw(st.sampled_from(example_files("valid"))).read_text())
    return _emptied(original, draw) | {"Header": original["Header"]}


@settings(max_examples=100, deadline=None)
@given(_emptied_examples())
def test_empty_values_are_found_in_the_order_of_the_compiled_engine(doc: Any) -> None:
    # The advisory findings are a walk of the advisory schema, one at a time (a million empty
    # strings must not come all at once): the same paths, in the same order, as jsonschema-rs.
    from pgm_explore.spec import HEADERS
    from pgm_explore.validation import _advisory

    dt = HEADERS[doc["Header"]]
    engine = [tuple(error.instance_path) for error in _advisory._advisory_validator(dt).iter_errors(doc)]
    assert [f.path for f in _advisory.iter_advisory_findings(dt, doc)] == engine


# --- numbers of any size the schema allows (issue 11: a message that conforms never crashes) ---

_TRANSCRIPT = EXAMPLES.parent / "transcripts" / "market-wallet-limit.jsonl"
# Every number of the transcript's messages that the schemas leave unbounded above (or not at all).
_UNBOUNDED = ("TurnIndex", "Step", "MaxSteps", "WalletLimit", "StartTime", "EndTime", "AccuracyPlusMinus")
_BIG = (
    st.integers(min_value=2**62, max_value=10**4300 - 1)  # up to the reader's 4,300 digits
    | st.integers(max_value=-(2**62), min_value=-(10**4300) + 1)
    | st.floats(min_value=1e300, max_value=1.7976931348623157e308)
    | st.sampled_from([2**63, 2**64, 10**309, -(2**63) - 1, 1e308, 10**4299])
)


def _with_numbers(value: Any, numbers: dict[str, Any]) -> Any:
    if isinstance(value, dict):
        return {
            key: numbers[key]
            if key in numbers and isinstance(item, int | float) and not isinstance(item, bool)
            else _with_numbers(item, numbers)
            for key, item in value.items()
        }
    if isinstance(value, list):
        return [_with_numbers(item, numbers) for item in value]
    return value


@pytest.mark.slow
@pytest.mark.parametrize("key", ["TurnIndex", "Step"])
def test_an_int_longer_than_python_writes_in_a_transcript_built_in_python(key: str, tmp_path: Path) -> None:
    """The readers refuse such ints (too-large), so only Python can build them; validate() then
    judges them by the schema (they conform), and nothing after it may crash quoting them."""
    matplotlib = pytest.importorskip("matplotlib", reason="the plots need the notebook extra")
    matplotlib.use("Agg")
    from pgm_explore import analysis
    from pgm_explore.dialogue import Transcript

    huge = 10**5000
    docs = [_with_numbers(json.loads(line), {key: huge}) for line in _TRANSCRIPT.read_text().splitlines() if line]
    transcript = Transcript.from_documents(docs)
    assert all(message.report.conforms for message in transcript.messages)
    for table in (analysis.messages, analysis.feasibility, analysis.findings, analysis.outcomes):
        frame = table(transcript)
        frame.to_csv(tmp_path / "table.csv")
        assert "5,000 digits" in frame.to_json() or key == "Step" or table is not analysis.messages
    for plot in (analysis.plot_timeline, analysis.plot_feasibility, analysis.plot_pa_status):
        plot(transcript)


def _big_transcript(folder: Path, numbers: dict[str, Any]) -> Path:
    docs = [_with_numbers(json.loads(line), numbers) for line in _TRANSCRIPT.read_text().splitlines() if line]
    path = folder / "big.jsonl"
    path.write_text("".join(json.dumps(doc) + "\n" for doc in docs))
    return path


@pytest.mark.slow
@settings(max_examples=20, deadline=None)
@given(st.dictionaries(st.sampled_from(_UNBOUNDED), _BIG, min_size=1), st.sampled_from(sorted(analysis.TABLES)))
def test_numbers_of_any_size_never_crash_check_or_tables(numbers: dict[str, Any], shown: str) -> None:
    # StartTime >= ~10**309 raised OverflowError in Simple Time's seconds; TurnIndex or Step >= 2**63
    # crashed `table messages|exchanges|feasibility` (Int64 columns). Every stage must give a finding
    # or an honest value: the exact integer, never a wrong or missing one.
    import contextlib
    import tempfile

    import pandas as pd

    from pgm_explore.analysis import TABLES
    from pgm_explore.dialogue import Transcript, check_paths

    with tempfile.TemporaryDirectory() as folder:
        path = _big_transcript(Path(folder), numbers)
        list(check_paths([path], parallel=False))
        transcript = Transcript.load(path)
        for table in TABLES.values():
            table(transcript).to_csv()
        output, errors = io.StringIO(), io.StringIO()
        with contextlib.redirect_stdout(output), contextlib.redirect_stderr(errors):
            assert main(["table", shown, str(path)]) == 0, errors.getvalue()
            assert main(["table", shown, "--format", "json", str(path)]) == 0, errors.getvalue()
            assert main(["check", str(path)]) in (0, 1), errors.getvalue()
        for key, name, column in (("TurnIndex", "messages", "turn"), ("Step", "feasibility", "Step")):
            if isinstance(numbers.get(key), int):
                shown_values = [value for value in TABLES[name](transcript)[column].tolist() if value is not pd.NA]
                assert numbers[key] in shown_values  # the exact integer, not a rounded or missing one


@pytest.mark.parametrize(
    "big",
    [2**64, 10**309, 10**4299, -(2**63) - 1, 1.7e308],
    ids=["2**64", "10**309", "10**4299", "-2**63-1", "1.7e308"],
)
def test_numbers_of_any_size_never_crash_the_plots(big: Any, tmp_path: Path) -> None:
    matplotlib = pytest.importorskip("matplotlib", reason="the plots need the notebook extra")
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from pgm_explore import analysis
    from pgm_explore.dialogue import Transcript

    transcript = Transcript.load(_big_transcript(tmp_path, dict.fromkeys(_UNBOUNDED, big)))
    try:
        for plot in (analysis.plot_pa_status, analysis.plot_feasibility, analysis.plot_timeline):
            plot(transcript)
        analysis.plot_timeline(transcript, x="time")
    finally:
        plt.close("all")


def test_a_start_time_beyond_a_float_is_read_or_left_unread() -> None:
    from pgm_explore.dialogue import simple_time_seconds

    segment = {"TimeType": True, "TimeUnit": "01"}
    assert simple_time_seconds({"SimpleTimeData": [segment | {"StartTime": 10**309}]}) == (True, 1e306)
    assert simple_time_seconds({"SimpleTimeData": [segment | {"StartTime": 10**400}]}) is None
    doc = json.loads(GOOD)
    doc["QueryTime"]["SimpleTimeData"][0]["StartTime"] = 10**400
    assert validate(doc).conforms


@pytest.mark.parametrize("table", ["messages", "exchanges", "feasibility"])
def test_a_turn_or_step_of_2_to_the_63_is_shown_exactly(
    table: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = _big_transcript(tmp_path, {"TurnIndex": 2**63, "Step": 2**63})
    assert main(["table", table, str(path)]) == 0
    out, err = capsys.readouterr()
    assert err == "" and str(2**63) in out


# --- lines too long (issue 11: every reader bounds a line, and goes on) -------------------------

_LIMIT = 4096  # MAX_LINE_BYTES for these tests: the real 64 MiB needs no 64 MiB test files


@pytest.fixture
def small_limit(monkeypatch: pytest.MonkeyPatch) -> int:
    monkeypatch.setattr(_sources, "MAX_LINE_BYTES", _LIMIT)
    return _LIMIT


def _long(size: int) -> bytes:
    return b'{"Header": "' + b"x" * (size - 14) + b'"}'


@pytest.mark.parametrize("name", ["m.jsonl", "m.txt"])
@pytest.mark.parametrize("size", [_LIMIT + 1, 5 * _LIMIT, 10**6])
def test_a_line_too_long_is_a_finding_and_reading_goes_on(
    small_limit: int, name: str, size: int, tmp_path: Path
) -> None:
    data = GOOD + b"\n" + _long(size) + b"\n\n" + GOOD + b"\n"
    found = items(tmp_path, name, data)
    assert problems(found) == [
        (f"{tmp_path}/{name}:1", None, None, None),
        (f"{tmp_path}/{name}:2", "too-large", 2, 1),
        (f"{tmp_path}/{name}:4", None, None, None),
    ]
    assert found[2].offset == data.index(GOOD, 1)  # where the next line starts, for the bulk reader
    assert "4,096 bytes" in found[1].problem.message


def test_a_line_of_exactly_the_limit_is_read(small_limit: int, tmp_path: Path) -> None:
    line = json.dumps(PAL_RQ | {"Question": "?"}).encode()
    line = line.replace(b'"?"', b'"' + b"q" * (small_limit - len(line) + 1) + b'"')
    assert len(line) == small_limit
    for data in (line + b"\n" + GOOD, GOOD + b"\n" + line, line):
        assert [p[1] for p in problems(items(tmp_path, "m.jsonl", data))] in ([None, None], [None])
    # One byte more is too many (a "\r" before the "\n" counts: only the "\n" ends the line).
    for data in (b" " + line + b"\n" + GOOD, line + b"\r\n" + GOOD):
        assert [p[1] for p in problems(items(tmp_path, "m.jsonl", data))] == ["too-large", None]


@pytest.mark.parametrize("name", ["m.json", "m.txt"])
def test_a_value_read_whole_is_bounded_too(small_limit: int, name: str, tmp_path: Path) -> None:
    pretty = json.dumps(PAL_RQ | {"Question": "x" * small_limit}, indent=2).encode()
    assert problems(items(tmp_path, name, pretty)) == [(f"{tmp_path}/{name}", "too-large", None, None)]
    assert problems(items(tmp_path, name, json.dumps(PAL_RQ, indent=2).encode())) == [
        (f"{tmp_path}/{name}", None, None, None)
    ]


def test_an_endless_line_is_reported_at_once_in_little_memory(small_limit: int) -> None:
    import tracemalloc

    class Zeros(io.RawIOBase):
        """Zeros, then after ``left`` bytes a line break and a message: /dev/zero with an end."""

        def __init__(self, left: int) -> None:
            self.left = left
            self.tail = b"\n" + GOOD + b"\n"

        def readable(self) -> bool:
            return True

        def readinto(self, buffer: Any) -> int:
            if self.left > 0:
                n = min(len(buffer), self.left)
                buffer[:n] = b"\0" * n
                self.left -= n
                return n
            n = min(len(buffer), len(self.tail))
            buffer[:n] = self.tail[:n]
            self.tail = self.tail[n:]
            return n

    tracemalloc.start()
    try:
        reader = iter_stream(io.BufferedReader(Zeros(200 * 1024 * 1024)), "-", "auto")
        first = next(reader)  # at once: not after the 200 MB
        assert (first.source, first.problem and first.problem.rule) == ("-:1", "too-large")
        rest = list(reader)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert [(i.source, i.problem) for i in rest] == [("-:2", None)]
    assert peak < 8 * 1024 * 1024, f"{peak:,} bytes to skip a 200 MB line"


def test_the_partitions_of_a_big_file_bound_lines_too(
    small_limit: int, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from pgm_explore.io import iter_reports

    lines = [GOOD, _long(_LIMIT + 1), GOOD, _long(3 * _LIMIT), _long(_LIMIT), b"", GOOD, _long(_LIMIT * 2) + b"x"]
    path = tmp_path / "m.jsonl"
    path.write_bytes(b"\n".join(lines))
    expected = [(f"{path}:{n}", rule) for n, rule in ((1, None), (2, "too-large"), (3, None), (4, "too-large"))]
    expected += [(f"{path}:5", "header-unknown"), (f"{path}:7", None), (f"{path}:8", "too-large")]
    for step in (None, "1000", "5000", "100000"):  # the whole file, or partitions of a few lines
        if step:
            monkeypatch.setenv("PGM_EXPLORE_PARTITION_BYTES", step)
        found = [(r.source, r.findings[0].rule if r.findings else None) for r in iter_reports(path, parallel=False)]
        assert found == expected, step


@pytest.mark.parametrize("form", [["--format", "json"], ["--no-color"]])
def test_validate_words_the_lines_too_long_of_partitions_as_whole(
    form: list[str],
    small_limit: int,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # A worker leaves a line too long for the client, which words it with its line in the file.
    lines = [GOOD, _long(_LIMIT + 1), GOOD, _long(3 * _LIMIT), b"", GOOD, _long(_LIMIT * 2) + b"x"]
    path = tmp_path / "m.jsonl"
    path.write_bytes(b"\n".join(lines))
    whole = main(["validate", *form, "--workers", "0", str(path)]), capsys.readouterr()
    assert whole[0] == 1 and whole[1].out.count("too-large") == 3
    for step in ("1000", "5000", "100000"):
        monkeypatch.setenv("PGM_EXPLORE_PARTITION_BYTES", step)
        assert (main(["validate", *form, "--workers", "0", str(path)]), capsys.readouterr()) == whole, step


@pytest.mark.slow
@pytest.mark.skipif(not Path("/dev/zero").exists(), reason="needs /dev/zero")
def test_cat_dev_zero_into_check_says_so_and_does_not_grow() -> None:
    # `cat /dev/zero | pgm-explore check -` grew until killed (issue 11); a 1 GB line took 4 GB.
    import select

    with (
        open("/dev/zero", "rb") as zeros,
        subprocess.Popen(
            [sys.executable, "-m", "pgm_explore", "check", "-"],
            stdin=zeros,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
        ) as process,
    ):
        assert process.stdout is not None
        try:
            out = b""
            deadline = time.monotonic() + 60
            while b"too-large" not in out and time.monotonic() < deadline:
                if select.select([process.stdout], [], [], 1)[0]:
                    out += os.read(process.stdout.fileno(), 65536)
            assert b"[too-large]" in out and b"Line 1 is longer" in out
            time.sleep(2)  # skipping the endless rest of line 1, some GB of zeros
            status = Path(f"/proc/{process.pid}/status").read_text()
            peak = int(re.search(r"VmHWM:\s+(\d+) kB", status).group(1)) * 1024  # type: ignore[union-attr]
            assert process.poll() is None  # still reading, in bounded memory
            assert peak < 600 * 1024 * 1024, f"peak {peak:,} bytes"
        finally:
            process.kill()


# --- formula injection in CSV (issue 11) ---------------------------------------------------------


@settings(max_examples=100, deadline=None)
@given(st.lists(st.text(max_size=12) | st.sampled_from(["=1+1", "+A1", "-1", "@x", "\t=1", "\r=1", "'=1"]), min_size=1))
def test_no_csv_cell_starts_a_formula(texts: list[str]) -> None:
    import pandas as pd

    from pgm_explore.cli._table import FORMULA_START as _FORMULA_START
    from pgm_explore.cli._table import formulas_defused as _formulas_defused

    # (A missing cell every third, and an object column of texts among other values, as tables have.)
    cells_in = [None if i % 3 == 2 else text for i, text in enumerate(texts)]
    mixed = [text if i % 2 else i - 1 for i, text in enumerate(cells_in)]
    frame = pd.DataFrame(
        {
            "text": pd.Series(cells_in, dtype="string"),
            "mixed": pd.Series(mixed, dtype=object),
            "number": range(-len(texts), 0),
        }
    )
    before = frame.to_csv(index=False)
    defused = _formulas_defused(frame)

    def expected(value: object) -> object:
        return "'" + value if isinstance(value, str) and value.startswith(_FORMULA_START) else value

    cells = [None if value is pd.NA else value for value in defused["text"]]
    assert cells == [expected(text) for text in cells_in]
    assert not any(isinstance(cell, str) and cell.startswith(_FORMULA_START) for cell in cells)
    assert list(defused["mixed"]) == [expected(value) for value in mixed]
    assert list(defused["number"]) == list(frame["number"])  # numbers are no formulas
    assert (defused.dtypes == frame.dtypes).all()
    assert frame.to_csv(index=False) == before  # the table itself is left as it was


# --- lone surrogates: one verdict everywhere (issue 11) -------------------------------------------


@settings(max_examples=100, deadline=None)
@given(
    st.sampled_from(example_files("valid")),
    # One code point: two in a row may make a pair, which JSON text reads as one character.
    st.characters(min_codepoint=0xD800, max_codepoint=0xDFFF),
    st.booleans(),
    st.integers(min_value=0, max_value=50),
)
def test_a_lone_surrogate_has_one_verdict_everywhere(example: Path, surrogate: str, as_key: bool, where: int) -> None:
    from pydantic import ValidationError

    from pgm_explore.models import parse_message

    foreign = {"k" + surrogate: 1} if as_key else "x" + surrogate
    doc, _ = _with_foreign(json.loads(example.read_text()), foreign, "Extra", where)
    text = json.dumps(doc)  # "\udXXX" escapes: what a file can hold
    verdicts = [validate(doc), validate(text), report(next(iter_stream(io.BytesIO(text.encode()), "m.json", "json")))]
    assert [(r.conforms, [f.rule for f in r.findings]) for r in verdicts] == [(False, ["encoding"])] * 3
    assert verdicts[0].findings[0].path == verdicts[1].findings[0].path
    with pytest.raises(ValidationError, match="surrogate"):
        parse_message(doc)


# --- the transcript rules are bounded per message too -----------------------------------------------


def _long_plan(folder: Path, steps: int, answered: int) -> Path:
    docs = [json.loads(line) for line in _TRANSCRIPT.read_text().splitlines() if line]
    request = next(d for d in docs if d.get("Kind") == "feasibility" and d.get("Mode") == "RQ")
    response = next(d for d in docs if d.get("Mode") == "RS" and d.get("RequestID") == request["QueryID"])
    request["ProcessActions"] = [{"Step": i, "Statement": f"Teleport Nil x{i} At ML-{i}"} for i in range(steps)]
    response["Feasibility"]["Steps"] = [{"Step": i, "PAStatus": "Ack"} for i in range(answered)]
    path = folder / "plan.jsonl"
    path.write_text("".join(json.dumps(doc) + "\n" for doc in docs))
    return path


def test_a_plan_of_20000_steps_gives_bounded_findings_per_message(tmp_path: Path) -> None:
    # Each step was a precheck-differs finding and the Response's steps were matched to the
    # Request's by a scan each (quadratic: minutes for 40,000 steps); now both are bounded.
    from collections import Counter

    from pgm_explore.dialogue import check_paths

    found = list(check_paths([_long_plan(tmp_path, 20_000, 20_000)], parallel=False))
    per_message = Counter(f.source for f in found)
    assert max(per_message.values()) <= 2 * 101
    rules = Counter(f.rule for f in found)
    assert rules["precheck-differs"] == 100 and rules["statement-syntax"] == 100
    assert rules["too-many-findings"] == 2
    assert max(len(f.message) for f in found) < 600


def test_steps_missing_from_a_response_are_named_a_few_at_a_time(tmp_path: Path) -> None:
    from pgm_explore.dialogue import check_paths

    [mismatch] = [
        f for f in check_paths([_long_plan(tmp_path, 5_000, 1)], parallel=False) if f.rule == "steps-mismatch"
    ]
    assert (
        "no outcome for Step 1, 10, 100, 1000, 1001, 1002, 1003, 1004, 1005, 1006 and 4,989 more." in mismatch.message
    )
