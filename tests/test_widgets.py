"""MessageComposer, headless: set values through the widgets, assert on the document and findings.

No kernel is attached (TOOLING.md 2): widgets are built and driven in plain pytest, and what a
browser would show is read from the widget tree (children and CSS classes).
"""

from __future__ import annotations

import ast
import copy
import json
import os
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("ipywidgets")

import ipywidgets as widgets
from conftest import EXAMPLES, KINDS, example_files, load, minimal_message
from traitlets import TraitError

from pgm_explore.spec.process_actions import PA_STATUS
from pgm_explore.validation import validate
from pgm_explore.widgets import (
    MessageComposer,
    _drafts,
    default_draft_dir,
    reply_document,
    skeleton,
)

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(autouse=True)
def _drafts_in_tmp(drafts_folder: Path) -> Path:
    """Drafts and saved files go to a temporary folder, never to the home directory."""
    return drafts_folder


def walk(widget: widgets.Widget) -> Iterator[widgets.Widget]:
    """The widget and everything it shows (what would be in the DOM)."""
    yield widget
    for child in getattr(widget, "children", ()):
        yield from walk(child)


def find(widget: widgets.Widget, css_class: str) -> list[widgets.Widget]:
    return [w for w in walk(widget) if css_class in getattr(w, "_dom_classes", ())]


def one(widget: widgets.Widget, css_class: str) -> widgets.Widget:
    found = find(widget, css_class)
    assert len(found) == 1, f"{len(found)} widgets with class {css_class}"
    return found[0]


def composer(type_name: str = "BKN-DAC", mode: str | None = "RQ", **kwargs: Any) -> MessageComposer:
    c = MessageComposer(type_name, mode, **kwargs)
    assert c.errors == []
    return c


def rules(c: MessageComposer) -> list[tuple[str, tuple[str | int, ...]]]:
    return [(f.rule, f.path) for f in c.findings]


def json_view(c: MessageComposer) -> str:
    return one(c, "pgmx-json").value


# -- building -------------------------------------------------------------------------------------


@pytest.mark.parametrize(("type_name", "mode"), KINDS, ids=[f"{t}-{m}" for t, m in KINDS])
def test_each_type_and_mode_builds_a_conforming_skeleton(type_name: str, mode: str | None) -> None:
    c = composer(type_name, mode)
    assert c.type_name == type_name and c.mode == (mode or "")
    assert c.conforms, rules(c)
    assert all(f.severity == "warning" for f in c.findings)  # only "fill this in" warnings
    assert bool(find(c, "pgmx-mode")) == (mode is not None)


def test_every_example_loads_into_one_composer_unchanged() -> None:
    # One composer for all: load() must reset the form between documents and types.
    c = composer("PC Prompt", None, draft_dir=False)
    paths = example_files("valid") + example_files("invalid")
    assert len(paths) > 60
    for path in paths:
        doc = load(path)
        c.load(doc)
        assert json.dumps(c.value) == json.dumps(doc), path.name
        assert c.findings == list(validate(doc).findings), path.name
        assert json_view(c) == json.dumps(doc, indent=2, ensure_ascii=False)
    assert c.errors == []


def test_labels_are_mpai_labels_with_the_spec_text_as_tooltip() -> None:
    c = composer("BKN-DAC", "RS")
    c.set(("Feasibility", "Steps", 0, "PAStatus"), "Ack")
    field = c.field(("Feasibility", "Steps", 0, "PAStatus"))
    assert field.label_text == "PAStatus" and "PA Status of MMM-TEC V2.2" in field.tooltip
    # The browser shows the text on hover (a title) and under the (i), with each code's meaning.
    assert '<span class="pgmx-name" title="The PA Status of MMM-TEC V2.2' in field.label.value
    assert f"<code>InsRights</code> {PA_STATUS['InsRights'].meaning}" in field.label.value


def test_from_document_and_from_file(tmp_path: Path) -> None:
    path = EXAMPLES / "bkn-pal" / "valid" / "rs-tutor-stance.json"
    c = MessageComposer.from_file(path)
    assert (c.type_name, c.mode, c.value) == ("BKN-PAL", "RS", load(path))
    assert MessageComposer.from_document(load(path)).value == load(path)
    with pytest.raises(ValueError, match="names no PGM-AUA"):
        MessageComposer.from_document({"Header": "nope"})
    (tmp_path / "many.json").write_text("[{}, {}]", encoding="utf-8")
    with pytest.raises(ValueError, match="DialogueBuilder"):
        MessageComposer.from_file(tmp_path / "many.json")


def test_only_the_widgets_package_imports_ipywidgets() -> None:
    for path in (ROOT / "pgm_explore").rglob("*.py"):
        if "widgets" in path.relative_to(ROOT / "pgm_explore").parts:
            continue
        tree = ast.parse(path.read_text(encoding="utf-8"))
        names = {a.name for n in ast.walk(tree) if isinstance(n, ast.Import) for a in n.names}
        names |= {n.module or "" for n in ast.walk(tree) if isinstance(n, ast.ImportFrom)}
        assert not any(name.split(".")[0] == "ipywidgets" for name in names), path


# -- setting and getting by path ------------------------------------------------------------------


def test_set_and_get_a_top_level_string() -> None:
    c = composer()
    c.set(["Question"], "Which lantern is blue?")
    assert c.get(["Question"]) == c.value["Question"] == "Which lantern is blue?"
    assert c.field(("Question",)).editor.value == "Which lantern is blue?"


def test_set_switches_on_absent_parents_and_adds_items() -> None:
    c = composer("BKN-DAC", "RS")
    c.set(("Feasibility", "Steps", 0, "PAStatus"), "Clash")
    assert c.value["Feasibility"] == {"Steps": [{"Step": 0, "PAStatus": "Clash"}], "Overall": "feasible"}


def test_get_and_set_refuse_what_is_not_there() -> None:
    c = composer()
    with pytest.raises(KeyError):
        c.get(("Question",))  # optional and absent
    with pytest.raises(KeyError):
        c.set(("TurnIndex", "x"), 1)
    c.set(("EntityIDs", 0), "a")
    with pytest.raises(IndexError):
        c.set(("EntityIDs", 5), "b")


# -- optional properties: absent is not empty -----------------------------------------------------


def test_an_optional_property_switched_on_is_empty_and_switched_off_is_absent() -> None:
    c = composer()
    question = c.field(("Question",))
    assert "Question" not in c.value and question.include is not None and not question.include.value
    question.include.value = True  # the user ticks the box
    assert c.value["Question"] == ""
    c.field(("EntityIDs",)).include.value = True
    assert c.value["EntityIDs"] == []
    assert ("empty-value", ("EntityIDs",)) in rules(c)
    c.remove(("EntityIDs",))
    assert "EntityIDs" not in c.value
    assert ("empty-value", ("EntityIDs",)) not in rules(c)


def test_switching_a_property_off_and_on_keeps_what_was_typed() -> None:
    c = composer()
    c.set(("Question",), "Kept?")
    c.field(("Question",)).include.value = False
    assert "Question" not in c.value
    c.field(("Question",)).include.value = True
    assert c.value["Question"] == "Kept?"


def test_a_switched_on_property_takes_its_schema_position() -> None:
    c = composer()
    c.set(("Question",), "q")
    keys = list(c.value)
    assert keys.index("Kind") < keys.index("Question") < keys.index("DataXMData")


def test_a_missing_required_property_can_be_added_from_its_finding() -> None:
    c = MessageComposer.from_file(EXAMPLES / "pc-prompt" / "invalid" / "missing-prompt.json")
    prompt = c.field(("Prompt",))
    assert ("required", ("Prompt",)) in rules(c)
    assert prompt.include is not None and prompt.include in prompt.line.children
    assert find(c, "pgmx-finding-Prompt")
    prompt.include.value = True
    c.set(("Prompt",), "Show me the amphora.")
    assert ("required", ("Prompt",)) not in rules(c)
    assert prompt.include not in prompt.line.children  # a required property cannot be switched off
    assert not find(c, "pgmx-finding-Prompt")


# -- arrays ---------------------------------------------------------------------------------------


def test_array_add_remove_and_reorder_with_the_buttons() -> None:
    c = composer("BKN-DAC", "RS")
    sources = c.field(("SourcesUsed",))
    sources.include.value = True
    for text in ("a", "b", "c"):
        sources.add_button.click()
        c.set(("SourcesUsed", len(c.value["SourcesUsed"]) - 1), text)
    assert c.value["SourcesUsed"] == ["a", "b", "c"]
    assert find(c, "pgmx-field-SourcesUsed-2")
    one(sources.rows[2], "pgmx-item-up").click()
    assert c.value["SourcesUsed"] == ["a", "c", "b"]
    one(sources.rows[0], "pgmx-item-down").click()
    assert c.value["SourcesUsed"] == ["c", "a", "b"]
    one(sources.rows[1], "pgmx-item-remove").click()
    assert c.value["SourcesUsed"] == ["c", "b"]
    assert not find(c, "pgmx-field-SourcesUsed-2") and c.errors == []


def test_array_of_objects_findings_follow_the_items() -> None:
    c = composer("BKN-DAC", "RS")
    for step, status in enumerate(("Ack", "Ack", "Ack")):
        c.set(("Feasibility", "Steps", step, "PAStatus"), status)
        c.set(("Feasibility", "Steps", step, "Step"), step)
    c.set(("Feasibility", "Steps", 2, "Step"), 1)
    assert ("duplicate-step", ("Feasibility", "Steps", 2, "Step")) in rules(c)
    assert find(c, "pgmx-finding-Feasibility-Steps-2-Step")
    c.field(("Feasibility", "Steps")).move(2, 0)
    assert [s["Step"] for s in c.value["Feasibility"]["Steps"]] == [1, 0, 1]
    assert find(c, "pgmx-finding-Feasibility-Steps-2-Step")  # the second Step 1 is now last again
    c.remove(("Feasibility", "Steps", 2))
    assert [s["Step"] for s in c.value["Feasibility"]["Steps"]] == [1, 0]
    assert not find(c, "pgmx-finding-Feasibility-Steps-2-Step")


def test_a_union_item_chooses_its_alternative() -> None:
    c = composer()
    c._form.expert_toggle.value = True
    source = c.field(("DataXMData", "Source", 0))
    assert source.choice.options[source.choice.value][0] == "AIMID"
    c.set(("DataXMData", "Source", 0, "ImplementerAIMID"), "impl-7")  # picks the alternative that has it
    assert source.choice.value == 1
    assert c.value["DataXMData"]["Source"] == [{"ImplementerAIMID": "impl-7"}]
    source.choice.value = 0
    assert c.value["DataXMData"]["Source"][0] == {"AIMID": "PGM-BKN"}  # the other alternative was kept
    assert len(find(c, "pgmx-field-DataXMData-Source-0")) == 1


# -- enumerations, numbers and bounds -------------------------------------------------------------


def test_enumerations_are_dropdowns_of_the_schema_values() -> None:
    c = composer("BKN-DAC", "RS")
    c.set(("Feasibility", "Steps", 0, "PAStatus"), "Ack")
    dropdown = c.field(("Feasibility", "Steps", 0, "PAStatus")).editor
    assert isinstance(dropdown, widgets.Dropdown)
    assert [value for _, value in dropdown.options][:3] == ["Ack", "Clash", "FaultyReq"]
    # Each option says what the code means (cut short; the (i) has the whole text).
    assert dict((v, label) for label, v in dropdown.options)["InsRights"] == "InsRights — Insufficient Rights."
    dropdown.value = "QualNS"
    assert c.value["Feasibility"]["Steps"][0]["PAStatus"] == "QualNS"


def test_a_value_outside_the_enumeration_is_kept_and_fixed_from_the_dropdown() -> None:
    c = MessageComposer.from_file(EXAMPLES / "bkn-dac" / "invalid" / "pastatus-per-action-code.json")
    field = c.field(("Feasibility", "Steps", 1, "PAStatus"))
    assert field.raw and field.get() == c.value["Feasibility"]["Steps"][1]["PAStatus"]
    assert find(c, "pgmx-finding-Feasibility-Steps-1-PAStatus")
    field.editor.value = "InsValue"
    assert not field.raw and c.value["Feasibility"]["Steps"][1]["PAStatus"] == "InsValue"
    assert not find(c, "pgmx-finding-Feasibility-Steps-1-PAStatus")


def test_numbers_carry_their_bounds() -> None:
    c = composer("BKN-DAC", "RS")
    turn = c.field(("TurnIndex",))
    # A text box read in the kernel: the browser's number boxes rewrite what is typed.
    assert turn.editor._model_name == "TextModel" and "pgmx-number" in turn.editor._dom_classes
    assert '<span class="pgmx-constraint">≥ 0</span>' in turn.label.value
    c.set(("Answer", "ObjectClasses", 0, "Confidence"), 0.5)
    confidence = c.field(("Answer", "ObjectClasses", 0, "Confidence"))
    assert confidence.editor.value == "0.5"
    assert '<span class="pgmx-constraint">0 – 1</span>' in confidence.label.value
    assert c.value["Answer"]["ObjectClasses"][0]["Confidence"] == 0.5


def test_a_number_out_of_bounds_is_kept_with_its_finding_and_fixed_back() -> None:
    c = composer()
    c.set(("TurnIndex",), -1)
    turn = c.field(("TurnIndex",))
    assert not turn.raw and turn.editor.value == "-1" and c.value["TurnIndex"] == -1
    assert ("range", ("TurnIndex",)) in rules(c)
    box = one(c, "pgmx-field-TurnIndex")
    assert "pgmx-invalid" in box._dom_classes
    assert (
        "at least 0" in one(c, "pgmx-finding-TurnIndex").value or "TurnIndex" in one(c, "pgmx-finding-TurnIndex").value
    )
    c.set(("TurnIndex",), 2)
    assert not turn.raw and turn.editor.value == "2" and c.value["TurnIndex"] == 2
    assert "pgmx-invalid" not in box._dom_classes and not find(c, "pgmx-finding-TurnIndex")


def test_a_string_where_an_integer_belongs_is_kept_as_typed() -> None:
    c = MessageComposer.from_file(EXAMPLES / "bkn-prc" / "invalid" / "turnindex-as-string.json")
    assert isinstance(c.value["TurnIndex"], str) and ("type", ("TurnIndex",)) in rules(c)
    raw = one(c.field(("TurnIndex",)).box, "pgmx-raw")
    raw.value = "7"  # the user types the JSON number
    assert c.value["TurnIndex"] == 7 and ("type", ("TurnIndex",)) not in rules(c)


def test_whole_numbers_stay_whole_and_decimals_stay_decimal() -> None:
    doc = load(EXAMPLES / "bkn-dac" / "valid" / "rs-feasibility-market.json")
    c = MessageComposer.from_document(doc)
    start = c.value["QueryTime"]["SimpleTimeData"][0]["StartTime"]
    assert type(start) is int and json.dumps(c.value) == json.dumps(doc)
    c.set(("QueryTime", "SimpleTimeData", 0, "AccuracyPlusMinus"), 2.5)
    assert c.value["QueryTime"]["SimpleTimeData"][0]["AccuracyPlusMinus"] == 2.5


# -- open properties ------------------------------------------------------------------------------


def test_an_open_property_is_json_text() -> None:
    c = composer("PC Prompt", None)
    c.set(("SceneContext",), {"Room": "Gallery 4", "Entities": []})
    scene = c.field(("SceneContext",))
    assert json.loads(scene.editor.text.value) == {"Room": "Gallery 4", "Entities": []}
    scene.editor.text.value = '"just a sentence"'
    assert c.value["SceneContext"] == "just a sentence"
    assert ("type", ("SceneContext",)) in rules(c)  # SceneContext must be an object
    c.field(("Intent",)).include.value = True
    c.field(("Intent",)).editor.text.value = '"identify_artwork"'
    assert c.value["Intent"] == "identify_artwork" and ("type", ("Intent",)) not in rules(c)


def test_text_that_does_not_parse_is_kept_with_its_error_and_the_last_value_stays() -> None:
    c = composer("PC Prompt", None)
    c.set(("SceneContext",), {"Room": "Gallery 4"})
    editor = c.field(("SceneContext",)).editor
    editor.text.value = '{"Room": "Gallery 4",'
    assert editor.text.value == '{"Room": "Gallery 4",'
    assert c.value["SceneContext"] == {"Room": "Gallery 4"}
    error = one(c.field(("SceneContext",)).box, "pgmx-parse-error")
    assert "pgmx-hidden" not in error._dom_classes and "JSON" in error.value
    editor.text.value = '{"Room": "Gallery 5"}'
    assert c.value["SceneContext"] == {"Room": "Gallery 5"} and "pgmx-hidden" in error._dom_classes


# -- the Mode switch ------------------------------------------------------------------------------


def test_mode_switch_shows_only_that_modes_properties_and_keeps_the_others_aside() -> None:
    c = composer("BKN-DAC", "RQ")
    c.set(("Question",), "Can the lantern be bought?")
    c.set(("Kind",), "feasibility")
    body = c._form.root.body
    assert c.field(("Question",)).box in body.children
    assert c.field(("Outcome",)).box not in body.children
    one(c, "pgmx-mode").value = "RS"  # the user clicks RS
    assert c.mode == "RS" and "Question" not in c.value and "Kind" not in c.value
    assert c.value["Outcome"] == "answered" and "RequestID" in c.value
    assert c.field(("Question",)).box not in body.children and c.field(("Outcome",)).box in body.children
    assert c.aside == {"RQ": {"Kind": "feasibility", "Question": "Can the lantern be bought?"}}
    c.set(("Outcome",), "not_answered")
    c.mode = "RQ"  # the trait works as the toggle does
    assert c.value["Question"] == "Can the lantern be bought?" and c.value["Kind"] == "feasibility"
    assert "Outcome" not in c.value and c.aside == {"RS": {"RequestID": "", "Outcome": "not_answered"}}
    c.mode = "RS"
    assert c.value["Outcome"] == "not_answered"
    assert list(c.value).index("RequestID") < list(c.value).index("DataXMData")


def test_the_other_modes_property_in_a_loaded_document_is_shown_with_its_finding() -> None:
    c = MessageComposer.from_file(EXAMPLES / "bkn-prc" / "invalid" / "request-with-outcome.json")
    assert c.mode == "RQ" and ("mode-forbidden", ("Outcome",)) in rules(c)
    assert c.field(("Outcome",)).box in c._form.root.body.children
    assert find(c, "pgmx-finding-Outcome")
    c.remove(("Outcome",))
    assert c.conforms and c.field(("Outcome",)).box not in c._form.root.body.children


def test_mode_values_are_checked() -> None:
    with pytest.raises(TraitError):
        composer("BKN-DAC", "RQ").mode = "XX"
    with pytest.raises(TraitError):
        composer("PC Prompt", None).mode = "RQ"
    with pytest.raises(ValueError, match="modes"):
        MessageComposer("BKN-PAL", "RX")


# -- Simple Time and Data Exchange Metadata, filled automatically ---------------------------------


@pytest.mark.parametrize(("type_name", "mode"), KINDS, ids=[f"{t}-{m}" for t, m in KINDS])
def test_time_is_now_and_the_sender_follows_type_and_mode(type_name: str, mode: str | None) -> None:
    c = composer(type_name, mode)
    spec = c.spec
    ident = c.value[spec.id_field]
    segment = c.value[spec.time_field]["SimpleTimeData"][0]
    assert abs(segment["StartTime"] / 1000 - time.time()) < 60
    assert c.value[spec.time_field]["SimpleTimeID"] == f"st-{ident}"
    sender = (
        "PGM-BKN" if mode == "RQ" else {"PC Prompt": "PGM-PRC", "BKN-PRC": "PGM-PRC"}.get(type_name, spec.sender_aim)
    )
    assert c.value["DataXMData"] == {
        "Header": "PTF-DEM-V1.0",
        "DataID": ident,
        "DataType": spec.header,
        "Source": [{"AIMID": sender}],
    }


def test_automatic_parts_follow_the_id_and_the_mode() -> None:
    c = composer("BKN-PAL", "RQ")
    c.set(("QueryID",), "kpa-new-1")
    assert c.value["DataXMData"]["DataID"] == "kpa-new-1"
    assert c.value["QueryTime"]["SimpleTimeID"] == "st-kpa-new-1"
    c.mode = "RS"
    assert c.value["DataXMData"]["Source"] == [{"AIMID": "PGM-PAL"}]


def test_an_expert_edit_stops_the_automatic_metadata() -> None:
    c = composer("BKN-PAL", "RQ")
    c._form.expert_toggle.value = True
    assert one(c, "pgmx-expert-view").layout.display != "none"
    c.set(("DataXMData", "Confidence"), 0.9)
    assert not one(c, "pgmx-auto-dem").value
    c.set(("QueryID",), "kpa-other")
    assert c.value["DataXMData"]["DataID"] != "kpa-other" and c.value["DataXMData"]["Confidence"] == 0.9
    one(c, "pgmx-auto-dem").value = True  # back to automatic
    assert c.value["DataXMData"]["DataID"] == "kpa-other" and "Confidence" not in c.value["DataXMData"]


def test_now_stamps_the_time_and_the_summary_line_names_the_sender() -> None:
    c = composer("BKN-DAC", "RS")
    c.set(("QueryTime", "SimpleTimeData", 0, "StartTime"), 0)
    assert c.value["QueryTime"]["SimpleTimeData"][0]["StartTime"] == 0
    one(c, "pgmx-now").click()
    assert abs(c.value["QueryTime"]["SimpleTimeData"][0]["StartTime"] / 1000 - time.time()) < 60
    assert "sender PGM-DAC" in one(c, "pgmx-auto").value


def test_a_finding_in_the_closed_expert_view_is_announced() -> None:
    c = MessageComposer.from_file(EXAMPLES / "bkn-dac" / "invalid" / "datatype-lowercase.json")
    assert "open the expert view" in one(c, "pgmx-auto").value
    assert not find(c, "pgmx-field-DataXMData")  # made when the view is first opened
    c._form.expert_toggle.value = True
    assert "open the expert view" not in one(c, "pgmx-auto").value
    assert find(c, "pgmx-finding-DataXMData-DataType")


# -- inline validation ----------------------------------------------------------------------------


def test_a_finding_appears_at_its_field_and_goes_when_fixed() -> None:
    c = composer("BKN-DAC", "RS")
    c.set(("Feasibility", "Steps", 0, "PAStatus"), "InsValue")
    box = one(c, "pgmx-field-Feasibility-Steps-0-Reason")
    finding = one(c, "pgmx-finding-Feasibility-Steps-0-Reason")
    assert "pgmx-invalid" in box._dom_classes and "pgmx-finding" in finding._dom_classes
    assert "gives no Reason" in finding.value
    c.set(("Feasibility", "Steps", 0, "Reason"), "The lantern costs too much.")
    assert not find(c, "pgmx-finding-Feasibility-Steps-0-Reason")
    assert "pgmx-invalid" not in box._dom_classes


def test_badge_and_summary_table() -> None:
    c = composer()
    badge, summary = one(c, "pgmx-badge"), one(c, "pgmx-summary")
    assert ">conforms<" in badge.value and "pgmx-conforms" in badge._dom_classes
    c.set(("Kind",), "feasibility")
    c.remove(("Kind",))
    assert ">does not conform<" in badge.value and "pgmx-nonconforming" in badge._dom_classes
    assert "mode-required" in summary.value and "$.Kind" in summary.value
    assert c.report is not None and not c.report.conforms and not c.conforms


def test_an_unknown_property_is_kept_shown_and_removable() -> None:
    c = MessageComposer.from_file(EXAMPLES / "bkn-pal" / "invalid" / "stance-tone.json")
    assert ("unknown-property", ("Stance", "Tone")) in rules(c)
    assert find(c, "pgmx-finding-Stance") and find(c.field(("Stance",)).box, "pgmx-extras")
    assert c.get(("Stance", "Tone")) == c.value["Stance"]["Tone"]
    c.remove(("Stance", "Tone"))
    assert "Tone" not in c.value["Stance"] and c.conforms
    c.set(("Stance", "Mood"), "calm")
    assert c.value["Stance"]["Mood"] == "calm" and ("unknown-property", ("Stance", "Mood")) in rules(c)


# -- the raw JSON view ----------------------------------------------------------------------------


def test_the_json_view_is_exactly_what_is_saved(tmp_path: Path) -> None:
    c = composer("BKN-PAL", "RS")
    c.set(("Stance", "Label"), "guide calme — «bienvenue»")
    assert json_view(c) == json.dumps(c.value, indent=2, ensure_ascii=False)
    saved = c.save(tmp_path / "m.json")
    assert saved.read_text(encoding="utf-8") == json_view(c) + "\n"
    mask = os.umask(0o022)
    os.umask(mask)
    assert saved.stat().st_mode & 0o777 == 0o666 & ~mask  # as an ordinary write makes it, not private


def test_editing_the_json_view_updates_the_form() -> None:
    c = composer("BKN-PAL", "RQ")
    doc = copy.deepcopy(c.value)
    doc["TurnIndex"] = 5
    doc["Question"] = "Warm or formal?"
    one(c, "pgmx-json").value = json.dumps(doc)
    assert c.value == doc
    assert c.field(("TurnIndex",)).editor.value == "5" and c.get(("Question",)) == "Warm or formal?"
    assert json_view(c) == json.dumps(doc, indent=2, ensure_ascii=False)


def test_json_that_does_not_parse_stays_in_the_view_until_fixed_or_reverted() -> None:
    c = composer("BKN-PAL", "RQ")
    before = copy.deepcopy(c.value)
    view = one(c, "pgmx-json")
    view.value = '{"Header": "PGM-KPA-V1.0",'
    assert view.value == '{"Header": "PGM-KPA-V1.0",' and c.value == before
    error = one(c, "pgmx-parse-error")
    assert "pgmx-hidden" not in error._dom_classes and "line" in error.value
    c.set(("TurnIndex",), 1)  # a form edit does not throw the typed text away
    assert view.value == '{"Header": "PGM-KPA-V1.0",' and c.value["TurnIndex"] == 1
    view.value = "[1, 2]"
    assert "JSON object" in error.value and c.value["TurnIndex"] == 1
    one(c, "pgmx-json-revert").click()
    assert json.loads(view.value) == c.value and "pgmx-hidden" in error._dom_classes


def test_a_name_typed_twice_in_the_json_view_is_a_warning_beside_it() -> None:
    # issue #12: the last value silently won; the view is rewritten from the value, so the
    # first value would vanish without a word.
    c = composer("BKN-PAL", "RQ")
    text = json.dumps(c.value)
    one(c, "pgmx-json").value = '{"TurnIndex": 7, ' + text[1:]
    assert c.value["TurnIndex"] == 0
    note = one(c, "pgmx-parse-error")
    assert "pgmx-hidden" not in note._dom_classes
    assert "$: The name &quot;TurnIndex&quot; is written twice" in note.value and "Warning" in note.value
    c.set(("TurnIndex",), 1)  # the next edit redraws the view, and the note has been read
    assert "pgmx-hidden" in note._dom_classes


def test_the_json_view_can_change_the_type() -> None:
    c = composer("BKN-PAL", "RQ")
    one(c, "pgmx-json").value = json.dumps(minimal_message("BKN-DAC", "RS"))
    assert (c.type_name, c.mode) == ("BKN-DAC", "RS") and c.conforms
    assert find(c, "pgmx-field-Outcome") and c.errors == []


# -- Reply ----------------------------------------------------------------------------------------


def test_reply_copies_the_context_with_a_fresh_id_and_time() -> None:
    c = MessageComposer.from_file(EXAMPLES / "bkn-dac" / "valid" / "rq-feasibility-market.json")
    request = c.value
    reply = c.reply()
    response = reply.value
    assert reply.mode == "RS" and response["RequestID"] == request["QueryID"]
    for name in ("TurnIndex", "DialogID", "MInstance", "UEnvironment", "SessionID"):
        assert response[name] == request[name], name
    assert response["QueryID"] not in (request["QueryID"], "")
    assert response["QueryTime"] != request["QueryTime"]
    assert response["DataXMData"]["Source"] == [{"AIMID": "PGM-DAC"}]
    # A feasibility Request: one step per Process Action, its Step copied; PAStatus and Overall to choose.
    steps = [a["Step"] for a in request["ProcessActions"]]
    assert response["Feasibility"] == {"Steps": [{"Step": s} for s in steps]}
    assert rules(reply) == [("required", ("Feasibility", "Overall"))] + [
        ("required", ("Feasibility", "Steps", i, "PAStatus")) for i in range(len(steps))
    ]
    for i in range(len(steps)):
        reply.set(("Feasibility", "Steps", i, "PAStatus"), "Ack")
    reply.set(("Feasibility", "Overall"), "feasible")
    assert reply.conforms and rules(reply) == [], rules(reply)


def test_reply_button_shows_the_response_composer_and_is_off_for_a_response() -> None:
    c = composer("BKN-PRC", "RQ")
    button = one(c, "pgmx-reply")
    assert button.description == "Reply" and not button.disabled
    button.click()
    assert c.last_reply is not None and c.last_reply in c._reply_area.children
    assert c.last_reply.value["RequestID"] == c.value["QueryID"]
    c.mode = "RS"
    assert button.disabled
    with pytest.raises(ValueError, match="Request"):
        c.reply()
    with pytest.raises(ValueError):
        reply_document(skeleton("PC Prompt"))


# -- saving and loading ---------------------------------------------------------------------------


def test_save_and_load_round_trip(tmp_path: Path) -> None:
    c = composer("BKN-DAC", "RS")
    c.set(("Answer", "Text"), "Stall 7.")
    path = c.save(tmp_path / "out" / "answer.json")
    assert path.is_absolute() and json.loads(path.read_text(encoding="utf-8")) == c.value
    other = composer("PC Prompt", None)
    other.load(path)
    assert other.value == c.value and other.type_name == "BKN-DAC"
    assert MessageComposer.from_file(path).value == c.value


def test_loading_a_file_says_which_names_it_writes_twice(tmp_path: Path) -> None:
    path = tmp_path / "twice.json"
    path.write_text('{"Header": "PGM-KPA-V1.0", "Mode": "RQ", "Mode": "RS"}', encoding="utf-8")
    c = composer("PC Prompt", None)
    notes = c.load(path)
    assert c.value["Mode"] == "RS" and [(n.rule, n.json_path) for n in notes] == [("duplicate-key", "$")]
    assert c.load(dict(c.value)) == () and c.load(EXAMPLES / "bkn-pal" / "valid" / "rq-minimal.json") == ()


def test_the_save_button_writes_the_named_file_or_the_id_in_the_work_folder(tmp_path: Path) -> None:
    c = composer("BKN-PAL", "RQ")
    save = one(c, "pgmx-save")
    assert save.description == "Save"
    save.click()
    assert json.loads((tmp_path / "work" / f"{c.value['QueryID']}.json").read_text(encoding="utf-8")) == c.value
    assert not (tmp_path / f"{c.value['QueryID']}.json").exists()  # not the current folder (notebooks/)
    one(c, "pgmx-save-path").value = str(tmp_path / "named.json")
    save.click()
    assert (tmp_path / "named.json").exists() and "named.json" in one(c, "pgmx-status").value


_SAVE_ON_A_FULL_DISK = """
import resource, signal, sys
from pgm_explore.widgets import MessageComposer

c = MessageComposer("BKN-DAC", "RQ", draft_dir=False)
# As `ulimit -f` would (a full disk as the writer sees it): a write beyond 16 bytes fails (EFBIG).
signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
resource.setrlimit(resource.RLIMIT_FSIZE, (16, resource.getrlimit(resource.RLIMIT_FSIZE)[1]))
try:
    c.save(sys.argv[1], overwrite=True)
except OSError as exc:
    print(type(exc).__name__, exc.strerror)
"""


@pytest.mark.skipif(os.name != "posix", reason="file size limits (ulimit -f) are POSIX")
def test_a_failed_write_leaves_the_old_file_and_no_temporary(tmp_path: Path) -> None:
    target = tmp_path / "keep.json"
    target.write_text("old", encoding="utf-8")
    done = subprocess.run(
        [sys.executable, "-c", _SAVE_ON_A_FULL_DISK, str(target)], capture_output=True, text=True, timeout=300
    )
    assert (done.returncode, done.stdout) == (0, "OSError File too large\n"), done.stderr
    assert target.read_text(encoding="utf-8") == "old"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["keep.json"]  # no temporary file left


# -- drafts ---------------------------------------------------------------------------------------


def test_a_draft_is_written_after_the_edits_and_restores_everything(_drafts_in_tmp: Path) -> None:
    assert default_draft_dir() == _drafts_in_tmp
    c = composer("BKN-DAC", "RQ", draft_name="my-request")
    assert not (_drafts_in_tmp / "my-request.json").exists()  # nothing to keep before an edit
    c.set(("Question",), "Is the stall open?")
    c.mode = "RS"
    c.set(("Outcome",), "not_answered")
    deadline = time.monotonic() + 30  # written in the background, within about a second (a loaded machine: more)
    while not (_drafts_in_tmp / "my-request.json").exists() and time.monotonic() < deadline:
        time.sleep(0.05)
    assert (_drafts_in_tmp / "my-request.json").exists()
    c.set(("TurnIndex",), -3)
    c._json.editor.text.value = '{"half": '
    restored = MessageComposer("BKN-DAC", draft_name="my-request")
    assert restored.value == c.value and restored.aside == c.aside
    assert restored.field(("TurnIndex",)).editor.value == "-3"
    assert one(restored, "pgmx-json").value == '{"half": '
    again = MessageComposer.restore("my-request")  # made last: it keeps the draft from now on
    assert again.value["Outcome"] == "not_answered"
    assert "my-request" in MessageComposer.drafts()
    again.mode = "RQ"
    assert again.value["Question"] == "Is the stall open?"
    assert MessageComposer.restore("my-request").aside["RS"]["Outcome"] == "not_answered"


def test_text_that_does_not_parse_is_in_the_draft(_drafts_in_tmp: Path) -> None:
    c = composer("PC Prompt", None, draft_name="scene")
    c.field(("SceneContext",)).include.value = True
    c.field(("SceneContext",)).editor.text.value = '{"Room": '
    restored = MessageComposer.restore("scene")
    editor = restored.field(("SceneContext",)).editor
    assert editor.text.value == '{"Room": ' and editor.pending == '{"Room": '
    assert restored.value["SceneContext"] == {}


def test_loading_over_an_edited_composer_keeps_the_previous_draft(_drafts_in_tmp: Path) -> None:
    c = composer("BKN-PAL", "RQ", draft_name="work")
    c.set(("Question",), "My own words")
    c.load(EXAMPLES / "bkn-pal" / "valid" / "rq-minimal.json")
    previous = json.loads((_drafts_in_tmp / "work-previous.json").read_text(encoding="utf-8"))
    assert previous["document"]["Question"] == "My own words"


def test_autosave_off_writes_nothing(_drafts_in_tmp: Path) -> None:
    c = composer(draft_dir=False)
    c.set(("Question",), "x")
    assert c.draft_file is None and not _drafts_in_tmp.exists()


# -- errors in callbacks are shown, never swallowed ------------------------------------------------


def test_an_exception_in_a_callback_is_shown_in_the_widget() -> None:
    c = composer()

    def broken(reply: MessageComposer) -> None:
        raise RuntimeError("on_reply exploded")

    c.on_reply = broken
    one(c, "pgmx-reply").click()  # does not raise: the error goes to the widget
    assert [type(e) for e in c.errors] == [RuntimeError]
    area = one(c, "pgmx-error")
    assert "on_reply exploded" in area.value and "Traceback" in area.value
    assert c.children[3].layout.display != "none"
    c.clear_errors()
    assert c.children[3].layout.display == "none" and len(c.errors) == 1


def test_a_button_callback_error_is_shown() -> None:
    c = composer("BKN-DAC", "RS")
    c._toolbar.reply.click()  # a Response has no Response: ValueError, shown
    assert isinstance(c.errors[-1], ValueError) and "Request" in one(c, "pgmx-error").value


# -- DOM hooks ------------------------------------------------------------------------------------


def test_dom_hooks_for_the_browser_test() -> None:
    c = composer("BKN-DAC", "RS")
    c.set(("Feasibility", "Steps", 0, "PAStatus"), "Ack")
    c._form.expert_toggle.value = True
    for css in ("pgmx-badge", "pgmx-summary", "pgmx-json", "pgmx-reply", "pgmx-save", "pgmx-mode", "pgmx-error"):
        one(c, css)
    assert isinstance(one(c, "pgmx-json"), widgets.Textarea)
    assert isinstance(one(c, "pgmx-save"), widgets.Button) and one(c, "pgmx-reply").description == "Reply"
    for slug in ("TurnIndex", "Feasibility", "Feasibility-Steps-0-PAStatus", "QueryTime-SimpleTimeData-0-StartTime"):
        field = one(c, f"pgmx-field-{slug}")
        assert "pgmx-field" in field._dom_classes
    assert len(find(c.field(("TurnIndex",)).box, "pgmx-input")) == 1


# -- a verdict a person reads right (issue 10) ------------------------------------------------------


def shown_fields(c: MessageComposer) -> list[str]:
    """The fields marked on the page (their CSS slug class)."""
    return sorted(
        next(k for k in w._dom_classes if k.startswith("pgmx-field-"))
        for w in find(c, "pgmx-invalid")
        if w.layout.display != "none"
    )


def test_a_new_form_greets_nobody_with_warnings_for_what_is_not_filled_yet() -> None:
    c = composer("PC Prompt", None)
    assert len(c.report.warnings) == 5 and {f.rule for f in c.findings} == {"empty-value"}  # the report is complete
    assert shown_fields(c) == [] and one(c, "pgmx-consistency").value == ""
    assert "5 findings at fields not filled in yet" in one(c, "pgmx-summary").value
    c.set(("Prompt",), "x")
    c.set(("Prompt",), "")  # typed, then cleared: its warning shows, the others wait
    assert shown_fields(c) == ["pgmx-field-Prompt"]
    assert "1 warning<" in one(c, "pgmx-consistency").value and "1 warnings" not in one(c, "pgmx-consistency").value
    one(c, "pgmx-validate").click()
    assert len(shown_fields(c)) == 5 and "5 warnings" in one(c, "pgmx-consistency").value
    assert "4 warnings" not in one(c, "pgmx-summary").value and "5 warnings" in one(c, "pgmx-summary").value


def test_save_shows_every_finding(tmp_path: Path) -> None:
    c = composer("BKN-DAC", "RQ")
    assert shown_fields(c) == []
    c.save(tmp_path / "m.json")
    assert len(shown_fields(c)) == 4


def test_an_opened_document_shows_all_its_findings_at_once() -> None:
    c = composer("PC Prompt", None)
    c.load(EXAMPLES / "bkn-dac" / "invalid" / "non-ack-without-reason.json")
    assert shown_fields(c) and "warning" in one(c, "pgmx-consistency").value


def test_conformance_and_consistency_are_told_apart_in_words() -> None:
    c = composer("PC Prompt", None)
    c.load(EXAMPLES / "bkn-dac" / "invalid" / "overall-feasible-with-insvalue.json")
    assert c.conforms and one(c, "pgmx-badge").value.endswith(">conforms</span>")
    consistency = one(c, "pgmx-consistency").value
    assert "1 consistency error<" in consistency and "#c62828" in consistency
    summary = one(c, "pgmx-summary").value
    assert "1 consistency error" in summary and "error(s)" not in summary and "schema error" not in summary
    c.set(("TurnIndex",), -1)  # a schema error: the badge turns, the summary names it apart
    assert (
        not c.conforms
        and "1 schema error (the message does not conform) · 1 consistency error" in one(c, "pgmx-summary").value
    )


def test_a_reply_and_a_new_turn_start_quiet() -> None:
    c = composer("BKN-PRC", "RQ")
    one(c, "pgmx-validate").click()
    assert shown_fields(c)
    assert shown_fields(c.reply()) == []


def test_a_document_loaded_fresh_starts_quiet() -> None:
    c = composer("BKN-PRC", "RQ")
    new = c.value
    one(c, "pgmx-validate").click()
    assert shown_fields(c)
    c.load(new, fresh=True)  # made for the person, as a Reply or a New turn is: nothing touched yet
    assert shown_fields(c) == []
    one(c, "pgmx-validate").click()
    assert shown_fields(c)


# -- Save: no document decides where files go (issue 11) --------------------------------------------


@pytest.mark.parametrize(
    "ident",
    ["../../escape", "/tmp/absolute", "~/.jupyter/jupyter_server_config", "a/b/c", ".hidden", "", "..", "~"],
)
def test_save_without_a_name_stays_in_the_work_folder(
    ident: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    c = composer("BKN-DAC", "RQ")
    c.set(("QueryID",), ident)
    before = {p for p in tmp_path.rglob("*") if p.is_file()}
    written = c.save()
    assert written.parent == tmp_path / "work" and written.suffix == ".json" and not written.name.startswith(".")
    assert {p for p in tmp_path.rglob("*") if p.is_file()} - before <= {written} | set((tmp_path / "drafts").glob("*"))
    assert not (tmp_path / "home" / ".jupyter").exists()
    assert json.loads(written.read_text(encoding="utf-8"))["QueryID"] == ident


def test_save_creates_missing_folders_only_in_the_working_folders(
    tmp_path: Path, tmp_path_factory: pytest.TempPathFactory
) -> None:
    c = composer("BKN-DAC", "RQ")
    elsewhere = tmp_path_factory.mktemp("elsewhere")
    with pytest.raises(FileNotFoundError, match="does not exist"):
        c.save(elsewhere / "new" / "deeper" / "m.json")
    assert not (elsewhere / "new").exists()
    assert c.save(tmp_path / "sub" / "m.json").is_file()  # inside the current folder: made
    assert c.save(elsewhere / "m.json").is_file()  # an existing folder elsewhere is the person's choice


def test_save_does_not_overwrite_without_being_told(tmp_path: Path) -> None:
    target = tmp_path / "theirs.json"
    target.write_text("someone else's\n", encoding="utf-8")
    c = composer("BKN-DAC", "RQ")
    with pytest.raises(FileExistsError):
        c.save(target)
    assert target.read_text(encoding="utf-8") == "someone else's\n"
    c.save(target, overwrite=True)
    c.set(("TurnIndex",), 4)
    c.save(target)  # still exactly what this composer saved there: Save again replaces it
    assert json.loads(target.read_text(encoding="utf-8"))["TurnIndex"] == 4
    target.write_text("edited meanwhile\n", encoding="utf-8")
    with pytest.raises(FileExistsError):
        c.save(target)
    assert MessageComposer("BKN-DAC", "RQ").save(tmp_path / "new.json").is_file()


def test_the_save_button_asks_before_overwriting(tmp_path: Path, tmp_path_factory: pytest.TempPathFactory) -> None:
    target = tmp_path / "theirs.json"
    target.write_text("keep me\n", encoding="utf-8")
    c = composer("BKN-PAL", "RQ")
    save, status = one(c, "pgmx-save"), one(c, "pgmx-status")
    one(c, "pgmx-save-path").value = "theirs.json"
    save.click()
    assert save.description == "Overwrite?" and "exists" in status.value
    assert target.read_text(encoding="utf-8") == "keep me\n" and c.errors == []
    one(c, "pgmx-save-path").value = "theirs.json "  # an edit of the name asks again
    assert save.description == "Save"
    save.click()
    save.click()
    assert save.description == "Save" and json.loads(target.read_text(encoding="utf-8")) == c.value
    one(c, "pgmx-save-path").value = str(tmp_path_factory.mktemp("x") / "missing" / "m.json")
    save.click()
    assert "Not saved" in status.value and c.errors == []


def test_download_is_the_json_view_as_a_file() -> None:
    import base64
    import re

    c = composer("BKN-PAL", "RS")
    c.set(("Stance", "Label"), "guide «calme» <b>&")
    assert one(c, "pgmx-download").value == ""  # no link made at an edit: made when clicked
    one(c, "pgmx-download-button").click()
    link = one(c, "pgmx-download").value
    data = re.search(r'href="data:application/json;base64,([^"]+)"', link)
    assert data is not None and f'download="{c.value["QueryID"]}.json"' in link
    assert base64.b64decode(data.group(1)).decode("utf-8") == json_view(c) + "\n"
    c.set(("Stance", "Label"), "changed")  # the link goes with the next edit: never behind
    assert one(c, "pgmx-download").value == ""


def test_the_open_panel_opens_a_file_and_offers_the_examples(tmp_path: Path) -> None:
    c = composer("PC Prompt", None)
    assert find(c, "pgmx-open-path") == []  # built when first opened
    one(c, "pgmx-open").click()
    source = EXAMPLES / "bkn-pal" / "valid" / "rs-tutor-stance.json"
    one(c, "pgmx-open-path").value = str(source)
    one(c, "pgmx-open-file").click()
    assert c.value == load(source) and c.errors == []
    assert find(c, "pgmx-examples")


# -- drafts: names, damage, leftovers, two composers (issue 11) --------------------------------------


@pytest.mark.parametrize(
    ("a", "b"), [("my draft", "my_draft"), ("a/b", "a?b"), ("草稿1", "下書き1"), ("Draft", "draft")]
)
def test_distinct_draft_names_never_share_a_file(a: str, b: str) -> None:
    assert _drafts.draft_path(a) != _drafts.draft_path(b)
    first = composer("BKN-PAL", "RQ", draft_name=a)
    first.set(("Question",), "first")
    second = composer("BKN-PAL", "RQ", draft_name=b)
    second.set(("Question",), "second")
    assert MessageComposer.restore(a).value["Question"] == "first"
    assert MessageComposer.restore(b).value["Question"] == "second"
    assert sorted(MessageComposer.drafts()) == sorted([a, b])


def test_a_long_draft_name_saves() -> None:
    for name in ("x" * 300, "長" * 240):
        c = composer("BKN-PAL", "RQ", draft_name=name)
        c.set(("Question",), name[:5])
        assert MessageComposer.restore(name).value["Question"] == name[:5] and c.errors == []


def test_a_draft_under_the_old_file_name_is_still_found(_drafts_in_tmp: Path) -> None:
    c = composer("BKN-PAL", "RQ", draft_name="work")
    c.set(("Question",), "old format")
    c.close()  # its draft written, and no more writes to come
    _drafts_in_tmp.joinpath("work.json").rename(_drafts_in_tmp / "My_Work.json")
    content = json.loads((_drafts_in_tmp / "My_Work.json").read_text(encoding="utf-8"))
    (_drafts_in_tmp / "My_Work.json").write_text(json.dumps({**content, "name": "My Work"}), encoding="utf-8")
    assert MessageComposer("BKN-PAL", draft_name="My Work").value["Question"] == "old format"


def test_a_composer_of_the_same_draft_name_takes_the_draft_over(_drafts_in_tmp: Path) -> None:
    # Issue 21: a cell run again makes a second composer of the same name; it keeps the draft.
    first = composer("BKN-PAL", "RQ", draft_name="shared")
    assert one(first, "pgmx-draft-notice").value == ""
    first.set(("Question",), "typed in the first")
    second = composer("BKN-PAL", "RQ", draft_name="shared")
    assert second.value["Question"] == "typed in the first"
    said = one(second, "pgmx-draft-notice").value
    assert "This composer keeps the draft “shared” from now on." in said and "draft_name" not in said
    assert one(first, "pgmx-draft-notice").value.startswith("A newer composer keeps the draft “shared” now")
    first.set(("Question",), "typed in the old one")  # not kept: the newer composer holds the draft
    second.set(("Question",), "typed in the new one")
    second.close()
    assert _drafts.read_draft(_drafts_in_tmp / "shared.json")["document"]["Question"] == "typed in the new one"
    first.close()
    third = composer("BKN-PAL", "RQ", draft_name="shared")  # the others are closed: nothing to take over
    assert "keeps the draft" not in one(third, "pgmx-draft-notice").value


@pytest.mark.parametrize(
    "content",
    [
        b"",
        b"{not json",
        b"\xff\xfe bytes",
        b'{"format": "something else"}',
        b'{"format": "pgm-explore-draft/1", "document": [1]}',
        b'{"format": "pgm-explore-draft/1", "document": {"Header": "PGM-KPA-V1.0"}, "aside": [1, 2]}',
    ],
    ids=["empty", "not-json", "not-utf8", "not-a-draft", "no-document", "bad-state"],
)
def test_a_damaged_draft_never_blocks_the_composer(content: bytes, _drafts_in_tmp: Path) -> None:
    _drafts_in_tmp.mkdir()
    (_drafts_in_tmp / "broken.json").write_bytes(content)
    c = composer("BKN-PAL", "RQ", draft_name="broken")
    assert c.value["Header"] == "PGM-KPA-V1.0" and c.errors == []
    notice = one(c, "pgmx-draft-notice").value
    assert "could not be" in notice and ".damaged-" in notice
    kept = list(_drafts_in_tmp.glob("broken.json.damaged-*"))
    assert len(kept) == 1 and kept[0].read_bytes() == content  # kept aside, byte for byte
    c.set(("Question",), "new work")
    assert MessageComposer.restore("broken").value["Question"] == "new work"


def test_leftover_temporary_files_are_cleaned_up(_drafts_in_tmp: Path) -> None:
    _drafts_in_tmp.mkdir()
    dead = _drafts_in_tmp / ".work.json.999999999-abcdefgh.tmp"  # no process has that pid
    old = _drafts_in_tmp / ".work.json.k2j3h4g5.tmp"  # an earlier version's name, an hour old
    live = _drafts_in_tmp / f".work.json.{os.getpid()}-zzzzzzzz.tmp"  # a write going on now
    for path in (dead, old, live):
        path.write_text("{half", encoding="utf-8")
    os.utime(old, (time.time() - 3600, time.time() - 3600))
    composer("BKN-PAL", "RQ", draft_name="work")
    assert not dead.exists() and not old.exists() and live.exists()


# -- drafts come back (issue 10) -------------------------------------------------------------------


def test_a_restored_draft_says_so_and_start_fresh_keeps_it_aside() -> None:
    c = composer("BKN-PAL", "RQ", draft_name="02-pal")
    c.set(("Question",), "Warm or formal?")
    again = composer("BKN-PAL", "RQ", draft_name="02-pal")
    notice = one(again, "pgmx-draft-notice").value
    assert notice.startswith("Restored draft from ") and "“02-pal”" in notice
    fresh = one(again, "pgmx-start-fresh")
    assert fresh.layout.display != "none"
    fresh.click()
    assert again.errors == [] and "Question" not in again.value and again.value["QueryID"] != c.value["QueryID"]
    assert again.draft_name == "02-pal" and "kept as “02-pal (set aside " in one(again, "pgmx-draft-notice").value
    aside = next(name for name in MessageComposer.drafts() if name.startswith("02-pal (set aside "))
    assert MessageComposer.restore(aside).value["Question"] == "Warm or formal?"
    # A restart now brings the fresh one (read from the file: a composer made here would keep the draft).
    assert "Question" not in _drafts.read_draft(_drafts.find_draft("02-pal"))["document"]
    again.start_fresh()
    again.start_fresh()  # within the same second: each state kept under a name of its own
    assert len([n for n in MessageComposer.drafts() if n.startswith("02-pal (set aside ")]) == 3


def test_the_drafts_panel_opens_and_deletes_drafts(_drafts_in_tmp: Path) -> None:
    from pgm_explore.widgets import DialogueBuilder

    other = composer("BKN-PAL", "RQ", draft_name="other")
    other.set(("Question",), "from the other")
    DialogueBuilder(draft_name="a-dialogue").add(minimal_message("PC Prompt"))  # not a message draft
    c = composer("BKN-DAC", "RQ", draft_name="mine")
    assert find(c, "pgmx-drafts-list") == []
    one(c, "pgmx-drafts").click()
    listed = one(c, "pgmx-drafts-list")
    names = [value for _label, value in listed.options]
    assert "other" in names and "a-dialogue" not in names
    assert any("BKN-PAL" in label for label, _ in listed.options)
    listed.value = "other"
    one(c, "pgmx-draft-open").click()
    assert c.errors == [] and c.value["Question"] == "from the other" and c.draft_name == "mine"
    delete = one(c, "pgmx-draft-delete")
    delete.click()
    assert (_drafts_in_tmp / "other.json").exists() and "again" in delete.description
    delete.click()
    assert not (_drafts_in_tmp / "other.json").exists()
    assert "other" not in [value for _label, value in listed.options]


def test_a_lone_surrogate_does_not_stop_the_draft() -> None:
    c = composer("BKN-PAL", "RQ", draft_name="surrogate")
    c.set(("Question",), "half \ud800 a pair")
    assert c.errors == [] and MessageComposer.restore("surrogate").value["Question"] == "half \ud800 a pair"


def test_a_lone_surrogate_is_saved_and_downloaded_as_an_escape(tmp_path: Path) -> None:
    # No UTF-8 can hold it, so the file keeps it as \ud800 (the encoding finding says why).
    c = composer("BKN-PAL", "RQ")
    c.set(("Question",), "half \ud800 a pair")
    saved = c.save(tmp_path / "q.json")
    assert json.loads(saved.read_text(encoding="utf-8"))["Question"] == "half \ud800 a pair"
    assert "encoding" in [f.rule for f in validate(saved.read_bytes()).findings]


def test_the_save_button_with_an_empty_name_ignores_a_crafted_id(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    c = composer("BKN-DAC", "RQ")
    c.set(("QueryID",), "~/.jupyter/jupyter_server_config")
    one(c, "pgmx-save").click()
    assert c.errors == [] and not (tmp_path / "home").exists()
    assert [p.name for p in (tmp_path / "work").iterdir()] == ["jupyter_jupyter_server_config.json"]


def test_the_save_button_says_why_it_did_not_save(tmp_path: Path) -> None:
    (tmp_path / "a-folder.json").mkdir()
    c = composer("BKN-PAL", "RQ")
    one(c, "pgmx-save-path").value = "a-folder.json"
    one(c, "pgmx-save").click()
    assert c.errors == [] and "Not saved" in one(c, "pgmx-status").value


def test_the_form_locates_a_path_and_makes_the_way_as_a_person_would() -> None:
    c = composer("BKN-DAC", "RQ")
    root = c.field(())
    with pytest.raises(KeyError, match=r"\$\.ProcessActions"):
        root.locate(("ProcessActions", 0, "Statement"))  # absent: nothing is made without create
    statement = root.locate(("ProcessActions", 0, "Statement"), create=True)
    assert statement is c.field(("ProcessActions", 0, "Statement"))
    assert c.value["ProcessActions"] == [{"Step": 0, "Statement": ""}]  # switched on, one item added
    with pytest.raises(IndexError, match="no such item"):
        root.locate(("ProcessActions", 5), create=True)  # only one past the end adds an item
    source = root.locate(("DataXMData", "Source", 0, "ImplementerAIMID"), create=True)
    assert source.path == ("DataXMData", "Source", 0, "ImplementerAIMID")
    assert c.value["DataXMData"]["Source"] == [{"ImplementerAIMID": ""}]  # the union chose the alternative
    with pytest.raises(KeyError, match=r"\$\.TurnIndex\.x"):
        root.locate(("TurnIndex", "x"))


# -- issue 21: the composer's feel -----------------------------------------------------------------


def test_add_numbers_a_new_step_with_the_next_free_one() -> None:
    c = composer("BKN-DAC", "RQ")
    c.set(("Kind",), "feasibility")
    c.field(("ProcessActions",)).include.value = True
    adder = c.field(("ProcessActions",)).add_button
    for _ in range(3):
        adder.click()
    assert [a["Step"] for a in c.value["ProcessActions"]] == [0, 1, 2]
    assert "duplicate-step" not in [f.rule for f in c.findings]
    assert isinstance(c.field(("ProcessActions", 0, "Statement")).editor, widgets.Textarea)


def test_a_reply_keeps_a_draft_of_its_own_that_comes_back_with_its_request(_drafts_in_tmp: Path) -> None:
    request = composer("BKN-PAL", "RQ", draft_name="03-pal")
    request.set(("Question",), "Warm or formal?")
    one(request, "pgmx-reply").click()
    reply = request.last_reply
    assert reply is not None and reply.draft_name == "03-pal-reply"
    reply.set(("Stance",), {"Label": "warm"})
    request.close()
    reply.close()
    # Kernel restart, Run All: the request's cell brings its reply back, as it was.
    again = composer("BKN-PAL", "RQ", draft_name="03-pal")
    assert again.last_reply is not None and again.last_reply in again._reply_area.children
    assert again.last_reply.value["Stance"] == {"Label": "warm"}
    assert again.last_reply.value["RequestID"] == again.value["QueryID"]
    # Another Request (a new QueryID): Reply starts a new Response; the old one is kept aside.
    again.set(("QueryID",), "kpa-another")
    fresh = again.reply()
    assert "Stance" not in fresh.value and fresh.value["RequestID"] == "kpa-another"
    assert any(n.startswith("03-pal-reply (set aside ") for n in MessageComposer.drafts())


def test_the_drafts_list_names_each_draft_once_in_words(_drafts_in_tmp: Path) -> None:
    c = composer("BKN-DAC", "RQ", draft_name="03-dac-request")
    c.set(("TurnIndex",), 2)
    one(c, "pgmx-reply").click()
    assert c.last_reply is not None
    c.last_reply.set(("Outcome",), "not_answered")
    c.close()
    c.last_reply.close()
    # A copy of the draft under another file name (as an earlier version wrote it) is the same draft.
    copy_ = _drafts_in_tmp / "copy-of-03.json"
    copy_.write_text((_drafts_in_tmp / "03-dac-request.json").read_text(encoding="utf-8"), encoding="utf-8")
    viewer = composer("PC Prompt", None, draft_name="viewer")
    one(viewer, "pgmx-drafts").click()
    labels = [label for label, _name in one(viewer, "pgmx-drafts-list").options]
    assert [label.split(":")[0] for label in labels].count("03-dac-request") == 1
    assert any(label.startswith("03-dac-request: a BKN-DAC Request, last written ") for label in labels)
    assert any(
        label.startswith("03-dac-request-reply: a BKN-DAC Response (the reply of “03-dac-request”)") for label in labels
    )


def test_open_file_leaves_only_lines_about_the_document_shown(tmp_path: Path) -> None:
    c = composer("BKN-PAL", "RQ", draft_name="status")
    c.set(("Question",), "mine")
    c.save(tmp_path / "mine.json")
    assert one(c, "pgmx-status").value.startswith("Saved")
    again = composer("BKN-PAL", "RQ", draft_name="status")
    assert one(again, "pgmx-draft-notice").value.startswith("Restored draft")
    one(again, "pgmx-open").click()
    one(again, "pgmx-open-path").value = str(EXAMPLES / "bkn-pal" / "valid" / "rs-tutor-stance.json")
    one(again, "pgmx-open-file").click()
    assert one(again, "pgmx-open-status").value.startswith("Opened")
    assert one(again, "pgmx-draft-notice").value == "" and one(again, "pgmx-status").value == ""


def test_undo_and_redo_step_over_typing_mode_switches_and_open(_drafts_in_tmp: Path) -> None:
    c = composer("BKN-PAL", "RQ", draft_name="undo")
    undo, redo = one(c, "pgmx-undo"), one(c, "pgmx-redo")
    assert undo.disabled and redo.disabled  # nothing done yet
    for typed in ("W", "Wa", "War", "Warm"):  # keystrokes in one field: one step
        c.set(("Question",), typed)
    c.mode = "RS"
    c.load(EXAMPLES / "bkn-dac" / "valid" / "rq-minimal.json")
    assert c.type_name == "BKN-DAC" and not undo.disabled and redo.disabled
    undo.click()  # the Open
    assert c.type_name == "BKN-PAL" and c.value["Mode"] == "RS" and c.aside["RQ"]["Question"] == "Warm"
    undo.click()  # the Mode switch
    assert c.value["Mode"] == "RQ" and c.value["Question"] == "Warm"
    undo.click()  # the typing, all of it
    assert "Question" not in c.value and undo.disabled and not redo.disabled
    redo.click()
    assert c.value["Question"] == "Warm"
    c.close()  # the draft keeps what is shown after the undo and redo
    assert _drafts.read_draft(_drafts_in_tmp / "undo.json")["document"]["Question"] == "Warm"
    c.set(("Question",), "Warm?")  # a new edit: what was undone is no longer ahead
    assert redo.disabled and c.errors == []


def test_a_reply_is_a_step_that_undo_hides_and_redo_shows_with_its_draft(_drafts_in_tmp: Path) -> None:
    request = composer("BKN-PAL", "RQ", draft_name="undo-reply")
    request.set(("Question",), "Warm or formal?")
    one(request, "pgmx-reply").click()
    reply = request.last_reply
    assert reply is not None and reply in request._reply_area.children
    reply.set(("Stance",), {"Label": "warm"})
    assert request.undo()  # the Reply: hidden, the request as it was
    assert reply not in request._reply_area.children
    assert request.value["Question"] == "Warm or formal?"
    _drafts.flush_drafts()
    kept = _drafts.read_draft(_drafts.find_draft("undo-reply-reply") or "")
    assert kept["document"]["Stance"] == {"Label": "warm"}  # its draft is kept
    assert request.redo()
    assert reply in request._reply_area.children and reply.value["Stance"] == {"Label": "warm"}
    assert request.undo() and request.undo()  # the Reply, then the typing
    assert "Question" not in request.value
    # Reply again after an undo: the Response written before comes back from its draft.
    request.set(("Question",), "Warm or formal?")
    one(request, "pgmx-reply").click()
    assert request.last_reply is not None and request.last_reply.value["Stance"] == {"Label": "warm"}
    assert not request.errors
