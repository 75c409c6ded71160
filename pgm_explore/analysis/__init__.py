"""Layer 5: tables and plots of a transcript.

Each table is a pure function from a :class:`~pgm_explore.dialogue.Transcript` to a tidy
:class:`pandas.DataFrame` with a fixed column order (the ``*_COLUMNS`` constants) and fixed dtypes
(:data:`DTYPES`); an empty transcript gives an empty frame with the same columns. :data:`TABLES`
names them as ``pgm-explore table`` does; :class:`Corpus` gives them over many transcripts
(one file each), as pandas or dask DataFrames. The plots draw with matplotlib, which is imported only
when one is called. ``docs/tables.md`` describes every column.

>>> from pgm_explore.dialogue import Transcript
>>> sorted(TABLES)
['commitments', 'exchanges', 'feasibility', 'findings', 'messages', 'outcomes', 'pastatus']
>>> empty = messages(Transcript())
>>> len(empty), tuple(empty.columns) == MESSAGES_COLUMNS
(0, True)
"""

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

# Public functions are documented where they are imported from, not in private modules.
for _function in (
    Corpus,
    commitments,
    exchanges,
    feasibility,
    findings,
    messages,
    outcomes,
    pa_status_counts,
    plot_feasibility,
    plot_pa_status,
    plot_timeline,
    report_summary,
    tidy_html,
    tidy_tables,
):
    _function.__module__ = __name__
