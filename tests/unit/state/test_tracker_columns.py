"""observe_columns: the batch loop gives the same events and state as one observe per record."""

from __future__ import annotations

import math
import random
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from operator import attrgetter

import pytest

from stream_validator.contracts.statespec import SymbolStateSpec
from stream_validator.state import SymbolEvent, SymbolStateTracker

Row = tuple[int, str, int | None, float | None, tuple[object, ...] | None]


@dataclass
class View:
    """A record's state fields (the columns are taken from a list of them)."""

    key: str
    seq: int | None = None
    time: float | datetime | None = None
    quote: tuple[object, ...] | None = None


QUOTE = attrgetter("quote")


def observe_rows(
    tracker: SymbolStateTracker,
    partitions: list[int],
    rows: list[View],
    quote: Callable[[View], tuple[object, ...] | None] | None = None,
) -> list[tuple[int, tuple[SymbolEvent, ...]]]:
    """The tracker's batch loop over the columns of ``rows``."""
    return tracker.observe_columns(
        partitions,
        [row.key for row in rows],
        [row.seq for row in rows],
        [row.time for row in rows],
        [quote(row) for row in rows] if quote is not None else None,
    )


SPECS = {
    "strict": SymbolStateSpec(
        event_time_field="ts",
        max_time_regression_s=0.5,
        quote_fields=("bid", "ask"),
        frozen_max_updates=3,
        frozen_max_s=2.0,
        max_symbols=6,
    ),
    "window": SymbolStateSpec(
        sequence_window=3,
        resync_after=None,
        event_time_field="ts",
        quote_fields=("bid",),
        frozen_max_s=1.0,
        max_symbols=4,
    ),
    "sequence only": SymbolStateSpec(max_symbols=3),
}


def feed(seed: int, count: int) -> list[Row]:
    """Rows of a few partitions and symbols with gaps, step-backs, repeats, late and NaN
    times, held and NaN quotes, and missing values."""
    rng = random.Random(seed)
    seqs: dict[str, int] = {}
    rows: list[Row] = []
    for n in range(count):
        symbol = rng.choice("ABCDEFGH")
        seqs[symbol] = seqs.get(symbol, 0) + rng.choice([1, 1, 1, 1, 2, 5, 0, -1, -4])
        seq = rng.choice([seqs[symbol]] * 9 + [None])
        time = rng.choice([n * 0.3, n * 0.3, n * 0.3 - 1.0, math.nan, None, 5.0])
        bid = rng.choice([1.0, 1.0, 1.0, 1.01, math.nan])
        quote = rng.choice([(bid, 1.02), (bid, 1.02), None])
        rows.append((rng.choice([0, 1]), symbol, seq, time, quote))
    return rows


def one_by_one(
    tracker: SymbolStateTracker, rows: list[Row]
) -> list[tuple[int, tuple[SymbolEvent, ...]]]:
    out = []
    for position, (partition, symbol, seq, time, quote) in enumerate(rows):
        events = tracker.observe(partition, symbol, seq=seq, event_time=time, quote=quote)
        if events:
            out.append((position, events))
    return out


def snapshot(tracker: SymbolStateTracker) -> list[tuple[object, ...]]:
    """Every key in LRU order with its state (NaN shown as a string so it compares)."""
    return [
        (
            *(key, s.high, _gaps(s.gaps)),
            *(repr(s.latest), repr(s.quote), s.updates, repr(s.since), s.alerted, s.seen),
        )
        for key, s in tracker._items()
    ]


def _gaps(gaps: object) -> tuple[object, ...] | None:
    """The lazily held sequence state, as values."""
    if gaps is None:
        return None
    return (list(gaps.holes), gaps.streak, gaps.candidate, gaps.mark)  # type: ignore[attr-defined]


@pytest.mark.parametrize("name", sorted(SPECS))
@pytest.mark.parametrize("seed", range(8))
def test_batches_match_records(name: str, seed: int) -> None:
    """Batch by batch (with a partition dropped between some), events, state and evictions
    equal those of one observe per record."""
    spec = SPECS[name]
    rows = feed(seed, 1500)
    single, batch = SymbolStateTracker(spec), SymbolStateTracker(spec)
    rng = random.Random(seed)
    start = 0
    while start < len(rows):
        part = rows[start : start + rng.choice([1, 7, 50, 200])]
        expected = one_by_one(single, part)
        got = observe_rows(batch, [r[0] for r in part], [View(*r[1:]) for r in part], QUOTE)
        assert got == expected
        assert snapshot(batch) == snapshot(single)
        assert batch.evictions == single.evictions
        if rng.random() < 0.2:
            assert batch.drop(0) == single.drop(0)
        start += len(part)
    assert single.evictions > 0  # the feed exercised the bound


@pytest.mark.parametrize("seed", range(12))
def test_the_bound_evicts_the_least_recently_seen(seed: int) -> None:
    """Keys held and evictions equal those of a plain LRU model, through batches, single
    records and revoked partitions (the tracker only orders its dict near the bound)."""
    rng = random.Random(seed)
    bound = rng.choice([2, 5, 9])
    tracker = SymbolStateTracker(SymbolStateSpec(max_symbols=bound))
    model: OrderedDict[tuple[int, str], None] = OrderedDict()
    evictions = 0
    for _ in range(300):
        keys = [
            (rng.choice([0, 1, 2]), rng.choice("ABCDEFGHIJKL"))
            for _ in range(rng.choice([1, 4, 30]))
        ]
        for key in keys:
            model[key] = None
            model.move_to_end(key)
            if len(model) > bound:
                model.popitem(last=False)
                evictions += 1
        if len(keys) == 1:
            tracker.observe(*keys[0], seq=1)
        else:
            observe_rows(tracker, [p for p, _ in keys], [View(s) for _, s in keys])
        assert {key for key, _ in tracker._items()} == set(model)
        assert tracker.evictions == evictions
        if rng.random() < 0.3:
            partition = rng.choice([0, 1, 2])
            tracker.drop(partition)
            for key in [k for k in model if k[0] == partition]:
                del model[key]


def test_rows_without_values_skip_their_checks() -> None:
    """Rows without seq or time, and no quote reader: only the keys are tracked."""
    tracker = SymbolStateTracker(SPECS["strict"])
    assert observe_rows(tracker, [0, 0, 0], [View("A"), View("A"), View("B")]) == []
    assert len(tracker) == 2


def test_datetime_event_times_are_compared_and_subtracted_exactly() -> None:
    """Aware datetimes: exactly the tolerance back is no event, a microsecond more is one,
    and a held quote is timed in event seconds."""
    spec = SymbolStateSpec(
        event_time_field="ts", max_time_regression_s=1.0, quote_fields=("bid",), frozen_max_s=2.0
    )
    tracker = SymbolStateTracker(spec)
    start = datetime(2026, 12, 1, 10, 0, 0, 1, tzinfo=UTC)
    times = [start, start - timedelta(seconds=1), start - timedelta(seconds=1, microseconds=1)]
    times.append(start + timedelta(seconds=2, microseconds=1))
    rows = [View("A", seq, time, (1.0,)) for seq, time in enumerate(times, 1)]
    found = observe_rows(tracker, [0] * 4, rows, QUOTE)
    assert [(n, str(e.kind), e.detail) for n, events in found for e in events] == [
        (2, "event_time_regression", "event time went back 1.000 s (tolerance 1 s)"),
        (3, "frozen_quote", "same quote for 2.000 s (limit 2 s)"),
    ]
