"""A file that writes a name twice in one object, opened by hand: the message can hold only the
last value, so the composer's Open panel and the builder's Load file say which name lost one,
where the person looks, before Save writes the message without it."""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from pathlib import Path

import pytest

from .conftest import NO_PLAYWRIGHT, WIDGETS_MS, Composer, Notebook, type_into

expect = pytest.importorskip("playwright.sync_api", reason=NO_PLAYWRIGHT).expect
pytestmark = pytest.mark.e2e

ROOT = Path(__file__).resolve().parents[2]
CELLS = [
    "from pgm_explore.widgets import DialogueBuilder, MessageComposer",
    'composer = MessageComposer("BKN-PRC", "RQ", draft_name="e2e-names-twice")\ncomposer',
    'builder = DialogueBuilder(draft_name="e2e-names-twice-builder")\nbuilder',
]


def _written_twice(document: dict[str, object], name: str, first: str, last: str) -> str:
    """``document`` as JSON text with ``name`` written twice at its top level: ``first``, then ``last``."""
    rest = {key: value for key, value in document.items() if key != name}
    text = json.dumps(rest, ensure_ascii=False)
    return f"{text[:-1]}, {json.dumps(name)}: {json.dumps(first)}, {json.dumps(name)}: {json.dumps(last)}}}"


def test_a_name_written_twice_is_named_when_a_file_is_opened(
    open_code_in_lab: Callable[[list[str]], Notebook], shot: Callable[[str], Path]
) -> None:
    notebook = open_code_in_lab(CELLS)
    example = json.loads((ROOT / "data/examples/bkn-pal/valid/rq-tutor-stance.json").read_text(encoding="utf-8"))
    text = _written_twice(example, "Question", "Warm or formal?", "Formal, please?")
    (notebook.folder / "twice.json").write_text(text + "\n", encoding="utf-8")
    transcript = (ROOT / "data/transcripts/market-wallet-limit.jsonl").read_text(encoding="utf-8").splitlines()
    (notebook.folder / "twice.jsonl").write_text("\n".join([text, *transcript[:3]]) + "\n", encoding="utf-8")

    composer = Composer(notebook.panel.locator(".pgmx-composer").first)
    expect(composer.title).to_contain_text("BKN-PRC", timeout=WIDGETS_MS)
    composer.open_file("twice.json")
    expect(composer.title).to_contain_text("BKN-PAL", timeout=WIDGETS_MS)
    warning = composer.open_panel.locator(".pgmx-open-warning")
    expect(warning).to_contain_text('$: The name "Question" is written twice in one object')
    expect(warning).to_contain_text("only its last value is read")
    expect(composer.json_view).to_have_value(re.compile(r'"Question": "Formal, please\?"'))
    assert "Warm or formal?" not in composer.json_view.input_value()
    shot("a file with a name written twice, opened")

    builder = notebook.panel.locator(".pgmx-dialogue")
    type_into(builder.locator(".pgmx-load-path input"), "twice.jsonl")
    builder.locator("button.pgmx-load-file").click()
    status = builder.locator(".pgmx-dialogue-status")
    expect(status).to_contain_text("Loaded 4 messages from twice.jsonl", timeout=WIDGETS_MS)
    expect(status).to_contain_text("1 message with a name written twice (the last value kept)")
    expect(builder.locator(".pgmx-messages select option")).to_have_count(4)
    shot("a transcript with a name written twice, loaded")
