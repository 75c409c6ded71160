"""The field: one JSON location of a form, its value, presence and findings, and its widgets.

A field is plain Python state first. Its widgets are made the first time something shows it
(:meth:`Field.view`): a property of the other mode, an unticked optional property's editor,
or the expert view's time and metadata cost the browser nothing until they appear.
"""

from __future__ import annotations

import json
from typing import Any

import ipywidgets as widgets

from pgm_explore._display import esc
from pgm_explore.validation import Finding, json_path
from pgm_explore.widgets._fields import Schema, default_value, fits, kind, slug
from pgm_explore.widgets._form_context import MISSING, FormContext, JsonEditor, Path, label_html
from pgm_explore.widgets._ordered import OrderedButton

__all__ = ["Container", "Field"]


class Field:
    """One JSON location of the form: its widgets, its value, its findings.

    What is on screen follows from the state by :meth:`_render`, which sets the children of
    the field's line and box once they exist: an absent property shows its switch and label
    only, a raw value its JSON editor, a field with findings their messages.
    """

    is_object = False
    """Whether the field is an object whose members can be switched on and off."""

    def __init__(
        self,
        ctx: FormContext,
        path: Path,
        schema: Schema,
        root: Schema,
        *,
        parent: Field | None = None,
        required: bool = True,
        register: bool = True,
        present: bool = True,
    ) -> None:
        self.ctx = ctx
        self.path = path
        self.schema = schema
        self.root = root
        self.parent = parent
        self.required = required
        self.kind = kind(schema)
        self.present = present
        self.filled = False
        """Whether the field has held a value (switching it on again keeps what was typed)."""
        self.conditional = False
        """Hidden while absent: the other mode's properties."""
        self.raw = False
        self._raw_value: Any = MISSING
        self._raw_editor: JsonEditor | None = None
        self._reset: widgets.Button | None = None
        self._finding: widgets.HTML | None = None
        self._findings: tuple[Finding, ...] = ()
        self._shown: tuple[tuple[str, str], ...] = ()
        self._marks: tuple[str, ...] = ()
        self._absent_mark = False
        self._registered = register
        self._in_object = parent is not None and parent.is_object
        self.label_text, self.tooltip = ctx.describe(path, schema)
        self.include: widgets.Checkbox | None = None
        self.label: widgets.HTML | None = None
        self._box: widgets.Box | None = None
        if register:
            ctx.fields[path] = self

    # -- widgets, made on first show --------------------------------------------------------

    @property
    def built(self) -> bool:
        return self._box is not None

    @property
    def line(self) -> widgets.Box | None:
        """The box of the switch, label and editor: the field's box itself, whose items wrap
        (what goes under the line takes the full width), one widget model fewer per field."""
        return self._box

    @property
    def box(self) -> widgets.Box:
        """The field's widget (made now if it was never shown)."""
        if self._box is None:
            self._box = self._make_box()
            self._render()
        return self._box

    def _make_box(self) -> widgets.Box:
        ctx = self.ctx
        mark = self.required and self._in_object
        self.label = ctx.make(
            widgets.HTML,
            "label",
            value=label_html(self.label_text, mark, self.tooltip, self.schema),
            _dom_classes=("pgmx-label",),
        )
        return ctx.make(widgets.Box, "line", _dom_classes=("pgmx-row", *self._hooks()))

    def _hooks(self) -> tuple[str, ...]:
        # The DOM hooks of the browser tests; an unregistered field (a union's alternative)
        # shares its union's path, and the class must name one element.
        if not self._registered:
            return ()
        return ("pgmx-field", f"pgmx-field-{slug(self.path)}", f"pgmx-kind-{self.kind}")

    # -- value ----------------------------------------------------------------------------

    def get(self) -> Any:
        raise NotImplementedError

    def put(self, value: Any) -> None:
        """Show ``value`` (the form writing, not a user: no edit is reported)."""
        raise NotImplementedError

    def enter(self, value: Any) -> None:
        """Make the field hold ``value`` as a user would (an edit is reported)."""
        if not self.present:
            self.switch(True)
        if not fits(self.schema, value):
            self._type_raw(value)
            return
        with self.ctx.writing():
            self.put(value)
        self.ctx.edited(self)

    def default(self) -> Any:
        return default_value(self.schema, self.root)

    def children(self) -> list[Field]:
        return []

    # -- finding a field by its path ------------------------------------------------------------

    def locate(self, path: Path, *, create: bool = False) -> Field:
        """The field at ``path`` below this one (``KeyError`` / ``IndexError`` if there is none).

        With ``create`` the way is made as a user would make it: absent properties are switched
        on (with their last value, else the default), an index one past the end of an array adds
        an item, and a union shows the alternative that has the next name.
        """
        node: Field = self
        for depth, part in enumerate(path):
            node = node._child(part, create=create, where=path[: depth + 1])
        return node

    def _child(self, part: str | int, *, create: bool, where: Path) -> Field:
        """One step of :meth:`locate` (containers have children)."""
        raise KeyError(json_path(where))

    # -- hooks of containers ------------------------------------------------------------------

    def _member_switched(self, member: Field, on: bool) -> None:
        """A member was switched on or off (objects keep the order of their properties)."""

    def _layout(self) -> None:
        """Show the members that should be shown (containers)."""

    # -- what is on screen ------------------------------------------------------------------

    def _render(self) -> None:
        if self._box is None or self.label is None:
            return
        switchable = self._in_object and (not self.required or not self.present)
        if switchable and self.include is None:
            self.include = self.ctx.make(
                widgets.Checkbox,
                "include",
                value=self.present,
                indent=False,
                tooltip=f"Include {self.label_text} in the message (unticked: the property is absent)",
                _dom_classes=("pgmx-include",),
            )
            self.ctx.watch(self.include, self._include_toggled)
        line: list[widgets.Widget] = []
        if switchable and self.include is not None:
            line.append(self.include)
        elif self._in_object:  # keeps labels aligned with those that have a tick box
            line.append(self.ctx.spacer())
        line.append(self.label)
        if self._shown and self._finding is None:  # findings that came before the widgets
            self._finding = self._finding_widget()
        if self.present:
            line += self._line_items()
            if self.raw:
                editor, reset = self._raw_widgets()
                line += [editor.text, reset, editor.error]
            line += self._below()
        if self._shown and self._finding is not None:
            line.append(self._finding)
        if tuple(line) != self._box.children:
            self._box.children = line
        self._render_marks()
        if self._absent_mark == self.present:
            self._absent_mark = not self.present
            if self.present:
                self.label.remove_class("pgmx-absent")
            else:
                self.label.add_class("pgmx-absent")

    def _line_items(self) -> list[widgets.Widget]:
        return []

    def _below(self) -> list[widgets.Widget]:
        return []

    # -- presence (absent is not the same as empty) ------------------------------------------

    def set_present(self, present: bool) -> None:
        changed = present != self.present
        self.present = present
        if self.include is not None and self.include.value != present:
            with self.ctx.writing():
                self.include.value = present
        self._render()
        if changed and self.conditional and self.parent is not None:
            self.parent._layout()

    def switch(self, on: bool) -> None:
        """Switch the property on (its last value, else the default) or off, as a user would."""
        if on == self.present:
            return
        if on and not self.filled:
            with self.ctx.writing():
                self.put(self.default())
        if self.parent is not None:
            self.parent._member_switched(self, on)
        self.set_present(on)
        self.ctx.edited(self)

    def _include_toggled(self, on: bool) -> None:
        self.switch(bool(on))

    # -- raw JSON, for values the typed editor cannot show -------------------------------------

    def _raw_widgets(self) -> tuple[JsonEditor, widgets.Button]:
        if self._raw_editor is None or self._reset is None:
            self._raw_editor = JsonEditor(
                self.ctx,
                self._raw_typed,
                multiline=self.kind in ("object", "array", "union"),
                classes=("pgmx-input", "pgmx-raw"),
                key=(self.path, "raw"),
            )
            self._raw_editor.set(self._raw_value)
            self._reset = self.ctx.make(
                OrderedButton,
                "auto",
                description="Reset",
                tooltip="Replace the value with an empty one of the right type",
                _dom_classes=("pgmx-reset",),
            )
            self.ctx.click(self._reset, self._reset_clicked)
        return self._raw_editor, self._reset

    def _enter_raw(self, value: Any) -> None:
        self.raw = True
        self._raw_value = value
        if self._raw_editor is not None:
            self._raw_editor.set(value)
        self._render()

    def _leave_raw(self) -> None:
        self.raw = False
        self._raw_value = MISSING
        if self._raw_editor is not None:
            self._raw_editor._show_error(None)
        self._render()

    def _type_raw(self, value: Any) -> None:
        # As a user typing the JSON of ``value`` into the raw editor.
        if not self.raw:
            with self.ctx.writing():
                self._enter_raw(self.default())
        editor, _reset = self._raw_widgets()
        editor.text.value = json.dumps(value, ensure_ascii=False)

    def _raw_typed(self, value: Any) -> None:
        self.filled = True
        if fits(self.schema, value):
            with self.ctx.writing():
                self._leave_raw()
                self.put(value)
        else:
            self._raw_value = value
        self.ctx.edited(self)

    def _reset_clicked(self) -> None:
        with self.ctx.writing():
            self._leave_raw()
            self.put(self.default())
        self.ctx.edited(self)

    # -- findings ------------------------------------------------------------------------------

    def show(self, findings: tuple[Finding, ...]) -> None:
        """Mark the field with its findings (or clear the mark); unchanged marks cost nothing."""
        key = tuple((f.severity, f.message) for f in findings)
        if key == self._shown:
            return
        self._shown = key
        self._findings = findings
        if self._box is None:
            return  # shown when the field is
        if findings:
            if self._finding is None:
                self._finding = self._finding_widget()
            else:
                self._finding.value = self._findings_html(findings)
        self._render()

    def _finding_widget(self) -> widgets.HTML:
        return self.ctx.make(
            widgets.HTML,
            value=self._findings_html(self._findings),
            _dom_classes=("pgmx-finding", f"pgmx-finding-{slug(self.path)}"),
        )

    def _findings_html(self, findings: tuple[Finding, ...]) -> str:
        lines = []
        for f in findings:
            colour = "#c62828" if f.severity == "error" else "#ef6c00"
            mark = "✗" if f.severity == "error" else "⚠"
            lines.append(
                f'<div style="color:{colour}" title="{esc(f.spec)}">{mark} {esc(f.message)}'
                f' <span style="color:#777">[{esc(f.rule)}]</span></div>'
            )
        return "".join(lines)

    def _render_marks(self) -> None:
        assert self._box is not None
        marks: tuple[str, ...] = ()
        if self._shown:
            error = any(severity == "error" for severity, _ in self._shown)
            marks = ("pgmx-invalid", "pgmx-severity-error" if error else "pgmx-severity-warning")
        if marks != self._marks:
            for old in self._marks:
                if old not in marks:
                    self._box.remove_class(old)
            for new in marks:
                if new not in self._marks:
                    self._box.add_class(new)
            self._marks = marks

    @property
    def shown_messages(self) -> tuple[str, ...]:
        """The finding messages shown at this field (for tests and notebooks)."""
        return tuple(message for _, message in self._shown)

    # -- lifetime ------------------------------------------------------------------------------

    def dispose(self) -> None:
        """Close the widgets of this field and everything under it (an array shrank)."""
        for child in self.children():
            child.dispose()
        if self._registered and self.ctx.fields.get(self.path) is self:
            del self.ctx.fields[self.path]
        if self._raw_editor is not None:
            self._raw_editor.close()
        for widget in self._own_widgets():
            widget.close()

    def _own_widgets(self) -> list[widgets.Widget]:
        own = [self.label, self._box, self.include, self._reset, self._finding]
        return [w for w in own if w is not None]


class Container(Field):
    """Shared layout of objects, arrays and unions: a head line, then an indented body."""

    def __init__(
        self, ctx: FormContext, path: Path, schema: Schema, root: Schema, *, headless: bool = False, **kw: Any
    ) -> None:
        super().__init__(ctx, path, schema, root, **kw)
        self.headless = headless
        self._body: widgets.VBox | None = None

    @property
    def body(self) -> widgets.VBox:
        if self._body is None:
            self._body = self.ctx.make(widgets.VBox, _dom_classes=() if self.headless else ("pgmx-body",))
            self._layout()
        return self._body

    def _make_box(self) -> widgets.Box:
        if not self.headless:
            return super()._make_box()
        return self.ctx.make(widgets.VBox, _dom_classes=self._hooks())

    def _render(self) -> None:
        if not self.headless:
            super()._render()
            return
        if self._box is None:
            return
        if self._shown and self._finding is None:
            self._finding = self._finding_widget()
        box = [self.body]
        if self._shown and self._finding is not None:
            box.append(self._finding)
        if tuple(box) != self._box.children:
            self._box.children = box
        self._render_marks()

    def _head_controls(self) -> list[widgets.Widget]:
        return []

    def _line_items(self) -> list[widgets.Widget]:
        return [] if self.raw else self._head_controls()

    def _below(self) -> list[widgets.Widget]:
        if self.raw:
            return []
        self._layout()  # what changed while the body was not shown
        return [self.body]

    def _shows_body(self) -> bool:
        return self._box is not None and self._body is not None and not self.raw

    def _own_widgets(self) -> list[widgets.Widget]:
        return [*super()._own_widgets(), *([self._body] if self._body is not None else [])]
