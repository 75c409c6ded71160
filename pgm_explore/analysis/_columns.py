"""The columns of the tables (names, order, dtypes) and how a message's values are read into them.

One module for what every table shares, so that :mod:`._tables` and :mod:`._feasibility` build
their rows alike (docs/tables.md says what each column holds).
"""

from __future__ import annotations

import datetime as dt
import math
import time
from collections.abc import Mapping, Sequence
from decimal import ROUND_FLOOR, Decimal
from typing import Any

import pandas as pd

from pgm_explore.validation.findings import written

__all__ = [
    "COMMITMENTS_COLUMNS",
    "COMMITMENT_EVENTS",
    "DTYPES",
    "EXCHANGES_COLUMNS",
    "FEASIBILITY_COLUMNS",
    "FINDINGS_COLUMNS",
    "MESSAGES_COLUMNS",
    "OUTCOMES_COLUMNS",
    "PA_STATUS_COLUMNS",
]

_MESSAGES_DTYPES: Mapping[str, str] = {
    "position": "int64",
    "source": "string",
    "type": "string",
    "mode": "string",
    "dialog": "string",
    "session": "string",
    "query_id": "string",
    "request_id": "string",
    "turn": "Int64",
    "kind": "string",
    "outcome": "string",
    "time": "float64",
    "time_utc": "string",
    "conforms": "bool",
    "errors": "int64",
    "warnings": "int64",
}
_EXCHANGES_DTYPES: Mapping[str, str] = {
    "type": "string",
    "dialog": "string",
    "turn": "Int64",
    "kind": "string",
    "request": "string",
    "request_source": "string",
    "response": "string",
    "response_source": "string",
    "latency": "float64",
    "latency_ms": "float64",
    "outcome": "string",
}
_FEASIBILITY_DTYPES: Mapping[str, str] = {
    "DialogID": "string",
    "RequestID": "string",
    "Step": "Int64",
    "Statement": "string",
    "Action": "string",
    "PAStatus": "string",
    "Reason": "string",
    "Overall": "string",
    "PredictedPAStatus": "string",
}
_PA_STATUS_DTYPES: Mapping[str, str] = {"PAStatus": "string", "count": "int64"}
OUTCOMES_DTYPES: Mapping[str, str] = {
    "type": "string",
    "kind": "string",
    "answered": "int64",
    "partially_answered": "int64",
    "not_answered": "int64",
    "unanswered": "int64",
    "total": "int64",
}
_COMMITMENTS_DTYPES: Mapping[str, str] = {
    "dialog": "string",
    "source": "string",
    "position": "int64",
    "commitment": "string",
    "event": "string",
    "statement": "string",
}
_FINDINGS_DTYPES: Mapping[str, str] = {
    "source": "string",
    "dialog": "string",
    "type": "string",
    "severity": "string",
    "rule": "string",
    "path": "string",
    "message": "string",
    "spec": "string",
}

DTYPES: Mapping[str, Mapping[str, str]] = {
    "messages": _MESSAGES_DTYPES,
    "exchanges": _EXCHANGES_DTYPES,
    "feasibility": _FEASIBILITY_DTYPES,
    "pastatus": _PA_STATUS_DTYPES,
    "outcomes": OUTCOMES_DTYPES,
    "commitments": _COMMITMENTS_DTYPES,
    "findings": _FINDINGS_DTYPES,
}
"""The dtype of every column of every table, by the table's name in :data:`TABLES`, in column order.

>>> DTYPES["messages"]["turn"], DTYPES["exchanges"]["latency"], DTYPES["feasibility"]["Step"]
('Int64', 'float64', 'Int64')
"""

MESSAGES_COLUMNS: tuple[str, ...] = tuple(_MESSAGES_DTYPES)
"""Columns of :func:`messages`, in order."""
EXCHANGES_COLUMNS: tuple[str, ...] = tuple(_EXCHANGES_DTYPES)
"""Columns of :func:`exchanges`, in order."""
FEASIBILITY_COLUMNS: tuple[str, ...] = tuple(_FEASIBILITY_DTYPES)
"""Columns of :func:`feasibility`, in order (named as in BKN-DAC, ``PredictedPAStatus`` is the heuristic's)."""
PA_STATUS_COLUMNS: tuple[str, ...] = tuple(_PA_STATUS_DTYPES)
"""Columns of :func:`pa_status_counts`, in order."""
OUTCOMES_COLUMNS: tuple[str, ...] = tuple(OUTCOMES_DTYPES)
"""Columns of :func:`outcomes`, in order."""
COMMITMENTS_COLUMNS: tuple[str, ...] = tuple(_COMMITMENTS_DTYPES)
"""Columns of :func:`commitments`, in order."""
FINDINGS_COLUMNS: tuple[str, ...] = tuple(_FINDINGS_DTYPES)
"""Columns of :func:`findings`, in order (unlike ``validation.FINDING_COLUMNS``: ``dialog``, no ``mode``)."""

COMMITMENT_EVENTS: tuple[str, ...] = ("submitted", "released", "retained", "conflicting", "status-released")
"""The values of the ``event`` column of :func:`commitments`: two a Request makes, three a Response reports."""

# --- reading values as the tables show them -------------------------------------------------------


def _str(value: Any) -> str | None:
    return value if isinstance(value, str) else None


def _int(value: Any) -> int | None:
    """An integral JSON number as an int (``2.0`` is 2, as the transcript checker reads TurnIndex)."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    if isinstance(value, float) and not (math.isfinite(value) and value.is_integer()):
        return None
    return int(value)


_EPOCH = dt.datetime(1970, 1, 1, tzinfo=dt.UTC)
_LAST_SECOND = 253_402_300_799
"""The last whole second of the year 9999 on the epoch, the last that :func:`_utc` writes."""


def _utc(clock: tuple[bool, float] | None) -> str | None:
    """An absolute time as ISO 8601 in UTC, to the millisecond (to the microsecond when it has
    more); None for a relative time, one that cannot be read, or one outside the years 1 to 9999.

    The digits are those of the seconds as the message wrote them (their shortest decimals), never
    float noise.

    >>> _utc((True, 1796518920.997)), _utc((True, 1794826200.0)), _utc((True, 0.000123))
    ('2026-12-06T01:02:00.997Z', '2026-11-16T10:50:00.000Z', '1970-01-01T00:00:00.000123Z')
    >>> _utc((False, 12.5)), _utc(None), _utc((True, 1e300)), _utc((True, -0.5))
    (None, None, None, '1969-12-31T23:59:59.500Z')
    """
    if clock is None or not clock[0]:
        return None
    seconds = clock[1]
    text = repr(seconds)
    whole_digits, _, fraction = text.partition(".")
    # (A time on or after the epoch written with at most six decimals, as messages write them, is
    # read from its digits: the Decimal and the datetime of the exact way took about 6 µs, the
    # largest part of a row of the table of messages. Any other time goes the exact way.)
    if whole_digits.isdigit() and len(fraction) <= 6 and (not fraction or fraction.isdigit()):
        whole = int(whole_digits)
        if whole <= _LAST_SECOND:
            micro = fraction.ljust(6, "0")  # (the microseconds' digits)
            try:
                day_and_time = time.strftime("%Y-%m-%dT%H:%M:%S.", time.gmtime(whole))
            except (OverflowError, OSError, ValueError):  # (a C library whose gmtime stops earlier)
                return _exact_utc(text)
            return day_and_time + (micro[:3] + "Z" if micro.endswith("000") else micro + "Z")
    return _exact_utc(text) if math.isfinite(seconds) else None


def _exact_utc(text: str) -> str | None:
    """:func:`_utc` of the seconds whose shortest decimals are ``text``, whatever they are."""
    exact = Decimal(text)
    whole = int(exact.to_integral_value(rounding=ROUND_FLOOR))
    micro = int(((exact - whole) * 1_000_000).to_integral_value())
    try:
        when = _EPOCH + dt.timedelta(seconds=whole, microseconds=micro)
    except OverflowError:
        return None
    spec = "microseconds" if when.microsecond % 1000 else "milliseconds"
    return when.replace(tzinfo=None).isoformat(timespec=spec) + "Z"


def _ms(seconds: float | None) -> float | None:
    """Seconds as milliseconds rounded to the microsecond, from the shortest decimals of the
    seconds: ``0.7`` is ``700.0``, never ``700.0000000000001``.

    >>> _ms(0.7), _ms(1.2345678), _ms(None), _ms(-0.25)
    (700.0, 1234.568, None, -250.0)
    """
    if seconds is None or not math.isfinite(seconds):
        return None
    return float((Decimal(repr(seconds)) * 1000).quantize(Decimal("0.001")))


def _list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []


def _dict(value: Any) -> Mapping[str, Any]:
    return value if isinstance(value, dict) else {}


def _step_key(value: Any) -> Any:
    # Steps are compared the way the checker compares them (1 == 1.0), but a bool is no step number and
    # an unhashable value from a broken message must not raise.
    if isinstance(value, int | float | str) and not isinstance(value, bool):
        return value
    return ("not-a-step", repr(value))


_INT64 = range(-(2**63), 2**63)


def _series(values: Sequence[Any], dtype: str) -> pd.Series:
    """A column of ``dtype``; for Int64, ``object`` with exact ints when a value does not fit,
    and, for an int longer than Python writes (only a dict built in Python holds one), its size
    in words: no table, CSV or JSON could show it.

    >>> _series([1, None], "Int64").dtype, _series([2**64, None, 10**5000], "Int64").tolist()
    (Int64Dtype(), [18446744073709551616, <NA>, 'an integer of about 5,000 digits'])
    """
    if dtype == "Int64" and any(value is not None and value not in _INT64 for value in values):
        return pd.Series([_shown_int(value) for value in values], dtype="object")
    return pd.Series(list(values), dtype=dtype)


def _shown_int(value: Any) -> Any:
    if value is None:
        return pd.NA
    if isinstance(value, int) and value.bit_length() >= 14_000:  # near sys.get_int_max_str_digits()
        try:
            repr(value)
        except ValueError:
            return written(value)
    return value


def _frame(rows: Sequence[Sequence[Any]], dtypes: Mapping[str, str]) -> pd.DataFrame:
    """Rows (tuples in column order) as a DataFrame with exactly these columns and, save for whole
    numbers beyond 64 bits (:func:`_series`), these dtypes."""
    columns = list(zip(*rows, strict=True)) if rows else [() for _ in dtypes]
    return pd.DataFrame(
        {name: _series(values, dtype) for (name, dtype), values in zip(dtypes.items(), columns, strict=True)}
    )
