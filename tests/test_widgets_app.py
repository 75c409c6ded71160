"""The app page's widgets without a browser: the pickers drive the composer, uploads are validated,
transcripts show tidy tables and three plots (tests/e2e/test_app.py drives the same in Chromium)."""

from __future__ import annotations

from pathlib import Path

import pytest

pytest.importorskip("ipywidgets")

from pgm_explore.widgets import ExplorerApp

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT / "data"


@pytest.fixture
def app(tmp_path: Path) -> ExplorerApp:
    return ExplorerApp(draft_dir=tmp_path)


def test_type_and_mode_pickers_switch_the_composer(app: ExplorerApp) -> None:
    assert app.composer.type_name == "PC Prompt" and app.mode_picker.disabled
    app.type_picker.value = "BKN-PAL"
    assert (app.composer.type_name, app.composer.mode) == ("BKN-PAL", "RQ")
    assert not app.mode_picker.disabled
    app.mode_picker.value = "RS"
    assert app.composer.value["Mode"] == "RS"
    app.composer.switch_type("BKN-DAC", "RQ")  # the composer's own switch moves the pickers too
    assert (app.type_picker.value, app.mode_picker.value) == ("BKN-DAC", "RQ")
    assert app.errors == []


def test_the_composer_comes_back_from_its_draft(tmp_path: Path) -> None:
    first = ExplorerApp(draft_dir=tmp_path)
    first.type_picker.value = "BKN-DAC"
    first.composer.set(("DialogID",), "dlg-kept")
    again = ExplorerApp(draft_dir=tmp_path)
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
