"""MessageComposer: one form for any PGM-AUA message, validated at every edit.

The composer is made of parts that each own their state in traits and talk through trait
observation (docs/widgets.md, "How the composer is built"):

- the form (``_composer_form.DocumentForm``): the document <-> the fields;
- the verdict (``_composer_view.VerdictView``): the report -> the findings shown;
- the JSON view (``_composer_view.JsonView``) and the toolbar (``_composer_view.Toolbar``);
- the draft (``_composer_drafts.DraftKeeper``) and the undo history (``_composer_history.History``).

Every document reaches ``value`` and is taken in by the one ``@observe("value")`` handler:
validated, given to the verdict, the JSON view, the toolbar, the history and the draft.
"""

from __future__ import annotations

import copy
import os
import uuid
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import ipywidgets as widgets
from traitlets import Bool, Dict, List, TraitError, Unicode, dlink, observe, validate

from pgm_explore._display import esc
from pgm_explore._files import digest, holds, safe_filename
from pgm_explore._workfolder import WorkFolder
from pgm_explore.dialogue.documents import REPLY_COPIED, reply_document, skeleton, type_of
from pgm_explore.spec import DATA_TYPES, DataType, data_type
from pgm_explore.validation import Finding, Report
from pgm_explore.validation import validate as validate_document
from pgm_explore.widgets._base import ErrorArea, style_widget
from pgm_explore.widgets._composer_drafts import DraftKeeper
from pgm_explore.widgets._composer_form import DocumentForm
from pgm_explore.widgets._composer_history import History, Step
from pgm_explore.widgets._composer_view import JsonView, Toolbar, VerdictView
from pgm_explore.widgets._drafts import (
    DraftInfo,
    OpenedDraft,
    aside_name,
    atomic_write,
    default_work_dir,
    delete_draft,
    draft_path,
    dump_json,
    find_draft,
    list_drafts,
    local_time,
    open_draft,
    read_draft,
    write_draft,
)
from pgm_explore.widgets._filebar import Parts, parse_document
from pgm_explore.widgets._form import Field, FormContext
from pgm_explore.widgets._keys import UndoKeys

__all__ = ["MessageComposer", "read_document"]

DATA_TYPE_NAMES = frozenset(dt.name for dt in DATA_TYPES)


def read_document(path: str | Path) -> dict[str, Any]:
    """One message from a ``.json`` file, read as strictly as the validator reads."""
    return _read_document(path)[0]


def _read_document(path: str | Path) -> tuple[dict[str, Any], tuple[Finding, ...]]:
    """:func:`read_document`, and what the text says that the message cannot show (a name
    written twice in one object: only its last value is read)."""
    return parse_document(Path(path).read_bytes(), str(path))


def _within(path: Path, folder: Path) -> bool:
    try:
        path.relative_to(Path(os.path.abspath(folder)))
    except ValueError:
        return False
    return True


class MessageComposer(widgets.VBox):
    """Compose one PGM-AUA message (any type and mode) in a form built from its schema.

    ``value`` is the document exactly as :meth:`save` writes it, and the JSON view shows
    it; ``findings``, ``conforms`` and :attr:`report` are its validation after the last
    edit. The form, the JSON view and ``value`` stay in step whichever is edited.

    Drafts: every edit is kept in the draft ``draft_name`` in the drafts folder
    (``draft_dir``, else ``$PGM_EXPLORE_DRAFTS``, else ``~/.pgm-explore/drafts``), written off the
    keystroke path at most about once a second (every ``draft_interval`` seconds when given), and
    at once on Save, on leaving a field, on :meth:`close` and at the end of the process (see
    ``_drafts.DraftSchedule``). Give a
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
        draft_interval: float | None = None,
        **kwargs: Any,
    ) -> None:
        spec = data_type(type_name)
        super().__init__(**kwargs)
        self._area = ErrorArea()
        self._report: Report | None = None
        self._written: dict[Path, str] = {}  # path -> digest of what this composer saved there last
        self.last_reply: MessageComposer | None = None
        self.on_reply: Callable[[MessageComposer], None] | None = None
        """Called with the new composer when the Reply button is pressed (default: shown below)."""
        # A work folder: Save and Open by name in it only (a page served to others; see _workfolder).
        self.work_folder = WorkFolder(work_folder) if isinstance(work_folder, str | Path) else work_folder
        # The parts share the layouts and styles of one context: fewer widget models for the browser.
        chrome = FormContext(spec, lambda _field: None, self._area.guard)
        parts = Parts()
        self._form = DocumentForm(spec, self._area, chrome, self._pending_typed)
        self._verdict = VerdictView(parts, self._area)
        self._json = JsonView(chrome, self._pending_typed)
        self._drafts = DraftKeeper(
            self._area,
            parts,
            folder=Path(draft_dir) if isinstance(draft_dir, str | Path) else None,
            autosave=draft_dir is not False,  # False: no drafts (benchmarks, doctests, composers in memory)
            on_open=self._open_draft,
            on_fresh=self.start_fresh,
            interval=draft_interval,
        )
        self._history = History()
        self._toolbar = Toolbar(
            parts,
            self._area,
            chrome,
            work_folder=self.work_folder,
            save=lambda path, overwrite: self.save(path, overwrite=overwrite),
            load=self.load,
            saved=lambda _path: self.validate_now(),
        )
        self._reply_area = chrome.make(widgets.VBox, _dom_classes=("pgmx-replies",))

        # How the parts talk: each arrow is one trait followed by one observer.
        guard = self._area.guard
        self._form.observe(guard(self._form_changed), names="value")
        self._json.observe(guard(self._json_typed), names="document")
        self._verdict.observe(guard(lambda _change: self._keep_draft()), names="quiet")
        dlink((self._form, "touched"), (self._verdict, "touched"))
        dlink((self._verdict, "shown"), (self._form, "shown"))
        dlink((self, "type_name"), (self._verdict, "type_name"))
        dlink((self, "mode"), (self._verdict, "mode"))
        dlink((self._history, "can_undo"), (self._toolbar, "can_undo"))
        dlink((self._history, "can_redo"), (self._toolbar, "can_redo"))
        chrome.click(self._toolbar.undo, self.undo)
        chrome.click(self._toolbar.redo, self.redo)
        chrome.click(self._toolbar.validate, self.validate_now)
        chrome.click(self._toolbar.reply, self._reply_clicked)

        toolbar = chrome.make(
            widgets.HBox,
            {"align_items": "center", "flex_flow": "row wrap"},
            children=self._toolbar.row(self._verdict, self._drafts.bar.toggle, reply_button),
        )
        self.children = [
            style_widget(chrome.make),
            self._verdict.title,
            toolbar,
            self._area.box,
            self._drafts.bar.box,
            self._toolbar.opener.panel if self._toolbar.opener is not None else self._toolbar.files,
            self._drafts.bar.panel,
            self._form.box,
            self._form.expert_line,
            self._form.expert_box,
            self._verdict.summary,
            self._json.label,
            self._json.editor.text,
            self._json.editor.error,
            self._json.revert,
            self._reply_area,
            # Ctrl/Cmd-Z and Shift-Ctrl/Cmd-Z: the Undo and Redo buttons from the keyboard (_keys).
            chrome.make(UndoKeys, _dom_classes=("pgmx-hidden",), undo=guard(self.undo), redo=guard(self.redo)),
        ]
        self.add_class("pgmx-composer")

        opened = self._drafts.open(str(draft_name)) if draft_name is not None else OpenedDraft(None)
        if opened.content is not None:
            self.draft_name = str(draft_name)
            problem = self._restore(opened.content)
            if problem is None:
                when = local_time(opened.saved) if opened.saved is not None else "an earlier session"
                self._drafts.bar.say(
                    f"Restored draft from {esc(when)} (“{esc(self.draft_name)}”): your last edit is back.", fresh=True
                )
                self._drafts.claim()
                if reply_button and self._reply_draft_answers():
                    guard(self._reply_clicked)()  # the Response being written comes back too
                self._history.forget()  # a composer's history starts with it
                return
            kept = self._drafts.set_damaged_aside()
            opened = OpenedDraft(None, None, f"The draft “{self.draft_name}” could not be restored ({problem}){kept}.")
        doc = copy.deepcopy(dict(document)) if document is not None else skeleton(spec.name, mode)
        self.draft_name = draft_name or self._default_draft_name(doc)
        # A new message does not greet anyone with warnings for what is not filled in yet.
        self._bring(doc, quiet=document is None)
        if opened.notice:
            self._drafts.bar.say(esc(opened.notice) + " This composer starts without it.")
        self._drafts.claim()

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
    def _default_draft_name(doc: Mapping[str, Any]) -> str:
        spec = type_of(doc) or DATA_TYPES[0]
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
        return self._form.spec

    @property
    def aside(self) -> dict[str, dict[str, Any]]:
        """The other mode's values kept aside by the Mode switch, by mode (a copy)."""
        return copy.deepcopy(self._form.aside)

    @property
    def draft_name(self) -> str:
        return self._drafts.name

    @draft_name.setter
    def draft_name(self, name: str) -> None:
        self._drafts.name = name

    @property
    def draft_dir(self) -> Path | None:
        return self._drafts.folder

    @property
    def autosave(self) -> bool:
        return self._drafts.autosave

    @property
    def draft_file(self) -> Path | None:
        return self._drafts.path if self.autosave else None

    def field(self, path: tuple[str | int, ...] | list[str | int]) -> Field:
        """The form field at ``path`` (it must have been built: its parents hold a value)."""
        field = self._form.ctx.fields[tuple(path)]
        assert isinstance(field, Field)
        return field

    def set(self, path: tuple[str | int, ...] | list[str | int], value: Any) -> None:
        """Give the property at ``path`` a value through its widget, as a user would.

        Absent parents are switched on and an index one past the end of an array adds an
        item. A value the widget cannot show (a string for TurnIndex, a number out of bounds)
        is typed into the field's raw JSON editor instead. A name the schema does not list
        goes to the object's "Other properties".
        """
        self._form.set(tuple(path), value)

    def get(self, path: tuple[str | int, ...] | list[str | int]) -> Any:
        """The value the form holds at ``path`` (``KeyError`` / ``IndexError`` if absent)."""
        return self._form.get(tuple(path))

    def remove(self, path: tuple[str | int, ...] | list[str | int]) -> None:
        """Switch the property at ``path`` off (absent), or remove an array item."""
        self._form.remove(tuple(path))

    def load(self, source: Mapping[str, Any] | str | Path, *, fresh: bool = False) -> tuple[Finding, ...]:
        """Show another document: a dict or a ``.json`` file. A Header of another type
        rebuilds the form for that type; values kept aside by the Mode switch are dropped.

        ``fresh``: the document is a new message made for the person (a Reply, a new turn of a
        dialogue), not one opened: its findings show only at the fields touched from now on,
        as in a new composer (the Validate button shows them all).

        Returns the ``duplicate-key`` warnings of a file: a name written twice in one object
        shows (and is saved with) its last value only, so the earlier one must be named
        where the person sees it (the Open panel does)."""
        if not fresh:
            return self._load(source)
        with self._verdict.hold_trait_notifications():
            notes = self._load(source)
            self._start_quiet()
        return notes

    def _load(self, source: Mapping[str, Any] | str | Path) -> tuple[Finding, ...]:
        notes: tuple[Finding, ...] = ()
        if isinstance(source, str | Path):
            doc, notes = _read_document(source)
        else:
            doc = copy.deepcopy(dict(source))
        self._drafts.keep_previous(self._draft())  # what was being composed, in case the load was a slip
        self._form.aside = {}
        self._json.forget_typed()
        # The lines about the document shown until now ("Saved …", "Restored draft …") are no
        # longer true: the status describes what is shown, and the caller says what it opened.
        self._toolbar.status = ""
        self._drafts.bar.say("")
        self._drafts.edited = True
        self._bring(doc)
        return notes

    def reply(self) -> MessageComposer:
        """A new composer with the Response skeleton of this Request (``ValueError`` otherwise).

        Its draft is ``<draft_name>-reply``, so that it comes back: when that draft answers this
        Request (its RequestID is this QueryID), the reply is restored from it, also after a
        restart; a draft that answers another Request is kept aside first (never overwritten)."""
        doc = reply_document(self.value)
        spec_name = self._form.spec.name
        if not self.autosave:
            reply = MessageComposer(spec_name, "RS", document=doc, draft_dir=False, work_folder=self.work_folder)
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
            spec_name, "RS", document=doc, draft_dir=self.draft_dir, draft_name=name, work_folder=self.work_folder
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
        with self._verdict.hold_trait_notifications():
            self._form.touched = set()
            self._verdict.quiet = True

    def validate_now(self) -> Report:
        """Show every finding of the document, also at the fields not touched yet (the
        Validate button); returns the report."""
        self._verdict.quiet = False
        assert self._report is not None
        return self._report

    def switch_type(self, type_name: str, mode: str | None = None) -> None:
        """Start a new message of another type, keeping the session and dialogue context."""
        spec = data_type(type_name)
        current = self.value.get("Mode")
        if spec.has_modes and mode is None:
            mode = current if current in spec.modes else spec.modes[0]
        context = {k: v for k, v in self.value.items() if k in (*REPLY_COPIED, "SessionID")}
        self.load(skeleton(spec.name, mode if spec.has_modes else None, context=context), fresh=True)

    def stamp_now(self) -> None:
        """Set the message's time to now (SimpleTimeID ``st-`` + id), as the Now button does."""
        self._form.stamp_now()

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
        target = work / self._target_name() if path is None else Path(path).expanduser()
        target = Path(os.path.abspath(target))
        inside = any(_within(target.parent, folder) for folder in (Path.cwd(), work))
        text = dump_json(self.value)
        replace = overwrite or holds(target, self._written.get(target))
        written = atomic_write(target, text, durable=True, overwrite=replace, make_parents=inside)
        self._written[written] = digest(text.encode("utf-8"))
        self._verdict.quiet = False
        self._drafts.flush()  # Save writes the draft too, at once
        self._toolbar.status = f"Saved <code>{esc(written)}</code>"
        return written

    def start_fresh(self) -> str | None:
        """Start a new message of this type and mode (the Start fresh button). The state shown
        until now is kept as the draft ``<name> (set aside <time>)``, whose name is returned
        (None when drafts are off); the composer keeps its draft name."""
        kept = self._drafts.keep_aside(self._draft())
        spec = self._form.spec
        mode = self.value.get("Mode")
        self._drafts.edited = False  # the state is kept under its own name, not as "-previous"
        self.load(skeleton(spec.name, mode if mode in spec.modes else None), fresh=True)
        self._keep_draft(now=True)
        if kept is not None:
            self._drafts.bar.say(f"Started fresh. The earlier draft is kept as “{esc(kept)}” (Drafts, then Open).")
        else:
            self._drafts.bar.say("")
        return kept

    # -- undo and redo ---------------------------------------------------------------------------

    def undo(self) -> bool:
        """Go back one step (edits of one field in a row are one step; a Mode switch, an Open,
        a document typed in the JSON view, a Reply are one each); False when there is none. The
        draft keeps the state shown, and Redo brings the step back."""
        step = self._history.back()
        if step is None:
            return False
        self._show_step(step)
        return True

    def redo(self) -> bool:
        """Take the last undone step again; False when there is none."""
        step = self._history.forward()
        if step is None:
            return False
        self._show_step(step)
        return True

    def _show_step(self, step: Step) -> None:
        # The Reply first: the history compares what is shown, and it is shown already.
        self._show_reply(step.reply)
        self._drafts.edited = True
        self._form.aside = step.aside
        self._bring(step.document, quiet=self._verdict.quiet)
        # The lines about the state left ("Opened …", "Saved …") are not about the one shown now.
        self._toolbar.status = ""
        self._toolbar.forget_opened()

    def _step(self) -> Step:
        return Step(self.value, self._form.aside, self._shown_reply())

    def _shown_reply(self) -> MessageComposer | None:
        shown = self._reply_area.children
        return shown[-1] if shown and isinstance(shown[-1], MessageComposer) else None

    def _show_reply(self, reply: MessageComposer | None) -> None:
        if reply is self._shown_reply():
            return
        # An undone Reply is only hidden: its composer lives on, and so does its draft.
        self._reply_area.children = [widgets.HTML("<b>Reply</b>"), reply] if reply is not None else []

    def clear_errors(self) -> None:
        self._area.clear()

    def close(self) -> None:
        """Close the widget (its last edit written to the draft); it no longer counts as a holder
        of its draft name."""
        self._area.guard(self._drafts.close)()
        super().close()

    # -- traits --------------------------------------------------------------------------------

    def _shown_mode(self) -> str:
        spec, mode = self._form.spec, self.value.get("Mode")
        return mode if spec.has_modes and mode in spec.modes else ""

    @validate("mode")
    def _valid_mode(self, proposal: dict[str, Any]) -> str:
        mode = str(proposal["value"])
        spec = self._form.spec
        allowed = spec.modes if spec.has_modes else ("",)
        if mode not in allowed and mode != self._shown_mode():
            raise TraitError(f"{spec.name} has mode {' or '.join(map(repr, allowed))}, not {mode!r}")
        return mode

    @observe("mode")
    def _mode_set(self, change: dict[str, Any]) -> None:
        # Assigned from outside (the value's own mode is set when a document is taken in).
        if change["new"] != self._shown_mode():
            self._area.guard(self._form.enter_mode)(change["new"])

    @validate("type_name")
    def _valid_type(self, proposal: dict[str, Any]) -> str:
        try:
            return data_type(proposal["value"]).name
        except ValueError as exc:
            raise TraitError(str(exc)) from None

    @observe("type_name")
    def _type_set(self, change: dict[str, Any]) -> None:
        if change["old"] and change["new"] != self._form.spec.name:
            self._area.guard(self.switch_type)(change["new"])

    def _form_changed(self, change: dict[str, Any]) -> None:
        if self._form.last_edit is not None:
            self._drafts.edited = True  # a person's edit (not a document shown in the form)
        self.value = change["new"]

    def _json_typed(self, change: dict[str, Any]) -> None:
        if change["new"] is self.value:
            return  # the document the composer gave the view, not one typed
        self._drafts.edited = True
        self.value = change["new"]  # a whole document typed: every finding is about what was typed

    @observe("value")
    def _value_changed(self, change: dict[str, Any]) -> None:
        # The one place where the composer takes a new document in (from the form, the JSON
        # view, load() or an assignment).
        self._area.guard(self._take)(change["new"])

    def _take(self, doc: dict[str, Any]) -> None:
        form = self._form
        outside = doc is not form.value and doc != form.value
        if outside:
            form.show(doc)
            self._verdict.quiet = False  # a document from outside: every finding is news
        report = validate_document(doc)
        self._report = report
        self.conforms = report.conforms
        self.findings = list(report.findings)
        self.type_name = form.spec.name
        self.mode = self._shown_mode()
        self._verdict.report = report
        self._json.document = doc
        self._toolbar.document = doc
        self._toolbar.can_reply = self.mode == "RQ"
        self._toolbar.target = self._target_name()
        field = None if outside else form.last_edit
        self._history.remember(self._step(), field)
        self._keep_draft(field=field)

    def _bring(self, doc: dict[str, Any], *, quiet: bool = False) -> None:
        """Show a document from elsewhere (Open, a draft, Undo), in the form too when it equals
        ``value``; its findings everywhere, or (``quiet``) only at the fields touched."""
        with self._verdict.hold_trait_notifications():
            if doc == self.value:
                self._form.show(copy.deepcopy(doc))
                self._take(self.value)
            else:
                self.value = doc
            self._verdict.quiet = quiet

    def _target_name(self) -> str:
        ident = self.value.get(self._form.spec.id_field)
        return safe_filename(ident if isinstance(ident, str) else "", ".json")

    # -- the draft --------------------------------------------------------------------------------

    def _draft(self) -> dict[str, Any]:
        """The draft's content: a snapshot (written later, by another thread). ``value`` is never
        changed in place, so it is kept as it is; the rest is copied."""
        form = self._form
        return {
            "kind": "message",
            "name": self.draft_name,
            "type": form.spec.name,
            "document": self.value,
            "aside": dict(form.aside),
            "auto": dict(form.auto),
            "expert": form.expert,
            "pending": form.ctx.pending(),
            "json_pending": self._json.pending,
            "quiet": self._verdict.quiet,
            "touched": [list(path) for path in form.touched],
        }

    def _keep_draft(self, *, now: bool = False, field: tuple[str | int, ...] | None = None) -> None:
        if self._drafts.edited and self._report is not None:
            self._drafts.keep(self._draft(), now=now, field=field)

    def _pending_typed(self) -> None:
        """Text that does not parse was typed: kept in the draft."""
        self._drafts.edited = True
        self._keep_draft()

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
        self._form.aside = aside
        self._bring(doc, quiet=bool(draft.get("quiet", False)))
        self._form.touched = touched
        self._form.auto = {**self._form.auto, **auto}
        # The expert view makes its editors when first opened: open it before their texts return.
        if draft.get("expert"):
            self._form.expert = True
        for path, role, text in pending:
            editor = self._form.ctx.editors.get((path, role))
            if editor is not None:
                editor.text.value = text
        if isinstance(json_pending, str):
            self._json.type_text(json_pending)
        return None

    def _open_draft(self, entry: DraftInfo, content: dict[str, Any]) -> None:
        """Show a draft of the Drafts panel here; what was shown stays as ``<name>-previous``."""
        self._drafts.keep_previous(self._draft())
        problem = self._restore(content)
        if problem is not None:
            raise ValueError(f"the draft “{entry.name}” cannot be opened: {problem}")
        self._toolbar.status = ""  # a line about the document shown before is no longer true
        self._drafts.edited = True
        self._keep_draft(now=True)
        self._drafts.bar.say(f"Opened the draft “{esc(entry.name)}” from {esc(local_time(entry.saved))}.")

    def _reply_clicked(self) -> None:
        reply = self.reply()
        self.last_reply = reply
        if self.on_reply is not None:
            self.on_reply(reply)
            return
        self._show_reply(reply)
        self._history.remember(self._step(), None)  # a Reply is a step: Undo hides it again
