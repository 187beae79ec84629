"""Registry-format routes against the real broker: records written by confluent-kafka's own
serializers in Avro, Protobuf and JSON Schema, good and bad, end up in the clean topic and the
DLQ exactly.

Every format goes through the dev registry (Apicurio 3, ``schema_registry_url``), the service
reaching it by its config like in production. Protobuf runs there in both forms a registry
may hold: ``protobuf-text``, the schema registered as ``.proto`` text (as Apicurio and Java
producers keep it) and the records framed by ``ProtobufWriter``, and ``protobuf``, the base64
``FileDescriptorProto`` confluent-kafka's ``ProtobufSerializer`` registers (Apicurio stores it
but answers ``format=serialized`` for it with HTTP 500: the service asks for the schema as
stored). Ids in the ``__value_schema_id`` header run against confluent-kafka's in-memory
registry instead (shared in-process with the service): Apicurio's register answer has no
GUID, so the serializer cannot write one.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from kafka_helpers import create_topic, produce, read_topic, unique_group
from service_helpers import ThreadedService, all_consumed, wait_until
from service_helpers import write_config as service_config_file

from stream_validator.config.model import SchemaRegistryConfig
from stream_validator.config.settings import load_config
from stream_validator.registry.client import registry_client
from stream_validator.registry.decoder import RecordDecoder
from tests.support.registryformats import TICK, TICK_CONTRACT, serializer

GOOD = 40


def registry_inputs(
    fmt: str, client: Any, source: str, header_ids: bool
) -> tuple[list[Any], list[bytes]]:
    """(messages to produce, the good values in order): GOOD good ticks (with ``header_ids``
    half with the schema id in the header), then a breach, corrupt bytes, plain JSON and an
    unknown schema id."""
    prefix = serializer(fmt, client)
    header = serializer(fmt, client, header_id=True) if header_ids else prefix
    messages: list[Any] = []
    good: list[bytes] = []
    for i in range(GOOD):
        value, headers = (header if i % 2 else prefix)(source, {**TICK, "size": i + 1})
        messages.append((f"g{i}".encode(), value, headers or None))
        good.append(value)
    breach, _ = prefix(source, {**TICK, "size": 0})
    messages += [
        (b"breach", breach, None),
        (b"corrupt", good[0][:-4] + b"\xff\xff\xff\xff", None),
        (b"json", b'{"symbol":"AAPL"}', None),
        (b"unknown", b"\x00\x00\x00\x7f\x7f" + good[0][5:], None),
    ]
    return messages, good


@pytest.mark.parametrize(
    ("fmt", "registry"),
    [
        ("avro", "dev"),
        ("json-schema", "dev"),
        ("protobuf-text", "dev"),
        ("protobuf", "dev"),
        ("avro", "in-memory"),
        ("json-schema", "in-memory"),
        ("protobuf", "in-memory"),
    ],
)
def test_every_format_clean_and_dlq_exactly(
    kafka_bootstrap: str, schema_registry_url: str, tmp_path: Path, fmt: str, registry: str
) -> None:
    """Every good record clean byte for byte in order, every bad one in the DLQ with the
    reason and its schema id, nothing else (one partition, so order is the source's)."""
    dev = registry == "dev"
    url = schema_registry_url if dev else f"mock://it-{fmt}"
    client = registry_client(SchemaRegistryConfig(url=url))
    route_format = "protobuf" if fmt == "protobuf-text" else fmt
    source = create_topic(kafka_bootstrap, 1, prefix=f"src-{fmt}")
    clean = create_topic(kafka_bootstrap, 1, prefix="clean")
    dlq = create_topic(kafka_bootstrap, 1, prefix="dlq")
    messages, good = registry_inputs(fmt, client, source, header_ids=not dev)
    schema_id = int.from_bytes(good[0][1:5], "big")
    produce(kafka_bootstrap, source, messages)
    contract = tmp_path / "tick.yaml"
    contract.write_text(TICK_CONTRACT)
    group = unique_group(f"reg-{fmt}")
    route = {
        "name": "ticks",
        "source_topics": [source],
        "contract": str(contract),
        "clean_topic": clean,
        "dlq_topic": dlq,
        "format": route_format,
    }
    path = service_config_file(
        tmp_path, kafka_bootstrap, [route], group=group, schema_registry={"url": url}
    )
    # The in-memory registry is the producer's own: the service is handed a decoder on it.
    decoders = None if dev else {"ticks": RecordDecoder(route_format, client)}
    with ThreadedService(load_config(path, environ={}), decoders=decoders) as runner:
        wait_until(lambda: all_consumed(kafka_bootstrap, group, source), 90, "all committed")
    assert runner.exit_code == 0
    assert [m.value for m in read_topic(kafka_bootstrap, clean)] == good
    dlq_records = read_topic(kafka_bootstrap, dlq)
    envelopes = {m.key: json.loads(m.value or b"") for m in dlq_records}
    assert [m.key for m in dlq_records] == [b"breach", b"corrupt", b"json", b"unknown"]
    assert {k: e["violations"][0]["kind"] for k, e in envelopes.items()} == {
        b"breach": "below_min",
        b"corrupt": "undecodable",
        b"json": "undecodable",
        b"unknown": "undecodable",
    }
    client.close()
    assert envelopes[b"breach"]["schema"] == {"id": schema_id, "version": 1}
    assert envelopes[b"corrupt"]["schema"]["id"] == schema_id
    assert envelopes[b"unknown"]["schema"]["id"] == 0x7F7F
    assert "schema" not in envelopes[b"json"]
