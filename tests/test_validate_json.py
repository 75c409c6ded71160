"""validate_json: JSON text in, a Report out, with the findings the command line gives for that text."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import pgm_explore
from pgm_explore import validation
from pgm_explore.cli import main

PAL_RQ = {
    "Header": "PGM-KPA-V1.0",
    "Mode": "RQ",
    "MInstance": "m",
    "UEnvironment": "u",
    "SessionID": "s",
    "QueryID": "kpa-1",
    "DialogID": "d",
    "TurnIndex": 0,
}

# One text of each kind of reading problem and note the command line's reader knows about.
TEXTS = {
    "conforming-ish": json.dumps(PAL_RQ).encode(),
    "duplicate-key": b'{"Header": "PGM-KDA-V1.0", "Header": "PGM-KPA-V1.0", "Mode": "RQ", "x": {"a": 1, "a": 2}}',
    "not-json": b"not json",
    "unterminated": b'{"Header": "PGM-KPA-V1.0",',
    "bom": b'\xef\xbb\xbf{"Header": "PGM-KPA-V1.0"}',
    "lone-surrogate": b'{"Header": "\\ud800"}',
    "bad-utf-8": b'{"Header": "\xff"}',
    "nan": b'{"Header": "PGM-KPA-V1.0", "TurnIndex": NaN}',
    "beyond-double": b'{"Header": "PGM-KPA-V1.0", "TurnIndex": 1e999}',
    "long-integer": b'{"Header": "PGM-KPA-V1.0", "TurnIndex": 123456789012345678901234567890}',
    "too-many-digits": b'{"TurnIndex": ' + b"9" * 5000 + b"}",
    "too-deep": b"[" * 100_000 + b"]" * 100_000,
    "string": b'"hello"',
    "null": b"null",
    "two-values": b'{"a": 1} {"b": 2}',
    "pretty": json.dumps(PAL_RQ, indent=2).encode(),
}


def _shown(report: pgm_explore.Report) -> tuple[object, ...]:
    return report.type, report.mode, report.conforms, [f.to_dict() for f in report.findings]


@pytest.mark.parametrize("name", TEXTS)
def test_the_findings_are_those_of_the_file_reader(name: str) -> None:
    # validate_file reads bytes exactly as `pgm-explore validate` reads a .json file.
    [from_file] = pgm_explore.validate_file("m.json", TEXTS[name])
    assert _shown(pgm_explore.validate_json(TEXTS[name])) == _shown(from_file)


@pytest.mark.parametrize("name", ["duplicate-key", "lone-surrogate", "long-integer", "pretty", "unterminated"])
def test_str_and_its_utf_8_bytes_give_the_same_report(name: str) -> None:
    text = TEXTS[name].decode("utf-8")
    assert _shown(pgm_explore.validate_json(text)) == _shown(pgm_explore.validate_json(TEXTS[name]))


def test_the_command_line_prints_the_same_findings(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    text = TEXTS["duplicate-key"]
    path = tmp_path / "m.json"
    path.write_bytes(text)
    main(["validate", "--format", "json", str(path)])
    [printed] = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    report = pgm_explore.validate_json(text)
    assert [(f["rule"], f["path"], f["message"]) for f in printed["findings"]] == [
        (f.rule, f.json_path, f.message) for f in report.findings
    ]


def test_an_array_is_one_value_that_is_not_a_message() -> None:
    report = pgm_explore.validate_json(json.dumps([PAL_RQ, PAL_RQ]))
    assert [(f.rule, f.message) for f in report.findings] == [
        ("not-object", "A message must be a JSON object, not an array of 2 items.")
    ]


def test_text_and_its_value_give_the_same_report() -> None:
    text = json.dumps({**PAL_RQ, "Extra": [1, 2]})
    assert _shown(pgm_explore.validate_json(text)) == _shown(pgm_explore.validate(json.loads(text)))
    assert pgm_explore.validate_json(bytearray(text.encode()), source="clip").source == "clip"


@pytest.mark.parametrize("value", [PAL_RQ, [1], None, 3])
def test_a_python_value_is_refused(value: object) -> None:
    with pytest.raises(TypeError, match=r"validate\(\) takes Python values"):
        pgm_explore.validate_json(value)  # type: ignore[arg-type]  # (the wrong type is the point)


def test_it_is_public_where_validate_is() -> None:
    assert "validate_json" in pgm_explore.__all__ and "validate_json" in validation.__all__
    assert pgm_explore.validate_json is validation.validate_json
    assert validation.validate_json.__module__ == "pgm_explore.validation"


def _no_constant(name: str) -> object:
    raise ValueError(f"{name} is not JSON")


def _documents() -> list[Path]:
    root = Path(__file__).resolve().parents[1] / "data" / "examples"
    return sorted(p for p in root.glob("**/*.json") if not p.name.endswith(".expected.json"))


@pytest.mark.parametrize("path", _documents(), ids=lambda p: f"{p.parent.parent.name}/{p.parent.name}/{p.name}")
def test_a_document_and_its_text_get_the_same_findings(path: Path) -> None:
    # issue 19: validate(dict) reported every lone surrogate, validate_json(text) of it only the first.
    from pgm_explore.validation import InputProblem, parse_json, read_number

    raw = path.read_bytes()
    try:
        # The document the text writes, as Python's reader makes it: lone surrogates kept, no NaN.
        document = json.loads(raw, parse_float=read_number, parse_constant=_no_constant)
    except (ValueError, RecursionError):
        pytest.skip("not JSON text: a document of it cannot be built")

    # What only the text shows: names written twice, numbers read next to an integer (issue 24).
    try:
        notes = parse_json(raw)[1]
    except InputProblem:
        notes = ()

    def seen(report: pgm_explore.Report) -> tuple[object, ...]:
        findings = [(f.rule, f.path, f.severity, f.message, f.spec) for f in report.findings if f not in notes]
        return report.type, report.mode, report.conforms, findings

    from_text = pgm_explore.validate_json(raw)
    assert seen(from_text) == seen(pgm_explore.validate(document))
    # The text adds where each reading problem is written.
    assert all(f.line is not None for f in from_text.findings if f.rule == "encoding")
