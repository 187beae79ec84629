"""A contract from a Protobuf message type. PURE: a message descriptor in (compiled from the
registered ``.proto`` by ``registry.protoc``), a contract document and what it leaves out.

The contract describes the record the service decodes a value into
(``registry.protobuf.message_record``), so it follows that record, not Protobuf's defaults:

- a field without presence (a proto3 scalar or enum, not ``optional``) is always there, at
  its default when unset: not nullable; a field with presence (``optional``, proto2 fields,
  a message, a oneof member) is None when unset: nullable. A proto2 ``required`` field is
  not nullable.
- ``int32``/``int64``/``uint*``/``sint*``/``fixed*``/``sfixed*`` → int, ``double``/``float``
  → float, ``string`` → str, ``bool`` → bool, an enum → str with its value names allowed
  (a number the type does not know decodes as an int, which the contract then rejects).
- ``google.protobuf.Timestamp`` → datetime with a timezone, the wrappers
  (``google.protobuf.Int64Value``...) → their value's type, any other message → object,
  ``repeated`` → array (never null: an empty list).
- Left out: ``bytes``, ``map`` fields, and messages nested deeper than a contract allows
  (recursive types), each named with its path.
"""

from __future__ import annotations

from google.protobuf.descriptor import Descriptor, FieldDescriptor

from stream_validator.contracts.model import MAX_NESTING_DEPTH
from stream_validator.lifecycle.fromschema import Conversion, Doc, finish_conversion

_F = FieldDescriptor
_SCALARS = {
    **dict.fromkeys(
        (
            _F.TYPE_INT32, _F.TYPE_INT64, _F.TYPE_UINT32, _F.TYPE_UINT64, _F.TYPE_SINT32,
            _F.TYPE_SINT64, _F.TYPE_FIXED32, _F.TYPE_FIXED64, _F.TYPE_SFIXED32,
            _F.TYPE_SFIXED64,
        ),
        "int",
    ),
    _F.TYPE_DOUBLE: "float",
    _F.TYPE_FLOAT: "float",
    _F.TYPE_STRING: "str",
    _F.TYPE_BOOL: "bool",
}  # fmt: skip
_WRAPPERS = {
    f"google.protobuf.{name}Value": kind
    for name, kind in (
        ("Double", "float"), ("Float", "float"), ("Int64", "int"), ("UInt64", "int"),
        ("Int32", "int"), ("UInt32", "int"), ("Bool", "bool"), ("String", "str"),
    )
}  # fmt: skip
_TIMESTAMP = "google.protobuf.Timestamp"


class _Skip(Exception):
    """This field cannot be expressed; the message says why."""


def contract_from_protobuf(
    message: Descriptor, *, name: str, version: str, description: str
) -> Conversion:
    """The contract of the records of a Protobuf message type."""
    left_out: list[str] = []
    fields = _fields(message, "", 1, left_out)
    return finish_conversion(fields, left_out, name, version, description)


def _fields(message: Descriptor, path: str, depth: int, left_out: list[str]) -> list[Doc]:
    out: list[Doc] = []
    for field in message.fields:
        where = f"{path}.{field.name}" if path else field.name
        try:
            spec = _field(field, where, depth, left_out)
        except _Skip as skip:
            left_out.append(f"{where}: {skip}")
            continue
        out.append({"name": field.name, **spec})
    return out


def _field(field: FieldDescriptor, path: str, depth: int, left_out: list[str]) -> Doc:
    if field.is_repeated:
        kind = field.message_type
        if kind is not None and kind.GetOptions().map_entry:
            raise _Skip("a map has no contract type")
        return {"type": "array", "items": _value(field, f"{path}[]", depth + 1, left_out)}
    spec = _value(field, path, depth, left_out)
    return {**spec, "nullable": True} if field.has_presence else spec


def _value(field: FieldDescriptor, path: str, depth: int, left_out: list[str]) -> Doc:
    if depth > MAX_NESTING_DEPTH:
        raise _Skip(f"nested deeper than a contract allows ({MAX_NESTING_DEPTH})")
    kind = field.type
    if kind in _SCALARS:
        return {"type": _SCALARS[kind]}
    if kind == _F.TYPE_ENUM:
        return {"type": "str", "allowed": [value.name for value in field.enum_type.values]}
    if kind == _F.TYPE_MESSAGE:
        full_name = field.message_type.full_name
        if full_name == _TIMESTAMP:
            return {"type": "datetime", "require_timezone": True}
        if full_name in _WRAPPERS:
            return {"type": _WRAPPERS[full_name]}
        fields = _fields(field.message_type, path, depth + 1, left_out)
        if not fields:
            raise _Skip(f"message {full_name} has no field a contract can express")
        return {"type": "object", "fields": fields}
    if kind == _F.TYPE_BYTES:
        raise _Skip("bytes have no contract type")
    raise _Skip(f"Protobuf type {kind} has no contract type")  # groups (proto2)
