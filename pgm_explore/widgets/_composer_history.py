"""Undo and redo of a MessageComposer: the states shown before, as steps.

:class:`History` keeps :class:`Step`\\ s; ``can_undo`` and ``can_redo`` say whether there is one to go
back or forward to (the toolbar's buttons follow them). :meth:`History.remember` is told every state
shown, with the field whose edit made it: keystrokes in one field, each within ``UNDO_PAUSE``
seconds of the last, make one step; anything else (another field, the Mode switch, Open, the JSON
view, a Reply, an assignment) is a step of its own. A state equal to the one shown is no step, so
showing a step taken back (:meth:`History.back`, :meth:`History.forward`) records nothing.
"""

from __future__ import annotations

import copy
import time
from dataclasses import dataclass
from typing import Any

from traitlets import Bool, HasTraits

__all__ = ["UNDO_PAUSE", "UNDO_STEPS", "History", "Step"]

UNDO_PAUSE = 1.5
"""Seconds of pause after which typing in the same field starts a new undo step."""
UNDO_STEPS = 200
"""Undo steps kept (the oldest go first)."""


@dataclass(frozen=True, eq=False)
class Step:
    """One state shown: the document, the values the Mode switch kept aside, the Reply shown."""

    document: dict[str, Any]
    aside: dict[str, dict[str, Any]]
    reply: Any = None

    def same(self, other: Step) -> bool:
        return self.reply is other.reply and self.document == other.document


class History(HasTraits):
    """The steps behind and ahead of the state shown (see the module)."""

    can_undo = Bool(False, help="There is a step to go back to.")
    can_redo = Bool(False, help="There is an undone step to take again.")

    def __init__(self) -> None:
        super().__init__()
        self._past: list[Step] = []
        self._future: list[Step] = []
        self._shown: Step | None = None
        self._field: tuple[str | int, ...] | None = None
        self._time = 0.0

    def remember(self, step: Step, field: tuple[str | int, ...] | None) -> None:
        """``step`` is shown now, made by an edit of ``field`` (None: not typed in a field)."""
        shown = self._shown
        if shown is not None and not step.same(shown):
            now = time.monotonic()
            typing = field is not None and field != ("Mode",) and field == self._field
            if not (typing and now - self._time < UNDO_PAUSE):
                self._past.append(shown)
                del self._past[:-UNDO_STEPS]
            self._future.clear()
            self._field, self._time = field, now
        self._shown = Step(step.document, copy.deepcopy(step.aside), step.reply)
        self._update()

    def forget(self) -> None:
        """No step behind or ahead: the history starts at the state shown."""
        self._past.clear()
        self._future.clear()
        self._update()

    def back(self) -> Step | None:
        """The state before the one shown (now taken as shown), or None."""
        if not self._past or self._shown is None:
            return None
        self._future.append(self._shown)
        return self._take(self._past.pop())

    def forward(self) -> Step | None:
        """The last state undone (now taken as shown), or None."""
        if not self._future or self._shown is None:
            return None
        self._past.append(self._shown)
        return self._take(self._future.pop())

    def _take(self, step: Step) -> Step:
        self._shown, self._field = step, None
        self._update()
        return Step(step.document, copy.deepcopy(step.aside), step.reply)

    def _update(self) -> None:
        self.can_undo = bool(self._past)
        self.can_redo = bool(self._future)
