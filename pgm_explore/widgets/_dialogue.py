"""DialogueBuilder: collect messages into a transcript, with its rules and tables live."""

from __future__ import annotations

import copy
import json
import uuid
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import ipywidgets as widgets
import pandas as pd
from traitlets import List, observe

from pgm_explore import analysis
from pgm_explore._display import esc
from pgm_explore._files import safe_filename
from pgm_explore.dialogue import Transcript
from pgm_explore.dialogue.documents import next_turn_context, reply_document, skeleton
from pgm_explore.io import iter_documents
from pgm_explore.spec import DATA_TYPES, data_type
from pgm_explore.widgets._base import ErrorArea, style_widget
from pgm_explore.widgets._composer import MessageComposer
from pgm_explore.widgets._drafts import (
    DraftInfo,
    OpenedDraft,
    aside_name,
    atomic_write,
    claim_draft,
    default_work_dir,
    draft_path,
    find_draft,
    local_time,
    open_draft,
    set_aside,
    write_draft,
)
from pgm_explore.widgets._examples import ExampleLoader, is_transcript
from pgm_explore.widgets._filebar import DraftBar, Parts, count
from pgm_explore.widgets._ordered import OrderedButton, OrderedText

__all__ = ["DialogueBuilder", "example_picker"]

_SOURCE = "dialogue"


def _frame_html(frame: pd.DataFrame, empty: str) -> str:
    if frame.empty:
        return f"<p>{esc(empty)}</p>"
    return frame.to_html(index=False, classes="pgmx-table", border=0, na_rep="", escape=True)


class DialogueBuilder(widgets.VBox):
    """Build a transcript message by message and watch the transcript rules and tables.

    ``messages`` is the list of documents, in order; :attr:`transcript` their
    :class:`~pgm_explore.dialogue.Transcript`. The embedded :attr:`composer` composes the
    next message: "Add to dialogue" appends it, "Reply" fills it with the Response to the
    selected Request, "New turn" with the next Request of the chosen type.

    Drafts as for :class:`MessageComposer`: with a stable ``draft_name`` (e.g.
    ``"03-dialogue"``) the messages come back when the cell runs again, after a kernel
    restart too, with a "Restored draft from <time>" notice and Start fresh; the composer
    inside keeps its own draft ``<draft_name>-composer``. The Export JSONL button without a
    name writes ``<draft_name>.jsonl`` in the work folder.

    >>> b = DialogueBuilder(draft_dir=False)
    >>> b.add(b.composer)
    0
    >>> len(b.messages), b.transcript.messages[0].type
    (1, 'PC Prompt')
    """

    messages: List[dict[str, Any]] = List(help="The documents of the dialogue, in order.")

    def __init__(
        self,
        draft_dir: str | Path | bool | None = None,
        *,
        draft_name: str | None = None,
        messages: list[Mapping[str, Any]] | None = None,
        **kwargs: Any,
    ) -> None:
        super().__init__(**kwargs)
        self._area = ErrorArea(("pgmx-error", "pgmx-dialogue-error"))
        self.autosave = draft_dir is not False
        self.draft_dir: Path | None = Path(draft_dir) if isinstance(draft_dir, str | Path) else None
        self.draft_name = draft_name or f"dialogue-{uuid.uuid4().hex[:8]}"
        self._transcript: Transcript | None = None
        self._dirty = False
        self._closed = False
        opened = OpenedDraft(None)
        if draft_name is not None and self.autosave:
            opened = open_draft(draft_name, self.draft_dir)
        stored = opened.content.get("messages") if opened.content is not None else None
        notice = opened.notice
        if opened.content is not None and not (
            isinstance(stored, list) and all(isinstance(m, Mapping) for m in stored)
        ):
            path = find_draft(self.draft_name, self.draft_dir)
            kept = f"; it is kept as {set_aside(path, 'damaged').name}" if path is not None else ""
            notice, stored = f"The draft “{self.draft_name}” holds no list of messages{kept}.", None
        composer_dir: Any = self.draft_dir if self.autosave else False
        self.composer = MessageComposer(
            "PC Prompt", draft_dir=composer_dir, draft_name=f"{self.draft_name}-composer", reply_button=False
        )
        self._build()
        self.add_class("pgmx-dialogue")
        if stored is not None:
            when = local_time(opened.saved) if opened.saved is not None else "an earlier session"
            self._drafts_bar.say(
                f"Restored draft from {esc(when)} (“{esc(self.draft_name)}”): {esc(count(len(stored), 'message'))}.",
                fresh=True,
            )
        elif notice:
            self._drafts_bar.say(esc(notice) + " The dialogue starts without it.")
        initial = [dict(m) for m in stored] if stored is not None else messages or []
        if initial:
            self.messages = [copy.deepcopy(dict(m)) for m in initial]
        else:  # an empty list is no change of the trait: draw the empty tables directly
            self._area.guard(self._refresh)()
        if self.autosave:
            other = claim_draft(draft_path(self.draft_name, self.draft_dir), self)
            if other is not None:
                self._draft_shared()
                getattr(other, "_draft_shared", lambda: None)()

    # -- layout -------------------------------------------------------------------------------

    def _build(self) -> None:
        guard = self._area.guard
        self._badge = widgets.HTML(_dom_classes=("pgmx-dialogue-badge",))
        self.loader = ExampleLoader(self._load_example, transcripts=True)
        self._path = OrderedText(
            placeholder="transcript.jsonl", layout={"width": "300px"}, _dom_classes=("pgmx-load-path",)
        )
        load_file = OrderedButton(description="Load file", _dom_classes=("pgmx-load-file",))
        load_file.on_click(guard(lambda _b: self.load(self._path.value.strip())))
        self._select = widgets.Select(options=[], rows=8, layout={"width": "100%"}, _dom_classes=("pgmx-messages",))
        buttons = []
        for text, cls, tip, handler in (
            ("Reply", "pgmx-reply", "Compose the Response to the selected Request", self._reply_selected),
            ("Edit", "pgmx-edit", "Load the selected message into the composer", self._edit_selected),
            ("Replace", "pgmx-replace", "Replace the selected message with the composed one", self._replace_selected),
            ("Remove", "pgmx-remove", "Remove the selected message", self._remove_selected),
        ):
            button = OrderedButton(description=text, tooltip=tip, _dom_classes=(cls,))
            button.on_click(guard(lambda _b, handler=handler: handler()))
            buttons.append(button)
        self._type = widgets.Dropdown(
            options=[dt.name for dt in DATA_TYPES], value="PC Prompt", description="Type", _dom_classes=("pgmx-type",)
        )
        self._new_turn = OrderedButton(
            description="New turn",
            tooltip="A new message of this type, continuing the session, dialogue and turn count",
            _dom_classes=("pgmx-new-turn",),
        )
        self._new_turn.on_click(guard(lambda _b: self.new_turn(self._type.value)))
        self._add = OrderedButton(description="Add to dialogue", button_style="primary", _dom_classes=("pgmx-add",))
        self._add.on_click(guard(lambda _b: self.add(self.composer)))
        self._preview = widgets.HTML(_dom_classes=("pgmx-preview",))
        self.composer.observe(guard(lambda _change: self._render_preview()), names="value")
        self._findings = widgets.HTML(_dom_classes=("pgmx-transcript-findings",))
        self._pastatus = widgets.HTML(_dom_classes=("pgmx-pastatus",))
        self._feasibility = widgets.HTML(_dom_classes=("pgmx-feasibility",))
        self._export_path = OrderedText(
            placeholder=f"{safe_filename(self.draft_name, '.jsonl')} (in the work folder)",
            layout={"width": "300px"},
            _dom_classes=("pgmx-export-path",),
        )
        export = OrderedButton(description="Export JSONL", _dom_classes=("pgmx-export",))
        export.on_click(guard(lambda _b: self._export_clicked()))
        self._status = widgets.HTML(_dom_classes=("pgmx-dialogue-status",))
        self._drafts_bar = DraftBar(
            self._area, Parts(), "dialogue", lambda: self.draft_dir, self._open_draft, self.start_fresh
        )
        self.children = [
            style_widget(),
            widgets.HBox(
                [widgets.HTML("<b>Dialogue</b>"), self._badge, self._drafts_bar.toggle],
                layout={"align_items": "center"},
            ),
            self._area.box,
            self._drafts_bar.box,
            self._drafts_bar.panel,
            widgets.HBox([self.loader, self._path, load_file], layout={"flex_flow": "row wrap"}),
            self._select,
            widgets.HBox(buttons),
            widgets.HTML("<b>Next message</b>"),
            widgets.HBox([self._type, self._new_turn]),
            self.composer,
            widgets.HBox([self._add, self._preview], layout={"align_items": "center"}),
            widgets.HTML("<b>Transcript findings</b>"),
            self._findings,
            widgets.HTML("<b>PA Status</b>"),
            self._pastatus,
            widgets.HTML("<b>Feasibility</b>"),
            self._feasibility,
            widgets.HBox([self._export_path, export, self._status]),
        ]

    # -- public API ---------------------------------------------------------------------------

    @property
    def errors(self) -> list[BaseException]:
        """Exceptions raised in the builder's callbacks (also shown in the widget)."""
        return self._area.errors

    @property
    def transcript(self) -> Transcript:
        """The messages as a checked transcript (sources ``dialogue#INDEX``)."""
        if self._transcript is None:
            self._transcript = Transcript.from_documents(self.messages, source=_SOURCE)
        return self._transcript

    @property
    def selected(self) -> int | None:
        """Index of the selected message."""
        return self._select.value

    def select(self, index: int) -> None:
        self._select.value = index

    def add(self, message: Mapping[str, Any] | MessageComposer) -> int:
        """Append a document (or a composer's current document); returns its index."""
        doc = message.value if isinstance(message, MessageComposer) else message
        self._dirty = True
        self.messages = [*self.messages, copy.deepcopy(dict(doc))]
        index = len(self.messages) - 1
        self._select.value = index
        return index

    def remove(self, index: int) -> None:
        messages = list(self.messages)
        del messages[index]
        self._dirty = True
        self.messages = messages

    def replace(self, index: int, message: Mapping[str, Any] | MessageComposer) -> None:
        doc = message.value if isinstance(message, MessageComposer) else message
        messages = list(self.messages)
        messages[index] = copy.deepcopy(dict(doc))
        self._dirty = True
        self.messages = messages

    def reply(self, index: int | None = None) -> None:
        """Fill the composer with the Response to message ``index`` (default: the selected one)."""
        doc = self._message(index)
        self.composer.load(reply_document(doc), fresh=True)
        self._sync_type()

    def new_turn(self, type_name: str) -> None:
        """Fill the composer with the next Request of ``type_name`` (a PC Prompt opens a dialogue)."""
        spec = data_type(type_name)
        context = next_turn_context(self.messages, spec.name)
        self.composer.load(skeleton(spec.name, "RQ" if spec.has_modes else None, context=context), fresh=True)
        self._sync_type()

    def _load_example(self, path: Path) -> None:
        """A transcript becomes the messages; an example message goes to the composer."""
        if is_transcript(path):
            self.load(path)
        else:
            self.composer.load(path)

    def load(self, path: str | Path) -> int:
        """Replace the messages with those of a transcript file (``.jsonl`` or a JSON array).

        Lines that are not JSON are left out, and a message that writes a name twice in one
        object keeps its last value (the status says how many of each); returns the number
        of messages read.
        """
        if not str(path):
            raise ValueError("give the path of a transcript file")
        documents, skipped, noted = [], 0, 0
        for item in iter_documents(str(path)):
            if item.problem is not None:
                skipped += 1
            else:
                documents.append(item.document)
                noted += bool(item.notes)
        if self.autosave and self._dirty and self.messages:
            write_draft(draft_path(f"{self.draft_name}-previous", self.draft_dir), self._draft())
        self._dirty = True
        self.messages = documents
        note = f", {count(skipped, 'unreadable line')} left out" if skipped else ""
        if noted:
            # (Each such message keeps the last value of the name: the earlier ones are gone.)
            note += f", {count(noted, 'message')} with a name written twice (the last value kept)"
        self._status.value = (
            f"Loaded {count(len(documents), 'message')} from <code>{esc(Path(path).name)}</code>{esc(note)}"
        )
        return len(documents)

    def export(self, path: str | Path) -> Path:
        """Write the messages as JSON Lines (compact, UTF-8), atomically; returns the path.

        A symbolic link at ``path`` is replaced by the file, never followed.
        """
        text = "".join(json.dumps(doc, ensure_ascii=False, separators=(",", ":")) + "\n" for doc in self.messages)
        try:
            text.encode("utf-8")
        except UnicodeEncodeError:  # a lone surrogate (an encoding finding): kept as a \u escape
            text = "".join(json.dumps(doc, separators=(",", ":")) + "\n" for doc in self.messages)
        written = atomic_write(path, text, durable=True)
        self._status.value = f"Exported {esc(count(len(self.messages), 'message'))} to <code>{esc(written)}</code>"
        return written

    def _export_clicked(self) -> None:
        typed = self._export_path.value.strip()
        self.export(typed or default_work_dir() / safe_filename(self.draft_name, ".jsonl"))

    def start_fresh(self) -> str | None:
        """An empty dialogue (the Start fresh button); the messages until now are kept as the
        draft ``<name> (set aside <time>)``, whose name is returned (None when drafts are off)."""
        kept = None
        if self.autosave:
            kept = aside_name(self.draft_name, self.draft_dir)
            write_draft(draft_path(kept, self.draft_dir), {**self._draft(), "name": kept})
        self._dirty = True
        self.messages = []
        self._drafts_bar.say(f"Started fresh. The earlier dialogue is kept as “{esc(kept)}”." if kept else "")
        return kept

    def _open_draft(self, entry: DraftInfo, content: dict[str, Any]) -> None:
        stored = content.get("messages")
        if not isinstance(stored, list) or not all(isinstance(m, Mapping) for m in stored):
            raise ValueError(f"the draft “{entry.name}” holds no list of messages")
        if self.autosave and self._dirty and self.messages:
            write_draft(draft_path(f"{self.draft_name}-previous", self.draft_dir), self._draft())
        self._dirty = True
        self.messages = [copy.deepcopy(dict(m)) for m in stored]
        self._drafts_bar.say(f"Opened the draft “{esc(entry.name)}” from {esc(local_time(entry.saved))}.")

    def close(self) -> None:
        """Close the widget; it no longer counts as a holder of its draft name."""
        self._closed = True
        super().close()

    def _draft_shared(self) -> None:
        note = (
            f"Another dialogue builder in this kernel also keeps the draft “{esc(self.draft_name)}” (an earlier "
            "run of this cell?): the draft holds whichever was changed last. Give each its own draft_name."
        )
        self._drafts_bar.add(note)

    # -- updates ------------------------------------------------------------------------------

    @observe("messages")
    def _messages_changed(self, change: dict[str, Any]) -> None:
        self._area.guard(self._refresh)()

    def _refresh(self) -> None:
        self._transcript = None
        t = self.transcript
        options = []
        for message in t.messages:
            doc = message.document if isinstance(message.document, dict) else {}
            ident = next((doc[k] for k in ("QueryID", "PCPromptID") if isinstance(doc.get(k), str)), "?")
            turn = doc.get("TurnIndex")
            parts = [
                f"{message.position}",
                "✓" if message.report.conforms else "✗",
                message.type or "unknown type",
                message.mode or "",
                str(ident),
                f"turn {turn}" if turn is not None else "",
                f"→ {doc['RequestID']}" if isinstance(doc.get("RequestID"), str) else "",
            ]
            options.append((" ".join(p for p in parts if p), message.position))
        selected = self._select.value
        self._select.options = options
        if selected is not None and selected < len(options):
            self._select.value = selected
        ok = not t.errors
        colour = "#2e7d32" if ok else "#c62828"
        self._badge.value = (
            f'<span style="padding:1px 8px;border-radius:8px;color:#fff;background:{colour}">'
            f"{count(len(t.messages), 'message')} · {count(t.errors, 'error')} · {count(t.warnings, 'warning')}</span>"
        )
        self._findings.value = _frame_html(analysis.findings(t), "No transcript findings.")
        self._pastatus.value = _frame_html(analysis.pa_status_counts(t), "No PA Status yet.")
        self._feasibility.value = _frame_html(analysis.feasibility(t), "No Process Actions yet.")
        self._render_preview()
        if self._dirty:
            self._autosave()

    def _render_preview(self) -> None:
        """What the transcript rules would say of the composed message if it were added."""
        documents = [*self.messages, self.composer.value]
        t = Transcript.from_documents(documents, source=_SOURCE)
        own = f"{_SOURCE}#{len(documents) - 1}"
        # "unanswered" is about the future: every Request is unanswered when just added.
        found = [f for f in t.findings if f.source == own and f.rule != "unanswered"]
        if not found:
            text = '<span style="color:#2e7d32">Adding this message raises no transcript finding.</span>'
        else:
            items = "".join(f"<li>{esc(f.severity)} [{esc(f.rule)}] {esc(f.message)}</li>" for f in found)
            text = f"<span>Adding this message would give:</span><ul>{items}</ul>"
        if self._preview.value != text:
            self._preview.value = text

    def _message(self, index: int | None) -> dict[str, Any]:
        index = self._select.value if index is None else index
        if index is None:
            raise ValueError("select a message first")
        return self.messages[index]

    def _reply_selected(self) -> None:
        self.reply()

    def _edit_selected(self) -> None:
        self.composer.load(self._message(None))
        self._sync_type()

    def _replace_selected(self) -> None:
        index = self._select.value
        if index is None:
            raise ValueError("select a message first")
        self.replace(index, self.composer)

    def _remove_selected(self) -> None:
        index = self._select.value
        if index is None:
            raise ValueError("select a message first")
        self.remove(index)

    def _sync_type(self) -> None:
        # The type dropdown shows what the composer holds (it starts nothing by itself).
        name = self.composer.type_name
        if self._type.value != name:
            self._type.value = name

    # -- drafts -------------------------------------------------------------------------------

    def _draft(self) -> dict[str, Any]:
        return {"kind": "dialogue", "name": self.draft_name, "messages": self.messages}

    def _autosave(self) -> None:
        if self.autosave:
            write_draft(draft_path(self.draft_name, self.draft_dir), self._draft())


def example_picker(target: MessageComposer | DialogueBuilder) -> ExampleLoader:
    """An :class:`ExampleLoader` for ``target``: example messages for a composer; for a builder,
    transcripts too (a transcript becomes its messages, a message goes to its composer)."""
    if isinstance(target, DialogueBuilder):
        return ExampleLoader(target._load_example, transcripts=True)
    return ExampleLoader(target.load)
