"""produce_one on the fake broker: a full local queue is waited out, unless the caller gives up."""

from __future__ import annotations

from stream_validator.kafka.fake import FakeBroker
from stream_validator.kafka.io import produce_one
from stream_validator.kafka.ports import DeliveryReport
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
