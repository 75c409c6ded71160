"""What a MessageComposer shows around its form, as three parts that talk through traits:

- :class:`VerdictView`: the title, the verdict badge, the consistency line and the summary. It
  takes ``report``, ``quiet`` and ``touched`` and gives ``shown``, the findings on the page (all of
  them, or only those at the fields touched while ``quiet``);
- :class:`JsonView`: the JSON text of ``document``; a document typed there becomes ``document``;
- :class:`Toolbar`: Undo, Redo, Validate, Reply, Open, Save, Download, Drafts and the status line;
  ``can_undo``, ``can_redo`` and ``can_reply`` switch its buttons, ``status`` is its line, and its
  clicks call what the composer gives it (as a Button's ``on_click`` does).

None of them knows the composer.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import ipywidgets as widgets
from traitlets import Any as AnyTrait
from traitlets import Bool, Dict, HasTraits, Set, Tuple, Unicode, observe

from pgm_explore._display import esc
from pgm_explore.spec import MODE_WORDS, data_type
from pgm_explore.validation import Finding, Report
from pgm_explore.widgets._base import ErrorArea
from pgm_explore.widgets._drafts import default_work_dir, dump_json
from pgm_explore.widgets._filebar import OpenPanel, Parts, download_html
from pgm_explore.widgets._form import FormContext, JsonEditor
from pgm_explore.widgets._ordered import OrderedButton, OrderedText
from pgm_explore.widgets._verdict import badge_html, consistency_html, shown_findings, summary_html
from pgm_explore.widgets._workfolder import WorkFolderFiles

__all__ = ["JsonView", "Toolbar", "VerdictView"]


class VerdictView(HasTraits):
    """The title, badge, consistency line and summary of one report (see the module)."""

    report = AnyTrait(None, help="The validation report of the document shown (a Report).")
    quiet = Bool(False, help="Show findings only at the fields in touched (a new message, before Validate).")
    touched = Set(help="Paths of the fields the person edited.")
    shown: Tuple = Tuple(help="The findings on the page.")
    type_name = Unicode("", help="The data type shown (its title).")
    mode = Unicode("", help="The mode shown (the title's second word).")

    def __init__(self, parts: Parts, area: ErrorArea) -> None:
        super().__init__()
        self._area = area
        self.title = parts.html("pgmx-title")
        self.badge = parts.html("pgmx-badge")
        self.consistency = parts.html("pgmx-consistency")
        self.summary = parts.html("pgmx-summary")

    @observe("report", "quiet", "touched")
    def _findings_changed(self, _change: dict[str, Any]) -> None:
        self._area.guard(self._render)()

    def _render(self) -> None:
        report: Report | None = self.report
        if report is None:
            return
        shown = shown_findings(report.findings, self.touched if self.quiet else None)
        badge = badge_html(report)
        if self.badge.value != badge:
            self.badge.value = badge
            self.badge._dom_classes = ("pgmx-badge", "pgmx-conforms" if report.conforms else "pgmx-nonconforming")
        consistency = consistency_html(shown)
        if self.consistency.value != consistency:
            self.consistency.value = consistency
        summary = summary_html(report, shown)
        if self.summary.value != summary:
            self.summary.value = summary
        self.shown = shown

    @observe("type_name", "mode")
    def _title_changed(self, _change: dict[str, Any]) -> None:
        if not self.type_name:
            return
        spec = data_type(self.type_name)
        title = f"<b>{esc(spec.title)}</b> {esc(MODE_WORDS.get(self.mode, ''))}"
        if self.title.value != title:
            self.title.value = title


class JsonView(HasTraits):
    """The JSON text of ``document``, and a Revert button while typed text does not parse."""

    document = Dict(help="The document shown; an object typed in the text becomes the document.")

    def __init__(self, chrome: FormContext, on_pending: Callable[[], None]) -> None:
        super().__init__()
        self._on_pending = on_pending
        self.editor = JsonEditor(chrome, self._typed, classes=("pgmx-json",))
        self.editor.text.rows = 18
        self.revert = OrderedButton(
            description="Revert to the document",
            tooltip="Throw the unparsed text away and show the document again",
            layout={"width": "auto", "display": "none"},
            _dom_classes=("pgmx-json-revert",),
        )
        chrome.click(self.revert, self.show_document)
        chrome.on_pending = self._pending_typed
        self.label = chrome.make(
            widgets.HTML, value="<b>JSON</b> (exactly what Save writes; edit it and leave the box to apply)"
        )

    @property
    def pending(self) -> str | None:
        """Text typed that does not parse (kept in the draft), or None."""
        return self.editor.pending

    def type_text(self, text: str) -> None:
        """Put text back in the box as the person typed it (a draft's unparsed text)."""
        self.editor.text.value = text

    @observe("document")
    def _document_changed(self, change: dict[str, Any]) -> None:
        if self.editor.pending is None:
            self.editor.set(change["new"])

    def forget_typed(self) -> None:
        """Drop text typed that does not parse (another document is coming)."""
        if self.editor.pending is not None:
            self.editor.set(self.document)
        self.revert.layout.display = "none"

    def show_document(self) -> None:
        """The text of the document again, whatever was typed."""
        self.editor.set(self.document)
        self.revert.layout.display = "none"
        self._on_pending()

    def _typed(self, value: Any) -> None:
        if not isinstance(value, dict):
            self.editor.reject("A message must be a JSON object; the form keeps the last object.")
            return
        self.revert.layout.display = "none"
        if value == self.document:
            self.editor.set(value)  # the same document, written as the view writes it
        else:
            self.document = value

    def _pending_typed(self) -> None:
        if self.editor.pending is not None:
            self.revert.layout.display = ""
        self._on_pending()


class Toolbar(HasTraits):
    """Undo, Redo, Validate, Reply, Open, Save, Download and Drafts, with the status line.

    Save asks before it replaces a file (the button turns into **Overwrite?**); Download makes
    its link from ``text()`` when clicked, and the link goes when ``document`` changes."""

    can_undo = Bool(False)
    can_redo = Bool(False)
    can_reply = Bool(False)
    status = Unicode("", help="The status line (HTML, user text escaped): what the last action did.")
    target = Unicode("", help="The file name Save uses without a name (<id>.json in the work folder).")
    document = Dict(help="The document the buttons act on (its change takes the Download link away).")

    def __init__(
        self,
        parts: Parts,
        area: ErrorArea,
        chrome: FormContext,
        *,
        work_folder: Any,
        save: Callable[[str | None, bool], Path],
        load: Callable[..., Sequence[Finding]],
        saved: Callable[[Path], object],
    ) -> None:
        super().__init__()
        self._area, self._save_document = area, save
        self._confirm: Path | None = None
        self.undo = parts.button(
            "↶ Undo", "pgmx-undo", "Go back one step: the edits of one field, a Mode switch, an Open, a Reply"
        )
        self.redo = parts.button("↷ Redo", "pgmx-redo", "Take the last undone step again")
        self.undo.disabled = self.redo.disabled = True
        self.validate = parts.button(
            "Validate", "pgmx-validate", "Show every finding, also at the fields not filled in yet"
        )
        self.reply = parts.button(
            "Reply", "pgmx-reply", "A Response to this Request in a new composer: ids, dialogue and turn copied"
        )
        self.reply.disabled = True
        self.files: WorkFolderFiles | None = None
        self.opener: OpenPanel | None = None
        if work_folder is None:
            # The name goes to the kernel once, when the box is left (Save waits for it: _ordered).
            self.save_path = chrome.make(
                OrderedText,
                placeholder="file.json",
                continuous_update=False,
                layout={"width": "260px"},
                _dom_classes=("pgmx-save-path",),
            )
            chrome.watch(self.save_path, lambda _text: self._disarm_save())
            self.save = parts.button(
                "Save",
                "pgmx-save",
                "Write the JSON below to a file on the server (empty name: <id>.json in the work folder)",
            )
            chrome.click(self.save, self._save_clicked)
            self.opener = OpenPanel(area, parts, load)
        else:
            # On a page served to others: names in the work folder only (the seam: _workfolder).
            self.files = WorkFolderFiles(
                work_folder,
                text=lambda: dump_json(self.document),
                load=load,
                name=lambda: self.target,
                saved=saved,
                area=area,
                parts=parts,
            )
        # The link is made when Download is clicked (the document as it is then) and goes at the
        # next edit: a keystroke never encodes the whole document, and a link is never behind.
        self.download_button = parts.button(
            "⬇ Download", "pgmx-download-button", "Make a link that saves the JSON below on your computer"
        )
        chrome.click(self.download_button, self._make_download)
        self.download = parts.html("pgmx-download")
        self.status_line = parts.html("pgmx-status")

    def row(self, verdict: VerdictView, drafts_toggle: widgets.Button, reply: bool) -> list[widgets.Widget]:
        """The toolbar's row: the verdict first, then the buttons, the status last."""
        tools: list[widgets.Widget] = [verdict.badge, verdict.consistency, self.undo, self.redo, self.validate]
        if reply:
            tools.append(self.reply)
        if self.opener is not None:
            tools += [self.opener.toggle, self.save_path, self.save]
        tools += [self.download_button, self.download, drafts_toggle, self.status_line]
        return tools

    @observe("can_undo", "can_redo", "can_reply")
    def _switches_changed(self, change: dict[str, Any]) -> None:
        button = {"can_undo": self.undo, "can_redo": self.redo, "can_reply": self.reply}[change["name"]]
        button.disabled = not change["new"]

    @observe("status")
    def _status_changed(self, change: dict[str, Any]) -> None:
        self.status_line.value = change["new"]

    @observe("document")
    def _document_changed(self, _change: dict[str, Any]) -> None:
        if self.download.value:
            self.download.value = ""

    @observe("target")
    def _target_changed(self, change: dict[str, Any]) -> None:
        if self.files is None:
            self.save_path.placeholder = f"{change['new']} in the work folder"
        else:
            self.files.name.placeholder = f"{change['new']} (in the work folder)"

    def forget_opened(self) -> None:
        """The Open panel's "Opened …" is about a document no longer shown."""
        if self.opener is not None and self.opener._built:
            self.opener.status.value = ""

    def _make_download(self) -> None:
        """The link that gives the browser exactly the bytes Save writes, as they are now."""
        self.download.value = download_html(dump_json(self.document), self.target)

    def _save_clicked(self) -> None:
        typed = self.save_path.value.strip()
        wanted = Path(os.path.abspath(Path(typed).expanduser())) if typed else None
        default = Path(os.path.abspath(default_work_dir() / self.target))
        confirmed = self._confirm is not None and self._confirm == (wanted or default)
        try:
            self._save_document(typed or None, confirmed)
        except FileExistsError:
            self._confirm = wanted or default
            self.save.description = "Overwrite?"
            self.save.button_style = "danger"
            self.status = f"<code>{esc(self._confirm)}</code> exists: click <b>Overwrite?</b> to replace it, or type another name."
            return
        except OSError as exc:  # a missing folder, a folder in the way, no permission: said, not raised
            self._disarm_save()
            hint = " Create the folder first." if isinstance(exc, FileNotFoundError) else ""
            self.status = f'<span style="color:#c62828">Not saved: {esc(exc)}.{hint}</span>'
            return
        self._disarm_save()

    def _disarm_save(self) -> None:
        self._confirm = None
        if self.save.description != "Save":
            self.save.description = "Save"
            self.save.button_style = ""
