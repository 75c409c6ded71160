"""DialogueBuilder and the example picker, headless."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("ipywidgets")

from conftest import EXAMPLES, load, minimal_message
from test_widgets import find, one

import pgm_explore
from pgm_explore.dialogue import Transcript
from pgm_explore.widgets import (
    DialogueBuilder,
    ExampleLoader,
    MessageComposer,
    example_files,
    example_picker,
)

TRANSCRIPTS = Path(__file__).resolve().parents[1] / "data" / "transcripts"


@pytest.fixture(autouse=True)
def _drafts_in_tmp(drafts_folder: Path) -> Path:
    """Drafts and saved files go to a temporary folder, never to the home directory."""
    return drafts_folder


def builder(**kwargs: object) -> DialogueBuilder:
    b = DialogueBuilder(**kwargs)  # type: ignore[arg-type]
    assert b.errors == [] and b.composer.errors == []
    return b


def test_add_and_remove_messages_with_live_transcript_findings() -> None:
    b = builder()
    request = minimal_message("BKN-PAL", "RQ")
    response = minimal_message("BKN-PAL", "RS")
    response["RequestID"] = "nobody-asked"
    b.add(request)
    b.add(response)
    assert len(b.messages) == 2 and b.transcript.messages[1].mode == "RS"
    findings = one(b, "pgmx-transcript-findings").value
    assert "request-unknown" in findings and "unanswered" in findings
    assert "2 messages" in one(b, "pgmx-dialogue-badge").value
    b.remove(1)
    assert len(b.messages) == 1 and "request-unknown" not in one(b, "pgmx-transcript-findings").value


def test_a_loaded_transcript_fills_the_pa_status_and_feasibility_tables() -> None:
    b = builder()
    count = b.load(TRANSCRIPTS / "market-wallet-limit.jsonl")
    assert count == len(b.messages) == len(Transcript.load(str(TRANSCRIPTS / "market-wallet-limit.jsonl")).messages)
    assert "InsValue" in one(b, "pgmx-pastatus").value
    feasibility = one(b, "pgmx-feasibility").value
    assert "PAStatus" in feasibility and "MM-" in feasibility
    assert "No transcript findings" in one(b, "pgmx-transcript-findings").value
    assert len(b._select.options) == count


def test_reply_to_the_selected_request_and_add_it_with_the_button() -> None:
    b = builder()
    b.add(load(EXAMPLES / "bkn-dac" / "valid" / "rq-feasibility-market.json"))
    b.select(0)
    one(b, "pgmx-reply").click()
    assert b.composer.mode == "RS" and b.composer.value["RequestID"] == b.messages[0]["QueryID"]
    add = one(b, "pgmx-add")
    assert add.description == "Add to dialogue"
    b.composer.set(("Outcome",), "not_answered")
    add.click()
    assert len(b.messages) == 2 and b.selected == 1
    assert not [f for f in b.transcript.findings if f.rule in ("request-unknown", "unanswered")]
    assert b.errors == []


def test_new_turn_continues_the_dialogue() -> None:
    b = builder()
    b.new_turn("PC Prompt")
    b.composer.set(("SessionID",), "ses-1")
    b.add(b.composer)
    b.new_turn("BKN-PRC")
    doc = b.composer.value
    assert (doc["DialogID"], doc["TurnIndex"], doc["SessionID"]) == (b.messages[0]["DialogID"], 0, "ses-1")
    b.add(b.composer)
    b._type.value = "BKN-PRC"
    one(b, "pgmx-new-turn").click()
    assert b.composer.value["TurnIndex"] == 1 and b.composer.value["QueryID"] != b.messages[1]["QueryID"]


def test_edit_and_replace_the_selected_message() -> None:
    b = builder()
    b.add(minimal_message("BKN-PAL", "RQ"))
    b.select(0)
    one(b, "pgmx-edit").click()
    assert b.composer.value == b.messages[0]
    b.composer.set(("Question",), "Formal or friendly?")
    one(b, "pgmx-replace").click()
    assert b.messages[0]["Question"] == "Formal or friendly?" and len(b.messages) == 1


def test_the_preview_says_what_adding_the_composed_message_would_raise() -> None:
    b = builder()
    b.add(minimal_message("BKN-DAC", "RQ"))
    b.composer.load(minimal_message("BKN-DAC", "RQ"))  # the same QueryID again
    assert "query-id-reused" in one(b, "pgmx-preview").value
    b.composer.set(("QueryID",), "q-other")
    assert "query-id-reused" not in one(b, "pgmx-preview").value


def test_export_jsonl_round_trip(tmp_path: Path) -> None:
    b = builder()
    b.load(TRANSCRIPTS / "stance-negotiation.jsonl")
    path = b.export(tmp_path / "out.jsonl")
    lines = path.read_text(encoding="utf-8").splitlines()
    assert [json.loads(line) for line in lines] == b.messages
    other = builder()
    other.load(path)
    assert other.messages == b.messages


def test_a_builder_draft_restores_the_messages_and_the_composer(_drafts_in_tmp: Path) -> None:
    b = builder(draft_name="session")
    b.add(minimal_message("BKN-PAL", "RQ"))
    b.composer.set(("MInstance",), "mi-kept")
    again = builder(draft_name="session")
    assert again.messages == b.messages and again.composer.value["MInstance"] == "mi-kept"


def test_a_button_error_shows_in_the_builder() -> None:
    b = builder()
    one(b, "pgmx-remove").click()  # nothing selected
    assert isinstance(b.errors[-1], ValueError)
    assert "select a message" in one(b, "pgmx-dialogue-error").value


def test_loading_a_file_with_unreadable_lines_says_so(tmp_path: Path) -> None:
    path = tmp_path / "t.jsonl"
    path.write_text(json.dumps(minimal_message("PC Prompt")) + "\n{oops\n", encoding="utf-8")
    b = builder()
    one(b, "pgmx-load-path").value = str(path)
    one(b, "pgmx-load-file").click()
    assert len(b.messages) == 1 and "1 unreadable line" in one(b, "pgmx-dialogue-status").value


# -- the example picker ---------------------------------------------------------------------------


def test_example_files_lists_messages_and_transcripts() -> None:
    files = example_files()
    assert "examples/bkn-dac/valid/rq-minimal.json" in files
    assert "transcripts/full-session.jsonl" in files
    assert not [label for label in files if label.endswith(".expected.json") or "/malformed/" in label]
    assert not [label for label in example_files(transcripts=False) if label.startswith("transcripts/")]


def test_the_picker_loads_an_example_into_a_composer() -> None:
    c = MessageComposer("PC Prompt")
    loader = example_picker(c)
    assert isinstance(loader, ExampleLoader)
    assert not [label for label, _ in loader.dropdown.options if label.startswith("transcripts/")]
    loader.dropdown.value = loader.files["examples/bkn-pal/valid/rs-tutor-stance.json"]
    one(loader, "pgmx-load").click()
    assert c.value == load(EXAMPLES / "bkn-pal" / "valid" / "rs-tutor-stance.json") and loader.errors == []


def test_the_picker_loads_transcripts_and_examples_into_a_builder() -> None:
    b = builder()
    b.loader.load("transcripts/full-session.jsonl")
    assert len(b.messages) > 10
    b.loader.load("examples/bkn-dac/valid/rs-minimal.json")
    assert b.composer.value == load(EXAMPLES / "bkn-dac" / "valid" / "rs-minimal.json")
    assert find(b, "pgmx-examples")


_PICKER_ALONE = """
import json
import pgm_explore
from pgm_explore.widgets import ExampleLoader, MessageComposer

loader = ExampleLoader(MessageComposer("PC Prompt", draft_dir=False).load)
print(json.dumps([pgm_explore.__file__, loader.files == {}, loader.dropdown.disabled, loader.status.value]))
"""


@pytest.mark.slow  # (a Python process started for real)
def test_without_the_repository_the_picker_says_so(tmp_path: Path) -> None:
    # The package alone, as a wheel installs it: no data/ beside it, none in the working folder.
    site = tmp_path / "site"
    shutil.copytree(
        Path(pgm_explore.__file__).parent, site / "pgm_explore", ignore=shutil.ignore_patterns("__pycache__")
    )
    env = {k: v for k, v in os.environ.items() if k != "PGM_EXPLORE_DATA"} | {"PYTHONPATH": str(site)}
    done = subprocess.run(
        [sys.executable, "-c", _PICKER_ALONE], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300
    )
    assert done.returncode == 0, done.stderr
    where, empty, disabled, status = json.loads(done.stdout)
    assert Path(where).is_relative_to(site)  # the copy ran, not the repository's package
    assert empty and disabled and "No examples found" in status


# -- drafts and files (issues 10 and 11) ------------------------------------------------------------


def own(b: DialogueBuilder, css_class: str) -> Any:
    """The builder's own widget with that class (its composer has a notice and Drafts of its own)."""
    found = [w for w in find(b, css_class) if w not in find(b.composer, css_class)]
    assert len(found) == 1, f"{len(found)} widgets with class {css_class}"
    return found[0]


def test_a_restored_dialogue_says_so_and_start_fresh_keeps_it_aside() -> None:
    b = builder(draft_name="03-dialogue")
    b.add(minimal_message("PC Prompt"))
    again = builder(draft_name="03-dialogue")
    notice = own(again, "pgmx-draft-notice").value
    assert notice.startswith("Restored draft from ") and "1 message." in notice
    own(again, "pgmx-start-fresh").click()
    assert again.messages == [] and again.errors == []
    kept = [name for name in MessageComposer.drafts() if name.startswith("03-dialogue (set aside ")]
    assert len(kept) == 1 and builder(draft_name=kept[0]).messages == b.messages
    assert builder(draft_name="03-dialogue").messages == []


def test_the_builder_drafts_panel_lists_dialogues_only() -> None:
    first = builder(draft_name="first")
    first.add(minimal_message("BKN-PAL", "RQ"))
    first.composer.set(("MInstance",), "typed")  # the builder's composer keeps a message draft
    b = builder(draft_name="second")
    own(b, "pgmx-drafts").click()
    listed = own(b, "pgmx-drafts-list")
    assert [value for _label, value in listed.options] == ["first"]
    listed.value = "first"
    own(b, "pgmx-draft-open").click()
    assert b.errors == [] and b.messages == first.messages


@pytest.mark.parametrize("content", [b"", b"[1, 2", b'{"format": "pgm-explore-draft/1", "messages": {"a": 1}}'])
def test_a_damaged_dialogue_draft_never_blocks_the_builder(content: bytes, _drafts_in_tmp: Path) -> None:
    _drafts_in_tmp.mkdir()
    (_drafts_in_tmp / "broken.json").write_bytes(content)
    b = builder(draft_name="broken")
    assert b.messages == [] and ".damaged-" in own(b, "pgmx-draft-notice").value
    assert [p.read_bytes() for p in _drafts_in_tmp.glob("broken.json.damaged-*")] == [content]


def test_export_does_not_follow_a_planted_link(tmp_path: Path) -> None:
    victim = tmp_path / "victim"
    victim.write_text("precious", encoding="utf-8")
    (tmp_path / "out.jsonl").symlink_to(victim)
    b = builder()
    b.add(minimal_message("PC Prompt"))
    written = b.export(tmp_path / "out.jsonl")
    assert not written.is_symlink() and victim.read_text(encoding="utf-8") == "precious"
    assert [p.name for p in tmp_path.iterdir() if p.name.endswith(".tmp")] == []


def test_export_keeps_a_lone_surrogate_as_an_escape(tmp_path: Path) -> None:
    b = builder()
    message = minimal_message("BKN-PAL")
    message["Question"] = "half \ud800 a pair"
    b.add(message)
    written = b.export(tmp_path / "out.jsonl")
    assert json.loads(written.read_text(encoding="utf-8"))["Question"] == "half \ud800 a pair"


def test_the_export_button_without_a_name_writes_to_the_work_folder(tmp_path: Path) -> None:
    b = builder(draft_name="my dialogue")
    b.add(minimal_message("PC Prompt"))
    one(b, "pgmx-export").click()
    written = list((tmp_path / "work").glob("*.jsonl"))
    assert b.errors == [] and [p.name for p in written] == ["my_dialogue.jsonl"]
    assert "1 message to" in one(b, "pgmx-dialogue-status").value
