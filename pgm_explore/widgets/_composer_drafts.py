"""The draft of a MessageComposer: :class:`DraftKeeper` owns its name, folder and schedule.

Its traits: ``name`` and ``folder`` say where the draft is, ``autosave`` whether it is written
(off when drafts are off, or once a newer composer took the draft over), ``edited`` whether the
state shown was edited since it was opened (only then does an Open keep it as ``<name>-previous``).
The composer hands it the draft's content (:meth:`DraftKeeper.keep`); the schedule writes it off
the keystroke path (``_drafts.DraftSchedule``). Its notice line and Drafts panel are a
``DraftBar``.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from traitlets import Any as AnyTrait
from traitlets import Bool, HasTraits, Unicode

from pgm_explore._display import esc
from pgm_explore.widgets._base import ErrorArea
from pgm_explore.widgets._drafts import (
    DraftInfo,
    DraftSchedule,
    OpenedDraft,
    aside_name,
    claim_draft,
    draft_path,
    find_draft,
    open_draft,
    set_aside,
    write_draft,
)
from pgm_explore.widgets._filebar import DraftBar, Parts

__all__ = ["DraftKeeper"]


class DraftKeeper(HasTraits):
    """Where a composer's draft is, whether it is written, and the notices about it."""

    name = Unicode("", help="The draft's name.")
    folder = AnyTrait(None, help="The drafts folder (None: $PGM_EXPLORE_DRAFTS, else ~/.pgm-explore/drafts).")
    autosave = Bool(True, help="Whether the draft is written.")
    edited = Bool(False, help="The state shown was edited since it was opened.")

    def __init__(
        self,
        area: ErrorArea,
        parts: Parts,
        *,
        folder: Path | None,
        autosave: bool,
        on_open: Callable[[DraftInfo, dict[str, Any]], None],
        on_fresh: Callable[[], object],
        interval: float | None = None,
    ) -> None:
        super().__init__(folder=folder, autosave=autosave)
        # Drafts are written off the keystroke path; a failed write is shown.
        self._schedule = DraftSchedule(area.record, interval)
        self._closed = False
        self._field: tuple[str | int, ...] | None = None
        self.bar = DraftBar(area, parts, "message", lambda: self.folder, on_open, on_fresh)

    @property
    def path(self) -> Path:
        return draft_path(self.name, self.folder)

    def open(self, name: str) -> OpenedDraft:
        """The draft ``name`` as it is kept (its content None when there is none, or it is damaged)."""
        return open_draft(name, self.folder) if self.autosave else OpenedDraft(None)

    def keep(self, content: dict[str, Any], *, now: bool = False, field: tuple[str | int, ...] | None = None) -> None:
        """The draft to write: within a second while typing, at once (in the background) if ``now``
        or when the edit is in another ``field`` than the last (the person left that field)."""
        if field is not None:
            now = now or self._field not in (None, field)
            self._field = field
        if self.autosave:
            self._schedule.keep(self.path, content, now=now)

    def flush(self) -> None:
        """Write what is kept, now (Save, closing)."""
        self._schedule.flush()

    def keep_previous(self, content: dict[str, Any]) -> None:
        """What was being composed stays one step back as ``<name>-previous``, in case an Open was a slip."""
        if self.autosave and self.edited:
            write_draft(draft_path(f"{self.name}-previous", self.folder), content)

    def keep_aside(self, content: dict[str, Any]) -> str | None:
        """Keep ``content`` as the draft ``<name> (set aside <time>)``; its name (None: drafts off)."""
        if not self.autosave:
            return None
        kept = aside_name(self.name, self.folder)
        write_draft(draft_path(kept, self.folder), {**content, "name": kept})
        return kept

    def set_damaged_aside(self) -> str:
        """The draft that cannot be restored is renamed; the words that say so."""
        path = find_draft(self.name, self.folder)
        if path is None:
            return ""
        try:
            return f"; it is kept as {set_aside(path, 'damaged').name}"
        except OSError:
            return ""

    def claim(self) -> None:
        """Note in this kernel that this keeper writes its draft. Another live one that wrote it
        (typically: the same cell, run again) hands it over: the newest keeps it."""
        if not self.autosave:
            return
        other = claim_draft(self.path, self)
        if isinstance(other, DraftKeeper):
            other.taken_over()
            self.bar.add(f"This composer keeps the draft “{esc(self.name)}” from now on.")

    def close(self) -> None:
        """Write what is kept; a closed keeper no longer counts as a holder of its draft name."""
        self._closed = True
        self._schedule.flush()

    def taken_over(self) -> None:
        """A newer composer keeps this draft: what is kept is written, and nothing more."""
        self._schedule.flush()
        self.autosave = False
        self.bar.say(f"A newer composer keeps the draft “{esc(self.name)}” now: edits here are not kept.")
