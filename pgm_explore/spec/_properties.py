"""Every property of a data type, read from its schema: where it sits, its mode, whether it is
required, its JSON type, its constraints, its description and the spec table it comes from.

Notebook 01 shows these tables; they are read from the schema's own keywords (nothing is copied
from the validator), with the Semantics-table row for the few schema nodes without a description.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import astuple, dataclass, fields
from typing import TYPE_CHECKING, Any

from pgm_explore._display import mimebundle, table
from pgm_explore.spec._exchange import DATA_EXCHANGE_METADATA_ID
from pgm_explore.spec._references import resolve
from pgm_explore.spec._simple_time import SIMPLE_TIME_ID

if TYPE_CHECKING:
    import pandas as pd

    from pgm_explore.spec import DataType

__all__ = ["PropertyRow", "PropertyTable", "properties"]

# $ref targets outside a type's own schema: the bundled MPAI schemas, by the name a reader knows.
MPAI_SCHEMAS = {
    SIMPLE_TIME_ID: "OSD Simple Time V1.5",
    DATA_EXCHANGE_METADATA_ID: "PTF Data Exchange Metadata V1.0",
}
PATH_SEPARATOR = " › "
_BOUNDS = ("minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "minLength", "maxLength", "minItems")


@dataclass(frozen=True)
class PropertyRow:
    """One property of a data type (a nested one has the path of its parents)."""

    property: str
    """Where it sits: ``Feasibility › Steps › PAStatus`` is the PAStatus of each item of Feasibility.Steps."""
    mode: str
    """``both``, ``RQ`` or ``RS`` (the one mode it belongs to), or ``—`` for a type without modes."""
    required: str
    """``yes`` (at its level), ``in RQ`` / ``in RS`` (by that mode only), or empty."""
    type: str
    """The JSON type, ``array of ...``, or the bundled MPAI schema it refers to."""
    constraints: str
    """``one of ...`` (an enumeration or constant) and bounds (``minimum 0, maximum 1``); empty if none."""
    description: str
    spec: str
    """The spec table the property comes from, e.g. ``BKN-DAC Table 3 (Response)``."""


COLUMNS = tuple(f.name for f in fields(PropertyRow))


class PropertyTable(tuple[PropertyRow, ...]):
    """The rows of :func:`properties`; shown in a notebook as a table, :meth:`to_frame` gives pandas."""

    __slots__ = ()

    def to_frame(self) -> pd.DataFrame:
        """A DataFrame indexed by ``property``, one column per field of :class:`PropertyRow`."""
        import pandas as pd

        return pd.DataFrame([astuple(row) for row in self], columns=list(COLUMNS)).set_index("property")

    def _repr_mimebundle_(self, include: Any = None, exclude: Any = None) -> dict[str, str]:
        return mimebundle(
            self,
            lambda: "\n".join(" | ".join(v or "—" for v in astuple(row)) for row in self),
            lambda: table(list(COLUMNS), [list(astuple(row)) for row in self]),
            include,
            exclude,
        )


def properties(data_type: str | DataType, mode: str | None = None) -> PropertyTable:
    """Every property of a data type's schema, top level first, each followed by what it contains.

    With ``mode`` (``"RQ"`` or ``"RS"``) only the properties a message of that mode may carry,
    and ``required`` says what that mode requires.

    >>> rows = properties("BKN-DAC")
    >>> row = next(r for r in rows if r.property == "Feasibility › Steps › PAStatus")
    >>> row.mode, row.type, row.spec
    ('RS', 'string', 'BKN-DAC Table 3 (Response)')
    >>> row.constraints.split(", ")[:3]
    ['one of Ack', 'Clash', 'FaultyReq']
    >>> [r.property for r in properties("BKN-DAC", "RQ") if r.property.startswith("Feasibility")]
    []
    >>> next(r for r in properties("BKN-PAL", "RS") if r.property == "Outcome").required
    'yes'
    """
    from pgm_explore.spec import data_type as look_up

    dt = look_up(data_type) if isinstance(data_type, str) else data_type
    if mode not in (None, *dt.modes):
        raise ValueError(f"{dt.name} has no mode {mode!r}; its modes: {', '.join(dt.modes) or 'none'}")
    schema = dt.schema
    belongs_to, required_in = _mode_branches(schema)
    rows: list[PropertyRow] = []
    for prop, sub in schema["properties"].items():
        own_mode = belongs_to.get(prop, "both") if dt.has_modes else "—"
        if mode is not None and own_mode not in ("both", mode):
            continue
        if prop in schema.get("required", ()):
            required = "yes"
        elif mode is None:
            required = required_in.get(prop, "")
        else:
            required = "yes" if required_in.get(prop) == f"in {mode}" else ""
        rows += _walk(dt, schema, sub, (prop,), own_mode, required)
    return PropertyTable(rows)


def _mode_branches(schema: Mapping[str, Any]) -> tuple[dict[str, str], dict[str, str]]:
    """From the schema's ``allOf: if Mode is RQ then ...`` branches: the mode each property of one
    mode only belongs to, and what each mode requires."""
    belongs_to: dict[str, str] = {}
    required_in: dict[str, str] = {}
    for branch in schema.get("allOf", []):
        mode = branch["if"]["properties"]["Mode"]["const"]
        for prop, sub in branch["then"].get("properties", {}).items():
            if sub is False:
                belongs_to[prop] = "RS" if mode == "RQ" else "RQ"
        for prop in branch["then"].get("required", []):
            required_in[prop] = f"in {mode}"
    return belongs_to, required_in


def _resolve(schema: Mapping[str, Any], node: Mapping[str, Any]) -> Mapping[str, Any]:
    # Local references only: a bundled MPAI schema is shown by its name (MPAI_SCHEMAS), not opened.
    while isinstance(ref := node.get("$ref"), str) and ref.startswith("#"):
        node = resolve(ref, schema)[0]
    return node


def _type_of(schema: Mapping[str, Any], node: Mapping[str, Any]) -> str:
    node = _resolve(schema, node)
    if node.get("$ref") in MPAI_SCHEMAS:
        return MPAI_SCHEMAS[node["$ref"]]
    if node.get("type") == "array":
        return "array of " + _type_of(schema, node.get("items", {}))
    kind = node.get("type", "object")
    return " or ".join(kind) if isinstance(kind, list) else str(kind)


def _constraints(node: Mapping[str, Any]) -> str:
    values = node.get("enum") or ([node["const"]] if "const" in node else [])
    parts = [f"one of {', '.join(map(str, values))}"] if values else []
    parts += [f"{key} {node[key]}" for key in _BOUNDS if key in node]
    return ", ".join(parts)


def _walk(
    dt: DataType, schema: Mapping[str, Any], node: Mapping[str, Any], path: tuple[str, ...], mode: str, required: str
) -> Iterator[PropertyRow]:
    node = _resolve(schema, node)
    found = dt.row(path)
    yield PropertyRow(
        property=PATH_SEPARATOR.join(path),
        mode=mode,
        required=required,
        type=_type_of(schema, node),
        constraints=_constraints(node),
        description=node.get("description") or (found[1].description if found else ""),
        spec=dt.clause(path).split(", ")[0],
    )
    inner = _resolve(schema, node.get("items", {})) if node.get("type") == "array" else node
    for prop, sub in inner.get("properties", {}).items():
        yield from _walk(dt, schema, sub, (*path, prop), mode, "yes" if prop in inner.get("required", ()) else "")
