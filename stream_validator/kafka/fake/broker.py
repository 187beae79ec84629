"""An in-memory Kafka for unit tests: the adapter's ports without a broker.

Modelled on Sentry Arroyo's ``LocalBroker``: topics are lists of partitions, a partition a
list of entries with offsets; consumer groups keep committed offsets; a transaction's
records are appended as *open* and become visible to ``read_committed`` consumers only when
it commits (an abort hides them for good). Everything is synchronous and deterministic:
produce() queues, poll()/flush() deliver and run the callbacks, consume() never waits.

Scriptable faults (``broker.faults``): fail the delivery of the Nth produced record or of
records to a topic (retriable), refuse records for good (a record-level error code that
fails the whole message set, as the broker does), topic and client size limits, errors of
transactional calls (abortable or fatal), fencing, commit failures, withheld
acknowledgements, and a hook called after every produce (to stop mid-batch). Rebalances
are scripted per consumer (``revoke``, ``assign``, ``lose``) and happen in its next
consume(), as librdkafka runs its callbacks there.

The clients live in ``consumer``, ``producer`` and ``admin``; ``broker.consumer()``,
``broker.producer()`` and ``broker.admin()`` build them.
"""

from __future__ import annotations

import re
import zlib
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from stream_validator.errors import KafkaErrorInfo
from stream_validator.kafka.ports import (
    RECORD_REJECTIONS,
    TIMED_OUT,
    CommittedOffset,
    Producible,
)
from stream_validator.records import Headers, SourceRecord, TopicPartitionKey

if TYPE_CHECKING:
    from stream_validator.kafka.fake.admin import FakeAdmin
    from stream_validator.kafka.fake.consumer import FakeConsumer
    from stream_validator.kafka.fake.producer import FakeProducer

COMMITTED, OPEN, ABORTED = "committed", "open", "aborted"


@dataclass(slots=True)
class Entry:
    """One record in a partition log and the state of the transaction that wrote it."""

    record: SourceRecord
    state: str = COMMITTED
    txn: object | None = None


def record_size(record: Producible) -> int:
    """Bytes of key, value and headers (what size limits compare)."""
    headers = sum(len(n) + len(v or b"") for n, v in record.headers)
    return len(record.key or b"") + len(record.value or b"") + headers


@dataclass
class Faults:
    """What goes wrong next; tests set these between (or during) calls."""

    #: 1-based numbers of produced records (over all producers) whose delivery fails once.
    fail_nth: set[int] = field(default_factory=set)
    #: topic -> how many more deliveries to it fail (retriable); -1 for all of them.
    fail_topics: dict[str, int] = field(default_factory=dict)
    #: the error code of retriable delivery failures.
    fail_code: str = TIMED_OUT
    #: record -> a record-level error code (e.g. INVALID_RECORD) if the broker refuses it.
    refuse: Callable[[Producible], str | None] = lambda _record: None
    #: topics whose deliveries are never acknowledged while listed.
    hold_topics: set[str] = field(default_factory=set)
    #: transactional call name -> errors its next calls raise, one per call.
    txn_errors: dict[str, list[KafkaErrorInfo]] = field(default_factory=dict)
    #: errors the next consumer commits raise, one per call.
    commit_errors: list[KafkaErrorInfo] = field(default_factory=list)
    #: records a partition still returns in the first consume() after its pause(), as
    #: librdkafka may hand out messages it fetched before the pause.
    fetched_past_pause: int = 0
    #: called after every produce() with the running count and the record.
    on_produce: Callable[[int, Producible], None] | None = None
    produced: int = 0

    def fail_delivery(
        self, *, nth: int | None = None, topic: str | None = None, times: int = 1
    ) -> None:
        """Fail the delivery of the nth produced record, or of the next ``times`` to topic."""
        if nth is not None:
            self.fail_nth.add(nth)
        if topic is not None:
            self.fail_topics[topic] = times

    def fail_transaction_call(self, call: str, error: KafkaErrorInfo) -> None:
        """The next call of ``call`` (e.g. ``commit_transaction``) raises ``error``."""
        self.txn_errors.setdefault(call, []).append(error)

    def delivery_error(self, record: Producible, number: int) -> KafkaErrorInfo | None:
        """The retriable failure scripted for the ``number``-th produced record, if any."""
        left = self.fail_topics.get(record.topic, 0)
        if number in self.fail_nth:
            self.fail_nth.discard(number)
            return KafkaErrorInfo(self.fail_code, "scripted delivery failure", retriable=True)
        if left:
            self.fail_topics[record.topic] = left - 1 if left > 0 else left
            return KafkaErrorInfo(self.fail_code, "scripted delivery failure", retriable=True)
        return None


def abortable(code: str = "CONCURRENT_TRANSACTIONS") -> KafkaErrorInfo:
    """An error that requires aborting the open transaction."""
    return KafkaErrorInfo(code, "scripted abortable error", retriable=False, abortable=True)


def fatal(code: str = "_FENCED") -> KafkaErrorInfo:
    """A fatal producer error (``_FENCED``: another instance took the transactional id)."""
    return KafkaErrorInfo(code, "scripted fatal error", fatal=True)


class FakeBroker:
    """Topics, partitions, consumer groups and transactions, in memory."""

    def __init__(self, *, now_ms: Callable[[], int] = lambda: 1_700_000_000_000) -> None:
        self.logs: dict[str, list[list[Entry]]] = {}
        self.max_message_bytes: dict[str, int] = {}
        self.groups: dict[str, dict[TopicPartitionKey, CommittedOffset]] = {}
        #: every successful commit: (group, {partition: offset}), in order.
        self.commit_log: list[tuple[str, dict[TopicPartitionKey, int]]] = []
        self.faults = Faults()
        self.epochs: dict[str, int] = {}
        self.open_txns: dict[str, object] = {}
        self.unreadable: dict[tuple[str, int, int], str] = {}
        self.now_ms = now_ms
        self._round_robin: dict[str, int] = {}

    # --- setup and inspection ---------------------------------------------------------

    def create_topic(
        self, name: str, partitions: int = 1, *, max_message_bytes: int | None = None
    ) -> None:
        """Create a topic (idempotent)."""
        self.logs.setdefault(name, [[] for _ in range(partitions)])
        if max_message_bytes is not None:
            self.max_message_bytes[name] = max_message_bytes

    def append(
        self,
        topic: str,
        value: bytes | None,
        *,
        key: bytes | None = None,
        headers: Headers | None = None,
        partition: int | None = None,
        timestamp_ms: int | None = None,
    ) -> SourceRecord:
        """Write a committed record directly (test input); returns it with its offset."""
        if partition is None:
            partition = self.partition_for(topic, key)
        return self.write(topic, partition, key, value, headers or [], timestamp_ms, COMMITTED)

    def records(self, topic: str, *, committed_only: bool = True) -> list[SourceRecord]:
        """Every record of the topic a read_committed (or uncommitted) reader would see."""
        wanted = {COMMITTED} if committed_only else {COMMITTED, OPEN}
        return [e.record for log in self.logs.get(topic, []) for e in log if e.state in wanted]

    def committed(self, group: str) -> dict[TopicPartitionKey, int]:
        """The group's committed offsets."""
        return {k: c.offset for k, c in self.groups.get(group, {}).items()}

    def mark_unreadable(self, record: SourceRecord, problem: str) -> None:
        """The client will not be able to read this record's headers."""
        self.unreadable[(record.topic, record.partition, record.offset)] = problem

    def topics_matching(self, subscription: Sequence[str]) -> list[str]:
        """Existing topics named or matched (``^regex``) by a subscription."""
        found: set[str] = set()
        for entry in subscription:
            if entry.startswith("^"):
                found.update(t for t in self.logs if re.fullmatch(entry[1:], t))
            elif entry in self.logs:
                found.add(entry)
        return sorted(found)

    # --- clients ------------------------------------------------------------------------

    def consumer(
        self,
        group: str = "group",
        *,
        read_committed: bool = True,
        partition_eof: bool = False,
        auto_offset_reset: str = "earliest",
        on_idle: Callable[[], None] | None = None,
    ) -> FakeConsumer:
        """A consumer of ``group``; ``on_idle`` runs whenever a consume() that would wait
        (timeout > 0) finds nothing."""
        from stream_validator.kafka.fake.consumer import FakeConsumer

        return FakeConsumer(
            self,
            group,
            read_committed=read_committed,
            partition_eof=partition_eof,
            auto_offset_reset=auto_offset_reset,
            on_idle=on_idle,
        )

    def producer(
        self,
        *,
        transactional_id: str | None = None,
        message_max_bytes: int | None = None,
        queue_size: int = 100_000,
        queue_bytes: int | None = None,
    ) -> FakeProducer:
        """A producer (transactional when given an id); ``message_max_bytes`` is the client's
        own size check, refused at produce() like librdkafka's ``message.max.bytes``;
        ``queue_size`` and ``queue_bytes`` bound the local queue (records, value bytes) like
        ``queue.buffering.max.messages`` and ``queue.buffering.max.kbytes``."""
        from stream_validator.kafka.fake.producer import FakeProducer

        return FakeProducer(
            self,
            transactional_id=transactional_id,
            message_max_bytes=message_max_bytes,
            queue_size=queue_size,
            queue_bytes=queue_bytes,
        )

    def admin(self) -> FakeAdmin:
        """An admin client."""
        from stream_validator.kafka.fake.admin import FakeAdmin

        return FakeAdmin(self)

    # --- used by the fake clients -------------------------------------------------------

    def partition_for(self, topic: str, key: bytes | None) -> int:
        """Key hash (deterministic), or round robin for a null key; 0 for a missing topic."""
        count = len(self.logs.get(topic, [])) or 1
        if key is not None:
            return zlib.crc32(key) % count
        turn = self._round_robin.get(topic, 0)
        self._round_robin[topic] = turn + 1
        return turn % count

    def write(
        self,
        topic: str,
        partition: int,
        key: bytes | None,
        value: bytes | None,
        headers: Headers,
        timestamp_ms: int | None,
        state: str,
        txn: object | None = None,
    ) -> SourceRecord:
        """Append to a partition log and return the record as a consumer will read it."""
        log = self.logs[topic][partition]
        record = SourceRecord(
            topic,
            partition,
            len(log),
            key,
            value,
            list(headers),
            timestamp_ms if timestamp_ms is not None else self.now_ms(),
            0 if timestamp_ms is not None else 1,
        )
        log.append(Entry(record, state, txn))
        return record

    def refusal(self, record: Producible) -> str | None:
        """The record-level code the broker refuses this record with, if any."""
        limit = self.max_message_bytes.get(record.topic)
        if limit is not None and record_size(record) > limit:
            return "MSG_SIZE_TOO_LARGE"
        code = self.faults.refuse(record)
        return code if code in RECORD_REJECTIONS else None

    def end(self, key: TopicPartitionKey, *, read_committed: bool = True) -> int:
        """The last stable offset (read_committed) or the log end of a partition."""
        log = self.logs[key[0]][key[1]]
        if read_committed:
            for entry in log:
                if entry.state == OPEN:
                    return entry.record.offset
        return len(log)

    def finish(self, txn: object, state: str) -> None:
        """Commit or abort every record a transaction wrote."""
        for partitions in self.logs.values():
            for log in partitions:
                for entry in log:
                    if entry.txn is txn and entry.state == OPEN:
                        entry.state = state

    def commit_offsets(
        self, group: str, offsets: dict[TopicPartitionKey, int], metadata: str | None = None
    ) -> None:
        """Store a group's offsets (a consumer commit or a committed transaction)."""
        if not offsets:
            return
        stored = self.groups.setdefault(group, {})
        for key, offset in offsets.items():
            stored[key] = CommittedOffset(offset, metadata)
        self.commit_log.append((group, dict(offsets)))


class FakeClients:
    """``ports.ClientFactory`` over a fake broker: what the service gets in unit tests.

    Error callbacks are kept (``error_callbacks``) so a test can raise client errors through
    them; ``on_idle`` runs whenever a consumer that would wait finds nothing (e.g. to stop
    the service).
    """

    def __init__(
        self,
        broker: FakeBroker,
        group: str,
        *,
        transactional_id: str | None = None,
        message_max_bytes: int | None = None,
        queue_bytes: int | None = None,
        on_idle: Callable[[], None] | None = None,
    ) -> None:
        self.broker = broker
        self.on_idle = on_idle
        self.group = group
        self.transactional_id = transactional_id
        self.message_max_bytes = message_max_bytes
        self.queue_bytes = queue_bytes
        self.consumers: list[FakeConsumer] = []
        self.producers: list[FakeProducer] = []
        self.error_callbacks: list[Callable[[KafkaErrorInfo], None]] = []

    def consumer(
        self,
        *,
        on_stats: Callable[[str], None] | None = None,
        on_error: Callable[[KafkaErrorInfo], None] | None = None,
    ) -> FakeConsumer:
        """A consumer of the group."""
        if on_error is not None:
            self.error_callbacks.append(on_error)
        self.consumers.append(self.broker.consumer(self.group, on_idle=self.on_idle))
        return self.consumers[-1]

    def producer(self, *, on_error: Callable[[KafkaErrorInfo], None] | None = None) -> FakeProducer:
        """A producer with the configured transactional id and size check."""
        if on_error is not None:
            self.error_callbacks.append(on_error)
        producer = self.broker.producer(
            transactional_id=self.transactional_id,
            message_max_bytes=self.message_max_bytes,
            queue_bytes=self.queue_bytes,
        )
        self.producers.append(producer)
        return producer
