"""``ConfluentConsumer.consume`` over a stubbed Consumer: records and error events apart."""

from __future__ import annotations

from typing import Any

from confluent_kafka import KafkaError, Message

from stream_validator.kafka.confluent import ConfluentConsumer


class _Queued:
    """A Consumer whose consume returns the messages it was given."""

    def __init__(self, messages: list[Message]) -> None:
        self._messages = messages

    def consume(self, **_: Any) -> list[Message]:
        return self._messages


def _record(offset: int) -> Message:
    return Message(
        topic="md", partition=1, offset=offset, key=b"k", value=b"{}", headers=[], timestamp=(1, 5)
    )


def test_records_and_error_events_are_told_apart() -> None:
    """An error event between records becomes a ConsumerErrorEvent; the records keep order."""
    eof = KafkaError(KafkaError._PARTITION_EOF)
    error = Message(topic="md", partition=1, offset=5, error=eof)
    consumer = ConfluentConsumer(_Queued([_record(3), error, _record(4)]))  # type: ignore[arg-type]
    consumed = consumer.consume(10, 0.0)
    assert [r.offset for r in consumed.records] == [3, 4]
    (event,) = consumed.errors
    assert (event.topic, event.partition, event.offset) == ("md", 1, 5)


def test_a_batch_without_errors_is_all_records() -> None:
    """No error event: every message is a record, none an event."""
    consumer = ConfluentConsumer(_Queued([_record(i) for i in range(3)]))  # type: ignore[arg-type]
    consumed = consumer.consume(10, 0.0)
    assert [r.offset for r in consumed.records] == [0, 1, 2]
    assert consumed.errors == []
