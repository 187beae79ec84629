"""The producer's delivery callback of a batch (``Producer.ack_tally``): the native counter
behind librdkafka and the fake's, alike."""

from __future__ import annotations

import pytest
from confluent_kafka import KafkaError, Message, Producer

from stream_validator.errors import KafkaErrorInfo
from stream_validator.kafka.confluent import ConfluentProducer
from stream_validator.kafka.fake import FakeBroker
from stream_validator.kafka.ports import DeliveryFailure, DeliveryReport
from stream_validator.records import OutputRecord, SourceRecord


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


class HoldingClient:
    """confluent-kafka's produce() as the silent counter relies on it: the delivery
    callback held once per record until the record's fate is served (``serve``), and called
    for a failure only (``delivery.report.only.error``)."""

    def __init__(self, *, keeps_callback: bool = True) -> None:
        self.keeps_callback = keeps_callback
        self.queued: list[tuple[object, bytes | None]] = []
        self.produced: list[tuple[object, ...]] = []

    def produce(self, *args: object, **kwargs: object) -> None:
        if "on_delivery" in kwargs:  # produce(topic, key=..., value=..., on_delivery=...)
            callback, value = kwargs["on_delivery"], kwargs["value"]
        else:  # positional, as produce_batch calls it
            callback, value = args[4], args[1]
            self.produced.append(args[:4] + args[5:])  # without the callback: not held twice
        if value == b"full":
            raise BufferError("Local: Queue full")
        if self.keeps_callback:
            self.queued.append((callback, value))  # type: ignore[arg-type]

    def serve(self, *, failing: bytes | None = None) -> None:
        """Every queued record's fate: acknowledged, or failed when its value is ``failing``."""
        while self.queued:
            # The client frees each record's state once served: its reference goes.
            callback, value = self.queued.pop(0)
            if value == failing:
                error = KafkaError(KafkaError._MSG_TIMED_OUT, "timed out")
                callback(error, Message(topic="clean", value=value))  # type: ignore[operator]
            del callback


def _silent_tally(failures: list[DeliveryFailure], client: HoldingClient) -> object:
    producer = ConfluentProducer(Producer({"bootstrap.servers": "127.0.0.1:1"}), silent_acks=True)
    producer._producer = client  # type: ignore[assignment]
    return producer


def _records(values: list[bytes]) -> list[OutputRecord]:
    source = SourceRecord("src", 0, 0, None, b"", [], None)
    return [OutputRecord("clean", "clean", b"k", v, [], 1_764_600_000_000, source) for v in values]


def test_silent_acknowledgements_are_counted_from_the_records_the_client_still_holds() -> None:
    """With failures-only reports, a record counts as acknowledged once the client let go
    of its callback without calling it; a failure is handed on and never counted."""
    failures: list[DeliveryFailure] = []
    client = HoldingClient()
    producer = _silent_tally(failures, client)
    tally = producer.ack_tally(failures.append)  # type: ignore[attr-defined]
    records = _records([b"a", b"b", b"c", b"d"])
    assert producer.produce_batch(records, 0, tally) == 4  # type: ignore[attr-defined]
    assert (tally.acked, tally.undecided) == (0, 4)
    client.serve(failing=b"c")
    assert (tally.acked, tally.undecided) == (3, 0)
    assert [(f.error.code, f.value) for f in failures] == [("_MSG_TIMED_OUT", b"c")]
    # The positional arguments confluent-kafka's produce() takes, in its order.
    assert client.produced[0][:4] == ("clean", b"a", b"k", -1)
    assert client.produced[0][4:] == (None, 1_764_600_000_000, None)


def test_silent_produce_batch_stops_at_the_record_the_client_does_not_take() -> None:
    """A record the client refuses is not counted; the batch stops there."""
    client = HoldingClient()
    producer = _silent_tally([], client)
    tally = producer.ack_tally([].append)  # type: ignore[attr-defined]
    assert producer.produce_batch(_records([b"a", b"full", b"c"]), 0, tally) == 1  # type: ignore[attr-defined]
    client.serve()
    assert (tally.acked, tally.undecided) == (1, 0)


def test_a_client_that_does_not_keep_the_callback_is_refused_not_counted_as_delivered() -> None:
    """Fail closed: if the client does not hold the callback per record, a record would
    look acknowledged at once; produce_batch raises instead."""
    client = HoldingClient(keeps_callback=False)
    producer = _silent_tally([], client)
    tally = producer.ack_tally([].append)  # type: ignore[attr-defined]
    with pytest.raises(RuntimeError, match="did not keep the delivery callback"):
        producer.produce_batch(_records([b"a"]), 0, tally)  # type: ignore[attr-defined]
    assert tally.acked == 0


def test_silent_produce_tells_each_outcome_at_poll() -> None:
    """produce() (a record sent on its own) learns its acknowledgement at the next poll
    and its failure from the client, once each."""
    client = HoldingClient()
    producer = _silent_tally([], client)
    reports: list[DeliveryReport] = []
    for record in _records([b"a", b"b"]):
        producer.produce(record, reports.append)  # type: ignore[attr-defined]
    client.poll = lambda timeout: 0  # type: ignore[attr-defined]
    assert producer.poll(0) == 0 and reports == []  # type: ignore[attr-defined]
    client.serve(failing=b"b")
    assert producer.poll(0) == 1  # type: ignore[attr-defined]
    assert [(r.topic, r.error.code if r.error else None) for r in reports] == [
        ("clean", "_MSG_TIMED_OUT"),
        ("clean", None),
    ]
    assert producer.poll(0) == 0 and len(reports) == 2  # type: ignore[attr-defined]


def test_silent_mode_on_the_real_client_hands_failures_on_and_counts_none_acknowledged() -> None:
    """confluent-kafka with delivery.report.only.error: records that time out (no broker)
    reach on_failure, none counts as acknowledged, none stays undecided."""
    client = Producer(
        {
            "bootstrap.servers": "127.0.0.1:1",
            "message.timeout.ms": 200,
            "delivery.report.only.error": True,
        }
    )
    producer = ConfluentProducer(client, silent_acks=True)
    failures: list[DeliveryFailure] = []
    tally = producer.ack_tally(failures.append)
    assert producer.produce_batch(_records([b"a", b"b", b"c"]), 0, tally) == 3
    assert tally.undecided == 3  # type: ignore[attr-defined]
    assert producer.flush(10.0) == 0
    assert (tally.acked, tally.undecided) == (0, 0)  # type: ignore[attr-defined]
    assert [f.value for f in failures] == [b"a", b"b", b"c"]


def test_a_client_reporting_acknowledgements_to_a_silent_tally_is_an_error() -> None:
    """A client that reports every record (delivery.report.only.error not set) to a silent
    tally raises at the report instead of counting the record twice."""
    client = HoldingClient()
    producer = _silent_tally([], client)
    tally = producer.ack_tally([].append)  # type: ignore[attr-defined]
    producer.produce_batch(_records([b"a"]), 0, tally)  # type: ignore[attr-defined]
    callback, _ = client.queued[0]
    with pytest.raises(RuntimeError, match="acknowledgement was reported"):
        callback(None, Message(topic="clean", value=b"a"))  # type: ignore[operator]
    del callback
    assert tally.undecided == 1  # type: ignore[attr-defined]
