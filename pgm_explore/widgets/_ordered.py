"""Clicks that act after what was typed before them: :class:`OrderedButton`, :class:`OrderedText`.

Why this exists (ipywidgets 8, ``@jupyter-widgets/base`` ``WidgetModel.sync``): the browser
sends a text box's value at every keystroke, but holds a model's next update back until the
kernel has reported idle for the previous one (the "message throttle": one buffered update per
model), whereas a button's click is a custom message sent at once. With a busy kernel (a slow
observer; a long handler) the kernel took Save's click before the last keystrokes, and wrote
the document as it was a keystroke or more ago. JupyterLab 4.6 makes the order looser still: it
sends the widgets' messages on a kernel subshell, but a model's first message to the main
shell, so a click and a text box's update can even be handled by two threads at once.

The one order the browser keeps is that of one model's own updates (the throttle sends the next
only after the kernel has taken the previous). So a click from the browser is not acted on at
once. The kernel asks every text box that sent a value since the last click to echo a token
through its own model: a front-end link (:func:`ipywidgets.jsdlink`) from a ``ping`` model to
the box's ``_pgmx_echo`` trait, which the browser sets and syncs like a keystroke, behind (or
merged with) any value it still holds back. When every echo is back, the kernel has every value
typed before the click, and the click acts on what the person saw. A click made in Python
(``button.click()``, tests, scripts) acts at once, and so does a click when no box was typed
into: there is nothing to wait for.
"""

from __future__ import annotations

import itertools
import weakref
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import ipywidgets as widgets
from ipywidgets.widgets.widget_description import DescriptionStyle
from traitlets import Int

__all__ = [
    "OrderedButton",
    "OrderedCombobox",
    "OrderedText",
    "OrderedTextarea",
    "after_browser",
    "sent_from_browser",
]


class _Echo:
    """What the ordered text boxes share: noticing values typed and tokens echoed."""

    def set_state(self, sync_data: dict[str, Any]) -> None:
        # Only the browser calls set_state: a value typed, or an echo.
        super().set_state(sync_data)  # type: ignore[misc]  # the widget class this is mixed into has it
        if "_pgmx_echo" in sync_data:  # with or without a value: the box has sent everything
            _typed.discard(self)
            _echoed(self, int(sync_data["_pgmx_echo"]))
        elif "value" in sync_data:
            sent_from_browser(self)

    def close(self) -> None:
        # A box closed while a click waits for its echo will never answer: the click goes on.
        super().close()  # type: ignore[misc]  # as above
        _typed.discard(self)
        _echoed(self, None)


def _echo_trait() -> Int:
    # On each widget class: traitlets names only the traits of classes it builds.
    return Int(0, help="The last token the browser echoed through this box's model.").tag(sync=True)


class OrderedText(_Echo, widgets.Text):
    """A ``Text`` whose values a click from the browser waits for (the browser's ``TextModel``)."""

    _pgmx_echo = _echo_trait()


class OrderedCombobox(_Echo, widgets.Combobox):
    """A ``Combobox`` (a text box with suggestions) whose values a click from the browser waits for."""

    _pgmx_echo = _echo_trait()


class OrderedTextarea(_Echo, widgets.Textarea):
    """A ``Textarea`` whose values a click from the browser waits for (the browser's ``TextareaModel``)."""

    _pgmx_echo = _echo_trait()


_typed: weakref.WeakSet[widgets.Widget] = weakref.WeakSet()
"""Boxes the browser sent a value from since their last echo."""


def sent_from_browser(box: widgets.Widget) -> None:
    """The browser sent something typed in ``box`` (an ordered box: ``_pgmx_echo`` synced): the
    next click from the browser waits for its echo."""
    _typed.add(box)


@dataclass
class _Wait:
    token: int
    boxes: set[int]
    action: Callable[[], object]
    links: list[widgets.Widget] = field(default_factory=list)


_tokens = itertools.count(1)
_waits: list[_Wait] = []
_ping: widgets.IntText | None = None


def _ping_model() -> widgets.IntText:
    global _ping
    if _ping is None or _ping.comm is None:  # the first use, or after Widget.close_all()
        _ping = widgets.IntText(0, layout=widgets.Layout(), style=DescriptionStyle())
    return _ping


def after_browser(action: Callable[[], object]) -> None:
    """Run ``action`` once the browser has sent every value typed before now (see the module)."""
    boxes = [box for box in list(_typed) if box.comm is not None]
    if not boxes:
        action()
        return
    token = next(_tokens)
    ping = _ping_model()
    ping.value = token
    wait = _Wait(token, {id(box) for box in boxes}, action)
    _waits.append(wait)
    for box in boxes:
        _typed.discard(box)
        wait.links.append(widgets.jsdlink((ping, "value"), (box, "_pgmx_echo")))


def _echoed(box: widgets.Widget, token: int | None) -> None:
    """``box`` has sent everything up to ``token`` (None: it is gone, and will send nothing more)."""
    for wait in [w for w in _waits if token is None or w.token <= token]:
        wait.boxes.discard(id(box))
    while _waits and not _waits[0].boxes:  # in the order of the clicks
        done = _waits.pop(0)
        for link in done.links:
            link.close()
        done.action()


class OrderedButton(widgets.Button):
    """A button whose clicks in the browser act after what was typed before them.

    The same ``ButtonModel`` in the browser; only the kernel's handling of a click differs.
    """

    def _handle_button_msg(self, _widget: Any, content: dict[str, Any], buffers: Any) -> None:
        if content.get("event", "") == "click":
            after_browser(self.click)
