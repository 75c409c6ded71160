"""Container fields: objects, arrays and unions (``oneOf`` of objects), and :func:`make_field`;
each takes the next step of :meth:`Field.locate <pgm_explore.widgets._form_field.Field.locate>`.

Members and items are fields (plain state) as soon as their container holds a value; their
widgets are made when the container's body is first shown.
"""

from __future__ import annotations

import json
from typing import Any

import ipywidgets as widgets

from pgm_explore.validation import json_path
from pgm_explore.widgets._fields import (
    Schema,
    alternatives,
    choose_alternative,
    default_value,
    kind,
    numbered,
    resolve,
)
from pgm_explore.widgets._form_context import MISSING, FormContext, JsonEditor, Path
from pgm_explore.widgets._form_field import Container, Field
from pgm_explore.widgets._form_leaf import LeafField, OpenField
from pgm_explore.widgets._ordered import OrderedButton

__all__ = ["ArrayField", "ObjectField", "UnionField", "make_field"]


class ObjectField(Container):
    """An object with listed properties: each property a field, optional ones switchable.

    Properties the schema does not list are kept (in document order) and shown as JSON under
    "Other properties", so that loading any document and saving it gives it back unchanged.
    """

    is_object = True

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

    def build(self) -> None:
        """Make the member fields (state only: their widgets come when they are shown)."""
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
        if not self._shows_body():
            return
        assert self._body is not None
        names = self._placed if self._placed is not None else list(self.members)
        boxes = [m.box for m in (self.members[n] for n in names if n in self.members) if m.present or not m.conditional]
        if self._extras_box is not None and (self.extras or self._extras_editor_pending()):
            boxes.append(self._extras_box)
        if tuple(boxes) != self._body.children:
            self._body.children = boxes

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
        self.build()
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

    def member(self, name: str, *, create: bool = False) -> Field | None:
        """The member field of a listed property (None for a name the schema does not list).
        With ``create`` the object is switched on and its members made, as a user would."""
        if create:
            if not self.present:
                self.switch(True)
            self.build()
        return self.members.get(name)

    def _child(self, part: str | int, *, create: bool, where: Path) -> Field:
        member = self.member(part, create=create) if isinstance(part, str) else None
        if member is None or (not create and not member.present):
            raise KeyError(json_path(where))
        return member

    def remove_extra(self, name: str) -> None:
        """Remove a property the schema does not list, as deleting it under "Other properties"."""
        if name not in self.extras:
            raise KeyError(json_path((*self.path, name)))
        self._ensure_extras_editor()
        assert self._extras_editor is not None
        extras = {k: v for k, v in self.extras.items() if k != name}
        self._extras_editor.text.value = json.dumps(extras, ensure_ascii=False, indent=2)

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
        label = self.ctx.make(
            widgets.HTML,
            value='<span title="Properties the spec does not list for this object; kept so that nothing is lost">'
            "Other properties (not in the spec)</span>",
        )
        self._extras_box = self.ctx.make(
            widgets.VBox,
            children=[label, self._extras_editor.text, self._extras_editor.error],
            _dom_classes=("pgmx-extras",),
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
        if self._extras_box is not None:
            for widget in (*self._extras_box.children[:1], self._extras_box):
                widget.close()
        super().dispose()


class ArrayField(Container):
    """An array: one field per item, with add, remove and move up/down."""

    def __init__(self, ctx: FormContext, path: Path, schema: Schema, root: Schema, **kw: Any) -> None:
        super().__init__(ctx, path, schema, root, **kw)
        self.item_schema, self.item_root = resolve(schema.get("items", {}), root)
        self.items: list[Field] = []
        self._rows: list[widgets.HBox] = []
        self._add_button: widgets.Button | None = None

    @property
    def add_button(self) -> widgets.Button:
        if self._add_button is None:
            self._add_button = self.ctx.make(
                OrderedButton,
                "auto",
                description="+ add",
                tooltip="Add an item at the end",
                _dom_classes=("pgmx-add-item",),
            )
            self.ctx.click(self._add_button, lambda: self.add())
        return self._add_button

    @property
    def rows(self) -> list[widgets.HBox]:
        """One row per item: the item and its buttons (made when the array is shown)."""
        while len(self._rows) < len(self.items):
            self._rows.append(self._make_row(len(self._rows)))
        return self._rows[: len(self.items)]

    def _head_controls(self) -> list[widgets.Widget]:
        return [self.add_button]

    def _layout(self) -> None:
        if not self._shows_body():
            return
        assert self._body is not None
        rows = self.rows
        if tuple(rows) != self._body.children:
            self._body.children = rows

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
            removed = self.items[len(value) :]
            del self.items[len(value) :]
            gone = self._rows[len(value) :]
            del self._rows[len(value) :]
            for index in range(len(self.items), len(value)):
                self.items.append(
                    make_field(self.ctx, (*self.path, index), self.item_schema, self.item_root, parent=self)
                )
            for item, item_value in zip(self.items, value, strict=True):
                item.put(item_value)
            self._layout()
            # Closed only once no container shows them any more.
            for item in removed:
                item.dispose()
            for row in gone:
                for widget in row.children[1:]:
                    widget.close()
                row.close()

    def _child(self, part: str | int, *, create: bool, where: Path) -> Field:
        if create and not self.present:
            self.switch(True)
        if not isinstance(part, int) or self.raw:
            raise KeyError(json_path(where))
        if create and part == len(self.items):
            self.add()
        if not 0 <= part < len(self.items):
            raise IndexError(f"{json_path(where)}: no such item")
        return self.items[part]

    def _make_row(self, index: int) -> widgets.HBox:
        buttons = []
        for text, tip, cls, handler in (
            ("↑", "Move up", "pgmx-item-up", lambda: self.move(index, index - 1)),
            ("↓", "Move down", "pgmx-item-down", lambda: self.move(index, index + 1)),
            ("✕", "Remove this item", "pgmx-item-remove", lambda: self.remove_item(index)),
        ):
            button = self.ctx.make(OrderedButton, "icon", description=text, tooltip=tip, _dom_classes=(cls,))
            self.ctx.click(button, handler)
            buttons.append(button)
        return self.ctx.make(
            widgets.HBox, "row", children=[self.items[index].box, *buttons], _dom_classes=("pgmx-items",)
        )

    def _edit(self, values: list[Any]) -> None:
        if not self.present:
            self.switch(True)
        self.put(values)
        self.ctx.edited(self)

    def add(self, value: Any = MISSING) -> None:
        """Append an item (the default of the item schema, numbered with the next free Step, unless given)."""
        values = [] if self.raw else self.get()
        if value is MISSING:
            value = numbered(default_value(self.item_schema, self.item_root), values)
        self._edit([*values, value])

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
        for row in self._rows:
            for widget in row.children[1:]:
                widget.close()
            row.close()
        if self._add_button is not None:
            self._add_button.close()


class UnionField(Container):
    """A ``oneOf`` of objects (Data Exchange Metadata's Source, Authorisations): a dropdown
    chooses the alternative, the values of the others are kept while another is shown."""

    def __init__(self, ctx: FormContext, path: Path, schema: Schema, root: Schema, **kw: Any) -> None:
        resolved = [resolve(option, root) for option in alternatives(schema)]
        self.options = [node for node, _ in resolved]
        self.option_roots = [where for _, where in resolved]
        self.labels = [" + ".join(node.get("required", ())) or f"option {i + 1}" for i, node in enumerate(self.options)]
        super().__init__(ctx, path, schema, root, **kw)
        self.index: int | None = None
        self.active: ObjectField | None = None
        self._kept: dict[int, Any] = {}
        self._choice: widgets.Dropdown | None = None

    @property
    def choice(self) -> widgets.Dropdown:
        """The dropdown of the alternatives (setting its value chooses, as a user does)."""
        if self._choice is None:
            self._choice = self.ctx.make(
                widgets.Dropdown,
                "auto",
                options=[(label, i) for i, label in enumerate(self.labels)],
                value=self.index if self.index is not None else 0,
                _dom_classes=("pgmx-choice",),
            )
            self.ctx.watch(self._choice, self._chosen)
        return self._choice

    def _head_controls(self) -> list[widgets.Widget]:
        return [self.choice]

    def _layout(self) -> None:
        if not self._shows_body() or self.active is None:
            return
        assert self._body is not None
        if self._body.children != (self.active.box,):
            self._body.children = [self.active.box]

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
        self._layout()
        if old is not None:
            old.dispose()
        if self._choice is not None and self._choice.value != index:
            with self.ctx.writing():
                self._choice.value = index

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

    def alternative(self, key: str | int | None = None) -> ObjectField:
        """The alternative shown (the default one entered if none is); with ``key``, the one
        whose properties include it, chosen in the dropdown as a user would."""
        if self.active is None:
            self.enter(default_value(self.schema, self.root))
        assert self.active is not None
        if isinstance(key, str) and key not in self.active.properties:
            index = next((i for i, option in enumerate(self.options) if key in option.get("properties", {})), None)
            if index is not None:
                self.choice.value = index
        assert self.active is not None
        return self.active

    def _child(self, part: str | int, *, create: bool, where: Path) -> Field:
        return self.alternative(part if create else None)._child(part, create=create, where=where)

    def _chosen(self, index: int) -> None:
        with self.ctx.writing():
            if self.raw:
                self._leave_raw()
            self._activate(index)
            assert self.active is not None
            self.active.put(self._kept.pop(index, default_value(self.options[index], self.option_roots[index])))
        self.ctx.edited(self)

    def dispose(self) -> None:
        super().dispose()
        if self._choice is not None:
            self._choice.close()


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
