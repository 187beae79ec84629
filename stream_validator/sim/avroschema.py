"""An Avro schema for a contract's records, and a simulated record in its Avro form. PURE.

For ``simulate --format avro``: the simulator's records (JSON-shaped) are written as Avro by
a producer that has a schema, as a vendor's would. Every field is optional in the schema
(a union with null, default null), so a drifted record (a renamed field, a null spike) is
still written and the contract, not the writer, judges it; a value of the wrong type cannot be
written at all (the producer then sends the raw bytes: see ``sim.framing``).
"""

from __future__ import annotations

import re
from datetime import datetime
from typing import Any

from stream_validator.contracts.model import SchemaContract

_AVRO_TYPES: dict[type, Any] = {
    str: "string",
    int: "long",
    float: "double",
    bool: "boolean",
    datetime: {"type": "long", "logicalType": "timestamp-micros"},
}


def avro_schema(contract: SchemaContract) -> dict[str, Any]:
    """The record schema of ``contract``'s top-level flat fields (nested fields have none)."""
    fields = [
        {"name": spec.name, "type": ["null", _AVRO_TYPES[spec.expected_type]], "default": None}
        for spec in contract.fields
        if spec.expected_type in _AVRO_TYPES and re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", spec.name)
    ]
    name = re.sub(r"[^A-Za-z0-9_]", "_", contract.name) or "record"
    return {"type": "record", "name": name, "namespace": "stream_validator.sim", "fields": fields}


def avro_record(contract: SchemaContract, record: object) -> dict[str, Any] | None:
    """``record`` with its datetime fields as datetimes (ISO 8601 text parsed); None when it is
    not a mapping or a datetime field does not parse (it cannot be written as Avro)."""
    if not isinstance(record, dict):
        return None
    out = dict(record)
    for spec in contract.fields:
        if spec.expected_type is datetime and isinstance(out.get(spec.name), str):
            try:
                out[spec.name] = datetime.fromisoformat(out[spec.name])
            except ValueError:
                return None
    return out
