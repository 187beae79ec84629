"""The one produce loop: backpressure, per-record outcomes, too-large replacement."""

from __future__ import annotations

from stream_validator.errors import KafkaErrorInfo
from stream_validator.kafka.fake import FakeBroker
from stream_validator.kafka.io import Delivery, Status, produce_all
from stream_validator.kafka.ports import DeliveryReport
from stream_validator.records import OutputRecord, SourceRecord


def out(value: bytes, kind: str = "clean", topic: str = "t") -> OutputRecord:
    source = SourceRecord("src", 0, 0, None, value, [], None)
    return OutputRecord(kind, topic, None, value, [], None, source)  # type: ignore[arg-type]


def test_record_level_codes_are_refusals_and_the_rest_failures() -> None:
    """Record-level codes (batchmates' too) are REFUSED; a timeout stays an ordinary FAILED."""
    statuses = []
    for code in ("MSG_SIZE_TOO_LARGE", "_INVALID_DIFFERENT_RECORD", "_MSG_TIMED_OUT"):
        delivery = Delivery(out(b"x"), alone=False)
        delivery.settle(DeliveryReport("t", KafkaErrorInfo(code, "why")), 0.0)
        statuses.append(delivery.status)
    assert statuses == [Status.REFUSED, Status.REFUSED, Status.FAILED]


def test_too_large_at_produce_is_replaced_once() -> None:
    """The client's size refusal sends the replacement instead, keeping the original."""
    broker = FakeBroker()
    broker.create_topic("t")
    broker.create_topic("dlq")
    producer = broker.producer(message_max_bytes=5)
    big = out(b"x" * 10)
    small = out(b"q", "dlq", "dlq")
    deliveries = produce_all(producer, [big], timeout_s=1.0, too_large=lambda _r: small)
    (delivery,) = deliveries.items
    assert (delivery.status, delivery.record, delivery.replaced) == (Status.DELIVERED, small, big)
    assert [r.value for r in broker.records("dlq")] == [b"q"]


def test_too_large_without_replacement_is_reported_alone() -> None:
    """No replacement: TOO_LARGE, with the client's error, and nothing sent."""
    broker = FakeBroker()
    broker.create_topic("t")
    deliveries = produce_all(broker.producer(message_max_bytes=5), [out(b"x" * 10)], timeout_s=1)
    (delivery,) = deliveries.items
    assert delivery.status is Status.TOO_LARGE
    assert delivery.error is not None and delivery.error.code == "MSG_SIZE_TOO_LARGE"
    assert broker.records("t") == []


def test_acknowledgement_time_comes_from_the_clock() -> None:
    """acked_at is the injected clock at delivery (end-to-end latency is measured with it)."""
    broker = FakeBroker()
    broker.create_topic("t")
    deliveries = produce_all(broker.producer(), [out(b"x")], timeout_s=1, clock=lambda: 42.0)
    assert deliveries.items[0].acked_at == 42.0
