"""What the parts of a :class:`~pgm_explore.widgets._composer.MessageComposer` share.

The composer is one widget written in four modules: ``_composer`` (the public API, the traits
and the one place where a new document is taken in), ``_composer_form`` (the form and the Mode
switch), ``_composer_view`` (the toolbar, the finding display, the JSON view) and
``_composer_files`` (Save and drafts). Each part is a mixin of the composer; this class declares,
once, the state they share and the methods each offers the others, so that each module
type-checks on its own. The values are set by ``MessageComposer.__init__`` and
``ComposerView._build_chrome``; nothing here runs.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

import ipywidgets as widgets

from pgm_explore._workfolder import WorkFolder
from pgm_explore.spec import DataType
from pgm_explore.validation import Finding, Report
from pgm_explore.widgets._base import ErrorArea
from pgm_explore.widgets._drafts import DraftSchedule
from pgm_explore.widgets._filebar import DraftBar, OpenPanel
from pgm_explore.widgets._form import Field, FormContext, JsonEditor, ObjectField

if TYPE_CHECKING:
    from pgm_explore.widgets._composer import MessageComposer
    from pgm_explore.widgets._workfolder import WorkFolderFiles

__all__ = ["ComposerState"]


class ComposerState:
    """The composer's shared state and cross-part methods (declarations for the type checker)."""

    # Traits of MessageComposer.
    value: dict[str, Any]
    mode: str
    type_name: str
    conforms: bool
    findings: list[Any]

    # Set in MessageComposer.__init__.
    autosave: bool
    draft_dir: Path | None
    draft_name: str
    last_reply: MessageComposer | None
    work_folder: WorkFolder | None
    on_reply: Callable[[MessageComposer], None] | None
    _spec: DataType
    _area: ErrorArea
    _report: Report | None
    _aside: dict[str, dict[str, Any]]
    _auto: dict[str, bool]
    _expert: bool
    _dirty: bool
    _from_form: bool
    _internal: int
    _form: ObjectField | None
    _ctx: FormContext | None
    _chrome: FormContext
    _marked: set[Field]
    _quiet: bool
    _touched: set[tuple[str | int, ...]]
    _keep_quiet: int
    _written: dict[Path, str]
    _confirm: Path | None
    _schedule: DraftSchedule
    _last_field: tuple[str | int, ...] | None

    # Widgets made by ComposerView._build_chrome.
    _title: widgets.HTML
    _badge: widgets.HTML
    _consistency: widgets.HTML
    _reply: widgets.Button
    _save_path: widgets.Text
    _save: widgets.Button
    _download: widgets.HTML
    _download_button: widgets.Button
    _undo_button: widgets.Button
    _redo_button: widgets.Button
    _validate: widgets.Button
    _status: widgets.HTML
    _opener: OpenPanel
    _files: WorkFolderFiles | None
    _drafts_bar: DraftBar
    _form_box: widgets.VBox
    _expert_toggle: widgets.Checkbox
    _auto_html: widgets.HTML
    _auto_time: widgets.Checkbox
    _now: widgets.Button
    _auto_dem: widgets.Checkbox
    _expert_fields: widgets.VBox
    _expert_box: widgets.VBox
    _summary: widgets.HTML
    _json: JsonEditor
    _revert: widgets.Button
    _reply_area: widgets.VBox

    # What each part offers the others.
    _refresh: Callable[[], None]
    _show_document: Callable[[dict[str, Any]], None]
    _commit: Callable[[], None]
    _follow_id: Callable[[], None]
    _autosave: Callable[..., None]
    _derived_target: Callable[[], Path]
    _disarm_save: Callable[[], None]
    _save_clicked: Callable[[], None]
    _open_draft: Callable[..., None]
    _pending_typed: Callable[[], None]
    _show_expert_fields: Callable[[], None]
    _load_new: Callable[[Mapping[str, Any]], None]
    stamp_now: Callable[[], None]
    undo: Callable[[], bool]
    redo: Callable[[], bool]
    validate_now: Callable[[], Report]
    start_fresh: Callable[[], str | None]
    reply: Callable[[], MessageComposer]
    load: Callable[..., tuple[Finding, ...]]
