"""validate(): verdicts, findings that a person can act on, and displays that never fail."""

from __future__ import annotations

import copy
from typing import Any

import pytest
from conftest import KINDS, minimal_message

import pgm_explore
from pgm_explore.spec import data_type
from pgm_explore.validation import RULES, Finding, Report, _schema, validate


@pytest.mark.parametrize(("type_name", "mode"), KINDS)
def test_minimal_messages_conform_without_findings(type_name: str, mode: str | None) -> None:
    report = validate(minimal_message(type_name, mode))
    assert (report.type, report.mode, report.conforms, report.findings) == (type_name, mode, True, ())


def _rules(report: Report) -> list[tuple[str, str]]:
    return [(f.rule, f.json_path) for f in report.findings]


def test_other_mode_property_is_named() -> None:
    doc = minimal_message("BKN-DAC", "RQ") | {
        "Outcome": "answered",
        "Feasibility": {"Steps": [], "Overall": "feasible"},
    }
    report = validate(doc)
    assert not report.conforms
    assert _rules(report) == [("mode-forbidden", "$.Outcome"), ("mode-forbidden", "$.Feasibility")]
    assert report.findings[0].message == "Outcome is a Response property and may not appear in a Request."
    assert "DECISIONS D8" in report.findings[0].spec


def test_request_property_in_response() -> None:
    report = validate(minimal_message("BKN-PAL", "RS") | {"Question": "Which stance?"})
    assert _rules(report) == [("mode-forbidden", "$.Question")]
    assert report.findings[0].message == "Question is a Request property and may not appear in a Response."


@pytest.mark.parametrize(
    ("type_name", "mode", "missing", "requirement"),
    [
        ("BKN-DAC", "RQ", "Kind", "Request"),
        ("BKN-PRC", "RQ", "Kind", "Request"),
        ("BKN-PAL", "RS", "RequestID", "Correlation"),
        ("BKN-DAC", "RS", "Outcome", "Response"),
    ],
)
def test_mode_requirements(type_name: str, mode: str, missing: str, requirement: str) -> None:
    doc = minimal_message(type_name, mode)
    del doc[missing]
    report = validate(doc)
    assert _rules(report) == [("mode-required", f"$.{missing}")]
    assert f'{type_name} Functional Requirement "{requirement}"' in report.findings[0].spec


def test_bkn_pal_request_needs_no_kind() -> None:
    assert validate(minimal_message("BKN-PAL", "RQ")).conforms


def test_enumeration_lists_allowed_values_and_suggests() -> None:
    doc = minimal_message("BKN-DAC", "RS") | {
        "Feasibility": {"Steps": [{"Step": 0, "PAStatus": "FaultyPA", "Reason": "x"}], "Overall": "infeasible"}
    }
    report = validate(doc)
    assert _rules(report) == [("enum", "$.Feasibility.Steps[0].PAStatus")]
    message = report.findings[0].message
    assert "Ack, Clash, FaultyReq, IncID, IncDQ, InsRights, InsValue, LocOOR, PostRef, QualNS" in message
    assert 'Did you mean "FaultyReq"?' in message
    assert report.findings[0].spec == "BKN-DAC Table 3 (Response), Feasibility – Steps – PAStatus"


@pytest.mark.parametrize(("value", "conforms"), [(1, True), (1.0, True), ("1", False), (True, False), (1.5, False)])
def test_integer_is_json_schemas(value: Any, conforms: bool) -> None:
    report = validate(minimal_message("BKN-PRC", "RQ") | {"TurnIndex": value})
    assert report.conforms is conforms
    if not conforms:
        assert _rules(report) == [("type", "$.TurnIndex")]


def test_missing_property_is_reported_at_its_own_path() -> None:
    doc = minimal_message("BKN-DAC", "RS") | {"Feasibility": {"Overall": "feasible"}}
    assert _rules(validate(doc)) == [("required", "$.Feasibility.Steps")]


def test_data_exchange_metadata_is_required_by_the_metadata_requirement() -> None:
    doc = minimal_message("PC Prompt")
    del doc["DataXMData"]
    report = validate(doc)
    assert _rules(report) == [("required", "$.DataXMData")]
    assert report.findings[0].spec.startswith('PC Prompt Functional Requirement "Metadata"')


def test_unknown_property_with_suggestion() -> None:
    report = validate(minimal_message("BKN-DAC", "RQ") | {"Questoin": "Where?"})
    assert _rules(report) == [("unknown-property", "$.Questoin")]
    assert 'Did you mean "Question"?' in report.findings[0].message


def test_bundled_schema_findings_name_their_source() -> None:
    doc = minimal_message("BKN-DAC", "RQ")
    doc["DataXMData"]["Source"] = [{"AIMID": "PGM-BKN", "ImplementerAIMID": "x"}]
    report = validate(doc)
    assert _rules(report) == [("one-of", "$.DataXMData.Source[0]")]
    assert "{AIMID} or {ImplementerAIMID}" in report.findings[0].message
    assert report.findings[0].spec.startswith("PTF V1.0 Data Exchange Metadata")


def test_simple_time_quirk_is_explained() -> None:
    doc = minimal_message("BKN-PAL", "RQ")
    segment = doc["QueryTime"]["SimpleTimeData"][0]
    del segment["AccuracyMode"]
    report = validate(doc)
    assert [f.path[-1] for f in report.findings] == ["AccuracyStartPlusMinus", "AccuracyEndPlusMinus"]
    assert "without AccuracyMode" in report.findings[0].message


def test_one_finding_per_problem_with_many_problems() -> None:
    doc = minimal_message("BKN-DAC", "RQ") | {"TurnIndex": -1, "Outcome": "answered", "Extra": 1}
    del doc["Kind"]
    report = validate(doc)
    keys = _rules(report)
    assert len(keys) == len(set(keys)) == 4
    assert {rule for rule, _ in keys} == {"range", "mode-forbidden", "unknown-property", "mode-required"}
    assert report.best is not None and report.best.rule in {
        "range",
        "mode-forbidden",
        "unknown-property",
        "mode-required",
    }


def test_consistency_never_changes_the_verdict() -> None:
    doc = minimal_message("BKN-DAC", "RS") | {
        "Feasibility": {
            "Steps": [{"Step": 0, "PAStatus": "Ack"}, {"Step": 1, "PAStatus": "InsValue"}],
            "Overall": "feasible",
        }
    }
    report = validate(doc)
    assert report.conforms
    assert _rules(report) == [
        ("overall-mismatch", "$.Feasibility.Overall"),
        ("reason-missing", "$.Feasibility.Steps[1].Reason"),
    ]
    assert "partially_feasible" in report.findings[0].message
    assert report.findings[0].severity == "error" and report.findings[1].severity == "warning"


def test_empty_values_are_warnings_not_errors() -> None:
    report = validate(minimal_message("BKN-PRC", "RQ") | {"Question": "", "EntityIDs": []})
    assert report.conforms
    assert _rules(report) == [("empty-value", "$.Question"), ("empty-value", "$.EntityIDs")] or _rules(report) == [
        ("empty-value", "$.EntityIDs"),
        ("empty-value", "$.Question"),
    ]
    assert all(f.severity == "warning" for f in report.findings)


def test_open_properties_are_not_looked_into() -> None:
    report = validate(minimal_message("PC Prompt") | {"SceneContext": {"Objects": [], "Note": ""}, "Intent": ""})
    assert report.conforms
    assert report.findings == ()


@pytest.mark.parametrize(
    ("document", "rule"),
    [
        ({"Mode": "RQ"}, "header-missing"),
        ({"Header": "PGM-KDA-V1.1"}, "header-unknown"),
        ({"Header": 7}, "header-unknown"),
        ([1, 2], "not-object"),
        ("null", "not-object"),
        ('{"a": NaN}', "syntax"),
        ("{", "syntax"),
        (b"\xff\xfe", "encoding"),
        ("  ", "empty"),
        ("[" * 100_000, "too-deep"),
    ],
)
def test_input_problems_are_findings(document: Any, rule: str) -> None:
    report = validate(document)
    assert (report.conforms, report.type, [f.rule for f in report.findings]) == (False, None, [rule])


def test_close_header_is_suggested() -> None:
    report = validate({"Header": "PGM-KDA-V1.1"})
    assert 'Did you mean "PGM-KDA-V1.0" (BKN-DAC)?' in report.findings[0].message


def test_long_values_are_not_echoed() -> None:
    report = validate(minimal_message("BKN-PAL", "RQ") | {"TurnIndex": "x" * 10_000_000})
    assert len(report.findings[0].message) < 200


def test_json_text_is_accepted() -> None:
    import json

    assert validate(json.dumps(minimal_message("BKN-PAL", "RS"))).conforms


def test_lone_surrogates_do_not_break_validation_or_display() -> None:
    report = validate(minimal_message("BKN-PAL", "RQ") | {"Question": "\ud800?"})
    assert report.conforms
    bad = validate(minimal_message("BKN-PAL", "RQ") | {"Question": 1, "\ud800": 2})
    assert "text/html" in bad._repr_mimebundle_()


def test_engines_agree_on_every_variation() -> None:
    """The compiled verdict equals python-jsonschema's on each one-step variation of the minimal messages."""
    variations = []
    for type_name, mode in KINDS:
        base = minimal_message(type_name, mode)
        variations.append(base)
        for key in base:
            dropped = copy.deepcopy(base)
            del dropped[key]
            variations.append(dropped)
            for value in (None, 1, 1.5, "x", [], {}, True):
                variations.append(copy.deepcopy(base) | {key: value})
    dt_by_header = {dt.header: dt for dt in pgm_explore.DATA_TYPES}
    for doc in variations:
        header = doc.get("Header")
        dt = dt_by_header.get(header) if isinstance(header, str) else None
        if dt is None:
            continue
        assert _schema.is_valid(dt, doc) == _schema._py_validator(dt).is_valid(doc), doc
        report = validate(doc)
        assert report.conforms == (not any(f.conformance for f in report.findings)), doc


def test_report_display_escapes_user_text() -> None:
    report = validate(minimal_message("BKN-PAL", "RQ") | {"<script>alert(1)</script>": 1}, source="<b>file</b>")
    html = report._repr_mimebundle_()["text/html"]
    assert "<script>alert" not in html and "&lt;script&gt;" in html
    assert "<b>file</b>" not in html
    assert report._repr_mimebundle_(include=["text/plain"]).keys() == {"text/plain"}
    assert report._repr_mimebundle_(exclude=["text/html"]).keys() == {"text/plain"}


def test_display_never_raises() -> None:
    broken = Report("BKN-PAL", "RQ", False, (Finding("required", ("x",), "m", "s"),), source=None)
    object.__setattr__(broken, "findings", None)  # a corrupted report must still display
    bundle = broken._repr_mimebundle_()
    assert "text/plain" in bundle and "text/html" in bundle


def test_report_to_frame_and_dict() -> None:
    report = validate(minimal_message("BKN-PAL", "RQ") | {"Extra": 1}, source="a.json")
    frame = report.to_frame()
    assert list(frame.columns) == ["source", "type", "mode", "severity", "rule", "path", "message", "spec"]
    assert frame.iloc[0].to_dict()["path"] == "$.Extra"
    assert list(report.to_dict()) == ["source", "type", "mode", "conforms", "findings"]
    assert list(report.to_dict()["findings"][0]) == ["severity", "rule", "path", "message", "spec"]


def test_at_finds_findings_below_a_path() -> None:
    doc = minimal_message("BKN-DAC", "RS") | {"Feasibility": {"Steps": [{"Step": -1, "PAStatus": "X"}]}}
    report = validate(doc)
    assert {f.json_path for f in report.at(["Feasibility"])} == {
        "$.Feasibility.Overall",
        "$.Feasibility.Steps[0].Step",
        "$.Feasibility.Steps[0].PAStatus",
    }
    assert report.at(["Answer"]) == ()


def test_every_rule_has_a_severity_and_summary() -> None:
    for code, rule in RULES.items():
        assert rule.code == code and rule.summary.endswith(".")


def test_spec_reference_for_nested_rows() -> None:
    assert data_type("PC Prompt").clause(("ActionContext", "MaxSteps")) == "PC Prompt Table 1, ActionContext – MaxSteps"
