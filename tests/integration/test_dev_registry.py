"""The development Schema Registry (Apicurio) serves confluent-kafka's client and serializers."""

from __future__ import annotations

import subprocess
import sys
import uuid
from collections.abc import Iterator
from typing import Any

import pytest
from confluent_kafka.schema_registry import Schema, SchemaRegistryClient
from confluent_kafka.schema_registry.avro import AvroDeserializer, AvroSerializer
from confluent_kafka.schema_registry.json_schema import JSONDeserializer, JSONSerializer
from confluent_kafka.schema_registry.protobuf import ProtobufDeserializer, ProtobufSerializer
from confluent_kafka.serialization import MessageField, SerializationContext
from google.protobuf import descriptor_pb2, descriptor_pool, message_factory

from stream_validator.cli.devregistry import LocalSchemaRegistry

AVRO_TRADE = """{
  "type": "record", "name": "Trade", "namespace": "sv.test",
  "fields": [
    {"name": "symbol", "type": "string"},
    {"name": "price", "type": "double"},
    {"name": "size", "type": "long"},
    {"name": "ts", "type": {"type": "long", "logicalType": "timestamp-millis"}},
    {"name": "venue", "type": ["null", "string"], "default": null},
    {"name": "side", "type": {"type": "enum", "name": "Side", "symbols": ["BUY", "SELL"]}}
  ]
}"""

JSON_QUOTE = """{
  "$schema": "http://json-schema.org/draft-07/schema#",
  "title": "Quote", "type": "object",
  "properties": {
    "symbol": {"type": "string"},
    "bid": {"type": "number"},
    "ask": {"type": "number"},
    "level": {"type": "integer"},
    "ts": {"type": "string", "format": "date-time"},
    "note": {"type": ["string", "null"]}
  },
  "required": ["symbol", "bid", "ask", "level", "ts"]
}"""


def _unique(name: str) -> str:
    return f"{name}-{uuid.uuid4().hex[:8]}"


def quote_message_class() -> Any:
    """A protobuf message class built at run time (no protoc): ``sv.test.Quote``."""
    file_proto = descriptor_pb2.FileDescriptorProto(
        name=f"{_unique('quote')}.proto", package="sv.test", syntax="proto3"
    )
    message = file_proto.message_type.add(name="Quote")
    field = descriptor_pb2.FieldDescriptorProto
    message.field.add(name="symbol", number=1, type=field.TYPE_STRING, label=field.LABEL_OPTIONAL)
    message.field.add(name="bid", number=2, type=field.TYPE_DOUBLE, label=field.LABEL_OPTIONAL)
    pool = descriptor_pool.DescriptorPool()
    pool.Add(file_proto)
    return message_factory.GetMessageClass(pool.FindMessageTypeByName("sv.test.Quote"))


@pytest.fixture
def client(schema_registry_url: str) -> Iterator[SchemaRegistryClient]:
    """A Schema Registry client of the session registry, closed after the test."""
    with SchemaRegistryClient({"url": schema_registry_url, "timeout": 30}) as registry_client:
        yield registry_client


def test_avro_schema_round_trips(client: SchemaRegistryClient) -> None:
    """An Avro record serialized through the registry decodes back to the same dict."""
    topic = _unique("sv-avro")
    ctx = SerializationContext(topic, MessageField.VALUE)
    record = {
        "symbol": "AAPL",
        "price": 189.5,
        "size": 100,
        "ts": 1_700_000_000_000,
        "venue": None,
        "side": "BUY",
    }
    payload = AvroSerializer(client, AVRO_TRADE)(record, ctx)
    assert payload is not None and payload[0] == 0  # the Confluent magic byte
    decoded = AvroDeserializer(client, return_record_name=False)(payload, ctx)
    assert decoded is not None
    assert {**decoded, "ts": int(decoded["ts"].timestamp() * 1000)} == record
    registered = client.get_latest_version(f"{topic}-value")
    assert registered.schema.schema_type == "AVRO"
    assert registered.schema_id == int.from_bytes(payload[1:5], "big")


def test_json_schema_round_trips(client: SchemaRegistryClient) -> None:
    """A JSON Schema record serialized through the registry decodes back to the same dict."""
    topic = _unique("sv-json")
    ctx = SerializationContext(topic, MessageField.VALUE)
    record = {"symbol": "MSFT", "bid": 1.0, "ask": 1.5, "level": 1, "ts": "2026-01-02T03:04:05Z"}
    payload = JSONSerializer(JSON_QUOTE, client)(record, ctx)
    assert payload is not None and payload[0] == 0
    assert JSONDeserializer(None, schema_registry_client=client)(payload, ctx) == record
    assert client.get_latest_version(f"{topic}-value").schema.schema_type == "JSON"


def test_protobuf_schema_round_trips(client: SchemaRegistryClient) -> None:
    """A Protobuf message serialized through the registry decodes back to an equal message."""
    quote = quote_message_class()
    topic = _unique("sv-proto")
    ctx = SerializationContext(topic, MessageField.VALUE)
    conf = {"use.deprecated.format": False}
    payload = ProtobufSerializer(quote, client, conf)(quote(symbol="IBM", bid=2.25), ctx)
    assert payload is not None and payload[0] == 0
    decoded = ProtobufDeserializer(quote, conf, client)(payload, ctx)
    assert (decoded.symbol, decoded.bid) == ("IBM", 2.25)
    assert client.get_latest_version(f"{topic}-value").schema.schema_type == "PROTOBUF"


def test_stop_then_start_on_the_same_state_dir_serves_again(
    restartable_registry: LocalSchemaRegistry,
) -> None:
    """stop, then start on the same state dir: the same URL answers again (in memory: empty)."""
    url = restartable_registry.url
    subject = _unique("sv-restart")
    with SchemaRegistryClient({"url": url}) as client:
        client.register_schema(subject, _avro_schema())
    assert restartable_registry.stop() is True
    assert not restartable_registry.is_running()
    assert restartable_registry.start() == url
    with SchemaRegistryClient({"url": url}) as client:
        assert subject not in client.get_subjects()


def test_keep_data_keeps_schemas_and_ids_across_a_kill(
    restartable_registry: LocalSchemaRegistry,
) -> None:
    """With keep_data a killed registry comes back with the same subjects and schema ids."""
    restartable_registry.stop()
    url = restartable_registry.start(keep_data=True)
    subject = _unique("sv-kept")
    with SchemaRegistryClient({"url": url}) as client:
        schema_id = client.register_schema(subject, _avro_schema())
    assert restartable_registry.kill() is True
    assert restartable_registry.start(keep_data=True) == url
    with SchemaRegistryClient({"url": url}) as client:
        assert client.get_latest_version(subject).schema_id == schema_id
    restartable_registry.stop()


def test_cli_start_prints_the_url_last_then_status_and_stop(
    restartable_registry: LocalSchemaRegistry,
) -> None:
    """`dev-registry start` prints the API URL as its last stdout line (the same URL again on
    the same state dir), `status` reports it, `stop` ends it and `status` then exits 1."""
    url = restartable_registry.url
    restartable_registry.stop()
    state = ["--state-dir", str(restartable_registry.layout.root)]
    started = _cli("start", *state)
    assert started.returncode == 0, started.stderr
    assert started.stdout.splitlines()[-1] == url
    assert "ready in" in started.stderr
    status = _cli("status", *state)
    assert status.returncode == 0 and url in status.stdout
    assert _cli("stop", *state).returncode == 0
    assert _cli("status", *state).returncode == 1
    assert not restartable_registry.is_running()


def _avro_schema() -> Schema:
    return Schema(AVRO_TRADE, "AVRO")


def _cli(*args: str) -> subprocess.CompletedProcess[str]:
    cmd = [sys.executable, "-m", "stream_validator", "dev-registry", *args]
    return subprocess.run(cmd, capture_output=True, text=True, timeout=300, check=False)
