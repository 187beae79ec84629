"""The wire format's framing: the schema id from the 5-byte prefix or the header."""

from __future__ import annotations

import uuid

import pytest

from stream_validator.registry.outcome import SchemaRef
from stream_validator.registry.wire import VALUE_SCHEMA_ID_HEADER, WireFormatError, value_schema_ref


def test_the_prefix_gives_a_big_endian_id() -> None:
    """Magic byte 0 then 4 bytes big-endian: the schema id."""
    assert value_schema_ref(b"\x00\x00\x01\x00\x02rest", []) == SchemaRef(65538)


def test_the_header_wins_over_the_payload() -> None:
    """A __value_schema_id header (magic 1 + GUID) names the schema; the value is bare."""
    guid = uuid.uuid4()
    headers = [("other", b"x"), (VALUE_SCHEMA_ID_HEADER, b"\x01" + guid.bytes)]
    assert value_schema_ref(b'{"a":1}', headers) == SchemaRef(None, str(guid))


@pytest.mark.parametrize(
    ("value", "headers", "needle"),
    [
        (b'{"a":1}', [], "magic byte 0 (got 0x7b)"),
        (b"", [], "empty"),
        (b"\x00\x00\x01", [], "too short for a schema id"),
        (b"\x01abc", [], "too short for a schema GUID"),
        (b"\x00\x00\x00\x00\x01", [(VALUE_SCHEMA_ID_HEADER, None)], "is null"),
    ],
)
def test_a_value_without_a_schema_id_is_refused_with_the_reason(
    value: bytes, headers: list[tuple[str, bytes | None]], needle: str
) -> None:
    """No magic byte, too short, a null header: WireFormatError saying which."""
    with pytest.raises(WireFormatError, match=needle.replace("(", r"\(").replace(")", r"\)")):
        value_schema_ref(value, headers)
