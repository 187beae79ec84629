"""Event times as the per-symbol state compares them: epoch seconds or aware datetimes.

PURE. A tracker holds one kind, as one contract field gives; datetimes are compared as
they are and subtracted exactly, so the common case pays no conversion to seconds.
"""

from __future__ import annotations

from datetime import UTC, datetime

__all__ = ["EventTime", "event_moment", "event_seconds", "span"]

#: An event time: epoch seconds, or an aware datetime (one kind per tracker).
EventTime = float | datetime


def event_seconds(value: object) -> float | None:
    """Seconds since the epoch of an event-time field value, or None when it has none.

    A datetime or ISO-8601 text, or int/float epoch seconds (not bool, not NaN). A value
    without an offset is read as UTC: only the order within one symbol matters here,
    and one fixed assumption keeps that order (``datetime.timestamp`` would use the
    machine's zone instead).
    """
    moment = event_moment(value)
    return moment.timestamp() if isinstance(moment, datetime) else moment


def event_moment(value: object) -> EventTime | None:
    """``event_seconds`` without the conversion: an aware datetime for a datetime or
    ISO-8601 text (naive read as UTC), float seconds for a number, None when it has none."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int | float):
        return float(value) if value == value else None
    if isinstance(value, str):
        try:
            value = datetime.fromisoformat(value)
        except ValueError:
            return None
    if not isinstance(value, datetime):
        return None
    return value if value.tzinfo is not None else value.replace(tzinfo=UTC)


def span(later: EventTime, earlier: EventTime) -> float:
    """Seconds from ``earlier`` to ``later`` (exact for datetimes)."""
    if isinstance(later, datetime) and isinstance(earlier, datetime):
        return (later - earlier).total_seconds()
    if isinstance(later, datetime) or isinstance(earlier, datetime):
        raise TypeError(
            f"event times of two kinds: {type(later).__name__}, {type(earlier).__name__}"
        )
    return later - earlier
