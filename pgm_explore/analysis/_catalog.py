"""The tables of a transcript, declared once: name, function, one line of help, section of docs/tables.md.

This module imports nothing heavy (no pandas), so that ``pgm-explore table --help`` and the
parser of every other command can read it: :data:`~pgm_explore.analysis.TABLES` (the functions
by name), the ``table`` subcommand's choices and help, and the table of docs/tables.md all come
from :data:`CATALOG`, and tests hold the document to it (tests/test_cli_table.py).
"""

from __future__ import annotations

from typing import NamedTuple

__all__ = ["CATALOG", "Table"]


class Table(NamedTuple):
    """One table of a transcript."""

    name: str
    """Its name on the command line (``pgm-explore table NAME``), in ``TABLES`` and as its heading in docs/tables.md."""
    function: str
    """The name of its function in :mod:`pgm_explore.analysis`, called with the transcript."""
    help: str
    """What one row is, in a line: ``pgm-explore table --help`` and docs/tables.md show it."""

    @property
    def anchor(self) -> str:
        """The section of docs/tables.md that describes every column (its heading is the name).

        >>> Table("messages", "messages", "one row per message, in transcript order").anchor
        'docs/tables.md#messages'
        """
        return f"docs/tables.md#{self.name}"


CATALOG: tuple[Table, ...] = (
    Table("messages", "messages", "one row per message, in transcript order"),
    Table("exchanges", "exchanges", "one row per Request, with its Response (latency, Outcome)"),
    Table(
        "feasibility",
        "feasibility",
        "one row per Process Action of a BKN-DAC feasibility Request: PAStatus, Reason, Overall, "
        "and the heuristic's PredictedPAStatus",
    ),
    Table("pastatus", "pa_status_counts", "two columns, PAStatus and count: the ten PA Status codes, always ten rows"),
    Table("outcomes", "outcomes", "one row per data type and Kind: how its Requests were answered"),
    Table("commitments", "commitments", "one row per BKN-DAC commitment event (submitted, released, retained, ...)"),
    Table("findings", "findings", "one row per finding, as 'pgm-explore check' reports them"),
)
"""Every table, in the order of docs/tables.md and of ``pgm-explore table --help``."""
