"""Undo and redo from the keyboard in a composer: :class:`UndoKeys`.

Ctrl-Z (Cmd-Z on macOS) undoes one composer step, Shift-Ctrl-Z (Shift-Cmd-Z) and Ctrl-Y redo it,
while the focus is anywhere in the composer. ipywidgets has no key events, so this is a small
front-end widget (anywidget; its JavaScript, ``_keys.js``, ships in the package and travels in the
widget's state: nothing is fetched). It sits in the composer's layout, hidden, and listens on the
window in the capture phase, before the text box and JupyterLab see the keys; it stops the browser's
own undo of the box's typing and sends the key to the kernel.

Keys pressed outside its composer are left alone: in a notebook cell, in a Reply composer shown
inside it (that one's own keys answer there), and in the boxes of ``SKIP``, whose typing is not a
composer step until it is applied: text that becomes a document when the box is left (the JSON
view, open properties, raw values) and the file names of Save and Open. There Ctrl-Z stays the
browser's own undo of that box's typing.

Order: a keystroke's value and the key travel to the kernel as messages of two widget models, and
the browser may hold a text box's latest value back until the kernel has taken the one before
(``_ordered``). So the kernel acts on the key only once every value typed before it has arrived
(:func:`~pgm_explore.widgets._ordered.after_browser`): the undo applies to what the person sees.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import anywidget
from traitlets import Unicode

from pgm_explore.widgets._form_context import JSON_TEXT
from pgm_explore.widgets._ordered import after_browser

__all__ = ["SKIP", "UndoKeys"]

SKIP = f".{JSON_TEXT}, .pgmx-save-path, .pgmx-save-name, .pgmx-open-panel, .pgmx-drafts-panel"
"""Where the keys keep their browser meaning: boxes whose typing is not a composer step yet."""


class UndoKeys(anywidget.AnyWidget):
    """Ctrl/Cmd-Z calls ``undo``, Shift-Ctrl/Cmd-Z and Ctrl-Y call ``redo``, when pressed in the
    element of class ``scope`` that holds this widget (see the module)."""

    _esm = Path(__file__).with_name("_keys.js")
    scope = Unicode(".pgmx-composer", help="CSS selector of the element whose keys these are.").tag(sync=True)
    skip = Unicode(SKIP, help="CSS selector of the parts where the browser keeps its own undo.").tag(sync=True)

    def __init__(self, undo: Callable[[], object], redo: Callable[[], object], **kwargs: Any) -> None:
        kwargs.setdefault("_dom_classes", ("pgmx-hidden",))
        super().__init__(**kwargs)
        self._actions = {"undo": undo, "redo": redo}
        self.on_msg(self._message)

    def _message(self, _widget: Any, content: Any, _buffers: Any) -> None:
        action = self._actions.get(str(content.get("key"))) if isinstance(content, dict) else None
        if action is not None:
            after_browser(action)
