"""What a MessageComposer shows around its form: the toolbar (verdict, Validate, Reply, Open,
Save, Download, Drafts), the findings at their fields, the summary, the expert view of the
automatic time and metadata, and the JSON view; refreshed after every new document.

A part of :class:`~pgm_explore.widgets._composer.MessageComposer` (see ``_composer_state``).
"""

from __future__ import annotations

import datetime as dt
from typing import Any

import ipywidgets as widgets

from pgm_explore._display import esc
from pgm_explore.spec import MODE_WORDS, simple_time_seconds
from pgm_explore.validation import Finding, Report
from pgm_explore.validation import validate as validate_document
from pgm_explore.widgets._base import style_widget
from pgm_explore.widgets._composer_form import EXPERT
from pgm_explore.widgets._composer_state import ComposerState
from pgm_explore.widgets._drafts import dump_json
from pgm_explore.widgets._filebar import DraftBar, OpenPanel, Parts, count, download_html
from pgm_explore.widgets._form import Field, JsonEditor
from pgm_explore.widgets._keys import UndoKeys
from pgm_explore.widgets._ordered import OrderedButton, OrderedText
from pgm_explore.widgets._verdict import badge_html, consistency_html, shown_findings, summary_html
from pgm_explore.widgets._workfolder import WorkFolderFiles

__all__ = ["ComposerView"]


class ComposerView(ComposerState):
    """The composer's toolbar, finding display and JSON view (mixed into MessageComposer)."""

    def _build_chrome(self, reply_button: bool) -> None:
        make = self._chrome.make  # shared layouts and styles: fewer widget models for the browser
        parts = Parts()
        self._title = parts.html("pgmx-title")
        self._badge = parts.html("pgmx-badge")
        self._consistency = parts.html("pgmx-consistency")
        self._reply = parts.button(
            "Reply", "pgmx-reply", "A Response to this Request in a new composer: ids, dialogue and turn copied"
        )
        self._chrome.click(self._reply, self._reply_clicked)
        self._files: WorkFolderFiles | None = None
        if self.work_folder is None:
            # The name goes to the kernel once, when the box is left (Save waits for it: _ordered).
            self._save_path = make(
                OrderedText,
                placeholder="file.json",
                continuous_update=False,
                layout={"width": "260px"},
                _dom_classes=("pgmx-save-path",),
            )
            self._chrome.watch(self._save_path, lambda _text: self._disarm_save())
            self._save = parts.button(
                "Save",
                "pgmx-save",
                "Write the JSON below to a file on the server (empty name: <id>.json in the work folder)",
            )
            self._chrome.click(self._save, self._save_clicked)
            self._opener = OpenPanel(self._area, parts, self.load)
        else:
            # On a page served to others: names in the work folder only (the seam: _workfolder).
            self._files = WorkFolderFiles(
                self.work_folder,
                text=lambda: dump_json(self.value),
                load=self.load,
                name=lambda: self._derived_target().name,
                saved=lambda _path: self.validate_now(),
                area=self._area,
                parts=parts,
            )
        # The link is made when Download is clicked (the document as it is then) and goes at the
        # next edit: a keystroke never encodes the whole document, and a link is never behind.
        self._download_button = parts.button(
            "⬇ Download", "pgmx-download-button", "Make a link that saves the JSON below on your computer"
        )
        self._chrome.click(self._download_button, self._make_download)
        self._download = parts.html("pgmx-download")
        self._validate = parts.button(
            "Validate", "pgmx-validate", "Show every finding, also at the fields not filled in yet"
        )
        self._chrome.click(self._validate, self.validate_now)
        self._status = parts.html("pgmx-status")
        self._drafts_bar = DraftBar(
            self._area,
            parts,
            "message",
            lambda: self.draft_dir,
            self._open_draft,
            self.start_fresh,
        )
        self._undo_button = parts.button(
            "↶ Undo", "pgmx-undo", "Go back one step: the edits of one field, a Mode switch, an Open"
        )
        self._chrome.click(self._undo_button, self.undo)
        self._redo_button = parts.button("↷ Redo", "pgmx-redo", "Take the last undone step again")
        self._chrome.click(self._redo_button, self.redo)
        self._undo_button.disabled = self._redo_button.disabled = True
        tools: list[widgets.Widget] = [
            self._badge,
            self._consistency,
            self._undo_button,
            self._redo_button,
            self._validate,
        ]
        if reply_button:
            tools.append(self._reply)
        if self._files is None:
            tools += [self._opener.toggle, self._save_path, self._save]
        tools += [self._download_button, self._download, self._drafts_bar.toggle, self._status]
        toolbar = make(widgets.HBox, {"align_items": "center", "flex_flow": "row wrap"}, children=tools)

        self._form_box = make(widgets.VBox, _dom_classes=("pgmx-form",))

        def checkbox(description: str, css: str, tooltip: str | None = None) -> widgets.Checkbox:
            return make(
                widgets.Checkbox,
                value=False,
                description=description,
                tooltip=tooltip,
                indent=False,
                layout={"width": "auto"},
                _dom_classes=(css,),
            )

        self._expert_toggle = checkbox("Expert view: time and Data Exchange Metadata", "pgmx-expert")
        self._chrome.watch(self._expert_toggle, self._expert_toggled)
        self._auto_html = make(widgets.HTML, _dom_classes=("pgmx-auto",))
        self._auto_time = checkbox(
            "time: automatic",
            "pgmx-auto-time",
            "Stamped now when the message is made; its SimpleTimeID follows the id",
        )
        self._chrome.watch(self._auto_time, lambda on: self._set_auto("time", bool(on)))
        self._now = make(OrderedButton, description="Now", tooltip="Set the time to now", _dom_classes=("pgmx-now",))
        self._chrome.click(self._now, self.stamp_now)
        self._auto_dem = checkbox(
            "metadata: automatic",
            "pgmx-auto-dem",
            "DataID, DataType and Source (the sending AI Module) follow the id, type and mode",
        )
        self._chrome.watch(self._auto_dem, lambda on: self._set_auto("dem", bool(on)))
        self._expert_fields = make(widgets.VBox)
        self._expert_box = widgets.VBox(
            [make(widgets.HBox, children=[self._auto_time, self._now, self._auto_dem]), self._expert_fields],
            layout={"display": "none"},
            _dom_classes=("pgmx-expert-view",),
        )
        self._summary = make(widgets.HTML, _dom_classes=("pgmx-summary",))
        self._json = JsonEditor(self._chrome, self._json_typed, classes=("pgmx-json",))
        self._json.text.rows = 18
        self._revert = OrderedButton(
            description="Revert to the document",
            tooltip="Throw the unparsed text away and show the document again",
            layout={"width": "auto", "display": "none"},
            _dom_classes=("pgmx-json-revert",),
        )
        self._chrome.click(self._revert, self._revert_json)
        self._reply_area = make(widgets.VBox, _dom_classes=("pgmx-replies",))
        self.children = [
            style_widget(make),
            self._title,
            toolbar,
            self._area.box,
            self._drafts_bar.box,
            self._opener.panel if self._files is None else self._files,
            self._drafts_bar.panel,
            self._form_box,
            make(widgets.HBox, {"align_items": "center"}, children=[self._expert_toggle, self._auto_html]),
            self._expert_box,
            self._summary,
            make(widgets.HTML, value="<b>JSON</b> (exactly what Save writes; edit it and leave the box to apply)"),
            self._json.text,
            self._json.error,
            self._revert,
            self._reply_area,
            make(
                UndoKeys,
                _dom_classes=("pgmx-hidden",),
                undo=self._area.guard(self.undo),
                redo=self._area.guard(self.redo),
            ),
        ]

    # -- refresh after a new document -------------------------------------------------------------

    def _refresh(self) -> None:
        doc = self.value
        report = validate_document(doc)
        self._report = report
        self.conforms = report.conforms
        self.findings = list(report.findings)
        shown = self._shown(report.findings)
        self._show_findings(shown)
        self._render_header(doc, report, shown)
        if self._json.pending is None:
            self._json.set(doc)
        self._render_auto(doc, report, shown)
        if self._download.value:
            self._download.value = ""
        if self._dirty:
            self._autosave()

    def _shown(self, findings: tuple[Finding, ...]) -> tuple[Finding, ...]:
        return shown_findings(findings, self._touched if self._quiet else None)

    def _locate(self, path: tuple[str | int, ...]) -> Field:
        assert self._ctx is not None
        fields = self._ctx.fields
        for depth in range(len(path), -1, -1):
            field = fields.get(path[:depth])
            if field is not None:
                return field
        raise AssertionError("the form root is always registered")

    def _show_findings(self, findings: tuple[Finding, ...]) -> None:
        """Mark each finding at the deepest field holding its path; clear marks that went."""
        assert self._ctx is not None
        placed: dict[Field, list[Finding]] = {}
        for finding in findings:
            placed.setdefault(self._locate(finding.path), []).append(finding)
        fields = self._ctx.fields
        for field in self._marked - placed.keys():
            if fields.get(field.path) is field:
                field.show(())
        for field, found in placed.items():
            field.show(tuple(found))
        self._marked = set(placed)

    def _render_header(self, doc: dict[str, Any], report: Report, visible: tuple[Finding, ...]) -> None:
        spec = self._spec
        mode = doc.get("Mode")
        shown = mode if spec.has_modes and mode in spec.modes else ""
        if self.mode != shown:
            self._internal += 1
            try:
                self.mode = shown
            finally:
                self._internal -= 1
        word = MODE_WORDS.get(shown, "")
        title = f"<b>{esc(spec.title)}</b> {esc(word)}"
        if self._title.value != title:
            self._title.value = title
        ok = report.conforms
        badge = badge_html(report)
        if self._badge.value != badge:
            self._badge.value = badge
            self._badge._dom_classes = ("pgmx-badge", "pgmx-conforms" if ok else "pgmx-nonconforming")
        consistency = consistency_html(visible)
        if self._consistency.value != consistency:
            self._consistency.value = consistency
        disabled = shown != "RQ"
        if self._reply.disabled != disabled:
            self._reply.disabled = disabled
        if self._files is None:
            placeholder = f"{self._derived_target().name} in the work folder"
            if self._save_path.placeholder != placeholder:
                self._save_path.placeholder = placeholder
        elif self._files.name.placeholder != (named := f"{self._derived_target().name} (in the work folder)"):
            self._files.name.placeholder = named
        summary = summary_html(report, visible)
        if self._summary.value != summary:
            self._summary.value = summary

    def _render_auto(self, doc: dict[str, Any], report: Report, shown: tuple[Finding, ...]) -> None:
        """One line on the automatic parts, so that they need no room until asked for."""
        spec = self._spec
        parts = []
        clock = simple_time_seconds(doc.get(spec.time_field))
        if clock is not None and clock[0]:
            try:
                when = dt.datetime.fromtimestamp(clock[1], tz=dt.UTC).strftime("%Y-%m-%d %H:%M:%S UTC")
            except (OverflowError, OSError, ValueError):  # a time past year 9999 is still a time
                when = f"{clock[1]:.3f} s after 1970"
            parts.append(f"{spec.time_field} {when}{' (automatic)' if self._auto['time'] else ''}")
        dem = doc.get(EXPERT)
        source = dem.get("Source") if isinstance(dem, dict) else None
        if isinstance(source, list) and source and isinstance(source[0], dict):
            sender = source[0].get("AIMID", source[0].get("ImplementerAIMID", "?"))
            parts.append(f"sender {sender}{' (automatic)' if self._auto['dem'] else ''}")
        hidden = [f for f in shown if f.path[:1] in ((spec.time_field,), (EXPERT,))]
        text = esc(" · ".join(parts))
        if hidden and not self._expert:
            text += (
                f' <span style="color:#c62828">{esc(count(len(hidden), "finding"))} here: open the expert view</span>'
            )
        if self._auto_html.value != text:
            self._auto_html.value = text
        with self._chrome.writing():
            self._auto_time.value = self._auto["time"]
            self._auto_dem.value = self._auto["dem"]

    # -- chrome callbacks ------------------------------------------------------------------------

    def _show_expert_fields(self) -> None:
        # The expert view's fields are made when it is first opened (fewer widgets to send).
        if self._expert and self._form is not None and not self._expert_fields.children:
            expert = [self._spec.time_field, EXPERT]
            self._expert_fields.children = [self._form.members[name].box for name in expert]

    def _expert_toggled(self, on: bool) -> None:
        self._expert = bool(on)
        self._show_expert_fields()
        self._expert_box.layout.display = "" if on else "none"
        if self._report is not None:
            self._render_auto(self.value, self._report, self._shown(self._report.findings))

    def _set_auto(self, part: str, on: bool) -> None:
        self._auto[part] = on
        if on and part == "time":
            self.stamp_now()
        elif on:
            self._dirty = True
            self._follow_id()
            self._commit()
        if self._report is not None:
            self._render_auto(self.value, self._report, self._shown(self._report.findings))

    def _json_typed(self, value: Any) -> None:
        if not isinstance(value, dict):
            self._json.reject("A message must be a JSON object; the form keeps the last object.")
            return
        self._revert.layout.display = "none"
        self._dirty = True
        self._quiet = False  # a whole document typed: every finding is about what was typed
        if value == self.value:
            self._json.set(value)
            self._refresh()
        else:
            self.value = value

    def _pending_typed(self) -> None:
        """Text that does not parse was typed: keep it in the draft, offer to revert."""
        if self._json.pending is not None:
            self._revert.layout.display = ""
        self._dirty = True
        self._autosave()

    def _revert_json(self) -> None:
        self._json.set(self.value)
        self._revert.layout.display = "none"
        self._autosave()

    def _make_download(self) -> None:
        """The link that gives the browser exactly the bytes Save writes, as they are now."""
        self._download.value = download_html(dump_json(self.value), self._derived_target().name)

    def _reply_clicked(self) -> None:
        reply = self.reply()
        self.last_reply = reply
        if self.on_reply is not None:
            self.on_reply(reply)
        else:
            self._reply_area.children = [widgets.HTML("<b>Reply</b>"), reply]
