"""produce_one on the fake broker: a full local queue is waited out, unless the caller gives
up, for a bounded time; a record the empty queue cannot hold is too large."""

from __future__ import annotations

from collections.abc import Callable
from itertools import count

import pytest

from stream_validator.errors import KafkaClientError
from stream_validator.kafka.fake import FakeBroker
from stream_validator.kafka.io import Status, produce_all, produce_one, send_all
from stream_validator.kafka.ports import MSG_SIZE_TOO_LARGE, QUEUE_FULL, DeliveryReport
from stream_validator.records import OutputRecord, SourceRecord

SOURCE = SourceRecord("src", 0, 0, None, b"v", [], None)


def record(value: bytes) -> OutputRecord:
    return OutputRecord("clean", "t", None, value, [], None, SOURCE)


def test_full_queue_is_waited_out_by_serving_deliveries() -> None:
    """With room made by poll(), every record is enqueued and delivered in order."""
    broker = FakeBroker()
    broker.create_topic("t")
    producer = broker.producer(queue_size=1)
    reports: list[DeliveryReport] = []
    assert all(produce_one(producer, record(bytes([i])), reports.append) for i in range(3))
    producer.flush(1.0)
    assert [r.value for r in broker.records("t")] == [b"\x00", b"\x01", b"\x02"]
    assert len(reports) == 3


def test_giving_up_on_a_full_queue_enqueues_nothing() -> None:
    """When the queue stays full (no acknowledgements) and give_up() is true, produce_one
    returns False without enqueuing the record."""
    broker = FakeBroker()
    broker.create_topic("t")
    broker.faults.hold_topics.add("t")
    producer = broker.producer(queue_size=1)
    assert produce_one(producer, record(b"1"), lambda _r: None)
    asked: list[bool] = []

    def give_up() -> bool:
        asked.append(True)
        return len(asked) == 3  # after two polls that freed no room

    assert not produce_one(producer, record(b"2"), lambda _r: None, give_up=give_up)
    assert producer.flush(0.0) == 1  # only the first one is queued


def never_more_than(polls: int) -> Callable[[], bool]:
    """A give_up that fails the test once produce_one has waited ``polls`` times."""
    calls = count(1)

    def give_up() -> bool:
        if next(calls) > polls:
            pytest.fail("produce_one kept waiting for room")
        return False

    return give_up


def test_record_larger_than_the_empty_queue_is_too_large() -> None:
    """A value larger than the whole queue raises MSG_SIZE_TOO_LARGE at once (no wait)."""
    broker = FakeBroker()
    broker.create_topic("t")
    producer = broker.producer(queue_bytes=100)
    assert produce_one(producer, record(b"small"), lambda _r: None)
    with pytest.raises(KafkaClientError) as caught:
        produce_one(producer, record(b"x" * 200), lambda _r: None, give_up=never_more_than(3))
    assert caught.value.info.code == MSG_SIZE_TOO_LARGE
    assert "200 bytes" in str(caught.value) and "queue.buffering.max.kbytes" in str(caught.value)
    assert [r.value for r in broker.records("t")] == [b"small"]


def test_queue_that_never_drains_fails_retriably_after_the_wait_bound() -> None:
    """A queue that stays full raises a retriable QUEUE_FULL after max_wait_s, not forever."""
    broker = FakeBroker()
    broker.create_topic("t")
    broker.faults.hold_topics.add("t")
    producer = broker.producer(queue_size=1)
    assert produce_one(producer, record(b"1"), lambda _r: None)
    now = iter(range(100))
    with pytest.raises(KafkaClientError) as caught:
        produce_one(
            producer,
            record(b"2"),
            lambda _r: None,
            give_up=never_more_than(20),
            max_wait_s=5.0,
            clock=lambda: float(next(now)),
        )
    assert caught.value.info.code == QUEUE_FULL and caught.value.info.retriable
    assert producer.flush(0.0) == 1  # only the first one is queued


@pytest.mark.timeout(10)  # the bug was an endless wait
def test_produce_all_reports_a_record_larger_than_the_queue_as_too_large() -> None:
    """produce_all: TOO_LARGE for that record; the others are delivered."""
    broker = FakeBroker()
    broker.create_topic("t")
    producer = broker.producer(queue_bytes=100)
    records = [record(b"a"), record(b"x" * 200), record(b"b")]
    deliveries = produce_all(producer, records, timeout_s=1.0)
    assert [d.status for d in deliveries.items] == [
        Status.DELIVERED,
        Status.TOO_LARGE,
        Status.DELIVERED,
    ]


@pytest.mark.timeout(10)  # the bug was an endless wait
def test_send_all_replaces_a_record_larger_than_the_queue() -> None:
    """send_all hands a record the queue can never hold to too_large (the service's oversized
    DLQ entry) and sends the replacement."""
    broker = FakeBroker()
    broker.create_topic("t")
    broker.create_topic("dlq")
    producer = broker.producer(queue_bytes=100)
    records = [record(b"a"), record(b"x" * 200), record(b"b")]
    replacement = OutputRecord("dlq", "dlq", None, b"oversized", [], None, SOURCE)
    failures: list[object] = []
    tally = producer.ack_tally(failures.append)
    refused, replaced = send_all(producer, records, tally, too_large=lambda _r: replacement)
    producer.flush(1.0)
    assert (refused, replaced) == ([], [1])
    assert [r.value for r in broker.records("t")] == [b"a", b"b"]
    assert [r.value for r in broker.records("dlq")] == [b"oversized"]
    assert (tally.acked, failures) == (3, [])
