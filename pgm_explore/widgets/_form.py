"""The form engine: a tree of fields built from a JSON Schema, the same code for every data type.

Each :class:`Field` owns the widgets of one JSON location and can ``get()`` the value it
holds and ``put()`` a value into it. Containers make their members the first time they hold a
value, so an absent ``Answer`` costs nothing, and a field makes its widgets the first time it
is shown, so the other mode's properties and the closed expert view cost the browser nothing.
A value the typed editor cannot show unchanged (``"3"`` for an integer, ``"ack"`` for an
enumeration) switches the field to a raw JSON editor: the value is kept and the validator's
finding says what is wrong with it; typing a value that fits switches back. Numbers are typed
as text and read by JSON rules in the kernel, so what is validated is what was typed.

Two rules keep the form and the document in step:

* while the form writes into its own widgets (``with ctx.writing():``) the widget observers
  are muted, so that loading a document is not taken for a user's edits;
* every user edit ends in one call, ``ctx.edited(field)``, which the composer turns into a
  new document, one validation and one refresh of the finding display.

The engine lives in four modules: the shared context (``_form_context``), the field
(``_form_field``), leaves (``_form_leaf``) and containers (``_form_containers``).
"""

from __future__ import annotations

from pgm_explore.widgets._form_containers import ArrayField, ObjectField, UnionField, make_field
from pgm_explore.widgets._form_context import MISSING, FormContext, FormField, JsonEditor, Path, hide, label_html
from pgm_explore.widgets._form_field import Field
from pgm_explore.widgets._form_leaf import LeafField, OpenField

__all__ = [
    "MISSING",
    "ArrayField",
    "Field",
    "FormContext",
    "FormField",
    "JsonEditor",
    "LeafField",
    "ObjectField",
    "OpenField",
    "Path",
    "UnionField",
    "hide",
    "label_html",
    "make_field",
]
