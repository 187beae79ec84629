"""The per-symbol sequence check: gaps, regressions, late numbers, resync, bounded holes."""

from __future__ import annotations

import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from stream_validator.contracts.statespec import SymbolStateSpec
from stream_validator.state import (
    SymbolEventKind,
    SymbolStateTracker,
)
from stream_validator.state.sequence import given_up_detail
from stream_validator.state.tracker import MAX_KEY_CHARS
from tests.support.symbolstate import (
    GAP,
    GIVEN_UP,
    LATE,
    REGRESSION,
    Make,
    feed_seqs,
    held_holes,
)

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
        detail = given_up_detail(len(given), spec)
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
