"""StateFeed: the typed view of a payload gives the same events as the decoded record."""

from __future__ import annotations

import json
import random
from datetime import datetime

import pytest

from stream_validator.contracts.statespec import SymbolStateSpec
from stream_validator.state import StateFeed, SymbolStateTracker

TYPES: dict[str, type] = {
    "symbol": str,
    "seq": int,
    "ts": datetime,
    "bid": float,
    "ask": float,
}
SPEC = SymbolStateSpec(
    key_field="symbol",
    sequence_field="seq",
    event_time_field="ts",
    max_time_regression_s=0.5,
    quote_fields=("bid", "ask"),
    frozen_max_updates=3,
)


def records(count: int) -> list[dict[str, object]]:
    """Ticks of three symbols with gaps, step-backs, late times and repeated quotes."""
    rng = random.Random(5)
    seqs = {"A": 0, "B": 0, "C": 0}
    out: list[dict[str, object]] = []
    for n in range(count):
        symbol = rng.choice("ABC")
        seqs[symbol] += rng.choice([1, 1, 1, 2, -3])
        second = n - rng.choice([0, 0, 0, 2])
        out.append(
            {
                "symbol": symbol,
                "seq": seqs[symbol],
                "ts": f"2026-12-01T10:{second // 60 % 60:02d}:{second % 60:02d}Z",
                "bid": rng.choice([1.0, 1.0, 1.01]),
                "ask": 1.02,
                "other": [1, 2],
            }
        )
    return out


def events(feed: StateFeed, values: list[object]) -> list[tuple[str, str, str]]:
    return [(str(e.kind), e.symbol, e.detail) for v in values for e in feed.observe(0, v)]


def test_bytes_and_dicts_give_the_same_events() -> None:
    """Over 2,000 ticks the typed view and observe_record agree event for event."""
    data = records(2000)
    by_view = events(
        StateFeed(SymbolStateTracker(SPEC), TYPES), [json.dumps(r).encode() for r in data]
    )
    by_dict = events(StateFeed(SymbolStateTracker(SPEC), TYPES), list(data))
    assert by_view == by_dict
    assert {kind for kind, _, _ in by_view} == {
        "sequence_gap",
        "sequence_regression",
        "event_time_regression",
        "frozen_quote",
    }


def test_a_time_the_view_cannot_read_takes_the_general_path() -> None:
    """A basic-format ISO time (valid for fromisoformat) still orders the symbol's events."""
    feed = StateFeed(SymbolStateTracker(SPEC), TYPES)
    first = {"symbol": "A", "seq": 1, "ts": "20261201T100000Z", "bid": 1.0, "ask": 2.0}
    second = dict(first, seq=2, ts="2026-12-01T09:00:00Z", bid=1.5)
    found = events(feed, [json.dumps(first).encode(), json.dumps(second).encode()])
    assert [kind for kind, _, _ in found] == ["event_time_regression"]


def test_a_key_that_is_not_a_string_is_skipped() -> None:
    """A record whose key is not a str raises nothing (as observe_record)."""
    feed = StateFeed(SymbolStateTracker(SPEC), TYPES)
    payload = json.dumps({"symbol": 5, "seq": 1, "ts": "2026-12-01T10:00:00Z"}).encode()
    assert feed.observe(0, payload) == ()


def odd(record: dict[str, object], rng: random.Random) -> dict[str, object]:
    """Now and then a value the strict batch view refuses or the tracker skips."""
    change = rng.choice([None] * 12 + ["key", "seq", "bool", "basic", "naive", "null", "gone"])
    if change == "key":
        return dict(record, symbol=5)
    if change == "seq":
        return dict(record, seq=None)
    if change == "bool":
        return dict(record, seq=True)
    if change == "basic":
        return dict(record, ts="20261201T100000Z")
    if change == "naive":
        return dict(record, ts=str(record["ts"]).rstrip("Z"))
    if change == "null":
        return dict(record, ts=None)
    if change == "gone":
        return {k: v for k, v in record.items() if k != "ts"}
    return record


@pytest.mark.parametrize("seed", range(6))
def test_batches_give_the_events_of_single_records(seed: int) -> None:
    """observe_many over batches (some holding odd values) gives, position for position,
    the events of one observe per payload."""
    rng = random.Random(seed)
    data = [odd(r, rng) for r in records(1200)]
    payloads = [json.dumps(r).encode() for r in data]
    single = StateFeed(SymbolStateTracker(SPEC), TYPES)
    batch = StateFeed(SymbolStateTracker(SPEC), TYPES)
    start = 0
    while start < len(payloads):
        part = payloads[start : start + rng.choice([1, 5, 40, 150])]
        partitions = [n % 2 for n in range(len(part))]
        expected = [
            (n, found)
            for n, (p, v) in enumerate(zip(partitions, part, strict=True))
            if (found := single.observe(p, v))
        ]
        assert batch.observe_many(partitions, part) == expected
        start += len(part)
    assert len(batch.tracker) == len(single.tracker)


def test_a_batch_of_non_bytes_takes_the_per_record_path() -> None:
    """Decoded records in a batch give the events observe gives them."""
    data = records(300)
    feed, single = (
        StateFeed(SymbolStateTracker(SPEC), TYPES),
        StateFeed(SymbolStateTracker(SPEC), TYPES),
    )
    expected = [(n, e) for n, r in enumerate(data) if (e := single.observe(0, r))]
    assert expected
    assert feed.observe_many([0] * len(data), list(data)) == expected


OTHER_SPECS = {
    "epoch seconds, no seq": SymbolStateSpec(
        key_field="symbol",
        sequence_field=None,
        event_time_field="epoch",
        max_time_regression_s=0.5,
        quote_fields=("bid",),
        frozen_max_s=3.0,
    ),
    "no time, one quote": SymbolStateSpec(
        key_field="symbol", quote_fields=("ask",), frozen_max_updates=2
    ),
}


@pytest.mark.parametrize("name", sorted(OTHER_SPECS))
def test_batches_without_seq_or_datetime_match_single_records(name: str) -> None:
    """Specs leaving out seq or time, or timing by an epoch-seconds field: a batch gives
    the events of one observe per payload."""
    types = {**TYPES, "epoch": float}
    data = [dict(r, epoch=float(n) - (n % 7 == 0)) for n, r in enumerate(records(900))]
    payloads = [json.dumps(r).encode() for r in data]
    spec = OTHER_SPECS[name]
    single = StateFeed(SymbolStateTracker(spec), types)
    expected = [(n, e) for n, p in enumerate(payloads) if (e := single.observe(0, p))]
    assert expected
    batch = StateFeed(SymbolStateTracker(spec), types)
    found = []
    for start in range(0, len(payloads), 100):
        found += [
            (start + n, e) for n, e in batch.observe_many([0] * 100, payloads[start : start + 100])
        ]
    assert found == expected
