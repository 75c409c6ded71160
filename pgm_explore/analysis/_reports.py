"""One row per validated message: the summary a person reads before the reports themselves."""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING

from pgm_explore.validation import Report

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["REPORT_COLUMNS", "report_summary"]

REPORT_COLUMNS = ("source", "type", "mode", "conforms", "errors", "warnings", "rules")
ABSENT = "—"


def report_summary(reports: Iterable[Report]) -> pd.DataFrame:
    """A table of reports: source, type, mode, verdict, how many errors and warnings, rule codes.

    A type or mode that is absent (a PC Prompt has no mode; a message that is not JSON has no
    type) shows as ``—``, never as a missing value.

    >>> import pgm_explore
    >>> frame = report_summary([pgm_explore.validate({"Header": "PGM-KPA-V1.0", "Mode": "RQ"}, source="a")])
    >>> frame.loc[0, ["type", "mode", "rules"]].tolist(), bool(frame.loc[0, "conforms"])
    (['BKN-PAL', 'RQ', 'required'], False)
    >>> report_summary([pgm_explore.validate(b"nope", source="b")]).loc[0, ["type", "mode"]].tolist()
    ['—', '—']
    """
    import pandas as pd

    rows = [
        (
            r.source,
            r.type or ABSENT,
            r.mode or ABSENT,
            r.conforms,
            len(r.errors),
            len(r.warnings),
            ", ".join(dict.fromkeys(f.rule for f in r.findings)),
        )
        for r in reports
    ]
    return pd.DataFrame(rows, columns=list(REPORT_COLUMNS))
