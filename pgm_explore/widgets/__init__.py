"""Layer 6: Jupyter widgets to compose, check and collect PGM-AUA messages.

The only module of pgm-explore that imports ipywidgets. One form engine, driven by the
data types' JSON Schemas, serves every type and mode:

- :class:`MessageComposer`: a PC Prompt, or a Request or Response of BKN-PRC, BKN-DAC or
  BKN-PAL, validated at every edit, with its findings at their fields, a raw JSON view,
  Open, Save, Download, and a draft saved at every edit that comes back after a restart;
- :class:`DialogueBuilder`: messages collected into a transcript, with the transcript rules
  and the PA Status and feasibility tables kept up to date;
- :class:`ExampleLoader` (:func:`example_picker`): the repository's examples and transcripts;
- :class:`PartnerInspector`: a partner's tools called by hand, with the JSON-RPC messages both ways
  (needs the ``mcp`` extra; imported when first named);
- :class:`Course`: exercises that check the learner (name the broken field and the rule, fix
  the message in a composer), progress kept in the drafts folder (notebooks 01 and 06);
- :class:`ExplorerApp`: all of them on one app page (``pgm-explore app``).

``docs/widgets.md`` describes the widgets, their CSS classes, the drafts folder
(``$PGM_EXPLORE_DRAFTS``, else ``~/.pgm-explore/drafts``) and the work folder where Save
writes by default (``$PGM_EXPLORE_WORK``, else ``~/.pgm-explore/work``).

>>> c = MessageComposer("BKN-PAL", "RQ", draft_dir=False)
>>> c.set(["TurnIndex"], -1)
>>> c.conforms, [(f.rule, f.json_path) for f in c.report.errors]
(False, [('range', '$.TurnIndex')])
"""

try:
    import ipywidgets as _ipywidgets  # noqa: F401
except ModuleNotFoundError as _missing:  # pragma: no cover - depends on the installed extras
    raise ModuleNotFoundError(
        'pgm_explore.widgets needs ipywidgets: pip install "pgm-explore[notebook]"', name=_missing.name
    ) from _missing

from pgm_explore.dialogue.documents import reply_document, skeleton
from pgm_explore.widgets._app import ExplorerApp
from pgm_explore.widgets._composer import MessageComposer
from pgm_explore.widgets._course import Course
from pgm_explore.widgets._dialogue import DialogueBuilder, example_picker
from pgm_explore.widgets._drafts import default_draft_dir, default_work_dir
from pgm_explore.widgets._examples import ExampleLoader, example_files

__all__ = [
    "Course",
    "DialogueBuilder",
    "ExampleLoader",
    "ExplorerApp",
    "MessageComposer",
    "PartnerInspector",
    "default_draft_dir",
    "default_work_dir",
    "example_files",
    "example_picker",
    "reply_document",
    "skeleton",
]

# Public names are documented where they are imported from, not in private modules; the document
# builders keep their own home, pgm_explore.dialogue.documents (re-exported here for the notebooks).
for _name in __all__:
    if _name in globals() and globals()[_name].__module__.startswith("pgm_explore.widgets."):
        globals()[_name].__module__ = __name__


def __getattr__(name: str) -> object:
    # The inspector needs the MCP SDK (the mcp extra), which the other widgets do not: imported
    # when first named, so that `import pgm_explore.widgets` works without it.
    if name == "PartnerInspector":
        from pgm_explore.widgets._inspector import PartnerInspector

        PartnerInspector.__module__ = __name__
        return PartnerInspector
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
