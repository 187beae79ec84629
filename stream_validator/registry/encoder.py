"""Records written in the wire format (the simulator's and the tests' producers; the service
only decodes): Avro by confluent-kafka's ``AvroSerializer``, Protobuf framed under a
registered ``.proto`` text (``ProtobufWriter``)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from confluent_kafka.schema_registry import (
    Schema,
    SchemaRegistryClient,
    prefix_schema_id_serializer,
)
from confluent_kafka.schema_registry.avro import AvroSerializer
from confluent_kafka.schema_registry.common.serde import SchemaId
from confluent_kafka.serialization import MessageField, SerializationContext
from google.protobuf import descriptor_pb2
from google.protobuf.descriptor import Descriptor
from google.protobuf.message import Message
from google.protobuf.message_factory import GetMessageClass

from stream_validator.codec import encode_json
from stream_validator.registry.protoc import compile_proto, file_descriptor


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


class ProtobufWriter:
    """Protobuf messages framed in the wire format under a ``.proto`` schema registered as
    source text, the form every registry stores and serves (tests, demo).

    confluent-kafka's ``ProtobufSerializer`` cannot write for such a schema against Apicurio:
    with ``auto.register.schemas`` off it fetches the schema with ``format=serialized``
    (``use.latest.version``, ``use.schema.id``), which Apicurio serves as raw bytes, not
    base64, or looks its own base64 form up, which matches no ``.proto`` text. So this
    registers the text itself, compiles it with protoc (``registry.protoc``, as the service
    does) and frames each message with confluent-kafka's own ``SchemaId`` and
    ``prefix_schema_id_serializer``: magic byte 0, the id, the message indexes."""

    __slots__ = ("_schema_id", "message_class", "schema_id")

    def __init__(self, client: SchemaRegistryClient, proto: str, message: str, topic: str) -> None:
        """``message``: the full name of the type to write (e.g. ``md.Tick``). Raises
        ProtoCompileError for a text protoc refuses, SchemaRegistryError when the registry
        refuses it."""
        files = compile_proto(proto)
        descriptor = file_descriptor(files).pool.FindMessageTypeByName(message)
        self.message_class = GetMessageClass(descriptor)
        self.schema_id: int = client.register_schema(f"{topic}-value", Schema(proto, "PROTOBUF"))
        self._schema_id = SchemaId("PROTOBUF", self.schema_id, None, message_indexes(descriptor))

    def __call__(self, message: Message) -> bytes:
        framed: bytes = prefix_schema_id_serializer(
            message.SerializeToString(), None, self._schema_id
        )
        return framed


def message_indexes(descriptor: Descriptor) -> list[int]:
    """Where a message type is in its file: its index among its parent's message types,
    outermost first (the wire format's message indexes)."""
    path: list[int] = []
    current = descriptor
    while current.containing_type is not None:
        path.append(list(current.containing_type.nested_types).index(current))
        current = current.containing_type
    file = descriptor_pb2.FileDescriptorProto()
    current.file.CopyToProto(file)
    path.append([m.name for m in file.message_type].index(current.name))
    return path[::-1]
