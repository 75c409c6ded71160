"""The repository's example messages and transcripts, and a picker that loads them.

:func:`~pgm_explore.widgets._dialogue.example_picker`, which knows the composer and the builder,
is beside the DialogueBuilder: this module knows neither.

The files live in the repository's ``data/`` folder, not in the package: they are found
next to the package in a checkout (or an editable install), through ``$PGM_EXPLORE_DATA``,
or in the current folder or one of its parents. An installed package without the
repository finds none, and the picker says so instead of failing.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import ipywidgets as widgets

from pgm_explore._display import esc
from pgm_explore.widgets._base import ErrorArea
from pgm_explore.widgets._ordered import OrderedButton

__all__ = ["ExampleLoader", "data_dir", "example_files", "is_transcript"]

ENV_VAR = "PGM_EXPLORE_DATA"


def data_dir() -> Path | None:
    """The ``data/`` folder holding ``examples/`` and ``transcripts/``, or None."""
    configured = os.environ.get(ENV_VAR)
    candidates = [Path(configured).expanduser()] if configured else []
    candidates.append(Path(__file__).resolve().parents[2] / "data")
    here = Path.cwd().resolve()
    candidates += [folder / "data" for folder in (here, *here.parents)]
    return next((c for c in candidates if (c / "examples").is_dir() or (c / "transcripts").is_dir()), None)


def example_files(*, transcripts: bool = True) -> dict[str, Path]:
    """Example messages (``examples/<type>/valid|invalid/*.json``) and, if asked, transcripts
    (``transcripts/**/*.jsonl`` and JSON arrays), by a label relative to ``data/``.

    Sidecars (``*.expected.json``) and ``examples/malformed`` (not messages of a known type)
    are left out.
    """
    root = data_dir()
    if root is None:
        return {}
    found: dict[str, Path] = {}
    if transcripts:
        for path in sorted((root / "transcripts").rglob("*")):
            if path.suffix in (".jsonl", ".json") and not path.name.endswith(".expected.json"):
                found[path.relative_to(root).as_posix()] = path
    for path in sorted((root / "examples").glob("*/*/*.json")):
        if not path.name.endswith(".expected.json") and path.parts[-3] != "malformed":
            found[path.relative_to(root).as_posix()] = path
    return found


def is_transcript(path: Path) -> bool:
    return path.suffix == ".jsonl" or "transcripts" in path.parts


class ExampleLoader(widgets.VBox):
    """A dropdown of the examples (and, with ``transcripts=True``, the transcripts) with a Load
    button that passes the chosen file's path to ``load``.

    :func:`example_picker` makes one for a MessageComposer (``load`` is its ``load``) or a
    DialogueBuilder (transcripts become its messages, example messages go to its composer).
    """

    def __init__(self, load: Callable[[Path], object], *, transcripts: bool = False, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self._load = load
        self._area = ErrorArea(("pgmx-error", "pgmx-loader-error"))
        self.files = example_files(transcripts=transcripts)
        options: list[tuple[str, Path | None]] = [("— choose an example —", None)]
        options += [(label, path) for label, path in self.files.items()]
        self.dropdown = widgets.Dropdown(
            options=options, value=None, layout={"width": "460px"}, _dom_classes=("pgmx-examples",)
        )
        self.button = OrderedButton(description="Load", tooltip="Load the chosen file", _dom_classes=("pgmx-load",))
        self.button.on_click(self._area.guard(lambda _button: self.load()))
        self.status = widgets.HTML(_dom_classes=("pgmx-loader-status",))
        if not self.files:
            self.status.value = (
                "No examples found: they come with the repository (data/). Set PGM_EXPLORE_DATA to its data folder."
            )
            self.dropdown.disabled = self.button.disabled = True
        self.children = [widgets.HBox([self.dropdown, self.button, self.status]), self._area.box]
        self.add_class("pgmx-loader")

    @property
    def errors(self) -> list[BaseException]:
        return self._area.errors

    def load(self, choice: str | Path | None = None) -> Path:
        """Load ``choice`` (a label of :attr:`files`, a path, or the dropdown's value)."""
        if choice is None:
            choice = self.dropdown.value
        if choice is None:
            raise ValueError("choose an example first")
        path = self.files.get(choice, Path(choice)) if isinstance(choice, str) else Path(choice)
        self._load(path)
        self.status.value = f"Loaded <code>{esc(path.name)}</code>"
        return path
