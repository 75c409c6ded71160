"""WorkFolderFiles: a composer's Save and Open on a page served to others, by name in one work folder.

On the app page (``pgm-explore app``) the person runs no code, and nothing typed there may name a
file elsewhere on the machine: Save writes a name in the work folder, Open reads a file of it
(listed, or typed by name), and every name goes through :mod:`pgm_explore._workfolder`, which
refuses what leads out (``../``, ``/``, ``~``, links that leave the folder, names a file system
folds together). Files from elsewhere come in through the browser (Upload) and go out through it
(the composer's Download link); the repository's examples are listed too.

The seam with the composer is this class's constructor: three callables, and nothing of the
composer's own state::

    WorkFolderFiles(folder, text=..., load=..., name=...)

- ``text()``: the text Save writes (the composer's JSON view);
- ``load(document)``: show a message opened or uploaded (the composer's ``load``); the file's
  ``duplicate-key`` warnings are shown here, beside "Opened";
- ``name()``: the name Save uses when none is typed (``<id>.json``);
- and, optionally, ``saved(path)`` after a save (the composer shows every finding).

The widget is one line (Open, the name box, Save, a status; class ``pgmx-files``) and the Open
panel below it (``pgmx-open-panel``), built when first opened.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import ipywidgets as widgets

from pgm_explore._display import esc
from pgm_explore._files import digest, holds
from pgm_explore._workfolder import NameRefused, WorkFolder
from pgm_explore.validation import Finding
from pgm_explore.widgets._base import ErrorArea
from pgm_explore.widgets._examples import ExampleLoader
from pgm_explore.widgets._filebar import Parts, parse_document
from pgm_explore.widgets._ordered import OrderedCombobox, OrderedText

__all__ = ["WorkFolderFiles"]

_RED = '<span style="color:#c62828">{}</span>'


def _warned(notes: tuple[Finding, ...]) -> str:
    if not notes:
        return ""
    words = " ".join(f"{note.json_path}: {note.message}" for note in notes)
    return f' <span class="pgmx-open-warning" style="color:#ef6c00">Warning: {esc(words)}</span>'


class WorkFolderFiles(widgets.VBox):
    """Save and Open by name in ``folder``, Upload, and the examples (see the module)."""

    def __init__(
        self,
        folder: WorkFolder,
        *,
        text: Callable[[], str],
        load: Callable[[dict[str, Any]], object],
        name: Callable[[], str],
        saved: Callable[[Path], object] | None = None,
        area: ErrorArea | None = None,
        parts: Parts | None = None,
        **kwargs: Any,
    ) -> None:
        super().__init__(**kwargs)
        self.folder = folder
        self._text, self._load, self._name, self._saved = text, load, name, saved
        self._area = area or ErrorArea()
        self._parts = parts or Parts()
        self._confirm: str | None = None
        self._written: dict[str, str] = {}  # name -> digest of what this widget saved there last
        guard = self._area.guard
        self.toggle = self._parts.button(
            "Open", "pgmx-open", "Open a message: a file of the work folder, one from your computer, or an example"
        )
        self.toggle.on_click(guard(lambda _b: self.show_panel()))
        # The name goes to the kernel once, when the box is left (Save waits for it: _ordered).
        self.name = OrderedText(
            placeholder="name (in the work folder)",
            continuous_update=False,
            layout={"width": "240px"},
            _dom_classes=("pgmx-save-name",),
        )
        self.name.observe(lambda _change: self._disarm(), names="value")
        self.save = self._parts.button(
            "Save", "pgmx-save", "Save the JSON below in the work folder under this name (empty: <id>.json)"
        )
        self.save.on_click(guard(lambda _b: self.save_clicked()))
        self.status = self._parts.html("pgmx-files-status")
        self.panel = widgets.VBox(layout={"display": "none"}, _dom_classes=("pgmx-open-panel",))
        self._built = False
        line = widgets.HBox(
            [self.toggle, self.name, self.save, self.status],
            layout={"align_items": "center", "flex_flow": "row wrap"},
        )
        self.children = [line, self.panel]
        self.add_class("pgmx-files")

    @property
    def errors(self) -> list[BaseException]:
        return self._area.errors

    # -- Open -----------------------------------------------------------------------------------

    def show_panel(self) -> None:
        """Open the panel with the folder's files listed again (or close it, when open)."""
        if self._built and self.panel.layout.display != "none":
            self.panel.layout.display = "none"
            return
        if not self._built:
            self._build()
        self.files.options = self.folder.names()
        self.panel.layout.display = ""

    def _build(self) -> None:
        guard = self._area.guard
        self.files = OrderedCombobox(
            placeholder="a file of the work folder",
            ensure_option=False,
            layout={"width": "300px"},
            _dom_classes=("pgmx-open-name",),
        )
        button = self._parts.button("Open file", "pgmx-open-file", "Open the file of the work folder of this name")
        button.on_click(guard(lambda _b: self.open_clicked()))
        self.upload = widgets.FileUpload(
            accept=".json",
            multiple=False,
            description="Upload",
            tooltip="Open a .json file from your computer",
            _dom_classes=("pgmx-open-upload",),
        )
        self.upload.observe(guard(lambda change: self._uploaded(change["new"])), names="value")
        self.open_status = self._parts.html("pgmx-open-status")
        self.loader = ExampleLoader(self._open_example)
        where = esc(self.folder.path.name or str(self.folder.path))
        self.panel.children = [
            widgets.HTML(
                f"<small>Save and Open use the work folder (<b>{where}</b>) by name only; a file from "
                "elsewhere comes in through Upload, and goes out through Download.</small>"
            ),
            widgets.HBox([self.files, button, self.upload, self.open_status], layout={"align_items": "center"}),
            self.loader,
        ]
        self._built = True

    def open_name(self, typed: str) -> str | None:
        """Open the file of the work folder that ``typed`` names; returns its name, or None once
        the status says why not."""
        try:
            name, data = self.folder.read(typed)
            document, notes = parse_document(data, name)
        except (NameRefused, ValueError) as exc:
            self.open_status.value = _RED.format(f"Not opened: {esc(exc)}.")
            return None
        except OSError as exc:
            self.open_status.value = _RED.format(f"Not opened: {esc(exc.strerror or exc)}.")
            return None
        self._load(document)
        self.open_status.value = f"Opened <code>{esc(name)}</code>{_warned(notes)}"
        return name

    def open_clicked(self) -> str | None:
        typed = self.files.value
        if not typed.strip():
            self.open_status.value = _RED.format("Type or pick the name of a file of the work folder.")
            return None
        return self.open_name(typed)

    def _uploaded(self, files: Any) -> None:
        if not files:
            return
        for file in files:
            name = str(file["name"])
            try:
                document, notes = parse_document(bytes(file["content"]), name)
            except ValueError as exc:
                self.open_status.value = _RED.format(f"Not opened: {esc(exc)}.")
                continue
            self._load(document)
            self.open_status.value = f"Opened <code>{esc(name)}</code> from your computer{_warned(notes)}"
        self.upload.value = ()  # (so that the same file can come again)

    def _open_example(self, path: Path) -> None:
        document, notes = parse_document(path.read_bytes(), path.name)
        self._load(document)
        self.open_status.value = f"Opened the example <code>{esc(path.name)}</code>{_warned(notes)}"

    # -- Save -----------------------------------------------------------------------------------

    def save_as(self, typed: str, *, overwrite: bool = False) -> Path | None:
        """Save under the name ``typed`` (empty: the composer's name); returns the file, or None
        once the status says why not or asks to confirm an overwrite."""
        typed = typed.strip() or self._name()
        try:
            target = self.folder.target(typed)
        except NameRefused as exc:
            self._disarm()
            self.status.value = _RED.format(f"Not saved: {esc(exc)}.")
            return None
        text = self._text()
        replace = overwrite or self._confirm == target.name or self._still_ours(target)
        try:
            written = self.folder.write(target.name, text, overwrite=replace)
        except FileExistsError:
            self._confirm = target.name
            self.save.description = "Overwrite?"
            self.save.button_style = "danger"
            self.status.value = (
                f"<code>{esc(target.name)}</code> exists in the work folder: click <b>Overwrite?</b> to "
                "replace it, or type another name."
            )
            return None
        except (NameRefused, OSError) as exc:
            self._disarm()
            reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else exc
            self.status.value = _RED.format(f"Not saved: {esc(reason)}.")
            return None
        self._disarm()
        self._written[written.name] = digest(text.encode("utf-8"))
        self.status.value = f"Saved <code>{esc(written.name)}</code> in the work folder"
        if self._built:
            self.files.options = self.folder.names()
        if self._saved is not None:
            self._saved(written)
        return written

    def save_clicked(self) -> Path | None:
        return self.save_as(self.name.value)

    def _still_ours(self, target: Path) -> bool:
        return holds(target, self._written.get(target.name))

    def _disarm(self) -> None:
        self._confirm = None
        if self.save.description != "Save":
            self.save.description = "Save"
            self.save.button_style = ""
