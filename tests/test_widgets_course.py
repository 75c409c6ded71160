"""The course without a browser: its data holds to the validator and to the examples it was taken
from, answers are checked right and wrong, a fix is recognised, progress is kept in the drafts folder
(tests/e2e/test_course.py drives the same in Chromium, in JupyterLab and in the app)."""

from __future__ import annotations

import json
from pathlib import Path

import nbformat
import pytest

pytest.importorskip("ipywidgets")

from pgm_explore import RULES, validate
from pgm_explore.widgets import Course, MessageComposer
from pgm_explore.widgets._course import (
    PROGRESS_FILE,
    ExerciseView,
    Progress,
    check_answer,
    exercises,
    field_choices,
    is_fixed,
)

ROOT = Path(__file__).resolve().parents[1]
EVERY = exercises(None)

# How a person fixes each exercise: (path, value) set in the composer, or (path, None) to remove it.
FIXES: dict[str, list[tuple[tuple[str | int, ...], object]]] = {
    "tour-response-with-kind": [(("Kind",), None)],
    "tour-request-without-kind": [(("Kind",), "affordances")],
    "request-with-outcome": [(("Outcome",), None)],
    "maxsteps-as-string": [(("ActionContext", "MaxSteps"), 6)],
    "confidence-as-percentage": [(("ResolvedReferents", 1, "Confidence"), 0.85)],
    "pastatus-per-action-code": [(("Feasibility", "Steps", 1, "PAStatus"), "LocOOR")],
    "stance-tone": [(("Stance", "Tone"), None)],
    "overall-feasible-with-insvalue": [(("Feasibility", "Overall"), "partially_feasible")],
    "statement-unknown-action": [
        (("ProcessActions", 1, "Statement"), "Transact With Transaction With SPM (Status=Model)")
    ],
    "entityids-as-string": [(("EntityIDs",), ["item-lantern-blue-114"])],
}


def test_every_exercise_has_a_fix_here_and_unique_ids() -> None:
    assert sorted(FIXES) == sorted(e.id for e in EVERY)
    assert {e.course for e in EVERY} == {"tour", "find-the-mistake"}


@pytest.mark.parametrize("exercise", EVERY, ids=lambda e: e.id)
def test_the_message_breaks_exactly_its_rule_and_matches_its_example(exercise) -> None:
    report = validate(exercise.message)
    assert [(f.rule, f.json_path) for f in report.findings] == [(exercise.rule, exercise.path)]
    assert exercise.rule in RULES and RULES[exercise.rule].scope == "message"
    source = ROOT / exercise.source
    assert json.loads(source.read_text(encoding="utf-8")) == exercise.message, "the course and its example differ"
    sidecar = json.loads(source.with_name(source.name.removesuffix(".json") + ".expected.json").read_text())
    assert (sidecar["rules"], sidecar["paths"], sidecar["explanation"]) == (
        [exercise.rule],
        [exercise.path],
        exercise.explanation,
    )
    # The learner can pick the answer from the lists.
    assert exercise.path in field_choices(exercise)


@pytest.mark.parametrize("exercise", EVERY, ids=lambda e: e.id)
def test_the_fix_typed_in_the_composer_is_recognised(exercise, tmp_path: Path) -> None:
    view = ExerciseView(exercise, Progress(tmp_path), draft_dir=tmp_path)
    composer = view.open_composer()
    assert not is_fixed(exercise, composer.report) and "Fixed" not in view.fixed.value
    for path, value in FIXES[exercise.id]:
        if value is None:
            composer.remove(path)
        else:
            composer.set(path, value)
    assert is_fixed(exercise, composer.report), [(f.rule, f.json_path) for f in composer.report.findings]
    assert "Fixed" in view.fixed.value
    assert view.progress.state(exercise.id).get("fixed")
    assert view.errors == [] and composer.errors == []


@pytest.mark.parametrize(
    ("field", "rule", "field_right", "rule_right"),
    [
        ("$.ResolvedReferents[1].Confidence", "range", True, True),
        ("Confidence", "RANGE ", True, True),
        ("ResolvedReferents › Confidence", "range", True, True),
        ("$.ResolvedReferents[0].Confidence", "range", False, True),
        ("$.ResolvedReferents[1].Confidence", "type", True, False),
        ("Prompt", "enum", False, False),
        ("", "", False, False),
    ],
)
def test_answers_are_checked(field: str, rule: str, field_right: bool, rule_right: bool) -> None:
    exercise = next(e for e in EVERY if e.id == "confidence-as-percentage")
    check = check_answer(exercise, field, rule)
    assert (check.field_right, check.rule_right) == (field_right, rule_right)
    assert check.finding is not None and check.finding.rule == "range"


def test_the_view_says_right_and_wrong_and_folds_the_answer(tmp_path: Path) -> None:
    exercise = next(e for e in EVERY if e.id == "pastatus-per-action-code")
    view = ExerciseView(exercise, Progress(tmp_path), draft_dir=tmp_path)
    assert view.answer.value == "" and "InsValue" not in view.verdict.value  # folded until asked for
    assert "Hint" in view.children[0].value and "<details" in view.children[0].value
    view.check()
    assert "Name the broken field and the rule first" in view.verdict.value
    view.field.value, view.rule.value = "$.Feasibility.Steps[1].PAStatus", "type"
    assert not view.check().right
    assert "Not right yet" in view.verdict.value and "the field is right" in view.verdict.value
    assert "the rule is not <code>type</code> (A value of the wrong JSON type)." in view.verdict.value
    assert not (tmp_path / PROGRESS_FILE).exists()
    view.rule.value = "no-such-rule"
    view.check()
    assert "is not a rule code" in view.verdict.value
    view.rule.value = "enum"
    assert view.check().right
    shown = view.verdict.value
    assert "Right" in shown and "The clause:</b> BKN-DAC Table 3 (Response), Feasibility – Steps – PAStatus" in shown
    assert "MLocOOR" in shown  # the finding's message names the value
    view.toggle_answer()
    assert "Why:" in view.answer.value and view.answer_button.description == "Hide the answer"
    view.toggle_answer()
    assert view.answer.value == ""
    assert "answered" in json.loads((tmp_path / PROGRESS_FILE).read_text())["exercises"][exercise.id]


def test_progress_is_kept_in_the_drafts_folder_and_shown_again(tmp_path: Path) -> None:
    course = Course("find-the-mistake", draft_dir=tmp_path)
    assert "0 of 8 exercises done" in course.summary.value
    view = course.view
    view.field.value, view.rule.value = "Outcome", "mode-forbidden"
    view.check()
    composer = view.open_composer()
    composer.remove(("Outcome",))
    assert "1 of 8 exercises done" in course.summary.value
    assert course.picker.options[0][0].endswith("✔") and course.picker.value == 0
    course.picker.value = 7
    assert course.view.exercise.id == "entityids-as-string" and "Exercise 8 of 8" in course.view.children[0].value
    assert course.errors == []
    # Another page on the same folder (a kernel restarted, the app): the progress and the fix are back.
    again = Course("find-the-mistake", draft_dir=tmp_path)
    assert "1 of 8 exercises done" in again.summary.value
    assert "✔ Done" in again.view.status.value
    assert again.view.open_composer().get(()).get("Outcome") is None


def test_a_damaged_progress_file_is_set_aside_not_raised(tmp_path: Path) -> None:
    (tmp_path / PROGRESS_FILE).write_text("{not json", encoding="utf-8")
    course = Course("tour", draft_dir=tmp_path)
    assert "could not be read" in course.view.status.value
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(PROGRESS_FILE + ".damaged-")]
    assert course.errors == []


def test_notebook_06_headings_follow_the_course_and_exercise_8_holds_no_fix() -> None:
    notebook = nbformat.read(ROOT / "notebooks" / "06_find_the_mistake.ipynb", as_version=4)
    headings = [
        line.removeprefix("## ")
        for cell in notebook.cells
        if cell.cell_type == "markdown"
        for line in cell.source.splitlines()
        if line.startswith("## Exercise ")
    ]
    assert headings == [f"Exercise {e.number} · {e.title}" for e in exercises("find-the-mistake")]
    code = "\n".join(cell.source for cell in notebook.cells if cell.cell_type == "code")
    assert '["item-lantern-blue-114"]' not in code and 'fixed["EntityIDs"] = [' not in code


def test_progress_that_cannot_be_written_stays_on_the_page(tmp_path: Path) -> None:
    blocked = tmp_path / "not-a-folder"
    blocked.write_text("a file where the drafts folder should be", encoding="utf-8")
    course = Course("tour", draft_dir=blocked)
    view = course.view
    view.field.value, view.rule.value = "Kind", "mode-forbidden"
    assert view.check().right
    view.open_composer().remove(("Kind",))
    assert "could not be written" in view.status.value and "1 of 2 exercises done" in course.summary.value
    assert course.errors == [] and blocked.read_text(encoding="utf-8").startswith("a file")


def test_the_shortened_objects_read_as_objects_not_as_strings() -> None:
    # "QueryTime": "{…}" would read as a string: a mistake of its own to a learner looking for one.
    view = ExerciseView(exercises("find-the-mistake")[0], Progress(False), draft_dir=False)
    intro = view.children[0].value
    assert "&quot;QueryTime&quot;: {…}," in intro and "&quot;{…}&quot;" not in intro


def test_the_course_drafts_stay_out_of_the_drafts_folders_list_and_older_ones_come_back(tmp_path: Path) -> None:
    course = Course("tour", draft_dir=tmp_path)
    composer = course.view.open_composer()
    composer.set(("SessionID",), "learner-edit")
    composer.close()
    assert (tmp_path / "course" / f"course-{course.view.exercise.id}.json").is_file()
    assert MessageComposer.drafts(tmp_path) == []  # what another composer's Drafts list reads
    # A draft an earlier version wrote in the drafts folder itself is moved, and restored.
    second = course.exercises[1].id
    earlier = MessageComposer.from_document(
        course.message(2), draft_dir=tmp_path, draft_name=f"course-{second}", reply_button=False
    )
    earlier.set(("SessionID",), "edited-before-the-move")
    earlier.close()
    assert MessageComposer.drafts(tmp_path) == [f"course-{second}"]
    again = Course("tour", draft_dir=tmp_path).exercise(2).open_composer()
    assert again.get(("SessionID",)) == "edited-before-the-move"
    assert MessageComposer.drafts(tmp_path) == []
