"""`contract from-registry` against a real registry: the contract loads, and records made
with confluent-kafka's serializers from the same schema pass it."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from confluent_kafka.schema_registry import Schema, SchemaRegistryClient
from confluent_kafka.schema_registry.avro import AvroDeserializer, AvroSerializer
from confluent_kafka.schema_registry.json_schema import JSONDeserializer, JSONSerializer
from confluent_kafka.schema_registry.protobuf import ProtobufSerializer
from confluent_kafka.serialization import MessageField, SerializationContext

from stream_validator import DataSchemaContractVerifier, load_contract
from stream_validator.cli.main import main
from stream_validator.errors import CheckExit, FromRegistryExit
from stream_validator.records import SourceRecord
from stream_validator.registry.decoder import RecordDecoder
from stream_validator.registry.encoder import ProtobufWriter
from stream_validator.registry.outcome import Decoded
from tests.integration.test_dev_registry import JSON_QUOTE, quote_message_class

AVRO_BOOK = """{
  "type": "record", "name": "Book", "namespace": "sv.test",
  "fields": [
    {"name": "symbol", "type": "string", "doc": "the instrument"},
    {"name": "seq", "type": "int"},
    {"name": "ts", "type": {"type": "long", "logicalType": "timestamp-micros"}},
    {"name": "side", "type": {"type": "enum", "name": "Side", "symbols": ["BUY", "SELL"]}},
    {"name": "last_side", "type": ["null", "Side"], "default": null},
    {"name": "top", "type": {"type": "record", "name": "Level",
      "fields": [{"name": "price", "type": "double"}, {"name": "size", "type": "long"}]}},
    {"name": "bids", "type": {"type": "array", "items": "Level"}},
    {"name": "mid", "type": ["null", "float"], "default": null},
    {"name": "flags", "type": "boolean"},
    {"name": "raw", "type": "bytes"}
  ]
}"""


def _records(count: int) -> list[dict[str, Any]]:
    return [
        {
            "symbol": f"SYM{i % 7}",
            "seq": i,
            "ts": datetime(2026, 1, 2, 3, 4, i % 60, i, tzinfo=UTC),
            "side": "BUY" if i % 2 else "SELL",
            "last_side": None if i % 3 else "BUY",
            "top": {"price": 100.0 + i, "size": 10 * i},
            "bids": [{"price": 99.5, "size": j} for j in range(i % 4)],
            "mid": None if i % 2 else 100.25,
            "flags": bool(i % 5),
            "raw": bytes([i % 256]),
        }
        for i in range(count)
    ]


@pytest.fixture
def client(schema_registry_url: str) -> Iterator[SchemaRegistryClient]:
    """A Schema Registry client of the session registry, closed after the test."""
    with SchemaRegistryClient({"url": schema_registry_url, "timeout": 30}) as registry_client:
        yield registry_client


def _from_registry(url: str, subject: str, out: Path, *extra: str) -> int:
    argv = ["contract", "from-registry", "--registry-url", url, "--subject", subject]
    return main([*argv, "-o", str(out), *extra])


def test_avro_contract_loads_and_passes_the_schemas_records(
    client: SchemaRegistryClient,
    schema_registry_url: str,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """An Avro subject's contract passes check-contract and quarantines none of 200 records
    serialized with that schema and decoded by confluent-kafka's deserializer."""
    topic = f"sv-book-{uuid.uuid4().hex[:8]}"
    ctx = SerializationContext(topic, MessageField.VALUE)
    serialize = AvroSerializer(client, AVRO_BOOK)
    deserialize = AvroDeserializer(client)
    decoded = [deserialize(serialize(r, ctx), ctx) for r in _records(200)]
    out = tmp_path / "book.yaml"
    assert _from_registry(schema_registry_url, f"{topic}-value", out) == FromRegistryExit.OK
    assert "raw: Avro type 'bytes' has no contract type" in capsys.readouterr().err
    assert main(["check-contract", str(out)]) == CheckExit.OK
    contract = load_contract(out)
    by_name = {spec.name: spec for spec in contract.fields}
    assert set(by_name) == {
        "symbol",
        "seq",
        "ts",
        "side",
        "last_side",
        "top",
        "bids",
        "mid",
        "flags",
    }
    assert by_name["side"].allowed == ("BUY", "SELL")
    assert by_name["last_side"].is_nullable and by_name["mid"].is_nullable
    report = DataSchemaContractVerifier(contract).validate_batch(decoded)
    assert report.quarantined_count == 0, [q.violations for q in report.quarantined_records[:3]]
    assert len(report.valid_indices) == 200


def test_json_schema_contract_loads_and_passes_the_schemas_records(
    client: SchemaRegistryClient, schema_registry_url: str, tmp_path: Path
) -> None:
    """A JSON Schema subject's contract passes check-contract and quarantines none of its
    records (the optional property, left out, is unknown drift only)."""
    topic = f"sv-quote-{uuid.uuid4().hex[:8]}"
    ctx = SerializationContext(topic, MessageField.VALUE)
    serialize = JSONSerializer(JSON_QUOTE, client)
    deserialize = JSONDeserializer(None, schema_registry_client=client)
    records = [
        {"symbol": f"S{i}", "bid": i + 0.5, "ask": i + 1, "level": i, "ts": "2026-01-02T03:04:05Z"}
        | ({"note": None} if i % 2 else {"note": "x"})
        for i in range(100)
    ]
    decoded = [deserialize(serialize(r, ctx), ctx) for r in records]
    out = tmp_path / "quote.yaml"
    assert _from_registry(schema_registry_url, f"{topic}-value", out, "--version", "1") == 0
    assert main(["check-contract", str(out)]) == CheckExit.OK
    contract = load_contract(out)
    assert [spec.name for spec in contract.fields] == ["symbol", "bid", "ask", "level", "ts"]
    report = DataSchemaContractVerifier(contract).validate_batch(decoded)
    assert report.quarantined_count == 0, [q.violations for q in report.quarantined_records[:3]]


PROTO_BOOK = """syntax = "proto3";
package sv.test;

import "google/protobuf/timestamp.proto";
import "google/protobuf/wrappers.proto";

enum Side {
  SIDE_UNSPECIFIED = 0;
  BUY = 1;
  SELL = 2;
}

message Book {
  message Level {
    double price = 1;
    int64 size = 2;
  }
  string symbol = 1;
  int32 seq = 2;
  google.protobuf.Timestamp ts = 3;
  Side side = 4;
  optional Side last_side = 5;
  Level top = 6;
  repeated Level bids = 7;
  google.protobuf.DoubleValue mid = 8;
  bool flags = 9;
  bytes raw = 10;
  map<string, int64> counts = 11;
  oneof venue {
    string mic = 12;
    int32 venue_id = 13;
  }
}
"""


def _proto_book(cls: Any, i: int) -> Any:
    book = cls(symbol=f"SYM{i % 7}", seq=i, side=1 + i % 2, flags=bool(i % 5), raw=bytes([i]))
    book.ts.FromDatetime(datetime(2026, 1, 2, 3, 4, i % 60, i, tzinfo=UTC))
    if i % 3 == 0:
        book.last_side = 1
    book.top.price, book.top.size = 100.0 + i, 10 * i
    for j in range(i % 4):
        book.bids.add(price=99.5, size=j)
    if i % 2:
        book.mid.value = 100.25
    book.counts["x"] = i
    if i % 4 == 0:
        book.mic = "XNAS"
    elif i % 4 == 1:
        book.venue_id = i
    return book


def test_protobuf_contract_loads_and_passes_the_schemas_records(
    client: SchemaRegistryClient,
    schema_registry_url: str,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """A Protobuf subject registered as .proto text: its first message's contract passes
    check-contract and quarantines none of 120 records written under it and decoded as the
    service decodes them; bytes and map fields are named as left out."""
    topic = f"sv-pbook-{uuid.uuid4().hex[:8]}"
    writer = ProtobufWriter(client, PROTO_BOOK, "sv.test.Book", topic)
    decoder = RecordDecoder("protobuf", client)
    decoded = []
    for i in range(120):
        value = writer(_proto_book(writer.message_class, i))
        result = decoder.decode(SourceRecord(topic, 0, i, None, value, [], None))
        assert isinstance(result, Decoded), result
        decoded.append(result.record)
    out = tmp_path / "pbook.yaml"
    assert _from_registry(schema_registry_url, f"{topic}-value", out) == FromRegistryExit.OK
    err = capsys.readouterr().err
    assert "left out: raw: bytes have no contract type" in err
    assert "left out: counts: a map has no contract type" in err
    assert main(["check-contract", str(out)]) == CheckExit.OK
    contract = load_contract(out)
    by_name = {spec.name: spec for spec in contract.fields}
    assert list(by_name) == [
        "symbol", "seq", "ts", "side", "last_side", "top", "bids", "mid", "flags", "mic",
        "venue_id",
    ]  # fmt: skip
    assert by_name["side"].allowed == ("SIDE_UNSPECIFIED", "BUY", "SELL")
    nullable = {name for name, spec in by_name.items() if spec.is_nullable}
    assert nullable == {"ts", "last_side", "top", "mid", "mic", "venue_id"}
    report = DataSchemaContractVerifier(contract).validate_batch(decoded)
    assert report.quarantined_count == 0, [q.violations for q in report.quarantined_records[:3]]
    assert len(report.valid_indices) == 120


def test_protobuf_in_the_serialized_form_and_a_named_message(
    client: SchemaRegistryClient, schema_registry_url: str, tmp_path: Path
) -> None:
    """A Protobuf subject registered by confluent-kafka's ProtobufSerializer (the base64
    FileDescriptorProto) converts too; --message picks a nested message."""
    quote = quote_message_class()
    topic = f"sv-proto-{uuid.uuid4().hex[:8]}"
    ctx = SerializationContext(topic, MessageField.VALUE)
    ProtobufSerializer(quote, client, {"use.deprecated.format": False})(quote(symbol="A"), ctx)
    out = tmp_path / "proto.yaml"
    assert _from_registry(schema_registry_url, f"{topic}-value", out) == FromRegistryExit.OK
    assert [spec.name for spec in load_contract(out).fields] == ["symbol", "bid"]

    book = f"sv-pbook-{uuid.uuid4().hex[:8]}"
    ProtobufWriter(client, PROTO_BOOK, "sv.test.Book", book)
    level = tmp_path / "level.yaml"
    argv = ["--message", "sv.test.Book.Level"]
    assert _from_registry(schema_registry_url, f"{book}-value", level, *argv) == 0
    assert [spec.name for spec in load_contract(level).fields] == ["price", "size"]


def test_a_proto_that_does_not_compile_exits_1_with_protocs_message(
    client: SchemaRegistryClient,
    schema_registry_url: str,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """A .proto text protoc refuses (Apicurio stores it all the same): exit 1 quoting
    protoc, no file written, no traceback."""
    subject = f"sv-bad-{uuid.uuid4().hex[:8]}-value"
    bad = 'syntax = "proto3";\nmessage X { strin a = 1; }\n'
    client.register_schema(subject, Schema(bad, "PROTOBUF"))
    out = tmp_path / "bad.yaml"
    assert _from_registry(schema_registry_url, subject, out) == FromRegistryExit.NOT_CONVERTIBLE
    err = capsys.readouterr().err
    assert 'does not compile: registered.proto:2:13: "strin" is not defined' in err
    assert "Traceback" not in err
    assert not out.exists()


def test_unknown_subject_and_version_exit_2(
    client: SchemaRegistryClient,
    schema_registry_url: str,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """A subject or version the registry does not have: exit 2 with the registry's word."""
    subject = f"sv-missing-{uuid.uuid4().hex[:8]}-value"
    assert _from_registry(schema_registry_url, subject, tmp_path / "x.yaml") == (
        FromRegistryExit.USAGE
    )
    client.register_schema(f"{subject}", Schema(JSON_QUOTE, "JSON"))
    out = tmp_path / "y.yaml"
    assert _from_registry(schema_registry_url, subject, out, "--version", "7") == 2
    err = capsys.readouterr().err
    assert "not found" in err and "Traceback" not in err


def test_unreachable_registry_exits_3(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Nothing listening at the URL: exit 3 and a one-line message."""
    url = "http://127.0.0.1:9/apis/ccompat/v7"
    assert _from_registry(url, "x-value", tmp_path / "x.yaml") == FromRegistryExit.UNREACHABLE
    assert "cannot reach the registry" in capsys.readouterr().err
