"""Protobuf values decoded from the schema registered for them, with no generated class.

confluent-kafka's ``ProtobufDeserializer`` needs the generated message class of the route's
type. The service has none: it builds the writer's message type from the registered schema
(``FileDescriptorProto`` in the registry's ``serialized`` form, the message indexes after the
schema id naming the message), the way that deserializer builds its writer descriptor, and
parses the bytes with it. The message then becomes a plain record (``message_record``).
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from confluent_kafka.schema_registry import SchemaRegistryClient
from confluent_kafka.schema_registry.common.serde import SchemaId
from confluent_kafka.schema_registry.protobuf import ProtobufDeserializer
from confluent_kafka.serialization import SerializationContext, SerializationError
from google.protobuf import empty_pb2
from google.protobuf.descriptor import Descriptor, FieldDescriptor
from google.protobuf.message import DecodeError, Message
from google.protobuf.message_factory import GetMessageClass

_WRAPPERS = frozenset(
    f"google.protobuf.{name}Value"
    for name in ("Double", "Float", "Int64", "UInt64", "Int32", "UInt32", "Bool", "String", "Bytes")
)


class DynamicProtobufDeserializer:
    """Decodes framed Protobuf values into messages of their registered writer type."""

    __slots__ = ("_classes", "_inner")

    def __init__(self, client: SchemaRegistryClient) -> None:
        # Its writer-schema lookup and descriptor pool are used; its message class is not.
        self._inner = ProtobufDeserializer(
            empty_pb2.Empty, {"use.deprecated.format": False}, client
        )
        self._classes: dict[tuple[Any, ...], type[Message]] = {}

    def __call__(self, data: bytes, ctx: SerializationContext) -> Message:
        inner = self._inner
        schema_id = SchemaId("PROTOBUF")
        payload = inner._schema_id_deserializer(data, ctx, schema_id)
        indexes = tuple(schema_id.message_indexes or (0,))
        key = (schema_id.id, schema_id.guid, indexes)
        cls = self._classes.get(key)
        if cls is None:
            writer = inner._get_writer_schema(schema_id, None, fmt="serialized")
            fd_proto, pool = inner._get_parsed_schema(writer)
            file = pool.FindFileByName(fd_proto.name)
            descriptor = inner._get_message_desc(pool, file, list(indexes))
            cls = self._classes[key] = GetMessageClass(descriptor)
        message = cls()
        try:
            message.ParseFromString(payload.read())
        except DecodeError as exc:
            raise SerializationError(str(exc)) from exc
        return message


def message_record(message: Message) -> dict[str, Any]:
    """A message as a record: every field of its type by name (proto3 scalars without
    presence at their default, as Protobuf reads them; a field with presence that is not
    set: None), int64 as int, enums by name, Timestamp as an aware datetime, wrappers as
    their value, nested messages as records, maps as dicts, repeated fields as lists."""
    descriptor: Descriptor = message.DESCRIPTOR
    out: dict[str, Any] = {}
    for field in descriptor.fields:
        value = getattr(message, field.name)
        if field.is_repeated:
            if _is_map(field):
                value_field = field.message_type.fields_by_name["value"]
                out[field.name] = {k: _value(value_field, v) for k, v in value.items()}
            else:
                out[field.name] = [_value(field, v) for v in value]
        elif field.has_presence and not message.HasField(field.name):
            out[field.name] = None
        else:
            out[field.name] = _value(field, value)
    return out


def _is_map(field: FieldDescriptor) -> bool:
    kind = field.message_type
    return kind is not None and kind.GetOptions().map_entry


def _value(field: FieldDescriptor, value: Any) -> Any:
    kind = field.type
    if kind == FieldDescriptor.TYPE_MESSAGE:
        name = field.message_type.full_name
        if name == "google.protobuf.Timestamp":
            return datetime.fromtimestamp(value.seconds, UTC).replace(
                microsecond=value.nanos // 1000
            )
        if name in _WRAPPERS:
            return value.value
        return message_record(value)
    if kind == FieldDescriptor.TYPE_ENUM:
        known = field.enum_type.values_by_number.get(value)
        return known.name if known is not None else value
    return value
