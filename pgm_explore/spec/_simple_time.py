"""Simple Time (MPAI-OSD V1.5), read and written in one place.

Source: the bundled schema ``https://schemas.mpai.community/OSD/V1.5/data/SimpleTime.json``
(DECISIONS D5): each segment's ``FlagsByte`` holds TimeType in bit 0 and TimeUnit in bits 2..1,
which the segment may also spell out as ``TimeType`` (true: absolute) and ``TimeUnit`` ("00"
seconds, "01" milliseconds, "10" microseconds, "11" nanoseconds). ``QueryTime`` and
``PCPromptTime`` are Simple Times: the models validate them, :func:`simple_time_now` writes one
and :func:`simple_time_seconds` reads one (the transcript rules compare them).
"""

from __future__ import annotations

import time
from typing import Any, Literal, get_args

__all__ = [
    "AccuracyModeValue",
    "SIMPLE_TIME_ID",
    "SimpleTimeHeader",
    "TimeUnitCode",
    "simple_time_now",
    "simple_time_seconds",
]

SIMPLE_TIME_ID = "https://schemas.mpai.community/OSD/V1.5/data/SimpleTime.json"
SimpleTimeHeader = Literal["OSD-STM-V1.5"]
TimeUnitCode = Literal["00", "01", "10", "11"]
"""``TimeUnit`` of a segment: seconds, milliseconds, microseconds, nanoseconds."""
AccuracyModeValue = Literal["single", "separate"]
"""``AccuracyMode`` of a segment: one tolerance for both ends, or one each."""

_DIVISOR = {"00": 1, "01": 1000, "10": 1000_000, "11": 1000_000_000}
_FLAG_UNIT: tuple[str, ...] = get_args(TimeUnitCode)  # indexed by bits 2..1 of FlagsByte
_HEADER: str = get_args(SimpleTimeHeader)[0]
_MS_UNIT = "01"
_ABSOLUTE_MS_FLAGS = int(_MS_UNIT, 2) << 1 | 1


def simple_time_now(*, time_id: str | None = None) -> dict[str, Any]:
    """An absolute Simple Time for the present instant, in milliseconds since 1970-01-01.

    The clock is read to the millisecond, hence the ±1 ms accuracy.

    >>> now = simple_time_now(time_id="STM-1")
    >>> segment = now["SimpleTimeData"][0]
    >>> segment["FlagsByte"], segment["TimeType"], segment["TimeUnit"], segment["AccuracyMode"]
    (3, True, '01', 'single')
    >>> simple_time_seconds(now)[0], now["SimpleTimeID"]
    (True, 'STM-1')
    """
    import uuid  # here: `import pgm_explore` does not need it, and it costs more than the rest of spec

    now_ms = time.time_ns() // 1_000_000
    return {
        "Header": _HEADER,
        "SimpleTimeID": time_id if time_id is not None else f"STM-{uuid.uuid4()}",
        "SimpleTimeData": [
            {
                "FlagsByte": _ABSOLUTE_MS_FLAGS,
                "StartTime": now_ms,
                "EndTime": now_ms,
                "AccuracyMode": "single",
                "AccuracyPlusMinus": 1,
                "TimeType": True,
                "TimeUnit": _MS_UNIT,
                "Reserved": 0,
            }
        ],
    }


def simple_time_seconds(value: Any) -> tuple[bool, float] | None:
    """(absolute?, seconds) of the first segment of an OSD Simple Time, if it can be read.

    >>> simple_time_seconds({"SimpleTimeData": [{"StartTime": 1500, "TimeType": True, "TimeUnit": "01"}]})
    (True, 1.5)
    >>> simple_time_seconds({"SimpleTimeData": [{"FlagsByte": 0, "StartTime": 2}]})
    (False, 2.0)
    >>> simple_time_seconds({"SimpleTimeData": [{"StartTime": 1796518920997, "TimeType": True, "TimeUnit": "01"}]})
    (True, 1796518920.997)

    The schema allows any number: a StartTime of 10**309 milliseconds is 1e306 seconds, and
    one too far from the epoch for a float of seconds (beyond about 1.8e308) cannot be read:

    >>> simple_time_seconds({"SimpleTimeData": [{"StartTime": 10**309, "TimeType": True, "TimeUnit": "01"}]})
    (True, 1e+306)
    >>> simple_time_seconds({"SimpleTimeData": [{"StartTime": -(10**400), "TimeType": True, "TimeUnit": "00"}]}) is None
    True
    """
    # Read for every message of a transcript: one try block rather than a check per step.
    try:
        segment = value["SimpleTimeData"][0]
        return segment_seconds(
            segment["StartTime"], segment.get("TimeType"), segment.get("TimeUnit"), segment.get("FlagsByte", 0)
        )
    except (KeyError, IndexError, TypeError, AttributeError, OverflowError):
        return None


def segment_seconds(start: Any, absolute: Any, unit: Any, flags: Any) -> tuple[bool, float] | None:
    """(absolute?, seconds) of a Simple Time segment whose StartTime, TimeType, TimeUnit and
    FlagsByte are given (TimeType and TimeUnit None when not spelt out: read from the flags):
    :func:`simple_time_seconds` once the segment is found, as a dict or as a typed Struct.
    Raises what a wrong FlagsByte or the division raise (TypeError, OverflowError)."""
    if absolute is None or unit is None:  # read from the flags only when not spelt out
        absolute = bool(flags & 1) if absolute is None else absolute
        unit = _FLAG_UNIT[(flags >> 1) & 3] if unit is None else unit
    divisor = _DIVISOR.get(unit) if type(unit) is str else None
    if divisor is None or type(start) not in (int, float):
        return None
    # Divided, not multiplied by 1e-3: the quotient is the float nearest the exact value, so
    # 1796518920997 ms reads 1796518920.997 s, not 1796518920.9970002 (1e-3 is no exact float);
    # an int beyond a float is divided exactly too, when the result is one.
    return bool(absolute), start / divisor
