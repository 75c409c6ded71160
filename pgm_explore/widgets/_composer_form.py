"""The form part of a MessageComposer: the document <-> the fields.

:class:`DocumentForm` owns the form built from the data type's schema, the values the Mode switch
keeps aside, the automatic time and metadata, the expert view and the finding marks at the fields.
It talks through its traits: ``value`` is the document the fields hold (set at each edit a person
makes, and by :meth:`DocumentForm.show` for a document from elsewhere); ``touched`` and
``last_edit`` say where the person edited; ``shown`` (set by the verdict view) is marked at the
fields. It knows nothing of the composer.
"""

from __future__ import annotations

import copy
import datetime as dt
from collections.abc import Callable, Mapping
from typing import Any

import ipywidgets as widgets
from traitlets import Any as AnyTrait
from traitlets import Bool, Dict, HasTraits, Instance, Set, Tuple, observe

from pgm_explore._display import esc
from pgm_explore.dialogue.documents import auto_dem, auto_time, mode_required, type_of
from pgm_explore.spec import DataType, simple_time_seconds
from pgm_explore.validation import Finding, json_path
from pgm_explore.widgets._base import ErrorArea
from pgm_explore.widgets._fields import default_value
from pgm_explore.widgets._filebar import count
from pgm_explore.widgets._form import ArrayField, FormContext, FormField, ObjectField, UnionField
from pgm_explore.widgets._ordered import OrderedButton

__all__ = ["EXPERT", "DocumentForm", "auto_flags"]

EXPERT = "DataXMData"
"""The property shown in the expert view, with the message's time."""

Path = tuple[str | int, ...]


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


def auto_flags(spec: DataType, doc: Mapping[str, Any]) -> dict[str, bool]:
    """Which parts follow the message: a DEM equal to the one made for its id, type and mode; a
    time whose SimpleTimeID is ``st-`` + the id (the examples' convention)."""
    ident = doc.get(spec.id_field)
    mode = doc.get("Mode") if isinstance(doc.get("Mode"), str) else None
    time = doc.get(spec.time_field)
    return {
        "time": isinstance(time, dict) and isinstance(ident, str) and time.get("SimpleTimeID") == f"st-{ident}",
        "dem": doc.get(EXPERT) == auto_dem(spec.name, mode, ident),
    }


class DocumentForm(HasTraits):
    """The fields of one message, for any data type and mode (see the module)."""

    value = Dict(help="The document the fields hold.")
    spec = Instance(DataType, help="The data type the form is built for.")
    aside = Dict(help="The other mode's values kept aside by the Mode switch, by mode.")
    auto = Dict(help='Whether the time and the metadata follow the message: {"time": bool, "dem": bool}.')
    expert = Bool(False, help="The expert view (time and Data Exchange Metadata) is open.")
    touched = Set(help="Paths of the fields the person edited.")
    last_edit = AnyTrait(None, help="The path of the field edited last (None: nothing edited in a field yet).")
    shown: Tuple = Tuple(help="The findings shown, each marked at the deepest field holding its path.")

    def __init__(self, spec: DataType, area: ErrorArea, chrome: FormContext, on_pending: Callable[[], None]) -> None:
        super().__init__()
        self._area = area
        self._chrome = chrome
        self._on_pending = on_pending
        self._form: ObjectField | None = None
        self._ctx: FormContext | None = None
        self._marked: set[FormField] = set()
        make = chrome.make

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

        self.box = make(widgets.VBox, _dom_classes=("pgmx-form",))
        self.expert_toggle = checkbox("Expert view: time and Data Exchange Metadata", "pgmx-expert")
        chrome.watch(self.expert_toggle, lambda on: setattr(self, "expert", bool(on)))
        self.auto_line = make(widgets.HTML, _dom_classes=("pgmx-auto",))
        self.auto_time = checkbox(
            "time: automatic", "pgmx-auto-time", "Stamped now when the message is made; its SimpleTimeID follows the id"
        )
        chrome.watch(self.auto_time, lambda on: self.set_auto("time", bool(on)))
        self.now = make(OrderedButton, description="Now", tooltip="Set the time to now", _dom_classes=("pgmx-now",))
        chrome.click(self.now, self.stamp_now)
        self.auto_dem = checkbox(
            "metadata: automatic",
            "pgmx-auto-dem",
            "DataID, DataType and Source (the sending AI Module) follow the id, type and mode",
        )
        chrome.watch(self.auto_dem, lambda on: self.set_auto("dem", bool(on)))
        self.expert_fields = make(widgets.VBox)
        self.expert_box = widgets.VBox(
            [make(widgets.HBox, children=[self.auto_time, self.now, self.auto_dem]), self.expert_fields],
            layout={"display": "none"},
            _dom_classes=("pgmx-expert-view",),
        )
        self.expert_line = make(widgets.HBox, {"align_items": "center"}, children=[self.expert_toggle, self.auto_line])
        self.spec = spec
        self.auto = {"time": True, "dem": True}

    @property
    def root(self) -> ObjectField:
        assert self._form is not None, "the form is built by the first show()"
        return self._form

    @property
    def ctx(self) -> FormContext:
        assert self._ctx is not None, "the form is built by the first show()"
        return self._ctx

    # -- a document from elsewhere ------------------------------------------------------------------

    def show(self, doc: dict[str, Any]) -> None:
        """Show a document that did not come from these fields: the form is built for its type
        (anew for another type), the automatic parts stay automatic only where they still match
        what they would be, and ``value`` becomes ``doc``."""
        spec = type_of(doc) or self.spec
        if self._form is None or spec is not self.spec:
            self._build(spec)
        with self.ctx.writing():
            self.root.put(doc)
        mode = doc.get("Mode")
        self._mode_visibility(mode if mode in spec.modes else None)
        # Shown once the mode is known: the widgets of the other mode's properties are never made.
        if self.box.children != (self.root.box,):
            self.box.children = [self.root.box]
        self._show_expert_fields()
        with self.hold_trait_notifications():
            self.auto = auto_flags(spec, doc)
            self.last_edit = None
            self.value = doc
        self._mark(self.shown)  # the fields put anew carry no marks

    def _build(self, spec: DataType) -> None:
        if self._form is not None and self._ctx is not None:
            self._form.dispose()
            self._ctx.close()
        ctx = FormContext(spec, self._area.guard(self._edited), self._area.guard, shared=self._chrome)
        ctx.on_pending = self._on_pending
        root = ObjectField(ctx, (), spec.schema, spec.schema, headless=True)
        root.build()
        root.place([name for name in root.members if name not in (spec.time_field, EXPERT)])
        self._ctx, self._form = ctx, root
        self.expert_fields.children = []
        self._chrome.spec = spec
        self._marked = set()
        self.spec = spec

    def _mode_visibility(self, mode: str | None) -> None:
        """Only the properties of the shown mode are on screen; the other mode's appear only
        while present (a loaded document may carry them: the finding is then at the field)."""
        for other in self.spec.modes:
            for name in self.spec.mode_properties(other):
                member = self.root.members.get(name)
                if member is not None:
                    member.conditional = mode is not None and other != mode
        self.root._layout()

    # -- edits made in the fields ---------------------------------------------------------------------

    def _edited(self, field: FormField) -> None:
        path = field.path
        if path not in self.touched:
            self.touched = self.touched | {path}
        self.last_edit = path
        spec = self.spec
        if path == ("Mode",):
            new = field.get()
            if isinstance(new, str) and new in spec.modes:
                self._switch_mode(new)
                return
        if path[:1] == (spec.time_field,) and self.auto["time"]:
            self.auto = {**self.auto, "time": False}
        if path[:1] == (EXPERT,) and self.auto["dem"]:
            self.auto = {**self.auto, "dem": False}
        if path == (spec.id_field,):
            self._follow_id()
        self.value = self.root.get()

    def _follow_id(self) -> None:
        """Keep the automatic parts in step with the id (and the mode, for the sender)."""
        spec = self.spec
        doc = self.root.get()
        ident = doc.get(spec.id_field)
        with self.ctx.writing():
            if self.auto["dem"] and EXPERT in doc:
                self.root.members[EXPERT].put(auto_dem(spec.name, doc.get("Mode"), ident))
            time = doc.get(spec.time_field)
            if self.auto["time"] and isinstance(time, dict) and isinstance(ident, str):
                self.root.members[spec.time_field].put({**time, "SimpleTimeID": f"st-{ident}"})

    def _switch_mode(self, new: str) -> None:
        """RQ <-> RS: the old mode's values go aside (kept, saved in the draft) and the new
        mode's come back, or its required properties appear with defaults."""
        spec = self.spec
        old = self.value.get("Mode")
        doc = self.root.get()
        aside = dict(self.aside)
        additions: dict[str, Any] = {}
        if old != new:
            if old in spec.modes:
                aside[old] = {k: doc.pop(k) for k in spec.mode_properties(old) if k in doc}
            additions = {k: v for k, v in aside.pop(new, {}).items() if k not in doc}
        doc["Mode"] = new
        for name in mode_required(spec, new):
            if name not in doc and name not in additions:
                additions[name] = default_value(spec.schema["properties"][name], spec.schema)
        doc = _in_order(doc, additions, list(spec.schema["properties"]))
        if self.auto["dem"] and EXPERT in doc:
            doc[EXPERT] = auto_dem(spec.name, new, doc.get(spec.id_field))
        with self.ctx.writing():
            self.root.put(doc)
        self._mode_visibility(new)
        with self.hold_trait_notifications():
            self.aside = aside
            self.value = self.root.get()

    def enter_mode(self, mode: str) -> None:
        """Switch the Mode as its toggle does."""
        self.ctx.fields[("Mode",)].enter(mode)

    def stamp_now(self) -> None:
        """Set the message's time to now (SimpleTimeID ``st-`` + id), as the Now button does."""
        ident = self.value.get(self.spec.id_field)
        member = self.root.members[self.spec.time_field]
        with self.ctx.writing():
            if not member.present:
                member.switch(True)
            member.put(auto_time(ident if isinstance(ident, str) else "message"))
        self.value = self.root.get()

    def set_auto(self, part: str, on: bool) -> None:
        """Let the time or the metadata follow the message again (the expert view's tick boxes)."""
        self.auto = {**self.auto, part: on}
        if on and part == "time":
            self.stamp_now()
        elif on:
            self._follow_id()
            self.value = self.root.get()

    # -- what the public set()/get()/remove() reach ---------------------------------------------------

    def set(self, path: Path, value: Any) -> None:
        if not path:
            raise KeyError("set() needs a path; assign value to replace the whole document")
        parent = self.root.locate(path[:-1], create=True)
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

    def get(self, path: Path) -> Any:
        node = self.root.locate(path[:-1])
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

    def remove(self, path: Path) -> None:
        if not path:
            raise KeyError("remove() needs a path")
        parent = self.root.locate(path[:-1])
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

    # -- findings at the fields, the expert view ------------------------------------------------------

    @observe("shown")
    def _shown_changed(self, change: dict[str, Any]) -> None:
        self._area.guard(self._mark)(change["new"])

    def _mark(self, findings: tuple[Finding, ...]) -> None:
        """Mark each finding at the deepest field holding its path; clear marks that went."""
        if self._ctx is None:
            return
        fields = self._ctx.fields
        placed: dict[FormField, list[Finding]] = {}
        for finding in findings:
            path = finding.path
            for depth in range(len(path), -1, -1):
                field = fields.get(path[:depth])
                if field is not None:
                    placed.setdefault(field, []).append(finding)
                    break
        for field in self._marked - placed.keys():
            if fields.get(field.path) is field:
                field.show(())
        for field, found in placed.items():
            field.show(tuple(found))
        self._marked = set(placed)

    @observe("value", "shown", "expert", "auto")
    def _auto_changed(self, _change: dict[str, Any]) -> None:
        self._area.guard(self._render_auto)()

    def _render_auto(self) -> None:
        """One line on the automatic parts, so that they need no room until asked for."""
        spec, doc = self.spec, self.value
        parts = []
        clock = simple_time_seconds(doc.get(spec.time_field))
        if clock is not None and clock[0]:
            try:
                when = dt.datetime.fromtimestamp(clock[1], tz=dt.UTC).strftime("%Y-%m-%d %H:%M:%S UTC")
            except (OverflowError, OSError, ValueError):  # a time past year 9999 is still a time
                when = f"{clock[1]:.3f} s after 1970"
            parts.append(f"{spec.time_field} {when}{' (automatic)' if self.auto['time'] else ''}")
        dem = doc.get(EXPERT)
        source = dem.get("Source") if isinstance(dem, dict) else None
        if isinstance(source, list) and source and isinstance(source[0], dict):
            sender = source[0].get("AIMID", source[0].get("ImplementerAIMID", "?"))
            parts.append(f"sender {sender}{' (automatic)' if self.auto['dem'] else ''}")
        hidden = [f for f in self.shown if f.path[:1] in ((spec.time_field,), (EXPERT,))]
        text = esc(" · ".join(parts))
        if hidden and not self.expert:
            text += (
                f' <span style="color:#c62828">{esc(count(len(hidden), "finding"))} here: open the expert view</span>'
            )
        if self.auto_line.value != text:
            self.auto_line.value = text
        with self._chrome.writing():
            self.auto_time.value = self.auto["time"]
            self.auto_dem.value = self.auto["dem"]

    @observe("expert")
    def _expert_changed(self, change: dict[str, Any]) -> None:
        on = bool(change["new"])
        if self.expert_toggle.value != on:
            with self._chrome.writing():
                self.expert_toggle.value = on
        self._show_expert_fields()
        self.expert_box.layout.display = "" if on else "none"

    def _show_expert_fields(self) -> None:
        # The expert view's fields are made when it is first opened (fewer widgets to send).
        if self.expert and self._form is not None and not self.expert_fields.children:
            self.expert_fields.children = [self._form.members[name].box for name in (self.spec.time_field, EXPERT)]

    def close(self) -> None:
        if self._form is not None and self._ctx is not None:
            self._form.dispose()
            self._ctx.close()
