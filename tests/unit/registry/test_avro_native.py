"""The native Avro reading (registry.avronative) against fastavro and the Python rules: the
same reports, DLQ entries and per-symbol state events on the same batches."""

from __future__ import annotations

import io
import json
import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest
from confluent_kafka.schema_registry import Schema
from fastavro import parse_schema, schemaless_writer
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from stream_validator.config.model import RouteConfig, SchemaRegistryConfig
from stream_validator.contracts import load_contract
from stream_validator.contracts.model import SchemaContract
from stream_validator.records import SourceRecord
from stream_validator.registry.avronative import NativeAvro
from stream_validator.registry.client import registry_client
from stream_validator.registry.decoder import RecordDecoder, route_decoders
from stream_validator.registry.outcome import Decoded, Transcoded, Undecodable
from stream_validator.service.plan.planner import BatchPlan, RouteProcessor

ADDRESS = re.compile(r"0x[0-9a-f]{6,}")
AT = "2026-12-03T12:00:01+00:00"
TOPIC = "md.avro"

CONTRACT = """
name: avro_diff
version: "1"
max_allowed_null_pct: 100
forbid_unknown_fields: {forbid}
fields:
  - {{name: symbol, type: str, min_length: 1, max_length: 6}}
  - {{name: bid, type: float, min_value: 0, allow_non_finite: true}}
  - {{name: ask, type: float, max_value: 1000}}
  - {{name: size, type: int, min_value: 1, max_value: 1000000}}
  - {{name: seq, type: int}}
  - {{name: side, type: str, allowed: [BUY, SELL]}}
  - {{name: venue, type: str, nullable: true}}
  - {{name: ts, type: datetime}}
  - {{name: recv, type: datetime, nullable: true}}
state:
  key: symbol
  sequence: {{field: seq, action: quarantine}}
  event_time: {{field: ts, action: flag}}
"""

MILLIS = {"type": "long", "logicalType": "timestamp-millis"}
MICROS = {"type": "long", "logicalType": "timestamp-micros"}
SIDE = {"type": "enum", "name": "Side", "symbols": ["BUY", "SELL", "HOLD"]}

#: A writer schema like the contract, with fields it does not declare.
MATCHING = {
    "type": "record", "name": "Tick", "namespace": "md",
    "fields": [
        {"name": "symbol", "type": "string"},
        {"name": "bid", "type": "double"},
        {"name": "ask", "type": "float"},
        {"name": "size", "type": "long"},
        {"name": "seq", "type": "int"},
        {"name": "side", "type": SIDE},
        {"name": "venue", "type": ["null", "string"]},
        {"name": "ts", "type": MILLIS},
        {"name": "recv", "type": ["null", MICROS]},
        {"name": "live", "type": "boolean"},
        {"name": "book", "type": {"type": "record", "name": "Book", "fields": [
            {"name": "level", "type": "int"},
            {"name": "px", "type": ["null", "double"]},
            {"name": "sides", "type": {"type": "array", "items": "md.Side"}},
        ]}},
        {"name": "stamp", "type": MICROS},
    ],
}  # fmt: skip

#: Types the contract does not expect: unions of several, doubles for ints, longs for
#: datetimes, a missing required field (venue), a string enum field.
MISMATCHED = {
    "type": "record", "name": "Odd", "namespace": "md",
    "fields": [
        {"name": "symbol", "type": ["null", "string", "long"]},
        {"name": "bid", "type": ["float", "string"]},
        {"name": "ask", "type": "double"},
        {"name": "size", "type": "double"},
        {"name": "seq", "type": ["null", "long"]},
        {"name": "side", "type": "string"},
        {"name": "ts", "type": ["null", MICROS, "long"]},
        {"name": "recv", "type": {"type": "array", "items": "long"}},
    ],
}  # fmt: skip

SYMBOLS = st.sampled_from(["A", "B", "AAPL", "", "LONGSYMBOL", 'q"\\\n\x00', "é€😀"])
DOUBLES = st.floats(allow_nan=True, allow_infinity=True) | st.sampled_from(
    [0.0, -0.0, 1.0, 1e300, 5e-324, 1e16, 123456789.125, 1000.0, 1000.0000000001]
)
FLOATS = st.floats(width=32, allow_nan=True, allow_infinity=True)
LONGS = st.integers(-(2**63), 2**63 - 1) | st.integers(-3, 1_000_001)
#: Microseconds since the epoch around the datetime range's edges, and past them.
EDGE_US = [-62_135_596_800_000_000, 253_402_300_799_999_999, 0, -1, 1]
TIMES_US = (
    st.integers(-62_135_596_800_000_001, 253_402_300_800_000_000)
    | st.sampled_from([*EDGE_US, EDGE_US[0] - 1, EDGE_US[1] + 1])
    | st.integers(-(2**63), 2**63 - 1)
)
TIMES_MS = st.integers(-62_135_596_800_001, 253_402_300_800_000) | st.integers(-(2**53), 2**53)


def _matching() -> st.SearchStrategy[dict[str, Any]]:
    return st.fixed_dictionaries(
        {
            "symbol": SYMBOLS,
            "bid": DOUBLES,
            "ask": FLOATS,
            "size": LONGS,
            "seq": st.integers(-(2**31), 2**31 - 1) | st.integers(0, 5),
            "side": st.sampled_from(["BUY", "SELL", "HOLD"]),
            "venue": st.none() | st.text(max_size=5),
            "ts": TIMES_MS,
            "recv": st.none() | TIMES_US,
            "live": st.booleans(),
            "book": st.fixed_dictionaries(
                {
                    "level": st.integers(-5, 5),
                    "px": st.none() | DOUBLES,
                    "sides": st.lists(st.sampled_from(["BUY", "SELL"]), max_size=3),
                }
            ),
            "stamp": TIMES_US,
        }
    )


def _mismatched() -> st.SearchStrategy[dict[str, Any]]:
    return st.fixed_dictionaries(
        {
            "symbol": st.none() | SYMBOLS | LONGS,
            "bid": FLOATS | st.text(max_size=4),
            "ask": DOUBLES,
            "size": DOUBLES,
            "seq": st.none() | LONGS,
            "side": st.text(max_size=5),
            "ts": st.none() | TIMES_US,
            "recv": st.lists(LONGS, max_size=3),
        }
    )


def encoded(schema: Any, datum: dict[str, Any]) -> bytes:
    out = io.BytesIO()
    schemaless_writer(out, parse_schema(schema), datum)
    return out.getvalue()


def framed(schema_id: int, body: bytes) -> bytes:
    return b"\x00" + schema_id.to_bytes(4, "big") + body


def damaged(value: bytes, how: str, at: int) -> bytes | None:
    """The value as-is, truncated, with a byte changed, with junk after it, or worse."""
    if how == "truncate":
        return value[: 5 + at % max(1, len(value) - 5)]
    if how == "flip":
        i = 5 + at % max(1, len(value) - 5)
        return (
            value[:i] + bytes([(value[i] + 1 + at) % 256]) + value[i + 1 :]
            if i < len(value)
            else value
        )
    if how == "junk":
        return value + b"\xff\x01"
    if how == "tombstone":
        return None
    if how == "unframed":
        return b'{"symbol": "A"}'
    if how == "unknown id":
        return b"\x00\x00\x00\x03\xe7" + value[5:]
    return value


def contract_file(tmp: Path, forbid: bool) -> tuple[SchemaContract, Path]:
    path = tmp / f"c{int(forbid)}.yaml"
    path.write_text(CONTRACT.format(forbid=str(forbid).lower()))
    return load_contract(path), path


def str_ts_contract(tmp: Path) -> SchemaContract:
    """The contract with ``ts`` declared a str (and so no event time in its state)."""
    text = CONTRACT.format(forbid="false")
    text = text.replace("{name: ts, type: datetime}", "{name: ts, type: str}")
    (tmp / "s.yaml").write_text(text.replace("  event_time: {field: ts, action: flag}\n", ""))
    return load_contract(tmp / "s.yaml")


def plan(route: RouteConfig, records: Sequence[SourceRecord], results: list[Any]) -> BatchPlan:
    processor = RouteProcessor(
        route, consumer_group="g", max_message_bytes=1_048_576, null_window=1000
    )
    return processor.plan(records, validated_at=AT, decoded_values=results)


def summary(p: BatchPlan) -> str:
    """Everything a plan says about its batch (reports, outputs, state, schemas), with the
    object addresses fastavro's error texts quote (``<_io.BytesIO object at 0x...>``) blanked."""
    r = p.report
    return ADDRESS.sub("0x?", repr({
        "quarantined": [(q.index, q.violations) for q in r.quarantined_records],
        "valid": (r.valid_count, r.valid_indices),
        "counts": (
            r.violation_counts, r.null_counts, r.nan_counts, r.inf_counts, r.null_rates,
            r.flagged_counts, r.observed_unknown_fields, r.total_records,
        ),
        "outputs": [(o.kind, o.topic, o.key, o.value, o.headers) for o in p.outputs],
        "state": p.state,
        "event": p.event(p.violation_counts, (0, 0, 0)),
    }))  # fmt: skip


BATCH = st.lists(
    st.tuples(
        st.booleans(),
        st.data(),
        st.sampled_from(
            ["ok"] * 6 + ["truncate", "flip", "junk", "tombstone", "unframed", "unknown id"]
        ),
        st.integers(0, 1000),
    ),
    min_size=1,
    max_size=10,
)


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(batch=BATCH, forbid=st.booleans())
def test_native_avro_plans_the_batch_as_fastavro_and_the_python_rules(
    tmp_path_factory: pytest.TempPathFactory, batch: list[Any], forbid: bool
) -> None:
    """Per batch of Avro values (two writer schemas; NaN/Inf, nulls, enums, timestamps at
    and past the datetime range's edges, truncated, corrupted, unframed values, unknown
    ids): the native path's report (verdicts, violations in order with their texts,
    null/nan/inf counts), DLQ entries, batch event and per-symbol state equal the Python
    path's (fastavro, then the rules on the dict)."""
    contract, path = contract_file(tmp_path_factory.mktemp("c"), forbid)
    route = RouteConfig("avro", str(path), contract, "clean", "dlq", (TOPIC,))
    client = registry_client(SchemaRegistryConfig(url="mock://avro-native"))
    ids = [
        client.register_schema(f"{TOPIC}-value", Schema(json.dumps(s), "AVRO"))
        for s in (MATCHING, MISMATCHED)
    ]
    records = []
    for offset, (matching, data, how, at) in enumerate(batch):
        schema = MATCHING if matching else MISMATCHED
        datum = data.draw(_matching() if matching else _mismatched())
        value = damaged(framed(ids[not matching], encoded(schema, datum)), how, at)
        records.append(SourceRecord(TOPIC, 0, offset, b"k", value, [], 0))
    python = RecordDecoder("avro", client).decode_batch(records)
    native = NativeAvro(lambda: contract, route.max_payload_bytes)
    decoder = RecordDecoder("avro", client, native)
    decoder.decode_batch(records[:1])  # the schemas seen once: the next batch reads natively
    decoder.decode_batch(records[1:2])
    results = decoder.decode_batch(records)
    assert summary(plan(route, records, results)) == summary(plan(route, records, python))
    for got, want in zip(results, python, strict=True):
        if isinstance(want, Undecodable):
            assert isinstance(got, Undecodable)
            assert ADDRESS.sub("0x?", got.reason) == ADDRESS.sub("0x?", want.reason)
        if isinstance(got, Transcoded):
            assert isinstance(want, Decoded)
            assert got.schema == want.schema


def _tick_records(n: int, client: Any, schema: Any) -> list[SourceRecord]:
    schema_id = client.register_schema(f"{TOPIC}-value", Schema(json.dumps(schema), "AVRO"))
    datum = {
        "symbol": "AAPL", "bid": 1.5, "ask": 2.5, "size": 3, "seq": 1, "side": "BUY",
        "venue": None, "ts": 1_764_763_200_123, "recv": None, "live": True,
        "book": {"level": 1, "px": None, "sides": []}, "stamp": 0,
    }  # fmt: skip
    body = encoded(schema, datum)
    return [SourceRecord(TOPIC, 0, i, b"k", framed(schema_id, body), [], 0) for i in range(n)]


def test_clean_values_of_a_known_schema_are_read_natively(tmp_path: Path) -> None:
    """After a schema id's first value (fastavro, which fetches the schema), its values are
    transcoded natively, in one JSON text each that orjson reads as fastavro's record."""
    contract, _ = contract_file(tmp_path, False)
    client = registry_client(SchemaRegistryConfig(url="mock://avro-native-clean"))
    records = _tick_records(4, client, MATCHING)
    decoder = RecordDecoder("avro", client, NativeAvro(lambda: contract, 1_000_000))
    first = decoder.decode_batch(records)
    assert [type(r) for r in first] == [Decoded, Transcoded, Transcoded, Transcoded]
    assert isinstance(first[0], Decoded) and isinstance(first[1], Transcoded)
    text = json.loads(first[1].text)
    assert text["ts"] == first[0].record["ts"].isoformat()
    assert text == {**first[0].record, "ts": text["ts"], "stamp": "1970-01-01T00:00:00+00:00"}
    assert first[1].schema == first[0].schema


@pytest.mark.parametrize(
    ("change", "why"),
    [
        ("{name: ts, type: datetime}", "logicalType 'timestamp-millis'"),  # ts declared str
        ("bytes", "type 'bytes' has no exact JSON form"),
        ("map", "type 'map' has no exact JSON form"),
        ("date", "logicalType 'date'"),
    ],
)
def test_a_schema_the_transcoder_cannot_read_exactly_stays_with_fastavro(
    tmp_path: Path, change: str, why: str
) -> None:
    """A writer schema holding a type without an exact JSON form (bytes, maps, dates), or a
    timestamp where the contract would judge a datetime and its text differently (a field
    declared str), is decoded by fastavro for every value, decided once per schema id."""
    contract, _ = contract_file(tmp_path, False)
    schema = json.loads(json.dumps(MATCHING))
    extra = {
        "bytes": {"name": "blob", "type": "bytes"},
        "map": {"name": "tags", "type": {"type": "map", "values": "string"}},
        "date": {"name": "day", "type": {"type": "int", "logicalType": "date"}},
    }
    if change in extra:
        schema["fields"].append(extra[change])
    else:
        contract = str_ts_contract(tmp_path)
    client = registry_client(SchemaRegistryConfig(url=f"mock://avro-native-{change[:4]}"))
    datum = {
        "symbol": "AAPL", "bid": 1.5, "ask": 2.5, "size": 3, "seq": 1, "side": "BUY",
        "venue": None, "ts": 1_764_763_200_123, "recv": None, "live": True,
        "book": {"level": 1, "px": None, "sides": []}, "stamp": 0,
        "blob": b"x", "tags": {"a": "b"}, "day": 3,
    }  # fmt: skip
    schema_id = client.register_schema(f"{TOPIC}-value", Schema(json.dumps(schema), "AVRO"))
    value = framed(schema_id, encoded(schema, datum))
    records = [SourceRecord(TOPIC, 0, i, b"k", value, [], 0) for i in range(3)]
    native = NativeAvro(lambda: contract, 1_000_000)
    results = RecordDecoder("avro", client, native).decode_batch(records)
    assert [type(r) for r in results] == [Decoded] * 3
    assert not native.reads(schema_id)
    assert why in native.refusals[schema_id]


def test_a_contract_reload_recompiles_the_plans(tmp_path: Path) -> None:
    """The timestamps admitted depend on the contract of the moment: after a reload that
    declares ``ts`` a str, the schema is refused (fastavro decides); before, read natively."""
    contract, _ = contract_file(tmp_path, False)
    current = [contract]
    client = registry_client(SchemaRegistryConfig(url="mock://avro-native-reload"))
    records = _tick_records(2, client, MATCHING)
    decoder = RecordDecoder("avro", client, NativeAvro(lambda: current[0], 1_000_000))
    assert [type(r) for r in decoder.decode_batch(records)] == [Decoded, Transcoded]
    current[0] = str_ts_contract(tmp_path)
    assert [type(r) for r in decoder.decode_batch(records)] == [Decoded, Decoded]


def test_a_text_past_the_payload_limit_is_left_to_fastavro(tmp_path: Path) -> None:
    """A JSON text longer than the route's max_payload_bytes would be judged oversized on
    the JSON path, never on the decoded one: that value is decoded by fastavro."""
    contract, _ = contract_file(tmp_path, False)
    client = registry_client(SchemaRegistryConfig(url="mock://avro-native-limit"))
    records = _tick_records(2, client, MATCHING)
    decoder = RecordDecoder("avro", client, NativeAvro(lambda: contract, 40))
    assert [type(r) for r in decoder.decode_batch(records)] == [Decoded, Decoded]


def test_route_decoders_read_avro_natively_only_when_asked(tmp_path: Path) -> None:
    """route_decoders(native=True) gives Avro routes the native reading; JSON Schema and
    Protobuf routes, and native=False, keep the Python decoders."""
    contract, path = contract_file(tmp_path, False)
    routes = [
        RouteConfig("a", str(path), contract, "c", "d", ("t1",), format="avro"),
        RouteConfig("j", str(path), contract, "c", "d", ("t2",), format="json-schema"),
    ]
    config = SchemaRegistryConfig(url="mock://avro-native-routes")
    on = route_decoders(routes, config, native=True)
    off = route_decoders(routes, config)
    assert on["a"]._native is not None and on["j"]._native is None
    assert off["a"]._native is None


def test_each_topic_gets_its_own_schema_version(tmp_path: Path) -> None:
    """Values of one schema id from two topics in one batch: each Transcoded result names
    the version under its own topic's subject (none where the subject does not list it),
    as the fastavro path's Decoded results do."""
    contract, _ = contract_file(tmp_path, False)
    client = registry_client(SchemaRegistryConfig(url="mock://avro-native-topics"))
    records = _tick_records(4, client, MATCHING)
    mixed = [r._replace(topic="other") if r.offset % 2 else r for r in records]
    decoder = RecordDecoder("avro", client, NativeAvro(lambda: contract, 1_000_000))
    decoder.decode_batch(records)  # the schema learnt and the last plan set
    native = decoder.decode_batch(mixed)
    python = RecordDecoder("avro", client).decode_batch(mixed)
    assert all(type(r) is Transcoded for r in native)
    assert [r.schema for r in native if r is not None] == [
        r.schema for r in python if r is not None
    ]
    assert {r.schema.version for r in native if r is not None} == {1, None}
