"""The file controls a composer and a builder share: the draft notice, the Drafts panel, the
Open panel and the Download link.

The panels are built on their first opening: most composers never use them, and every
widget costs the browser a model.
"""

from __future__ import annotations

import base64
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import ipywidgets as widgets
from ipywidgets.widgets.widget_string import HTMLStyle

from pgm_explore._display import esc
from pgm_explore.validation import Finding, InputProblem, parse_json
from pgm_explore.widgets._base import ErrorArea
from pgm_explore.widgets._drafts import DraftInfo, delete_draft, draft_entries, read_draft
from pgm_explore.widgets._examples import ExampleLoader
from pgm_explore.widgets._ordered import OrderedButton, OrderedText

__all__ = ["DraftBar", "OpenPanel", "Parts", "count", "download_html", "parse_document"]


def count(n: int, word: str) -> str:
    """``1 warning``, ``2 warnings``.

    >>> count(1, "consistency error"), count(0, "warning"), count(3, "message")
    ('1 consistency error', '0 warnings', '3 messages')
    """
    return f"{n} {word}{'' if n == 1 else 's'}"


def parse_document(data: bytes, name: str) -> tuple[dict[str, Any], tuple[Finding, ...]]:
    """One message from the bytes of a ``.json`` file called ``name``, read as strictly as the
    validator reads, and the file's ``duplicate-key`` warnings (a name written twice in one
    object: only its last value is read); ``ValueError`` saying what is wrong otherwise."""
    try:
        document, notes = parse_json(data)
    except InputProblem as problem:
        raise ValueError(f"{name}: {problem.finding.message}") from None
    if not isinstance(document, dict):
        kind = (
            "an array of messages (load it into a DialogueBuilder)" if isinstance(document, list) else "not an object"
        )
        raise ValueError(f"{name} holds {kind}, not one message")
    return document, notes


_LINK_STYLE = (
    "display:inline-block;padding:0 12px;line-height:28px;border-radius:2px;"
    "background:#eeeeee;color:#000;text-decoration:none"
)


def download_html(text: str, filename: str, mime: str = "application/json") -> str:
    """A link that makes the browser download ``text`` (UTF-8) as ``filename``: the bytes travel
    in a ``data:`` URI, so the file comes from the page itself, not from the server."""
    data = base64.b64encode(text.encode("utf-8", "surrogatepass")).decode("ascii")
    return (
        f'<a class="pgmx-download-link" download="{esc(filename)}" style="{_LINK_STYLE}" '
        f'href="data:{mime};base64,{data}" title="Save the JSON below on your computer as {esc(filename)}">'
        f"⬇ {esc(filename)}</a>"
    )


class Parts:
    """Buttons and HTML areas of a widget's chrome sharing one layout and one style each: every
    Layout and Style is a widget model the browser must build. Only widgets whose layout never
    changes afterwards take the shared one."""

    def __init__(self) -> None:
        # (A button never shrinks: beside a long status its label would be cut to "O...".)
        self.auto = widgets.Layout(width="auto", flex="0 0 auto")
        self.plain = widgets.Layout()
        self._button_style = widgets.ButtonStyle()
        self._html_style = HTMLStyle()

    def button(self, description: str, css: str, tooltip: str = "", **kwargs: Any) -> widgets.Button:
        kwargs.setdefault("layout", self.auto)
        return OrderedButton(
            description=description, tooltip=tooltip, style=self._button_style, _dom_classes=(css,), **kwargs
        )

    def html(self, css: str, value: str = "") -> widgets.HTML:
        return widgets.HTML(value, layout=self.plain, style=self._html_style, _dom_classes=(css,))


class DraftBar:
    """A notice line (class ``pgmx-draft-notice``; "Start fresh" beside it while a restored
    draft is shown) and the Drafts panel (``pgmx-drafts``: a list of the drafts of one kind,
    with Open and Delete)."""

    def __init__(
        self,
        area: ErrorArea,
        parts: Parts,
        kind: str,
        folder: Callable[[], Path | None],
        on_open: Callable[[DraftInfo, dict[str, Any]], None],
        on_fresh: Callable[[], object],
    ) -> None:
        self._kind, self._folder, self._on_open = kind, folder, on_open
        self._guard, self._parts = area.guard, parts
        self.notice = parts.html("pgmx-draft-notice")
        self.fresh = parts.button(
            "Start fresh",
            "pgmx-start-fresh",
            "A new empty message; the restored draft is kept aside under another name (see Drafts)",
            layout=widgets.Layout(width="auto", display="none"),
        )
        self.fresh.on_click(self._guard(lambda _b: on_fresh()))
        self.box = widgets.HBox(
            [self.notice, self.fresh],
            layout={"display": "none", "align_items": "center"},
            _dom_classes=("pgmx-notice",),
        )
        self.toggle = parts.button(
            "Drafts", "pgmx-drafts", "Browse, open and delete the drafts kept in the drafts folder"
        )
        self.toggle.on_click(self._guard(lambda _b: self.show_panel()))
        self.panel = widgets.VBox(layout={"display": "none"}, _dom_classes=("pgmx-drafts-panel",))
        self._built = False
        self._armed: str | None = None

    def say(self, html: str, *, fresh: bool = False) -> None:
        """Show a notice (already HTML-escaped), with Start fresh if asked; ``""`` hides it."""
        self.notice.value = html
        self.fresh.layout.display = "" if fresh and html else "none"
        self.box.layout.display = "" if html else "none"

    def add(self, html: str) -> None:
        """Add a line to the notice, keeping what it says (and its Start fresh)."""
        old = self.notice.value
        if html not in old:
            self.say(f"{old}<br>{html}" if old else html, fresh=self.fresh.layout.display != "none")

    def show_panel(self) -> None:
        """Open the panel (or close it, when open) with the list read again from the folder."""
        if self._built and self.panel.layout.display != "none":
            self.panel.layout.display = "none"
            return
        if not self._built:
            self._build()
        self.refresh()
        self.panel.layout.display = ""

    def _build(self) -> None:
        self.list = widgets.Dropdown(options=[], layout={"width": "460px"}, _dom_classes=("pgmx-drafts-list",))
        self.list.observe(lambda _change: self._disarm(), names="value")
        self.open = self._parts.button("Open", "pgmx-draft-open", "Show this draft here")
        self.open.on_click(self._guard(lambda _b: self._open_clicked()))
        self.delete = self._parts.button("Delete", "pgmx-draft-delete", "Delete this draft (asks for a second click)")
        self.delete.on_click(self._guard(lambda _b: self._delete_clicked()))
        self.status = self._parts.html("pgmx-drafts-status")
        self.panel.children = [
            widgets.HBox([self.list, self.open, self.delete], layout={"align_items": "center"}),
            self.status,
        ]
        self._built = True

    def refresh(self) -> None:
        entries = draft_entries(self._folder(), self._kind)
        self._entries = {entry.name: entry for entry in entries}
        self.list.options = [(entry.label, entry.name) for entry in entries]
        empty = not entries
        self.open.disabled = self.delete.disabled = empty
        self.status.value = f"<i>No drafts in {esc(self._folder() or '')}.</i>" if empty else ""
        self._disarm()

    def _disarm(self) -> None:
        self._armed = None
        if self._built:
            self.delete.description = "Delete"
            self.delete.button_style = ""

    def _chosen(self) -> DraftInfo:
        name = self.list.value
        if name is None or name not in self._entries:
            raise ValueError("choose a draft first")
        return self._entries[name]

    def _open_clicked(self) -> None:
        entry = self._chosen()
        self._on_open(entry, read_draft(entry.path))
        self.status.value = f"Opened “{esc(entry.name)}”."

    def _delete_clicked(self) -> None:
        entry = self._chosen()
        if self._armed != entry.name:  # a second click deletes: nothing goes on one slip
            self._armed = entry.name
            self.delete.description = "Delete? click again"
            self.delete.button_style = "danger"
            self.status.value = f"Click again to delete the draft “{esc(entry.name)}” for good."
            return
        delete_draft(entry.name, self._folder())
        self.refresh()
        self.status.value = f"Deleted the draft “{esc(entry.name)}”."


class OpenPanel:
    """An Open button (``pgmx-open``) that shows a panel (``pgmx-open-panel``): a path on the
    server (``pgmx-open-path``, Open file ``pgmx-open-file``) and the example picker.

    ``load`` opens a path and returns the file's ``duplicate-key`` warnings, which the status
    names: the message shows the last value of such a name, and the earlier ones are gone."""

    def __init__(self, area: ErrorArea, parts: Parts, load: Callable[[Path], Sequence[Finding]]) -> None:
        self._load, self._guard, self._parts = load, area.guard, parts
        self.toggle = parts.button("Open", "pgmx-open", "Open a message from a file on the server or from the examples")
        self.toggle.on_click(self._guard(lambda _b: self.show_panel()))
        self.panel = widgets.VBox(layout={"display": "none"}, _dom_classes=("pgmx-open-panel",))
        self._built = False

    def show_panel(self) -> None:
        if self._built:
            self.panel.layout.display = "none" if self.panel.layout.display != "none" else ""
            return
        self.path = OrderedText(
            placeholder="path/to/message.json (on the server)",
            layout={"width": "340px"},
            _dom_classes=("pgmx-open-path",),
        )
        button = self._parts.button("Open file", "pgmx-open-file", "Open the file at this path on the server")
        button.on_click(self._guard(lambda _b: self.open_file()))
        self.status = self._parts.html("pgmx-open-status")
        self.loader = ExampleLoader(self._load)
        self.panel.children = [
            widgets.HBox([self.path, button, self.status], layout={"align_items": "center"}),
            self.loader,
        ]
        self._built = True
        self.panel.layout.display = ""

    def open_file(self) -> Path:
        typed = self.path.value.strip()
        if not typed:
            raise ValueError("type the path of a .json file on the server")
        path = Path(typed).expanduser()
        notes = self._load(path)
        said = f"Opened <code>{esc(path)}</code>"
        if notes:
            words = " ".join(f"{note.json_path}: {note.message}" for note in notes)
            said += f' <span class="pgmx-open-warning" style="color:#ef6c00">Warning: {esc(words)}</span>'
        self.status.value = said
        return path
