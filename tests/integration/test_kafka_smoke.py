"""Smoke tests proving the test broker behaves like Kafka: groups, transactions, restarts."""

from __future__ import annotations

import time

import pytest
from confluent_kafka import Consumer, Message, Producer
from kafka_helpers import (
    OutgoingMessage,
    committed_offsets,
    create_topic,
    end_offsets,
    produce,
    read_topic,
    unique_group,
    unique_name,
)

from stream_validator.cli.devkafka import LocalKafkaBroker

pytestmark = [pytest.mark.integration, pytest.mark.timeout(240)]


def _messages(count: int, tag: str = "m") -> list[OutgoingMessage]:
    return [
        (f"key-{i}".encode(), f"{tag}-{i}".encode(), [("seq", str(i).encode())])
        for i in range(count)
    ]


def _group_consumer(bootstrap: str, group: str, topic: str) -> Consumer:
    consumer = Consumer(
        {
            "bootstrap.servers": bootstrap,
            "group.id": group,
            "auto.offset.reset": "earliest",
            "enable.auto.commit": False,
            "isolation.level": "read_committed",
        }
    )
    consumer.subscribe([topic])
    return consumer


def _next_batch(consumer: Consumer) -> list[Message]:
    batch = consumer.consume(num_messages=1000, timeout=0.5)
    for msg in batch:
        assert msg.error() is None, msg.error()
    return batch


def _consume_n(consumer: Consumer, count: int, timeout: float = 60.0) -> list[Message]:
    got: list[Message] = []
    deadline = time.monotonic() + timeout
    while len(got) < count and time.monotonic() < deadline:
        got += _next_batch(consumer)
    return got


def test_group_sees_every_offset_of_10k_messages_exactly_once(kafka_bootstrap: str) -> None:
    """A consumer group reads each (partition, offset) of 10k messages once and commits the end."""
    topic = create_topic(kafka_bootstrap, partitions=3)
    produce(kafka_bootstrap, topic, _messages(10_000))
    group = unique_group()
    consumer = _group_consumer(kafka_bootstrap, group, topic)
    try:
        got: list[Message] = []
        deadline = time.monotonic() + 60
        while len(got) < 10_000 and time.monotonic() < deadline:
            batch = _next_batch(consumer)
            if batch:
                got += batch
                consumer.commit(asynchronous=False)
    finally:
        consumer.close()
    ends = end_offsets(kafka_bootstrap, topic)
    positions = [(m.partition(), m.offset()) for m in got]
    assert len(positions) == len(set(positions)) == 10_000
    assert set(positions) == {(p, o) for p, end in ends.items() for o in range(end)}
    assert all(end > 0 for end in ends.values())
    assert committed_offsets(kafka_bootstrap, group, topic) == ends
    assert {m.value() for m in got} == {value for _, value, _ in _messages(10_000)}


def test_transaction_commits_outputs_and_input_offsets_together(kafka_bootstrap: str) -> None:
    """Outputs and the group's input offsets committed in one transaction are both visible."""
    source = create_topic(kafka_bootstrap, partitions=2, prefix="in")
    sink = create_topic(kafka_bootstrap, partitions=2, prefix="out")
    produce(kafka_bootstrap, source, _messages(200))
    group = unique_group()
    consumer = _group_consumer(kafka_bootstrap, group, source)
    producer = Producer(
        {"bootstrap.servers": kafka_bootstrap, "transactional.id": unique_name("txn")}
    )
    producer.init_transactions(30)
    done = 0
    try:
        deadline = time.monotonic() + 60
        while done < 200 and time.monotonic() < deadline:
            batch = _next_batch(consumer)
            if not batch:
                continue
            producer.begin_transaction()
            for msg in batch:
                producer.produce(sink, b"seen:" + (msg.value() or b""), msg.key())
            positions = consumer.position(consumer.assignment())
            producer.send_offsets_to_transaction(positions, consumer.consumer_group_metadata(), 30)
            producer.commit_transaction(30)
            done += len(batch)
    finally:
        consumer.close()
    outputs = read_topic(kafka_bootstrap, sink, isolation_level="read_committed")
    assert sorted(m.value for m in outputs) == sorted(b"seen:" + v for _, v, _ in _messages(200))
    assert committed_offsets(kafka_bootstrap, group, source) == end_offsets(kafka_bootstrap, source)


def test_aborted_transaction_is_invisible_to_read_committed(kafka_bootstrap: str) -> None:
    """Aborted records reach read_uncommitted readers only; committed ones reach both."""
    topic = create_topic(kafka_bootstrap, partitions=1)
    producer = Producer(
        {"bootstrap.servers": kafka_bootstrap, "transactional.id": unique_name("txn")}
    )
    producer.init_transactions(30)
    producer.begin_transaction()
    for i in range(5):
        producer.produce(topic, f"aborted-{i}".encode())
    producer.flush(30)
    producer.abort_transaction(30)
    producer.begin_transaction()
    for i in range(3):
        producer.produce(topic, f"committed-{i}".encode())
    producer.commit_transaction(30)

    committed = read_topic(kafka_bootstrap, topic, isolation_level="read_committed")
    everything = read_topic(kafka_bootstrap, topic, isolation_level="read_uncommitted")
    assert [m.value for m in committed] == [f"committed-{i}".encode() for i in range(3)]
    assert [m.value for m in everything] == [
        *(f"aborted-{i}".encode() for i in range(5)),
        *(f"committed-{i}".encode() for i in range(3)),
    ]


@pytest.mark.slow
def test_data_survives_stop_and_restart(restartable_kafka: LocalKafkaBroker) -> None:
    """Records and committed group offsets survive a graceful stop and a restart."""
    bootstrap = restartable_kafka.bootstrap_servers
    topic = create_topic(bootstrap, partitions=2)
    produce(bootstrap, topic, _messages(500))
    group = unique_group()
    consumer = _group_consumer(bootstrap, group, topic)
    try:
        assert len(_consume_n(consumer, 500)) == 500
        consumer.commit(asynchronous=False)
    finally:
        consumer.close()
    before = read_topic(bootstrap, topic)

    assert restartable_kafka.stop()
    assert not restartable_kafka.is_running()
    assert restartable_kafka.start(keep_data=True) == bootstrap

    assert read_topic(bootstrap, topic) == before
    assert committed_offsets(bootstrap, group, topic) == end_offsets(bootstrap, topic)


@pytest.mark.slow
def test_data_survives_kill_9_and_restart(restartable_kafka: LocalKafkaBroker) -> None:
    """Acknowledged records survive SIGKILL of the broker and a restart on the same data."""
    bootstrap = restartable_kafka.bootstrap_servers
    topic = create_topic(bootstrap, partitions=2)
    produce(bootstrap, topic, _messages(500))
    before = read_topic(bootstrap, topic)

    assert restartable_kafka.kill()
    assert not restartable_kafka.is_running()
    assert restartable_kafka.restart() == bootstrap

    assert read_topic(bootstrap, topic) == before
    assert len(before) == 500
