"""Leaf fields: scalars (constants, enumerations, booleans, numbers, texts) and open JSON.

A number is typed into a text box and read in the kernel by JSON rules
(:func:`~pgm_explore.widgets._fields.number_from_text`): a browser's number input rewrites what
is typed ("1.5" in an integer box arrives as 15, letters vanish, a bounded box clamps), and the
validator must judge what the person typed. Text that is not a JSON number is kept as that text.
"""

from __future__ import annotations

import json
from typing import Any

import ipywidgets as widgets

from pgm_explore._display import esc
from pgm_explore.validation import Finding
from pgm_explore.widgets._fields import Schema, enum_meanings, fits, long_text, number_from_text, number_text
from pgm_explore.widgets._form_context import MISSING, FormContext, JsonEditor, Path
from pgm_explore.widgets._form_field import Field
from pgm_explore.widgets._ordered import OrderedText, OrderedTextarea

__all__ = ["LeafField", "OpenField"]

# An option's meaning in a dropdown is cut here; the (i) beside the label has all of it.
_OPTION_MEANING = 48


def _option_label(value: Any, meaning: str | None) -> str:
    if not meaning:
        return str(value)
    short = meaning if len(meaning) <= _OPTION_MEANING else meaning[: _OPTION_MEANING - 1].rstrip() + "…"
    return f"{value} — {short}"


class LeafField(Field):
    """A scalar: constant, enumeration (dropdown), boolean, integer, number or string."""

    def __init__(self, ctx: FormContext, path: Path, schema: Schema, root: Schema, **kw: Any) -> None:
        super().__init__(ctx, path, schema, root, **kw)
        # What the editor shows: the text of a number box (the value is read from it), the value otherwise.
        self._value: Any = schema["const"] if self.kind == "const" else self.default()
        if self.numeric:
            self._value = number_text(self._value)
        self._editor: widgets.Widget | None = None

    # -- the editor, made when the field is first shown present ------------------------------

    @property
    def numeric(self) -> bool:
        return self.kind in ("integer", "number")

    @property
    def editor(self) -> widgets.Widget:
        if self._editor is None:
            self._editor = self._make_editor()
            if self.kind != "const":
                self.ctx.watch(self._editor, self._changed)
        return self._editor

    def _make_editor(self) -> widgets.Widget:
        make, classes, k = self.ctx.make, ("pgmx-input",), self.kind
        shown = None if self.raw and k == "enum" else self._value
        if k == "const":
            return make(widgets.HTML, value=f"<code>{esc(self.schema['const'])}</code>", _dom_classes=classes)
        if k == "enum":
            values = list(self.schema["enum"])
            if self.path == ("Mode",):
                # The Mode switch: RQ / RS side by side, the composer's main control.
                return make(
                    widgets.ToggleButtons,
                    options=values,
                    value=shown,
                    tooltip=self.tooltip,
                    _dom_classes=(*classes, "pgmx-mode"),
                )
            meanings = enum_meanings(self.schema)
            options = [(_option_label(v, meanings.get(v)), v) for v in values]
            return make(widgets.Dropdown, "auto", options=options, value=shown, _dom_classes=classes)
        if k == "boolean":
            return make(widgets.Checkbox, "auto", value=bool(shown), indent=False, _dom_classes=classes)
        if self.numeric:
            return make(
                OrderedText,
                "number",
                value=shown,
                continuous_update=True,
                placeholder="number" if k == "number" else "whole number",
                _dom_classes=(*classes, "pgmx-number"),
            )
        if long_text(self.path, self.schema):
            return make(
                OrderedTextarea,
                "textarea",
                value=shown,
                continuous_update=True,
                _dom_classes=(*classes, "pgmx-long-text"),
            )
        return make(OrderedText, "text", value=shown, continuous_update=True, _dom_classes=classes)

    def _line_items(self) -> list[widgets.Widget]:
        # A dropdown stays beside a raw value: picking an option is the quickest fix.
        keep = self.kind == "enum"
        return [self.editor] if not self.raw or keep else []

    # -- value ----------------------------------------------------------------------------

    def get(self) -> Any:
        if self.raw:
            return self._raw_value
        if self.numeric:
            return number_from_text(self._value)
        return self._value

    def _hold(self, value: Any) -> None:
        """Hold a value that fits and show it, unless the editor already shows it."""
        if self.numeric:
            if not (type(number_from_text(self._value)) is type(value) and number_from_text(self._value) == value):
                self._value = number_text(value)  # "1e3" typed stays "1e3" while it means 1000.0
        else:
            self._value = value
        if self._editor is not None and self.kind != "const" and self._editor.value != self._value:
            with self.ctx.writing():
                self._editor.value = self._value

    def put(self, value: Any) -> None:
        self.filled = True
        if not fits(self.schema, value):
            with self.ctx.writing():
                if self._editor is not None and self.kind == "enum":
                    self._editor.value = None
                self._enter_raw(value)
            return
        with self.ctx.writing():
            if self.raw:
                self._leave_raw()
            self._hold(value)

    def enter(self, value: Any) -> None:
        if not self.present:
            self.switch(True)
        if not fits(self.schema, value):
            self._type_raw(value)
            return
        if self.raw:
            with self.ctx.writing():
                self._leave_raw()
        self.filled = True
        self._hold(value)
        self.ctx.edited(self)

    def _changed(self, value: Any) -> None:
        if value is None:  # a dropdown emptied while it shows a raw value
            return
        if self.raw:
            with self.ctx.writing():
                self._leave_raw()
        self._value = value
        self.filled = True
        self.ctx.edited(self)

    def _render(self) -> None:
        if self.raw and self.kind == "enum" and self._editor is not None and self._editor.value is not None:
            with self.ctx.writing():
                self._editor.value = None
        super()._render()

    def _findings_html(self, findings: tuple[Finding, ...]) -> str:
        html = super()._findings_html(findings)
        if self.numeric and not self.raw and isinstance(self.get(), str):
            html += (
                f'<div style="color:#777">{esc(json.dumps(self._value, ensure_ascii=False))} is not a JSON number'
                " (digits, an optional minus sign, a decimal point, an exponent): it is kept as the text typed.</div>"
            )
        return html

    def _own_widgets(self) -> list[widgets.Widget]:
        return [*super()._own_widgets(), *([self._editor] if self._editor is not None else [])]


class OpenField(Field):
    """An open property (SceneContext, Intent, Personality, ...): any JSON, typed as text."""

    def __init__(self, ctx: FormContext, path: Path, schema: Schema, root: Schema, **kw: Any) -> None:
        super().__init__(ctx, path, schema, root, **kw)
        self._value: Any = MISSING
        self._editor: JsonEditor | None = None

    @property
    def editor(self) -> JsonEditor:
        if self._editor is None:
            self._editor = JsonEditor(self.ctx, self._typed, key=(self.path, "open"))
            if self._value is not MISSING:
                self._editor.set(self._value)
        return self._editor

    def _below(self) -> list[widgets.Widget]:
        return [self.editor.text, self.editor.error]

    def get(self) -> Any:
        return self._value

    def put(self, value: Any) -> None:
        self.filled = True
        self._value = value
        if self._editor is not None:
            self._editor.set(value)

    def enter(self, value: Any) -> None:
        if not self.present:
            self.switch(True)
        self.editor.text.value = json.dumps(value, ensure_ascii=False, indent=2)

    def _typed(self, value: Any) -> None:
        self.filled = True
        self._value = value
        self.ctx.edited(self)

    def dispose(self) -> None:
        if self._editor is not None:
            self._editor.close()
        super().dispose()
