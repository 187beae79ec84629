"""A record larger than the producer's local queue (``queue.buffering.max.kbytes``) on the
real client: the service refuses such a queue at load, a record the queue can never hold is
too large (never an endless wait), and the service's oversized records still reach the DLQ."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from confluent_kafka import Producer
from kafka_helpers import create_topic, produce, read_topic
from service_helpers import ServiceProcess, ThreadedService, encode, new_stream, wait_until

from stream_validator.errors import KafkaClientError, ServiceExit
from stream_validator.kafka.confluent import ConfluentProducer
from stream_validator.kafka.io import Status, produce_all, produce_one
from stream_validator.kafka.ports import MSG_SIZE_TOO_LARGE
from stream_validator.records import OutputRecord, SourceRecord
from tests.support.ticks import tick

pytestmark = [pytest.mark.integration, pytest.mark.timeout(120)]

SMALL_QUEUE = {"queue.buffering.max.kbytes": "100"}
BIG = 200_000
SOURCE = SourceRecord("src", 0, 0, None, b"", [], None)


def out(topic: str, value: bytes) -> OutputRecord:
    return OutputRecord("clean", topic, None, value, [], None, SOURCE)


def small_queue_producer(bootstrap: str) -> ConfluentProducer:
    return ConfluentProducer(Producer({"bootstrap.servers": bootstrap, **SMALL_QUEUE}))


def test_record_larger_than_the_queue_is_too_large_not_waited_for(kafka_bootstrap: str) -> None:
    """produce_one raises MSG_SIZE_TOO_LARGE for a 200 KB value and a 100 KB queue."""
    topic = create_topic(kafka_bootstrap, prefix="queue-bound")
    producer = small_queue_producer(kafka_bootstrap)
    with pytest.raises(KafkaClientError) as caught:
        produce_one(producer, out(topic, b"x" * BIG), lambda _report: None)
    assert caught.value.info.code == MSG_SIZE_TOO_LARGE
    assert "queue.buffering.max.kbytes" in str(caught.value)


def test_produce_all_delivers_around_a_record_larger_than_the_queue(kafka_bootstrap: str) -> None:
    """The too-large record is TOO_LARGE; the records before and after it land."""
    topic = create_topic(kafka_bootstrap, prefix="queue-bound")
    producer = small_queue_producer(kafka_bootstrap)
    records = [out(topic, b"before"), out(topic, b"x" * BIG), out(topic, b"after")]
    deliveries = produce_all(producer, records, timeout_s=30.0)
    assert [d.status for d in deliveries.items] == [
        Status.DELIVERED,
        Status.TOO_LARGE,
        Status.DELIVERED,
    ]
    assert [m.value for m in read_topic(kafka_bootstrap, topic)] == [b"before", b"after"]


def test_service_refuses_a_queue_smaller_than_max_message_bytes(
    kafka_bootstrap: str, tmp_path: Path
) -> None:
    """The service exits 2 at load, the error naming both keys, instead of hanging later."""
    stream = new_stream(kafka_bootstrap, tmp_path, kafka={"producer": SMALL_QUEUE})
    service = ServiceProcess(stream.config, tmp_path / "run.log").start()
    try:
        assert service.wait(60) == ServiceExit.CONFIG
    finally:
        service.kill()
    (error,) = [e for e in service.log_events() if e["msg"] == "invalid configuration"]
    assert "queue.buffering.max.kbytes=100" in error["error"]
    assert "service.max_message_bytes=1048576" in error["error"]


def test_service_with_a_small_queue_sends_a_200kb_record_to_the_dlq_as_oversized(
    kafka_bootstrap: str, tmp_path: Path
) -> None:
    """max_message_bytes within the 100 KB queue: the 200 KB record is an oversized DLQ entry
    and the records around it flow on (the loop does not hang)."""
    stream = new_stream(
        kafka_bootstrap,
        tmp_path,
        kafka={"producer": {"message.timeout.ms": "10000", **SMALL_QUEUE}},
        service={"max_message_bytes": 100 * 1024},
    )
    big = encode(tick(1, pad="x" * BIG))
    produce(kafka_bootstrap, stream.source, [(b"k0", encode(tick(0)), None), (b"k1", big, None)])
    produce(kafka_bootstrap, stream.source, [(b"k2", encode(tick(2)), None)])
    with ThreadedService.from_file(stream.config) as running:
        wait_until(stream.all_consumed, 60, "all committed")
        assert running.service.state.ready
    assert [m.key for m in read_topic(kafka_bootstrap, stream.clean)] == [b"k0", b"k2"]
    (entry,) = read_topic(kafka_bootstrap, stream.dlq)
    envelope = json.loads(entry.value or b"")
    assert [v["kind"] for v in envelope["violations"]] == ["oversized"]
