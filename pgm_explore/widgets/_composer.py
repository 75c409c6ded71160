"""MessageComposer: one form for any PGM-AUA message, validated at every edit."""

from __future__ import annotations

import copy
import time
import uuid
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import ipywidgets as widgets
from traitlets import Bool, Dict, List, TraitError, Unicode, observe, validate

from pgm_explore._display import esc
from pgm_explore._workfolder import WorkFolder
from pgm_explore.dialogue.documents import (
    REPLY_COPIED,
    auto_time,
    reply_document,
    skeleton,
    type_of,
)
from pgm_explore.spec import DATA_TYPES, DataType, data_type
from pgm_explore.validation import Finding, Report, json_path
from pgm_explore.widgets._base import ErrorArea
from pgm_explore.widgets._composer_files import ComposerFiles
from pgm_explore.widgets._composer_form import ComposerForm
from pgm_explore.widgets._composer_view import ComposerView
from pgm_explore.widgets._drafts import (
    DraftSchedule,
    OpenedDraft,
    aside_name,
    delete_draft,
    draft_path,
    find_draft,
    list_drafts,
    local_time,
    open_draft,
    read_draft,
    write_draft,
)
from pgm_explore.widgets._filebar import parse_document
from pgm_explore.widgets._form import ArrayField, Field, FormContext, ObjectField, UnionField

__all__ = ["MessageComposer", "read_document"]

DATA_TYPE_NAMES = frozenset(dt.name for dt in DATA_TYPES)
UNDO_PAUSE = 1.5
"""Seconds of pause after which typing in the same field starts a new undo step."""
UNDO_STEPS = 200
"""Undo steps kept (the oldest go first)."""


def read_document(path: str | Path) -> dict[str, Any]:
    """One message from a ``.json`` file, read as strictly as the validator reads."""
    return _read_document(path)[0]


def _read_document(path: str | Path) -> tuple[dict[str, Any], tuple[Finding, ...]]:
    """:func:`read_document`, and what the text says that the message cannot show (a name
    written twice in one object: only its last value is read)."""
    return parse_document(Path(path).read_bytes(), str(path))


class MessageComposer(ComposerView, ComposerForm, ComposerFiles, widgets.VBox):
    """Compose one PGM-AUA message (any type and mode) in a form built from its schema.

    ``value`` is the document exactly as :meth:`save` writes it, and the JSON view shows
    it; ``findings``, ``conforms`` and :attr:`report` are its validation after the last
    edit. The form, the JSON view and ``value`` stay in step whichever is edited.

    Drafts: every edit is kept in the draft ``draft_name`` in the drafts folder
    (``draft_dir``, else ``$PGM_EXPLORE_DRAFTS``, else ``~/.pgm-explore/drafts``), written off the
    keystroke path at most about once a second, and at once on Save, on leaving a field, on
    :meth:`close` and at the end of the process (see ``_drafts.DraftSchedule``). Give a
    notebook's composer a stable name (``draft_name="02-pc-prompt"``): running the cell
    again, after a kernel restart too, restores the last edit (the draft wins over
    ``document``) with a "Restored draft from <time>" notice and a Start fresh button
    (:meth:`start_fresh`). A damaged draft is kept aside, never blocks the composer.
    ``draft_dir=False`` turns drafts off. :meth:`save` without a path writes
    ``<id>.json`` in the work folder (``$PGM_EXPLORE_WORK``, else ``~/.pgm-explore/work``).

    ``work_folder`` (a folder, or a :class:`~pgm_explore._workfolder.WorkFolder`) is for a
    composer on a page served to people who run no code (the app): its Save and Open take a
    name in that folder, never a path (:class:`~pgm_explore.widgets._workfolder.WorkFolderFiles`),
    and so do the composers its Reply makes.

    >>> c = MessageComposer("BKN-DAC", "RQ", draft_dir=False)
    >>> c.value["Header"], c.value["Mode"], c.mode
    ('PGM-KDA-V1.0', 'RQ', 'RQ')
    >>> c.set(["TurnIndex"], 3); c.get(["TurnIndex"])
    3
    """

    value = Dict(help="The document, exactly as it will be saved.")
    mode = Unicode("", help='"RQ" or "RS"; "" for PC Prompt (or a document whose Mode is not valid).')
    type_name = Unicode("", help="The data type being composed (PC Prompt, BKN-PRC, BKN-DAC, BKN-PAL).")
    conforms = Bool(False, help="The validator's verdict on value.")
    findings: List[Finding] = List(help="Findings (pgm_explore.validation.Finding) on value, in the validator's order.")

    def __init__(
        self,
        type_name: str,
        mode: str | None = None,
        *,
        document: Mapping[str, Any] | None = None,
        draft_dir: str | Path | bool | None = None,
        draft_name: str | None = None,
        reply_button: bool = True,
        work_folder: WorkFolder | str | Path | None = None,
        **kwargs: Any,
    ) -> None:
        spec = data_type(type_name)
        super().__init__(**kwargs)
        self._spec: DataType = spec
        self._area = ErrorArea()
        self._report: Report | None = None
        self._aside: dict[str, dict[str, Any]] = {}
        self._auto = {"time": True, "dem": True}
        self._expert = False
        self._dirty = False
        self._from_form = False
        self._internal = 0
        self._form: ObjectField | None = None
        self._ctx: FormContext | None = None
        self._marked: set[Field] = set()
        # Findings are shown at the fields the person has touched, until Validate or Save
        # shows them all: a new form does not greet anyone with warnings for what is not
        # filled in yet. ``report`` is always complete.
        self._quiet = False
        self._touched: set[tuple[str | int, ...]] = set()
        self._keep_quiet = 0
        self._written: dict[Path, str] = {}
        self._confirm: Path | None = None
        self._closed = False
        # Drafts are written off the keystroke path (see _drafts.DraftSchedule); a failed write is shown.
        self._schedule = DraftSchedule(self._area.record)
        self._last_field: tuple[str | int, ...] | None = None
        # Undo and redo: the states shown before (document, values kept aside), newest last.
        self._past: list[tuple[dict[str, Any], dict[str, dict[str, Any]]]] = []
        self._future: list[tuple[dict[str, Any], dict[str, dict[str, Any]]]] = []
        self._shown_state: tuple[dict[str, Any], dict[str, dict[str, Any]]] | None = None
        self._step_field: tuple[str | int, ...] | None = None
        self._step_time = 0.0
        self._replaying = False
        # draft_dir=False: no autosave (benchmarks, doctests, composers kept only in memory).
        self.autosave = draft_dir is not False
        self.draft_dir: Path | None = Path(draft_dir) if isinstance(draft_dir, str | Path) else None
        self.last_reply: MessageComposer | None = None
        self.on_reply: Callable[[MessageComposer], None] | None = None
        """Called with the new composer when the Reply button is pressed (default: shown below)."""
        # A work folder: Save and Open by name in it only (a page served to others; see _workfolder).
        self.work_folder = WorkFolder(work_folder) if isinstance(work_folder, str | Path) else work_folder
        self._chrome = FormContext(spec, lambda _field: None, self._area.guard)
        self._chrome.on_pending = self._pending_typed
        self._build_chrome(reply_button)
        self.add_class("pgmx-composer")

        opened = OpenedDraft(None)
        if draft_name is not None and self.autosave:
            opened = open_draft(str(draft_name), self.draft_dir)
        if opened.content is not None:
            self.draft_name = str(draft_name)
            problem = self._restore(opened.content)
            if problem is None:
                when = local_time(opened.saved) if opened.saved is not None else "an earlier session"
                self._drafts_bar.say(
                    f"Restored draft from {esc(when)} (“{esc(self.draft_name)}”): your last edit is back.", fresh=True
                )
                self._claim()
                if reply_button and self._reply_draft_answers():
                    self._area.guard(self._reply_clicked)()  # the Response being written comes back too
                return
            kept = self._set_damaged_aside()
            opened = OpenedDraft(None, None, f"The draft “{self.draft_name}” could not be restored ({problem}){kept}.")
        doc = copy.deepcopy(dict(document)) if document is not None else skeleton(spec.name, mode)
        self.draft_name = draft_name or self._default_draft_name(type_of(doc) or spec, doc)
        self._quiet = document is None
        self._keep_quiet += 1
        try:
            self.value = doc
        finally:
            self._keep_quiet -= 1
        if opened.notice:
            self._drafts_bar.say(esc(opened.notice) + " This composer starts without it.")
        self._claim()

    # -- construction ---------------------------------------------------------------------------

    @classmethod
    def from_document(cls, document: Mapping[str, Any], **kwargs: Any) -> MessageComposer:
        """A composer holding ``document``; its Header says the type (``ValueError`` if unknown)."""
        spec = type_of(document)
        if spec is None:
            raise ValueError(f"the Header {document.get('Header')!r} names no PGM-AUA V1.0 data type")
        mode = document.get("Mode")
        return cls(spec.name, mode if mode in spec.modes else None, document=document, **kwargs)

    @classmethod
    def from_file(cls, path: str | Path, **kwargs: Any) -> MessageComposer:
        """A composer holding the message of a ``.json`` file."""
        return cls.from_document(read_document(path), **kwargs)

    @classmethod
    def restore(cls, draft_name: str, draft_dir: str | Path | None = None, **kwargs: Any) -> MessageComposer:
        """The composer saved as draft ``draft_name`` (``FileNotFoundError`` if there is none)."""
        path = find_draft(draft_name, draft_dir)
        if path is None:
            raise FileNotFoundError(f"there is no draft {draft_name!r} in {draft_path(draft_name, draft_dir).parent}")
        stored = read_draft(path).get("type")
        type_name = stored if isinstance(stored, str) and stored in DATA_TYPE_NAMES else "PC Prompt"
        return cls(type_name, draft_name=draft_name, draft_dir=draft_dir, **kwargs)

    @staticmethod
    def drafts(draft_dir: str | Path | None = None) -> list[str]:
        """Names of the drafts in the drafts folder, most recent first."""
        return list_drafts(draft_dir)

    @staticmethod
    def _default_draft_name(spec: DataType, doc: Mapping[str, Any]) -> str:
        ident = doc.get(spec.id_field)
        return f"{spec.name.lower().replace(' ', '-')}-{ident if isinstance(ident, str) and ident else uuid.uuid4().hex[:8]}"

    # -- public API -------------------------------------------------------------------------------

    @property
    def report(self) -> Report | None:
        """The validation report of ``value`` after the last edit."""
        return self._report

    @property
    def errors(self) -> list[BaseException]:
        """Exceptions raised in callbacks (each is also shown in the widget, class pgmx-error)."""
        return self._area.errors

    @property
    def spec(self) -> DataType:
        return self._spec

    @property
    def aside(self) -> dict[str, dict[str, Any]]:
        """The other mode's values kept aside by the Mode switch, by mode (a copy)."""
        return copy.deepcopy(self._aside)

    @property
    def draft_file(self) -> Path | None:
        return draft_path(self.draft_name, self.draft_dir) if self.autosave else None

    def field(self, path: tuple[str | int, ...] | list[str | int]) -> Field:
        """The form field at ``path`` (it must have been built: its parents hold a value)."""
        assert self._ctx is not None
        return self._ctx.fields[tuple(path)]

    def set(self, path: tuple[str | int, ...] | list[str | int], value: Any) -> None:
        """Give the property at ``path`` a value through its widget, as a user would.

        Absent parents are switched on and an index one past the end of an array adds an
        item. A value the widget cannot show (a string for TurnIndex, a number out of bounds)
        is typed into the field's raw JSON editor instead. A name the schema does not list
        goes to the object's "Other properties".
        """
        path = tuple(path)
        if not path:
            raise KeyError("set() needs a path; assign value to replace the whole document")
        assert self._form is not None
        parent = self._form.locate(path[:-1], create=True)
        last = path[-1]
        if isinstance(parent, UnionField):
            parent = parent.alternative(last)
        if isinstance(parent, ObjectField):
            if not isinstance(last, str):
                raise KeyError(f"{json_path(path)}: an object has no index {last!r}")
            member = parent.member(last, create=True)
            if member is None:
                parent.enter_member(last, value)
            else:
                member.enter(value)
            return
        if isinstance(parent, ArrayField):
            if not isinstance(last, int) or not 0 <= last <= len(parent.items) or parent.raw:
                raise IndexError(f"{json_path(path)}: no such item (the array has {len(parent.items)})")
            if last == len(parent.items):
                parent.add(value)
            else:
                parent.items[last].enter(value)
            return
        raise KeyError(f"{json_path(path[:-1])} holds no object or array in the form")

    def get(self, path: tuple[str | int, ...] | list[str | int]) -> Any:
        """The value the form holds at ``path`` (``KeyError`` / ``IndexError`` if absent)."""
        path = tuple(path)
        assert self._form is not None
        node = self._form.locate(path[:-1])
        if not path:
            return node.get()
        last = path[-1]
        if isinstance(node, UnionField):
            node = node.alternative()
        if isinstance(node, ObjectField):
            member = node.members.get(last) if isinstance(last, str) else None
            if member is not None and member.present and node.present:
                return member.get()
            if member is None and last in node.extras:
                return copy.deepcopy(node.extras[last])
            raise KeyError(json_path(path))
        if isinstance(node, ArrayField) and isinstance(last, int) and not node.raw:
            return node.items[last].get()
        raise KeyError(json_path(path))

    def remove(self, path: tuple[str | int, ...] | list[str | int]) -> None:
        """Switch the property at ``path`` off (absent), or remove an array item."""
        path = tuple(path)
        if not path:
            raise KeyError("remove() needs a path")
        assert self._form is not None
        parent = self._form.locate(path[:-1])
        if isinstance(parent, UnionField):
            parent = parent.alternative()
        last = path[-1]
        if isinstance(parent, ArrayField) and isinstance(last, int):
            if not 0 <= last < len(parent.items):
                raise IndexError(json_path(path))
            parent.remove_item(last)
        elif isinstance(parent, ObjectField) and isinstance(last, str):
            member = parent.members.get(last)
            if member is not None:
                member.switch(False)
            else:
                parent.remove_extra(last)
        else:
            raise KeyError(json_path(path))

    def load(self, source: Mapping[str, Any] | str | Path) -> tuple[Finding, ...]:
        """Show another document: a dict or a ``.json`` file. A Header of another type
        rebuilds the form for that type; values kept aside by the Mode switch are dropped.

        Returns the ``duplicate-key`` warnings of a file: a name written twice in one object
        shows (and is saved with) its last value only, so the earlier one must be named
        where the person sees it (the Open panel does)."""
        notes: tuple[Finding, ...] = ()
        if isinstance(source, str | Path):
            doc, notes = _read_document(source)
        else:
            doc = copy.deepcopy(dict(source))
        if self.autosave and self._dirty:
            # What was being composed stays one step back, in case the load was a slip.
            write_draft(draft_path(f"{self.draft_name}-previous", self.draft_dir), self._draft())
        self._aside = {}
        self._json.pending = None
        self._revert.layout.display = "none"
        # The lines about the document shown until now ("Saved …", "Restored draft …") are no
        # longer true: the status describes what is shown, and the caller says what it opened.
        self._status.value = ""
        self._drafts_bar.say("")
        self._dirty = True
        if not self._keep_quiet:
            self._quiet = False
        if doc == self.value:
            self._update(doc)  # no trait change to announce it, but the form must show it again
        else:
            self.value = doc
        return notes

    def reply(self) -> MessageComposer:
        """A new composer with the Response skeleton of this Request (``ValueError`` otherwise).

        Its draft is ``<draft_name>-reply``, so that it comes back: when that draft answers this
        Request (its RequestID is this QueryID), the reply is restored from it, also after a
        restart; a draft that answers another Request is kept aside first (never overwritten)."""
        doc = reply_document(self.value)
        if not self.autosave:
            reply = MessageComposer(self._spec.name, "RS", document=doc, draft_dir=False, work_folder=self.work_folder)
            reply._start_quiet()
            return reply
        name = self._reply_draft_name
        if find_draft(name, self.draft_dir) is not None and not self._reply_draft_answers():
            opened = open_draft(name, self.draft_dir)
            if opened.content is not None:
                kept = aside_name(name, self.draft_dir)
                write_draft(draft_path(kept, self.draft_dir), {**opened.content, "name": kept})
            delete_draft(name, self.draft_dir)
        restoring = find_draft(name, self.draft_dir) is not None
        reply = MessageComposer(
            self._spec.name, "RS", document=doc, draft_dir=self.draft_dir, draft_name=name, work_folder=self.work_folder
        )
        if not restoring:
            reply._start_quiet()
        return reply

    @property
    def _reply_draft_name(self) -> str:
        return f"{self.draft_name}-reply"

    def _reply_draft_answers(self) -> bool:
        """The reply's draft exists and answers this Request (its RequestID is this QueryID)."""
        path = find_draft(self._reply_draft_name, self.draft_dir)
        if path is None or self.value.get("Mode") != "RQ":
            return False
        try:
            document = read_draft(path).get("document")
        except (OSError, ValueError):
            return False
        return isinstance(document, dict) and document.get("RequestID") == self.value.get("QueryID")

    def _start_quiet(self) -> None:
        """Findings only at the fields touched from now on (a new message, not one opened)."""
        self._quiet, self._touched = True, set()
        if self._report is not None:
            self._area.guard(self._refresh)()

    def _load_new(self, document: Mapping[str, Any]) -> None:
        """Load a new message made for the person (Reply, New turn, another type): quiet."""
        self._quiet, self._touched = True, set()
        self._keep_quiet += 1
        try:
            self.load(document)
        finally:
            self._keep_quiet -= 1

    def validate_now(self) -> Report:
        """Show every finding of the document, also at the fields not touched yet (the
        Validate button); returns the report."""
        self._quiet = False
        self._refresh()
        assert self._report is not None
        return self._report

    def switch_type(self, type_name: str, mode: str | None = None) -> None:
        """Start a new message of another type, keeping the session and dialogue context."""
        spec = data_type(type_name)
        current = self.value.get("Mode")
        if spec.has_modes and mode is None:
            mode = current if current in spec.modes else spec.modes[0]
        context = {k: v for k, v in self.value.items() if k in (*REPLY_COPIED, "SessionID")}
        self._load_new(skeleton(spec.name, mode if spec.has_modes else None, context=context))

    def stamp_now(self) -> None:
        """Set the message's time to now (SimpleTimeID ``st-`` + id), as the Now button does."""
        assert self._form is not None and self._ctx is not None
        ident = self.value.get(self._spec.id_field)
        member = self._form.members[self._spec.time_field]
        with self._ctx.writing():
            if not member.present:
                member.switch(True)
            member.put(auto_time(ident if isinstance(ident, str) else "message"))
        self._dirty = True
        self._commit()

    # -- undo and redo ---------------------------------------------------------------------------

    def _remember(self, doc: dict[str, Any]) -> None:
        """Keep the state shown until now as an undo step. Keystrokes in one field, each within
        ``UNDO_PAUSE`` seconds of the last, make one step; any other change (another field, the
        Mode switch, Open, the JSON view, an assignment) is a step of its own."""
        shown = self._shown_state
        now = time.monotonic()
        if shown is not None and shown[0] != doc and not self._replaying:
            field = self._last_field if self._from_form else None
            typing = field is not None and field != ("Mode",) and field == self._step_field
            if not (typing and now - self._step_time < UNDO_PAUSE):
                self._past.append(shown)
                del self._past[:-UNDO_STEPS]
            self._future.clear()
            self._step_field, self._step_time = field, now
        self._shown_state = (doc, copy.deepcopy(self._aside))

    def undo(self) -> bool:
        """Go back one step (edits of one field in a row are one step; a Mode switch, an Open,
        a document typed in the JSON view are one each); False when there is none. The draft
        keeps the state shown, and Redo brings the step back."""
        if not self._past or self._shown_state is None:
            return False
        self._future.append(self._shown_state)
        self._replay(self._past.pop())
        return True

    def redo(self) -> bool:
        """Take the last undone step again; False when there is none."""
        if not self._future or self._shown_state is None:
            return False
        self._past.append(self._shown_state)
        self._replay(self._future.pop())
        return True

    def _replay(self, state: tuple[dict[str, Any], dict[str, dict[str, Any]]]) -> None:
        doc, aside = state
        self._aside = copy.deepcopy(aside)
        self._step_field = None
        self._dirty = True
        self._replaying = True
        self._keep_quiet += 1
        try:
            if doc == self.value:
                self._update(doc)
            else:
                self.value = doc
        finally:
            self._keep_quiet -= 1
            self._replaying = False
        # The lines about the state left ("Opened …", "Saved …") are not about the one shown now.
        self._status.value = ""
        if self._files is None and self._opener._built:
            self._opener.status.value = ""
        self._show_history()

    def _show_history(self) -> None:
        if self._undo_button.disabled != (not self._past):
            self._undo_button.disabled = not self._past
        if self._redo_button.disabled != (not self._future):
            self._redo_button.disabled = not self._future

    def clear_errors(self) -> None:
        self._area.clear()

    def close(self) -> None:
        """Close the widget (its last edit written to the draft); it no longer counts as a holder
        of its draft name."""
        self._area.guard(self._schedule.flush)()
        self._closed = True
        super().close()

    # -- traits --------------------------------------------------------------------------------

    @validate("mode")
    def _valid_mode(self, proposal: dict[str, Any]) -> str:
        mode = proposal["value"]
        if self._internal:
            return str(mode)
        allowed = self._spec.modes if self._spec.has_modes else ("",)
        if mode not in allowed:
            raise TraitError(f"{self._spec.name} has mode {' or '.join(map(repr, allowed))}, not {mode!r}")
        return str(mode)

    @observe("mode")
    def _mode_set(self, change: dict[str, Any]) -> None:
        if self._internal or self._ctx is None or not self._spec.has_modes:
            return
        self._area.guard(self._ctx.fields[("Mode",)].enter)(change["new"])

    @validate("type_name")
    def _valid_type(self, proposal: dict[str, Any]) -> str:
        try:
            return data_type(proposal["value"]).name
        except ValueError as exc:
            raise TraitError(str(exc)) from None

    @observe("type_name")
    def _type_set(self, change: dict[str, Any]) -> None:
        if not self._internal and change["old"]:
            self._area.guard(self.switch_type)(change["new"])

    @observe("value")
    def _value_changed(self, change: dict[str, Any]) -> None:
        # The one place where the composer updates: a new document (from the form, the JSON
        # view, load() or an assignment) is validated and shown.
        self._area.guard(self._update)(change["new"])

    def _update(self, doc: dict[str, Any]) -> None:
        self._remember(doc)
        if not self._from_form and not self._keep_quiet:
            self._quiet = False  # a document from outside: every finding is news
        if not self._from_form:
            # A document from outside the form (load, the JSON view, an assignment): the
            # automatic parts stay automatic only where they still match what they would be.
            self._auto = self._auto_flags(type_of(doc) or self._spec, doc)
            self._show_document(doc)
        self._refresh()
        self._show_history()
