"""Registry-format values decoded through confluent-kafka's deserializers (mock registry)."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import pytest

from stream_validator.config.model import RouteConfig, SchemaRegistryConfig
from stream_validator.contracts import load_contract
from stream_validator.errors import ConfigError, RegistryUnavailableError
from stream_validator.records import SourceRecord
from stream_validator.registry.client import client_settings, registry_client
from stream_validator.registry.decoder import RecordDecoder, route_decoders
from stream_validator.registry.outcome import Decoded, SchemaRef, Undecodable
from tests.support.flakyregistry import FlakyRegistry
from tests.support.registryformats import TICK, serializer

FORMATS = ["avro", "protobuf", "json-schema"]


def record(topic: str, value: bytes | None, headers: Any = ()) -> SourceRecord:
    return SourceRecord(topic, 0, 7, b"k", value, list(headers), 1_000)


def framed(fmt: str, client: Any, tick: dict[str, Any] = TICK, **kw: Any) -> SourceRecord:
    value, headers = serializer(fmt, client, **kw)(f"t.{fmt}", tick)
    return record(f"t.{fmt}", value, headers)


@pytest.mark.parametrize("fmt", ["avro", "protobuf"])
@pytest.mark.parametrize("header_id", [False, True], ids=["prefix", "header"])
def test_typed_formats_decode_to_the_contract_types(fmt: str, header_id: bool) -> None:
    """Avro and Protobuf: long/int -> int, double/float -> float, string -> str, enum -> its
    name, a null union/unset optional -> None, timestamps -> aware datetimes; the schema id
    (from the prefix or the header's GUID) and its version under <topic>-value come along."""
    client = registry_client(SchemaRegistryConfig(url="mock://decode"))
    result = RecordDecoder(fmt, client).decode(framed(fmt, client, header_id=header_id))
    assert isinstance(result, Decoded)
    assert result.record == TICK
    assert {name: type(value) for name, value in result.record.items()} == {
        "symbol": str, "bid": float, "ask": float, "size": int, "level": int, "side": str,
        "venue": type(None), "ts": datetime, "recv": datetime,
    }  # fmt: skip
    assert result.record["recv"].tzinfo is not None
    assert result.schema.id == 1
    assert result.schema.version == 1
    assert (result.schema.guid is not None) == header_id


def test_json_schema_decodes_to_json_types() -> None:
    """JSON Schema values decode as JSON does (timestamps stay ISO strings)."""
    client = registry_client(SchemaRegistryConfig(url="mock://decode"))
    result = RecordDecoder("json-schema", client).decode(framed("json-schema", client))
    assert isinstance(result, Decoded)
    assert result.record["ts"] == TICK["ts"].isoformat()
    assert result.record["size"] == 300
    assert result.schema == SchemaRef(1, None, 1)


def test_a_set_optional_protobuf_field_is_its_value() -> None:
    """A proto3 optional field that is set decodes to its value, not None."""
    client = registry_client(SchemaRegistryConfig(url="mock://decode"))
    result = RecordDecoder("protobuf", client).decode(
        framed("protobuf", client, {**TICK, "venue": "XNAS", "side": "SELL"})
    )
    assert isinstance(result, Decoded)
    assert (result.record["venue"], result.record["side"]) == ("XNAS", "SELL")


@pytest.mark.parametrize("fmt", FORMATS)
def test_without_the_magic_byte_a_value_is_undecodable(fmt: str) -> None:
    """A plain JSON value on a registry route: undecodable, saying what the first byte was."""
    client = registry_client(SchemaRegistryConfig(url="mock://decode"))
    result = RecordDecoder(fmt, client).decode(record("t", b'{"symbol":"AAPL"}'))
    assert result == Undecodable(
        "not in the Schema Registry wire format: payload does not start with the Schema"
        " Registry magic byte 0 (got 0x7b)",
        None,
    )


@pytest.mark.parametrize("fmt", ["avro", "json-schema"])
def test_an_id_the_registry_does_not_know_is_undecodable_with_the_id(fmt: str) -> None:
    """The registry answers 404 for the id: undecodable, naming the id (never a wait)."""
    client = registry_client(SchemaRegistryConfig(url="mock://decode"))
    result = RecordDecoder(fmt, client).decode(record("t", b"\x00\x00\x00\x00\x63payload"))
    assert isinstance(result, Undecodable)
    assert result.schema == SchemaRef(99)
    assert result.reason.startswith("schema id 99 is not in the registry")


@pytest.mark.parametrize("fmt", FORMATS)
def test_bytes_that_do_not_fit_the_schema_are_undecodable_with_the_id(fmt: str) -> None:
    """Corrupt bytes after a valid schema id: undecodable, the id and the format named."""
    client = registry_client(SchemaRegistryConfig(url="mock://decode"))
    good = framed(fmt, client)
    assert good.value is not None
    bad = good._replace(value=good.value[:-4] + b"\xff\xff\xff\xff")
    result = RecordDecoder(fmt, client).decode(bad)
    assert isinstance(result, Undecodable)
    assert result.schema is not None and result.schema.id == 1
    assert f"payload does not decode as {fmt} under schema id 1" in result.reason


def test_a_tombstone_is_left_to_the_contract_checks() -> None:
    """A null value decodes to None (judged as with JSON: a tombstone)."""
    client = registry_client(SchemaRegistryConfig(url="mock://decode"))
    assert RecordDecoder("avro", client).decode(record("t", None)) is None


@pytest.mark.parametrize("mode", ["down", "500"])
@pytest.mark.parametrize("fmt", FORMATS)
def test_a_registry_that_cannot_answer_raises_never_undecodable(fmt: str, mode: str) -> None:
    """A refused connection or a 5xx: RegistryUnavailableError (the batch waits), not a
    verdict on the record; once it answers, the same value decodes."""
    client = FlakyRegistry()
    good = framed(fmt, client)
    client.fail, client.mode = 1, mode
    decoder = RecordDecoder(fmt, client)
    with pytest.raises(RegistryUnavailableError, match="cannot answer"):
        decoder.decode(good)
    assert isinstance(decoder.decode(good), Decoded)


def test_an_unreachable_registry_url_raises_within_the_timeout() -> None:
    """A real HTTP client against a closed port: RegistryUnavailableError, not undecodable."""
    client = registry_client(SchemaRegistryConfig(url="http://127.0.0.1:9", timeout_s=2.0))
    with pytest.raises(RegistryUnavailableError):
        RecordDecoder("avro", client).decode(record("t", b"\x00\x00\x00\x00\x01\x02"))


def test_client_settings_carry_auth_and_tls_and_no_client_retries() -> None:
    """Basic auth, TLS files and the timeout reach the client; it never retries itself."""
    settings = client_settings(
        SchemaRegistryConfig(
            url="https://sr:8081",
            basic_auth_user="u",
            basic_auth_password="p@ss",
            ssl_ca_location="/ca.pem",
            timeout_s=3.0,
        )
    )
    assert settings == {
        "url": "https://sr:8081",
        "timeout": 3.0,
        "max.retries": 0,
        "basic.auth.user.info": "u:p@ss",
        "ssl.ca.location": "/ca.pem",
    }
    bearer = client_settings(SchemaRegistryConfig(url="https://sr", bearer_token="t0ken"))
    assert bearer["bearer.auth.credentials.source"] == "STATIC_TOKEN"
    assert bearer["bearer.auth.token"] == "t0ken"
    registry_client(SchemaRegistryConfig(url="https://sr", bearer_token="t0ken"))  # accepted


def test_route_decoders_only_for_registry_routes(tmp_path: Any) -> None:
    """JSON routes get no decoder; a bad registry URL is a ConfigError."""
    path = tmp_path / "c.yaml"
    path.write_text("name: c\nversion: '1'\nfields:\n  - {name: a, type: int}\n")
    contract = load_contract(path)

    def route(name: str, fmt: Any) -> RouteConfig:
        return RouteConfig(name, str(path), contract, "c", "d", ("s",), format=fmt)

    routes = [route("j", "json"), route("a", "avro")]
    assert route_decoders([routes[0]], SchemaRegistryConfig()) == {}
    decoders = route_decoders(routes, SchemaRegistryConfig(url="mock://x"))
    assert list(decoders) == ["a"] and decoders["a"].format == "avro"
    with pytest.raises(ConfigError, match="schema_registry"):
        route_decoders(routes, SchemaRegistryConfig(url="ftp://x"))


def test_timestamps_are_utc() -> None:
    """A timestamp-millis decodes to the instant written (UTC)."""
    client = registry_client(SchemaRegistryConfig(url="mock://decode"))
    result = RecordDecoder("avro", client).decode(framed("avro", client))
    assert isinstance(result, Decoded)
    assert result.record["ts"] == datetime(2026, 12, 3, 12, 0, 0, 123000, tzinfo=UTC)


@pytest.mark.parametrize("header_id", [False, True], ids=["prefix", "header"])
def test_the_avro_writer_reader_equals_confluents_deserializer(header_id: bool) -> None:
    """AvroWriterDeserializer gives what AvroDeserializer gives on the same values (every
    field type of the tick, nulls and not), and fails where it fails."""
    from confluent_kafka.schema_registry.avro import AvroDeserializer
    from confluent_kafka.serialization import MessageField, SerializationContext

    from stream_validator.registry.decoder import AvroWriterDeserializer

    client = registry_client(SchemaRegistryConfig(url="mock://diff"))
    ours, theirs = AvroWriterDeserializer(client), AvroDeserializer(client)
    write = serializer("avro", client, header_id=header_id)
    for tick in (TICK, {**TICK, "venue": "XNAS", "side": "SELL", "size": 2**40, "bid": -0.0}):
        value, headers = write("t", tick)
        ctx = SerializationContext("t", MessageField.VALUE, headers)
        assert ours(value, ctx) == theirs(value, ctx) == tick
    value, headers = write("t", TICK)
    for broken in (value[:-3], value[:5]):
        ctx = SerializationContext("t", MessageField.VALUE, headers)
        with pytest.raises(Exception) as mine:
            ours(broken, ctx)
        with pytest.raises(Exception) as reference:
            theirs(broken, ctx)
        assert type(mine.value) is type(reference.value)


@pytest.mark.parametrize(
    ("status", "waits"), [(404, False), (422, False), (401, True), (429, True), (503, True)]
)
def test_a_4xx_verdict_is_undecodable_and_the_rest_waits(status: int, waits: bool) -> None:
    """404/422: the registry's answer on the id (undecodable); 401/429/5xx: it could not or
    would not answer now (RegistryUnavailableError: the batch waits)."""
    from confluent_kafka.schema_registry import SchemaRegistryError

    class Refusing(FlakyRegistry):
        def get_schema(self, *args: Any, **kwargs: Any) -> Any:
            raise SchemaRegistryError(status, status * 100, "refused")

    decoder = RecordDecoder("avro", Refusing())
    value = record("t", b"\x00\x00\x00\x00\x05payload")
    if waits:
        with pytest.raises(RegistryUnavailableError, match=f"HTTP {status}"):
            decoder.decode(value)
    else:
        result = decoder.decode(value)
        assert isinstance(result, Undecodable) and result.schema == SchemaRef(5)
