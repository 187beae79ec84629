"""The per-symbol state tracker: event time, frozen quotes, partitions and bounded memory,
reading records."""

from __future__ import annotations

import math
from collections.abc import Sequence

from stream_validator.state import (
    SymbolEvent,
    SymbolStateTracker,
)
from tests.support.symbolstate import (
    FROZEN,
    GAP,
    TIME_BACK,
    Make,
)

# --- event time ------------------------------------------------------------------------


def test_event_time_going_back_beyond_tolerance(
    make_tracker: Make,
) -> None:
    """With 1 s of tolerance, going back 2.5 s is event_time_regression."""
    tracker = make_tracker(max_time_regression_s=1.0)
    tracker.observe(0, "AAPL", event_time=100.0)
    (event,) = tracker.observe(0, "AAPL", event_time=97.5)
    assert (event.kind, event.detail) == (TIME_BACK, "event time went back 2.500 s (tolerance 1 s)")


def test_event_time_back_within_tolerance_is_fine(
    make_tracker: Make,
) -> None:
    """Going back 0.5 s with 1 s of tolerance raises nothing."""
    tracker = make_tracker(max_time_regression_s=1.0)
    tracker.observe(0, "AAPL", event_time=100.0)
    assert tracker.observe(0, "AAPL", event_time=99.5) == ()


def test_event_time_is_judged_against_the_latest_seen(
    make_tracker: Make,
) -> None:
    """A record back in time does not lower the mark: the next one is judged on the max."""
    tracker = make_tracker()
    for t in (100.0, 90.0):
        tracker.observe(0, "AAPL", event_time=t)
    assert [e.kind for e in tracker.observe(0, "AAPL", event_time=95.0)] == [TIME_BACK]


def test_nan_event_time_is_ignored(make_tracker: Make) -> None:
    """A NaN time neither raises an event nor poisons the mark."""
    tracker = make_tracker()
    tracker.observe(0, "AAPL", event_time=100.0)
    assert tracker.observe(0, "AAPL", event_time=math.nan) == ()
    assert [e.kind for e in tracker.observe(0, "AAPL", event_time=99.0)] == [TIME_BACK]


# --- frozen quote ----------------------------------------------------------------------


Quote = tuple[float, tuple[object, ...]]


def quotes(tracker: SymbolStateTracker, items: Sequence[Quote]) -> list[SymbolEvent]:
    """Events of (event time, quote) updates for AAPL."""
    return [e for t, q in items for e in tracker.observe(0, "AAPL", event_time=t, quote=q)]


def test_quote_frozen_for_more_than_n_updates(
    make_tracker: Make,
) -> None:
    """The 4th identical update with a limit of 3 raises frozen_quote."""
    tracker = make_tracker(frozen_max_updates=3)
    events = quotes(tracker, [(float(t), (1.0, 0.9, 1.1)) for t in range(4)])
    assert [(e.kind, e.detail) for e in events] == [
        (FROZEN, "same quote on 4 updates in a row (limit 3)")
    ]


def test_quote_frozen_for_more_than_t_seconds(
    make_tracker: Make,
) -> None:
    """An identical quote held 61 s of event time with a 60 s limit raises frozen_quote."""
    tracker = make_tracker(frozen_max_s=60.0)
    events = quotes(tracker, [(0.0, (1.0,)), (30.0, (1.0,)), (61.0, (1.0,))])
    assert [e.detail for e in events] == ["same quote for 61.000 s (limit 60 s)"]


def test_a_stale_record_does_not_stretch_the_frozen_time(make_tracker: Make) -> None:
    """A record from 1970 holding the same quote is no 'same quote for 56 years'."""
    tracker = make_tracker(event_time_field="ts", frozen_max_s=60.0)
    now = 1_764_000_000.0
    events = quotes(tracker, [(now, (1.0,)), (0.0, (2.0,)), (now + 1, (2.0,))])
    assert FROZEN not in [e.kind for e in events]


def test_frozen_alert_once_per_episode(make_tracker: Make) -> None:
    """A quote stuck for 20 updates alerts once, not on every update past the limit."""
    tracker = make_tracker(frozen_max_updates=3)
    assert len(quotes(tracker, [(float(t), (1.0,)) for t in range(20)])) == 1


def test_new_quote_ends_the_episode(make_tracker: Make) -> None:
    """After the quote moves, a new freeze alerts again."""
    tracker = make_tracker(frozen_max_updates=2)
    frozen = [(0.0, (1.0,))] * 3 + [(1.0, (2.0,))] * 3
    assert len(quotes(tracker, frozen)) == 2


def test_moving_quote_never_alerts(make_tracker: Make) -> None:
    """Alternating quotes are not frozen, however long the feed."""
    tracker = make_tracker(frozen_max_updates=2, frozen_max_s=1.0)
    assert quotes(tracker, [(float(t), (float(t % 2),)) for t in range(50)]) == []


def test_nan_quote_is_never_frozen(make_tracker: Make) -> None:
    """A quote holding NaN does not count as the same quote."""
    tracker = make_tracker(frozen_max_updates=1)
    assert quotes(tracker, [(0.0, (math.nan,)), (1.0, (math.nan,)), (2.0, (math.nan,))]) == []


def test_null_sides_can_be_frozen(make_tracker: Make) -> None:
    """An empty book side (None) held on every update is a frozen quote too."""
    tracker = make_tracker(frozen_max_updates=1)
    assert [e.kind for e in quotes(tracker, [(0.0, (None, 1.0)), (1.0, (None, 1.0))])] == [FROZEN]


# --- partitions and bounded memory -----------------------------------------------------


def test_drop_forgets_only_that_partition(make_tracker: Make) -> None:
    """After drop(0), partition 0 starts fresh while partition 1 keeps its state."""
    tracker = make_tracker()
    tracker.observe(0, "AAPL", seq=10)
    tracker.observe(1, "AAPL", seq=10)
    assert tracker.drop(0) == 1
    assert tracker.observe(0, "AAPL", seq=50) == ()
    assert [e.kind for e in tracker.observe(1, "AAPL", seq=50)] == [GAP]


def test_drop_of_an_unknown_partition_is_a_no_op(
    make_tracker: Make,
) -> None:
    """Revoking a partition that never had records drops nothing."""
    assert make_tracker().drop(("ticks", 3)) == 0


def test_symbol_count_is_bounded_and_evictions_counted(
    make_tracker: Make,
) -> None:
    """With max_symbols=2, a third symbol evicts the least recently seen one."""
    tracker = make_tracker(max_symbols=2)
    for symbol in ("A", "B", "A", "C"):
        tracker.observe(0, symbol, seq=1)
    assert (len(tracker), tracker.evictions) == (2, 1)
    assert tracker.observe(0, "A", seq=2) == ()  # A was used recently: kept
    assert tracker.observe(0, "B", seq=9) == ()  # B was evicted: starts fresh


def test_evicted_symbol_can_be_dropped_safely(
    make_tracker: Make,
) -> None:
    """drop() after an eviction removes only what is still held."""
    tracker = make_tracker(max_symbols=1)
    tracker.observe(0, "A", seq=1)
    tracker.observe(0, "B", seq=1)
    assert (tracker.drop(0), len(tracker)) == (1, 0)


# --- reading records ---------------------------------------------------------------------


def test_observe_record_reads_the_spec_fields(make_tracker: Make) -> None:
    """Key, seq, ISO event time and quote come from the fields the spec names."""
    tracker = make_tracker(
        event_time_field="event_ts", quote_fields=("bid", "ask"), frozen_max_updates=1
    )
    tick = {
        "symbol": "AAPL",
        "seq": 1,
        "event_ts": "2026-12-01T10:00:00+00:00",
        "bid": 1.0,
        "ask": 2.0,
    }
    assert tracker.observe_record(0, tick) == ()
    later = {**tick, "seq": 3, "event_ts": "2026-12-01T09:59:00+00:00"}
    assert [e.kind for e in tracker.observe_record(0, later)] == [GAP, TIME_BACK, FROZEN]


def test_observe_record_skips_a_record_without_a_str_key(make_tracker: Make) -> None:
    """A null or numeric symbol is the field check's business: no state is created."""
    tracker = make_tracker()
    assert tracker.observe_record(0, {"symbol": None, "seq": 1}) == ()
    assert len(tracker) == 0


def test_observe_record_ignores_a_bool_seq(make_tracker: Make) -> None:
    """True is not sequence number 1."""
    tracker = make_tracker()
    tracker.observe_record(0, {"symbol": "A", "seq": 5})
    assert tracker.observe_record(0, {"symbol": "A", "seq": True}) == ()
