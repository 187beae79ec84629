"""A contract from a Protobuf message type (compiled by protoc, no registry)."""

from __future__ import annotations

import pytest

from stream_validator.contracts.loader import contract_from_text
from stream_validator.errors import SchemaConversionError
from stream_validator.lifecycle.fromproto import contract_from_protobuf
from stream_validator.lifecycle.fromschema import render_contract
from stream_validator.registry.protoc import compile_proto, file_descriptor

PROTO = """syntax = "proto3";
package t;
import "google/protobuf/timestamp.proto";
import "google/protobuf/wrappers.proto";
enum Side { SIDE_UNSPECIFIED = 0; BUY = 1; }
message Node { Node next = 1; int32 v = 2; }
message M {
  int64 n = 1;
  optional string s = 2;
  google.protobuf.Timestamp ts = 3;
  google.protobuf.Int32Value w = 4;
  repeated double xs = 5;
  Side side = 6;
  bytes raw = 7;
  map<string, string> tags = 8;
  Node node = 9;
  repeated google.protobuf.Timestamp times = 10;
}
message Empty { bytes only = 1; }
"""


def message(name: str) -> object:
    return file_descriptor(compile_proto(PROTO)).pool.FindMessageTypeByName(name)


def test_fields_types_and_nullability_follow_the_decoded_record() -> None:
    """Scalars without presence are not nullable, optional/message fields are; Timestamp is
    an aware datetime, wrappers their value, repeated an array, enums their names."""
    conversion = contract_from_protobuf(message("t.M"), name="m", version="1", description="")
    fields = {f["name"]: f for f in conversion.document["fields"]}
    assert fields["n"] == {"name": "n", "type": "int"}
    assert fields["s"] == {"name": "s", "type": "str", "nullable": True}
    assert fields["ts"] == {
        "name": "ts", "type": "datetime", "require_timezone": True, "nullable": True,
    }  # fmt: skip
    assert fields["w"] == {"name": "w", "type": "int", "nullable": True}
    assert fields["xs"] == {"name": "xs", "type": "array", "items": {"type": "float"}}
    assert fields["side"] == {"name": "side", "type": "str", "allowed": ["SIDE_UNSPECIFIED", "BUY"]}
    assert fields["times"]["items"] == {"type": "datetime", "require_timezone": True}
    assert fields["node"]["type"] == "object" and fields["node"]["nullable"] is True
    assert "raw" not in fields and "tags" not in fields
    assert "raw: bytes have no contract type" in conversion.left_out
    assert "tags: a map has no contract type" in conversion.left_out
    assert any("nested deeper than a contract allows" in r for r in conversion.left_out)
    text = render_contract(conversion, "test")
    assert contract_from_text(text, source="<test>").name == "m"


def test_a_message_with_nothing_expressible_is_refused() -> None:
    """No field a contract can express: SchemaConversionError naming why."""
    with pytest.raises(SchemaConversionError, match="only: bytes have no contract type"):
        contract_from_protobuf(message("t.Empty"), name="e", version="1", description="")
