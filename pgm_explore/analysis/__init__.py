"""Layer 5: tables and plots of a transcript.

Each table is a pure function from a :class:`~pgm_explore.dialogue.Transcript` to a tidy
:class:`pandas.DataFrame` with a fixed column order (the ``*_COLUMNS`` constants) and fixed dtypes
(:data:`DTYPES`); an empty transcript gives an empty frame with the same columns. :data:`TABLES`
names them as ``pgm-explore table`` does, each declared once in :data:`TABLE_CATALOG`; :class:`Corpus` gives them over many transcripts
(one file each), as pandas or dask DataFrames. The plots draw with matplotlib, which is imported only
when one is called. ``docs/tables.md`` describes every column.

>>> from pgm_explore import analysis
>>> from pgm_explore.dialogue import Transcript
>>> sorted(analysis.TABLES)
['commitments', 'exchanges', 'feasibility', 'findings', 'messages', 'outcomes', 'pastatus']
>>> empty = analysis.messages(Transcript())
>>> len(empty), tuple(empty.columns) == analysis.MESSAGES_COLUMNS
(0, True)
"""

from __future__ import annotations

from importlib import import_module
from types import FunctionType
from typing import TYPE_CHECKING, Any

from pgm_explore.analysis._catalog import CATALOG as TABLE_CATALOG
from pgm_explore.analysis._catalog import Table

if TYPE_CHECKING:
    from pgm_explore.analysis._columns import (
        COMMITMENT_EVENTS,
        COMMITMENTS_COLUMNS,
        DTYPES,
        EXCHANGES_COLUMNS,
        FEASIBILITY_COLUMNS,
        FINDINGS_COLUMNS,
        MESSAGES_COLUMNS,
        OUTCOMES_COLUMNS,
        PA_STATUS_COLUMNS,
    )
    from pgm_explore.analysis._corpus import Corpus
    from pgm_explore.analysis._feasibility import feasibility, pa_status_counts
    from pgm_explore.analysis._plots import plot_feasibility, plot_pa_status, plot_timeline
    from pgm_explore.analysis._reports import REPORT_COLUMNS, report_summary
    from pgm_explore.analysis._tables import TABLES, commitments, exchanges, findings, messages, outcomes
    from pgm_explore.analysis._tidy import tidy_html, tidy_tables


__all__ = [
    "COMMITMENTS_COLUMNS",
    "COMMITMENT_EVENTS",
    "Corpus",
    "DTYPES",
    "EXCHANGES_COLUMNS",
    "FEASIBILITY_COLUMNS",
    "FINDINGS_COLUMNS",
    "MESSAGES_COLUMNS",
    "OUTCOMES_COLUMNS",
    "PA_STATUS_COLUMNS",
    "REPORT_COLUMNS",
    "TABLES",
    "TABLE_CATALOG",
    "Table",
    "commitments",
    "exchanges",
    "feasibility",
    "findings",
    "messages",
    "outcomes",
    "pa_status_counts",
    "plot_feasibility",
    "plot_pa_status",
    "plot_timeline",
    "report_summary",
    "tidy_html",
    "tidy_tables",
]

# The modules that hold the public names. They are imported on first use (pandas takes longer to
# import than validating thousands of messages), so that the command line's parser can read the
# table catalog (._catalog) without them.
Table.__module__ = __name__  # documented here, where it is imported from

_HOMES = ("_columns", "_corpus", "_feasibility", "_plots", "_reports", "_tables", "_tidy")


def __getattr__(name: str) -> Any:
    if name not in __all__:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    for home in _HOMES:
        module = import_module(f"{__name__}.{home}")
        for public in set(module.__all__) & set(__all__):
            value = getattr(module, public)
            if isinstance(value, type | FunctionType):
                # Public functions are documented where they are imported from, not in private modules.
                value.__module__ = __name__
            globals()[public] = value
    return globals()[name]


def __dir__() -> list[str]:
    return sorted(__all__)
