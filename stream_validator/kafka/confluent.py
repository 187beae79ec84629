"""The adapter's librdkafka implementation: confluent_kafka clients behind ``ports``.

Every ``KafkaException`` becomes ``KafkaClientError``, every ``KafkaError`` a
``KafkaErrorInfo`` and every ``TopicPartition`` a ``TopicPartitionKey`` here, so no
confluent_kafka type leaves this package. Build the clients with ``clients``.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from itertools import repeat
from operator import is_not
from typing import Any, cast

from confluent_kafka import (
    Consumer,
    ConsumerGroupTopicPartitions,
    IsolationLevel,
    KafkaError,
    KafkaException,
    Message,
    Producer,
    TopicPartition,
)
from confluent_kafka.admin import AdminClient
from confluent_kafka.admin._listoffsets import OffsetSpec  # not re-exported for mypy
from confluent_kafka.cimpl import NewTopic

from stream_validator._native import AckCounter
from stream_validator.errors import KafkaClientError, KafkaErrorInfo
from stream_validator.kafka.messages import read_records
from stream_validator.kafka.ports import (
    AckTally,
    CommittedOffset,
    Consumed,
    ConsumerErrorEvent,
    DeliveryCallback,
    DeliveryFailure,
    DeliveryReport,
    FailureCallback,
    GroupMetadata,
    Producible,
    RebalanceCallback,
)
from stream_validator.records import OutputRecord, TopicPartitionKey

_error = Message.error
#: Where produce_batch reads an OutputRecord: topic, key, value, headers, timestamp_ms.
_OUTPUT_AT = cast(
    tuple[int, int, int, int, int],
    tuple(
        OutputRecord._fields.index(name)
        for name in ("topic", "key", "value", "headers", "timestamp_ms")
    ),
)
#: What ends produce_batch at a record (the caller produces it alone to learn why).
_NOT_TAKEN = (BufferError, KafkaException)


def error_info(error: KafkaError) -> KafkaErrorInfo:
    """librdkafka's error as a plain value."""
    return KafkaErrorInfo(
        str(error.name()),
        str(error.str()),
        fatal=bool(error.fatal()),
        retriable=bool(error.retriable()),
        abortable=bool(error.txn_requires_abort()),
    )


def client_error(exc: KafkaException, context: str = "") -> KafkaClientError:
    """A KafkaException as the adapter's exception."""
    error = exc.args[0] if exc.args else None
    if isinstance(error, KafkaError):
        return KafkaClientError(error_info(error), context)
    return KafkaClientError(KafkaErrorInfo("_UNKNOWN", str(exc), fatal=True), context)


@contextmanager
def converted(context: str = "") -> Iterator[None]:
    """Re-raise KafkaException as KafkaClientError."""
    try:
        yield
    except KafkaException as exc:
        raise client_error(exc, context) from None


def _tps(offsets: Mapping[TopicPartitionKey, int], metadata: str | None = None) -> list[Any]:
    if metadata is None:
        return [TopicPartition(t, p, o) for (t, p), o in sorted(offsets.items())]
    return [TopicPartition(t, p, o, metadata) for (t, p), o in sorted(offsets.items())]


def _keys(partitions: Sequence[Any]) -> list[TopicPartitionKey]:
    return [(tp.topic, tp.partition) for tp in partitions]


class CommitFailures:
    """librdkafka's commit callback (the consumer's ``on_commit`` setting, run inside
    consume()): the offsets of the commits that failed, per partition, until taken."""

    __slots__ = ("_failed",)

    def __init__(self) -> None:
        self._failed: dict[TopicPartitionKey, int] = {}

    def __call__(self, error: KafkaError | None, partitions: list[TopicPartition]) -> None:
        for tp in partitions:
            if error is not None or tp.error is not None:
                self._failed[(tp.topic, tp.partition)] = tp.offset

    def take(self) -> dict[TopicPartitionKey, int]:
        if not self._failed:  # per batch: no dict built when none failed
            return {}
        failed, self._failed = self._failed, {}
        return failed


class ConfluentConsumer:
    """``ports.Consumer`` over confluent_kafka.Consumer (created with ``commit_failures``
    as its ``on_commit`` setting, or asynchronous commits' failures go unseen)."""

    def __init__(self, consumer: Consumer, commit_failures: CommitFailures | None = None) -> None:
        self._consumer = consumer
        self._commit_failures = commit_failures or CommitFailures()

    def subscribe(
        self,
        topics: Sequence[str],
        *,
        on_assign: RebalanceCallback,
        on_revoke: RebalanceCallback,
        on_lost: RebalanceCallback,
    ) -> None:
        def wrap(callback: RebalanceCallback) -> Callable[[Any, list[Any]], None]:
            return lambda _consumer, partitions: callback(_keys(partitions))

        with converted("subscribe"):
            self._consumer.subscribe(
                list(topics),
                on_assign=wrap(on_assign),
                on_revoke=wrap(on_revoke),
                on_lost=wrap(on_lost),
            )

    def assign(self, positions: Mapping[TopicPartitionKey, int]) -> None:
        with converted("assign"):
            self._consumer.assign(_tps(positions))

    def consume(self, max_records: int, timeout_s: float) -> Consumed:
        with converted("consume"):
            messages: list[Message] = self._consumer.consume(
                num_messages=max_records, timeout=timeout_s
            )
        consumed = Consumed()
        readable = messages
        # In C, no generator frame per message (error events are rare). By identity: a
        # KafkaError compared with None by == raises inside the comparison.
        if any(map(is_not, map(_error, messages), repeat(None))):
            readable = []
            for message in messages:
                error = message.error()
                if error is None:
                    readable.append(message)
                    continue
                consumed.errors.append(
                    ConsumerErrorEvent(
                        error_info(error), message.topic(), message.partition(), message.offset()
                    )
                )
        consumed.records.extend(read_records(readable, consumed.unreadable_headers))
        return consumed

    def commit(
        self, offsets: Mapping[TopicPartitionKey, int], *, asynchronous: bool = False
    ) -> None:
        with converted("commit"):
            if asynchronous:
                self._consumer.commit(offsets=_tps(offsets), asynchronous=True)
            else:
                self._consumer.commit(offsets=_tps(offsets), asynchronous=False)

    def commit_failures(self) -> dict[TopicPartitionKey, int]:
        return self._commit_failures.take()

    def committed(
        self, keys: Sequence[TopicPartitionKey], timeout_s: float
    ) -> dict[TopicPartitionKey, int]:
        if not keys:
            return {}
        with converted("committed"):
            found = self._consumer.committed([TopicPartition(t, p) for t, p in keys], timeout_s)
        return {(tp.topic, tp.partition): tp.offset for tp in found if tp.offset >= 0}

    def position(self, keys: Sequence[TopicPartitionKey]) -> dict[TopicPartitionKey, int]:
        with converted("position"):
            found = self._consumer.position([TopicPartition(t, p) for t, p in keys])
        return {(tp.topic, tp.partition): tp.offset for tp in found if tp.offset >= 0}

    def seek(self, key: TopicPartitionKey, offset: int) -> None:
        with converted(f"seek {key[0]} [{key[1]}]"):
            self._consumer.seek(TopicPartition(key[0], key[1], offset))

    def assignment(self) -> list[TopicPartitionKey]:
        with converted("assignment"):
            return _keys(self._consumer.assignment())

    def pause(self, keys: Sequence[TopicPartitionKey]) -> None:
        with converted("pause"):
            self._consumer.pause([TopicPartition(t, p) for t, p in keys])

    def resume(self, keys: Sequence[TopicPartitionKey]) -> None:
        with converted("resume"):
            self._consumer.resume([TopicPartition(t, p) for t, p in keys])

    def offsets_for_times(
        self, times_ms: Mapping[TopicPartitionKey, int], timeout_s: float
    ) -> dict[TopicPartitionKey, int | None]:
        with converted("offsets_for_times"):
            found = self._consumer.offsets_for_times(_tps(times_ms), timeout=timeout_s)
        return {(tp.topic, tp.partition): tp.offset if tp.offset >= 0 else None for tp in found}

    def group_metadata(self) -> GroupMetadata:
        with converted("consumer_group_metadata"):
            metadata: GroupMetadata = self._consumer.consumer_group_metadata()
        return metadata

    def close(self) -> None:
        try:
            self._consumer.close()
        except RuntimeError:  # already closed
            return
        except KafkaException as exc:
            raise client_error(exc, "close") from None


class ConfluentProducer:
    """``ports.Producer`` over confluent_kafka.Producer.

    ``silent_acks``: the client was built with ``delivery.report.only.error`` (the service's
    producer, ``clients.create_producer``): it reports failed outputs only, so an
    acknowledged output costs no message object, argument tuple or Python call. The
    acknowledgements are then counted natively from the callback's reference count
    (``_native.AckCounter``, native/src/delivery.rs, which checks at every produce call that
    the client keeps the reference it counts on); ``produce``'s callback still learns every
    outcome (an acknowledgement once ``poll`` or ``flush`` served it, without its partition
    and offset: -1)."""

    def __init__(self, producer: Producer, *, silent_acks: bool = False) -> None:
        self._producer = producer
        self._silent = silent_acks
        #: Silent mode: records ``produce`` sent, whose acknowledgement is still to be told.
        self._untold: list[tuple[AckCounter, DeliveryCallback, str]] = []

    def produce(self, record: Producible, on_delivery: DeliveryCallback) -> None:
        topic = record.topic

        def report(err: KafkaError | None, msg: Message) -> DeliveryReport:
            info = None if err is None else error_info(err)
            partition, offset = msg.partition(), msg.offset()
            return DeliveryReport(
                topic,
                info,
                -1 if partition is None else partition,
                -1 if offset is None else offset,
            )

        def delivered(err: KafkaError | None, msg: Message) -> None:
            on_delivery(report(err, msg))

        kwargs: dict[str, Any] = {
            "key": record.key,
            "value": record.value,
            "headers": record.headers or None,
        }
        if record.timestamp_ms is not None:
            kwargs["timestamp"] = record.timestamp_ms
        with converted(f"produce to {topic}"):
            if not self._silent:
                self._producer.produce(topic, on_delivery=delivered, **kwargs)
                return
            # A failure reaches on_delivery from the client; an acknowledgement is told
            # by poll() or flush() once the counter has seen it.
            counter = AckCounter(on_delivery, report, True)
            counter.produce_one(self._producer.produce, (topic,), kwargs)
        self._untold.append((counter, on_delivery, topic))

    def _tell_acknowledged(self) -> int:
        """Silent mode: tell ``produce``'s callbacks the acknowledgements served meanwhile
        (in produce order); how many were told."""
        told = 0
        waiting: list[tuple[AckCounter, DeliveryCallback, str]] = []
        untold, self._untold = self._untold, waiting
        for index, (counter, on_delivery, topic) in enumerate(untold):
            if counter.undecided:
                waiting.append((counter, on_delivery, topic))
            elif counter.acked:  # else it failed: the client told on_delivery already
                told += 1
                try:
                    on_delivery(DeliveryReport(topic, None))
                except BaseException:
                    waiting += untold[index + 1 :]  # told at the next poll
                    raise
        return told

    def ack_tally(self, on_failure: FailureCallback) -> AckTally:
        # Native: an acknowledged record costs no Python frame (two before: the client's
        # callback and the committer's counter); a failed one is converted here.
        tally: AckTally = AckCounter(on_failure, _delivery_failure, self._silent)
        return tally

    def produce_batch(self, records: Sequence[Producible], start: int, tally: AckTally) -> int:
        counter = cast(AckCounter, tally)  # ack_tally's
        # The loop is native (delivery.rs): positional arguments (confluent-kafka parses
        # keyword arguments per call, about 0.7 µs per record more), an OutputRecord read by
        # index; a change of the argument order would show in
        # tests/integration/test_service.py, which checks that key, headers and timestamp
        # reach the clean topic.
        return counter.produce_batch(
            self._producer.produce,
            records if type(records) is list else list(records),
            start,
            OutputRecord,
            _OUTPUT_AT,
            _NOT_TAKEN,
        )

    def poll(self, timeout_s: float) -> int:
        with converted("poll"):
            served = int(self._producer.poll(timeout_s))
        return served + (self._tell_acknowledged() if self._untold else 0)

    def flush(self, timeout_s: float) -> int:
        with converted("flush"):
            left = int(self._producer.flush(timeout_s))
        if self._untold:
            self._tell_acknowledged()
        return left

    def init_transactions(self, timeout_s: float) -> None:
        with converted():
            self._producer.init_transactions(timeout_s)

    def begin_transaction(self) -> None:
        with converted():
            self._producer.begin_transaction()

    def send_offsets_to_transaction(
        self,
        offsets: Mapping[TopicPartitionKey, int],
        group: GroupMetadata,
        timeout_s: float,
        metadata: str | None = None,
    ) -> None:
        with converted():
            self._producer.send_offsets_to_transaction(_tps(offsets, metadata), group, timeout_s)

    def commit_transaction(self, timeout_s: float) -> None:
        with converted():
            self._producer.commit_transaction(timeout_s)

    def abort_transaction(self, timeout_s: float) -> None:
        with converted():
            self._producer.abort_transaction(timeout_s)

    def topics(self, timeout_s: float) -> dict[str, int]:
        with converted("list_topics"):
            metadata = self._producer.list_topics(timeout=timeout_s)
        return {n: len(t.partitions) for n, t in metadata.topics.items() if t.error is None}


def _delivery_failure(err: KafkaError, msg: Message) -> DeliveryFailure:
    """A failed output of ``produce_batch``, from the client's report (rare)."""
    key, value = msg.key(), msg.value()
    return DeliveryFailure(
        error_info(err),
        msg.topic() or "",
        key.encode() if isinstance(key, str) else key,
        value.encode() if isinstance(value, str) else value,
    )


class ConfluentAdmin:
    """``ports.Admin`` over confluent_kafka's AdminClient."""

    def __init__(self, admin: AdminClient) -> None:
        self._admin = admin

    def topics(self, timeout_s: float) -> dict[str, int]:
        with converted("list_topics"):
            metadata = self._admin.list_topics(timeout=timeout_s)
        self._serve()
        return {n: len(t.partitions) for n, t in metadata.topics.items() if t.error is None}

    def _serve(self) -> None:
        """Deliver the log lines (and errors) librdkafka queued meanwhile: an admin client
        is served only by poll()."""
        with converted("poll"):
            self._admin.poll(0)

    def create_topics(
        self, names: Sequence[str], *, partitions: int, replication_factor: int, timeout_s: float
    ) -> dict[str, str]:
        existing = self.topics(timeout_s)
        wanted = sorted(set(names))
        outcome = {name: "exists" for name in wanted if name in existing}
        new = [
            NewTopic(n, num_partitions=partitions, replication_factor=replication_factor)
            for n in wanted
            if n not in existing
        ]
        if not new:
            return outcome
        for name, future in self._admin.create_topics(new, operation_timeout=timeout_s).items():
            try:
                future.result(timeout_s)
                outcome[name] = "created"
            except KafkaException as exc:
                error = client_error(exc, f"cannot create topic {name}")
                if error.info.code != "TOPIC_ALREADY_EXISTS":
                    raise error from None
                outcome[name] = "exists"
        return outcome

    def groups(self, prefix: str, timeout_s: float) -> list[str]:
        with converted("list_consumer_groups"):
            listing = self._admin.list_consumer_groups(request_timeout=timeout_s).result(timeout_s)
            # A broker that did not answer hides its groups: a replay would then send again
            # what they settled, so a partial listing is an error, never a shorter list.
            for problem in listing.errors or ():
                raise problem
        return sorted(g.group_id for g in listing.valid or () if g.group_id.startswith(prefix))

    def group_offsets(
        self, group: str, keys: Sequence[TopicPartitionKey], timeout_s: float
    ) -> dict[TopicPartitionKey, CommittedOffset]:
        request = ConsumerGroupTopicPartitions(group, [TopicPartition(t, p) for t, p in keys])
        with converted(f"list_consumer_group_offsets {group}"):
            futures = self._admin.list_consumer_group_offsets(
                [request], require_stable=True, request_timeout=timeout_s
            )
            answer = futures[group].result(timeout_s)
        self._serve()
        return {
            (tp.topic, tp.partition): CommittedOffset(tp.offset, tp.metadata or None)
            for tp in answer.topic_partitions
            if tp.offset >= 0
        }

    def end_offsets(
        self, keys: Sequence[TopicPartitionKey], timeout_s: float
    ) -> dict[TopicPartitionKey, int]:
        latest: OffsetSpec = OffsetSpec.latest()  # type: ignore[no-untyped-call]
        specs = {TopicPartition(t, p): latest for t, p in keys}
        with converted("list_offsets"):
            futures = self._admin.list_offsets(
                specs, isolation_level=IsolationLevel.READ_COMMITTED, request_timeout=timeout_s
            )
            ends = {
                (tp.topic, tp.partition): f.result(timeout_s).offset for tp, f in futures.items()
            }
        self._serve()
        return ends
