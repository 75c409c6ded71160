"""The explorer as one app page (``pgm-explore app``, Voilà): compose, validate files, read transcripts,
take the course, try a partner.

Five tabs, each built on the library's own widgets and functions, so that the page shows what the
notebooks show, without code:

- **Compose**: a data type picked from a list, and a :class:`MessageComposer` for it (its draft
  kept under a stable name, so that a reload brings the last edit back); the composer's own Mode
  switch is the page's only one;
- **Validate files**: an upload button; each file is read as ``pgm-explore validate`` reads it
  (:func:`pgm_explore.validate_file`), with a table of the messages and the report of each one that
  has findings; **Open in composer** puts an uploaded message into the Compose tab's composer;
- **Transcript**: a transcript uploaded or picked from the repository's examples, with its summary,
  its tables (:mod:`pgm_explore.analysis`) and its plots;
- **Course**: the exercises of notebooks 01 and 06 (:class:`~pgm_explore.widgets._course.Course`):
  name the broken field and the rule, then fix the message in a composer; progress in the drafts folder;
- **Inspect**: a :class:`~pgm_explore.widgets.PartnerInspector` (a reference partner or a URL; the
  page starts no command), built when the tab is first opened (it needs the ``mcp`` extra).

Every result is HTML or PNG held in widgets (no ``Output`` capture), so that it also works, and is
tested, without a browser.

The page is served to people who run no code, so nothing typed into it names a file on the
machine. What touches the disk, and where:

- the composer's **Save** and **Open**: a name in the **work folder** (``work_folder``, else
  ``$PGM_EXPLORE_WORK``, which ``pgm-explore app`` sets to its ``--work-folder`` or the folder it
  was started in), never a path (:class:`~pgm_explore.widgets._workfolder.WorkFolderFiles`);
  Upload and Download go through the browser; the repository's examples are read from a list;
- the composer's **drafts**: ``.pgm-explore-drafts/`` inside the work folder (``draft_dir``
  overrides it), by draft names that cannot leave it; the course's progress and its composers'
  drafts live there too;
- **Validate files** and the **Transcript** tab: uploads are read in memory, never written; the
  example transcripts are read from a list.
"""

from __future__ import annotations

import io
from collections.abc import Iterable, Mapping
from pathlib import Path, PurePath
from typing import Any

import ipywidgets as widgets

from pgm_explore import analysis
from pgm_explore._display import STYLE, esc, table
from pgm_explore._workfolder import WorkFolder
from pgm_explore.dialogue import Transcript
from pgm_explore.io import input_kind, iter_stream
from pgm_explore.io import report as report_of
from pgm_explore.spec import DATA_TYPES, data_type
from pgm_explore.validation import Report
from pgm_explore.widgets._base import ErrorArea
from pgm_explore.widgets._composer import MessageComposer
from pgm_explore.widgets._course import Course
from pgm_explore.widgets._drafts import default_work_dir
from pgm_explore.widgets._examples import example_files

__all__ = ["ExplorerApp"]

DRAFT_NAME = "app-composer"
DRAFTS_FOLDER = ".pgm-explore-drafts"
"""The app composer's drafts, inside the work folder (hidden: Open lists no hidden file)."""
TRANSCRIPT_TABLES = ("messages", "exchanges", "feasibility", "findings")
UPLOADS = ".json,.jsonl,.ndjson"


def _plural(count: int, word: str) -> str:
    """``1 message``, ``2 messages``.

    >>> _plural(1, "warning"), _plural(2, "warning"), _plural(0, "error")
    ('1 warning', '2 warnings', '0 errors')
    """
    return f"{count} {word}{'' if count == 1 else 's'}"


def _frame_html(frame: Any, folder: str = "") -> str:
    """A DataFrame as the library's left-aligned table: a missing value is an empty cell (not NaN or
    <NA>), sources are named without the ``folder`` their file was read from. A column of names
    (identifiers, times in UTC, numbers, "PC Prompt": two words at most) stays on one line, which the
    browser would break at the hyphens ("dlg-4c21-" / "01"); a column of sentences wraps, and a table
    wider than the page scrolls sideways."""
    rows = [[_cell(v, folder) for v in row] for row in frame.itertuples(index=False)]
    columns = [str(c) for c in frame.columns]
    prose = {c for i, c in enumerate(columns) if any(len(str(row[i]).split()) > 2 for row in rows)}
    kept = table(columns, rows, nowrap=set(columns) - prose)
    return f'<div class="pgmx-app-table" style="overflow-x:auto;max-width:100%">{kept}</div>'


def _cell(value: Any, folder: str) -> Any:
    """
    >>> import pandas as pd
    >>> [_cell(v, "/tmp/x/") for v in (pd.NA, float("nan"), None, 0, "/tmp/x/a.jsonl:3")]
    ['', '', '', 0, 'a.jsonl:3']
    """
    import pandas as pd

    if value is None or (not isinstance(value, str | list | tuple | dict) and pd.isna(value)):
        return ""
    if folder and isinstance(value, str) and value.startswith(folder):
        return value[len(folder) :]
    return value


def _uploaded(value: Iterable[Mapping[str, Any]]) -> list[tuple[str, bytes]]:
    return [(str(file["name"]), bytes(file["content"])) for file in value]


class ExplorerApp(widgets.VBox):
    """The app page: Compose, Validate files, Transcript, Course, Inspect (see the module's documentation).

    >>> import tempfile
    >>> app = ExplorerApp(work_folder=tempfile.mkdtemp(), draft_dir=False)
    >>> app.validate([("one.json", b'{"Header": "PGM-KPA-V1.0", "Mode": "RQ"}')])[0].conforms
    False
    >>> "does not conform" in app.reports.value
    True
    """

    def __init__(
        self,
        *,
        work_folder: str | Path | None = None,
        draft_dir: str | Path | bool | None = None,
        **kwargs: Any,
    ) -> None:
        super().__init__(**kwargs)
        self._area = ErrorArea(("pgmx-error", "pgmx-app-error"))
        folder = Path(work_folder) if work_folder is not None else default_work_dir()
        folder.mkdir(parents=True, exist_ok=True)
        self.work_folder = WorkFolder(folder)
        if draft_dir is None:
            draft_dir = self.work_folder.path / DRAFTS_FOLDER
        self.composer = MessageComposer(
            "PC Prompt", draft_dir=draft_dir, draft_name=DRAFT_NAME, work_folder=self.work_folder
        )
        self.type_picker = widgets.Dropdown(
            description="Data type", options=[dt.name for dt in DATA_TYPES], _dom_classes=("pgmx-app-type",)
        )
        self._follow_composer()
        self.type_picker.observe(self._area.guard(lambda _change: self._pick()), names="value")
        self.composer.observe(lambda _change: self._follow_composer(), names="type_name")
        compose = widgets.VBox([self.type_picker, self.composer], _dom_classes=("pgmx-app-compose",))

        self.upload = widgets.FileUpload(
            accept=UPLOADS, multiple=True, description="Upload files", _dom_classes=("pgmx-app-upload",)
        )
        self.reports = widgets.HTML(_dom_classes=("pgmx-app-reports",))
        self.upload.observe(self._area.guard(lambda change: self.validate(_uploaded(change["new"]))), names="value")
        self._uploaded: list[dict[str, Any]] = []
        self.open_picker = widgets.Dropdown(
            description="Message",
            options=[],
            layout={"width": "420px", "display": "none"},
            _dom_classes=("pgmx-app-open-picker",),
        )
        self.open_button = widgets.Button(
            description="Open in composer",
            tooltip="Put this message into the Compose tab's composer, to fix it there",
            layout={"width": "auto", "display": "none"},
            _dom_classes=("pgmx-app-open",),
        )
        self.open_button.on_click(self._area.guard(lambda _button: self.open_in_composer()))
        check = widgets.VBox(
            [
                widgets.HTML(
                    "<p>Upload <code>.json</code> files (one message, or an array of messages) or "
                    "<code>.jsonl</code> files (one message per line): each message is validated on its own.</p>"
                ),
                self.upload,
                widgets.HBox([self.open_picker, self.open_button]),
                self.reports,
            ],
            _dom_classes=("pgmx-app-check",),
        )

        self.transcript_upload = widgets.FileUpload(
            accept=UPLOADS,
            multiple=False,
            description="Upload a transcript",
            _dom_classes=("pgmx-app-transcript-upload",),
        )
        examples = {label: path for label, path in example_files().items() if label.startswith("transcripts/")}
        self.transcript_picker = widgets.Dropdown(
            description="or an example",
            options=[("— choose a transcript —", None), *examples.items()],
            value=None,
            layout={"width": "520px"},
            style={"description_width": "initial"},
            _dom_classes=("pgmx-app-transcripts",),
        )
        self.transcript_summary = widgets.HTML(_dom_classes=("pgmx-app-summary",))
        self.tables = widgets.HTML(_dom_classes=("pgmx-app-tables",))
        self.plots = widgets.HBox(_dom_classes=("pgmx-app-plots",))
        self.transcript_upload.observe(
            self._area.guard(lambda change: self._transcript_uploaded(_uploaded(change["new"]))), names="value"
        )
        self.transcript_picker.observe(
            self._area.guard(lambda change: change["new"] is not None and self.show_transcript(change["new"])),
            names="value",
        )
        read = widgets.VBox(
            [
                widgets.HBox([self.transcript_upload, self.transcript_picker]),
                self.transcript_summary,
                self.tables,
                self.plots,
            ],
            _dom_classes=("pgmx-app-read",),
        )

        self.course = Course(None, draft_dir=draft_dir, work_folder=self.work_folder)
        self.inspect = widgets.VBox(_dom_classes=("pgmx-app-inspect",))
        self.tabs = widgets.Tab(
            children=[compose, check, read, self.course, self.inspect],
            titles=("Compose", "Validate files", "Transcript", "Course", "Inspect"),
        )
        self.tabs.observe(self._area.guard(lambda _change: self._tab_opened()), names="selected_index")
        self.children = [self.tabs, self._area.box]
        self.add_class("pgmx-app")

    @property
    def errors(self) -> list[BaseException]:
        """Exceptions raised in callbacks (each is also shown on the page)."""
        return self._area.errors

    # -- inspect --------------------------------------------------------------------------------

    def _tab_opened(self) -> None:
        selected = self.tabs.selected_index
        if selected is not None and self.tabs.children[selected] is self.inspect and not self.inspect.children:
            self.inspect.children = [self._inspector()]

    def _inspector(self) -> widgets.Widget:
        """The partner inspector of this page: reference partners and URLs, no command (the page runs
        no code of its visitors'), saving in the work folder."""
        try:
            from pgm_explore.widgets._inspector import PartnerInspector
        except ModuleNotFoundError:
            return widgets.HTML(
                '<p>The Inspect tab needs the MCP SDK: <code>pip install "pgm-explore[mcp]"</code>.</p>'
            )
        return PartnerInspector(allow_commands=False, work_folder=self.work_folder)

    # -- compose --------------------------------------------------------------------------------

    def _follow_composer(self) -> None:
        self.type_picker.value = data_type(self.composer.type_name).name

    def _pick(self) -> None:
        # The type only: the mode is the composer's own switch (one Mode switch on the page).
        if self.type_picker.value != self.composer.type_name:
            self.composer.switch_type(self.type_picker.value)

    # -- validate files -------------------------------------------------------------------------

    def validate(self, files: Iterable[tuple[str, bytes]]) -> list[Report]:
        """Validate the files (name, bytes) and show the table and the reports with findings; the
        messages that are JSON objects can then be opened in the composer (:meth:`open_in_composer`)."""
        # Read as pgm-explore validate reads them (io.validate_file), keeping each message's document.
        items = [
            item
            for name, content in files
            for item in iter_stream(io.BytesIO(bytes(content)), PurePath(name).name or "upload", input_kind(name))
        ]
        reports = [report_of(item) for item in items]
        objects = [(item.source, item.document) for item in items if isinstance(item.document, dict)]
        self._uploaded = [document for _source, document in objects]
        self.open_picker.options = [(source, index) for index, (source, _doc) in enumerate(objects)]
        self.open_picker.value = 0 if objects else None
        shown = "" if objects else "none"
        self.open_picker.layout.display = self.open_button.layout.display = shown
        failing = sum(not r.conforms for r in reports)
        head = f"<p><b>{_plural(len(reports), 'message')}</b>: {failing} {'does' if failing == 1 else 'do'} not conform.</p>"
        with_findings = [r._repr_mimebundle_().get("text/html", "") for r in reports if r.findings]
        self.reports.value = STYLE + head + _frame_html(analysis.report_summary(reports)) + "".join(with_findings)
        return reports

    def open_in_composer(self, index: int | None = None) -> None:
        """Put an uploaded message (the one picked, or the ``index``-th object) into the composer and
        show the Compose tab; what the composer held stays one step back in its drafts."""
        chosen = self.open_picker.value if index is None else index
        if chosen is None:
            return
        self.composer.load(self._uploaded[int(chosen)])
        self.tabs.selected_index = 0

    # -- transcripts ----------------------------------------------------------------------------

    def _transcript_uploaded(self, files: list[tuple[str, bytes]]) -> None:
        for name, content in files:
            # Read in memory (nothing written), its messages named after the file.
            self.show_transcript(Transcript.from_bytes(content, source=name), label=name)

    def show_transcript(self, path: str | Path | Transcript, *, label: str | None = None) -> Transcript:
        """Show a transcript (a file's, or one read already) with its summary, tables and plots."""
        if isinstance(path, Transcript):
            transcript, name, folder = path, label or "transcript", ""
        else:
            transcript = Transcript.load(str(path))
            name = label or Path(path).name
            folder = str(path)[: -len(Path(path).name)]
        self.transcript_summary.value = (
            f"<p><b>{esc(name)}</b>: {_plural(len(transcript.messages), 'message')}, "
            f"{_plural(transcript.errors, 'error')}, {_plural(transcript.warnings, 'warning')}</p>"
        )
        parts = [STYLE]
        for which in TRANSCRIPT_TABLES:
            frame = getattr(analysis, which)(transcript)
            if which == "findings" and frame.empty:
                parts.append("<h4>findings</h4><p>No finding.</p>")
                continue
            parts.append(f"<h4>{esc(which)}</h4>" + _frame_html(frame, folder))
        self.tables.value = "".join(parts)
        self.plots.children = [
            widgets.Image(value=self._png(plot, transcript), format="png", layout={"max_width": "33%"})
            for plot in (analysis.plot_pa_status, analysis.plot_feasibility, analysis.plot_timeline)
        ]
        return transcript

    @staticmethod
    def _png(plot: Any, transcript: Transcript) -> bytes:
        from matplotlib.figure import Figure

        figure = Figure(figsize=(5, 3.2), layout="constrained")
        plot(transcript, ax=figure.add_subplot())
        buffer = io.BytesIO()
        figure.savefig(buffer, format="png", dpi=90)
        return buffer.getvalue()
