"""Per-symbol state: sequence gaps and regressions, event time, frozen quotes, bounds."""

from __future__ import annotations

import math
import random
from collections.abc import Callable, Sequence
from datetime import UTC, datetime

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from stream_validator.contracts.statespec import SymbolStateSpec
from stream_validator.verify.report import Violation, ViolationKind
from stream_validator.verify.symbolstate import (
    MAX_KEY_CHARS,
    EventTally,
    SymbolEvent,
    SymbolEventKind,
    SymbolStateTracker,
    _given_up_detail,
    distrusted,
    event_seconds,
)

Make = Callable[..., SymbolStateTracker]
GAP = SymbolEventKind.SEQUENCE_GAP
REGRESSION = SymbolEventKind.SEQUENCE_REGRESSION
TIME_BACK = SymbolEventKind.EVENT_TIME_REGRESSION
FROZEN = SymbolEventKind.FROZEN_QUOTE
GIVEN_UP = SymbolEventKind.HOLES_GIVEN_UP
LATE = SymbolEventKind.SEQUENCE_LATE


@pytest.fixture
def make_tracker() -> Callable[..., SymbolStateTracker]:
    """A tracker factory: keyword arguments override SymbolStateSpec defaults."""

    def make(**spec: object) -> SymbolStateTracker:
        return SymbolStateTracker(SymbolStateSpec(**spec))  # type: ignore[arg-type]

    return make


def feed_seqs(
    tracker: SymbolStateTracker, seqs: list[int], symbol: str = "AAPL"
) -> list[SymbolEvent]:
    """Every event raised by feeding ``seqs`` for one symbol on partition 0."""
    return [e for seq in seqs for e in tracker.observe(0, symbol, seq=seq)]


def held_holes(tracker: SymbolStateTracker) -> list[tuple[int, int]]:
    """The pending hole ranges [start, end) of the tracker's one symbol."""
    ((_, state),) = tracker._items()
    flat = state.gaps.holes if state.gaps is not None else []
    return list(zip(flat[::2], flat[1::2], strict=True))


# --- sequence --------------------------------------------------------------------------


def test_consecutive_sequence_raises_nothing(
    make_tracker: Make,
) -> None:
    """1, 2, 3, 4 is a healthy feed."""
    assert feed_seqs(make_tracker(), [1, 2, 3, 4]) == []


def test_first_record_starts_fresh_at_any_number(
    make_tracker: Make,
) -> None:
    """The first sequence number of a symbol is never a gap."""
    assert feed_seqs(make_tracker(), [5000]) == []


def test_gap_is_reported_with_the_count_missed(
    make_tracker: Make,
) -> None:
    """1, 2, 5 misses two numbers: one sequence_gap with count 2."""
    (event,) = feed_seqs(make_tracker(), [1, 2, 5])
    assert (event.kind, event.symbol, event.count) == (GAP, "AAPL", 2)
    assert event.detail == "2 sequence number(s) missing before 5"


def test_repeat_is_a_regression(make_tracker: Make) -> None:
    """The same number twice is a step back: seq must increase."""
    (event,) = feed_seqs(make_tracker(), [1, 2, 2])
    assert (event.kind, event.detail) == (REGRESSION, "seq 2 after 2")


def test_step_back_is_a_regression_and_keeps_the_high(
    make_tracker: Make,
) -> None:
    """After 1, 2, 3, a 1 is a regression and 4 then continues without a gap."""
    events = feed_seqs(make_tracker(), [1, 2, 3, 1, 4])
    assert [e.kind for e in events] == [REGRESSION]


def test_late_number_inside_the_window_is_tolerated(
    make_tracker: Make,
) -> None:
    """With a window of 2, 1, 3, 2, 4 raises nothing."""
    assert feed_seqs(make_tracker(sequence_window=2), [1, 3, 2, 4]) == []


def test_hole_is_reported_when_it_leaves_the_window(
    make_tracker: Make,
) -> None:
    """With a window of 2, a missing 2 is a gap once the feed reaches 5, not before."""
    tracker = make_tracker(sequence_window=2)
    assert feed_seqs(tracker, [1, 3, 4]) == []
    (event,) = feed_seqs(tracker, [5])
    assert (event.kind, event.count) == (GAP, 1)


def test_number_older_than_the_window_is_a_regression(
    make_tracker: Make,
) -> None:
    """With a window of 1, 2 arriving after 1, 3, 4 is reported twice: gap, then regression."""
    events = feed_seqs(make_tracker(sequence_window=1), [1, 3, 4, 2])
    assert [e.kind for e in events] == [GAP, REGRESSION]


def test_big_jump_keeps_at_most_window_holes(
    make_tracker: Make,
) -> None:
    """A jump of a million with a window of 10 reports the older holes at once, keeps 10."""
    tracker = make_tracker(sequence_window=10)
    (event,) = feed_seqs(tracker, [1, 1_000_002])
    assert event.count == 1_000_000 - 10
    (late,) = feed_seqs(tracker, [1_000_012])
    assert late.count == 10  # the ten kept holes left the window; 1_000_003.. are kept
    assert feed_seqs(tracker, [1_000_003]) == []


def test_a_jump_under_a_huge_window_keeps_one_range(make_tracker: Make) -> None:
    """A jump of ten million under a window as wide keeps one range of holes, not ten
    million numbers (a jump of 10**9 took 16 GB and never finished); late numbers inside
    it still fill their holes, and the rest are missed when the window passes them."""
    tracker = make_tracker(sequence_window=10**7)
    assert feed_seqs(tracker, [1, 10**7]) == []
    assert held_holes(tracker) == [(2, 10**7)]
    assert feed_seqs(tracker, [5, 2, 10**7 - 1]) == []
    assert held_holes(tracker) == [(3, 5), (6, 10**7 - 1)]
    (gap,) = feed_seqs(tracker, [2 * 10**7 + 10])
    # Missed: the pending 3, 4 and 6 .. 10**7 - 2, then 10**7 + 1 .. 10**7 + 9 at once.
    assert (gap.kind, gap.count) == (GAP, 2 + (10**7 - 1 - 6) + 9)


def test_random_late_numbers_keep_at_most_max_holes(make_tracker: Make) -> None:
    """Under a huge window, a jump and random late numbers hold at most max_holes ranges
    (without a bound every late number split a range: 400,000 took 76 s)."""
    tracker = make_tracker(sequence_window=10**12, resync_after=None, max_holes=50)
    rng = random.Random(3)
    events = feed_seqs(tracker, [1, 10**9, *(rng.randrange(2, 10**9) for _ in range(2000))])
    assert len(held_holes(tracker)) == tracker.holes == 50
    assert sum(e.count for e in events if e.kind is GIVEN_UP) > 0
    assert REGRESSION not in {e.kind for e in events}


def test_the_oldest_holes_are_given_up_with_their_count(make_tracker: Make) -> None:
    """With max_holes=2, a third hole gives up the lowest one: an event counting its numbers."""
    tracker = make_tracker(sequence_window=100, max_holes=2)
    assert feed_seqs(tracker, [1, 4, 7]) == []
    (event,) = feed_seqs(tracker, [10])
    assert (event.kind, event.count) == (GIVEN_UP, 2)
    assert held_holes(tracker) == [(5, 7), (8, 10)]


def test_a_late_number_in_a_given_up_hole_is_late_not_a_regression(make_tracker: Make) -> None:
    """A number from a hole given up is sequence_late, and never counts towards a resync."""
    tracker = make_tracker(sequence_window=100, max_holes=1, resync_after=2)
    feed_seqs(tracker, [1, 4, 7])  # gives up 2, 3
    events = feed_seqs(tracker, [2, 3, 5])
    assert [e.kind for e in events] == [LATE, LATE]
    assert feed_seqs(tracker, [8]) == []  # no resync happened: 8 follows 7
    assert [e.kind for e in feed_seqs(tracker, [7])] == [REGRESSION]  # above the given up


def test_holes_in_all_symbols_are_bounded_by_max_holes_total(make_tracker: Make) -> None:
    """Past max_holes_total, the symbol adding a hole gives up its own oldest (or the new)."""
    tracker = make_tracker(sequence_window=100, max_holes=10, max_holes_total=3)
    for symbol in "ABCD":
        feed_seqs(tracker, [1, 3], symbol)
    assert tracker.holes == 3
    assert tracker.holes_given_up == 1
    (event,) = feed_seqs(tracker, [2], "D")  # its hole was given up at once
    assert event.kind is LATE
    assert [e.kind for e in feed_seqs(tracker, [2], "A")] == []  # A's hole was kept


@pytest.mark.parametrize("forget", ["drop", "evict"])
def test_forgotten_symbols_release_their_holes(make_tracker: Make, forget: str) -> None:
    """Holes of a dropped or evicted symbol no longer count towards max_holes_total."""
    tracker = make_tracker(sequence_window=100, max_symbols=1)
    tracker.observe(0, "A", seq=1)
    tracker.observe(0, "A", seq=5)
    assert tracker.holes == 1
    if forget == "drop":
        tracker.drop(0)
    else:
        tracker.observe(1, "B", seq=1)
    assert tracker.holes == 0


def test_a_healthy_symbol_holds_no_sequence_extras(make_tracker: Make) -> None:
    """The hole list and renumbering streak are held only while needed (an empty deque
    per symbol was 760 of its 1,262 bytes)."""
    tracker = make_tracker(sequence_window=5)
    feed_seqs(tracker, [1, 2, 4, 3, 5, 2, 6])  # a late number, then a repeat
    ((_, state),) = tracker._items()
    assert state.gaps is None


@pytest.mark.parametrize("batch", [False, True], ids=["observe", "observe_columns"])
def test_long_symbols_are_held_compact_and_kept_apart(make_tracker: Make, batch: bool) -> None:
    """A 1 MB symbol is held as its start and a digest (100,000 of them could hold 100 GB), two
    that differ only at the end keep their own state, and events show the symbol's start."""
    tracker = make_tracker()
    one, two = "S" * 10**6 + "1", "S" * 10**6 + "2"
    rows = [(one, 1), (two, 7), (one, 2), (two, 8), (one, 5)]
    if batch:
        found = tracker.observe_columns(
            [0] * 5, [r[0] for r in rows], [r[1] for r in rows], [None] * 5
        )
        events = [e for _, events in found for e in events]
    else:
        events = [e for symbol, seq in rows for e in tracker.observe(0, symbol, seq=seq)]
    assert [(e.kind, e.count) for e in events] == [(GAP, 2)]
    assert events[0].symbol.startswith("S" * 32)
    assert len(tracker) == 2
    assert all(len(symbol) <= MAX_KEY_CHARS for (_, symbol), _ in tracker._items())


def test_renumbered_feed_is_followed_after_resync(
    make_tracker: Make,
) -> None:
    """After 1000, a restart 1, 2, 3 gives three regressions, then 4 is accepted."""
    events = feed_seqs(make_tracker(resync_after=3), [1000, 1, 2, 3, 4, 5])
    assert [e.kind for e in events] == [REGRESSION] * 3


def test_repeated_old_number_does_not_resync(
    make_tracker: Make,
) -> None:
    """Stale duplicates (not increasing) never move the state back."""
    events = feed_seqs(make_tracker(resync_after=2), [10, 3, 3, 3, 11])
    assert [e.kind for e in events] == [REGRESSION] * 3


def test_resync_can_be_disabled(make_tracker: Make) -> None:
    """resync_after=None reports every step back of a renumbered feed."""
    events = feed_seqs(make_tracker(resync_after=None), [1000, 1, 2, 3, 4])
    assert [e.kind for e in events] == [REGRESSION] * 4


def test_symbols_are_tracked_separately(make_tracker: Make) -> None:
    """Interleaved symbols each keep their own sequence."""
    tracker = make_tracker()
    assert feed_seqs(tracker, [1, 2], "AAPL") + feed_seqs(tracker, [7, 8], "MSFT") == []
    assert feed_seqs(tracker, [3], "AAPL") == []


@settings(max_examples=300, deadline=None)
@given(st.lists(st.integers(min_value=0, max_value=60), min_size=1, max_size=60), st.integers(0, 5))
def test_gap_counts_match_the_numbers_never_seen(seqs: list[int], window: int) -> None:
    """Flushed at the end, missed counts add up to the numbers that never came in time."""
    tracker = SymbolStateTracker(SymbolStateSpec(sequence_window=window, resync_after=None))
    final = max(seqs) + window + 1  # pushes every hole out of the window
    events = feed_seqs(tracker, [*seqs, final])
    missed = sum(e.count for e in events if e.kind is GAP)
    expected = set(range(seqs[0], max(seqs) + 1)) - _arrived_in_time(seqs, window)
    assert missed == len(expected)


def _arrived_in_time(seqs: list[int], window: int) -> set[int]:
    """Reference: a number arrived if it raised the high, or filled a hole inside the window."""
    high, arrived = seqs[0], {seqs[0]}
    for seq in seqs[1:]:
        if seq > high:
            arrived.add(seq)
            high = seq
        elif seqs[0] < seq < high and seq not in arrived and seq >= high - window:
            arrived.add(seq)
    return arrived


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


@pytest.mark.parametrize(
    "bad",
    [
        {"sequence_window": -1},
        {"max_symbols": 0},
        {"resync_after": 0},
        {"frozen_max_updates": 0},
        {"frozen_max_s": -1.0},
    ],
)
def test_spec_rejects_nonsense(bad: dict[str, object]) -> None:
    """Negative windows, zero capacity and zero limits are refused at setup."""
    with pytest.raises(ValueError):
        SymbolStateSpec(**bad)  # type: ignore[arg-type]


# --- tally -----------------------------------------------------------------------------


def test_tally_counts_per_kind_with_capped_examples() -> None:
    """Counts per kind; examples are distinct, capped and shortened symbols."""
    tally = EventTally(max_examples=2)
    tally.add(SymbolEvent(GAP, s, "", 3) for s in ("A", "A", "B", "C" * 100))
    assert tally.summary() == {"sequence_gap": {"count": 4, "examples": ["A", "B"]}}
    assert tally.missed_sequence_numbers == 12


def test_tally_shortens_long_symbols() -> None:
    """A payload-derived symbol never enters a batch event longer than 32 characters."""
    tally = EventTally()
    tally.add([SymbolEvent(FROZEN, "X" * 500, "")])
    assert tally.examples[FROZEN] == ["X" * 32]


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


@settings(max_examples=400, deadline=None)
@given(
    st.lists(st.integers(min_value=0, max_value=80), min_size=1, max_size=80),
    st.integers(0, 12),
    st.none() | st.integers(1, 4),
    st.none() | st.integers(1, 4),
)
def test_hole_ranges_behave_as_the_numbers_they_stand_for(
    seqs: list[int], window: int, resync: int | None, cap: int | None
) -> None:
    """Events and pending holes are those of keeping every missing number (the reference,
    how holes were kept before ranges), with the oldest runs given up past the bound."""
    bounds = {} if cap is None else {"max_holes": cap}
    spec = SymbolStateSpec(sequence_window=window, resync_after=resync, **bounds)  # type: ignore[arg-type]
    tracker = SymbolStateTracker(spec)
    events = [(e.kind, e.count, e.detail) for e in feed_seqs(tracker, seqs)]
    expected, holes = _numbered_holes(seqs, window, resync, spec)
    assert events == expected
    assert [n for start, end in held_holes(tracker) for n in range(start, end)] == holes
    assert tracker.holes == len(held_holes(tracker))


def _numbered_holes(
    seqs: list[int], window: int, resync: int | None, spec: SymbolStateSpec
) -> tuple[list[tuple[SymbolEventKind, int, str]], list[int]]:
    """Reference: the events and holes of a tracker listing each missing number; past
    ``max_holes`` runs of them, the lowest runs are given up."""
    events: list[tuple[SymbolEventKind, int, str]] = []
    high, holes, streak, candidate = seqs[0], list[int](), 0, 0
    mark: int | None = None  # the numbers given up lay below it

    def give_up() -> None:
        nonlocal holes, mark
        runs = [n for i, n in enumerate(holes) if i == 0 or holes[i - 1] != n - 1]
        if len(runs) <= spec.max_holes:
            return
        keep = runs[len(runs) - spec.max_holes]
        given = [n for n in holes if n < keep]
        holes = [n for n in holes if n >= keep]
        mark = given[-1] + 1
        detail = _given_up_detail(len(given), spec)
        events.append((SymbolEventKind.HOLES_GIVEN_UP, len(given), detail))

    for seq in seqs[1:]:
        if seq > high:
            cutoff = seq - window
            missed = max(0, min(seq, cutoff) - (high + 1))
            missed += len([n for n in holes if n < cutoff])
            holes = [n for n in holes if n >= cutoff]
            holes.extend(range(max(high + 1, cutoff), seq))
            high, streak = seq, 0
            if missed:
                events.append((GAP, missed, f"{missed} sequence number(s) missing before {seq}"))
            give_up()
        elif seq in holes:
            holes.remove(seq)
            give_up()
        elif mark is not None and high - window <= seq < mark:
            detail = f"seq {seq} after {high}: late for a hole given up, or a repeat"
            events.append((SymbolEventKind.SEQUENCE_LATE, 1, detail))
        else:
            events.append((REGRESSION, 1, f"seq {seq} after {high}"))
            streak = streak + 1 if streak and seq > candidate else 1
            candidate = seq
            if resync is not None and streak >= resync:
                high, streak, holes, mark = seq, 0, [], None
    return events, holes
