"""The in-memory broker behaves like Kafka where the service and the runners rely on it."""

from __future__ import annotations

import pytest

from stream_validator.errors import KafkaClientError
from stream_validator.kafka.fake import FakeBroker, FakeConsumer
from stream_validator.kafka.io import Status, produce_all
from stream_validator.kafka.ports import PARTITION_EOF, DeliveryReport
from stream_validator.records import OutputRecord, SourceRecord


def out(topic: str, value: bytes, key: bytes | None = None) -> OutputRecord:
    source = SourceRecord("src", 0, 0, None, value, [], None)
    return OutputRecord("clean", topic, key, value, [], None, source)


def no_rebalance(_keys: list[tuple[str, int]]) -> None:
    return None


def subscribed(broker: FakeBroker, *topics: str, group: str = "g") -> FakeConsumer:
    consumer = broker.consumer(group)
    consumer.subscribe(
        list(topics), on_assign=no_rebalance, on_revoke=no_rebalance, on_lost=no_rebalance
    )
    return consumer


def test_records_are_read_in_offset_order_from_the_committed_offset() -> None:
    """A new member of a group starts at the group's committed offset."""
    broker = FakeBroker()
    broker.create_topic("t")
    for i in range(5):
        broker.append("t", str(i).encode())
    broker.commit_offsets("g", {("t", 0): 2})
    consumed = subscribed(broker, "t").consume(10, 0.0)
    assert [r.offset for r in consumed.records] == [2, 3, 4]


def test_open_transaction_hides_records_and_abort_discards_them() -> None:
    """read_committed readers stop at an open transaction; aborted records are skipped."""
    broker = FakeBroker()
    broker.create_topic("t")
    producer = broker.producer(transactional_id="tx")
    producer.init_transactions(1.0)
    producer.begin_transaction()
    produce_all(producer, [out("t", b"a")], timeout_s=1.0)
    assert broker.records("t") == []
    producer.abort_transaction(1.0)
    broker.append("t", b"b")
    consumer = subscribed(broker, "t")
    assert [r.value for r in consumer.consume(10, 0.0).records] == [b"b"]


def test_commit_transaction_makes_records_and_offsets_visible_together() -> None:
    """A committed transaction publishes its records and stores the group's offsets."""
    broker = FakeBroker()
    broker.create_topic("t")
    producer = broker.producer(transactional_id="tx")
    consumer = subscribed(broker, "t", group="g")
    producer.init_transactions(1.0)
    producer.begin_transaction()
    produce_all(producer, [out("t", b"a")], timeout_s=1.0)
    producer.send_offsets_to_transaction({("src", 0): 7}, consumer.group_metadata(), 1.0, "m")
    assert broker.committed("g") == {}
    producer.commit_transaction(1.0)
    assert [r.value for r in broker.records("t")] == [b"a"]
    assert broker.committed("g") == {("src", 0): 7}
    assert broker.groups["g"][("src", 0)].metadata == "m"


def test_new_producer_with_the_same_id_fences_the_old_one_and_aborts_its_transaction() -> None:
    """init_transactions fences the older producer: its open records never become visible."""
    broker = FakeBroker()
    broker.create_topic("t")
    old = broker.producer(transactional_id="tx")
    old.init_transactions(1.0)
    old.begin_transaction()
    produce_all(old, [out("t", b"zombie")], timeout_s=1.0)
    broker.producer(transactional_id="tx").init_transactions(1.0)
    with pytest.raises(KafkaClientError) as caught:
        old.commit_transaction(1.0)
    assert caught.value.info.fatal and caught.value.info.code == "_FENCED"
    assert broker.records("t", committed_only=False) == []


def test_refused_record_fails_its_whole_message_set() -> None:
    """An invalid record fails its batchmates too; produced alone, only it fails."""
    broker = FakeBroker()
    broker.create_topic("t")
    broker.faults.refuse = lambda r: "INVALID_RECORD" if r.value == b"bad" else None
    producer = broker.producer()
    records = [out("t", b"ok"), out("t", b"bad"), out("t", b"fine")]
    together = produce_all(producer, records, timeout_s=1.0)
    assert [d.error.code if d.error else None for d in together.items] == [
        "_INVALID_DIFFERENT_RECORD",
        "INVALID_RECORD",
        "_INVALID_DIFFERENT_RECORD",
    ]
    apart = produce_all(producer, records, timeout_s=1.0, alone=lambda r: r.value == b"bad")
    assert [d.status for d in apart.items] == [Status.DELIVERED, Status.REFUSED, Status.DELIVERED]


def test_scripted_delivery_failures_are_retriable_and_counted_down() -> None:
    """The nth record and the next deliveries to a topic fail once, retriably."""
    broker = FakeBroker()
    broker.create_topic("t")
    broker.create_topic("u")
    broker.faults.fail_delivery(nth=2)
    broker.faults.fail_delivery(topic="u", times=1)
    producer = broker.producer()
    first = produce_all(producer, [out("t", b"1"), out("t", b"2"), out("u", b"3")], timeout_s=1)
    assert [d.status for d in first.items] == [Status.DELIVERED, Status.FAILED, Status.FAILED]
    assert all(d.error is None or d.error.retriable for d in first.items)
    again = produce_all(producer, [out("t", b"2"), out("u", b"3")], timeout_s=1)
    assert again.all_delivered


def test_client_size_check_refuses_at_produce() -> None:
    """A record over the producer's message_max_bytes is refused before it is queued."""
    broker = FakeBroker()
    broker.create_topic("t")
    producer = broker.producer(message_max_bytes=10)
    with pytest.raises(KafkaClientError) as caught:
        producer.produce(out("t", b"x" * 11), lambda _r: None)
    assert caught.value.info.code == "MSG_SIZE_TOO_LARGE"


def test_full_queue_raises_buffer_error_until_polled() -> None:
    """produce() raises BufferError on a full queue; produce_all polls and goes on."""
    broker = FakeBroker()
    broker.create_topic("t")
    producer = broker.producer(queue_size=2)
    reports: list[DeliveryReport] = []
    producer.produce(out("t", b"1"), reports.append)
    producer.produce(out("t", b"2"), reports.append)
    with pytest.raises(BufferError):
        producer.produce(out("t", b"3"), reports.append)
    assert produce_all(producer, [out("t", b"3"), out("t", b"4")], timeout_s=1).all_delivered
    assert len(broker.records("t")) == 4


def test_held_topic_leaves_deliveries_unacknowledged() -> None:
    """While a topic is held, flush returns what is left and produce_all reports UNACKED."""
    broker = FakeBroker()
    broker.create_topic("t")
    broker.faults.hold_topics.add("t")
    deliveries = produce_all(broker.producer(), [out("t", b"1")], timeout_s=1)
    assert [d.status for d in deliveries.items] == [Status.UNACKED]


def test_scripted_rebalance_runs_callbacks_in_consume() -> None:
    """revoke() takes effect in the next consume(); the callback can still commit."""
    broker = FakeBroker()
    broker.create_topic("t", partitions=2)
    events: list[tuple[str, list[tuple[str, int]]]] = []
    consumer = broker.consumer("g")

    def on_revoke(keys: list[tuple[str, int]]) -> None:
        events.append(("revoked", keys))
        consumer.commit({keys[0]: 0})

    consumer.subscribe(
        ["t"],
        on_assign=lambda keys: events.append(("assigned", keys)),
        on_revoke=on_revoke,
        on_lost=lambda keys: events.append(("lost", keys)),
    )
    consumer.consume(1, 0.0)
    consumer.revoke([("t", 1)])
    consumer.lose([("t", 0)])
    consumer.consume(1, 0.0)
    assert events == [
        ("assigned", [("t", 0), ("t", 1)]),
        ("revoked", [("t", 1)]),
        ("lost", [("t", 0)]),
    ]
    assert consumer.assignment() == []
    with pytest.raises(KafkaClientError):
        consumer.commit({("t", 0): 1})  # another member owns it now


def test_partition_eof_is_reported_once_at_the_end() -> None:
    """With partition_eof, reaching the end yields one _PARTITION_EOF event."""
    broker = FakeBroker()
    broker.create_topic("t")
    broker.append("t", b"a")
    consumer = broker.consumer("g", partition_eof=True)
    consumer.assign({("t", 0): 0})
    first = consumer.consume(10, 0.0)
    assert [r.value for r in first.records] == [b"a"]
    assert [(e.info.code, e.offset) for e in first.errors] == [(PARTITION_EOF, 1)]
    assert consumer.consume(10, 0.0).errors == []


def test_seek_and_offsets_for_times() -> None:
    """seek() rewinds; offsets_for_times finds the first record at or after a time."""
    broker = FakeBroker()
    broker.create_topic("t")
    for ts in (10, 20, 30):
        broker.append("t", b"x", timestamp_ms=ts)
    consumer = broker.consumer("g")
    consumer.assign({("t", 0): 0})
    consumer.consume(10, 0.0)
    consumer.seek(("t", 0), 1)
    assert [r.offset for r in consumer.consume(10, 0.0).records] == [1, 2]
    assert consumer.offsets_for_times({("t", 0): 15}, 1.0) == {("t", 0): 1}
    with pytest.raises(KafkaClientError):
        consumer.seek(("other", 0), 0)
