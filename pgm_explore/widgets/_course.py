"""The course that checks the learner: exercises of "find the mistake", answered and fixed in widgets.

The exercises are data, shipped in the package (``course.json``, format ``pgm-explore-course/1``),
so that notebook 06, notebook 01's quiz, the app's Course tab and the tests read one source. Each
holds a broken message, the rule it breaks and the JSON path of the finding, a hint, and the
explanation of its sidecar in ``data/examples`` (``source`` names the file it was taken from).

An :class:`ExerciseView` asks for the broken field and the rule (picked from lists of the message's
fields and the rule codes, or typed), says right or wrong (right: with the validator's finding and
its clause), keeps the answer folded until asked for, and opens a :class:`MessageComposer` holding
the broken message, to be fixed until it conforms and the finding is gone. Which exercises are done
is kept in ``course-progress.json`` in the drafts folder (written atomically; a damaged file is
set aside, never raised), and the learner's edits in each exercise's composer as the draft
``course-<id>`` in its ``course`` subfolder (:func:`course_drafts`), so that other composers' Drafts
lists, which read the drafts folder itself, do not offer them. :class:`Course` shows one exercise at
a time, with a picker.
"""

from __future__ import annotations

import copy
import json
import re
import time
from collections.abc import Iterator
from contextlib import suppress
from dataclasses import dataclass
from functools import cache
from importlib import resources
from pathlib import Path
from typing import Any

import ipywidgets as widgets

from pgm_explore._display import esc
from pgm_explore._files import atomic_write
from pgm_explore._workfolder import WorkFolder
from pgm_explore.spec import data_type, properties
from pgm_explore.validation import RULES, Finding, Report, json_path, validate
from pgm_explore.widgets._base import ErrorArea
from pgm_explore.widgets._composer import MessageComposer
from pgm_explore.widgets._drafts import default_draft_dir, draft_path, find_draft, set_aside
from pgm_explore.widgets._ordered import OrderedButton, OrderedCombobox

__all__ = [
    "Course",
    "Exercise",
    "ExerciseView",
    "Progress",
    "check_answer",
    "course_drafts",
    "exercises",
    "field_choices",
    "is_fixed",
]

COURSE_FORMAT = "pgm-explore-course/1"
PROGRESS_FORMAT = "pgm-explore-course-progress/1"
PROGRESS_FILE = "course-progress.json"
DRAFTS_SUBFOLDER = "course"
MODE_WORDS = {"RQ": "a Request", "RS": "a Response"}
_SHORTENED = "{…}"
"""What stands for a bulky object (a time, the Data Exchange Metadata) in the part of a message shown."""


@dataclass(frozen=True)
class Exercise:
    """One exercise: a message that breaks one rule (``rule`` at ``path``), and what helps find it."""

    id: str
    course: str
    number: int
    title: str
    story: str
    source: str
    rule: str
    path: str
    hint: str
    explanation: str
    document: str
    """The broken message as JSON text (a frozen record holds no dict): see :attr:`message`."""

    @property
    def message(self) -> dict[str, Any]:
        """A fresh copy of the broken message."""
        return dict(json.loads(self.document))

    @property
    def label(self) -> str:
        return f"{self.number} · {self.title}"

    def finding(self) -> Finding | None:
        """The validator's finding this exercise is about (None if the message no longer breaks it)."""
        return next((f for f in validate(self.message).findings if _is(f, self)), None)


def _is(finding: Finding, exercise: Exercise) -> bool:
    return finding.rule == exercise.rule and finding.json_path == exercise.path


@cache
def _course_data() -> tuple[tuple[str, str, tuple[Exercise, ...]], ...]:
    data = json.loads(resources.files("pgm_explore.widgets").joinpath("course.json").read_text(encoding="utf-8"))
    if data.get("format") != COURSE_FORMAT:
        raise ValueError(f"course.json is not {COURSE_FORMAT}")
    found = []
    for course in data["courses"]:
        items = tuple(
            Exercise(
                id=item["id"],
                course=course["name"],
                number=number,
                title=item["title"],
                story=item["story"],
                source=item["source"],
                rule=item["rule"],
                path=item["path"],
                hint=item["hint"],
                explanation=item["explanation"],
                document=json.dumps(item["message"], ensure_ascii=False),
            )
            for number, item in enumerate(course["exercises"], start=1)
        )
        found.append((course["name"], course["title"], items))
    return tuple(found)


def courses() -> dict[str, str]:
    """The courses shipped, by name: their titles."""
    return {name: title for name, title, _items in _course_data()}


def exercises(course: str | None = None) -> tuple[Exercise, ...]:
    """The exercises of a course (``"find-the-mistake"``, ``"tour"``), or of every course."""
    chosen = [items for name, _title, items in _course_data() if course is None or name == course]
    if not chosen:
        raise ValueError(f"there is no course {course!r}; there are {', '.join(map(repr, courses()))}")
    return tuple(exercise for items in chosen for exercise in items)


# -- checking an answer --------------------------------------------------------------------------


def _steps(text: str) -> tuple[str | int, ...]:
    """A field as typed, as names and indexes: ``$.Steps[1].PAStatus``, ``Steps › PAStatus``,
    ``Steps/1/PAStatus``, ``stance.tone`` (names compared without case).

    >>> _steps("$.Feasibility.Steps[1].PAStatus"), _steps(" Stance › Tone "), _steps("a/0/b")
    (('feasibility', 'steps', 1, 'pastatus'), ('stance', 'tone'), ('a', 0, 'b'))
    """
    text = text.strip().removeprefix("$")
    parts = [p for p in re.split(r"[.\[\]/›>\s]+", text) if p and p not in ("'", '"')]
    return tuple(int(p) if p.isdigit() else p.strip("'\"").lower() for p in parts)


def _names(steps: tuple[str | int, ...]) -> tuple[str | int, ...]:
    return tuple(s for s in steps if isinstance(s, str))


def field_matches(typed: str, path: str) -> bool:
    """Whether a typed field names the finding's ``path``: the whole path (array indexes may be
    left out, but a wrong index is wrong), or the property's name alone.

    >>> [field_matches(t, "$.ResolvedReferents[1].Confidence") for t in
    ...  ("Confidence", "ResolvedReferents.Confidence", "$.ResolvedReferents[1].Confidence",
    ...   "ResolvedReferents[0].Confidence", "ResolvedReferents", "")]
    [True, True, True, False, False, False]
    """
    said, wanted = _steps(typed), _steps(path)
    if not said:
        return False
    if said == wanted:
        return True
    if any(isinstance(s, int) for s in said):
        return False
    return said == _names(wanted) or said == _names(wanted)[-1:]


@dataclass(frozen=True)
class Check:
    """What :func:`check_answer` found: whether the field and the rule are right, and the finding."""

    field_right: bool
    rule_right: bool
    finding: Finding | None

    @property
    def right(self) -> bool:
        return self.field_right and self.rule_right


def check_answer(exercise: Exercise, field: str, rule: str) -> Check:
    """Check a learner's answer: the broken field (a JSON path, or the property's name) and the rule code.

    >>> broken = exercises("find-the-mistake")[1]
    >>> check_answer(broken, "MaxSteps", "type").right, check_answer(broken, "MaxSteps", "range").rule_right
    (True, False)
    """
    return Check(field_matches(field, exercise.path), rule.strip().lower() == exercise.rule, exercise.finding())


def _paths(value: Any, at: tuple[str | int, ...] = ()) -> Iterator[tuple[str | int, ...]]:
    if at:
        yield at
    if isinstance(value, dict):
        for key, item in value.items():
            yield from _paths(item, (*at, str(key)))
    elif isinstance(value, list):
        for index, item in enumerate(value):
            yield from _paths(item, (*at, index))


def field_choices(exercise: Exercise) -> list[str]:
    """The fields a learner picks from: every JSON path of the message, then the properties of its
    type and mode that it lacks at the top level (a property may be broken by being absent)."""
    message = exercise.message
    found = [json_path(path) for path in _paths(message)]
    spec = data_type(str(message.get("Header", "")))
    mode = message.get("Mode") if message.get("Mode") in spec.modes else None
    absent = [row.property for row in properties(spec, mode) if "›" not in row.property and row.property not in message]
    return found + [json_path((name,)) for name in absent]


def rule_choices() -> list[str]:
    """The rule codes one message can break (not the transcript's nor the partner's)."""
    return [code for code, rule in RULES.items() if rule.scope == "message"]


def is_fixed(exercise: Exercise, report: Report | None) -> bool:
    """A fix: the message conforms, has no error left, and the exercise's finding is gone."""
    if report is None or not report.conforms:
        return False
    return not any(f.severity == "error" or _is(f, exercise) for f in report.findings)


# -- progress ------------------------------------------------------------------------------------


class Progress:
    """Which exercises are answered and fixed, kept in ``course-progress.json`` in the drafts folder
    (``draft_dir``; None: the default drafts folder; False: in memory only). Read again before every
    write, so that two pages of one folder (notebook and app) add up."""

    def __init__(self, draft_dir: str | Path | bool | None = None) -> None:
        self.path: Path | None = None
        if draft_dir is not False:
            folder = Path(draft_dir) if isinstance(draft_dir, str | Path) else default_draft_dir()
            self.path = folder / PROGRESS_FILE
        self.notice = ""
        self._memory: dict[str, dict[str, Any]] = {}
        self._memory = self._read()

    def _read(self) -> dict[str, dict[str, Any]]:
        if self.path is None or not self.path.exists():
            return copy.deepcopy(self._memory)
        try:
            data = json.loads(self.path.read_text(encoding="utf-8"))
            if not isinstance(data, dict) or data.get("format") != PROGRESS_FORMAT:
                raise ValueError(f"not {PROGRESS_FORMAT}")
            done = data.get("exercises", {})
            if not isinstance(done, dict):
                raise ValueError("exercises is not an object")
            return {str(k): dict(v) for k, v in done.items() if isinstance(v, dict)}
        except (OSError, ValueError, UnicodeDecodeError) as exc:
            kept = set_aside(self.path, "damaged")
            self.notice = f"The course progress could not be read ({exc}); it is kept as {kept.name}."
            return {}

    def state(self, exercise_id: str) -> dict[str, Any]:
        return dict(self._read().get(exercise_id, {}))

    def done(self, exercise_id: str) -> bool:
        state = self.state(exercise_id)
        return bool(state.get("answered") and state.get("fixed"))

    def mark(self, exercise_id: str, what: str) -> None:
        """Record ``answered`` or ``fixed`` for an exercise (once; nothing written if already there)."""
        current = self._read()
        entry = current.setdefault(exercise_id, {})
        if entry.get(what):
            return
        entry[what] = time.time()
        self._memory = current
        if self.path is not None:
            text = json.dumps({"format": PROGRESS_FORMAT, "exercises": current}, indent=2, ensure_ascii=False)
            try:
                atomic_write(self.path, text + "\n")
            except OSError as exc:  # a full disk or a folder not ours: the page goes on, and says so
                self.notice = (
                    f"The course progress could not be written ({exc.strerror or exc}); it is kept on this page only."
                )
                self.path = None

    def done_ids(self) -> set[str]:
        """The exercises answered and fixed."""
        return {key for key, state in self._read().items() if state.get("answered") and state.get("fixed")}


def course_drafts(draft_dir: str | Path | bool | None, exercise_id: str) -> Path | bool:
    """The folder of an exercise composer's draft ``course-<id>`` (False: no drafts): the drafts
    folder's ``course`` subfolder. A draft an earlier version wrote in the drafts folder itself is
    moved there (with its ``-previous``), so that the learner's edit comes back.

    >>> course_drafts(False, "x"), course_drafts("/nowhere", "x").as_posix()
    (False, '/nowhere/course')
    """
    if draft_dir is False:
        return False
    base = Path(draft_dir) if isinstance(draft_dir, str | Path) else default_draft_dir()
    folder = base / DRAFTS_SUBFOLDER
    for name in (f"course-{exercise_id}", f"course-{exercise_id}-previous"):
        old = find_draft(name, base)
        if old is not None and find_draft(name, folder) is None:
            with suppress(OSError):  # a folder not ours: the draft stays where it is, never lost
                folder.mkdir(parents=True, exist_ok=True)
                old.replace(draft_path(name, folder))
    return folder


# -- widgets -------------------------------------------------------------------------------------


def _shown_part(exercise: Exercise) -> dict[str, Any]:
    """The part of the message to look at: the objects holding the mistake (with Header and Mode),
    or the whole top level with the bulky time and metadata objects shortened."""
    message = exercise.message
    spec = data_type(str(message.get("Header", "")))
    part = str(exercise.path.removeprefix("$.").split(".")[0].split("[")[0])
    if isinstance(message.get(part), dict | list):
        shown = {key: message[key] for key in ("Header", "Mode") if key in message}
        return shown | {part: message[part]}
    bulky = {spec.time_field, "DataXMData"}
    return {key: _SHORTENED if key in bulky else value for key, value in message.items()}


def _shown_text(exercise: Exercise) -> str:
    """The part to look at as JSON, a shortened object written ``{…}``: in quotes it would read as a
    string, a mistake of its own to a learner looking for one."""
    return json.dumps(_shown_part(exercise), indent=2, ensure_ascii=False).replace(f'"{_SHORTENED}"', _SHORTENED)


def _finding_html(finding: Finding | None) -> str:
    if finding is None:
        return "<p>(The validator no longer finds this mistake.)</p>"
    return (
        f"<p><b>The validator:</b> {esc(finding.severity)} <code>{esc(finding.rule)}</code> at "
        f"<code>{esc(finding.json_path)}</code>: {esc(finding.message)}<br>"
        f"<b>The clause:</b> {esc(finding.spec)}</p>"
    )


class ExerciseView(widgets.VBox):
    """One exercise: the message, the learner's answer checked, the answer on request, the composer.

    >>> view = ExerciseView(exercises("find-the-mistake")[0], Progress(False), draft_dir=False)
    >>> view.field.value, view.rule.value = "Outcome", "mode-forbidden"
    >>> view.check().right, "Right" in view.verdict.value
    (True, True)
    """

    def __init__(
        self,
        exercise: Exercise,
        progress: Progress,
        *,
        draft_dir: str | Path | bool | None = None,
        work_folder: WorkFolder | str | Path | None = None,
        **kwargs: Any,
    ) -> None:
        super().__init__(**kwargs)
        self.exercise = exercise
        self.progress = progress
        self._draft_dir = draft_dir
        self._work_folder = work_folder
        self._area = ErrorArea(("pgmx-error", "pgmx-course-error"))
        self.composer: MessageComposer | None = None
        message = exercise.message
        spec = data_type(str(message.get("Header", "")))
        mode = MODE_WORDS.get(str(message.get("Mode")), "no mode")
        of = f" of {len(exercises(exercise.course))}"
        intro = widgets.HTML(
            f"<h4>Exercise {exercise.number}{of} · {esc(exercise.title)}</h4><p>{esc(exercise.story)}</p>"
            f"<p><b>{esc(spec.name)}</b> ({mode}), the part to look at:</p>"
            "<pre style='font-size:12px;line-height:1.35;margin:4px 0'>"
            f"{esc(_shown_text(exercise))}</pre>"
            f"<details class='pgmx-course-hint'><summary>Hint</summary>{esc(exercise.hint)}</details>",
            _dom_classes=("pgmx-course-intro",),
        )
        self.field = OrderedCombobox(
            description="Broken field",
            placeholder="pick or type, e.g. $.Kind",
            options=tuple(field_choices(exercise)),
            ensure_option=False,
            layout={"width": "420px"},
            _dom_classes=("pgmx-course-field",),
        )
        self.rule = OrderedCombobox(
            description="Rule",
            placeholder="pick or type a rule code",
            options=tuple(rule_choices()),
            ensure_option=False,
            layout={"width": "320px"},
            _dom_classes=("pgmx-course-rule",),
        )
        # The suggestions of a Combobox are the browser's datalist, which shows only once something
        # is typed, or on a double click: a list to open and pick from beside each box, whose pick
        # goes into the box (what Check reads), as if typed.
        self.field_pick = widgets.Dropdown(
            options=[("or pick a field…", ""), *((path, path) for path in field_choices(exercise))],
            value="",
            layout={"width": "260px"},
            _dom_classes=("pgmx-course-field-pick",),
        )
        self.rule_pick = widgets.Dropdown(
            options=[("or pick a rule…", ""), *((f"{code} · {RULES[code].summary}", code) for code in rule_choices())],
            value="",
            layout={"width": "360px"},
            _dom_classes=("pgmx-course-rule-pick",),
        )
        for box, pick in ((self.field, self.field_pick), (self.rule, self.rule_pick)):
            pick.observe(self._area.guard(lambda change, box=box, pick=pick: self._picked(box, pick)), names="value")
        self.check_button = OrderedButton(
            description="Check", button_style="primary", _dom_classes=("pgmx-course-check",)
        )
        self.check_button.on_click(self._area.guard(lambda _b: self.check()))
        self.verdict = widgets.HTML(_dom_classes=("pgmx-course-verdict",))
        self.answer_button = OrderedButton(
            description="Show the answer", layout={"width": "auto"}, _dom_classes=("pgmx-course-show-answer",)
        )
        self.answer_button.on_click(self._area.guard(lambda _b: self.toggle_answer()))
        self.answer = widgets.HTML(_dom_classes=("pgmx-course-answer",))
        self.fix_button = OrderedButton(
            description="Fix it in a composer",
            tooltip="A composer holding the broken message: fix it until the badge says conforms",
            layout={"width": "auto"},
            _dom_classes=("pgmx-course-fix",),
        )
        self.fix_button.on_click(self._area.guard(lambda _b: self.open_composer()))
        self.fixed = widgets.HTML(_dom_classes=("pgmx-course-fixed",))
        self.status = widgets.HTML(_dom_classes=("pgmx-course-status",))
        self.composer_box = widgets.VBox(_dom_classes=("pgmx-course-composer",))
        self.children = [
            intro,
            widgets.HBox([self.field, self.field_pick], layout={"flex_flow": "row wrap"}),
            widgets.HBox([self.rule, self.rule_pick, self.check_button], layout={"flex_flow": "row wrap"}),
            self.verdict,
            widgets.HBox([self.answer_button, self.fix_button]),
            self.answer,
            self.fixed,
            self.status,
            self._area.box,
            self.composer_box,
        ]
        self.add_class("pgmx-course-exercise")
        self._show_status()

    @property
    def errors(self) -> list[BaseException]:
        return self._area.errors

    def __repr__(self) -> str:
        # The text of an executed notebook (ipywidgets keeps its first 110 characters).
        e = self.exercise
        return f"<ExerciseView: Exercise {e.number} of {len(exercises(e.course))} · {e.title}>"

    @staticmethod
    def _picked(box: widgets.Combobox, pick: widgets.Dropdown) -> None:
        """A pick from the list goes into the box; the list goes back to its prompt, ready again."""
        if pick.value:
            box.value = str(pick.value)
            pick.value = ""

    def check(self) -> Check:
        """Check the answer in the two boxes and say right or wrong."""
        exercise = self.exercise
        field, rule = str(self.field.value), str(self.rule.value)
        result = check_answer(exercise, field, rule)
        if not field.strip() or not rule.strip():
            self.verdict.value = "<p class='pgmx-course-wrong'>Name the broken field and the rule first.</p>"
            return result
        if result.right:
            self.progress.mark(exercise.id, "answered")
            fix = "" if self.progress.state(exercise.id).get("fixed") else " Now fix it: open the composer below."
            self.verdict.value = (
                f"<div class='pgmx-course-right'><p>✔ <b>Right</b>: <code>{esc(exercise.rule)}</code> at "
                f"<code>{esc(exercise.path)}</code>.{esc(fix)}</p>{_finding_html(result.finding)}</div>"
            )
        else:
            parts = []
            if result.field_right:
                parts.append("the field is right")
            else:
                parts.append(f"the mistake is not at <code>{esc(field.strip())}</code>")
            known = RULES.get(rule.strip().lower())
            if result.rule_right:
                parts.append("the rule is right")
            elif known is not None:
                parts.append(f"the rule is not <code>{esc(known.code)}</code> ({esc(known.summary.rstrip('.'))})")
            else:
                parts.append(f"<code>{esc(rule.strip())}</code> is not a rule code (pick one from the list)")
            self.verdict.value = (
                f"<p class='pgmx-course-wrong'>✘ <b>Not right yet</b>: {'; '.join(parts)}. Try again, "
                "or open the hint.</p>"
            )
        self._show_status()
        return result

    def toggle_answer(self) -> None:
        """Unfold the answer (the validator's finding, the clause and why), or fold it again."""
        if self.answer.value:
            self.answer.value = ""
            self.answer_button.description = "Show the answer"
            return
        exercise = self.exercise
        self.answer.value = (
            f"<div class='pgmx-course-answer-text'><p><b>Answer:</b> <code>{esc(exercise.rule)}</code> at "
            f"<code>{esc(exercise.path)}</code>.</p>{_finding_html(exercise.finding())}"
            f"<p><b>Why:</b> {esc(exercise.explanation)}</p></div>"
        )
        self.answer_button.description = "Hide the answer"

    def open_composer(self) -> MessageComposer:
        """The composer holding the broken message (its draft, if the learner edited it before)."""
        if self.composer is None:
            self.composer = MessageComposer.from_document(
                self.exercise.message,
                draft_dir=course_drafts(self._draft_dir, self.exercise.id),
                draft_name=f"course-{self.exercise.id}",
                work_folder=self._work_folder,
                reply_button=False,
            )
            self.composer.observe(
                self._area.guard(lambda _change: self._composer_changed()), names=["findings", "conforms"]
            )
            self.composer_box.children = [self.composer]
            self.fix_button.disabled = True
            self._composer_changed()
        return self.composer

    def _composer_changed(self) -> None:
        assert self.composer is not None
        if is_fixed(self.exercise, self.composer.report):
            self.progress.mark(self.exercise.id, "fixed")
            self.fixed.value = (
                "<p class='pgmx-course-right'>✔ <b>Fixed</b>: the message conforms and the "
                f"<code>{esc(self.exercise.rule)}</code> finding is gone.</p>"
            )
        else:
            self.fixed.value = (
                "<p>Fix the message in the composer until it conforms and the "
                f"<code>{esc(self.exercise.rule)}</code> finding is gone.</p>"
            )
        self._show_status()

    def _show_status(self) -> None:
        state = self.progress.state(self.exercise.id)
        marks = [
            ("answered" if state.get("answered") else "not answered yet"),
            ("fixed" if state.get("fixed") else "not fixed yet"),
        ]
        done = "✔ Done" if state.get("answered") and state.get("fixed") else "To do"
        notice = f" {esc(self.progress.notice)}" if self.progress.notice else ""
        self.status.value = f"<p><b>{done}</b> ({', '.join(marks)}).{notice}</p>"

    def close(self) -> None:
        if self.composer is not None:
            self.composer.close()
        super().close()


class Course(widgets.VBox):
    """A course on one page: the progress, a picker of its exercises (✔ when done) and the one picked.

    ``draft_dir`` holds the progress and the composers' drafts (None: the default drafts folder;
    False: nothing written); ``work_folder`` is given to the composers (a page served to others).

    >>> course = Course("find-the-mistake", draft_dir=False)
    >>> len(course.exercises), course.view.exercise.title
    (8, 'A Request that says too much')
    """

    def __init__(
        self,
        course: str | None = "find-the-mistake",
        *,
        draft_dir: str | Path | bool | None = None,
        work_folder: WorkFolder | str | Path | None = None,
        **kwargs: Any,
    ) -> None:
        super().__init__(**kwargs)
        self.exercises = exercises(course)
        self.progress = Progress(draft_dir)
        self._draft_dir = draft_dir
        self._work_folder = work_folder
        self._area = ErrorArea(("pgmx-error", "pgmx-course-error"))
        self.summary = widgets.HTML(_dom_classes=("pgmx-course-progress",))
        self.picker = widgets.Dropdown(
            description="Exercise",
            options=self._options(),
            value=0,
            layout={"width": "560px"},
            _dom_classes=("pgmx-course-picker",),
        )
        self._views: dict[str, ExerciseView] = {}
        self.view = self.exercise(self.exercises[0].id)
        self._relabelling = False
        self.picker.observe(self._area.guard(self._picked), names="value")
        self.holder = widgets.VBox([self.view])
        self.children = [self.summary, self.picker, self._area.box, self.holder]
        self.add_class("pgmx-course")
        self._refresh()

    def _options(self) -> list[tuple[str, int]]:
        titles, done = courses(), self.progress.done_ids()
        several = len({e.course for e in self.exercises}) > 1
        return [
            (f"{titles[e.course] + ' · ' if several else ''}{e.label}{' ✔' if e.id in done else ''}", index)
            for index, e in enumerate(self.exercises)
        ]

    def exercise(self, which: int | str) -> ExerciseView:
        """The view of an exercise, by its number in the course (from 1) or its id; made once."""
        if isinstance(which, int):
            exercise = self.exercises[which - 1]
        else:
            found = next((e for e in self.exercises if e.id == which), None)
            if found is None:
                raise KeyError(f"no exercise {which!r} in this course")
            exercise = found
        if exercise.id not in self._views:
            view = ExerciseView(exercise, self.progress, draft_dir=self._draft_dir, work_folder=self._work_folder)
            for part in (view.verdict, view.fixed):
                part.observe(lambda _change: self._refresh(), names="value")
            self._views[exercise.id] = view
        return self._views[exercise.id]

    def message(self, which: int | str) -> dict[str, Any]:
        """The broken message of an exercise (a copy)."""
        return self.exercise(which).exercise.message

    def _picked(self, change: dict[str, Any]) -> None:
        if not self._relabelling:
            self._pick(int(change["new"]))

    def _pick(self, index: int) -> None:
        """Show another exercise; the one left is closed (its composer too: its draft keeps the edits)."""
        left = self.view
        self.view = self.exercise(self.exercises[index].id)
        self.holder.children = [self.view]
        if left is not self.view:
            self._views.pop(left.exercise.id, None)
            left.close()
        self._refresh()

    def _refresh(self) -> None:
        done = len(self.progress.done_ids() & {e.id for e in self.exercises})
        self.summary.value = f"<p><b>Progress:</b> {done} of {len(self.exercises)} exercises done.</p>"
        options = self._options()
        if options != list(self.picker.options):
            # New labels (a ✔) for the same exercises: the picker stays where it is, and says nothing.
            value, self._relabelling = self.picker.value, True
            try:
                self.picker.options = options
                self.picker.value = value
            finally:
                self._relabelling = False

    @property
    def errors(self) -> list[BaseException]:
        return [*self._area.errors, *(e for view in self._views.values() for e in view.errors)]

    def __repr__(self) -> str:
        done = len(self.progress.done_ids() & {e.id for e in self.exercises})
        listed = "; ".join(label for label, _index in self._options())
        return f"<Course: {done} of {len(self.exercises)} exercises done: {listed}>"
