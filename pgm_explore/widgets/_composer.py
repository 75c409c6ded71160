"""MessageComposer: one form for any PGM-AUA message, validated at every edit."""

from __future__ import annotations

import copy
import datetime as dt
import uuid
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import ipywidgets as widgets
from traitlets import Bool, Dict, List, TraitError, Unicode, observe, validate

from pgm_explore._display import esc
from pgm_explore.dialogue import simple_time_seconds
from pgm_explore.spec import DATA_TYPES, DataType, data_type
from pgm_explore.validation import Finding, InputProblem, Report, json_path, loads
from pgm_explore.validation import validate as validate_document
from pgm_explore.widgets._base import ErrorArea, style_widget
from pgm_explore.widgets._composer_files import ComposerFiles
from pgm_explore.widgets._documents import (
    REPLY_COPIED,
    auto_dem,
    auto_time,
    mode_required,
    reply_document,
    skeleton,
    type_of,
)
from pgm_explore.widgets._drafts import (
    OpenedDraft,
    draft_path,
    dump_json,
    find_draft,
    list_drafts,
    local_time,
    open_draft,
    read_draft,
    write_draft,
)
from pgm_explore.widgets._fields import default_value
from pgm_explore.widgets._filebar import DraftBar, OpenPanel, Parts, count, download_html
from pgm_explore.widgets._form import ArrayField, Field, FormContext, JsonEditor, ObjectField, UnionField
from pgm_explore.widgets._ordered import OrderedButton, OrderedText
from pgm_explore.widgets._verdict import badge_html, consistency_html, shown_findings, summary_html

__all__ = ["MessageComposer", "read_document"]

DATA_TYPE_NAMES = frozenset(dt.name for dt in DATA_TYPES)

_EXPERT = "DataXMData"


def read_document(path: str | Path) -> dict[str, Any]:
    """One message from a ``.json`` file, read as strictly as the validator reads."""
    try:
        document = loads(Path(path).read_bytes())
    except InputProblem as problem:
        raise ValueError(f"{path}: {problem.finding.message}") from None
    if not isinstance(document, dict):
        kind = (
            "an array of messages (load it into a DialogueBuilder)" if isinstance(document, list) else "not an object"
        )
        raise ValueError(f"{path} holds {kind}, not one message")
    return document


def _in_order(doc: dict[str, Any], additions: Mapping[str, Any], order: list[str]) -> dict[str, Any]:
    """``doc`` with ``additions`` placed where the schema order puts them."""
    if not additions:
        return doc
    rank = {name: i for i, name in enumerate(order)}
    out: dict[str, Any] = {}
    pending = sorted(additions, key=lambda k: rank.get(k, len(rank)))
    for key, value in doc.items():
        while pending and rank.get(pending[0], len(rank)) < rank.get(key, len(rank)):
            name = pending.pop(0)
            out[name] = additions[name]
        out[key] = value
    for name in pending:
        out[name] = additions[name]
    return out


class MessageComposer(ComposerFiles, widgets.VBox):
    """Compose one PGM-AUA message (any type and mode) in a form built from its schema.

    ``value`` is the document exactly as :meth:`save` writes it, and the JSON view shows
    it; ``findings``, ``conforms`` and :attr:`report` are its validation after the last
    edit. The form, the JSON view and ``value`` stay in step whichever is edited.

    Drafts: every edit is written to the draft ``draft_name`` in the drafts folder
    (``draft_dir``, else ``$PGM_EXPLORE_DRAFTS``, else ``~/.pgm-explore/drafts``). Give a
    notebook's composer a stable name (``draft_name="02-pc-prompt"``): running the cell
    again, after a kernel restart too, restores the last edit (the draft wins over
    ``document``) with a "Restored draft from <time>" notice and a Start fresh button
    (:meth:`start_fresh`). A damaged draft is kept aside, never blocks the composer.
    ``draft_dir=False`` turns drafts off. :meth:`save` without a path writes
    ``<id>.json`` in the work folder (``$PGM_EXPLORE_WORK``, else ``~/.pgm-explore/work``).

    >>> c = MessageComposer("BKN-DAC", "RQ", draft_dir=False)
    >>> c.value["Header"], c.value["Mode"], c.mode
    ('PGM-KDA-V1.0', 'RQ', 'RQ')
    >>> c.set(["TurnIndex"], 3); c.get(["TurnIndex"])
    3
    """

    value = Dict(help="The document, exactly as it will be saved.")
    mode = Unicode("", help='"RQ" or "RS"; "" for PC Prompt (or a document whose Mode is not valid).')
    type_name = Unicode("", help="The data type being composed (PC Prompt, BKN-PRC, BKN-DAC, BKN-PAL).")
    conforms = Bool(False, help="The validator's verdict on value.")
    findings = List(help="Findings (pgm_explore.validation.Finding) on value, in the validator's order.")

    def __init__(
        self,
        type_name: str,
        mode: str | None = None,
        *,
        document: Mapping[str, Any] | None = None,
        draft_dir: str | Path | bool | None = None,
        draft_name: str | None = None,
        reply_button: bool = True,
        **kwargs: Any,
    ) -> None:
        spec = data_type(type_name)
        super().__init__(**kwargs)
        self._spec: DataType = spec
        self._area = ErrorArea()
        self._report: Report | None = None
        self._aside: dict[str, dict[str, Any]] = {}
        self._auto = {"time": True, "dem": True}
        self._expert = False
        self._dirty = False
        self._from_form = False
        self._internal = 0
        self._form: ObjectField | None = None
        self._ctx: FormContext | None = None
        self._marked: set[Field] = set()
        # Findings are shown at the fields the person has touched, until Validate or Save
        # shows them all: a new form does not greet anyone with warnings for what is not
        # filled in yet. ``report`` is always complete.
        self._quiet = False
        self._touched: set[tuple[str | int, ...]] = set()
        self._keep_quiet = 0
        self._written: dict[Path, str] = {}
        self._confirm: Path | None = None
        self._closed = False
        # draft_dir=False: no autosave (benchmarks, doctests, composers kept only in memory).
        self.autosave = draft_dir is not False
        self.draft_dir: Path | None = Path(draft_dir) if isinstance(draft_dir, str | Path) else None
        self.last_reply: MessageComposer | None = None
        self.on_reply: Callable[[MessageComposer], None] | None = None
        """Called with the new composer when the Reply button is pressed (default: shown below)."""
        self._chrome = FormContext(spec, lambda _field: None, self._area.guard)
        self._chrome.on_pending = self._pending_typed
        self._build_chrome(reply_button)
        self.add_class("pgmx-composer")

        opened = OpenedDraft(None)
        if draft_name is not None and self.autosave:
            opened = open_draft(str(draft_name), self.draft_dir)
        if opened.content is not None:
            self.draft_name = str(draft_name)
            problem = self._restore(opened.content)
            if problem is None:
                when = local_time(opened.saved) if opened.saved is not None else "an earlier session"
                self._drafts_bar.say(
                    f"Restored draft from {esc(when)} (“{esc(self.draft_name)}”): your last edit is back.", fresh=True
                )
                self._claim()
                return
            kept = self._set_damaged_aside()
            opened = OpenedDraft(None, None, f"The draft “{self.draft_name}” could not be restored ({problem}){kept}.")
        doc = copy.deepcopy(dict(document)) if document is not None else skeleton(spec.name, mode)
        self.draft_name = draft_name or self._default_draft_name(type_of(doc) or spec, doc)
        self._quiet = document is None
        self._keep_quiet += 1
        try:
            self.value = doc
        finally:
            self._keep_quiet -= 1
        if opened.notice:
            self._drafts_bar.say(esc(opened.notice) + " This composer starts without it.")
        self._claim()

    # -- construction ---------------------------------------------------------------------------

    @classmethod
    def from_document(cls, document: Mapping[str, Any], **kwargs: Any) -> MessageComposer:
        """A composer holding ``document``; its Header says the type (``ValueError`` if unknown)."""
        spec = type_of(document)
        if spec is None:
            raise ValueError(f"the Header {document.get('Header')!r} names no PGM-AUA V1.0 data type")
        mode = document.get("Mode")
        return cls(spec.name, mode if mode in spec.modes else None, document=document, **kwargs)

    @classmethod
    def from_file(cls, path: str | Path, **kwargs: Any) -> MessageComposer:
        """A composer holding the message of a ``.json`` file."""
        return cls.from_document(read_document(path), **kwargs)

    @classmethod
    def restore(cls, draft_name: str, draft_dir: str | Path | None = None, **kwargs: Any) -> MessageComposer:
        """The composer saved as draft ``draft_name`` (``FileNotFoundError`` if there is none)."""
        path = find_draft(draft_name, draft_dir)
        if path is None:
            raise FileNotFoundError(f"there is no draft {draft_name!r} in {draft_path(draft_name, draft_dir).parent}")
        stored = read_draft(path).get("type")
        type_name = stored if isinstance(stored, str) and stored in DATA_TYPE_NAMES else "PC Prompt"
        return cls(type_name, draft_name=draft_name, draft_dir=draft_dir, **kwargs)

    @staticmethod
    def drafts(draft_dir: str | Path | None = None) -> list[str]:
        """Names of the drafts in the drafts folder, most recent first."""
        return list_drafts(draft_dir)

    @staticmethod
    def _default_draft_name(spec: DataType, doc: Mapping[str, Any]) -> str:
        ident = doc.get(spec.id_field)
        return f"{spec.name.lower().replace(' ', '-')}-{ident if isinstance(ident, str) and ident else uuid.uuid4().hex[:8]}"

    def _auto_flags(self, spec: DataType, doc: Mapping[str, Any]) -> dict[str, bool]:
        """Which parts follow the message: a DEM equal to the one made for its id, type and
        mode; a time whose SimpleTimeID is ``st-`` + the id (the examples' convention)."""
        ident = doc.get(spec.id_field)
        mode = doc.get("Mode") if isinstance(doc.get("Mode"), str) else None
        time = doc.get(spec.time_field)
        return {
            "time": isinstance(time, dict) and isinstance(ident, str) and time.get("SimpleTimeID") == f"st-{ident}",
            "dem": doc.get(_EXPERT) == auto_dem(spec.name, mode, ident),
        }

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
        self._download = parts.html("pgmx-download")
        self._validate = parts.button(
            "Validate", "pgmx-validate", "Show every finding, also at the fields not filled in yet"
        )
        self._chrome.click(self._validate, self.validate_now)
        self._status = parts.html("pgmx-status")
        self._opener = OpenPanel(self._area, parts, self.load)
        self._drafts_bar = DraftBar(
            self._area,
            parts,
            "message",
            lambda: self.draft_dir,
            self._open_draft,
            self.start_fresh,
        )
        tools: list[widgets.Widget] = [self._badge, self._consistency, self._validate]
        if reply_button:
            tools.append(self._reply)
        tools += [
            self._opener.toggle,
            self._save_path,
            self._save,
            self._download,
            self._drafts_bar.toggle,
            self._status,
        ]
        toolbar = make(widgets.HBox, {"align_items": "center", "flex_flow": "row wrap"}, children=tools)

        self._form_box = make(widgets.VBox, _dom_classes=("pgmx-form",))
        self._expert_toggle = make(
            widgets.Checkbox,
            value=False,
            description="Expert view: time and Data Exchange Metadata",
            indent=False,
            layout={"width": "auto"},
            _dom_classes=("pgmx-expert",),
        )
        self._chrome.watch(self._expert_toggle, self._expert_toggled)
        self._auto_html = make(widgets.HTML, _dom_classes=("pgmx-auto",))
        self._auto_time = make(
            widgets.Checkbox,
            description="time: automatic",
            tooltip="Stamped now when the message is made; its SimpleTimeID follows the id",
            indent=False,
            layout={"width": "auto"},
            _dom_classes=("pgmx-auto-time",),
        )
        self._chrome.watch(self._auto_time, lambda on: self._set_auto("time", bool(on)))
        self._now = make(OrderedButton, description="Now", tooltip="Set the time to now", _dom_classes=("pgmx-now",))
        self._chrome.click(self._now, self.stamp_now)
        self._auto_dem = make(
            widgets.Checkbox,
            description="metadata: automatic",
            tooltip="DataID, DataType and Source (the sending AI Module) follow the id, type and mode",
            indent=False,
            layout={"width": "auto"},
            _dom_classes=("pgmx-auto-dem",),
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
            self._opener.panel,
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
        ]

    # -- public API -------------------------------------------------------------------------------

    @property
    def report(self) -> Report | None:
        """The validation report of ``value`` after the last edit."""
        return self._report

    @property
    def errors(self) -> list[BaseException]:
        """Exceptions raised in callbacks (each is also shown in the widget, class pgmx-error)."""
        return self._area.errors

    @property
    def spec(self) -> DataType:
        return self._spec

    @property
    def aside(self) -> dict[str, dict[str, Any]]:
        """The other mode's values kept aside by the Mode switch, by mode (a copy)."""
        return copy.deepcopy(self._aside)

    @property
    def draft_file(self) -> Path | None:
        return draft_path(self.draft_name, self.draft_dir) if self.autosave else None

    def field(self, path: tuple[str | int, ...] | list[str | int]) -> Field:
        """The form field at ``path`` (it must have been built: its parents hold a value)."""
        assert self._ctx is not None
        return self._ctx.fields[tuple(path)]

    def set(self, path: tuple[str | int, ...] | list[str | int], value: Any) -> None:
        """Give the property at ``path`` a value through its widget, as a user would.

        Absent parents are switched on and an index one past the end of an array adds an
        item. A value the widget cannot show (a string for TurnIndex, a number out of bounds)
        is typed into the field's raw JSON editor instead. A name the schema does not list
        goes to the object's "Other properties".
        """
        path = tuple(path)
        if not path:
            raise KeyError("set() needs a path; assign value to replace the whole document")
        assert self._form is not None
        parent = self._form.locate(path[:-1], create=True)
        last = path[-1]
        if isinstance(parent, UnionField):
            parent = parent.alternative(last)
        if isinstance(parent, ObjectField):
            if not isinstance(last, str):
                raise KeyError(f"{json_path(path)}: an object has no index {last!r}")
            member = parent.member(last, create=True)
            if member is None:
                parent.enter_member(last, value)
            else:
                member.enter(value)
            return
        if isinstance(parent, ArrayField):
            if not isinstance(last, int) or not 0 <= last <= len(parent.items) or parent.raw:
                raise IndexError(f"{json_path(path)}: no such item (the array has {len(parent.items)})")
            if last == len(parent.items):
                parent.add(value)
            else:
                parent.items[last].enter(value)
            return
        raise KeyError(f"{json_path(path[:-1])} holds no object or array in the form")

    def get(self, path: tuple[str | int, ...] | list[str | int]) -> Any:
        """The value the form holds at ``path`` (``KeyError`` / ``IndexError`` if absent)."""
        path = tuple(path)
        assert self._form is not None
        node = self._form.locate(path[:-1])
        if not path:
            return node.get()
        last = path[-1]
        if isinstance(node, UnionField):
            node = node.alternative()
        if isinstance(node, ObjectField):
            member = node.members.get(last) if isinstance(last, str) else None
            if member is not None and member.present and node.present:
                return member.get()
            if member is None and last in node.extras:
                return copy.deepcopy(node.extras[last])
            raise KeyError(json_path(path))
        if isinstance(node, ArrayField) and isinstance(last, int) and not node.raw:
            return node.items[last].get()
        raise KeyError(json_path(path))

    def remove(self, path: tuple[str | int, ...] | list[str | int]) -> None:
        """Switch the property at ``path`` off (absent), or remove an array item."""
        path = tuple(path)
        if not path:
            raise KeyError("remove() needs a path")
        assert self._form is not None
        parent = self._form.locate(path[:-1])
        if isinstance(parent, UnionField):
            parent = parent.alternative()
        last = path[-1]
        if isinstance(parent, ArrayField) and isinstance(last, int):
            if not 0 <= last < len(parent.items):
                raise IndexError(json_path(path))
            parent.remove_item(last)
        elif isinstance(parent, ObjectField) and isinstance(last, str):
            member = parent.members.get(last)
            if member is not None:
                member.switch(False)
            else:
                parent.remove_extra(last)
        else:
            raise KeyError(json_path(path))

    def load(self, source: Mapping[str, Any] | str | Path) -> None:
        """Show another document: a dict or a ``.json`` file. A Header of another type
        rebuilds the form for that type; values kept aside by the Mode switch are dropped."""
        doc = read_document(source) if isinstance(source, str | Path) else copy.deepcopy(dict(source))
        if self.autosave and self._dirty:
            # What was being composed stays one step back, in case the load was a slip.
            write_draft(draft_path(f"{self.draft_name}-previous", self.draft_dir), self._draft())
        self._aside = {}
        self._json.pending = None
        self._revert.layout.display = "none"
        self._dirty = True
        if not self._keep_quiet:
            self._quiet = False
        if doc == self.value:
            self._update(doc)  # no trait change to announce it, but the form must show it again
        else:
            self.value = doc

    def reply(self) -> MessageComposer:
        """A new composer with the Response skeleton of this Request (``ValueError`` otherwise)."""
        doc = reply_document(self.value)
        draft_dir: Any = self.draft_dir if self.autosave else False
        reply = MessageComposer(self._spec.name, "RS", document=doc, draft_dir=draft_dir)
        reply._start_quiet()
        return reply

    def _start_quiet(self) -> None:
        """Findings only at the fields touched from now on (a new message, not one opened)."""
        self._quiet, self._touched = True, set()
        if self._report is not None:
            self._area.guard(self._refresh)()

    def _load_new(self, document: Mapping[str, Any]) -> None:
        """Load a new message made for the person (Reply, New turn, another type): quiet."""
        self._quiet, self._touched = True, set()
        self._keep_quiet += 1
        try:
            self.load(document)
        finally:
            self._keep_quiet -= 1

    def validate_now(self) -> Report:
        """Show every finding of the document, also at the fields not touched yet (the
        Validate button); returns the report."""
        self._quiet = False
        self._refresh()
        assert self._report is not None
        return self._report

    def switch_type(self, type_name: str, mode: str | None = None) -> None:
        """Start a new message of another type, keeping the session and dialogue context."""
        spec = data_type(type_name)
        current = self.value.get("Mode")
        if spec.has_modes and mode is None:
            mode = current if current in spec.modes else spec.modes[0]
        context = {k: v for k, v in self.value.items() if k in (*REPLY_COPIED, "SessionID")}
        self._load_new(skeleton(spec.name, mode if spec.has_modes else None, context=context))

    def stamp_now(self) -> None:
        """Set the message's time to now (SimpleTimeID ``st-`` + id), as the Now button does."""
        assert self._form is not None and self._ctx is not None
        ident = self.value.get(self._spec.id_field)
        member = self._form.members[self._spec.time_field]
        with self._ctx.writing():
            if not member.present:
                member.switch(True)
            member.put(auto_time(ident if isinstance(ident, str) else "message"))
        self._dirty = True
        self._commit()

    def clear_errors(self) -> None:
        self._area.clear()

    def close(self) -> None:
        """Close the widget; it no longer counts as a holder of its draft name."""
        self._closed = True
        super().close()

    # -- traits --------------------------------------------------------------------------------

    @validate("mode")
    def _valid_mode(self, proposal: dict[str, Any]) -> str:
        mode = proposal["value"]
        if self._internal:
            return str(mode)
        allowed = self._spec.modes if self._spec.has_modes else ("",)
        if mode not in allowed:
            raise TraitError(f"{self._spec.name} has mode {' or '.join(map(repr, allowed))}, not {mode!r}")
        return str(mode)

    @observe("mode")
    def _mode_set(self, change: dict[str, Any]) -> None:
        if self._internal or self._ctx is None or not self._spec.has_modes:
            return
        self._area.guard(self._ctx.fields[("Mode",)].enter)(change["new"])

    @validate("type_name")
    def _valid_type(self, proposal: dict[str, Any]) -> str:
        try:
            return data_type(proposal["value"]).name
        except ValueError as exc:
            raise TraitError(str(exc)) from None

    @observe("type_name")
    def _type_set(self, change: dict[str, Any]) -> None:
        if not self._internal and change["old"]:
            self._area.guard(self.switch_type)(change["new"])

    @observe("value")
    def _value_changed(self, change: dict[str, Any]) -> None:
        # The one place where the composer updates: a new document (from the form, the JSON
        # view, load() or an assignment) is validated and shown.
        self._area.guard(self._update)(change["new"])

    def _update(self, doc: dict[str, Any]) -> None:
        if not self._from_form and not self._keep_quiet:
            self._quiet = False  # a document from outside: every finding is news
        if not self._from_form:
            # A document from outside the form (load, the JSON view, an assignment): the
            # automatic parts stay automatic only where they still match what they would be.
            self._auto = self._auto_flags(type_of(doc) or self._spec, doc)
            self._show_document(doc)
        self._refresh()

    # -- the form -------------------------------------------------------------------------------

    def _build_form(self, spec: DataType) -> None:
        if self._form is not None and self._ctx is not None:
            self._form.dispose()
            self._ctx.close()
        ctx = FormContext(spec, self._area.guard(self._form_edited), self._area.guard, shared=self._chrome)
        ctx.on_pending = self._pending_typed
        root = ObjectField(ctx, (), spec.schema, spec.schema, headless=True)
        root.build()
        expert = [spec.time_field, _EXPERT]
        root.place([name for name in root.members if name not in expert])
        self._spec, self._ctx, self._form = spec, ctx, root
        self._expert_fields.children = []
        self._chrome.spec = spec
        self._marked = set()
        self._internal += 1
        try:
            self.type_name = spec.name
        finally:
            self._internal -= 1

    def _show_document(self, doc: dict[str, Any]) -> None:
        spec = type_of(doc) or self._spec
        if self._form is None or spec is not self._spec:
            self._build_form(spec)
        assert self._ctx is not None and self._form is not None
        with self._ctx.writing():
            self._form.put(doc)
        mode = doc.get("Mode")
        self._mode_visibility(mode if mode in spec.modes else None)
        # Shown once the mode is known: the widgets of the other mode's properties are never made.
        if self._form_box.children != (self._form.box,):
            self._form_box.children = [self._form.box]
        self._show_expert_fields()

    def _mode_visibility(self, mode: str | None) -> None:
        """Only the properties of the shown mode are on screen; the other mode's appear only
        while present (a loaded document may carry them: the finding is then at the field)."""
        assert self._form is not None
        for other in self._spec.modes:
            for name in self._spec.mode_properties(other):
                member = self._form.members.get(name)
                if member is not None:
                    member.conditional = mode is not None and other != mode
        self._form._layout()

    def _form_edited(self, field: Field) -> None:
        self._dirty = True
        self._touched.add(field.path)
        spec = self._spec
        assert self._form is not None
        path = field.path
        if path == ("Mode",):
            new = field.get()
            if isinstance(new, str) and new in spec.modes:
                self._switch_mode(new)
                return
        if path[:1] == (spec.time_field,):
            self._auto["time"] = False
        if path[:1] == (_EXPERT,):
            self._auto["dem"] = False
        if path == (spec.id_field,):
            self._follow_id()
        self._commit()

    def _commit(self) -> None:
        assert self._form is not None
        doc = self._form.get()
        self._from_form = True
        try:
            self.value = doc
        finally:
            self._from_form = False

    def _follow_id(self) -> None:
        """Keep the automatic parts in step with the id (and the mode, for the sender)."""
        assert self._form is not None and self._ctx is not None
        spec = self._spec
        doc = self._form.get()
        ident = doc.get(spec.id_field)
        with self._ctx.writing():
            if self._auto["dem"] and _EXPERT in doc:
                self._form.members[_EXPERT].put(auto_dem(spec.name, doc.get("Mode"), ident))
            time = doc.get(spec.time_field)
            if self._auto["time"] and isinstance(time, dict) and isinstance(ident, str):
                self._form.members[spec.time_field].put({**time, "SimpleTimeID": f"st-{ident}"})

    def _switch_mode(self, new: str) -> None:
        """RQ <-> RS: the old mode's values go aside (kept, saved in the draft) and the new
        mode's come back, or its required properties appear with defaults."""
        assert self._form is not None and self._ctx is not None
        spec = self._spec
        old = self.value.get("Mode")
        doc = self._form.get()
        additions: dict[str, Any] = {}
        if old != new:
            if old in spec.modes:
                kept = {k: doc.pop(k) for k in spec.mode_properties(old) if k in doc}
                self._aside[old] = kept
            additions = {k: v for k, v in self._aside.pop(new, {}).items() if k not in doc}
        doc["Mode"] = new
        for name in mode_required(spec, new):
            if name not in doc and name not in additions:
                additions[name] = default_value(spec.schema["properties"][name], spec.schema)
        doc = _in_order(doc, additions, list(spec.schema["properties"]))
        if self._auto["dem"] and _EXPERT in doc:
            doc[_EXPERT] = auto_dem(spec.name, new, doc.get(spec.id_field))
        with self._ctx.writing():
            self._form.put(doc)
        self._mode_visibility(new)
        self._commit()

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
        link = download_html(dump_json(doc), self._derived_target().name)
        if self._download.value != link:
            self._download.value = link
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
        word = {"RQ": "Request", "RS": "Response"}.get(shown, "")
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
        placeholder = f"{self._derived_target().name} in the work folder"
        if self._save_path.placeholder != placeholder:
            self._save_path.placeholder = placeholder
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
        dem = doc.get(_EXPERT)
        source = dem.get("Source") if isinstance(dem, dict) else None
        if isinstance(source, list) and source and isinstance(source[0], dict):
            sender = source[0].get("AIMID", source[0].get("ImplementerAIMID", "?"))
            parts.append(f"sender {sender}{' (automatic)' if self._auto['dem'] else ''}")
        hidden = [f for f in shown if f.path[:1] in ((spec.time_field,), (_EXPERT,))]
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
            expert = [self._spec.time_field, _EXPERT]
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

    def _reply_clicked(self) -> None:
        reply = self.reply()
        self.last_reply = reply
        if self.on_reply is not None:
            self.on_reply(reply)
        else:
            self._reply_area.children = [widgets.HTML("<b>Reply</b>"), reply]
