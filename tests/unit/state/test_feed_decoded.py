"""StateFeed fed with the verifier's own decoded Structs (``validate_payloads(decoded=)``):
the same events as one observe per payload, and no payload decoded twice."""

from __future__ import annotations

import json
import random
from typing import Any

import pytest

from stream_validator.contracts.loader import contract_from_mapping
from stream_validator.contracts.model import SchemaContract
from stream_validator.state import StateFeed, SymbolStateTracker, distrusted
from stream_validator.verify import DataSchemaContractVerifier


def contract(*, nullable_key: bool = False, time_type: str = "datetime") -> SchemaContract:
    time_field = "ts" if time_type == "datetime" else "epoch"
    return contract_from_mapping(
        {
            "name": "t",
            "version": "1",
            "max_allowed_null_pct": 100.0,
            "fields": [
                {"name": "symbol", "type": "str", "nullable": nullable_key},
                {"name": "seq", "type": "int", "nullable": True},
                {"name": "ts", "type": "datetime", "nullable": True},
                {"name": "epoch", "type": "float"},
                {"name": "bid", "type": "float", "nullable": True, "min_value": 0.0},
                {"name": "ask", "type": "float"},
            ],
            "state": {
                "key": "symbol",
                "sequence": {"field": "seq", "window": 1},
                "event_time": {"field": time_field, "max_regression_s": 0.5},
                "frozen_quote": {"fields": ["bid", "ask"], "max_updates": 3},
            },
        }
    )


def payloads(count: int, seed: int) -> list[bytes]:
    """Ticks with gaps, step-backs, late and odd times, held quotes, null bids, and now
    and then a record the fast path declines (valid or not)."""
    rng = random.Random(seed)
    seqs = {"A": 0, "B": 0, "C": 0}
    out = []
    for n in range(count):
        symbol = rng.choice("ABC")
        seqs[symbol] += rng.choice([1, 1, 1, 2, -3])
        second = n - rng.choice([0, 0, 0, 9])
        record: dict[str, Any] = {
            "symbol": symbol,
            "seq": seqs[symbol],
            "ts": f"2026-12-01T10:{second // 60 % 60:02d}:{second % 60:02d}Z",
            "epoch": float(second),
            "bid": rng.choice([1.0, 1.0, 1.01, None]),
            "ask": 1.02,
        }
        change = rng.choice(
            [None] * 10
            + ["basic", "lower", "naive", "null", "bad", "nokey", "badseq", "badts", "badask"]
            + ["badepoch", "garbage"]
        )
        if change == "basic":  # valid for fromisoformat, not for msgspec: declined, valid
            record["ts"] = f"20261201T10{second // 60 % 60:02d}{second % 60:02d}Z"
        elif change == "lower":  # a lowercase z: declined by the fast path, valid
            record["ts"] = str(record["ts"]).replace("Z", "z")
        elif change == "naive":
            record["ts"] = str(record["ts"]).rstrip("Z")
        elif change == "null":
            record["ts"] = record["seq"] = None
        elif change == "bad":  # quarantined: not fed
            record["bid"] = -1.0
        elif change == "nokey":
            record["symbol"] = None
        elif change == "badseq":  # quarantined: fed without its seq
            record["seq"] = str(record["seq"])
        elif change == "badts":  # quarantined: fed without its time (if the state reads ts)
            record["ts"] = "yesterday"
        elif change == "badask":  # quarantined: fed without its quote
            record["ask"] = "x"
        elif change == "badepoch":  # quarantined: fed without its time (if the state reads it)
            record["epoch"] = "x"
        out.append(json.dumps(record).encode() if change != "garbage" else b'{"symbol":')
    return out


def fed_events(
    feed: StateFeed, verifier: DataSchemaContractVerifier, batches: list[list[bytes]]
) -> list[list[tuple[int, Any]]]:
    """Each batch validated, its valid records fed with their decoded Structs."""
    found = []
    for part in batches:
        decoded: list[Any] = []
        report = verifier.validate_payloads(part, decoded=decoded)
        assert len(decoded) == len(part)
        valid = list(report.valid_indices)
        found.append(
            feed.observe_many(
                [i % 2 for i in valid], [part[i] for i in valid], [decoded[i] for i in valid]
            )
        )
    return found


def expected_events(
    contract: SchemaContract, verifier: DataSchemaContractVerifier, batches: list[list[bytes]]
) -> list[list[tuple[int, Any]]]:
    """One observe per valid payload, by a feed that decodes every payload itself."""
    assert contract.state is not None
    types = {f.name: f.expected_type for f in contract.fields}
    single = StateFeed(SymbolStateTracker(contract.state), types)
    out = []
    for part in batches:
        valid = list(verifier.validate_payloads(part).valid_indices)
        out.append([(n, e) for n, i in enumerate(valid) if (e := single.observe(i % 2, part[i]))])
    return out


def with_quarantined(
    feed: StateFeed, verifier: DataSchemaContractVerifier, batches: list[list[bytes]]
) -> list[list[tuple[int, Any]]]:
    """Each batch validated, its valid records and the quarantined ones whose key passed
    fed with their decoded Structs, the parts their violations distrust left out."""
    spec = feed.tracker.spec
    found = []
    for part in batches:
        decoded: list[Any] = []
        report = verifier.validate_payloads(part, decoded=decoded)
        parts = {q.index: distrusted(spec, q.violations) for q in report.quarantined_records}
        fed = [i for i in range(len(part)) if "key" not in parts.get(i, ())]
        distrust = {n: parts[i] for n, i in enumerate(fed) if parts.get(i)}
        values, rows = [part[i] for i in fed], [decoded[i] for i in fed]
        found.append(feed.observe_many([i % 2 for i in fed], values, rows, distrust))
    return found


def reference_events(
    contract: SchemaContract, verifier: DataSchemaContractVerifier, batches: list[list[bytes]]
) -> list[list[tuple[int, Any]]]:
    """The Python reference: ``observe_record`` of each decoded record whose key passed,
    with the parts its violations distrust left out."""
    assert contract.state is not None
    tracker = SymbolStateTracker(contract.state)
    out = []
    for part in batches:
        report = verifier.validate_payloads(part)
        parts = {
            q.index: distrusted(contract.state, q.violations) for q in report.quarantined_records
        }
        fed = [i for i in range(len(part)) if "key" not in parts.get(i, ())]
        events = [
            (n, tracker.observe_record(i % 2, json.loads(part[i]), parts.get(i, frozenset())))
            for n, i in enumerate(fed)
        ]
        out.append([(n, e) for n, e in events if e])
    return out


@pytest.mark.parametrize("fast_path", [True, False], ids=["structs", "views"])
@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("options", [{}, {"nullable_key": True}, {"time_type": "float"}], ids=str)
def test_quarantined_records_feed_what_passed_as_the_reference_does(
    seed: int, options: dict[str, Any], fast_path: bool
) -> None:
    """Batches holding quarantined records (a bad seq, time, quote or other field, a null
    key, garbage) give, position for position, the events of the Python reference: one
    observe_record per record whose key passed, without the fields that failed (fed from
    the fast path's Structs, or without a fast path from views of the payloads)."""
    rng = random.Random(seed)
    data = payloads(1500, seed + 10)
    batches = []
    while data:
        size = rng.choice([1, 7, 60, 300])
        batches.append(data[:size])
        data = data[size:]
    c = contract(**options)
    assert c.state is not None
    verifier = DataSchemaContractVerifier(c, fast_path=fast_path)
    types = {f.name: f.expected_type for f in c.fields}
    feed = StateFeed(SymbolStateTracker(c.state), types, verifier.field_getter)
    found = with_quarantined(feed, verifier, batches)
    assert found == reference_events(c, verifier, batches)
    distrusting = [
        distrusted(c.state, q.violations)
        for part in batches
        for q in verifier.validate_payloads(part).quarantined_records
    ]
    assert {"seq", "time", "quote"} <= set().union(*distrusting)


@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("options", [{}, {"nullable_key": True}, {"time_type": "float"}], ids=str)
def test_decoded_structs_give_the_events_of_single_records(
    seed: int, options: dict[str, Any]
) -> None:
    """Batches of validated ticks fed with their Structs give, position for position, the
    events of one observe per valid payload (a datetime or an epoch time, a nullable key)."""
    rng = random.Random(seed)
    data = payloads(1500, seed)
    batches = []
    while data:
        size = rng.choice([1, 7, 60, 300])
        batches.append(data[:size])
        data = data[size:]
    c = contract(**options)
    assert c.state is not None
    verifier = DataSchemaContractVerifier(c)
    types = {f.name: f.expected_type for f in c.fields}
    feed = StateFeed(SymbolStateTracker(c.state), types, verifier.field_getter)
    found = fed_events(feed, verifier, batches)
    assert found == expected_events(c, verifier, batches)
    kinds = {str(e.kind) for batch in found for _, events in batch for e in events}
    assert kinds == {"sequence_gap", "sequence_regression", "event_time_regression", "frozen_quote"}


def test_the_structs_are_read_not_the_payloads() -> None:
    """With a Struct for every record the payloads are never decoded: bytes that are not
    JSON at all give the events of the real ones."""
    c = contract()
    assert c.state is not None
    # The msgspec fast path hands out Structs (the native core does not: see below).
    verifier = DataSchemaContractVerifier(c, native=False)
    types = {f.name: f.expected_type for f in c.fields}
    data = [p for p in payloads(400, 9) if b"-1.0" not in p and b"null" not in p]
    decoded: list[Any] = []
    report = verifier.validate_payloads(data, decoded=decoded)
    kept = [i for i in report.valid_indices if decoded[i] is not None]
    assert len(kept) > 150
    feed = StateFeed(SymbolStateTracker(c.state), types, verifier.field_getter)
    found = feed.observe_many([0] * len(kept), [b"#"] * len(kept), [decoded[i] for i in kept])
    single = StateFeed(SymbolStateTracker(c.state), types)
    expected = [(n, e) for n, i in enumerate(kept) if (e := single.observe(0, data[i]))]
    assert expected
    assert found == expected


def test_the_native_core_hands_out_no_structs() -> None:
    """Through the native core ``decoded`` holds None for each payload and there is no
    getter: the feed decodes what it needs (and gives the events it gives without one)."""
    c = contract()
    verifier = DataSchemaContractVerifier(c, native=True)
    assert verifier._rust is not None
    decoded: list[Any] = []
    data = payloads(50, 3)
    verifier.validate_payloads(data, decoded=decoded)
    assert decoded == [None] * len(data)
    assert verifier.field_getter("symbol") is None


def test_without_a_fast_path_nothing_is_decoded_for_the_state() -> None:
    """The full rules only: ``decoded`` holds None for each payload, and the feed decodes."""
    c = contract()
    verifier = DataSchemaContractVerifier(c, fast_path=False)
    decoded: list[Any] = []
    data = payloads(50, 3)
    verifier.validate_payloads(data, decoded=decoded)
    assert decoded == [None] * len(data)
    assert verifier.field_getter("symbol") is None
