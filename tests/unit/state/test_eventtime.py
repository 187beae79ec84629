"""Event times as the per-symbol state reads them."""

from __future__ import annotations

import math
from datetime import UTC, datetime

import pytest

from stream_validator.state import (
    event_seconds,
)


@pytest.mark.parametrize(
    ("value", "seconds"),
    [
        ("1970-01-01T00:01:00+00:00", 60.0),
        ("1970-01-01T01:01:00+01:00", 60.0),
        ("1970-01-01T00:01:00", 60.0),  # no offset: read as UTC, not the machine's zone
        (datetime(1970, 1, 1, 0, 1, tzinfo=UTC), 60.0),
        (60, 60.0),
        (60.5, 60.5),
    ],
)
def test_event_seconds_reads_times(value: object, seconds: float) -> None:
    """ISO text, datetimes and epoch numbers become epoch seconds."""
    assert event_seconds(value) == seconds


@pytest.mark.parametrize("value", [None, True, "yesterday", math.nan, [1]])
def test_event_seconds_refuses_non_times(value: object) -> None:
    """Anything that is not a time gives None, never an exception."""
    assert event_seconds(value) is None
