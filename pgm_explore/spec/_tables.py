"""Parse the Semantics tables of the PGM-AUA V1.0 data-type texts.

The texts come in two layouts, both seen in the published pages: Markdown-like rows
(``| – Text | Text. (required) |``) and the plain layout of the BKN-PAL page
(``– Role Role of the A-User to apply.``). Nesting is shown by leading en dashes,
"(required)" marks a required property at its level and "One of: a, b." lists an
enumeration. Parsing the texts (instead of copying their content by hand) is what lets
the tests hold the schemas to the spec.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

__all__ = ["SpecRow", "SpecTable", "parse_tables"]

_TABLE_TITLE = re.compile(r"^Table (\d+) [–-] (.+)$")
_DASHES = re.compile(r"^([–—-]+)\s*")
_ENUM = re.compile(r"One of: ([^.]+)\.")


@dataclass(frozen=True, slots=True)
class SpecRow:
    """One row of a Semantics table: a property at some nesting depth."""

    label: str
    depth: int
    description: str
    required: bool
    enum: tuple[str, ...] | None
    path: tuple[str, ...]
    """Labels from the top level down to this row, e.g. ``("Feasibility", "Steps", "PAStatus")``."""


@dataclass(frozen=True, slots=True)
class SpecTable:
    number: int
    title: str
    rows: tuple[SpecRow, ...]

    @property
    def mode(self) -> str | None:
        """``"RQ"`` or ``"RS"`` for the Request/Response tables, else ``None``."""
        if "(Mode RQ)" in self.title:
            return "RQ"
        if "(Mode RS)" in self.title:
            return "RS"
        return None


def _split_row(line: str, piped: bool) -> tuple[str, str] | None:
    if piped:
        cells = [c.strip() for c in line.strip("|").split("|")]
        return (cells[0], cells[1]) if len(cells) == 2 else None
    # Plain layout: the label is the first word after the dashes, the rest is the description.
    match = _DASHES.match(line)
    dashes = match.group(1) + " " if match else ""
    parts = line[match.end() if match else 0 :].split(None, 1)
    return (dashes + parts[0], parts[1]) if len(parts) == 2 else None


def _row(label_cell: str, description: str, stack: list[str]) -> SpecRow:
    match = _DASHES.match(label_cell)
    depth = len(match.group(1)) if match else 0
    label = label_cell[match.end() :] if match else label_cell
    del stack[depth:]
    stack.append(label)
    enum_match = _ENUM.search(description)
    enum = tuple(v.strip() for v in enum_match.group(1).split(",")) if enum_match else None
    return SpecRow(
        label=label,
        depth=depth,
        description=description,
        required="(required)" in description,
        enum=enum,
        path=tuple(stack),
    )


def parse_tables(text: str) -> list[SpecTable]:
    """Return the Semantics tables of one spec text, in order."""
    tables: list[SpecTable] = []
    lines = [line.strip() for line in text.splitlines()]
    i = 0
    while i < len(lines):
        title = _TABLE_TITLE.match(lines[i])
        i += 1
        if not title:
            continue
        rows: list[SpecRow] = []
        stack: list[str] = []
        # Skip blank lines and the "Label Description" heading, then read rows up to
        # the first line that is not a row (a blank line ends the plain layout).
        while i < len(lines) and (not lines[i] or lines[i].replace("|", "").split() == ["Label", "Description"]):
            i += 1
        piped = i < len(lines) and lines[i].startswith("|")
        while i < len(lines) and lines[i] and lines[i].startswith("|") == piped:
            cells = _split_row(lines[i], piped)
            if cells is None:
                break
            rows.append(_row(cells[0], cells[1], stack))
            i += 1
        tables.append(SpecTable(int(title.group(1)), title.group(2), tuple(rows)))
    return tables
