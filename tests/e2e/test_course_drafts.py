"""A course's drafts stay the course's: in JupyterLab, a learner opens an exercise's composer and edits
the broken message (its draft, ``course-<id>``, is written), then opens the Drafts panel of another
composer of the same notebook (the same drafts folder): it lists that composer's own draft, not the
course's. Run again, the course brings the learner's edit back."""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path

import pytest

from .conftest import NO_PLAYWRIGHT, WIDGETS_MS, Composer, Notebook, run_all, type_into, wait_for_idle

expect = pytest.importorskip("playwright.sync_api", reason=NO_PLAYWRIGHT).expect
pytestmark = pytest.mark.e2e

OWN = "e2e-own-prompt"
CELLS = [
    "from pgm_explore.widgets import Course, MessageComposer",
    'course = Course("tour")\ncourse',
    f'composer = MessageComposer("PC Prompt", draft_name="{OWN}")\ncomposer',
]


def _written(folder: Path, pattern: str) -> list[Path]:
    """The draft files matching ``pattern`` anywhere in the drafts folder, once written (within
    about a second of the edit; longer on a loaded machine)."""
    deadline = time.monotonic() + 20
    while not (found := sorted(folder.rglob(pattern))) and time.monotonic() < deadline:
        time.sleep(0.2)
    return found


def test_another_composers_drafts_list_leaves_the_course_drafts_out(
    open_code_in_lab: Callable[[list[str]], Notebook], e2e_env: dict[str, str], shot: Callable[[str], Path]
) -> None:
    notebook = open_code_in_lab(CELLS)
    page = notebook.page
    drafts = Path(e2e_env["PGM_EXPLORE_DRAFTS"])
    view = notebook.panel.locator(".pgmx-course-exercise")
    expect(view).to_be_visible(timeout=WIDGETS_MS)
    view.locator("button.pgmx-course-fix").click()
    exercise = Composer(view.locator(".pgmx-course-composer .pgmx-composer").first)
    expect(exercise.title).to_be_visible(timeout=WIDGETS_MS)
    type_into(exercise.input("SessionID"), "learner-edit-7")
    exercise.input("SessionID").press("Tab")
    wait_for_idle(page)
    assert _written(drafts, "course-tour-response-with-kind.json"), "the course's draft was not written"

    own = Composer(notebook.panel.locator(".pgmx-composer").filter(has_text="PC Prompt").last)
    expect(own.title).to_contain_text("PC Prompt", timeout=WIDGETS_MS)
    type_into(own.input("Prompt"), "Meet me at the lantern stall.")
    wait_for_idle(page)
    assert _written(drafts, f"{OWN}.json"), "the composer's own draft was not written"
    own.tool("drafts").click()
    listed = own.root.locator(":scope > .pgmx-drafts-panel .pgmx-drafts-list select")
    expect(listed).to_be_visible(timeout=WIDGETS_MS)
    expect(listed.locator("option", has_text=OWN)).to_have_count(1)
    expect(listed.locator("option", has_text="course-")).to_have_count(0)
    own.root.scroll_into_view_if_needed()
    shot("the composer's Drafts list: its own draft, none of the course's")

    # The course's draft is still the course's: run again, the exercise's composer shows the edit.
    run_all(page)
    view = notebook.panel.locator(".pgmx-course-exercise")
    expect(view).to_be_visible(timeout=WIDGETS_MS)
    view.locator("button.pgmx-course-fix").click()
    exercise = Composer(view.locator(".pgmx-course-composer .pgmx-composer").first)
    expect(exercise.input("SessionID")).to_have_value("learner-edit-7", timeout=WIDGETS_MS)
    expect(page.locator("body")).not_to_contain_text("Traceback")
