"""Protobuf values decoded from the schema registered for them, with no generated class.

confluent-kafka's ``ProtobufDeserializer`` needs the generated message class of the route's
type. The service has none: it builds the writer's message type from the registered schema,
the message indexes after the schema id naming the message, and parses the bytes with it.
The schema is fetched as the registry stores it: ``.proto`` source text (Apicurio, and
Confluent's registry by default) is compiled by protoc (``protoc``), the base64
``FileDescriptorProto`` confluent-kafka's Python serializer registers is read as it is. Each
schema is built once per id; one that does not compile makes its values ``undecodable``
(the reason says why), also once per id. The message then becomes a plain record
(``message_record``).
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from confluent_kafka.schema_registry import Schema, SchemaRegistryClient
from confluent_kafka.schema_registry.common.serde import SchemaId
from confluent_kafka.schema_registry.protobuf import ProtobufDeserializer
from confluent_kafka.serialization import SerializationContext, SerializationError
from google.protobuf import empty_pb2
from google.protobuf.descriptor import Descriptor, FieldDescriptor, FileDescriptor
from google.protobuf.message import DecodeError, Message
from google.protobuf.message_factory import GetMessageClass

from stream_validator.registry.protoc import (
    WELL_KNOWN_PREFIX,
    ProtoCompileError,
    compile_proto,
    file_descriptor,
    serialized_file,
)

_WRAPPERS = frozenset(
    f"google.protobuf.{name}Value"
    for name in ("Double", "Float", "Int64", "UInt64", "Int32", "UInt32", "Bool", "String", "Bytes")
)


class DynamicProtobufDeserializer:
    """Decodes framed Protobuf values into messages of their registered writer type."""

    __slots__ = ("_classes", "_client", "_files", "_inner")

    def __init__(self, client: SchemaRegistryClient) -> None:
        # Its schema-id reader, writer-schema lookup and serialized-form parser are used;
        # its message class is not.
        self._inner = ProtobufDeserializer(
            empty_pb2.Empty, {"use.deprecated.format": False}, client
        )
        self._client = client
        self._classes: dict[tuple[Any, ...], type[Message]] = {}
        #: Per schema (id, guid): its main file, or why it cannot be built.
        self._files: dict[tuple[Any, ...], FileDescriptor | ProtoCompileError] = {}

    def __call__(self, data: bytes, ctx: SerializationContext) -> Message:
        inner = self._inner
        schema_id = SchemaId("PROTOBUF")
        payload = inner._schema_id_deserializer(data, ctx, schema_id)
        indexes = tuple(schema_id.message_indexes or (0,))
        key = (schema_id.id, schema_id.guid, indexes)
        cls = self._classes.get(key)
        if cls is None:
            file = self._file(schema_id)
            descriptor = inner._get_message_desc(file.pool, file, list(indexes))
            cls = self._classes[key] = GetMessageClass(descriptor)
        message = cls()
        try:
            message.ParseFromString(payload.read())
        except DecodeError as exc:
            raise SerializationError(str(exc)) from exc
        return message

    def _file(self, schema_id: SchemaId) -> FileDescriptor:
        """The writer schema's file, built once per schema. Raises ProtoCompileError (also
        for a schema that failed before) and the registry client's errors (not kept: the
        registry may answer next time)."""
        key = (schema_id.id, schema_id.guid)
        known = self._files.get(key)
        if isinstance(known, ProtoCompileError):
            raise ProtoCompileError(str(known))
        if known is not None:
            return known
        # fmt None: the schema as stored (Apicurio answers format=serialized with a 500
        # for a base64 schema and with lossy raw bytes for a .proto one).
        writer = self._inner._get_writer_schema(schema_id, None, fmt=None)
        try:
            file = self.schema_file(writer)
        except ProtoCompileError as exc:
            self._files[key] = exc
            raise
        self._files[key] = file
        return file

    def schema_file(self, writer: Schema) -> FileDescriptor:
        """A registered Protobuf schema's file, in a pool with its imports: compiled from
        ``.proto`` text, or read from the base64 form. Raises ProtoCompileError, and the
        registry client's errors while its references are fetched."""
        text = writer.schema_str or ""
        serialized = serialized_file(text)
        if serialized is not None:
            try:
                fd_proto, pool = self._inner._get_parsed_schema(writer)
                file: FileDescriptor = pool.FindFileByName(fd_proto.name)
            except (TypeError, KeyError, ValueError) as exc:  # e.g. a missing dependency
                raise ProtoCompileError(f"the serialized schema does not load: {exc}") from exc
            return file
        imports: dict[str, str] = {}
        self._collect_imports(writer, imports, depth=0)
        return file_descriptor(compile_proto(text, imports))

    def _collect_imports(self, schema: Schema, out: dict[str, str], depth: int) -> None:
        """The ``.proto`` text of every file ``schema`` references, by its import name
        (well-known types come with protoc)."""
        if depth > 32:
            raise ProtoCompileError("schema references nest more than 32 levels deep")
        for ref in schema.references or ():
            name, subject, version = ref.name, ref.subject, ref.version
            if name is None or subject is None or version is None:
                raise ProtoCompileError("a schema reference lacks its name, subject or version")
            if name in out or name.startswith(WELL_KNOWN_PREFIX):
                continue
            registered = self._client.get_version(subject, version)
            text = registered.schema.schema_str or ""
            if serialized_file(text) is not None:
                raise ProtoCompileError(
                    f"reference {name!r} is stored in the serialized form,"
                    " which a .proto schema cannot import"
                )
            out[name] = text
            self._collect_imports(registered.schema, out, depth + 1)


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
