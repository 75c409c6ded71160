"""Files and drafts of a MessageComposer: Save (where it writes, when it asks), the draft it
keeps, restores, sets aside and opens, and the notices about them.

A part of :class:`~pgm_explore.widgets._composer.MessageComposer` (see ``_composer_state``).
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from pgm_explore._display import esc
from pgm_explore._files import digest, holds, safe_filename
from pgm_explore.dialogue.documents import skeleton
from pgm_explore.widgets._composer_state import ComposerState
from pgm_explore.widgets._drafts import (
    DraftInfo,
    aside_name,
    atomic_write,
    claim_draft,
    default_work_dir,
    draft_path,
    dump_json,
    find_draft,
    local_time,
    set_aside,
    write_draft,
)

__all__ = ["ComposerFiles"]


class ComposerFiles(ComposerState):
    """Save, drafts and their notices (mixed into MessageComposer)."""

    def _claim(self) -> None:
        """Note in this kernel that this composer writes its draft. Another live composer that
        wrote it (typically: the same cell, run again) hands it over: the newest keeps it."""
        if not self.autosave:
            return
        other = claim_draft(draft_path(self.draft_name, self.draft_dir), self)
        handover = getattr(other, "_draft_taken_over", None)
        if handover is not None:
            handover()
            self._drafts_bar.add(f"This composer keeps the draft “{esc(self.draft_name)}” from now on.")

    def _draft_taken_over(self) -> None:
        """A newer composer keeps this one's draft: what is kept is written, and nothing more."""
        self._schedule.flush()
        self.autosave = False
        self._drafts_bar.say(f"A newer composer keeps the draft “{esc(self.draft_name)}” now: edits here are not kept.")

    def _set_damaged_aside(self) -> str:
        path = find_draft(self.draft_name, self.draft_dir)
        if path is None:
            return ""
        try:
            return f"; it is kept as {set_aside(path, 'damaged').name}"
        except OSError:
            return ""

    def save(self, path: str | Path | None = None, *, overwrite: bool = False) -> Path:
        """Write ``value`` as JSON (2-space indent, UTF-8, final newline), atomically and
        durably; returns the absolute path.

        Without a path: ``<id>.json`` in the work folder (:func:`default_work_dir`,
        ``$PGM_EXPLORE_WORK`` or ``~/.pgm-explore/work``), the id reduced to a plain file
        name: a document never decides the folder. A path given is taken as given (relative
        to the current folder, ``~`` expanded), but a missing folder is created only inside
        the current folder or the work folder (``FileNotFoundError`` elsewhere). An existing
        file is replaced only with ``overwrite=True`` (``FileExistsError`` otherwise), or when
        it is still exactly what this composer saved there last.
        """
        work = default_work_dir()
        if path is None:
            ident = self.value.get(self._spec.id_field)
            target = work / safe_filename(ident if isinstance(ident, str) else "", ".json")
        else:
            target = Path(path).expanduser()
        target = Path(os.path.abspath(target))
        inside = any(_within(target.parent, folder) for folder in (Path.cwd(), work))
        text = dump_json(self.value)
        replace = overwrite or self._still_ours(target)
        written = atomic_write(target, text, durable=True, overwrite=replace, make_parents=inside)
        self._written[written] = digest(text.encode("utf-8"))
        self._quiet = False
        self._refresh()
        self._schedule.flush()  # Save writes the draft too, at once
        self._status.value = f"Saved <code>{esc(written)}</code>"
        return written

    def _still_ours(self, target: Path) -> bool:
        """The file at ``target`` is what this composer saved there last (so Save again may replace it)."""
        return holds(target, self._written.get(target))

    def _save_clicked(self) -> None:
        typed = self._save_path.value.strip()
        wanted = Path(os.path.abspath(Path(typed).expanduser())) if typed else None
        confirmed = self._confirm is not None and self._confirm == (wanted or self._derived_target())
        try:
            self.save(typed or None, overwrite=confirmed)
        except FileExistsError:
            self._confirm = wanted or self._derived_target()
            self._save.description = "Overwrite?"
            self._save.button_style = "danger"
            self._status.value = (
                f"<code>{esc(self._confirm)}</code> exists: click <b>Overwrite?</b> to replace it, "
                "or type another name."
            )
            return
        except OSError as exc:  # a missing folder, a folder in the way, no permission: said, not raised
            self._disarm_save()
            hint = " Create the folder first." if isinstance(exc, FileNotFoundError) else ""
            self._status.value = f'<span style="color:#c62828">Not saved: {esc(exc)}.{hint}</span>'
            return
        self._disarm_save()

    def _derived_target(self) -> Path:
        ident = self.value.get(self._spec.id_field)
        return default_work_dir() / safe_filename(ident if isinstance(ident, str) else "", ".json")

    def _disarm_save(self) -> None:
        self._confirm = None
        if self._save.description != "Save":
            self._save.description = "Save"
            self._save.button_style = ""

    def start_fresh(self) -> str | None:
        """Start a new message of this type and mode (the Start fresh button). The state shown
        until now is kept as the draft ``<name> (set aside <time>)``, whose name is returned
        (None when drafts are off); the composer keeps its draft name."""
        kept = None
        if self.autosave:
            kept = aside_name(self.draft_name, self.draft_dir)
            write_draft(draft_path(kept, self.draft_dir), {**self._draft(), "name": kept})
        mode = self.value.get("Mode")
        self._dirty = False  # the state is kept under its own name, not as "-previous"
        self._load_new(skeleton(self._spec.name, mode if mode in self._spec.modes else None))
        self._autosave(now=True)
        if kept is not None:
            self._drafts_bar.say(f"Started fresh. The earlier draft is kept as “{esc(kept)}” (Drafts, then Open).")
        else:
            self._drafts_bar.say("")
        return kept

    def _open_draft(self, entry: DraftInfo, content: dict[str, Any]) -> None:
        """Show a draft of the Drafts panel here; what was shown stays as ``<name>-previous``."""
        if self.autosave and self._dirty:
            write_draft(draft_path(f"{self.draft_name}-previous", self.draft_dir), self._draft())
        problem = self._restore(content)
        if problem is not None:
            raise ValueError(f"the draft “{entry.name}” cannot be opened: {problem}")
        self._status.value = ""  # a line about the document shown before is no longer true
        self._dirty = True
        self._autosave(now=True)
        self._drafts_bar.say(f"Opened the draft “{esc(entry.name)}” from {esc(local_time(entry.saved))}.")

    def _draft(self) -> dict[str, Any]:
        """The draft's content: a snapshot (written later, by another thread: see _autosave).
        ``value`` is never changed in place, so it is kept as it is; the rest is copied."""
        assert self._ctx is not None
        return {
            "kind": "message",
            "name": self.draft_name,
            "type": self._spec.name,
            "document": self.value,
            "aside": dict(self._aside),
            "auto": dict(self._auto),
            "expert": self._expert,
            "pending": self._ctx.pending(),
            "json_pending": self._json.pending,
            "quiet": self._quiet,
            "touched": [list(path) for path in self._touched],
        }

    def _autosave(self, *, now: bool = False) -> None:
        """Keep the draft to be written: within a second while typing, at once (in the
        background) after a step such as Start fresh or leaving a field (``now``)."""
        if not self.autosave or self._ctx is None:
            return
        self._schedule.keep(draft_path(self.draft_name, self.draft_dir), self._draft(), now=now)

    def _restore(self, draft: dict[str, Any]) -> str | None:
        """Show a draft's state; returns what is wrong with it (nothing shown) or None."""
        doc = draft.get("document")
        if not isinstance(doc, dict):
            return "it holds no document"
        try:
            aside = {str(k): dict(v) for k, v in dict(draft.get("aside") or {}).items()}
            auto = {str(k): bool(v) for k, v in dict(draft.get("auto") or {}).items()}
            pending = [(tuple(path), str(role), str(text)) for path, role, text in draft.get("pending") or ()]
            json_pending = draft.get("json_pending")
            touched = {tuple(path) for path in draft.get("touched") or ()}
        except (TypeError, ValueError) as exc:
            return f"its state is damaged: {exc}"
        self._aside = aside
        self._quiet, self._touched = bool(draft.get("quiet", False)), touched
        self._keep_quiet += 1
        try:
            self.value = doc
        finally:
            self._keep_quiet -= 1
        self._auto = {**self._auto, **auto}
        assert self._ctx is not None
        # The expert view makes its editors when first opened: open it before their texts return.
        if draft.get("expert"):
            self._expert_toggle.value = True
        for path, role, text in pending:
            editor = self._ctx.editors.get((path, role))
            if editor is not None:
                editor.text.value = text
        if isinstance(json_pending, str):
            self._json.text.value = json_pending
        return None


def _within(path: Path, folder: Path) -> bool:
    try:
        path.relative_to(Path(os.path.abspath(folder)))
    except ValueError:
        return False
    return True
