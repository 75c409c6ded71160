"""validate(): verdicts, findings that a person can act on, and displays that never fail."""

from __future__ import annotations

import copy
import json
from typing import Any

import pytest
from conftest import KINDS, minimal_message

import pgm_explore
from pgm_explore.spec import data_type
from pgm_explore.validation import RULES, Finding, Report, _advisory, _explain, _schema, validate


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


def test_lone_surrogates_are_an_encoding_finding_and_do_not_break_display() -> None:
    # One verdict everywhere (issue 11): UTF-8 cannot encode "\ud800", so no file, model or
    # transcript can carry it; validate says so at the string's path instead of passing it on.
    report = validate(minimal_message("BKN-PAL", "RQ") | {"Question": "\ud800?"})
    assert (report.conforms, [(f.rule, f.json_path) for f in report.findings]) == (False, [("encoding", "$.Question")])
    assert "\ud800" not in report.findings[0].message and "\\ud800" in report.findings[0].message
    bad = validate(minimal_message("BKN-PAL", "RQ") | {"Question": 1, "\ud800": 2})
    assert [(f.rule, f.json_path) for f in bad.findings] == [("encoding", "$['\\ud800']")]
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


# --- the fast path says what the full path says ------------------------------------------


def _documents() -> list[dict[str, Any]]:
    """Every example message that reads as an object, and one-step variations of the minimal
    messages and of a few rich ones (nested values dropped, emptied or mistyped)."""
    import json

    from conftest import EXAMPLES

    docs = []
    for path in sorted(EXAMPLES.glob("*/*/*.json")):
        if not path.name.endswith(".expected.json"):
            doc = json.loads(path.read_text(encoding="utf-8"))
            docs.append(doc)
    for type_name, mode in KINDS:
        base = minimal_message(type_name, mode)
        for key in base:
            dropped = copy.deepcopy(base)
            del dropped[key]
            docs.append(dropped)
            for value in (None, 1, "", "x", [], [""], {}, True):
                docs.append(copy.deepcopy(base) | {key: value})
    rich = ["bkn-dac/valid/rs-feasibility-market.json", "bkn-dac/valid/rq-commitment.json"]
    for name in rich:
        base = json.loads((EXAMPLES / name).read_text(encoding="utf-8"))
        for key, value in base.items():
            items = value.items() if isinstance(value, dict) else enumerate(value) if isinstance(value, list) else ()
            for inner, _ in list(items):
                for replacement in (None, "", [], {}, 1, "Ack"):
                    varied = copy.deepcopy(base)
                    varied[key][inner] = replacement
                    docs.append(varied)
    return docs


class _Declared(dict):  # type: ignore[type-arg]
    """A message's properties that its rules declare they read; reading any other fails the test."""

    def __init__(self, properties: dict[str, Any], declared: set[str]) -> None:
        super().__init__(properties)
        self.declared = declared

    def _look(self, key: object) -> None:
        assert key in self.declared, f"a rule reads {key!r}, which it does not declare"

    def get(self, key: str, default: Any = None) -> Any:
        self._look(key)
        return super().get(key, default)

    def __getitem__(self, key: str) -> Any:
        self._look(key)
        return super().__getitem__(key)

    def __contains__(self, key: object) -> bool:
        self._look(key)
        return super().__contains__(key)


class _Presence:
    """A value a rule declares it reads only for whether it is true: reading anything more of it
    (its type, its items, its members, an equality) fails the test."""

    def __init__(self, value: Any) -> None:
        self._true = bool(value)

    def __bool__(self) -> bool:
        return self._true

    def _read(self, *_: Any) -> Any:
        raise AssertionError("a rule reads more of a value than whether it is true, yet declares it present=")

    __eq__ = __ne__ = __str__ = __format__ = __iter__ = __len__ = __getitem__ = __contains__ = _read  # type: ignore[assignment]
    __hash__ = None  # type: ignore[assignment]

    @property  # type: ignore[misc]
    def __class__(self) -> type:  # (isinstance asks it)
        return self._read()  # type: ignore[no-any-return]


def test_the_fast_path_says_what_the_full_path_says(monkeypatch: pytest.MonkeyPatch) -> None:
    """The three short cuts of validate() change no report: the combined verdict and
    advisory check, python-jsonschema explaining only where jsonschema-rs saw a problem,
    and consistency rules run only when the property they read is present."""
    from pgm_explore.spec import HEADERS
    from pgm_explore.validation._consistency import _DECLARED, RULE_FUNCTIONS, consistency_findings

    checked = 0
    for doc in _documents():
        header = doc.get("Header")
        dt = HEADERS.get(header) if isinstance(header, str) else None
        if dt is None:
            continue
        checked += 1
        mode = doc.get("Mode") if dt.has_modes and doc.get("Mode") in ("RQ", "RS") else None
        clean = _advisory.is_clean(dt, doc)
        assert clean == (_schema.is_valid(dt, doc) and not _advisory.advisory_findings(dt, doc)), doc
        every_rule = [f for rule in RULE_FUNCTIONS.get((dt.name, mode or ""), []) for f in rule(dt, doc)]
        assert consistency_findings(dt, doc, mode) == every_rule, doc
        # Each rule reads no property but those it is registered with, and of those it declares
        # present= no more than whether they are true (a message read as a Struct is shown to
        # the rules as far as that): shown only those, and those only as true or false, it finds the same.
        for rule, read, present in _DECLARED.get((dt.name, mode or ""), []):
            shown = _Declared({k: _Presence(v) if k in present else v for k, v in doc.items() if k in read}, read)
            assert rule(dt, shown) == rule(dt, doc), (rule.__name__, doc)
        if not _schema.is_valid(dt, doc):
            pruned = _explain.schema_findings(dt, doc, mode)
            with monkeypatch.context() as patched:
                patched.setattr(_explain, "_explainer", lambda dt, doc: _schema._py_validator(dt))
                assert pruned == _explain.schema_findings(dt, doc, mode), doc
    assert checked > 800


def test_a_line_the_typed_reader_refused_is_reported_the_same() -> None:
    """report_fields(refused=True) asks the schema engines without the clean verdicts first
    (the bulk paths, for a line the typed reader did not take): the same fields."""
    from pgm_explore.validation import report_fields

    checked = 0
    for doc in _documents():
        try:
            read = json.loads(json.dumps(doc, allow_nan=False))  # (what the JSON reader would make)
        except (TypeError, ValueError):
            continue
        checked += 1
        assert report_fields(read, built=False, refused=True) == report_fields(read, built=False), doc
    assert checked > 800


def test_a_final_newline_does_not_match_a_dollar_anchor() -> None:
    # JSON Schema patterns are ECMA-262: "$" is the end of the string, not "before a final \n".
    doc = minimal_message("BKN-DAC", "RQ")
    doc["DataXMData"]["DataType"] = "PGM-KDA-V1.0\n"
    dt = data_type("BKN-DAC")
    assert _schema.is_valid(dt, doc) is False
    assert _schema._py_validator(dt).is_valid(doc) is False
    report = validate(doc)
    assert _rules(report) == [("pattern", "$.DataXMData.DataType")]
    assert '"PGM-KDA-V1.0\n" does not' in report.findings[0].message
    doc["DataXMData"]["DataType"] = "PGM-KDA-V1.0"
    assert validate(doc).conforms


@pytest.mark.parametrize("status", [[], {}, 1, None])
def test_a_pa_status_of_any_json_type_is_a_finding(status: Any) -> None:
    # A list or an object is unhashable: the consistency rules once raised TypeError on it.
    # A value of the wrong type is one problem: its type, not also its enum (issue #12).
    doc = minimal_message("BKN-DAC", "RS") | {
        "Feasibility": {"Steps": [{"Step": 0, "PAStatus": status}], "Overall": "feasible"}
    }
    report = validate(doc)
    assert _rules(report) == [("type", "$.Feasibility.Steps[0].PAStatus")]


def test_statement_verdicts_are_per_text_and_findings_per_step() -> None:
    bad = "Purchase With Transaction With SPM (Status=Model)"
    for steps in ([3, 4], [5, 6]):
        doc = minimal_message("BKN-DAC", "RQ") | {
            "Kind": "feasibility",
            "ProcessActions": [{"Step": step, "Statement": bad} for step in steps],
        }
        messages = [f.message for f in validate(doc).findings]
        assert [m.split(":")[0] for m in messages] == [f"Step {step}" for step in steps]
    long = "MM-Send Nil Message To proc-user-lucia With Rights (Status=Model)" + " With Stream" * 100
    doc = minimal_message("BKN-DAC", "RQ") | {
        "Kind": "feasibility",
        "ProcessActions": [{"Step": 0, "Statement": long + " If"}],
    }
    assert _rules(validate(doc)) == [("statement-syntax", "$.ProcessActions[0].Statement")]


# --- what the reader reports ---------------------------------------------------------------


def test_nan_inside_a_string_does_not_move_the_position() -> None:
    report = validate('{"Question": "NaN, or \\"Infinity\\"?",\n "TurnIndex": NaN}')
    finding = report.findings[0]
    assert (finding.rule, finding.line, finding.column) == ("syntax", 2, 15)
    assert finding.message.startswith("NaN is not a JSON value")
    report = validate('{"Question": "-Infinity", "Confidence": -Infinity}')
    assert (report.findings[0].line, report.findings[0].column) == (1, 41)


def test_an_integer_too_long_to_read_is_too_large_not_nan() -> None:
    from pgm_explore.validation import _parse

    digits = "1" + "0" * 4300
    text = '{"Header": "PGM-KPR-V1.0",\n "Note": "' + digits + '", "TurnIndex": ' + digits + "}"
    report = validate(text)
    finding = report.findings[0]
    assert (report.conforms, [f.rule for f in report.findings]) == (False, ["too-large"])
    assert (finding.line, finding.column) == (2, text.split("\n")[1].rindex(digits) + 1)
    assert "4,301 digits" in finding.message and "NaN" not in finding.message
    assert validate('{"TurnIndex": -' + digits + "}").findings[0].column == 15
    # 4,300 digits are read, and so is a number a double holds, however it is written.
    for number in (digits[:-1], "1." + digits, "0e-" + digits, "1e300"):
        assert [f.rule for f in validate('{"TurnIndex": ' + number + "}").findings] == ["header-missing"], number
    # (A number nearer to 0 than any double is read next to 0, and said so: issue 24.)
    for number in ("1e-" + digits, "-1e-" + digits):
        found = validate('{"TurnIndex": ' + number + "}").findings
        assert [f.rule for f in found] == ["header-missing", "beyond-double"], number
    # Beyond a double, a number is read as the integer it is (issue #12: not as infinity), so
    # the same limit holds whether its digits are written out or stand behind an exponent.
    for number in (digits + ".5", digits + "e3", "1e4301", "-1e9999999999"):
        found = validate('{"TurnIndex": ' + number + "}").findings
        assert [(f.rule, f.line, f.column) for f in found] == [("too-large", 1, 15)], number
    # Only the reader's NaN hook raises what is reported as NaN.
    assert not issubclass(_parse._NonJsonConstant, ValueError)


# --- long names and values are quoted, not echoed --------------------------------------------


def test_a_10_mb_property_name_gives_a_short_message() -> None:
    report = validate(minimal_message("BKN-PAL", "RQ") | {"Q" * 10_000_000: 1})
    assert [f.rule for f in report.findings] == ["unknown-property"]
    message = report.findings[0].message
    assert len(message) < 200 and "…" in message and "Did you mean" not in message
    assert _explain._close("Questoin" * 10, ["Question"]) == ""  # difflib is quadratic in the length


@pytest.mark.parametrize(
    "document",
    [
        {"Header": "PGM-KDA-V1.0" + "x" * 1_000_000},
        minimal_message("BKN-DAC", "RQ") | {"Kind": "k" * 1_000_000},
        minimal_message("BKN-DAC", "RQ") | {"TurnIndex": -(10**4000)},
        minimal_message("BKN-DAC", "RQ")
        | {
            "Kind": "feasibility",
            "ProcessActions": [{"Step": "s" * 1_000_000, "Statement": "Purchase" + "x" * 100_000}] * 2,
        },
        minimal_message("BKN-DAC", "RQ") | {"Kind": "c" * 1_000_000, "ProcessActions": [{"Step": 0}]},
        minimal_message("BKN-DAC", "RS")
        | {"CommitmentStatus": [{"CommitmentID": "c" * 1_000_000, "Status": "retained"}] * 2},
    ],
    ids=["header", "enum", "range", "statement", "kind", "commitment-id"],
)
def test_echoed_values_are_clipped(document: dict[str, Any]) -> None:
    report = validate(document)
    assert report.findings
    assert all(len(f.message) < 400 for f in report.findings), [len(f.message) for f in report.findings]


def test_an_integer_python_will_not_write_is_a_finding_not_an_exception() -> None:
    # The reader refuses them, but a dict built in Python can hold one; python-jsonschema
    # raised ValueError writing its own message about the value. It is judged like any
    # other value (issue #11), and the message gives its size.
    report = validate(minimal_message("BKN-DAC", "RQ") | {"Question": 10**5000})
    assert (report.type, report.conforms, _rules(report)) == ("BKN-DAC", False, [("type", "$.Question")])
    assert "an integer of about 5,000 digits" in report.findings[0].message
    assert "about 5,000 digits" in validate({"Header": 10**5000}).findings[0].message
    doc = minimal_message("BKN-DAC", "RS") | {"CommitmentStatus": [{"CommitmentID": 10**5000, "Status": "x"}] * 2}
    assert _rules(validate(doc)) == [
        ("type", "$.CommitmentStatus[0].CommitmentID"),
        ("enum", "$.CommitmentStatus[0].Status"),
        ("type", "$.CommitmentStatus[1].CommitmentID"),
        ("enum", "$.CommitmentStatus[1].Status"),
    ]


# --- numbers beyond a double, integers beyond Python's digit limit (issues #11, #12) ----------


def test_a_number_beyond_a_double_gets_the_schemas_verdict_in_validate_check_and_the_models(tmp_path: Any) -> None:
    from conftest import EXAMPLES

    from pgm_explore.dialogue import check_paths
    from pgm_explore.models import parse_message
    from pgm_explore.validation import loads

    raw = (EXAMPLES / "pc-prompt" / "invalid" / "walletlimit-beyond-double.json").read_bytes()
    report = validate(raw)
    assert report.conforms
    assert [(f.rule, f.json_path) for f in report.findings] == [("beyond-double", "$.ActionContext.WalletLimit")]
    message = parse_message(loads(raw))
    assert message.ActionContext.WalletLimit == 10**400
    line = tmp_path / "t.jsonl"
    line.write_bytes(raw.replace(b"\n", b"") + b"\n")
    assert [(f.rule, f.path) for f in check_paths([str(line)])] == [("beyond-double", "$.ActionContext.WalletLimit")]
    # Below the bound, the number is a range error and nothing else, in the models too.
    negative = loads(raw.replace(b'"WalletLimit": 1e400', b'"WalletLimit": -1e400'))
    assert [f.rule for f in validate(negative).findings] == ["range"]
    with pytest.raises(ValueError, match="greater than or equal to 0"):
        parse_message(negative)


@pytest.mark.parametrize(
    ("where", "value", "expected"),
    [
        (("TurnIndex",), -(10**4400), [("range", "$.TurnIndex")]),
        (("TurnIndex",), 10**5000, []),
        (
            ("QueryTime", "SimpleTimeData", 0, "FlagsByte"),
            10**5000,
            [("range", "$.QueryTime.SimpleTimeData[0].FlagsByte")],
        ),
        (
            ("QueryTime", "SimpleTimeData", 0, "TimeUnit"),
            10**5000,
            [("type", "$.QueryTime.SimpleTimeData[0].TimeUnit")],
        ),
    ],
    ids=["minus-10e4400-turnindex", "10e5000-turnindex", "10e5000-flagsbyte", "10e5000-timeunit"],
)
def test_an_integer_longer_than_python_writes_gets_the_schemas_verdict(
    where: tuple[Any, ...], value: int, expected: list[tuple[str, str]]
) -> None:
    # Only a dict built in Python holds one (the readers refuse them as too-large), and the
    # compiled engine took -10**4400 for a TurnIndex of at least 0.
    doc = minimal_message("BKN-PAL", "RQ")
    doc["QueryTime"]["SimpleTimeData"] = [{"FlagsByte": 3, "StartTime": 0, "EndTime": 0, "AccuracyMode": "single",
                                           "AccuracyPlusMinus": 5}]  # fmt: skip
    target = doc
    for key in where[:-1]:
        target = target[key]
    target[where[-1]] = value
    report = validate(doc)
    assert [(f.rule, f.json_path) for f in report.findings] == expected
    assert report.conforms is (not expected)
    for finding in report.findings:
        assert "digits" in finding.message


def test_every_keyword_that_fails_on_its_own_has_its_translation() -> None:
    # issue 24: the explanation is a table of keyword -> function; a keyword of the schemas
    # without one would be reported in python-jsonschema's words (`schema`).
    from jsonschema import Draft202012Validator

    from pgm_explore.spec import schema_resources
    from pgm_explore.validation._explain import _TRANSLATIONS

    keywords: set[str] = set()
    pending: list[Any] = [dict(resource) for resource in schema_resources().values()]
    while pending:
        node = pending.pop()
        if isinstance(node, dict):
            keywords.update(node)
            pending.extend(node.values())
        elif isinstance(node, list):
            pending.extend(node)
    # These fail only through the keywords below them, which are translated where they fail.
    applicators = {"$ref", "allOf", "if", "items", "properties"}
    used = keywords & set(Draft202012Validator.VALIDATORS)
    assert used - applicators <= set(_TRANSLATIONS), used - applicators - set(_TRANSLATIONS)
    assert used - applicators, "the schemas were not walked"


def test_empty_value_advice_fits_a_required_or_an_optional_property() -> None:
    # Issue 21: a required property cannot be left out, so its advice is to fill it in.
    from pgm_explore.dialogue.documents import skeleton

    doc = {**skeleton("BKN-DAC", "RS"), "RequestID": "", "DescrMetadata": ""}
    said = {f.path: f.message for f in validate(doc).findings if f.rule == "empty-value"}
    assert said[("MInstance",)].endswith("(fill it in).")
    assert said[("RequestID",)].endswith("(fill it in).")  # required in a Response (Mode's if/then)
    assert said[("DescrMetadata",)].endswith("(leave it out if there is none).")
