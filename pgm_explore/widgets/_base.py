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

# A kernel restart leaves a widget's views without their model: ipywidgets then marks every view
# (jupyter-widgets-disconnected) with a broken-link icon, one per widget, hundreds in a composer. Inside
# ours the icons go, and the outermost says in words what to do.
CSS = """<style>
.pgmx-composer, .pgmx-dialogue {font-size: 13px}
.pgmx-body {margin-left: 14px; padding-left: 8px; border-left: 1px dotted #bbb}
.pgmx-field.pgmx-invalid {border-left: 3px solid #c62828; padding-left: 4px; background: #fff6f6}
.pgmx-field.pgmx-invalid.pgmx-severity-warning {border-left-color: #ef6c00; background: #fffaf2}
.pgmx-field.pgmx-invalid .pgmx-field.pgmx-invalid {background: transparent}
.pgmx-label.pgmx-absent {color: #999; font-style: italic}
.pgmx-error {color: #b71c1c}
.pgmx-table {border-collapse: collapse; font-size: 12px}
table.pgmx-table.pgmx-table th, table.pgmx-table.pgmx-table td {border: 1px solid #ccc; padding: 2px 6px;
  text-align: left; vertical-align: top}
.pgmx-json textarea {font-family: monospace; font-size: 12px}
.pgmx-long-text textarea {font-family: var(--jp-ui-font-family, sans-serif); font-size: 13px}
.pgmx-raw input, .pgmx-raw textarea {font-family: monospace; background: #fff8e1}
.pgmx-hidden {display: none !important}
.jupyter-widgets.pgmx-w-label {min-width: 170px}
.jupyter-widgets.pgmx-w-line {flex-flow: row wrap; align-items: center}
.jupyter-widgets.pgmx-w-row {align-items: flex-start}
.jupyter-widgets.pgmx-w-include {width: 20px}
.jupyter-widgets.pgmx-w-text {width: 50%}
.jupyter-widgets.pgmx-w-number {width: 14em}
.jupyter-widgets.pgmx-w-textarea {width: 60%}
.jupyter-widgets.pgmx-w-auto {width: auto}
.jupyter-widgets.pgmx-w-icon {width: 32px}
.jupyter-widgets.pgmx-w-wide {width: 100%}
.pgmx-number input {font-family: monospace}
.pgmx-label .widget-html-content {line-height: 1.5; white-space: normal; padding: 3px 0}
.pgmx-label .pgmx-name {cursor: help}
.pgmx-constraint {color: #666; margin-left: 6px; font-size: 12px; white-space: nowrap}
.pgmx-help {display: inline; margin-left: 4px}
.pgmx-help > summary {display: inline-block; cursor: pointer; list-style: none; color: #1565c0; width: 14px;
  height: 14px; line-height: 13px; border: 1px solid #90caf9; border-radius: 50%; text-align: center;
  font: italic bold 10px serif; vertical-align: 1px}
.pgmx-help > summary::-webkit-details-marker {display: none}
.pgmx-help[open] > summary {background: #e3f2fd; border-radius: 3px}
.pgmx-help-text {display: block; max-width: 60em; margin: 2px 0 4px; padding: 4px 8px; color: #333;
  background: #f5f9ff; border-left: 3px solid #90caf9; font-size: 12px}
.pgmx-help-text ul {margin: 4px 0 0; padding-left: 18px}
/* An open (i) gives its text the width of the line; the editor follows on the next line. */
.pgmx-row > .pgmx-label:has(details[open]) {flex: 1 1 calc(100% - 32px); max-width: calc(100% - 32px)}
.pgmx-row:has(> .pgmx-label details[open]) > .pgmx-input {margin-left: 194px}
/* What goes under a field's line takes the whole width: its members, its JSON, its findings. */
.pgmx-row > .pgmx-finding, .pgmx-row > .pgmx-parse-error,
.pgmx-row > .widget-textarea {flex: 1 0 100%; max-width: 100%; box-sizing: border-box}
.pgmx-row > .pgmx-body {flex: 1 0 calc(100% - 14px); max-width: calc(100% - 14px); box-sizing: border-box}
.pgmx-item-up, .pgmx-item-down, .pgmx-item-remove {flex-shrink: 0}
.pgmx-items > .pgmx-row {flex: 1 1 auto; min-width: 0}
.pgmx-composer .jupyter-widgets-disconnected::before, .pgmx-dialogue .jupyter-widgets-disconnected::before {content: none; display: none}
.pgmx-composer.jupyter-widgets-disconnected::before, .pgmx-dialogue.jupyter-widgets-disconnected::before {
  content: "The kernel behind this widget is gone (restarted or shut down): run the cell again.";
  display: block; font: 600 13px var(--jp-ui-font-family, sans-serif); color: #b71c1c;
  background: #fff3f3; border: 1px solid #c62828; padding: 4px 8px; margin-bottom: 4px}
.pgmx-composer .pgmx-composer.jupyter-widgets-disconnected::before,
.pgmx-dialogue .pgmx-composer.jupyter-widgets-disconnected::before {content: none; display: none}
.pgmx-composer.jupyter-widgets-disconnected > *, .pgmx-dialogue.jupyter-widgets-disconnected > * {opacity: 0.45; pointer-events: none}
/* The app page (pgm-explore app): one line on the page, none on the composer inside it. */
.pgmx-app.jupyter-widgets-disconnected::before {
  content: "The kernel behind this page is gone (restarted or shut down): reload the page.";
  display: block; font: 600 13px var(--jp-ui-font-family, sans-serif); color: #b71c1c;
  background: #fff3f3; border: 1px solid #c62828; padding: 4px 8px; margin-bottom: 4px}
.pgmx-app .jupyter-widgets-disconnected::before, .pgmx-app .pgmx-composer.jupyter-widgets-disconnected::before {content: none; display: none}
</style>"""


def style_widget(make: Callable[..., Any] | None = None) -> widgets.HTML:
    """The CSS, in a widget that takes no room (a ``<style>`` applies wherever it sits, hidden
    too); ``make`` is a form context's, whose layout and style are shared."""
    if make is None:
        return widgets.HTML(CSS, _dom_classes=("pgmx-hidden",))
    html: widgets.HTML = make(widgets.HTML, value=CSS, _dom_classes=("pgmx-hidden",))
    return html


class ErrorArea:
    """An HTML area (class ``pgmx-error``) listing exceptions raised in callbacks, and the list."""

    def __init__(self, classes: tuple[str, ...] = ("pgmx-error",)) -> None:
        self.errors: list[BaseException] = []
        self.html = widgets.HTML(_dom_classes=classes)
        self._dismiss: widgets.Button | None = None
        self.box = widgets.VBox([self.html], layout={"display": "none"})

    @property
    def dismiss(self) -> widgets.Button:
        """The button that hides the area (made with the first error: one widget fewer to send)."""
        if self._dismiss is None:
            self._dismiss = widgets.Button(
                description="Dismiss", layout={"width": "auto"}, _dom_classes=("pgmx-dismiss",)
            )
            self._dismiss.on_click(lambda _button: self.clear())
        return self._dismiss

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
        if len(self.box.children) == 1:
            self.box.children = [self.html, self.dismiss]
        self.box.layout.display = ""

    def clear(self) -> None:
        """Hide the area (``errors`` keeps the history)."""
        self.html.value = ""
        self.box.layout.display = "none"
