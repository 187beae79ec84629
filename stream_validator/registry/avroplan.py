"""An Avro writer schema compiled for the native transcoder (``_native.AvroPlan``). PURE.

The native core reads a datum and writes the JSON text the JSON route judges; that is exact
only when orjson, reading that text, gives the very values fastavro gives: ``plan_program``
admits a schema only then, and says why not otherwise (the route then decodes that schema
with fastavro, as before: decided once per schema id). Admitted: a record at the top, its
fields ``null``, ``boolean``, ``int``, ``long``, ``float``, ``double``, ``string``, enums,
records, arrays and unions of these; ``long`` with logicalType ``timestamp-millis`` or
``timestamp-micros`` (fastavro: an aware UTC datetime; here its ``isoformat()`` text) only as
a top-level field (or its union with null) that the contract declares ``datetime`` with no
skew window and no rule reads, or does not declare: there a datetime and its ISO text meet
the same checks (elsewhere a violation's text would show one as the other). Refused: bytes,
fixed, maps (a map's repeated key), every other logical type (decimal, uuid, date, time,
local timestamps) and any type with a logicalType on another base.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime
from typing import Any

from stream_validator.contracts.model import SchemaContract

#: Avro primitives by the program's tags (int and long are one varint to fastavro).
_PRIMITIVES = {
    "null": "null",
    "boolean": "boolean",
    "int": "long",
    "long": "long",
    "float": "float",
    "double": "double",
    "string": "string",
}
_TIMESTAMPS = {"timestamp-millis": "ts-millis", "timestamp-micros": "ts-micros"}


class UnsupportedSchema(ValueError):
    """A writer schema the transcoder cannot read exactly; the message says what."""


def timestamp_fields(contract: SchemaContract) -> frozenset[str]:
    """Top-level names where a timestamp may be read as its ISO text: every name but the
    contract's fields that are not plain ``datetime`` ones (any other type, a skew window)
    and the fields its rules read."""
    refused = {
        spec.name
        for spec in contract.fields
        if spec.expected_type is not datetime or spec.has_skew_window
    }
    for rule in contract.rules:
        refused.update(name.split(".", 1)[0] for name in rule.fields)
    return frozenset(refused)


def plan_program(parsed: Any, refused_timestamps: frozenset[str]) -> tuple[str, Any]:
    """The native program of a fastavro-parsed writer schema. Raises UnsupportedSchema.

    ``refused_timestamps``: top-level field names that may not hold a timestamp
    (``timestamp_fields``)."""
    named: Mapping[str, Any] = parsed.get("__named_schemas", {}) if isinstance(parsed, dict) else {}
    top = _resolve(parsed, named)
    if not isinstance(top, dict) or top.get("type") != "record":
        raise UnsupportedSchema("the writer schema is not a record")
    seen = (str(top.get("name")),)
    fields = []
    for field in _fields(top):
        name = field["name"]
        may_time = name not in refused_timestamps
        fields.append((name, _node(field["type"], named, seen, may_time, top_level=True)))
    return ("record", fields)


def _resolve(schema: Any, named: Mapping[str, Any]) -> Any:
    if isinstance(schema, str) and schema not in _PRIMITIVES:
        if schema == "bytes":
            raise UnsupportedSchema("type 'bytes' has no exact JSON form")
        if schema not in named:
            raise UnsupportedSchema(f"unknown named type {schema!r}")
        return named[schema]
    return schema


def _fields(record: dict[str, Any]) -> list[dict[str, Any]]:
    fields = record.get("fields", [])
    names = [field["name"] for field in fields]
    if len(set(names)) != len(names):
        raise UnsupportedSchema(f"record {record.get('name')!r} repeats a field name")
    return list(fields)


def _node(
    schema: Any,
    named: Mapping[str, Any],
    seen: tuple[str, ...],
    may_time: bool,
    *,
    top_level: bool = False,
) -> tuple[str, Any]:
    if isinstance(schema, str) and schema in _PRIMITIVES:
        return (_PRIMITIVES[schema], None)
    if isinstance(schema, str):
        if schema in seen:
            raise UnsupportedSchema(f"recursive type {schema!r}")
        seen = (*seen, schema)
        schema = _resolve(schema, named)
    if isinstance(schema, list):
        # A timestamp may sit in a top-level field's union (with null) too.
        return (
            "union",
            [_node(branch, named, seen, may_time, top_level=top_level) for branch in schema],
        )
    if not isinstance(schema, dict):
        raise UnsupportedSchema(f"not an Avro type: {type(schema).__name__}")
    kind = schema.get("type")
    logical = schema.get("logicalType")
    if logical is not None:
        if kind == "long" and logical in _TIMESTAMPS and top_level and may_time:
            return (_TIMESTAMPS[logical], None)
        raise UnsupportedSchema(f"logicalType {logical!r} on {kind!r} here")
    name = schema.get("name")
    if isinstance(name, str) and kind in ("record", "enum"):
        seen = (*seen, name)
    if isinstance(kind, str) and kind in _PRIMITIVES:
        return (_PRIMITIVES[kind], None)
    if kind == "enum":
        return ("enum", [str(symbol) for symbol in schema["symbols"]])
    if kind == "record":
        return (
            "record",
            [(f["name"], _node(f["type"], named, seen, False)) for f in _fields(schema)],
        )
    if kind == "array":
        return ("array", _node(schema["items"], named, seen, False))
    raise UnsupportedSchema(f"type {kind!r} has no exact JSON form")
