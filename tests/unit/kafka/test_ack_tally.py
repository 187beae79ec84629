"""The producer's delivery callback of a batch (``Producer.ack_tally``): the native counter
behind librdkafka and the fake's, alike."""

from __future__ import annotations

import pytest
from confluent_kafka import KafkaError, Message, Producer

from stream_validator.errors import KafkaErrorInfo
from stream_validator.kafka.confluent import ConfluentProducer
from stream_validator.kafka.fake import FakeBroker
from stream_validator.kafka.ports import DeliveryFailure


def _tally_of_confluent(failures: list[DeliveryFailure]) -> object:
    # No broker is contacted: the client only connects when it has something to send.
    producer = ConfluentProducer(Producer({"bootstrap.servers": "127.0.0.1:1"}))
    return producer.ack_tally(failures.append)


def test_the_client_callback_counts_acknowledgements_and_hands_on_failures_in_order() -> None:
    """librdkafka's (error, message) calls: None counts one acknowledgement and builds
    nothing; each failure reaches on_failure at once, as a DeliveryFailure of that output."""
    failures: list[DeliveryFailure] = []
    tally = _tally_of_confluent(failures)
    ok = Message(topic="clean", key=b"k", value=b"v")
    tally(None, ok)  # type: ignore[operator]
    tally(None, ok)  # type: ignore[operator]
    tally(KafkaError(KafkaError._MSG_TIMED_OUT, "timed out"), Message(topic="clean", value=b"a"))  # type: ignore[operator]
    tally(None, ok)  # type: ignore[operator]
    tally(KafkaError(KafkaError.INVALID_RECORD, "bad"), Message(topic="dlq", key="s", value=b"b"))  # type: ignore[operator]
    assert tally.acked == 3  # type: ignore[attr-defined]
    assert [(f.error.code, f.topic, f.key, f.value) for f in failures] == [
        ("_MSG_TIMED_OUT", "clean", None, b"a"),
        ("INVALID_RECORD", "dlq", b"s", b"b"),
    ]


def test_settle_counts_like_the_client_callback() -> None:
    """settle (a record produced on its own) counts an acknowledgement or hands the failure
    on, for the native tally and the fake's alike."""
    failure = DeliveryFailure(KafkaErrorInfo("_MSG_TIMED_OUT", "timed out"), "t", None, b"v")
    broker = FakeBroker()
    for make in (_tally_of_confluent, lambda f: broker.producer().ack_tally(f.append)):
        failures: list[DeliveryFailure] = []
        tally = make(failures)
        tally.settle(None)  # type: ignore[attr-defined]
        tally.settle(failure)  # type: ignore[attr-defined]
        tally.settle(None)  # type: ignore[attr-defined]
        assert (tally.acked, failures) == (2, [failure])  # type: ignore[attr-defined]


def test_a_failure_handler_that_raises_reaches_the_caller() -> None:
    """An exception in on_failure is not swallowed: poll() raises it, as with a Python
    callback."""

    def boom(failure: DeliveryFailure) -> None:
        raise RuntimeError("handler failed")

    producer = ConfluentProducer(Producer({"bootstrap.servers": "127.0.0.1:1"}))
    tally = producer.ack_tally(boom)
    with pytest.raises(RuntimeError, match="handler failed"):
        tally(KafkaError(KafkaError._MSG_TIMED_OUT, "x"), Message(topic="t", value=b"v"))  # type: ignore[operator]
    assert tally.acked == 0
