"""One route's values decoded through confluent-kafka's deserializers, into plain records.

``RecordDecoder.decode_batch`` gives a ``Decoded`` record (or, for an Avro route read by the
native core, ``avronative``, a ``Transcoded`` JSON text) or an ``Undecodable`` reason per
value, and raises ``RegistryUnavailableError`` when the registry cannot answer (down, slow,
a 5xx, refused credentials): a good record must never reach the DLQ because the registry was
away, so the caller retries the whole batch. A registry that answers 404 for a schema id is
an answer (the id does not exist): that value is undecodable.

The writer schema is the one the value names (its prefix or header, ``wire``); its version is
the one the registry lists under the value's subject (``<topic>-value``), else the first it
lists, both cached per id.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import httpx2
from confluent_kafka.schema_registry import SchemaRegistryClient, SchemaRegistryError
from confluent_kafka.schema_registry.avro import AvroDeserializer
from confluent_kafka.schema_registry.common.avro import AVRO_TYPE
from confluent_kafka.schema_registry.common.serde import SchemaId
from confluent_kafka.schema_registry.json_schema import JSONDeserializer
from confluent_kafka.serialization import MessageField, SerializationContext, SerializationError
from fastavro import schemaless_reader

from stream_validator.config.model import RecordFormat, RouteConfig, SchemaRegistryConfig
from stream_validator.contracts.model import SchemaContract
from stream_validator.errors import ConfigError, RegistryUnavailableError
from stream_validator.records import SourceRecord
from stream_validator.registry.avronative import NativeAvro
from stream_validator.registry.client import registry_client
from stream_validator.registry.outcome import Decoded, DecodeResult, SchemaRef, Undecodable
from stream_validator.registry.protobuf import DynamicProtobufDeserializer, message_record
from stream_validator.registry.wire import WireFormatError, value_schema_ref

#: Texts of a decode error quoted in a DLQ reason are cut here (they may quote bytes).
_MAX_REASON = 300


def _no_subject(*_: object) -> None:
    """The subject name strategy of the service's deserializers: none. Each value is read
    with the writer schema it names; with no subject, confluent-kafka looks up no reader
    schema and runs no data-contract rules (migrations, field encryption, CEL), which cost
    about as much per record as the decode itself: the contract is the service's check."""
    return None


_READ_WRITER_SCHEMA = {"subject.name.strategy": _no_subject}


class AvroWriterDeserializer:
    """confluent-kafka's ``AvroDeserializer`` reading each value with its writer schema and no
    subject (``_READ_WRITER_SCHEMA``), minus what only its rules use: the same schema id
    (``SchemaId``, header or prefix), the same writer-schema lookup and parse, the same
    ``fastavro.schemaless_reader`` call, the parsed schema kept per id. Its
    ``__call__`` also expands the reader schema for every value, for data-contract rules that
    never run without a subject: half its time per record. tests/unit/registry proves the two
    equal on the same values."""

    __slots__ = ("_inner", "_parsed")

    def parsed(self, schema_id: int) -> Any:
        """The parsed writer schema of ``schema_id`` once a value named it (else None)."""
        return self._parsed.get((schema_id, None))

    def __init__(self, client: SchemaRegistryClient) -> None:
        self._inner = AvroDeserializer(client, conf=_READ_WRITER_SCHEMA)
        self._parsed: dict[tuple[int | None, Any], Any] = {}

    def __call__(self, data: bytes, ctx: SerializationContext) -> Any:
        if len(data) <= 5:  # AvroDeserializer's own first check
            raise SerializationError(
                f"Expecting data framing of length 6 bytes or more but total data size is"
                f" {len(data)} bytes"
            )
        inner = self._inner
        schema_id = SchemaId(AVRO_TYPE)
        payload = inner._schema_id_deserializer(data, ctx, schema_id)
        key = (schema_id.id, schema_id.guid)
        writer = self._parsed.get(key)
        if writer is None:
            raw = inner._get_writer_schema(schema_id, None)
            writer = self._parsed[key] = inner._get_parsed_schema(raw)
        if writer == "bytes" or (isinstance(writer, dict) and writer.get("type") == "bytes"):
            return payload.read()
        return schemaless_reader(payload, writer, None, False)  # reader = writer: no resolution


def _deserializer(
    fmt: RecordFormat, client: SchemaRegistryClient
) -> Callable[[bytes, SerializationContext], Any]:
    if fmt == "avro":
        # Logical types decoded by fastavro: timestamp-* -> datetime, decimal -> Decimal.
        return AvroWriterDeserializer(client)
    if fmt == "json-schema":
        return JSONDeserializer(  # type: ignore[no-any-return]
            None, schema_registry_client=client, conf=_READ_WRITER_SCHEMA
        )
    if fmt == "protobuf":
        dynamic = DynamicProtobufDeserializer(client)
        return lambda data, ctx: message_record(dynamic(data, ctx))
    raise ValueError(f"not a registry format: {fmt!r}")


class RecordDecoder:
    """Decodes the values of one route (``fmt``: avro, protobuf or json-schema).

    ``native``: an Avro route's values read by the native core where it can
    (``avronative``: ``Transcoded`` results), the rest by fastavro as without it."""

    __slots__ = ("_client", "_decode", "_native", "_versions", "format")

    def __init__(
        self, fmt: RecordFormat, client: SchemaRegistryClient, native: NativeAvro | None = None
    ) -> None:
        self.format = fmt
        self._client = client
        self._decode = _deserializer(fmt, client)
        self._versions: dict[tuple[int | str | None, str], SchemaRef] = {}
        self._native = native if isinstance(self._decode, AvroWriterDeserializer) else None

    def close(self) -> None:
        """Close the registry client's HTTP session (shared by a route_decoders set: safe to
        call once per decoder)."""
        self._client.close()

    def decode_batch(self, records: Sequence[SourceRecord]) -> list[DecodeResult | None]:
        """Each record's value decoded, in order. Raises RegistryUnavailableError."""
        native = self._native
        if native is None:
            return [self.decode(record) for record in records]
        avro = self._decode
        assert isinstance(avro, AvroWriterDeserializer)
        return native.decode_batch(records, self.decode, avro.parsed, self._with_version)

    def decode(self, record: SourceRecord) -> DecodeResult | None:
        """One value decoded; None for a tombstone (judged as with JSON: not a mapping)."""
        value = record.value
        if value is None:
            return None
        try:
            ref = value_schema_ref(value, record.headers)
        except WireFormatError as exc:
            return Undecodable(f"not in the Schema Registry wire format: {exc}", None)
        ctx = SerializationContext(record.topic, MessageField.VALUE, list(record.headers))
        try:
            decoded = self._decode(value, ctx)
        except SchemaRegistryError as exc:
            if _is_an_answer(exc):
                return Undecodable(f"schema {_name(ref)} is not in the registry: {exc}", ref)
            raise _unavailable(exc) from exc
        except (httpx2.HTTPError, OSError) as exc:
            raise _unavailable(exc) from exc
        except Exception as exc:  # anything the bytes made the deserializer raise
            reason = f"{type(exc).__name__}: {exc}"[:_MAX_REASON]
            return Undecodable(
                f"payload does not decode as {self.format} under schema {_name(ref)}: {reason}",
                ref,
            )
        if not isinstance(decoded, dict):
            return Undecodable(
                f"payload decodes to {type(decoded).__name__}, not a record (mapping)", ref
            )
        return Decoded(decoded, self._with_version(ref, record.topic))

    def _with_version(self, ref: SchemaRef, topic: str) -> SchemaRef:
        """``ref`` with its id (of a GUID) and its version under the topic's subject."""
        key = (ref.id if ref.id is not None else ref.guid, topic)
        known = self._versions.get(key)
        if known is None:
            known = self._versions[key] = self._lookup(ref, f"{topic}-value")
        return known

    def _lookup(self, ref: SchemaRef, subject: str) -> SchemaRef:
        client = self._client
        try:
            if ref.id is not None:
                schema = client.get_schema(ref.id)
            else:
                schema = client.get_schema_by_guid(str(ref.guid))
            registered = client.lookup_schema(subject, schema)
        except SchemaRegistryError as exc:
            if _is_an_answer(exc):  # e.g. 404: not under this subject (another naming)
                return ref
            raise _unavailable(exc) from exc
        except (httpx2.HTTPError, OSError) as exc:
            raise _unavailable(exc) from exc
        return ref._replace(
            id=ref.id if ref.id is not None else registered.schema_id,
            version=registered.version,
        )


#: 4xx answers that say nothing about the request: retry (credentials, rate, timeout).
_TRANSIENT_4XX = frozenset({401, 403, 407, 408, 425, 429})


def _is_an_answer(exc: SchemaRegistryError) -> bool:
    """True for the registry's verdict on the request itself (404 not found, 422 and other
    4xx), which asking again will not change; False for a registry that could not answer
    (5xx, no status) or refused the client (401, 403, 429...), which the batch waits out."""
    status = exc.http_status_code
    return isinstance(status, int) and 400 <= status < 500 and status not in _TRANSIENT_4XX


def _name(ref: SchemaRef) -> str:
    return f"id {ref.id}" if ref.id is not None else f"guid {ref.guid}"


def _unavailable(exc: Exception) -> RegistryUnavailableError:
    status = getattr(exc, "http_status_code", None)
    what = f"HTTP {status}" if status is not None else type(exc).__name__
    return RegistryUnavailableError(f"the schema registry cannot answer ({what}): {exc}"[:500])


def route_decoders(
    routes: Sequence[RouteConfig],
    config: SchemaRegistryConfig,
    client: SchemaRegistryClient | None = None,
    *,
    native: bool = False,
    contracts: Callable[[str], SchemaContract] | None = None,
) -> dict[str, RecordDecoder]:
    """A decoder per route with a registry format, sharing one client (and so its schema
    cache): ``client``, else one built from ``config``. Empty when every route is JSON.
    ``native``: Avro routes read by the native core where it can (``avronative``), judged
    against ``contracts(route name)``, the route's contract now (default: as configured)."""
    wanted = [route for route in routes if route.format != "json"]
    if not wanted:
        return {}
    try:
        shared = client if client is not None else registry_client(config)
    except (ValueError, TypeError) as exc:  # confluent-kafka's word on the settings
        raise ConfigError(f"schema_registry: {exc}") from None
    return {
        route.name: RecordDecoder(
            route.format,
            shared,
            NativeAvro(_contract_of(route, contracts), route.max_payload_bytes) if native else None,
        )
        for route in wanted
    }


def _contract_of(
    route: RouteConfig, contracts: Callable[[str], SchemaContract] | None
) -> Callable[[], SchemaContract]:
    if contracts is None:
        return lambda: route.contract
    return lambda: contracts(route.name)
