"""What the composers share: the error area that shows every callback's exception, and the CSS.

Jupyter shows nothing when a widget callback raises (ipywidgets logs it to the kernel log,
which nobody reads), so every callback goes through :meth:`ErrorArea.guard`: the exception
is recorded in ``errors`` and shown in the widget, with its traceback.
"""

from __future__ import annotations

import functools
import traceback
from collections.abc import Callable
from typing import Any

import ipywidgets as widgets

from pgm_explore._display import esc

__all__ = ["CSS", "ErrorArea", "style_widget"]

CSS = """<style>
.pgmx-composer, .pgmx-dialogue {font-size: 13px}
.pgmx-body {margin-left: 14px; padding-left: 8px; border-left: 1px dotted #bbb}
.pgmx-field.pgmx-invalid {border-left: 3px solid #c62828; padding-left: 4px; background: #fff6f6}
.pgmx-field.pgmx-invalid.pgmx-severity-warning {border-left-color: #ef6c00; background: #fffaf2}
.pgmx-field.pgmx-invalid .pgmx-field.pgmx-invalid {background: transparent}
.pgmx-label.pgmx-absent {color: #999; font-style: italic}
.pgmx-error {color: #b71c1c}
.pgmx-table {border-collapse: collapse; font-size: 12px}
.pgmx-table th, .pgmx-table td {border: 1px solid #ccc; padding: 2px 6px; text-align: left; vertical-align: top}
.pgmx-json textarea {font-family: monospace; font-size: 12px}
.pgmx-raw input, .pgmx-raw textarea {font-family: monospace; background: #fff8e1}
.pgmx-composer .jupyter-widgets-disconnected::before, .pgmx-dialogue .jupyter-widgets-disconnected::before {content: none; display: none}
.pgmx-composer.jupyter-widgets-disconnected::before, .pgmx-dialogue.jupyter-widgets-disconnected::before {
  content: "The kernel behind this widget is gone (restarted or shut down): run the cell again.";
  display: block; font: 600 13px var(--jp-ui-font-family, sans-serif); color: #b71c1c;
  background: #fff3f3; border: 1px solid #c62828; padding: 4px 8px; margin-bottom: 4px}
.pgmx-composer .pgmx-composer.jupyter-widgets-disconnected::before,
.pgmx-dialogue .pgmx-composer.jupyter-widgets-disconnected::before {content: none; display: none}
.pgmx-composer.jupyter-widgets-disconnected > *, .pgmx-dialogue.jupyter-widgets-disconnected > * {opacity: 0.45; pointer-events: none}
</style>"""


def style_widget() -> widgets.HTML:
    return widgets.HTML(CSS, layout={"height": "0px", "margin": "0px"})


class ErrorArea:
    """An HTML area (class ``pgmx-error``) listing exceptions raised in callbacks, and the list."""

    def __init__(self, classes: tuple[str, ...] = ("pgmx-error",)) -> None:
        self.errors: list[BaseException] = []
        self.html = widgets.HTML(_dom_classes=classes)
        self.dismiss = widgets.Button(description="Dismiss", layout={"width": "auto"}, _dom_classes=("pgmx-dismiss",))
        self.dismiss.on_click(lambda _button: self.clear())
        self.box = widgets.VBox([self.html, self.dismiss], layout={"display": "none"})

    def guard(self, function: Callable[..., Any]) -> Callable[..., Any]:
        """``function``, except that an exception is recorded and shown instead of escaping."""

        @functools.wraps(function)
        def guarded(*args: Any, **kwargs: Any) -> Any:
            try:
                return function(*args, **kwargs)
            except Exception as exc:
                self.record(exc)
                return None

        return guarded

    def record(self, exc: BaseException) -> None:
        self.errors.append(exc)
        trace = "".join(traceback.format_exception(exc))
        more = f" ({len(self.errors)} errors so far)" if len(self.errors) > 1 else ""
        self.html.value = (
            f"<b>Error in a callback: {esc(type(exc).__name__)}: {esc(exc)}</b>{esc(more)}"
            f"<details><summary>Traceback</summary><pre>{esc(trace)}</pre></details>"
        )
        self.box.layout.display = ""

    def clear(self) -> None:
        """Hide the area (``errors`` keeps the history)."""
        self.html.value = ""
        self.box.layout.display = "none"
