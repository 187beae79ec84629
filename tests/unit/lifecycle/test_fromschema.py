"""lifecycle.fromschema: registered Avro / JSON schemas become contract documents (pure)."""

from __future__ import annotations

from typing import Any

import pytest

from stream_validator.contracts.loader import contract_from_text
from stream_validator.errors import SchemaConversionError
from stream_validator.lifecycle.fromschema import (
    Conversion,
    contract_from_avro,
    contract_from_json_schema,
    render_contract,
)

_META = {"name": "t", "version": "3", "description": "d"}


def _avro(*fields: dict[str, Any], **extra: Any) -> Conversion:
    return contract_from_avro(
        {"type": "record", "name": "R", "fields": list(fields), **extra}, **_META
    )


def _json(
    properties: dict[str, Any], required: list[str] | None = None, **extra: Any
) -> Conversion:
    schema = {"type": "object", "properties": properties, **extra}
    schema["required"] = list(properties) if required is None else required
    return contract_from_json_schema(schema, **_META)


def _fields(conversion: Conversion) -> dict[str, dict[str, Any]]:
    return {
        f["name"]: {k: v for k, v in f.items() if k != "name"}
        for f in conversion.document["fields"]
    }


def _loads(conversion: Conversion) -> None:
    contract_from_text(render_contract(conversion, "header"))


def test_avro_primitives_map_to_contract_types() -> None:
    """int/long → int, float/double → float, string → str, boolean → bool."""
    conversion = _avro(
        *(
            {"name": n, "type": t}
            for n, t in [
                ("i", "int"),
                ("l", "long"),
                ("f", "float"),
                ("d", "double"),
                ("s", "string"),
                ("b", "boolean"),
            ]
        )
    )
    assert _fields(conversion) == {
        "i": {"type": "int"},
        "l": {"type": "int"},
        "f": {"type": "float"},
        "d": {"type": "float"},
        "s": {"type": "str"},
        "b": {"type": "bool"},
    }
    assert conversion.left_out == ()
    _loads(conversion)


def test_avro_timestamps_become_datetimes_aware_unless_local() -> None:
    """timestamp-millis/-micros → datetime with a timezone; local-timestamp-* → datetime."""
    conversion = _avro(
        {"name": "a", "type": {"type": "long", "logicalType": "timestamp-millis"}},
        {"name": "b", "type": {"type": "long", "logicalType": "timestamp-micros"}},
        {"name": "c", "type": {"type": "long", "logicalType": "local-timestamp-millis"}},
    )
    assert _fields(conversion) == {
        "a": {"type": "datetime", "require_timezone": True},
        "b": {"type": "datetime", "require_timezone": True},
        "c": {"type": "datetime", "require_timezone": False},
    }
    _loads(conversion)


def test_avro_union_with_null_is_nullable_and_enum_is_allowed_symbols() -> None:
    """["null", T] → T nullable; an enum → str allowed its symbols, also when named again."""
    conversion = _avro(
        {"name": "side", "type": {"type": "enum", "name": "Side", "symbols": ["BUY", "SELL"]}},
        {"name": "prev", "type": ["null", "Side"]},
        {"name": "px", "type": ["double", "null"]},
    )
    fields = _fields(conversion)
    assert fields["side"] == {"type": "str", "allowed": ["BUY", "SELL"]}
    assert fields["prev"] == {"type": "str", "allowed": ["BUY", "SELL"], "nullable": True}
    assert fields["px"] == {"type": "float", "nullable": True}
    _loads(conversion)


def test_avro_nested_records_and_arrays_become_objects_and_arrays() -> None:
    """A record field is an object with its fields, an array an array of its items, and a
    record named once can be referred to again, namespace-qualified or not."""
    level = {"type": "record", "name": "Level", "fields": [{"name": "px", "type": "double"}]}
    conversion = _avro(
        {"name": "top", "type": level},
        {"name": "bids", "type": {"type": "array", "items": "Level"}},
        {"name": "asks", "type": {"type": "array", "items": "ns.Level"}},
        namespace="ns",
    )
    fields = _fields(conversion)
    inner = {"type": "object", "fields": [{"name": "px", "type": "float"}]}
    assert fields["top"] == inner
    assert fields["bids"] == {"type": "array", "items": inner}
    assert fields["asks"] == {"type": "array", "items": inner}
    _loads(conversion)


def test_avro_parts_without_a_contract_type_are_left_out_with_their_path() -> None:
    """bytes, fixed, map, decimal, date and a union of two types are named, the rest kept."""
    conversion = _avro(
        {"name": "ok", "type": "string"},
        {"name": "raw", "type": "bytes"},
        {"name": "tags", "type": {"type": "map", "values": "string"}},
        {"name": "amount", "type": {"type": "bytes", "logicalType": "decimal", "precision": 9}},
        {"name": "day", "type": {"type": "int", "logicalType": "date"}},
        {"name": "either", "type": ["null", "string", "long"]},
        {
            "name": "nest",
            "type": {
                "type": "record",
                "name": "N",
                "fields": [{"name": "good", "type": "int"}, {"name": "bad", "type": "bytes"}],
            },
        },
    )
    assert list(_fields(conversion)) == ["ok", "nest"]
    reasons = "\n".join(conversion.left_out)
    for path in ("raw:", "tags:", "amount:", "day:", "either:", "nest.bad:"):
        assert path in reasons
    _loads(conversion)


def test_avro_non_record_and_empty_conversions_are_errors() -> None:
    """A schema that is not a record, or a record of nothing expressible, cannot be a contract."""
    with pytest.raises(SchemaConversionError, match="not a record"):
        contract_from_avro("string", **_META)
    with pytest.raises(SchemaConversionError, match="no field"):
        _avro({"name": "raw", "type": "bytes"})


def test_json_types_nullability_formats_and_enums() -> None:
    """string/integer/number/boolean, ["T", "null"], date-time and string enums map over."""
    conversion = _json(
        {
            "s": {"type": "string", "enum": ["a", "b", "a"]},
            "i": {"type": "integer", "minimum": 0, "maximum": 9},
            "n": {"type": ["number", "null"]},
            "b": {"type": "boolean"},
            "t": {"type": "string", "format": "date-time"},
            "l": {"type": "string", "minLength": 1, "maxLength": 8},
        }
    )
    assert _fields(conversion) == {
        "s": {"type": "str", "allowed": ["a", "b"]},
        "i": {"type": "int", "min_value": 0, "max_value": 9},
        "n": {"type": "float", "nullable": True},
        "b": {"type": "bool"},
        "t": {"type": "datetime", "require_timezone": True},
        "l": {"type": "str", "min_length": 1, "max_length": 8},
    }
    _loads(conversion)


def test_json_optional_properties_and_combinators_are_left_out() -> None:
    """A property not required (may be absent) and oneOf are listed, never guessed."""
    conversion = _json(
        {"a": {"type": "string"}, "b": {"type": "string"}, "c": {"oneOf": [{"type": "string"}]}},
        required=["a", "c"],
    )
    assert list(_fields(conversion)) == ["a"]
    assert any(r.startswith("b: not required") for r in conversion.left_out)
    assert any(r.startswith("c: oneOf") for r in conversion.left_out)


def test_json_local_refs_nested_objects_and_arrays() -> None:
    """$ref into $defs is followed; objects nest, arrays carry their items."""
    conversion = _json(
        {
            "top": {"$ref": "#/$defs/level"},
            "bids": {"type": "array", "items": {"$ref": "#/$defs/level"}},
        },
        **{
            "$defs": {
                "level": {
                    "type": "object",
                    "properties": {"px": {"type": "number"}},
                    "required": ["px"],
                }
            }
        },
    )
    inner = {"type": "object", "fields": [{"name": "px", "type": "float"}]}
    assert _fields(conversion) == {"top": inner, "bids": {"type": "array", "items": inner}}
    _loads(conversion)


def test_json_top_level_must_be_an_object_with_properties() -> None:
    """A JSON Schema of a string (or without properties) cannot be a contract."""
    with pytest.raises(SchemaConversionError, match="not an object with properties"):
        contract_from_json_schema({"type": "string"}, **_META)


def test_rendered_contract_survives_hostile_names() -> None:
    """Property names with quotes, colons and newlines stay data: the file loads and the
    left-out comment lines stay comments."""
    conversion = _json(
        {"a: b": {"type": "string"}, "x\ny": {"type": "null"}, '"q"': {"type": "integer"}}
    )
    text = render_contract(conversion, "line one\nline two")
    contract = contract_from_text(text)
    assert [f.name for f in contract.fields] == ["a: b", '"q"']
    assert all(line.startswith("#") for line in text.splitlines()[-2:])
    assert contract.max_allowed_null_pct == 100.0 and contract.version == "3"
