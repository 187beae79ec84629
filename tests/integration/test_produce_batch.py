"""ConfluentProducer.produce_batch on the real broker: where the client stops taking records
(a full local queue, a record too large) is reported exactly, and what it took lands with
its key, headers and timestamp."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import pytest
from confluent_kafka import Producer
from kafka_helpers import create_topic, read_topic

from stream_validator.kafka.confluent import ConfluentProducer
from stream_validator.kafka.io import send_all
from stream_validator.kafka.ports import MSG_SIZE_TOO_LARGE, DeliveryFailure
from stream_validator.records import OutputRecord, SourceRecord

pytestmark = [pytest.mark.integration, pytest.mark.timeout(120)]


@dataclass(frozen=True)
class Out:
    """A Producible that is not a tuple."""

    topic: str
    key: bytes | None
    value: bytes | None
    headers: list[tuple[str, bytes | None]]
    timestamp_ms: int | None


def outputs(topic: str, count: int) -> list[Out]:
    """Records with and without headers, key and timestamp."""
    return [
        Out(
            topic,
            f"k{i}".encode() if i % 3 else None,
            f"v{i}".encode(),
            [("n", str(i).encode()), ("empty", None)] if i % 2 else [],
            1_764_600_000_000 + i if i % 4 else None,
        )
        for i in range(count)
    ]


def as_output_records(records: list[Out]) -> list[OutputRecord]:
    """The same records as the service's outputs (tuples: read by index)."""
    source = SourceRecord("src", 0, 0, None, b"", [], None)
    return [
        OutputRecord("clean", r.topic, r.key, r.value, r.headers, r.timestamp_ms, source)
        for r in records
    ]


@pytest.mark.parametrize("silent", [False, True], ids=["reported", "silent"])
@pytest.mark.parametrize("form", ["dataclass", "OutputRecord"])
def test_a_full_local_queue_stops_the_batch_at_the_first_record_not_taken(
    kafka_bootstrap: str, form: str, silent: bool
) -> None:
    """The batch stops at the first record the full queue does not take; all 40 land as sent
    (any Producible, and the service's OutputRecords) and are counted as acknowledged,
    whether the client reports every record or failures only (the service's producer)."""
    topic = create_topic(kafka_bootstrap, prefix="produce-batch")
    client = Producer(
        {
            "bootstrap.servers": kafka_bootstrap,
            "queue.buffering.max.messages": 7,
            "linger.ms": 200,  # nothing leaves the queue before the batch call returns
            "delivery.report.only.error": silent,
        }
    )
    producer = ConfluentProducer(client, silent_acks=silent)
    records: list[Any] = outputs(topic, 40)
    if form == "OutputRecord":
        records = as_output_records(records)
    failures: list[DeliveryFailure] = []
    acks = producer.ack_tally(failures.append)
    assert producer.produce_batch(records, 0, acks) == 7
    assert producer.produce_batch(records, 7, acks) == 7  # still full
    assert producer.flush(30.0) == 0
    assert producer.produce_batch(records, 7, acks) == 14
    refused, replaced = send_all(producer, records[14:], acks)
    assert (refused, replaced) == ([], [])
    assert producer.flush(30.0) == 0
    assert (acks.acked, failures) == (40, [])
    landed = read_topic(kafka_bootstrap, topic)
    assert [m.value for m in landed] == [r.value for r in records]
    assert [m.key for m in landed] == [r.key for r in records]
    assert [list(m.headers) for m in landed] == [r.headers for r in records]
    for message, record in zip(landed, records, strict=True):
        if record.timestamp_ms is not None:
            assert message.timestamp == record.timestamp_ms
        else:
            assert message.timestamp > 1_764_600_000_000  # stamped by the client: now


@pytest.mark.parametrize("silent", [False, True], ids=["reported", "silent"])
def test_a_record_too_large_is_where_the_batch_stops_and_is_refused_alone(
    kafka_bootstrap: str, silent: bool
) -> None:
    """A record over message.max.bytes ends the batch and is refused alone; the rest land."""
    topic = create_topic(kafka_bootstrap, prefix="produce-batch-large")
    producer = ConfluentProducer(
        Producer(
            {
                "bootstrap.servers": kafka_bootstrap,
                "message.max.bytes": 2000,
                "delivery.report.only.error": silent,
            }
        ),
        silent_acks=silent,
    )
    records = outputs(topic, 12)
    records[5] = Out(topic, b"big", b"x" * 5000, [], None)
    failures: list[DeliveryFailure] = []
    acks = producer.ack_tally(failures.append)
    assert producer.produce_batch(records, 0, acks) == 5
    refused, replaced = send_all(producer, records, acks)
    assert replaced == []
    assert [(index, info.code) for index, info in refused] == [(5, MSG_SIZE_TOO_LARGE)]
    assert producer.flush(30.0) == 0
    assert (acks.acked, failures) == (5 + 11, [])  # the first five twice, every other once
    landed = [m.value for m in read_topic(kafka_bootstrap, topic)]
    assert landed == [r.value for r in records[:5]] * 2 + [r.value for r in records[6:]]
