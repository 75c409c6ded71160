"""A password box whose text is never widget state: :class:`SecretBox`.

Why (issue 22's follow-up): an ipywidgets ``Password`` box keeps what is typed in its model's
``value``, and JupyterLab ("Save Widget State Automatically"), Voilà and nbconvert write every
model's state into the notebook, so a token typed and saved before Connect stayed in the file.
Here the text lives only in the page's ``<input>`` and reaches the kernel as a message (anywidget;
its JavaScript, ``_secret.js``, ships in the package): the model holds the label and placeholder,
nothing a saved notebook could leak. The kernel keeps the latest text sent (:attr:`typed`) until
:meth:`take` or :meth:`clear`, which empty the box in the page too.

Order: the text travels as a message of this box's own model, so a click waits for it as for a
typed value (``_ordered``): Connect sends what the person saw in the box.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import anywidget
from traitlets import Unicode

from pgm_explore.widgets._ordered import _Echo, _echo_trait, sent_from_browser

__all__ = ["SecretBox"]


class SecretBox(_Echo, anywidget.AnyWidget):
    """A password box: what is typed goes to the kernel (:attr:`typed`), never into the widget's
    state (see the module)."""

    _esm = Path(__file__).with_name("_secret.js")
    description = Unicode("", help="The label before the box.").tag(sync=True)
    placeholder = Unicode("", help="The grey text of an empty box.").tag(sync=True)
    _pgmx_echo = _echo_trait()

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self._typed = ""
        self.on_msg(self._message)

    @property
    def typed(self) -> str:
        """What the box holds in the page (as last sent), kept in the kernel only."""
        return self._typed

    def take(self) -> str:
        """What was typed; the box is emptied, here and in the page."""
        typed = self._typed
        self.clear()
        return typed

    def clear(self) -> None:
        """Empty the box, here and in every view of it in the page."""
        self._typed = ""
        self.send({"clear": True})

    def _message(self, _widget: Any, content: Any, _buffers: Any) -> None:
        typed = content.get("typed") if isinstance(content, dict) else None
        if isinstance(typed, str):
            self._typed = typed
            sent_from_browser(self)
