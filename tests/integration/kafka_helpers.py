"""Helpers for tests against a real broker: unique names, topics, producing, reading back."""

from __future__ import annotations

import time
import uuid
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Literal

from confluent_kafka import (
    OFFSET_BEGINNING,
    Consumer,
    KafkaError,
    KafkaException,
    Message,
    Producer,
    TopicPartition,
)
from confluent_kafka.admin import AdminClient, NewTopic, TopicMetadata

Headers = list[tuple[str, str | bytes | None]]
OutgoingMessage = tuple[bytes | None, bytes | None, Headers | None]
"""``(key, value, headers)`` to produce."""

IsolationLevel = Literal["read_committed", "read_uncommitted"]

_COORDINATOR_BUSY = frozenset(
    {
        KafkaError.NOT_COORDINATOR,
        KafkaError.COORDINATOR_LOAD_IN_PROGRESS,
        KafkaError.COORDINATOR_NOT_AVAILABLE,
    }
)


@dataclass(frozen=True, slots=True)
class ReadMessage:
    """One record read back from a topic."""

    partition: int
    offset: int
    key: bytes | None
    value: bytes | None
    headers: tuple[tuple[str, str | bytes | None], ...]
    timestamp: int


def unique_name(prefix: str) -> str:
    """A topic/group/transactional id no other test (or earlier run) has used."""
    return f"{prefix}-{uuid.uuid4().hex[:12]}"


def unique_group(prefix: str = "group") -> str:
    """A fresh consumer group name."""
    return unique_name(prefix)


def create_topic(
    bootstrap: str,
    partitions: int = 1,
    *,
    prefix: str = "test",
    name: str | None = None,
    config: Mapping[str, str] | None = None,
    timeout: float = 30.0,
) -> str:
    """Create a topic (`name`, or a unique one) and wait until every partition has a leader."""
    name = name or unique_name(prefix)
    admin = AdminClient({"bootstrap.servers": bootstrap})
    # replication_factor=-1: the cluster's default, so this also works against a real cluster.
    topic = NewTopic(
        name, num_partitions=partitions, replication_factor=-1, config=dict(config or {})
    )
    admin.create_topics([topic], operation_timeout=timeout)[name].result(timeout)
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        meta = admin.list_topics(topic=name, timeout=timeout).topics.get(name)
        if meta is not None and _all_led(meta, partitions):
            return name
        time.sleep(0.1)
    raise TimeoutError(f"topic {name} has no leader for all {partitions} partitions")


def produce(
    bootstrap: str,
    topic: str,
    messages: Iterable[OutgoingMessage],
    *,
    partition: int | None = None,
    timeout: float = 30.0,
) -> int:
    """Produce ``(key, value, headers)`` messages idempotently, flush, return how many."""
    producer = Producer(
        {"bootstrap.servers": bootstrap, "enable.idempotence": True, "linger.ms": 5}
    )
    errors: list[KafkaError] = []

    def on_delivery(err: KafkaError | None, _msg: Message) -> None:
        if err is not None:
            errors.append(err)

    count = 0
    for key, value, headers in messages:
        while True:
            try:
                producer.produce(
                    topic,
                    value,
                    key,
                    partition=-1 if partition is None else partition,  # -1: the partitioner
                    headers=headers,
                    on_delivery=on_delivery,
                )
                break
            except BufferError:  # local queue full: let deliveries drain
                producer.poll(0.1)
        count += 1
        producer.poll(0)
    remaining = producer.flush(timeout)
    if remaining or errors:
        raise KafkaException(f"{remaining} undelivered, errors: {errors[:5]}")
    return count


def read_topic(
    bootstrap: str,
    topic: str,
    *,
    isolation_level: IsolationLevel = "read_uncommitted",
    timeout: float = 30.0,
) -> list[ReadMessage]:
    """Every record of every partition, from the beginning up to the end of each partition."""
    consumer = Consumer(
        {
            "bootstrap.servers": bootstrap,
            "group.id": unique_group("reader"),  # never commits; required by librdkafka
            "enable.auto.commit": False,
            "enable.partition.eof": True,
            "isolation.level": isolation_level,
            # End of partition is noticed when a fetch returns empty: don't let it idle 500 ms.
            "fetch.wait.max.ms": 20,
        }
    )
    try:
        partitions = partition_ids(consumer, topic, timeout)
        consumer.assign([TopicPartition(topic, p, OFFSET_BEGINNING) for p in partitions])
        pending = set(partitions)
        seen: list[ReadMessage] = []
        deadline = time.monotonic() + timeout
        while pending:
            if time.monotonic() >= deadline:
                raise TimeoutError(f"{topic}: partitions {sorted(pending)} never reached the end")
            for msg in consumer.consume(num_messages=1000, timeout=0.1):
                err = msg.error()
                if err is not None and err.code() == KafkaError._PARTITION_EOF:
                    pending.discard(msg.partition())
                elif err is not None:
                    raise KafkaException(err)
                else:
                    seen.append(_as_read(msg))
        return sorted(seen, key=lambda m: (m.partition, m.offset))
    finally:
        consumer.close()


def partition_ids(client: Consumer, topic: str, timeout: float = 10.0) -> list[int]:
    """The partition numbers of ``topic``."""
    meta = client.list_topics(topic=topic, timeout=timeout).topics[topic]
    if meta.error is not None:
        raise KafkaException(meta.error)
    return sorted(meta.partitions)


def end_offsets(bootstrap: str, topic: str, timeout: float = 10.0) -> dict[int, int]:
    """High watermark of each partition."""
    consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": unique_group("probe")})
    try:
        return {
            p: consumer.get_watermark_offsets(TopicPartition(topic, p), timeout=timeout)[1]
            for p in partition_ids(consumer, topic, timeout)
        }
    finally:
        consumer.close()


def committed_offsets(
    bootstrap: str, group: str, topic: str, timeout: float = 30.0
) -> dict[int, int]:
    """The offsets ``group`` committed on each partition of ``topic`` (negative: none).

    Retries while the group coordinator is moving or loading, as it is after a broker restart.
    """
    consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": group})
    deadline = time.monotonic() + timeout
    try:
        wanted = [TopicPartition(topic, p) for p in partition_ids(consumer, topic, timeout)]
        while True:
            try:
                committed = consumer.committed(wanted, timeout=timeout)
            except KafkaException as exc:
                err = exc.args[0]
                busy = isinstance(err, KafkaError) and err.code() in _COORDINATOR_BUSY
                if not busy or time.monotonic() >= deadline:
                    raise
                time.sleep(0.2)
                continue
            return {tp.partition: tp.offset for tp in committed}
    finally:
        consumer.close()


def _all_led(meta: TopicMetadata, partitions: int) -> bool:
    leaders = [p.leader for p in meta.partitions.values()]
    return meta.error is None and len(leaders) == partitions and min(leaders) >= 0


def _as_read(msg: Message) -> ReadMessage:
    partition, offset, headers = msg.partition(), msg.offset(), msg.headers()
    assert partition is not None and offset is not None, "a consumed record has both"
    assert not isinstance(headers, dict), "librdkafka hands consumed headers as a list"
    return ReadMessage(
        partition=partition,
        offset=offset,
        key=msg.key(),
        value=msg.value(),
        headers=tuple(headers or ()),
        timestamp=msg.timestamp()[1],
    )
