"""The form engine: a tree of fields built from a JSON Schema, the same code for every data type.

Each :class:`Field` owns the widgets of one JSON location and can ``get()`` the value it
shows and ``put()`` a value into its widgets. Containers build their children the first time
they hold a value, so an absent ``Answer`` costs no widgets. A value the typed editor cannot
show unchanged (``"3"`` for an integer, ``"ack"`` for an enumeration, -1 below a minimum of 0)
switches the field to a raw JSON editor: the value is kept and the validator's finding says
what is wrong with it; typing a value that fits switches back.

Two rules keep the form and the document in step:

* while the form writes into its own widgets (``with ctx.writing():``) the widget observers
  are muted, so that loading a document is not taken for a user's edits;
* every user edit ends in one call, ``ctx.edited(field)``, which the composer turns into a
  new document, one validation and one refresh of the finding display.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from functools import cache
from typing import Any, TypeVar

import ipywidgets as widgets

from pgm_explore._display import esc
from pgm_explore.spec import DataType
from pgm_explore.validation import Finding, InputProblem, loads
from pgm_explore.widgets._fields import (
    SAFE_INTEGER,
    Schema,
    alternatives,
    bounds,
    choose_alternative,
    default_value,
    fits,
    kind,
    resolve,
    slug,
)

__all__ = [
    "ArrayField",
    "Field",
    "FormContext",
    "JsonEditor",
    "LeafField",
    "MISSING",
    "ObjectField",
    "OpenField",
    "UnionField",
    "make_field",
]

Path = tuple[str | int, ...]


class _Missing:
    def __repr__(self) -> str:
        return "MISSING"


MISSING: Any = _Missing()
"""No value: an absent property, or a field never filled."""

# Text longer than a line is expected here (DescrMetadata allows 2048 characters).
_LONG_TEXT = 256


class FormContext:
    """What every field of one form shares: the data type, the registry of fields by path,
    the mute switch, the composer's edit callback and error guard, and the layout and style
    objects (shared, since each one is a widget model of its own: a form of 150 fields would
    otherwise create twice as many models as it shows)."""

    def __init__(
        self,
        spec: DataType,
        on_edit: Callable[[Field], None],
        guard: Callable[[Callable[..., Any]], Callable[..., Any]],
    ) -> None:
        self.spec = spec
        self.fields: dict[Path, Field] = {}
        self.editors: dict[tuple[Path, str], JsonEditor] = {}
        self.quiet = 0
        self._on_edit = on_edit
        self.guard = guard
        self.on_pending: Callable[[], None] | None = None
        """Called when text that does not parse is typed (the composer saves it in the draft)."""
        self._shared: dict[Any, widgets.Widget] = {}

    @contextmanager
    def writing(self) -> Iterator[None]:
        """Mute the widget observers while the form itself writes into its widgets."""
        self.quiet += 1
        try:
            yield
        finally:
            self.quiet -= 1

    def edited(self, field: Field) -> None:
        if not self.quiet:
            self._on_edit(field)

    def watch(self, widget: widgets.Widget, handler: Callable[[Any], None], name: str = "value") -> None:
        guarded = self.guard(handler)

        def observer(change: dict[str, Any]) -> None:
            if not self.quiet:
                guarded(change["new"])

        widget.observe(observer, names=name)

    def click(self, button: widgets.Button, handler: Callable[[], None]) -> None:
        guarded = self.guard(handler)
        button.on_click(lambda _button: guarded())

    def make(self, cls: type[W], layout: str = "plain", **kwargs: Any) -> W:
        """A widget with a shared layout (never changed afterwards) and a shared style."""
        kwargs.setdefault("layout", self._layout(layout))
        klass = _style_class(cls)
        if klass is not None and "style" not in kwargs:
            if klass not in self._shared:
                self._shared[klass] = klass()
            kwargs["style"] = self._shared[klass]
        return cls(**kwargs)

    def spacer(self) -> widgets.Widget:
        """An empty box as wide as a tick box (one model, shown in many places)."""
        if "spacer" not in self._shared:
            self._shared["spacer"] = widgets.Box(layout=self._layout("include"))
        return self._shared["spacer"]

    def _layout(self, name: str) -> widgets.Layout:
        key = ("layout", name)
        if key not in self._shared:
            self._shared[key] = widgets.Layout(**_LAYOUTS[name])
        layout = self._shared[key]
        assert isinstance(layout, widgets.Layout)
        return layout

    def describe(self, path: Path, schema: Schema) -> tuple[str, str]:
        """The MPAI label of a location and its tooltip: the spec-table text where the data
        type's tables describe it, else the schema's description (borrowed types)."""
        names = tuple(p for p in path if isinstance(p, str))
        last = path[-1] if path else self.spec.name
        label = f"#{last}" if isinstance(last, int) else str(last)
        found = self.spec.row(names) if names else None
        tip = found[1].description if found else str(schema.get("description", ""))
        return label, tip

    def pending(self) -> list[tuple[list[Any], str, str]]:
        """Text typed into JSON editors that is not (yet) valid JSON: (path, role, text)."""
        return [(list(path), role, e.pending) for (path, role), e in self.editors.items() if e.pending is not None]

    def close(self) -> None:
        for widget in self._shared.values():
            widget.close()
        self._shared.clear()


W = TypeVar("W", bound=widgets.Widget)


@cache
def _style_class(cls: type[widgets.Widget]) -> Any:
    # class_traits() walks the whole class: once per widget class, not once per widget.
    trait = cls.class_traits().get("style")
    return trait.klass if trait is not None else None


_LAYOUTS: dict[str, dict[str, str]] = {
    "plain": {},
    "label": {"min_width": "170px"},
    "line": {"flex_flow": "row wrap", "align_items": "center"},
    "include": {"width": "20px"},
    "text": {"width": "50%"},
    "textarea": {"width": "60%"},
    "auto": {"width": "auto"},
    "icon": {"width": "32px"},
    "row": {"align_items": "flex-start"},
}


class JsonEditor:
    """A text box holding JSON: typed text that does not parse stays, with its error shown,
    and the last valid value is kept (``value``); nothing typed is ever thrown away."""

    def __init__(
        self,
        ctx: FormContext,
        on_value: Callable[[Any], None],
        *,
        multiline: bool = True,
        classes: tuple[str, ...] = ("pgmx-input",),
        key: tuple[Path, str] | None = None,
        placeholder: str = "JSON",
    ) -> None:
        self.ctx = ctx
        self.value: Any = MISSING
        self.pending: str | None = None
        # Applied on blur (continuous_update=False): half-typed JSON never parses, and an
        # error flashing at every keystroke would only be noise.
        if multiline:
            self.text: widgets.Textarea | widgets.Text = widgets.Textarea(
                continuous_update=False, placeholder=placeholder, rows=4, layout={"width": "100%"}, _dom_classes=classes
            )
        else:
            self.text = widgets.Text(continuous_update=False, placeholder=placeholder, _dom_classes=classes)
        self.error = widgets.HTML(_dom_classes=("pgmx-parse-error",), layout={"display": "none"})
        self._on_value = on_value
        self._key = key
        if key is not None:
            ctx.editors[key] = self
        ctx.watch(self.text, self._typed)

    def set(self, value: Any) -> None:
        with self.ctx.writing():
            indent = 2 if isinstance(self.text, widgets.Textarea) else None
            self.text.value = json.dumps(value, ensure_ascii=False, indent=indent)
        self.value = value
        self._show_error(None)

    def _typed(self, text: str) -> None:
        try:
            value = loads(text)
        except InputProblem as problem:
            self.pending = text
            found = problem.finding
            where = f" (line {found.line}, column {found.column})" if found.line is not None else ""
            self._show_error(f"{found.message}{where} The last valid value is kept until this parses.")
            if self.ctx.on_pending is not None:
                self.ctx.on_pending()
            return
        self._show_error(None)
        self.value = value
        self._on_value(value)

    def reject(self, message: str) -> None:
        """Valid JSON that the place cannot take (an array where an object must be): kept as typed."""
        self.pending = self.text.value
        self._show_error(message)
        if self.ctx.on_pending is not None:
            self.ctx.on_pending()

    def _show_error(self, message: str | None) -> None:
        if message is None:
            self.pending = None
            if self.error.layout.display != "none":
                self.error.value = ""
                self.error.layout.display = "none"
            return
        self.error.value = f'<span style="color:#c62828">{esc(message)}</span>'
        self.error.layout.display = ""

    def close(self) -> None:
        if self._key is not None and self.ctx.editors.get(self._key) is self:
            del self.ctx.editors[self._key]
        self.text.close()
        self.error.close()


class Field:
    """One JSON location of the form: its widgets, its value, its findings.

    What is on screen follows from the state by :meth:`_render`, which sets the children of
    the field's line and box: an absent property shows its switch and label only, a raw value
    its JSON editor, a field with findings their messages.
    """

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
        self._shown: tuple[tuple[str, str], ...] = ()
        self._absent_mark = False
        self._registered = register
        self._in_object = isinstance(parent, ObjectField)
        self.label_text, self.tooltip = ctx.describe(path, schema)
        self.include: widgets.Checkbox | None = None
        mark = " *" if required and self._in_object else ""
        self.label = ctx.make(
            widgets.Label,
            "label",
            value=self.label_text + mark + self._bounds_hint(),
            tooltip=self.tooltip or None,
            _dom_classes=("pgmx-label",),
        )
        self.line = ctx.make(widgets.HBox, "line")
        # The DOM hooks of the browser tests; an unregistered field (a union's alternative)
        # shares its union's path, and the class must name one element.
        classes = ("pgmx-field", f"pgmx-field-{slug(path)}", f"pgmx-kind-{self.kind}") if register else ()
        self.box = ctx.make(widgets.VBox, _dom_classes=classes)
        if register:
            ctx.fields[path] = self

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

    # -- what is on screen ------------------------------------------------------------------

    def _render(self) -> None:
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
        box: list[widgets.Widget] = [self.line]
        if self.present:
            line += self._line_items()
            if self.raw and self._raw_editor is not None and self._reset is not None:
                line += [self._raw_editor.text, self._reset, self._raw_editor.error]
            box += self._below()
        if self._shown and self._finding is not None:
            box.append(self._finding)
        if tuple(line) != self.line.children:
            self.line.children = line
        if tuple(box) != self.box.children:
            self.box.children = box
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
        if changed and self.conditional and isinstance(self.parent, ObjectField):
            self.parent._layout()

    def switch(self, on: bool) -> None:
        """Switch the property on (its last value, else the default) or off, as a user would."""
        if on == self.present:
            return
        if on and not self.filled:
            with self.ctx.writing():
                self.put(self.default())
        if isinstance(self.parent, ObjectField):
            self.parent._member_switched(self, on)
        self.set_present(on)
        self.ctx.edited(self)

    def _include_toggled(self, on: bool) -> None:
        self.switch(bool(on))

    # -- raw JSON, for values the typed editor cannot show -------------------------------------

    def _enter_raw(self, value: Any) -> None:
        if self._raw_editor is None:
            self._raw_editor = JsonEditor(
                self.ctx,
                self._raw_typed,
                multiline=self.kind in ("object", "array", "union"),
                classes=("pgmx-input", "pgmx-raw"),
                key=(self.path, "raw"),
            )
            self._reset = self.ctx.make(
                widgets.Button,
                "auto",
                description="Reset",
                tooltip="Replace the value with an empty one of the right type",
                _dom_classes=("pgmx-reset",),
            )
            self.ctx.click(self._reset, self._reset_clicked)
        self.raw = True
        self._raw_value = value
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
        assert self._raw_editor is not None
        self._raw_editor.text.value = json.dumps(value, ensure_ascii=False)

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
        if not findings:
            self.box.remove_class("pgmx-invalid")
            self.box.remove_class("pgmx-severity-error")
            self.box.remove_class("pgmx-severity-warning")
            self._render()
            return
        if self._finding is None:
            self._finding = self.ctx.make(
                widgets.HTML, _dom_classes=("pgmx-finding", f"pgmx-finding-{slug(self.path)}")
            )
        error = any(f.severity == "error" for f in findings)
        self.box.add_class("pgmx-invalid")
        self.box.add_class("pgmx-severity-error" if error else "pgmx-severity-warning")
        self.box.remove_class("pgmx-severity-warning" if error else "pgmx-severity-error")
        lines = []
        for f in findings:
            colour = "#c62828" if f.severity == "error" else "#ef6c00"
            mark = "✗" if f.severity == "error" else "⚠"
            lines.append(
                f'<div style="color:{colour}" title="{esc(f.spec)}">{mark} {esc(f.message)}'
                f' <span style="color:#777">[{esc(f.rule)}]</span></div>'
            )
        self._finding.value = "".join(lines)
        self._render()

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
        own = [self.label, self.line, self.box]
        return own + [w for w in (self.include, self._reset, self._finding) if w is not None]

    def _bounds_hint(self) -> str:
        low, high = bounds(self.schema) if self.kind in ("integer", "number") else (None, None)
        if low is not None and high is not None:
            return f" ({low}–{high})"
        if low is not None:
            return f" (≥ {low})"
        if high is not None:
            return f" (≤ {high})"
        return ""


class LeafField(Field):
    """A scalar: constant, enumeration (dropdown), boolean, integer, number or string."""

    def __init__(self, ctx: FormContext, path: Path, schema: Schema, root: Schema, **kw: Any) -> None:
        super().__init__(ctx, path, schema, root, **kw)
        self._put: Any = MISSING
        self.editor = self._make_editor()
        if self.kind != "const":
            ctx.watch(self.editor, self._changed)
        self._render()

    def _make_editor(self) -> widgets.Widget:
        make, classes, k = self.ctx.make, ("pgmx-input",), self.kind
        if k == "const":
            return make(widgets.HTML, value=f"<code>{esc(self.schema['const'])}</code>", _dom_classes=classes)
        if k == "enum":
            options = list(self.schema["enum"])
            if self.path == ("Mode",):
                # The Mode switch: RQ / RS side by side, the composer's main control.
                return make(
                    widgets.ToggleButtons,
                    options=options,
                    value=options[0],
                    tooltip=self.tooltip,
                    _dom_classes=(*classes, "pgmx-mode"),
                )
            return make(widgets.Dropdown, "auto", options=options, value=options[0], _dom_classes=classes)
        if k == "boolean":
            return make(widgets.Checkbox, "auto", indent=False, _dom_classes=classes)
        if k in ("integer", "number"):
            low, high = bounds(self.schema)
            if k == "integer":
                if low is None and high is None:
                    return make(widgets.IntText, continuous_update=True, _dom_classes=classes)
                return make(
                    widgets.BoundedIntText,
                    min=int(low) if low is not None else -SAFE_INTEGER,
                    max=int(high) if high is not None else SAFE_INTEGER,
                    continuous_update=True,
                    _dom_classes=classes,
                )
            if low is None and high is None:
                return make(widgets.FloatText, continuous_update=True, _dom_classes=classes)
            return make(
                widgets.BoundedFloatText,
                min=low if low is not None else -1e300,
                max=high if high is not None else 1e300,
                step=None,
                continuous_update=True,
                _dom_classes=classes,
            )
        if int(self.schema.get("maxLength", 0)) >= _LONG_TEXT:
            return make(widgets.Textarea, "textarea", continuous_update=True, _dom_classes=classes)
        return make(widgets.Text, "text", continuous_update=True, _dom_classes=classes)

    def _line_items(self) -> list[widgets.Widget]:
        # A dropdown stays beside a raw value: picking an option is the quickest fix.
        keep = isinstance(self.editor, widgets.Dropdown | widgets.ToggleButtons)
        return [self.editor] if not self.raw or keep else []

    def get(self) -> Any:
        if self.raw:
            return self._raw_value
        if self.kind == "const":
            return self.schema["const"]
        value = self.editor.value
        if self.kind == "number":
            if type(self._put) in (int, float) and value == self._put:
                return self._put  # as put or entered: 5 stays 5, 5.0 stays 5.0
            number = float(value)
            return int(number) if number.is_integer() and abs(number) <= SAFE_INTEGER else number
        if self.kind == "integer":
            return int(value)
        return value

    def put(self, value: Any) -> None:
        self.filled = True
        if not fits(self.schema, value):
            with self.ctx.writing():
                if isinstance(self.editor, widgets.Dropdown | widgets.ToggleButtons):
                    self.editor.value = None
                self._enter_raw(value)
            return
        with self.ctx.writing():
            if self.raw:
                self._leave_raw()
            if self.kind != "const" and self.editor.value != value:
                self.editor.value = value
        self._put = value

    def enter(self, value: Any) -> None:
        if not self.present:
            self.switch(True)
        if not fits(self.schema, value):
            self._type_raw(value)
            return
        if self.raw:
            with self.ctx.writing():
                self._leave_raw()
        self._put = value
        self.filled = True
        if self.kind == "const" or self.editor.value == value:
            self.ctx.edited(self)
        else:
            self.editor.value = value  # the observer reports the edit, as for a user's

    def _changed(self, value: Any) -> None:
        if value is None:  # a dropdown emptied while it shows a raw value
            return
        if self.raw:
            with self.ctx.writing():
                self._leave_raw()
        self.filled = True
        self.ctx.edited(self)

    def _own_widgets(self) -> list[widgets.Widget]:
        return [*super()._own_widgets(), self.editor]


class OpenField(Field):
    """An open property (SceneContext, Intent, Personality, ...): any JSON, typed as text."""

    def __init__(self, ctx: FormContext, path: Path, schema: Schema, root: Schema, **kw: Any) -> None:
        super().__init__(ctx, path, schema, root, **kw)
        self.editor = JsonEditor(ctx, self._typed, key=(path, "open"))
        self._render()

    def _below(self) -> list[widgets.Widget]:
        return [self.editor.text, self.editor.error]

    def get(self) -> Any:
        return self.editor.value

    def put(self, value: Any) -> None:
        self.filled = True
        self.editor.set(value)

    def enter(self, value: Any) -> None:
        if not self.present:
            self.switch(True)
        self.editor.text.value = json.dumps(value, ensure_ascii=False, indent=2)

    def _typed(self, value: Any) -> None:
        self.filled = True
        self.ctx.edited(self)

    def dispose(self) -> None:
        self.editor.close()
        super().dispose()


class _Container(Field):
    """Shared layout of objects, arrays and unions: a head line, then an indented body."""

    def __init__(
        self, ctx: FormContext, path: Path, schema: Schema, root: Schema, *, headless: bool = False, **kw: Any
    ) -> None:
        super().__init__(ctx, path, schema, root, **kw)
        self.headless = headless
        self.body = ctx.make(widgets.VBox, _dom_classes=() if headless else ("pgmx-body",))

    def _render(self) -> None:
        if not self.headless:
            super()._render()
            return
        box = [self.body]
        if self._shown and self._finding is not None:
            box.append(self._finding)
        if tuple(box) != self.box.children:
            self.box.children = box

    def _head_controls(self) -> list[widgets.Widget]:
        return []

    def _line_items(self) -> list[widgets.Widget]:
        return [] if self.raw else self._head_controls()

    def _below(self) -> list[widgets.Widget]:
        return [] if self.raw else [self.body]

    def _own_widgets(self) -> list[widgets.Widget]:
        return [*super()._own_widgets(), self.body, *self._head_controls()]


class ObjectField(_Container):
    """An object with listed properties: each property a field, optional ones switchable.

    Properties the schema does not list are kept (in document order) and shown as JSON under
    "Other properties", so that loading any document and saving it gives it back unchanged.
    """

    def __init__(self, ctx: FormContext, path: Path, schema: Schema, root: Schema, **kw: Any) -> None:
        super().__init__(ctx, path, schema, root, **kw)
        self.properties: dict[str, Schema] = dict(schema["properties"])
        self.required_names = set(schema.get("required", ()))
        self.members: dict[str, Field] = {}
        self.extras: dict[str, Any] = {}
        self.order: list[str] = []
        self._rank = {name: i for i, name in enumerate(self.properties)}
        self._extras_editor: JsonEditor | None = None
        self._extras_box: widgets.VBox | None = None
        self._placed: list[str] | None = None
        self._render()

    def _build(self) -> None:
        if self.members:
            return
        for name, node in self.properties.items():
            resolved, root = resolve(node, self.root)
            self.members[name] = make_field(
                self.ctx,
                (*self.path, name),
                resolved,
                root,
                parent=self,
                required=name in self.required_names,
                present=False,
            )
        self._layout()

    def place(self, names: list[str]) -> None:
        """Show only these members in the body, in this order (the composer moves Simple Time
        and Data Exchange Metadata to its expert view)."""
        self._placed = names
        self._layout()

    def _layout(self) -> None:
        names = self._placed if self._placed is not None else list(self.members)
        boxes = [m.box for m in (self.members[n] for n in names if n in self.members) if m.present or not m.conditional]
        if self._extras_box is not None and (self.extras or self._extras_editor_pending()):
            boxes.append(self._extras_box)
        if tuple(boxes) != self.body.children:
            self.body.children = boxes

    def _extras_editor_pending(self) -> bool:
        return self._extras_editor is not None and self._extras_editor.pending is not None

    def children(self) -> list[Field]:
        return list(self.members.values())

    def get(self) -> Any:
        if self.raw:
            return self._raw_value
        out: dict[str, Any] = {}
        for name in self.order:
            member = self.members.get(name)
            if member is not None:
                if member.present:
                    out[name] = member.get()
            elif name in self.extras:
                out[name] = self.extras[name]
        return out

    def put(self, value: Any) -> None:
        self.filled = True
        if not isinstance(value, dict):
            with self.ctx.writing():
                self._enter_raw(value)
            return
        self._build()
        with self.ctx.writing():
            if self.raw:
                self._leave_raw()
            self.order = list(value)
            for name, member in self.members.items():
                if name in value:
                    member.put(value[name])
                    if not member.present:
                        member.set_present(True)
                elif member.present:
                    member.set_present(False)
            self.extras = {k: v for k, v in value.items() if k not in self.members}
            self._show_extras()

    def enter_member(self, name: str, value: Any) -> None:
        """Set a property the schema does not list, as typing it under "Other properties"."""
        self._ensure_extras_editor()
        assert self._extras_editor is not None
        extras = {**self.extras, name: value}
        self._extras_editor.text.value = json.dumps(extras, ensure_ascii=False, indent=2)

    def _member_switched(self, member: Field, on: bool) -> None:
        name = str(member.path[-1])
        if on and name not in self.order:
            rank = self._rank.get(name, len(self._rank))
            position = next(
                (i for i, other in enumerate(self.order) if self._rank.get(other, len(self._rank)) > rank),
                len(self.order),
            )
            self.order.insert(position, name)
        elif not on and name in self.order:
            self.order.remove(name)

    def _ensure_extras_editor(self) -> None:
        if self._extras_editor is not None:
            return
        self._extras_editor = JsonEditor(self.ctx, self._extras_typed, key=(self.path, "extras"))
        label = widgets.Label(
            "Other properties (not in the spec)",
            tooltip="Properties the spec does not list for this object; kept so that nothing is lost",
        )
        self._extras_box = widgets.VBox(
            [label, self._extras_editor.text, self._extras_editor.error], _dom_classes=("pgmx-extras",)
        )
        self._layout()

    def _show_extras(self) -> None:
        if self._extras_editor is None and not self.extras:
            return
        self._ensure_extras_editor()
        assert self._extras_editor is not None
        self._extras_editor.set(self.extras)
        self._layout()

    def _extras_typed(self, value: Any) -> None:
        assert self._extras_editor is not None
        if not isinstance(value, dict):
            self._extras_editor.reject("Other properties must be a JSON object of name: value.")
            return
        with self.ctx.writing():
            for name, item in value.items():
                member = self.members.get(name)
                if member is not None:  # a listed property typed here goes to its own field
                    member.put(item)
                    self._member_switched(member, True)
                    member.set_present(True)
                elif name not in self.order:
                    self.order.append(name)
            self.order = [n for n in self.order if n in self.members or n in value]
            self.extras = {k: v for k, v in value.items() if k not in self.members}
            self._show_extras()
        self.ctx.edited(self)

    def dispose(self) -> None:
        if self._extras_editor is not None:
            self._extras_editor.close()
        super().dispose()


class ArrayField(_Container):
    """An array: one field per item, with add, remove and move up/down."""

    def __init__(self, ctx: FormContext, path: Path, schema: Schema, root: Schema, **kw: Any) -> None:
        self.add_button = ctx.make(
            widgets.Button,
            "auto",
            description="+ add",
            tooltip="Add an item at the end",
            _dom_classes=("pgmx-add-item",),
        )
        super().__init__(ctx, path, schema, root, **kw)
        self.item_schema, self.item_root = resolve(schema.get("items", {}), root)
        self.items: list[Field] = []
        self.rows: list[widgets.HBox] = []
        ctx.click(self.add_button, lambda: self.add())
        self._render()

    def _head_controls(self) -> list[widgets.Widget]:
        return [self.add_button]

    def children(self) -> list[Field]:
        return list(self.items)

    def get(self) -> Any:
        if self.raw:
            return self._raw_value
        return [item.get() for item in self.items]

    def put(self, value: Any) -> None:
        self.filled = True
        if not isinstance(value, list):
            with self.ctx.writing():
                self._enter_raw(value)
            return
        with self.ctx.writing():
            if self.raw:
                self._leave_raw()
            removed: list[tuple[Field, widgets.HBox]] = []
            while len(self.items) > len(value):
                removed.append((self.items.pop(), self.rows.pop()))
            added = len(value) - len(self.items)
            for _ in range(added):
                self._append_row()
            for item, item_value in zip(self.items, value, strict=True):
                item.put(item_value)
            if removed or added > 0:
                self.body.children = self.rows
            # Closed only once no container shows them any more.
            for item, row in removed:
                item.dispose()
                for widget in row.children[1:]:
                    widget.close()
                row.close()

    def _append_row(self) -> None:
        index = len(self.items)
        item = make_field(self.ctx, (*self.path, index), self.item_schema, self.item_root, parent=self)
        buttons = []
        for text, tip, cls, handler in (
            ("↑", "Move up", "pgmx-item-up", lambda: self.move(index, index - 1)),
            ("↓", "Move down", "pgmx-item-down", lambda: self.move(index, index + 1)),
            ("✕", "Remove this item", "pgmx-item-remove", lambda: self.remove_item(index)),
        ):
            button = self.ctx.make(widgets.Button, "icon", description=text, tooltip=tip, _dom_classes=(cls,))
            self.ctx.click(button, handler)
            buttons.append(button)
        self.items.append(item)
        self.rows.append(self.ctx.make(widgets.HBox, "row", children=[item.box, *buttons]))

    def _edit(self, values: list[Any]) -> None:
        if not self.present:
            self.switch(True)
        self.put(values)
        self.ctx.edited(self)

    def add(self, value: Any = MISSING) -> None:
        """Append an item (the default of the item schema unless given)."""
        values = [] if self.raw else self.get()
        self._edit([*values, default_value(self.item_schema, self.item_root) if value is MISSING else value])

    def remove_item(self, index: int) -> None:
        values = self.get()
        del values[index]
        self._edit(values)

    def move(self, index: int, to: int) -> None:
        """Move item ``index`` to position ``to`` (out-of-range moves do nothing)."""
        values = self.get()
        if not (0 <= index < len(values) and 0 <= to < len(values)) or index == to:
            return
        values.insert(to, values.pop(index))
        self._edit(values)

    def dispose(self) -> None:
        super().dispose()
        for row in self.rows:
            for widget in row.children[1:]:
                widget.close()
            row.close()


class UnionField(_Container):
    """A ``oneOf`` of objects (Data Exchange Metadata's Source, Authorisations): a dropdown
    chooses the alternative, the values of the others are kept while another is shown."""

    def __init__(self, ctx: FormContext, path: Path, schema: Schema, root: Schema, **kw: Any) -> None:
        resolved = [resolve(option, root) for option in alternatives(schema)]
        self.options = [node for node, _ in resolved]
        self.option_roots = [where for _, where in resolved]
        labels = [" + ".join(node.get("required", ())) or f"option {i + 1}" for i, node in enumerate(self.options)]
        self.choice = ctx.make(
            widgets.Dropdown,
            "auto",
            options=[(label, i) for i, label in enumerate(labels)],
            value=0,
            _dom_classes=("pgmx-choice",),
        )
        super().__init__(ctx, path, schema, root, **kw)
        self.index: int | None = None
        self.active: ObjectField | None = None
        self._kept: dict[int, Any] = {}
        ctx.watch(self.choice, self._chosen)
        self._render()

    def _head_controls(self) -> list[widgets.Widget]:
        return [self.choice]

    def children(self) -> list[Field]:
        return [self.active] if self.active is not None else []

    def _activate(self, index: int) -> None:
        if self.index == index and self.active is not None:
            return
        old = self.active
        if old is not None and self.index is not None:
            self._kept[self.index] = old.get()
        self.index = index
        self.active = ObjectField(
            self.ctx,
            self.path,
            self.options[index],
            self.option_roots[index],
            parent=self,
            register=False,
            headless=True,
        )
        self.body.children = [self.active.box]
        if old is not None:
            old.dispose()
        if self.choice.value != index:
            with self.ctx.writing():
                self.choice.value = index

    def get(self) -> Any:
        if self.raw:
            return self._raw_value
        return self.active.get() if self.active is not None else {}

    def put(self, value: Any) -> None:
        self.filled = True
        if not isinstance(value, dict):
            with self.ctx.writing():
                self._enter_raw(value)
            return
        with self.ctx.writing():
            if self.raw:
                self._leave_raw()
            self._activate(choose_alternative(self.options, value))
            assert self.active is not None
            self.active.put(value)

    def _chosen(self, index: int) -> None:
        with self.ctx.writing():
            if self.raw:
                self._leave_raw()
            self._activate(index)
            assert self.active is not None
            self.active.put(self._kept.pop(index, default_value(self.options[index], self.option_roots[index])))
        self.ctx.edited(self)


def make_field(ctx: FormContext, path: Path, schema: Schema, root: Schema, **kw: Any) -> Field:
    """The field for a (resolved) schema node: the one place where kinds meet classes."""
    k = kind(schema)
    cls: type[Field]
    if k == "object":
        cls = ObjectField
    elif k == "array":
        cls = ArrayField
    elif k == "union":
        cls = UnionField
    elif k == "open":
        cls = OpenField
    else:
        cls = LeafField
    return cls(ctx, path, schema, root, **kw)
