"""The app page's widgets without a browser: the pickers drive the composer, uploads are validated,
transcripts show tidy tables and three plots (tests/e2e/test_app.py drives the same in Chromium)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

pytest.importorskip("ipywidgets")

from pgm_explore.widgets import ExplorerApp

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT / "data"


@pytest.fixture
def app(tmp_path: Path) -> ExplorerApp:
    (tmp_path / "work").mkdir()
    return ExplorerApp(work_folder=tmp_path / "work", draft_dir=tmp_path / "drafts")


def test_the_type_picker_switches_the_composer_whose_mode_switch_is_the_only_one(app: ExplorerApp) -> None:
    assert app.composer.type_name == "PC Prompt"
    assert not hasattr(app, "mode_picker") and "pgmx-app-mode" not in _classes(app)
    app.type_picker.value = "BKN-PAL"
    assert (app.composer.type_name, app.composer.mode) == ("BKN-PAL", "RQ")
    app.composer.mode = "RS"  # the composer's own Mode switch
    assert app.composer.value["Mode"] == "RS" and app.type_picker.value == "BKN-PAL"
    app.type_picker.value = "BKN-DAC"  # the mode is kept across types
    assert (app.composer.type_name, app.composer.mode) == ("BKN-DAC", "RS")
    app.composer.switch_type("BKN-PRC", "RQ")  # the composer's own switch moves the picker too
    assert app.type_picker.value == "BKN-PRC"
    assert app.errors == []


def test_an_uploaded_message_opens_in_the_composer(app: ExplorerApp) -> None:
    assert app.open_button.layout.display == "none"
    broken = DATA / "examples/bkn-dac/invalid/response-with-kind.json"
    app.validate(
        [(broken.name, broken.read_bytes()), ("two.jsonl", b'[1]\n{"Header": "PGM-KPA-V1.0", "Mode": "RQ"}\n')]
    )
    assert app.open_button.layout.display == "" and app.open_button.description == "Open in composer"
    assert [label for label, _index in app.open_picker.options] == ["response-with-kind.json", "two.jsonl:2"]
    app.tabs.selected_index = 1
    app.open_button.click()
    assert app.tabs.selected_index == 0
    assert app.composer.value == json.loads(broken.read_text(encoding="utf-8"))
    assert (app.type_picker.value, app.composer.mode, app.composer.conforms) == ("BKN-DAC", "RS", False)
    app.composer.remove(("Kind",))  # fixed in the composer
    assert app.composer.conforms
    app.open_picker.value = 1
    app.open_button.click()
    assert (app.composer.type_name, app.composer.value.get("Mode")) == ("BKN-PAL", "RQ")
    app.validate([("notes.json", b"{oops")])  # nothing to open: no button
    assert app.open_button.layout.display == "none" and list(app.open_picker.options) == []
    assert app.errors == [] and app.composer.errors == []


def test_the_course_tab_checks_the_learner_and_keeps_progress_in_the_drafts_folder(
    app: ExplorerApp, tmp_path: Path
) -> None:
    assert app.tabs.children[app.tabs.titles.index("Course")] is app.course
    assert len(app.course.exercises) == 10  # notebook 01's quiz and notebook 06's exercises
    view = app.course.view
    view.field.value, view.rule.value = "$.Kind", "mode-required"
    assert not view.check().right and "the field is right" in view.verdict.value
    view.rule.value = "mode-forbidden"
    assert view.check().right
    composer = view.open_composer()
    assert composer.work_folder is app.work_folder and composer.draft_file is not None
    assert composer.draft_file.parent == tmp_path / "drafts" / "course"  # out of the other composers' Drafts lists
    composer.remove(("Kind",))
    assert "1 of 10 exercises done" in app.course.summary.value
    assert (tmp_path / "drafts" / "course-progress.json").is_file()
    assert app.errors == [] and app.course.errors == []


def test_the_composer_comes_back_from_its_draft_kept_in_the_work_folder(tmp_path: Path) -> None:
    first = ExplorerApp(work_folder=tmp_path)
    first.type_picker.value = "BKN-DAC"
    first.composer.set(("DialogID",), "dlg-kept")
    assert (
        first.composer.draft_file is not None and first.composer.draft_file.parent == tmp_path / ".pgm-explore-drafts"
    )
    again = ExplorerApp(work_folder=tmp_path)
    assert again.composer.get(("DialogID",)) == "dlg-kept"
    assert again.type_picker.value == "BKN-DAC"


def test_uploads_are_validated_with_plural_counts(app: ExplorerApp) -> None:
    broken = DATA / "examples/bkn-dac/invalid/response-with-kind.json"
    reports = app.validate([(broken.name, broken.read_bytes()), ("notes.json", b"{oops")])
    assert [r.conforms for r in reports] == [False, False]
    shown = app.reports.value
    assert "2 messages</b>: 2 do not conform" in shown
    assert "mode-forbidden" in shown and "syntax" in shown and "response-with-kind.json" in shown
    app.validate([(broken.name, broken.read_bytes())])
    assert "1 message</b>: 1 does not conform" in app.reports.value


def test_a_transcript_shows_tidy_tables_and_three_plots(app: ExplorerApp) -> None:
    path = DATA / "transcripts/market-wallet-limit.jsonl"
    app._transcript_uploaded([(path.name, path.read_bytes())])
    assert "market-wallet-limit.jsonl</b>: 13 messages, 0 errors, 0 warnings" in app.transcript_summary.value
    tables = app.tables.value
    assert "InsValue" in tables and "No finding." in tables
    assert "&lt;NA&gt;" not in tables and ">NaN<" not in tables and "<td>None</td>" not in tables
    assert "pgm-explore-app-" not in tables, "sources are named after the upload, not the temporary file"
    assert len(app.plots.children) == 3 and all(
        bytes(image.value).startswith(b"\x89PNG") for image in app.plots.children
    )
    assert app.errors == []


def _classes(widget: object) -> set[str]:
    """Every CSS class in a widget tree (what the page can show)."""
    found = set(getattr(widget, "_dom_classes", ()))
    for child in getattr(widget, "children", ()):
        found |= _classes(child)
    return found


def test_the_apps_composer_has_no_path_box_nor_does_its_reply(app: ExplorerApp) -> None:
    files = app.composer._toolbar.files
    assert files is not None
    files.show_panel()
    app.composer.switch_type("BKN-DAC", "RQ")
    reply = app.composer.reply()
    for composer in (app.composer, reply):
        shown = _classes(composer)
        assert {"pgmx-save-name", "pgmx-files"} <= shown
        assert not shown & {"pgmx-save-path", "pgmx-open-path"}, shown
    assert reply.work_folder is app.work_folder


def test_save_and_open_take_names_in_the_work_folder_only(app: ExplorerApp, tmp_path: Path) -> None:
    files = app.composer._toolbar.files
    assert files is not None
    (tmp_path / "outside").mkdir()
    (tmp_path / "outside" / "secret.json").write_text('{"Header": "PGM-KPA-V1.0"}', encoding="utf-8")
    (tmp_path / "work" / "secret.json").symlink_to(tmp_path / "outside" / "secret.json")
    for typed in ("../outside/evil", str(tmp_path / "outside" / "evil.json"), "~/evil", "secret.json", ".hidden"):
        files.name.value = typed
        assert files.save_clicked() is None, typed
        assert "Not saved" in files.status.value
    assert sorted(p.name for p in (tmp_path / "outside").iterdir()) == ["secret.json"]
    files.name.value = "lantern"
    assert files.save_clicked() == tmp_path / "work" / "lantern.json"
    assert "Saved <code>lantern.json</code> in the work folder" in files.status.value
    # Open lists it (not the link leading out) and opens it by name, refusing the rest.
    files.show_panel()
    assert list(files.files.options) == ["lantern.json"]
    app.composer.switch_type("BKN-PAL", "RQ")
    for typed in ("../outside/secret.json", "secret.json", str(tmp_path / "outside" / "secret.json"), "~"):
        files.files.value = typed
        assert files.open_clicked() is None, typed
        assert "Not opened" in files.open_status.value
        assert app.composer.type_name == "BKN-PAL"
    files.files.value = "LANTERN"
    assert files.open_clicked() == "lantern.json"
    assert app.composer.type_name == "PC Prompt" and "Opened <code>lantern.json</code>" in files.open_status.value
    assert app.errors == [] and app.composer.errors == []


def test_save_asks_before_replacing_a_file_it_did_not_write(app: ExplorerApp, tmp_path: Path) -> None:
    files = app.composer._toolbar.files
    assert files is not None
    (tmp_path / "work" / "theirs.json").write_text("{}\n", encoding="utf-8")
    files.name.value = "theirs"
    assert files.save_clicked() is None and files.save.description == "Overwrite?"
    assert (tmp_path / "work" / "theirs.json").read_text(encoding="utf-8") == "{}\n"
    assert files.save_clicked() == tmp_path / "work" / "theirs.json"  # the second click: replaced
    assert files.save.description == "Save"
    assert files.save_clicked() is not None  # what it wrote itself: replaced without asking


def _upload(name: str, content: bytes) -> dict[str, object]:
    """A file as the browser's FileUpload hands it to the kernel."""
    import datetime as dt

    when = dt.datetime.now(dt.UTC)
    return {"name": name, "type": "application/json", "size": len(content), "content": content, "last_modified": when}


def test_a_file_from_elsewhere_comes_in_by_upload(app: ExplorerApp) -> None:
    files = app.composer._toolbar.files
    assert files is not None
    files.show_panel()
    example = DATA / "examples/bkn-dac/valid/rq-feasibility-market.json"
    files.upload.value = (_upload(example.name, example.read_bytes()),)
    assert app.composer.type_name == "BKN-DAC" and "from your computer" in files.open_status.value
    assert files.upload.value == ()
    files.upload.value = (_upload("bad.json", b"[1, 2]"),)
    assert "Not opened: bad.json holds an array" in files.open_status.value


def test_an_uploaded_transcript_is_read_without_writing_a_file(
    app: ExplorerApp, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import tempfile

    spy = tmp_path / "temporary"
    spy.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(spy))
    path = DATA / "transcripts/defective/turn-gap.jsonl"
    app._transcript_uploaded([(path.name, path.read_bytes())])
    assert "turn-gap.jsonl</b>: 5 messages, 0 errors, 1 warning" in app.transcript_summary.value
    assert "turn-gap.jsonl:4" in app.tables.value
    assert list(spy.iterdir()) == [] and sorted(p.name for p in (tmp_path / "work").iterdir()) == []
