"""The native state fed from the verdict scan's rows equals the Python reference.

``validate_payloads(rows=...)`` has the Rust core read the state's fields of each payload
as it judges it; ``SymbolState.observe_scanned`` takes them with no Python object per
record. Hypothesis batches of payloads (gaps, step-backs, renumbering, time regressions in
ISO text of every offset, naive, odd forms the core is unsure of, and epoch seconds; held
quotes of ints, floats and nulls; long, non-ASCII and escaped symbols; records quarantined
for a state field or another one; garbage, duplicate keys, 64-bit overflow) and specs
(window, resync, LRU bound, frozen limits) give, batch after batch, the events of the Python
reference (``observe_record`` of each decoded record whose key passed, without the parts
its violations distrust) at the same positions, and the same counts (symbols, evictions,
holes). A long run:

    SV_STATE_DIFF_EXAMPLES=20000 .venv/bin/pytest --timeout=0 \\
        tests/unit/native/test_state_scanned.py
"""

from __future__ import annotations

import json
import os
from collections import Counter
from typing import Any

import orjson
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from stream_validator.contracts.loader import contract_from_mapping
from stream_validator.contracts.model import SchemaContract
from stream_validator.records import SourceRecord
from stream_validator.service.plan.routestate import RouteState
from stream_validator.state import StateFeed, SymbolStateTracker, distrusted
from stream_validator.state.native import NativeSymbolStateTracker, native_state_available
from stream_validator.verify import DataSchemaContractVerifier, Violation

pytestmark = pytest.mark.skipif(not native_state_available(), reason="extension without state")

EXAMPLES = int(os.environ.get("SV_STATE_DIFF_EXAMPLES", "150"))
SYMBOLS = ["AAPL", "MSFT", "é€𝄞", "L" * 300, "L" * 299 + "M", "", 'ES"H7', "ES\\H7", "\x01A"]
TIMES = [
    "2026-12-01T10:00:00Z",
    "2026-12-01T10:00:00.000001Z",
    "2026-12-01T10:00:01.500Z",
    "2026-12-01T11:00:02+01:00",
    "2026-12-01T09:59:00-00:30",
    "2026-12-01T10:00:03",  # naive: read as UTC
    "2026-12-01T10:00:00.12Z",  # the core is unsure: Python reads it
    "20261201T100004Z",  # basic form: the core is unsure, fromisoformat reads it
    "2026-12-01 10:00:05Z",
    "1970-01-01T00:00:00Z",
    "yesterday",  # quarantined
    None,
]
QUOTES = [1.0, 1, 2.5, 2, None, 0, -0.0, 1e300, 9007199254740993, "x", True]


def contract(time_type: str, key_type: str = "str") -> SchemaContract:
    time_field = {"datetime": "ts", "float": "epoch"}[time_type]
    return contract_from_mapping(
        {
            "name": "t",
            "version": "1",
            "max_allowed_null_pct": 100.0,
            "fields": [
                {"name": "symbol", "type": key_type, "min_length": 1}
                if key_type == "str"
                else {"name": "symbol", "type": key_type},
                {"name": "seq", "type": "int", "nullable": True, "min_value": 0},
                {"name": "ts", "type": "datetime", "nullable": True},
                {"name": "tstext", "type": "str", "nullable": True},
                {"name": "epoch", "type": "float", "nullable": True},
                {"name": "price", "type": "float", "min_value": 0.0},
                {"name": "bid", "type": "float", "nullable": True},
                {"name": "size", "type": "int", "max_value": 1000},
            ],
            "state": {
                "key": "symbol",
                "max_symbols": 4,
                "sequence": {"field": "seq", "window": 2, "resync_after": 2},
                "event_time": {"field": time_field, "max_regression_s": 0.5},
                "frozen_quote": {"fields": ["price", "bid"], "max_updates": 2, "max_seconds": 1},
            },
        }
    )


@st.composite
def payload(draw: st.DrawFn) -> bytes:
    """One record as a feed sends it, now and then with a twist."""
    record: dict[str, Any] = {
        "symbol": draw(st.sampled_from(SYMBOLS)),
        "seq": draw(st.one_of(st.integers(0, 12), st.sampled_from([None, -1, "7", 2**63]))),
        "ts": draw(st.sampled_from(TIMES)),
        "tstext": draw(st.sampled_from(TIMES)),
        "epoch": draw(st.one_of(st.floats(0, 5).map(lambda s: round(s, 2)), st.just(3))),
        "price": draw(st.sampled_from(QUOTES[:4])),
        "bid": draw(st.sampled_from(QUOTES)),
        "size": draw(st.sampled_from([1, 1, 1, 5000])),
    }
    twist = draw(st.sampled_from([None] * 8 + ["drop", "int key", "dup", "garbage", "spaced"]))
    if twist == "drop":
        del record[draw(st.sampled_from(sorted(record)))]
    elif twist == "int key":
        record["symbol"] = 7
    elif twist == "garbage":
        return b'{"symbol":'
    if twist == "spaced":  # not the compact form: the general reader
        return json.dumps(record).encode()
    text = orjson.dumps(record)
    if twist == "dup":  # a repeated key: Python judges the record
        text = text[:-1] + b',"seq":1}'
    return text


def reference(
    contract: SchemaContract, batches: list[list[bytes]], partitions: int = 3
) -> list[Any]:
    """The Python path: no native core, the Python tracker, ``observe_record`` of each
    decoded record whose key passed, the parts its violations distrust left out."""
    assert contract.state is not None
    verifier = DataSchemaContractVerifier(contract, native=False)
    tracker = SymbolStateTracker(contract.state)
    out: list[Any] = []
    for part in batches:
        report = verifier.validate_payloads(part)
        parts = {
            q.index: distrusted(contract.state, q.violations) for q in report.quarantined_records
        }
        fed = [i for i in range(len(part)) if "key" not in parts.get(i, ())]
        events = [
            (
                n,
                tracker.observe_record(
                    i % partitions, orjson.loads(part[i]), parts.get(i, frozenset())
                ),
            )
            for n, i in enumerate(fed)
        ]
        out.append([(n, e) for n, e in events if e])
        out.append(counts(tracker))
    return out


def scanned(contract: SchemaContract, batches: list[list[bytes]]) -> list[Any]:
    """The native path: the core's rows, the native tracker, ``StateFeed.observe_scanned``."""
    assert contract.state is not None
    verifier = DataSchemaContractVerifier(contract, native=True)
    spec = contract.state
    tracker = NativeSymbolStateTracker(spec)
    types = {f.name: f.expected_type for f in contract.fields}
    feed = StateFeed(tracker, types)  # type: ignore[arg-type]
    rows = verifier.state_rows(
        spec.key_field, spec.sequence_field, spec.event_time_field, spec.quote_fields
    )
    assert rows is not None
    out: list[Any] = []
    for part in batches:
        rows.clear()
        report = verifier.validate_payloads(part, rows=rows)
        assert len(rows) == len(part)
        parts = {q.index: distrusted(spec, q.violations) for q in report.quarantined_records}
        fed = [i for i in range(len(part)) if "key" not in parts.get(i, ())]
        distrust = {n: parts[i] for n, i in enumerate(fed) if parts.get(i)}
        values = [part[i] for i in fed]
        out.append(feed.observe_scanned([i % 3 for i in fed], values, fed, rows, distrust))
        out.append(counts(tracker))
    return out


def fed_rows(contract: SchemaContract, batches: list[list[bytes]]) -> list[Any]:
    """The file path's feed: ``StateFeed.observe_rows`` of every row but the unfed ones,
    on one partition, distrust by record position."""
    assert contract.state is not None
    verifier = DataSchemaContractVerifier(contract, native=True)
    spec = contract.state
    tracker = NativeSymbolStateTracker(spec)
    feed = StateFeed(tracker, {f.name: f.expected_type for f in contract.fields})  # type: ignore[arg-type]
    rows = verifier.state_rows(
        spec.key_field, spec.sequence_field, spec.event_time_field, spec.quote_fields
    )
    assert rows is not None
    out: list[Any] = []
    for part in batches:
        rows.clear()
        report = verifier.validate_payloads(part, rows=rows)
        parts = {q.index: distrusted(spec, q.violations) for q in report.quarantined_records}
        unfed = sorted(i for i, p in parts.items() if "key" in p)
        distrust = {i: p for i, p in parts.items() if p and "key" not in p}
        out.append(feed.observe_rows(0, part, rows, unfed, distrust))
        out.append(counts(tracker))
    return out


def counts(tracker: Any) -> tuple[int, int, int, int]:
    return len(tracker), tracker.evictions, tracker.holes, tracker.holes_given_up


@settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    st.sampled_from(["datetime", "float"]),
    st.lists(st.lists(payload(), max_size=30), min_size=1, max_size=6),
)
def test_scanned_rows_give_the_reference_events_and_counts(
    time_type: str, batches: list[list[bytes]]
) -> None:
    """Batch after batch: the same events at the same positions, the same counts."""
    c = contract(time_type)
    assert scanned(c, batches) == reference(c, batches)


@settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    st.sampled_from(["datetime", "float"]),
    st.lists(st.lists(payload(), max_size=30), min_size=1, max_size=6),
)
def test_rows_fed_on_one_partition_give_the_reference_events(
    time_type: str, batches: list[list[bytes]]
) -> None:
    """``observe_rows`` (the file path's feed): batch after batch, the reference's events
    in order and the same counts."""
    c = contract(time_type)
    want = reference(c, batches, partitions=1)
    want = [[e for _, e in item] if isinstance(item, list) else item for item in want]
    assert fed_rows(c, batches) == want


def test_every_kind_of_event_is_compared() -> None:
    """A fixed stream raises each kind of event and evicts: the comparison above is not
    about streams that raise nothing."""
    c = contract("datetime")
    rows = [
        ("AAPL", 1, "2026-12-01T10:00:00Z", 1.0),
        ("AAPL", 10, "2026-12-01T10:00:01Z", 1.0),  # held as holes (window 2)
        ("AAPL", 5, "2026-12-01T10:00:02Z", 1.0),  # a late number
        ("AAPL", 11, "2026-12-01T10:00:02Z", 1.0),  # a gap; the quote frozen for 2 s
        ("AAPL", 1, "2026-12-01T09:00:00Z", 2.0),  # a regression and a time regression
        *[(f"S{i}", 1, "2026-12-01T10:00:00Z", 1.0) for i in range(6)],  # evictions
        ("L" * 300, 5, "2026-12-01T10:00:00Z", 1.0),
        ("S6", 1, "2026-12-01T10:00:00Z", 1.0),
        ("S7", 1, "2026-12-01T10:00:00Z", 1.0),
        ("L" * 300, 1, "2026-12-01T10:00:00Z", 2.0),  # the same partition: a regression
    ]
    part = [
        orjson.dumps(
            {"symbol": s, "seq": q, "ts": t, "tstext": t, "epoch": 1.0, "price": p, "bid": p}
            | {"size": 1}
        )
        for s, q, t, p in rows
    ]
    found = scanned(c, [part])
    assert found == reference(c, [part])
    kinds = Counter(str(e.kind) for _, events in found[0] for e in events)
    assert set(kinds) >= {
        "sequence_gap",
        "sequence_regression",
        "event_time_regression",
        "frozen_quote",
    }
    assert found[1][1] > 0  # evictions
    assert any(e.symbol.startswith("L" * 32 + "…#") for _, es in found[0] for e in es)


def test_plain_valid_records_are_not_read_in_python() -> None:
    """A batch of valid compact ticks is fed from the rows alone: the Python reader (for
    rows the core left absent) is never called."""
    c = contract("datetime")
    assert c.state is not None
    verifier = DataSchemaContractVerifier(c, native=True)
    spec = c.state
    rows = verifier.state_rows(
        spec.key_field, spec.sequence_field, spec.event_time_field, spec.quote_fields
    )
    part = [
        orjson.dumps(
            {"symbol": f"S{i % 3}", "seq": i // 3 + (i == 7), "ts": f"2026-12-01T10:00:0{i % 10}Z"}
            | {"tstext": None, "epoch": None, "price": 1.0, "bid": None, "size": 1}
        )
        for i in range(30)
    ]
    report = verifier.validate_payloads(part, rows=rows)
    assert report.valid_count == len(part)
    calls: list[int] = []
    tracker = NativeSymbolStateTracker(spec)
    found = tracker.observe_scanned(  # type: ignore[attr-defined]
        [0] * len(part), rows, range(len(part)), {}, calls.append
    )
    assert calls == []
    python = SymbolStateTracker(spec)
    events = [(n, python.observe_record(0, orjson.loads(p))) for n, p in enumerate(part)]
    expected = [(n, e) for n, e in events if e]
    assert expected
    assert found == expected


def test_a_failed_scan_leaves_every_row_to_python() -> None:
    """When the core's scan raises (defence in depth), the chunk's rows are absent and
    Python reads them: the events are still the reference's."""
    c = contract("datetime")
    assert c.state is not None
    part = [
        orjson.dumps(
            {"symbol": "A", "seq": s, "ts": "2026-12-01T10:00:00Z", "tstext": None}
            | {"epoch": None, "price": 1.0, "bid": None, "size": 1}
        )
        for s in (1, 2, 5, 6)
    ]
    verifier = DataSchemaContractVerifier(c, native=True)
    assert verifier._rust is not None

    class Failing:
        def scan(self, *args: object) -> None:
            raise RuntimeError("boom")

    verifier._rust.plan = Failing()  # type: ignore[assignment]
    spec = c.state
    rows = verifier.state_rows(spec.key_field, spec.sequence_field, spec.event_time_field)
    verifier.validate_payloads(part, rows=rows)
    assert len(rows) == len(part)
    tracker = NativeSymbolStateTracker(spec)
    calls: list[int] = []

    def read(position: int) -> Any:
        calls.append(position)
        return tracker.read(orjson.loads(part[position]))

    found = tracker.observe_scanned([0] * 4, rows, range(4), {}, read)  # type: ignore[attr-defined]
    assert calls == [0, 1, 2, 3]
    python = SymbolStateTracker(spec)
    events = [(n, python.observe_record(0, orjson.loads(p))) for n, p in enumerate(part)]
    expected = [(n, e) for n, e in events if e]
    assert expected
    assert found == expected


def test_unreadable_fields_hand_out_no_rows() -> None:
    """Rows only where the core reads every field: not for a quote field that is not a
    number, a name that is not a field, or without the native core."""
    c = contract("datetime")
    native = DataSchemaContractVerifier(c, native=True)
    assert native.state_rows("symbol", "seq", "ts", ("price", "bid")) is not None
    assert native.state_rows("symbol", None, None, ("tstext",)) is None
    assert native.state_rows("nope") is None
    assert DataSchemaContractVerifier(c, native=False).state_rows("symbol") is None


def source(values: list[bytes]) -> list[SourceRecord]:
    return [SourceRecord("md", i % 3, i, None, v, (), None) for i, v in enumerate(values)]


@settings(max_examples=max(EXAMPLES // 3, 20), deadline=None)
@given(st.lists(st.lists(payload(), min_size=1, max_size=30), min_size=1, max_size=4))
def test_route_state_summaries_match_the_python_path(batches: list[list[bytes]]) -> None:
    """The service's RouteState: fed from the rows (native) or by the Python path, the same
    summaries (events, examples, evictions, symbols) and the same DLQ entries."""
    c = contract("datetime")
    assert c.state is not None
    types = {f.name: f.expected_type for f in c.fields}
    python_verifier = DataSchemaContractVerifier(c, native=False)
    native_verifier = DataSchemaContractVerifier(c, native=True)
    python = RouteState(c.state, types, native=False)
    native = RouteState(
        c.state, types, native_verifier.field_getter, state_rows=native_verifier.state_rows
    )
    assert native.rows is not None and python.rows is None
    for part in batches:
        records = source(part)
        results = []
        for state, verifier in ((python, python_verifier), (native, native_verifier)):
            if state.rows is not None:
                state.rows.clear()
            report = verifier.validate_payloads(part, rows=state.rows)
            dlq: dict[int, list[Violation]] = {
                q.index: q.violations for q in report.quarantined_records
            }
            added: Counter[tuple[str | None, str]] = Counter()
            summary = state.apply(records, report, dlq, added, None, state.rows)
            results.append((summary, dlq, added))
        assert results[0] == results[1]


def test_times_read_once_and_sharing_a_minute_give_the_reference_events() -> None:
    """The event time is read once per record for its check and the state feed, and a
    minute is remembered between records: regressions within a minute, odd seconds and
    offsets, the same text in another field of the record, compared with the reference."""
    seconds = ["10", "09.4", "09.6", "59.999999", "60", "5a", "00", "10.500", "09"]
    texts = [f"2026-12-01T10:00:{s}Z" for s in seconds]
    texts += ["2026-12-01T11:00:09+01:00", "2026-12-01T10:00:08", "2026-12-01T10:01:00Z"]
    batch = [
        orjson.dumps(
            {
                "symbol": "AAPL",
                "seq": n,
                "ts": t,
                "tstext": t,
                "epoch": 1.0,
                "price": 1.0,
                "bid": None,
                "size": 1,
            }
        )
        for n, t in enumerate(texts + texts[::-1])
    ]
    c = contract("datetime")
    assert scanned(c, [batch, batch[:5]]) == reference(c, [batch, batch[:5]])
