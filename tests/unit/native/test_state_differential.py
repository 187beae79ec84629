"""The native per-symbol state equals the Python reference (``state.tracker``).

Hypothesis streams of records (gaps, regressions, late numbers, resyncs, frozen quotes, NaN
quotes, many symbols past the LRU bound, long and odd symbols, float and naive/aware datetime
event times, partitions dropped) go through both trackers, by batch and record by record:
the same events (kind, symbol, detail, count) at the same positions, and the same counts
(symbols held, evictions, holes). Bounded in CI; a long run:

    SV_STATE_DIFF_EXAMPLES=20000 .venv/bin/pytest --timeout=0 \\
        tests/unit/native/test_state_differential.py
"""

from __future__ import annotations

import math
import os
import threading
from datetime import UTC, datetime, timedelta, timezone
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from stream_validator.contracts.statespec import SymbolStateSpec
from stream_validator.service.plan.routestate import RouteState
from stream_validator.state.native import (
    NativeSymbolStateTracker,
    native_state_available,
    native_wanted,
    symbol_state_tracker,
)
from stream_validator.state.tracker import SymbolStateTracker, compact_key

pytestmark = pytest.mark.skipif(not native_state_available(), reason="extension without state")

EXAMPLES = int(os.environ.get("SV_STATE_DIFF_EXAMPLES", "300"))
NAN = math.nan  # one object: Python's tuples compare it equal to itself
LONG = "L" * 300
LONG_TWIN = "L" * 299 + "M"  # the same first 32 characters, another digest
SYMBOLS = [
    "AAPL",
    "MSFT",
    "ES.H27",
    "é€𝄞",
    "lone\ud800surrogate",
    LONG,
    LONG_TWIN,
    compact_key(LONG),  # a short symbol spelled like a long one's compact key
    "\ud800" * 257,
    "",
]
PARTITIONS = [0, 1, ("md.ticks", 2)]
QUOTE_VALUES = [
    1.0,
    1,
    2.0,
    2,
    None,
    NAN,
    float("nan"),
    2**53 + 1,
    2.0**53,
    -0.0,
    0,
    2**70,
    2.0**70,
]
OFFSETS = [UTC, timezone(timedelta(hours=5, minutes=30)), timezone(timedelta(hours=-8))]
BASE = datetime(2026, 11, 30, 14, 30, tzinfo=UTC)

specs = st.builds(
    SymbolStateSpec,
    sequence_window=st.sampled_from([0, 1, 3, 10**12, 2**80]),
    resync_after=st.sampled_from([None, 1, 2, 3]),
    max_time_regression_s=st.sampled_from([0.0, 0.0005, 1.5, 7.0]),
    frozen_max_updates=st.sampled_from([None, 1, 2, 3]),
    frozen_max_s=st.sampled_from([None, 0.0, 2.5]),
    quote_fields=st.just(("bid", "ask")),
    max_symbols=st.integers(1, 6),
    max_holes=st.integers(1, 4),
    max_holes_total=st.integers(1, 6),
)


@st.composite
def seqs(draw: st.DrawFn) -> int | None:
    return draw(
        st.one_of(
            st.none(),
            st.integers(0, 40),
            st.integers(0, 40),
            st.sampled_from([2**63 - 1, 2**63, 2**64 - 1, 2**64, -(2**63)]),
        )
    )


def times(kind: str) -> st.SearchStrategy[Any]:
    """Event times of one kind: epoch seconds, aware datetimes (mixed offsets), naive ones."""
    if kind == "seconds":
        return st.one_of(
            st.none(),
            st.floats(0, 20, allow_nan=False).map(lambda s: round(s, 3)),
            st.sampled_from([NAN, math.inf, 1e300, 1_764_000_000.123456]),
        )
    micros = st.one_of(
        st.integers(-3_000_000, 20_000_000),
        st.sampled_from([-6 * 10**16 - 1, 10**16 + 1]),  # spans past 2**53 microseconds
    )
    moments = st.builds(
        lambda us, tz: (BASE + timedelta(microseconds=us)).astimezone(tz),
        micros,
        st.sampled_from(OFFSETS),
    )
    if kind == "naive":
        moments = moments.map(lambda moment: moment.replace(tzinfo=None))
    return st.one_of(st.none(), moments)


quotes = st.one_of(
    st.none(), st.tuples(st.sampled_from(QUOTE_VALUES), st.sampled_from(QUOTE_VALUES))
)


@st.composite
def streams(draw: st.DrawFn) -> tuple[SymbolStateSpec, list[tuple[str, Any]]]:
    """A spec and the operations fed to it: batches, single records, drops."""
    spec = draw(specs)
    kind = draw(st.sampled_from(["seconds", "aware", "naive"]))
    symbols = draw(st.lists(st.sampled_from(SYMBOLS), min_size=1, max_size=8, unique=True))
    row = st.tuples(
        st.sampled_from(PARTITIONS), st.sampled_from(symbols), seqs(), times(kind), quotes
    )
    operation = st.one_of(
        st.tuples(st.just("batch"), st.lists(row, max_size=40)),
        st.tuples(st.just("one"), row),
        st.tuples(st.just("drop"), st.sampled_from(PARTITIONS)),
    )
    return spec, draw(st.lists(operation, max_size=12))


def counts(tracker: Any) -> tuple[int, int, int, int]:
    return len(tracker), tracker.evictions, tracker.holes, tracker.holes_given_up


@settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(streams())
def test_native_state_gives_the_reference_events_and_evictions(
    stream: tuple[SymbolStateSpec, list[tuple[str, Any]]],
) -> None:
    """Every operation: the same events at the same positions, the same counts after it."""
    spec, operations = stream
    python, native = SymbolStateTracker(spec), NativeSymbolStateTracker(spec)
    for op, arg in operations:
        if op == "batch":
            columns = [list(column) for column in zip(*arg, strict=True)] or [[]] * 5
            assert native.observe_columns(*columns) == python.observe_columns(*columns)
        elif op == "one":
            partition, symbol, seq, moment, quote = arg
            expected = python.observe(partition, symbol, seq=seq, event_time=moment, quote=quote)
            assert (
                native.observe(partition, symbol, seq=seq, event_time=moment, quote=quote)
                == expected
            )
        else:
            assert native.drop(arg) == python.drop(arg)
        assert counts(native) == counts(python)


@settings(max_examples=max(EXAMPLES // 3, 30), deadline=None)
@given(st.integers(1, 12), st.lists(st.integers(0, 30), min_size=1, max_size=400))
def test_lru_bound_evicts_the_reference_keys(max_symbols: int, picks: list[int]) -> None:
    """Far past the bound, the keys evicted are the reference's: the same symbols start fresh."""
    spec = SymbolStateSpec(max_symbols=max_symbols, sequence_window=0)
    python, native = SymbolStateTracker(spec), NativeSymbolStateTracker(spec)
    # Each symbol's seq counts its own records; a fresh (evicted) one reports no gap, a held
    # one does (the jump of 2): the events tell which keys were kept.
    seen: dict[int, int] = {}
    rows = []
    for pick in picks:
        seen[pick] = seen.get(pick, 0) + 2
        rows.append((pick % 3, f"S{pick}", seen[pick], None))
    columns = [list(column) for column in zip(*rows, strict=True)]
    assert native.observe_columns(*columns) == python.observe_columns(*columns)
    assert counts(native) == counts(python)


def test_record_reading_and_the_switch() -> None:
    """observe_record reads a record as the reference does; SV_NATIVE=0 picks the reference."""
    spec = SymbolStateSpec(event_time_field="ts", quote_fields=("bid",), frozen_max_updates=1)
    python, native = SymbolStateTracker(spec), symbol_state_tracker(spec, native=True)
    assert isinstance(native, NativeSymbolStateTracker)
    records = [
        {"symbol": "A", "seq": 1, "ts": "2026-11-30T14:30:00+01:00", "bid": 1.5},
        {"symbol": "A", "seq": 3, "ts": "2026-11-30T13:29:59Z", "bid": 1.5},
        {"symbol": "A", "seq": True, "ts": "2026-11-30T14:29:58", "bid": 1.5},
        {"symbol": 7, "seq": 4},
    ]
    for record in records:
        for distrust in (frozenset(), frozenset({"seq"}), frozenset({"time", "quote"})):
            assert native.observe_record(0, record, distrust) == python.observe_record(
                0, record, distrust
            )
    assert type(symbol_state_tracker(spec, native=False)) is SymbolStateTracker
    assert native_wanted({}) and native_wanted({"SV_NATIVE": "1"})
    assert not native_wanted({"SV_NATIVE": "0"})
    assert type(RouteState(spec, {}, native=False).tracker) is SymbolStateTracker
    assert type(RouteState(spec, {}).tracker) is NativeSymbolStateTracker


def test_sequence_numbers_past_64_bits_are_not_checked() -> None:
    """The one documented difference: a number beyond ±2**64 skips the sequence check."""
    native = NativeSymbolStateTracker(SymbolStateSpec())
    assert native.observe(0, "A", seq=1) == ()
    assert native.observe(0, "A", seq=2**64 + 5) == ()
    (event,) = native.observe(0, "A", seq=5)
    assert event.detail == "3 sequence number(s) missing before 5"


def test_bad_values_raise_clear_errors() -> None:
    """A symbol that is not a str, a quote value that is not a number: TypeError, no crash."""
    native = NativeSymbolStateTracker(SymbolStateSpec(quote_fields=("bid",), frozen_max_updates=1))
    with pytest.raises(TypeError, match="symbol must be a str"):
        native.observe(0, 7)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="quote value must be"):
        native.observe(0, "A", quote=("1.5",))
    with pytest.raises(TypeError, match="two kinds"):
        native.observe(0, "A", event_time=1.0)
        native.observe(0, "A", event_time=BASE)
    with pytest.raises(ValueError, match="different lengths"):
        native.observe_columns([0], ["A", "B"], [1, 2], [None, None])


def test_a_tracker_made_on_one_thread_is_fed_on_another() -> None:
    """The service builds its trackers on the main thread and feeds them on the loop's."""
    native = NativeSymbolStateTracker(SymbolStateSpec())
    results: list[object] = []
    worker = threading.Thread(target=lambda: results.append(native.observe(0, "A", seq=1)))
    worker.start()
    worker.join()
    assert results == [()]
    assert len(native) == 1
