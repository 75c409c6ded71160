"""The form of a MessageComposer: built from the data type's schema, shown for one mode, and
the edits a person makes in it (the Mode switch keeps the other mode's values aside; the id
carries the automatic time and metadata along).

A part of :class:`~pgm_explore.widgets._composer.MessageComposer` (see ``_composer_state``).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pgm_explore.dialogue.documents import auto_dem, mode_required, type_of
from pgm_explore.spec import DataType
from pgm_explore.widgets._composer_state import ComposerState
from pgm_explore.widgets._fields import default_value
from pgm_explore.widgets._form import Field, FormContext, ObjectField

__all__ = ["EXPERT", "ComposerForm"]

EXPERT = "DataXMData"
"""The property shown in the expert view, with the message's time."""


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


class ComposerForm(ComposerState):
    """The composer's form and the edits made in it (mixed into MessageComposer)."""

    def _auto_flags(self, spec: DataType, doc: Mapping[str, Any]) -> dict[str, bool]:
        """Which parts follow the message: a DEM equal to the one made for its id, type and
        mode; a time whose SimpleTimeID is ``st-`` + the id (the examples' convention)."""
        ident = doc.get(spec.id_field)
        mode = doc.get("Mode") if isinstance(doc.get("Mode"), str) else None
        time = doc.get(spec.time_field)
        return {
            "time": isinstance(time, dict) and isinstance(ident, str) and time.get("SimpleTimeID") == f"st-{ident}",
            "dem": doc.get(EXPERT) == auto_dem(spec.name, mode, ident),
        }

    def _build_form(self, spec: DataType) -> None:
        if self._form is not None and self._ctx is not None:
            self._form.dispose()
            self._ctx.close()
        ctx = FormContext(spec, self._area.guard(self._form_edited), self._area.guard, shared=self._chrome)
        ctx.on_pending = self._pending_typed
        root = ObjectField(ctx, (), spec.schema, spec.schema, headless=True)
        root.build()
        expert = [spec.time_field, EXPERT]
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
        left = self._last_field not in (None, field.path)
        self._last_field = field.path
        self._apply_edit(field)
        if left:  # the person left the last field: the draft is written now, not within the second
            self._schedule.soon()

    def _apply_edit(self, field: Field) -> None:
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
        if path[:1] == (EXPERT,):
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
            if self._auto["dem"] and EXPERT in doc:
                self._form.members[EXPERT].put(auto_dem(spec.name, doc.get("Mode"), ident))
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
        if self._auto["dem"] and EXPERT in doc:
            doc[EXPERT] = auto_dem(spec.name, new, doc.get(spec.id_field))
        with self._ctx.writing():
            self._form.put(doc)
        self._mode_visibility(new)
        self._commit()
