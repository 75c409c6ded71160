"""Every example file: valid ones conform with no finding; each invalid one breaks exactly its rule."""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import EXAMPLES, example_files, load

from pgm_explore import RULES, validate
from pgm_explore.spec import DATA_TYPES

FOLDERS = {"pc-prompt": "PC Prompt", "bkn-prc": "BKN-PRC", "bkn-dac": "BKN-DAC", "bkn-pal": "BKN-PAL"}
VALID = example_files("valid")
INVALID = [p for p in example_files("invalid")] + sorted(
    p for p in (EXAMPLES / "malformed").glob("*") if p.suffix in (".json", ".jsonl") and ".expected" not in p.name
)


def _id(path: Path) -> str:
    return str(path.relative_to(EXAMPLES))


@pytest.mark.parametrize("path", VALID, ids=_id)
def test_valid_example_conforms_without_findings(path: Path) -> None:
    report = validate(path.read_bytes())
    assert report.type == FOLDERS[path.parent.parent.name]
    assert report.conforms, str(report)
    assert report.findings == (), str(report)


@pytest.mark.parametrize("path", INVALID, ids=_id)
def test_invalid_example_breaks_exactly_its_rule(path: Path) -> None:
    expected = load(path.with_name(path.name.removesuffix(path.suffix) + ".expected.json"))
    report = validate(path.read_bytes())
    assert sorted(f.rule for f in report.findings) == sorted(expected["rules"]), str(report)
    assert sorted(f.json_path for f in report.findings) == sorted(expected["paths"]), str(report)
    assert report.conforms is expected["conforms"]
    # What a person reads, where the sidecar says it (issue #12: the right words, the right clause).
    if "messages" in expected:
        assert sorted(f.message for f in report.findings) == sorted(expected["messages"]), str(report)
    if "specs" in expected:
        assert sorted(f.spec for f in report.findings) == sorted(expected["specs"]), str(report)
    if "line" in expected:
        assert (report.findings[0].line, report.findings[0].column) == (expected["line"], expected["column"])
    if "places" in expected:  # where each finding is written, in the order of the findings
        assert [[f.line, f.column] for f in report.findings] == expected["places"], str(report)


def test_every_type_and_mode_has_a_minimal_and_a_rich_example() -> None:
    for folder, name in FOLDERS.items():
        modes = next(dt.modes for dt in DATA_TYPES if dt.name == name) or (None,)
        for mode in modes:
            files = [p for p in VALID if p.parent.parent.name == folder and (mode is None or load(p)["Mode"] == mode)]
            assert len(files) >= 2, f"{folder} {mode}: {len(files)} valid examples"


def test_every_rule_code_has_an_invalid_example() -> None:
    covered = {
        rule
        for path in INVALID
        for rule in load(path.with_name(path.name.removesuffix(path.suffix) + ".expected.json"))["rules"]
    }
    # `schema` is the fallback for keywords the four schemas do not use: no document reaches it.
    # `not-json` is a value built in Python (a set, NaN), which no file can hold:
    # tests/test_hostile.py builds them. Transcript rules need several messages:
    # data/transcripts/ covers them.
    message_rules = {code for code, rule in RULES.items() if rule.scope == "message"}
    assert message_rules - covered <= {"schema", "not-json"}
