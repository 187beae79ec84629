"""A route with a registry format in the service loop (in-memory broker, mock registry):
decoded records judged like JSON ones, undecodable ones to the DLQ with their schema id, and
a registry that cannot answer never sends a good record to the DLQ."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

import pytest

from stream_validator.codec import text_to_payload
from stream_validator.errors import ServiceExit
from stream_validator.registry.decoder import RecordDecoder
from stream_validator.service.report.hooks import ServiceHooks
from tests.support.flakyregistry import FlakyRegistry
from tests.support.registryformats import TICK, TICK_CONTRACT, serializer

from .fakeservice import Harness, service_config


def harness(tmp_path: Path, fmt: str, client: Any, **kw: Any) -> Harness:
    contract = tmp_path / "tick.yaml"
    contract.write_text(TICK_CONTRACT)
    config = service_config(contract=contract, route_format=fmt, commit_interval_s=1e-9)
    return Harness(config, decoders={"ticks": RecordDecoder(fmt, client)}, **kw)


def envelope(record: Any) -> dict[str, Any]:
    return json.loads(record.value)  # type: ignore[no-any-return]


@pytest.mark.parametrize("fmt", ["avro", "protobuf", "json-schema"])
def test_clean_and_dlq_exactly(tmp_path: Path, fmt: str) -> None:
    """Good records go clean byte for byte; a contract breach, corrupt bytes, a value without
    the magic byte and an unknown schema id go to the DLQ with the original bytes, the
    reason, and (when the framing named one) the schema id and version."""
    client = FlakyRegistry()
    h = harness(tmp_path, fmt, client)
    write = serializer(fmt, client)
    good = [write("src", {**TICK, "size": n}) for n in (1, 2, 3)]
    breach, _ = write("src", {**TICK, "size": 0})
    corrupt = good[0][0][:-4] + b"\xff\xff\xff\xff"
    for value, headers in good[:2]:
        h.broker.append("src", value, key=b"g", headers=headers)
    h.broker.append("src", breach, key=b"breach")
    h.broker.append("src", corrupt, key=b"corrupt")
    h.broker.append("src", b'{"symbol":"AAPL"}', key=b"json")
    h.broker.append("src", b"\x00\x00\x00\x00\x63zz", key=b"unknown")
    h.broker.append("src", good[2][0], key=b"g")
    assert h.run() == ServiceExit.OK
    assert [r.value for r in h.topic("clean")] == [v for v, _ in good]
    dlq = {r.key: (r, envelope(r)) for r in h.topic("dlq")}
    assert sorted(dlq) == [b"breach", b"corrupt", b"json", b"unknown"]
    kinds = {key: [v["kind"] for v in doc["violations"]] for key, (_, doc) in dlq.items()}
    assert kinds == {
        b"breach": ["below_min"],
        b"corrupt": ["undecodable"],
        b"json": ["undecodable"],
        b"unknown": ["undecodable"],
    }
    assert dlq[b"breach"][1]["schema"] == {"id": 1, "version": 1}
    assert dlq[b"corrupt"][1]["schema"]["id"] == 1
    assert "schema" not in dlq[b"json"][1]
    assert "magic byte" in dlq[b"json"][1]["violation_reason"]
    assert dlq[b"unknown"][1]["schema"]["id"] == 99
    for key, original in ((b"breach", breach), (b"corrupt", corrupt)):
        record, doc = dlq[key]
        assert text_to_payload(doc["payload"], doc["payload_encoding"]) == original
        assert doc["payload_sha256"] == hashlib.sha256(original).hexdigest()
        assert dict(record.headers)["sv.dlq.schema.id"] == b"1"
    assert dict(dlq[b"breach"][0].headers)["sv.dlq.schema.version"] == b"1"


def test_a_schema_id_in_the_header_is_read(tmp_path: Path) -> None:
    """A value whose schema GUID travels in __value_schema_id is decoded and passes."""
    client = FlakyRegistry()
    h = harness(tmp_path, "avro", client)
    value, headers = serializer("avro", client, header_id=True)("src", TICK)
    h.broker.append("src", value, key=b"k", headers=headers)
    assert h.run() == ServiceExit.OK
    assert [r.value for r in h.topic("clean")] == [value]
    assert h.topic("dlq") == []


@pytest.mark.parametrize("mode", ["down", "500"])
def test_an_outage_waits_and_loses_nothing(tmp_path: Path, mode: str) -> None:
    """The registry fails three times: the batch is read again each time (not ready, one
    event per set-back), then every record goes clean and none to the DLQ."""
    client = FlakyRegistry()
    ready: list[bool] = []
    waits: list[str] = []
    hooks = ServiceHooks(on_ready=ready.append, on_registry_unavailable=waits.append)
    h = harness(tmp_path, "avro", client, hooks=hooks)
    write = serializer("avro", client)
    values = [write("src", {**TICK, "size": n})[0] for n in range(1, 6)]
    h.feed(values)
    client.fail, client.mode = 3, mode
    assert h.run() == ServiceExit.OK
    assert client.failures == 3
    assert waits == ["ticks"] * 3
    assert [r.value for r in h.topic("clean")] == values
    assert h.topic("dlq") == []
    changes = [r for i, r in enumerate(ready) if i == 0 or ready[i - 1] != r]
    # Ready once subscribed, not while the registry was away, ready again once a batch was
    # delivered, not at shutdown.
    assert changes == [True, False, True, False]
    assert h.broker.committed("svc") == {("src", 0): 5}


def test_a_registry_down_until_shutdown_commits_nothing(tmp_path: Path) -> None:
    """The registry never answers and the service is stopped: nothing clean, nothing in the
    DLQ, nothing committed (the records are read again on the next start)."""
    client = FlakyRegistry()
    h = harness(tmp_path, "avro", client)
    h.feed([serializer("avro", client)("src", TICK)[0]] * 3)
    client.fail = 10**9

    def stop_after_a_few() -> None:
        if client.failures >= 4:
            h.service.stop()

    client.on_failure = stop_after_a_few
    assert h.run() == ServiceExit.OK
    assert client.failures == 4
    assert h.topic("clean") == [] and h.topic("dlq") == []
    assert h.broker.committed("svc") == {}
    assert "schema registry unavailable" in (h.state.last_error or "")
