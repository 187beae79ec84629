"""The streaming service against the real broker: routing, accounting, delivery, faults."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

import pytest
import yaml
from kafka_helpers import create_topic, produce, read_topic, unique_group, unique_name
from service_helpers import (
    CONTRACTS,
    ServiceLog,
    ThreadedService,
    encode,
    new_stream,
    route,
    wait_until,
    write_config,
)

from stream_validator.cli.devkafka import LocalKafkaBroker
from tests.support.ticks import tick

Outgoing = tuple[bytes | None, bytes | None, list[tuple[str, bytes]] | None]


def envelopes(bootstrap: str, dlq: str) -> list[dict[str, Any]]:
    return [json.loads(m.value or b"") for m in read_topic(bootstrap, dlq)]


def source_coordinates(bootstrap: str, source: str) -> dict[bytes | None, tuple[int, int]]:
    """Source value bytes -> (partition, offset); test values are unique."""
    return {m.value: (m.partition, m.offset) for m in read_topic(bootstrap, source)}


def strict_contract(tmp_path: Path) -> str:
    """The tick contract with forbid_unknown_fields and no null ceiling."""
    document = yaml.safe_load((CONTRACTS / "tick.yaml").read_text())
    document.update(forbid_unknown_fields=True, max_allowed_null_pct=100.0)
    path = tmp_path / "strict_tick.yaml"
    path.write_text(yaml.safe_dump(document))
    return str(path)


BAD_RECORDS: dict[str, bytes | None] = {
    "not_a_mapping": b"[1,2,3]",
    "tombstone": None,
    "missing_field": encode({k: v for k, v in tick(9001).items() if k != "price"}),
    "null_value": encode(tick(9002, price=None)),
    "type_mismatch": encode(tick(9003, price="100.5")),
    "below_min": encode(tick(9004, size=-1)),
    "above_max": encode(tick(9005, price=1e12)),
    "unknown_field": encode(tick(9006, ask_volume=5)),
    "undecodable": b"\xff\xfe not json",
    "undecodable_nan": b'{"price": NaN}',
    "deep_nesting": b"[" * 1100 + b"]" * 1100,
    "oversized": encode(tick(9007, padding="x" * 5000)),
}
EXPECTED_KIND = {name: name for name in BAD_RECORDS} | {
    "tombstone": "not_a_mapping",
    "undecodable_nan": "undecodable",
    "deep_nesting": "undecodable",
    "oversized": "oversized",
}


def test_routing_every_violation_kind(kafka_bootstrap: str, tmp_path: Path) -> None:
    """Valid records reach the clean topic byte-identical with key, headers and timestamp;
    each bad record reaches the DLQ once with its kind, envelope and sv.dlq headers."""
    stream = new_stream(
        kafka_bootstrap,
        tmp_path,
        partitions=3,
        route_options={"contract": strict_contract(tmp_path), "max_payload_bytes": 3000},
    )
    source, clean, dlq, group = stream.source, stream.clean, stream.dlq, stream.group
    valid = [encode(tick(i)) for i in range(30)]
    outgoing: list[Outgoing] = [
        (f"K{i % 5}".encode(), v, [("trace", f"t{i}".encode())]) for i, v in enumerate(valid)
    ]
    outgoing += [
        (name.encode(), value, [("case", name.encode())]) for name, value in BAD_RECORDS.items()
    ]
    produce(kafka_bootstrap, source, outgoing)
    with ThreadedService.from_file(stream.config):
        wait_until(stream.all_consumed, 60, "all committed")
    coords = source_coordinates(kafka_bootstrap, source)
    sent = {v: (k, h) for k, v, h in outgoing}
    clean_msgs = read_topic(kafka_bootstrap, clean)
    assert sorted(m.value for m in clean_msgs) == sorted(valid)  # type: ignore[arg-type]
    src_by_value = {m.value: m for m in read_topic(kafka_bootstrap, source)}
    for message in clean_msgs:
        key, headers = sent[message.value]
        assert message.key == key
        assert [(n, bytes(v)) for n, v in message.headers] == headers  # type: ignore[arg-type]
        assert message.timestamp == src_by_value[message.value].timestamp
    dlq_msgs = read_topic(kafka_bootstrap, dlq)
    by_case: dict[str, Any] = {}
    for message in dlq_msgs:
        envelope = json.loads(message.value or b"")
        case = dict(envelope["headers"] and [(h[0], h[1]) for h in envelope["headers"]])["case"]
        by_case[case] = (envelope, dict(message.headers))
    assert set(by_case) == set(BAD_RECORDS)
    for case, (envelope, headers) in by_case.items():
        kinds = [v["kind"] for v in envelope["violations"]]
        assert EXPECTED_KIND[case] in kinds, (case, kinds)
        assert headers["sv.dlq.violation.kind"] == kinds[0].encode()
        original = BAD_RECORDS[case]
        assert (envelope["source"]["partition"], envelope["source"]["offset"]) == coords[original]
        assert envelope["source"]["topic"] == source
        assert headers["sv.dlq.source.offset"] == str(envelope["source"]["offset"]).encode()
        assert envelope["key"] == case
        assert envelope["consumer_group"] == group
        assert envelope["contract"] == {"name": "tick", "version": "1"}
    assert by_case["tombstone"][0]["payload"] is None
    assert by_case["undecodable"][0]["payload_encoding"] == "base64"
    assert by_case["type_mismatch"][0]["payload"] == BAD_RECORDS["type_mismatch"].decode()  # type: ignore[union-attr]


def test_accounting_every_offset_exactly_once(kafka_bootstrap: str, tmp_path: Path) -> None:
    """Undisturbed run: every source (partition, offset) appears exactly once in clean + DLQ."""
    stream = new_stream(kafka_bootstrap, tmp_path, partitions=3)
    bad = list(BAD_RECORDS.values())
    values = [bad[i % len(bad)] if i % 50 == 7 else encode(tick(i)) for i in range(3000)]
    # Bad values repeat, so give every record a unique key to tell them apart.
    messages = [(f"k{i}".encode(), v, None) for i, v in enumerate(values)]
    produce(kafka_bootstrap, stream.source, messages)
    with ThreadedService.from_file(stream.config):
        wait_until(stream.all_consumed, 90, "all committed")
    seen = stream.outputs_by_source()  # asserts every source offset has an output
    assert max(seen.values()) == 1


@pytest.mark.parametrize("policy", ["alert", "quarantine"])
def test_null_ceiling_policy(kafka_bootstrap: str, tmp_path: Path, policy: str) -> None:
    """A null-bid spike: 'alert' lets records flow, 'quarantine' sends the batch to the DLQ."""
    stream = new_stream(kafka_bootstrap, tmp_path, route_options={"on_null_ceiling_breach": policy})
    clean, dlq = stream.clean, stream.dlq
    messages = [(b"k", encode(tick(i, bid=None)), None) for i in range(40)]
    produce(kafka_bootstrap, stream.source, messages)
    with ThreadedService.from_file(stream.config) as runner:
        wait_until(stream.all_consumed, 60, "all committed")
        events = runner.service.state.recent_events
    assert events and all(e["null_breach_fields"] == {"bid": 100.0} for e in events)
    assert {e["null_ceiling_action"] for e in events} == {policy}
    if policy == "alert":
        assert len(read_topic(kafka_bootstrap, clean)) == 40
        assert read_topic(kafka_bootstrap, dlq) == []
    else:
        assert read_topic(kafka_bootstrap, clean) == []
        dlq_envelopes = envelopes(kafka_bootstrap, dlq)
        assert len(dlq_envelopes) == 40
        assert {v["kind"] for e in dlq_envelopes for v in e["violations"]} == {
            "null_ceiling_breach"
        }


def test_missing_source_topic_is_awaited(kafka_bootstrap: str, tmp_path: Path) -> None:
    """A source topic that does not exist yet is consumed once it is created."""
    clean = create_topic(kafka_bootstrap, 1, prefix="clean")
    dlq = create_topic(kafka_bootstrap, 1, prefix="dlq")
    source = unique_name("late-src")
    group = unique_group("svc")
    path = write_config(
        tmp_path, kafka_bootstrap, [route("ticks", source, clean, dlq)], group=group
    )
    with ServiceLog() as service_log, ThreadedService.from_file(path) as runner:
        wait_until(
            lambda: service_log.saw("source topic not available yet"),
            60,
            "the consumer to report the missing source topic",
        )
        assert runner.exit_code is None  # still running, not crashed
        create_topic(kafka_bootstrap, 1, name=source)  # returns once it has a leader
        produce(kafka_bootstrap, source, [(b"k", encode(tick(i)), None) for i in range(10)])
        wait_until(
            lambda: len(read_topic(kafka_bootstrap, clean)) == 10, 90, "records from the late topic"
        )


def test_broker_down_at_start_then_up(restartable_kafka: LocalKafkaBroker, tmp_path: Path) -> None:
    """Started while the broker is down: not ready, no crash; once it is up, all is processed."""
    bootstrap = restartable_kafka.bootstrap_servers
    stream = new_stream(bootstrap, tmp_path)
    produce(bootstrap, stream.source, [(b"k", encode(tick(i)), None) for i in range(20)])
    restartable_kafka.stop()
    with ThreadedService.from_file(stream.config) as runner:
        state = runner.service.state
        wait_until(lambda: state.last_error is not None, 60, "last_error: broker unreachable")
        assert runner.exit_code is None
        assert state.ready is False
        restartable_kafka.start(keep_data=True)
        wait_until(stream.all_consumed, 120, "processing after start")
    assert len(read_topic(bootstrap, stream.clean)) == 20


def test_readiness_recovers_after_broker_outage_without_traffic(
    restartable_kafka: LocalKafkaBroker, tmp_path: Path
) -> None:
    """An idle service turns not ready when the broker goes away and ready when it is back."""
    bootstrap = restartable_kafka.bootstrap_servers
    stream = new_stream(bootstrap, tmp_path)
    source, clean = stream.source, stream.clean
    with ThreadedService.from_file(stream.config) as runner:
        state = runner.service.state
        wait_until(lambda: state.ready, 60, "ready")
        restartable_kafka.stop()
        wait_until(lambda: not state.ready, 60, "not ready while the broker is down")
        restartable_kafka.start(keep_data=True)
        wait_until(lambda: state.ready, 90, "ready again with no records flowing")
        produce(bootstrap, source, [(b"k", encode(tick(1)), None)])
        wait_until(lambda: len(read_topic(bootstrap, clean)) == 1, 60, "record after recovery")


def test_huge_record_gets_a_truncated_envelope(kafka_bootstrap: str, tmp_path: Path) -> None:
    """A record too big for the DLQ's size limit is truncated in its envelope, never dropped."""

    stream = new_stream(kafka_bootstrap, tmp_path, service={"max_message_bytes": 120_000})
    clean = stream.clean
    huge = encode(tick(1, padding="p" * 300_000))
    messages = [(b"big", huge, None), (b"ok", encode(tick(2)), None)]
    produce(kafka_bootstrap, stream.source, messages)
    with ThreadedService.from_file(stream.config):
        wait_until(stream.all_consumed, 60, "all committed")
    (message,) = read_topic(kafka_bootstrap, stream.dlq)
    envelope = json.loads(message.value or b"")
    assert len(message.value or b"") <= 120_000
    assert envelope["payload_truncated"] is True
    assert envelope["violations"][0]["kind"] == "oversized"
    assert envelope["payload_length"] == len(huge)
    assert envelope["payload_sha256"] == hashlib.sha256(huge).hexdigest()
    assert huge.decode().startswith(envelope["payload"])
    assert [m.key for m in read_topic(kafka_bootstrap, clean)] == [b"ok"]
