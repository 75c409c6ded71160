"""The course in Chromium, as a learner takes it: in JupyterLab (notebook 06) and in the app's Course tab
(Voilà, ``pgm-explore app``). The learner types a wrong answer and is told so, types the right one and
is shown the finding and its clause, unfolds the answer, then fixes the broken message in the composer by
typing until the badge says conforms; the progress is written to the drafts folder and shown."""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from .conftest import NO_PLAYWRIGHT, WIDGETS_MS, Composer, Notebook, Server, code_cell, open_app, type_into

if TYPE_CHECKING:
    from playwright.sync_api import Locator, Page

expect = pytest.importorskip("playwright.sync_api", reason=NO_PLAYWRIGHT).expect
pytestmark = pytest.mark.e2e


def _answer(view: Locator, field: str, rule: str) -> Locator:
    """Type the broken field and the rule into the exercise's boxes and click Check; the verdict."""
    type_into(view.locator(".pgmx-course-field input"), field)
    type_into(view.locator(".pgmx-course-rule input"), rule)
    view.locator("button.pgmx-course-check").click()
    return view.locator(".pgmx-course-verdict")


def _take_exercise(
    view: Locator,
    *,
    wrong: tuple[str, str, str],
    right: tuple[str, str, tuple[str, ...]],
    fix: tuple[str, str],
    shot: Callable[[str], Path],
) -> Composer:
    """Answer wrong, then right, unfold the answer, fix the message in the composer; the composer."""
    expect(view).to_be_visible(timeout=WIDGETS_MS)
    answer = view.locator(".pgmx-course-answer")
    expect(answer).to_have_text("")  # folded until asked for
    verdict = _answer(view, wrong[0], wrong[1])
    expect(verdict).to_contain_text("Not right yet", timeout=WIDGETS_MS)
    expect(verdict).to_contain_text(wrong[2])
    expect(verdict).not_to_contain_text("The clause")
    view.scroll_into_view_if_needed()
    shot("a wrong answer")

    verdict = _answer(view, right[0], right[1])
    expect(verdict).to_contain_text("Right", timeout=WIDGETS_MS)
    for text in ("The validator:", "The clause:", *right[2]):
        expect(verdict).to_contain_text(text)
    expect(answer).to_have_text("")
    view.locator("button.pgmx-course-show-answer").click()
    expect(answer).to_contain_text("Why:", timeout=WIDGETS_MS)
    expect(view.locator(".pgmx-course-status")).to_contain_text("answered, not fixed yet")
    shot("the right answer, unfolded")

    view.locator("button.pgmx-course-fix").click()
    composer = Composer(view.locator(".pgmx-course-composer .pgmx-composer").first)
    expect(composer.title).to_be_visible(timeout=WIDGETS_MS)
    expect(composer.tool("badge")).to_have_text("does not conform")
    fixed = view.locator(".pgmx-course-fixed")
    expect(fixed).to_contain_text("Fix the message in the composer")
    slug, value = fix
    box = composer.input(slug)
    type_into(box, value)
    box.press("Tab")  # a raw JSON editor applies on leaving the box
    expect(composer.tool("badge")).to_have_text("conforms", timeout=WIDGETS_MS)
    expect(fixed).to_contain_text("Fixed", timeout=WIDGETS_MS)
    expect(view.locator(".pgmx-course-status")).to_contain_text("Done")
    composer.root.scroll_into_view_if_needed()
    shot("fixed in the composer")
    return composer


def _progress(drafts: Path) -> dict[str, dict[str, float]]:
    return dict(json.loads((drafts / "course-progress.json").read_text(encoding="utf-8"))["exercises"])


def test_notebook_06_checks_the_learner_and_the_fix_in_jupyterlab(
    open_in_lab: Callable[[str], Notebook], e2e_env: dict[str, str], shot: Callable[[str], Path]
) -> None:
    notebook = open_in_lab("06_*.ipynb")
    summary = code_cell(notebook, 'course = Course("find-the-mistake")').locator(".pgmx-course-progress")
    expect(summary).to_contain_text("exercises done", timeout=WIDGETS_MS)
    before = int(re.search(r"(\d+) of 8", summary.inner_text()).group(1))  # type: ignore[union-attr]
    # Exercise 8, "Fix it yourself": the notebook holds no fix; the code cell below it says Not yet.
    expect(code_cell(notebook, "fixed = copy.deepcopy(course.message(8))")).to_contain_text("Not yet")
    view = code_cell(notebook, "course.exercise(8)").locator(".pgmx-course-exercise")
    expect(view).to_contain_text("Exercise 8 of 8 · Fix it yourself", timeout=WIDGETS_MS)
    composer = _take_exercise(
        view,
        wrong=("$.Header", "enum", "the mistake is not at"),
        right=("EntityIDs", "type", ("$.EntityIDs", "BKN-DAC Table 2 (Request), EntityIDs")),
        fix=("EntityIDs", '["item-lantern-blue-114"]'),
        shot=shot,
    )
    expect(composer.json_view).to_have_value(re.compile(r'"EntityIDs": \[\s*"item-lantern-blue-114"\s*\]'))
    expect(summary).to_contain_text(f"{before + 1} of 8 exercises done", timeout=WIDGETS_MS)
    done = _progress(Path(e2e_env["PGM_EXPLORE_DRAFTS"]))["entityids-as-string"]
    assert done.get("answered") and done.get("fixed")


def test_the_apps_course_tab_checks_the_learner_in_voila(
    page: Page, app_server: Server, app_work: Path, shot: Callable[[str], Path]
) -> None:
    app = open_app(page, app_server, "Course")
    course = app.locator(".pgmx-course")
    expect(course).to_be_visible(timeout=WIDGETS_MS)
    expect(page.locator("body")).not_to_contain_text("Traceback")
    course.locator(".pgmx-course-picker select").select_option(
        label="Find the mistake · 3 · How sure is Prompt Creation?"
    )
    view = course.locator(".pgmx-course-exercise")
    expect(view).to_contain_text("Exercise 3 of 8 · How sure is Prompt Creation?", timeout=WIDGETS_MS)
    shot("the course tab")
    _take_exercise(
        view,
        wrong=("ResolvedReferents[0].Confidence", "range", "the rule is right"),
        right=("$.ResolvedReferents[1].Confidence", "range", ("PC Prompt Table 1, ResolvedReferents – Confidence",)),
        fix=("ResolvedReferents-1-Confidence", "0.85"),
        shot=shot,
    )
    expect(course.locator(".pgmx-course-progress")).to_contain_text("1 of 10 exercises done", timeout=WIDGETS_MS)
    expect(course.locator(".pgmx-course-picker select")).to_contain_text("How sure is Prompt Creation? ✔")
    done = _progress(app_work / ".pgm-explore-drafts")["confidence-as-percentage"]
    assert done.get("answered") and done.get("fixed")


def _pick(select: Locator, starts: str) -> None:
    """Pick the option of a list whose text starts so, as a person reads and picks it."""
    labels = [text.strip() for text in select.locator("option").evaluate_all("os => os.map(o => o.textContent)")]
    # ipywidgets writes a label's spaces as no-break spaces, which a reader does not tell apart.
    select.select_option(label=next(label for label in labels if label.replace("\xa0", " ").startswith(starts)))


def test_the_learner_picks_the_field_and_the_rule_from_the_lists(
    page: Page, app_server: Server, shot: Callable[[str], Path]
) -> None:
    """A learner who knows no rule code opens the lists beside the boxes and picks: the pick shows in
    the box (what Check reads), and the list is ready for another pick."""
    app = open_app(page, app_server, "Course")
    course = app.locator(".pgmx-course")
    course.locator(".pgmx-course-picker select").select_option(
        label="Find the mistake · 1 · A Request that says too much"
    )
    view = course.locator(".pgmx-course-exercise")
    expect(view).to_contain_text("Exercise 1 of 8 · A Request that says too much", timeout=WIDGETS_MS)
    field, rule = view.locator(".pgmx-course-field input"), view.locator(".pgmx-course-rule input")
    field_pick, rule_pick = (
        view.locator(".pgmx-course-field-pick select"),
        view.locator(".pgmx-course-rule-pick select"),
    )
    # The rule list says what each code means.
    expect(rule_pick.locator("option", has_text="mode-forbidden · A property of the other mode")).to_have_count(1)

    field_pick.select_option(label="$.Outcome")
    expect(field).to_have_value("$.Outcome", timeout=WIDGETS_MS)
    _pick(rule_pick, "required · ")
    expect(rule).to_have_value("required", timeout=WIDGETS_MS)
    expect(rule_pick).to_have_value(re.compile(r"^or\spick\sa\srule"))  # back to its prompt, ready again
    view.locator("button.pgmx-course-check").click()
    verdict = view.locator(".pgmx-course-verdict")
    expect(verdict).to_contain_text("Not right yet: the field is right; the rule is not required", timeout=WIDGETS_MS)

    _pick(rule_pick, "mode-forbidden · ")
    expect(rule).to_have_value("mode-forbidden", timeout=WIDGETS_MS)
    view.locator("button.pgmx-course-check").click()
    expect(verdict).to_contain_text("Right: mode-forbidden at $.Outcome", timeout=WIDGETS_MS)
    expect(verdict).to_contain_text("The clause:")
    shot("picked from the lists")
