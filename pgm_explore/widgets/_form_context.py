"""What every field of one form shares: :class:`FormContext`, and :class:`JsonEditor`, the text
box for JSON that keeps what does not parse.

A widget is a model in the browser: every Layout and Style object is one more model sent at
the start, so the context hands out shared ones (``make``), never changed afterwards. The form's
widths are CSS classes (``pgmx-w-<role>``, in ``_base.CSS``), so that all its widgets share one
empty Layout. What must show and hide changes a CSS class of its own widget (``pgmx-hidden``),
not a shared layout.
"""

from __future__ import annotations

import contextlib
import importlib
import json
import threading
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from typing import Any, Protocol, TypeVar

import ipywidgets as widgets

from pgm_explore._display import esc
from pgm_explore.spec import DataType
from pgm_explore.validation import Finding, InputProblem, parse_json
from pgm_explore.widgets._fields import Schema, constraint_text, enum_meanings, kind
from pgm_explore.widgets._ordered import OrderedText, OrderedTextarea

__all__ = ["MISSING", "FormContext", "FormField", "JsonEditor", "Path", "hide", "label_html"]

Path = tuple[str | int, ...]


class FormField(Protocol):
    """What a form's context knows of its fields (``_form_field.Field`` is one): the context is
    below the fields, which take it, so it names them by this shape only."""

    path: Path

    def get(self) -> Any: ...

    def enter(self, value: Any) -> None: ...

    def show(self, findings: tuple[Finding, ...]) -> None: ...


class _Missing:
    def __repr__(self) -> str:
        return "MISSING"


MISSING: Any = _Missing()
"""No value: an absent property, or a field never filled."""

W = TypeVar("W", bound=widgets.Widget)

_warmed = threading.Event()


def _import_explainer() -> None:
    # A failure here is the validator's to report: it imports the module again when it needs it.
    with contextlib.suppress(Exception):
        importlib.import_module("jsonschema")


def warm_up() -> None:
    """Import, in the background and once per process, what the validator imports the first time
    it explains a value that does not conform (python-jsonschema: 2–8 s here, most of it building
    the grammars of rfc3987-syntax). Without this, the first wrong keystroke in a new kernel shows
    its finding seconds later; with it, the import runs while the person reads the form (imports
    are thread-safe: the validator waits for it if it is not done yet)."""
    if not _warmed.is_set():
        _warmed.set()
        threading.Thread(target=_import_explainer, name="pgmx-warm-up", daemon=True).start()


# The roles a widget of the form can have, each a CSS class pgmx-w-<role> (widths in _base.CSS).
ROLES = frozenset({"plain", "label", "line", "include", "text", "number", "textarea", "auto", "icon", "row", "wide"})


_STYLE_CLASSES: dict[type, Any] = {}


def _style_class(cls: type[widgets.Widget]) -> Any:
    # class_traits() walks the whole class: once per widget class, not once per widget.
    if cls not in _STYLE_CLASSES:
        trait = cls.class_traits().get("style")
        _STYLE_CLASSES[cls] = trait.klass if trait is not None else None
    return _STYLE_CLASSES[cls]


def hide(widget: widgets.DOMWidget, hidden: bool) -> None:
    """Show or hide a widget by its CSS class (its layout may be shared)."""
    if hidden != ("pgmx-hidden" in widget._dom_classes):
        if hidden:
            widget.add_class("pgmx-hidden")
        else:
            widget.remove_class("pgmx-hidden")


class FormContext:
    """What every field of one form shares: the data type, the registry of fields by path,
    the mute switch, the composer's edit callback and error guard, and the shared layout and
    style objects."""

    def __init__(
        self,
        spec: DataType,
        on_edit: Callable[[FormField], None],
        guard: Callable[[Callable[..., Any]], Callable[..., Any]],
        *,
        shared: FormContext | None = None,
    ) -> None:
        self.spec = spec
        self.fields: dict[Path, FormField] = {}
        self.editors: dict[tuple[Path, str], JsonEditor] = {}
        self.quiet = 0
        self._on_edit = on_edit
        self.guard = guard
        self.on_pending: Callable[[], None] | None = None
        """Called when text that does not parse is typed (the composer saves it in the draft)."""
        # A form borrows its composer's layouts and styles, which live as long as the composer.
        self._shared: dict[Any, widgets.Widget] = shared._shared if shared is not None else {}
        self._owns_shared = shared is None
        warm_up()

    @contextmanager
    def writing(self) -> Iterator[None]:
        """Mute the widget observers while the form itself writes into its widgets."""
        self.quiet += 1
        try:
            yield
        finally:
            self.quiet -= 1

    def edited(self, field: FormField) -> None:
        if not self.quiet:
            self._on_edit(field)

    def watch(self, widget: widgets.Widget, handler: Callable[[Any], None], name: str = "value") -> None:
        guarded = self.guard(handler)

        def observer(change: dict[str, Any]) -> None:
            if not self.quiet:
                guarded(change["new"])

        widget.observe(observer, names=name)

    def click(self, button: widgets.Button, handler: Callable[[], object]) -> None:
        guarded = self.guard(handler)
        button.on_click(lambda _button: guarded())

    def make(self, cls: type[W], role: str | Mapping[str, str] = "plain", **kwargs: Any) -> W:
        """A widget with a shared layout and the shared style of its class. ``role`` is one of
        ``ROLES`` (a CSS class gives the width; the layout is the one empty layout) or the traits
        of a layout, shared by value; ``layout=`` traits are shared too. Never changed afterwards."""
        given = kwargs.get("layout")
        if isinstance(role, str) and given is None:
            if role not in ROLES:
                raise ValueError(f"unknown role {role!r}")
            if role != "plain":
                kwargs["_dom_classes"] = (*kwargs.get("_dom_classes", ()), f"pgmx-w-{role}")
            kwargs["layout"] = self.layout({})
        elif given is None and not isinstance(role, str):
            kwargs["layout"] = self.layout(role)
        elif isinstance(given, Mapping):
            kwargs["layout"] = self.layout(given)
        klass = _style_class(cls)
        if klass is not None and "style" not in kwargs:
            if klass not in self._shared:
                self._shared[klass] = klass()
            kwargs["style"] = self._shared[klass]
        return cls(**kwargs)

    def spacer(self) -> widgets.Widget:
        """An empty box as wide as a tick box (one model, shown in many places)."""
        if "spacer" not in self._shared:
            self._shared["spacer"] = self.make(widgets.Box, "include")
        return self._shared["spacer"]

    def layout(self, traits: Mapping[str, str]) -> widgets.Layout:
        key = ("layout", tuple(sorted(traits.items())))
        if key not in self._shared:
            self._shared[key] = widgets.Layout(**traits)
        layout = self._shared[key]
        assert isinstance(layout, widgets.Layout)
        return layout

    def describe(self, path: Path, schema: Schema) -> tuple[str, str]:
        """The MPAI label of a location and its description: the spec-table text where the data
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
        if not self._owns_shared:
            return  # the composer's: they outlive this form
        for widget in self._shared.values():
            widget.close()
        self._shared.clear()


def label_html(label: str, required_mark: bool, description: str, schema: Schema) -> str:
    """The label of a field: its MPAI name (the spec text on hover), its bounds, and an (i) that
    opens the spec text, with what each value of an enumeration means (a ``<details>``: one
    click or tap, no kernel round trip, in JupyterLab and in Voilà). Every text is escaped.

    >>> html = label_html("Confidence", True, "Confidence <0..1>.", {"type": "number", "minimum": 0, "maximum": 1})
    >>> 'title="Confidence &lt;0..1&gt;."' in html, "0 – 1" in html, "<details" in html
    (True, True, True)
    >>> "<details" in label_html("Header", True, "", {"const": "X"})
    False
    """
    name = esc(label) + (" *" if required_mark else "")
    title = f' title="{esc(description)}"' if description else ""
    parts = [f'<span class="pgmx-name"{title}>{name}</span>']
    bounds = constraint_text(schema)
    if bounds:
        parts.append(f'<span class="pgmx-constraint">{esc(bounds)}</span>')
    meanings = enum_meanings(schema) if kind(schema) == "enum" else {}
    if description or meanings:
        listed = "".join(f"<li><code>{esc(v)}</code> {esc(m)}</li>" for v, m in meanings.items())
        text = f"<div>{esc(description)}</div>" if description else ""
        parts.append(
            f'<details class="pgmx-help"><summary title="About {esc(label)}">i</summary>'
            f'<div class="pgmx-help-text">{text}{f"<ul>{listed}</ul>" if listed else ""}</div></details>'
        )
    return "".join(parts)


JSON_TEXT = "pgmx-json-text"
"""The class of every JsonEditor's box: Ctrl-Z there is the browser's own undo of the typing (_keys)."""


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
        classes = (*classes, JSON_TEXT)
        # Applied on blur (continuous_update=False): half-typed JSON never parses, and an
        # error flashing at every keystroke would only be noise.
        if multiline:
            self.text: widgets.Textarea | widgets.Text = ctx.make(
                OrderedTextarea, "wide", continuous_update=False, placeholder=placeholder, rows=4, _dom_classes=classes
            )
        else:
            self.text = ctx.make(OrderedText, continuous_update=False, placeholder=placeholder, _dom_classes=classes)
        self.error = ctx.make(widgets.HTML, _dom_classes=("pgmx-parse-error", "pgmx-hidden"))
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
            value, notes = parse_json(text)
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
        if notes:
            # A name typed twice: the value keeps the last, and the text is rewritten from
            # the value, so say what was dropped (after _on_value, whose redraw clears this).
            words = " ".join(f"{n.json_path}: {n.message}" for n in notes)
            self.error.value = f'<span style="color:#ef6c00">Warning: {esc(words)}</span>'
            hide(self.error, False)

    def reject(self, message: str) -> None:
        """Valid JSON that the place cannot take (an array where an object must be): kept as typed."""
        self.pending = self.text.value
        self._show_error(message)
        if self.ctx.on_pending is not None:
            self.ctx.on_pending()

    def _show_error(self, message: str | None) -> None:
        if message is None:
            self.pending = None
            if "pgmx-hidden" not in self.error._dom_classes:
                self.error.value = ""
                hide(self.error, True)
            return
        self.error.value = f'<span style="color:#c62828">{esc(message)}</span>'
        hide(self.error, False)

    def close(self) -> None:
        if self._key is not None and self.ctx.editors.get(self._key) is self:
            del self.ctx.editors[self._key]
        self.text.close()
        self.error.close()
