"""Every transcript under data/transcripts/ gives exactly the findings its sidecar lists.

A sidecar ``<name>.expected.json`` lists every finding (errors and warnings) by the 1-based ``line`` of a
JSON Lines transcript, or the 0-based ``index`` of a JSON-array transcript, with its rule code, and the number
of errors. The valid scenarios list none.
"""

from __future__ import annotations

import importlib.util
import json
import sys
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from conftest import ROOT

from pgm_explore.dialogue import Transcript, check_paths
from pgm_explore.validation import RULES

TRANSCRIPTS = ROOT / "data" / "transcripts"
FILES = sorted(
    p for p in TRANSCRIPTS.rglob("*") if p.suffix in (".json", ".jsonl") and not p.name.endswith(".expected.json")
)
VALID = [p for p in FILES if p.parent == TRANSCRIPTS]
DEFECTIVE = [p for p in FILES if p.parent == TRANSCRIPTS / "defective"]
SENDERS = {"PGM-KPR-V1.0": "PGM-PRC", "PGM-KDA-V1.0": "PGM-DAC", "PGM-KPA-V1.0": "PGM-PAL"}


def _id(path: Path) -> str:
    return str(path.relative_to(TRANSCRIPTS))


def _sidecar(path: Path) -> dict[str, Any]:
    stem = path.name.removesuffix(path.suffix)
    return json.loads((path.parent / f"{stem}.expected.json").read_text(encoding="utf-8"))


def _key(path: Path) -> str:
    return "index" if path.suffix == ".json" else "line"


def _where(path: Path, source: str) -> int:
    """The line (``PATH:LINE``) or index (``PATH#INDEX``) a finding's source names."""
    separator = "#" if path.suffix == ".json" else ":"
    name, _, where = source.rpartition(separator)
    assert name == str(path), source
    return int(where)


def _messages(path: Path) -> list[Any]:
    text = path.read_text(encoding="utf-8")
    if path.suffix == ".json":
        return json.loads(text)
    return [json.loads(line) for line in text.splitlines()]


def test_the_folder_has_every_scenario() -> None:
    names = {p.name for p in VALID}
    assert {
        "market-wallet-limit.jsonl",
        "placement-out-of-range.jsonl",
        "stance-negotiation.jsonl",
        "commitments.jsonl",
        "full-session.jsonl",
        "long-deliberation.jsonl",
    } <= names
    assert any(p.suffix == ".json" for p in DEFECTIVE), "one transcript is given as a JSON array"


@pytest.mark.parametrize("path", FILES, ids=_id)
def test_findings_are_exactly_those_of_the_sidecar(path: Path) -> None:
    expected = _sidecar(path)
    key = _key(path)
    transcript = Transcript.load(str(path))
    found = Counter((_where(path, f.source), f.rule) for f in transcript.findings)
    wanted = Counter((item[key], item["rule"]) for item in expected["findings"])
    assert found == wanted, str(transcript)
    assert transcript.errors == expected["errors"], str(transcript)
    assert expected["errors"] == sum(RULES[item["rule"]].severity == "error" for item in expected["findings"])


@pytest.mark.parametrize("path", FILES, ids=_id)
def test_streaming_check_agrees_with_the_transcript(path: Path) -> None:
    streamed = sorted((f.source, f.rule, f.severity) for f in check_paths([str(path)]))
    loaded = sorted((f.source, f.rule, f.severity) for f in Transcript.load(str(path)).findings)
    assert streamed == loaded


@pytest.mark.parametrize("path", VALID, ids=_id)
def test_valid_scenarios_have_no_finding(path: Path) -> None:
    expected = _sidecar(path)
    assert expected["findings"] == [] and expected["errors"] == 0
    assert expected["description"].startswith("Valid.")


@pytest.mark.parametrize("path", DEFECTIVE, ids=_id)
def test_defective_descriptions_explain_their_rules(path: Path) -> None:
    expected = _sidecar(path)
    assert expected["findings"], "a defective transcript breaks at least one rule"
    for item in expected["findings"]:
        assert item["rule"] in expected["description"], f"the description does not name {item['rule']}"


def test_every_transcript_rule_has_a_defective_example() -> None:
    covered = {item["rule"] for path in DEFECTIVE for item in _sidecar(path)["findings"]}
    transcript_rules = {code for code, rule in RULES.items() if rule.scope == "transcript"}
    assert transcript_rules - covered == set()
    assert "overall-mismatch" in covered


def test_every_error_level_transcript_rule_has_a_transcript_breaking_only_it() -> None:
    for code in (c for c, rule in RULES.items() if rule.scope == "transcript" and rule.severity == "error"):
        assert any({item["rule"] for item in _sidecar(path)["findings"]} == {code} for path in DEFECTIVE), (
            f"no defective transcript breaks only {code}"
        )


@pytest.mark.parametrize("path", [p for p in FILES if p.suffix == ".jsonl"], ids=_id)
def test_json_lines_are_compact_utf8_with_a_final_newline(path: Path) -> None:
    raw = path.read_bytes()
    text = raw.decode("utf-8")
    assert text.endswith("\n") and not text.endswith("\n\n")
    for line in text.splitlines():
        assert line == json.dumps(json.loads(line), ensure_ascii=False, separators=(",", ":"))


@pytest.mark.parametrize("path", VALID, ids=_id)
def test_valid_scenarios_follow_the_conventions(path: Path) -> None:
    """Times increase through the transcript; metadata name the message and its sender; ids are coherent."""
    times = []
    requests: dict[str, dict[str, Any]] = {}
    for doc in _messages(path):
        ident = doc.get("QueryID", doc.get("PCPromptID"))
        time = doc.get("QueryTime", doc.get("PCPromptTime"))
        assert time["SimpleTimeID"] == f"st-{ident}"
        times.append(time["SimpleTimeData"][0]["StartTime"])
        assert doc["DataXMData"]["DataID"] == ident
        assert doc["DataXMData"]["DataType"] == doc["Header"]
        sender = doc["DataXMData"]["Source"][0]["AIMID"]
        mode = doc.get("Mode")
        assert sender == {"RQ": "PGM-BKN", "RS": SENDERS.get(doc["Header"]), None: "PGM-PRC"}[mode]
        if mode == "RQ":
            requests[ident] = doc
        elif mode == "RS":
            request = requests[doc["RequestID"]]
            assert (doc["DialogID"], doc["TurnIndex"], doc["SessionID"]) == (
                request["DialogID"],
                request["TurnIndex"],
                request["SessionID"],
            )
    assert times == sorted(times) and len(set(times)) == len(times), "QueryTime increases through the transcript"


def test_long_deliberation_is_what_its_generator_builds(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sys, "dont_write_bytecode", True)  # no __pycache__ inside data/
    script = TRANSCRIPTS / "make_long_deliberation.py"
    spec = importlib.util.spec_from_file_location("make_long_deliberation", script)
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    messages = module.build()
    assert messages == _messages(TRANSCRIPTS / "long-deliberation.jsonl")
    assert len(messages) >= 100
    assert sum(m.get("Mode") == "RQ" for m in messages) >= 50
