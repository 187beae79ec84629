"""Records written in the wire format by confluent-kafka's ``AvroSerializer`` (the simulator's
Avro producer; the service only decodes)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from confluent_kafka.schema_registry import SchemaRegistryClient
from confluent_kafka.schema_registry.avro import AvroSerializer
from confluent_kafka.serialization import MessageField, SerializationContext

from stream_validator.codec import encode_json


def avro_writer(
    client: SchemaRegistryClient, schema: dict[str, Any], topic: str
) -> Callable[[dict[str, Any]], bytes]:
    """record -> framed Avro bytes, the schema registered under ``<topic>-value`` on first
    use. Raises ValueError/TypeError/OverflowError for a record the schema cannot hold."""
    serializer = AvroSerializer(
        client, encode_json(schema).decode(), conf={"auto.register.schemas": True}
    )
    ctx = SerializationContext(topic, MessageField.VALUE)

    def write(record: dict[str, Any]) -> bytes:
        framed = serializer(record, ctx)
        if not isinstance(framed, bytes):
            raise TypeError("the serializer wrote no bytes")
        return framed

    return write
