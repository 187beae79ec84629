"""The Confluent wire format's framing: where a value's schema id is. PURE.

A value is framed as magic byte 0, the schema id as 4 bytes big-endian, then the Avro,
Protobuf (after its message indexes) or JSON Schema bytes; or, since confluent-kafka 2.11,
the id travels in a header (``__value_schema_id``: magic byte 1 and a 16-byte GUID, or the
same 5-byte prefix) and the value is the bare encoding. The header wins, as in
confluent-kafka's ``dual_schema_id_deserializer``, which decodes them.
"""

from __future__ import annotations

import uuid
from collections.abc import Sequence

from stream_validator.registry.outcome import SchemaRef

MAGIC_ID = 0
MAGIC_GUID = 1
#: The header confluent-kafka's serializers write the value's schema id to
#: (``confluent_kafka.schema_registry._VALUE_SCHEMA_ID``).
VALUE_SCHEMA_ID_HEADER = "__value_schema_id"


class WireFormatError(ValueError):
    """A value without a readable schema id; the message says what was found."""


def value_schema_ref(value: bytes, headers: Sequence[tuple[str, bytes | None]]) -> SchemaRef:
    """The schema a value was written with, from its header or else its prefix.

    Raises WireFormatError for a value with neither (no magic byte, too short)."""
    for name, data in headers:
        if name == VALUE_SCHEMA_ID_HEADER:
            if data is None:
                raise WireFormatError(f"header {VALUE_SCHEMA_ID_HEADER} is null")
            return _framed(data, f"header {VALUE_SCHEMA_ID_HEADER}")
    return _framed(value, "payload")


def _framed(data: bytes, where: str) -> SchemaRef:
    if not data:
        raise WireFormatError(f"{where} is empty: no Schema Registry magic byte")
    magic = data[0]
    if magic == MAGIC_ID:
        if len(data) < 5:
            raise WireFormatError(f"{where} is {len(data)} bytes: too short for a schema id")
        return SchemaRef(int.from_bytes(data[1:5], "big"))
    if magic == MAGIC_GUID:
        if len(data) < 17:
            raise WireFormatError(f"{where} is {len(data)} bytes: too short for a schema GUID")
        return SchemaRef(None, str(uuid.UUID(bytes=bytes(data[1:17]))))
    raise WireFormatError(
        f"{where} does not start with the Schema Registry magic byte 0 (got 0x{magic:02x})"
    )
