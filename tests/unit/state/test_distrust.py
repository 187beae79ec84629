"""What a quarantined record may still feed the per-symbol state."""

from __future__ import annotations

import pytest

from stream_validator.contracts.statespec import SymbolStateSpec
from stream_validator.state import (
    SymbolStateTracker,
    distrusted,
)
from stream_validator.verify.report import Violation, ViolationKind
from tests.support.symbolstate import (
    TIME_BACK,
)

TICK_STATE = SymbolStateSpec(
    key_field="symbol",
    sequence_field="seq",
    event_time_field="event_ts",
    quote_fields=("price", "bid", "ask"),
    frozen_max_updates=20,
)


@pytest.mark.parametrize(
    ("violations", "parts"),
    [
        ([], set()),
        ([(None, "rule_violation")], set()),
        ([("size", "type_mismatch"), ("ask_sz", ViolationKind.MISSING_FIELD)], set()),
        ([("seq", "below_min"), (None, "rule_violation")], {"seq"}),
        ([("event_ts", ViolationKind.TIMESTAMP_OUT_OF_RANGE)], {"time"}),
        ([("bid", "null_value"), ("price", "non_finite")], {"quote"}),
        ([("seq", "duplicate_key"), ("event_ts", "type_mismatch")], {"seq", "time"}),
        ([("seq[0].x", "type_mismatch")], {"seq"}),
        ([("size", "type_mismatch"), ("symbol", "missing_field")], {"key"}),
        ([(None, "undecodable")], {"key"}),
        ([(None, ViolationKind.NOT_A_MAPPING)], {"key"}),
    ],
)
def test_distrusted_names_the_state_fields_that_failed(
    violations: list[tuple[str | None, str]], parts: set[str]
) -> None:
    """A quarantined record feeds every state field that passed its own checks; a failed
    key field or a record-level problem feeds nothing ("key")."""
    found = distrusted(TICK_STATE, [Violation(name, kind, "m") for name, kind in violations])
    assert found == parts


def test_observe_record_leaves_out_distrusted_parts() -> None:
    """A record whose seq is distrusted moves neither the sequence nor raises a gap; its
    time still counts; with "key" distrusted nothing is observed."""
    tracker = SymbolStateTracker(TICK_STATE)
    t0 = "2026-12-01T10:00:00Z"
    assert tracker.observe_record(0, {"symbol": "A", "seq": 1, "event_ts": t0}) == ()
    late = {"symbol": "A", "seq": 9, "event_ts": "2026-12-01T10:00:05Z"}
    assert tracker.observe_record(0, late, frozenset({"seq"})) == ()
    assert tracker.observe_record(0, {"symbol": "B", "seq": 1}, frozenset({"key"})) == ()
    assert len(tracker) == 1
    back = tracker.observe_record(0, {"symbol": "A", "seq": 2, "event_ts": t0})
    assert [event.kind for event in back] == [TIME_BACK]
