"""Protobuf schemas registered as ``.proto`` source text, compiled by protoc (mock registry)."""

from __future__ import annotations

import base64
from typing import Any

import pytest
from confluent_kafka.schema_registry import Schema, SchemaReference
from google.protobuf.message_factory import GetMessageClass

from stream_validator.config.model import SchemaRegistryConfig
from stream_validator.errors import RegistryUnavailableError
from stream_validator.records import SourceRecord
from stream_validator.registry import protobuf
from stream_validator.registry.client import registry_client
from stream_validator.registry.decoder import RecordDecoder
from stream_validator.registry.encoder import message_indexes
from stream_validator.registry.outcome import Decoded, SchemaRef, Undecodable
from stream_validator.registry.protoc import (
    ProtoCompileError,
    compile_proto,
    file_descriptor,
    serialized_file,
)
from tests.support.registryformats import PROTO_TICK, TICK, serializer

COMMON = """syntax = "proto3";
package common;
message Venue { string mic = 1; }
"""

WITH_IMPORT = """syntax = "proto3";
package md;
import "common.proto";
import "google/protobuf/wrappers.proto";
message Quote {
  message Leg { int32 qty = 1; }
  common.Venue venue = 1;
  google.protobuf.DoubleValue mid = 2;
  Leg leg = 3;
}
"""


def record(topic: str, value: bytes) -> SourceRecord:
    return SourceRecord(topic, 0, 7, b"k", value, [], 1_000)


def client(name: str) -> Any:
    return registry_client(SchemaRegistryConfig(url=f"mock://{name}"))


def test_a_proto_text_schema_decodes_like_the_serialized_one() -> None:
    """A tick under a .proto text schema decodes to the same record as under the base64
    FileDescriptorProto one, with its schema id and version."""
    registry = client("text")
    value, _ = serializer("protobuf-text", registry)("t.text", TICK)
    assert registry.get_schema(1).schema_str == PROTO_TICK  # the text, as Apicurio keeps it
    result = RecordDecoder("protobuf", registry).decode(record("t.text", value))
    assert result == Decoded(TICK, SchemaRef(1, None, 1))


def test_imports_of_registered_files_and_well_known_types_compile() -> None:
    """A schema importing a file registered under another subject (a reference) and a
    well-known type decodes; a nested message is named by its message indexes."""
    registry = client("refs")
    registry.register_schema("common", Schema(COMMON, "PROTOBUF"))
    main = Schema(WITH_IMPORT, "PROTOBUF", [SchemaReference("common.proto", "common", 1)])
    schema_id = registry.register_schema("q-value", main)
    imported = {"common.proto": COMMON}
    pool = file_descriptor(compile_proto(WITH_IMPORT, imported)).pool
    leg_type = pool.FindMessageTypeByName("md.Quote.Leg")
    assert message_indexes(leg_type) == [0, 0]
    quote_cls = GetMessageClass(pool.FindMessageTypeByName("md.Quote"))
    quote = quote_cls()
    quote.venue.mic = "XNAS"
    quote.mid.value = 1.5
    quote.leg.qty = 3
    value = b"\x00" + schema_id.to_bytes(4, "big") + b"\x00" + quote.SerializeToString()
    result = RecordDecoder("protobuf", registry).decode(record("q", value))
    assert isinstance(result, Decoded)
    assert result.record == {"venue": {"mic": "XNAS"}, "mid": 1.5, "leg": {"qty": 3}}
    leg_value = b"\x00" + schema_id.to_bytes(4, "big") + b"\x04\x00\x00\x08\x05"  # [0, 0]
    leg = RecordDecoder("protobuf", registry).decode(record("q", leg_value))
    assert isinstance(leg, Decoded)
    assert leg.record == {"qty": 5}


def test_a_schema_that_does_not_compile_makes_its_values_undecodable_once() -> None:
    """protoc's message and the schema id are the reason; protoc runs once for the id."""
    registry = client("bad")
    schema_id = registry.register_schema(
        "b-value", Schema('syntax = "proto3";\nmessage X { strin a = 1; }\n', "PROTOBUF")
    )
    calls: list[str] = []
    original = protobuf.compile_proto

    def counting(text: str, imports: Any = None) -> Any:
        calls.append(text)
        return original(text, imports)

    decoder = RecordDecoder("protobuf", registry)
    value = b"\x00" + schema_id.to_bytes(4, "big") + b"\x00"
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(protobuf, "compile_proto", counting)
        first = decoder.decode(record("b", value))
        second = decoder.decode(record("b", value))
    assert first == second
    assert isinstance(first, Undecodable)
    assert first.schema == SchemaRef(schema_id)
    assert first.reason.startswith(
        f"payload does not decode as protobuf under schema id {schema_id}: ProtoCompileError:"
        " the registered .proto does not compile: registered.proto:2:13: "
    )
    assert '"strin" is not defined' in first.reason
    assert len(calls) == 1


def test_a_protoc_that_times_out_is_retried_not_undecodable() -> None:
    """protoc not finishing is the machine's fault: the batch waits (registry unavailable),
    nothing is remembered, and the next try decodes."""
    registry = client("slow")
    value, _ = serializer("protobuf-text", registry)("t.slow", TICK)
    decoder = RecordDecoder("protobuf", registry)
    original = protobuf.compile_proto
    calls: list[int] = []

    def slow_once(text: str, imports: Any = None) -> Any:
        calls.append(1)
        if len(calls) == 1:
            raise TimeoutError("protoc did not finish in 60 s")
        return original(text, imports)

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(protobuf, "compile_proto", slow_once)
        with pytest.raises(RegistryUnavailableError, match="TimeoutError"):
            decoder.decode(record("t.slow", value))
        assert isinstance(decoder.decode(record("t.slow", value)), Decoded)
    assert len(calls) == 2


def test_compile_refuses_an_import_name_outside_its_directory() -> None:
    """A reference name cannot make protoc's input land outside its temporary directory."""
    with pytest.raises(ProtoCompileError, match="leaves its directory"):
        compile_proto(PROTO_TICK, {"../../etc/x.proto": COMMON})


def test_only_base64_descriptors_count_as_the_serialized_form() -> None:
    """.proto text is never taken for the base64 form; a base64 FileDescriptorProto is."""
    assert serialized_file(PROTO_TICK) is None
    assert serialized_file("") is None
    compiled = compile_proto(COMMON).file[-1]
    encoded = base64.b64encode(compiled.SerializeToString()).decode()
    assert serialized_file(encoded) == compiled
