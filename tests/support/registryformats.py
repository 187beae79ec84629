"""Framed values of the three registry formats, written by confluent-kafka's own serializers
into a registry (the in-memory ``mock://`` one in unit tests, the dev registry in integration
tests): one tick schema in Avro, Protobuf and JSON Schema, the same fields as the JSON tick.

``protobuf-text`` is the same Protobuf tick registered as ``.proto`` source text (the form
Apicurio accepts and serves) and framed by ``registry.encoder.ProtobufWriter``, since
confluent-kafka's ``ProtobufSerializer`` registers and reads only the base64 form."""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any

from confluent_kafka.schema_registry import SchemaRegistryClient
from confluent_kafka.schema_registry.avro import AvroSerializer
from confluent_kafka.schema_registry.json_schema import JSONSerializer
from confluent_kafka.schema_registry.protobuf import ProtobufSerializer
from confluent_kafka.serialization import MessageField, SerializationContext
from google.protobuf import descriptor_pb2, descriptor_pool, timestamp_pb2
from google.protobuf.message import Message
from google.protobuf.message_factory import GetMessageClass

from stream_validator.registry.encoder import ProtobufWriter

AVRO_TICK = """{
  "type": "record", "name": "Tick", "namespace": "md",
  "fields": [
    {"name": "symbol", "type": "string"},
    {"name": "bid", "type": "double"},
    {"name": "ask", "type": "float"},
    {"name": "size", "type": "long"},
    {"name": "level", "type": "int"},
    {"name": "side", "type": {"type": "enum", "name": "Side", "symbols": ["BUY", "SELL"]}},
    {"name": "venue", "type": ["null", "string"], "default": null},
    {"name": "ts", "type": {"type": "long", "logicalType": "timestamp-millis"}},
    {"name": "recv", "type": {"type": "long", "logicalType": "timestamp-micros"}}
  ]
}"""

JSON_SCHEMA_TICK = """{
  "$schema": "http://json-schema.org/draft-07/schema#",
  "title": "Tick", "type": "object",
  "properties": {
    "symbol": {"type": "string"}, "bid": {"type": "number"}, "ask": {"type": "number"},
    "size": {"type": "integer"}, "level": {"type": "integer"},
    "side": {"type": "string", "enum": ["BUY", "SELL"]},
    "venue": {"type": ["string", "null"]},
    "ts": {"type": "string"}, "recv": {"type": "string"}
  },
  "required": ["symbol", "bid", "ask", "size", "level", "side", "ts", "recv"]
}"""

#: The Protobuf tick as .proto source (the same type ``tick_message_class`` builds).
PROTO_TICK = """syntax = "proto3";
package md;

import "google/protobuf/timestamp.proto";

enum Side {
  BUY = 0;
  SELL = 1;
}

message Tick {
  string symbol = 1;
  double bid = 2;
  float ask = 3;
  int64 size = 4;
  int32 level = 5;
  Side side = 6;
  optional string venue = 7;
  google.protobuf.Timestamp ts = 8;
  google.protobuf.Timestamp recv = 9;
}
"""

#: A good tick as Python values (what Avro and Protobuf decode to).
TICK: dict[str, Any] = {
    "symbol": "AAPL",
    "bid": 190.25,
    "ask": 190.5,
    "size": 300,
    "level": 1,
    "side": "BUY",
    "venue": None,
    "ts": datetime(2026, 12, 3, 12, 0, 0, 123000, tzinfo=UTC),
    "recv": datetime(2026, 12, 3, 12, 0, 0, 123456, tzinfo=UTC),
}

#: The contract all three formats are checked against (the decoded types of TICK).
TICK_CONTRACT = """
name: tick
version: "1"
max_allowed_null_pct: 100
fields:
  - {name: symbol, type: str}
  - {name: bid, type: float, min_value: 0}
  - {name: ask, type: float, min_value: 0}
  - {name: size, type: int, min_value: 1}
  - {name: level, type: int}
  - {name: side, type: str, allowed: [BUY, SELL]}
  - {name: venue, type: str, nullable: true}
  - {name: ts, type: datetime}
  - {name: recv, type: datetime}
"""


def tick_message_class() -> type[Message]:
    """A generated-like Protobuf class of the tick (built from a descriptor, as protoc would)."""
    pool = descriptor_pool.DescriptorPool()
    pool.AddSerializedFile(timestamp_pb2.DESCRIPTOR.serialized_pb)
    file = descriptor_pb2.FileDescriptorProto(
        name="tick.proto",
        package="md",
        syntax="proto3",
        dependency=["google/protobuf/timestamp.proto"],
    )
    side = file.enum_type.add(name="Side")
    side.value.add(name="BUY", number=0)
    side.value.add(name="SELL", number=1)
    tick = file.message_type.add(name="Tick")
    f = descriptor_pb2.FieldDescriptorProto
    for number, (name, kind) in enumerate(
        [
            ("symbol", f.TYPE_STRING),
            ("bid", f.TYPE_DOUBLE),
            ("ask", f.TYPE_FLOAT),
            ("size", f.TYPE_INT64),
            ("level", f.TYPE_INT32),
        ],
        start=1,
    ):
        tick.field.add(name=name, number=number, type=kind, label=f.LABEL_OPTIONAL)
    tick.field.add(
        name="side", number=6, type=f.TYPE_ENUM, type_name=".md.Side", label=f.LABEL_OPTIONAL
    )
    tick.field.add(
        name="venue",
        number=7,
        type=f.TYPE_STRING,
        label=f.LABEL_OPTIONAL,
        proto3_optional=True,
        oneof_index=0,
    )
    tick.oneof_decl.add(name="_venue")
    for number, name in ((8, "ts"), (9, "recv")):
        tick.field.add(
            name=name,
            number=number,
            type=f.TYPE_MESSAGE,
            type_name=".google.protobuf.Timestamp",
            label=f.LABEL_OPTIONAL,
        )
    pool.Add(file)
    return GetMessageClass(pool.FindMessageTypeByName("md.Tick"))


def _tick_message(cls: type[Message], tick: dict[str, Any]) -> Message:
    message = cls()
    for name in ("symbol", "bid", "ask", "size", "level"):
        setattr(message, name, tick[name])
    message.side = 0 if tick["side"] == "BUY" else 1
    if tick["venue"] is not None:
        message.venue = tick["venue"]
    message.ts.FromDatetime(tick["ts"])
    message.recv.FromDatetime(tick["recv"])
    return message


def _json_tick(tick: dict[str, Any]) -> dict[str, Any]:
    return {**tick, "ts": tick["ts"].isoformat(), "recv": tick["recv"].isoformat()}


def serializer(
    fmt: str, client: SchemaRegistryClient, *, header_id: bool = False
) -> Callable[[str, dict[str, Any]], tuple[bytes, list[tuple[str, bytes]]]]:
    """(topic, tick) -> (value, headers) in ``fmt``, the schema registered under
    ``<topic>-value`` (``header_id``: the schema GUID in the ``__value_schema_id`` header)."""
    conf: dict[str, Any] = {"auto.register.schemas": True}
    if header_id:
        from confluent_kafka.schema_registry import header_schema_id_serializer

        conf["schema.id.serializer"] = header_schema_id_serializer
    if fmt == "avro":
        inner: Any = AvroSerializer(client, AVRO_TICK, conf=conf)
        convert: Callable[[dict[str, Any]], Any] = dict
    elif fmt == "json-schema":
        inner = JSONSerializer(JSON_SCHEMA_TICK, client, conf=conf)
        convert = _json_tick
    elif fmt == "protobuf-text":
        if header_id:
            raise ValueError("protobuf-text writes the schema id in the prefix only")
        return _proto_text_serializer(client)
    elif fmt == "protobuf":
        cls = tick_message_class()
        inner = ProtobufSerializer(cls, client, conf={**conf, "use.deprecated.format": False})

        def convert(tick: dict[str, Any]) -> Any:
            return _tick_message(cls, tick)
    else:
        raise ValueError(fmt)

    def serialize(topic: str, tick: dict[str, Any]) -> tuple[bytes, list[tuple[str, bytes]]]:
        headers: list[tuple[str, bytes]] = []
        ctx = SerializationContext(topic, MessageField.VALUE, headers)
        value = inner(convert(tick), ctx)
        return value, list(ctx.headers or headers)

    return serialize


def _proto_text_serializer(
    client: SchemaRegistryClient,
) -> Callable[[str, dict[str, Any]], tuple[bytes, list[tuple[str, bytes]]]]:
    writers: dict[str, ProtobufWriter] = {}

    def serialize(topic: str, tick: dict[str, Any]) -> tuple[bytes, list[tuple[str, bytes]]]:
        writer = writers.get(topic)
        if writer is None:
            writer = writers[topic] = ProtobufWriter(client, PROTO_TICK, "md.Tick", topic)
        return writer(_tick_message(writer.message_class, tick)), []

    return serialize
