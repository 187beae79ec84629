"""The Kafka adapter's interface: what the service, the replay runner and the simulator may
call. Two implementations: ``confluent`` (librdkafka) and ``fake`` (in memory, for tests).

Only plain values cross it: ``SourceRecord`` in, anything shaped like ``Producible`` out,
partitions as ``TopicPartitionKey``, errors as ``KafkaErrorInfo`` values (consumer errors,
delivery reports) or ``KafkaClientError`` exceptions (failed calls). Callbacks are plain
Python callables. ``produce`` raises ``BufferError`` when the local queue is full and
``KafkaClientError`` when the client refuses the record before sending it (e.g. its own
size check: code ``MSG_SIZE_TOO_LARGE``); ``kafka.io.produce_all`` handles both.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Protocol

from stream_validator.errors import KafkaErrorInfo
from stream_validator.records import Headers, SourceRecord, TopicPartitionKey

# librdkafka error names the adapter's users branch on.
PARTITION_EOF = "_PARTITION_EOF"
UNKNOWN_TOPIC_OR_PART = "UNKNOWN_TOPIC_OR_PART"
MSG_SIZE_TOO_LARGE = "MSG_SIZE_TOO_LARGE"
TIMED_OUT = "_MSG_TIMED_OUT"
QUEUE_FULL = "_QUEUE_FULL"
FENCED = "_FENCED"
#: The broker cannot be reached (not ready, but not fatal).
UNREACHABLE = frozenset({"_ALL_BROKERS_DOWN", "_TRANSPORT", "_RESOLVE"})
#: "This record, as it is, will never be accepted": retrying the batch cannot fix it.
RECORD_REJECTIONS = frozenset(
    {
        MSG_SIZE_TOO_LARGE,  # broker MESSAGE_TOO_LARGE, or the client's own check
        "INVALID_MSG_SIZE",
        "RECORD_LIST_TOO_LARGE",
        "INVALID_TIMESTAMP",
        "INVALID_RECORD",
        "_INVALID_DIFFERENT_RECORD",  # a batchmate of an invalid record
    }
)
#: Fatal transactional errors meaning another instance owns the id (or we may not use it).
FENCING = frozenset(
    {FENCED, "PRODUCER_FENCED", "INVALID_PRODUCER_EPOCH", "TRANSACTIONAL_ID_AUTHORIZATION_FAILED"}
)

RebalanceCallback = Callable[[list[TopicPartitionKey]], None]
DeliveryCallback = Callable[["DeliveryReport"], None]
#: What learns each failed output of ``produce_batch`` (acknowledged ones are only counted).
FailureCallback = Callable[["DeliveryFailure"], None]


class AckTally(Protocol):
    """A batch's delivery callback, made by ``Producer.ack_tally``: it counts the outputs
    acknowledged (no Python frame per record with librdkafka) and hands each failure on."""

    @property
    def acked(self) -> int:
        """How many outputs were acknowledged so far."""

    def settle(self, failure: DeliveryFailure | None, /) -> None:
        """One output's outcome learned another way (a record produced on its own): None
        when acknowledged, else its failure."""


class Producible(Protocol):
    """What a producer sends: ``OutputRecord``, a replay output, a simulated tick, ..."""

    @property
    def topic(self) -> str: ...
    @property
    def key(self) -> bytes | None: ...
    @property
    def value(self) -> bytes | None: ...
    @property
    def headers(self) -> Headers: ...
    @property
    def timestamp_ms(self) -> int | None: ...


@dataclass(frozen=True, slots=True)
class DeliveryReport:
    """The broker's answer for one produced record (``error`` None: acknowledged)."""

    topic: str
    error: KafkaErrorInfo | None
    partition: int = -1
    offset: int = -1


@dataclass(frozen=True, slots=True)
class DeliveryFailure:
    """A record ``produce_batch`` sent and the broker or the client failed (rare: built only
    on failure, so the acknowledgement of a record costs no object)."""

    error: KafkaErrorInfo
    topic: str
    key: bytes | None
    value: bytes | None


@dataclass(frozen=True, slots=True)
class ConsumerErrorEvent:
    """An error event consume() returned instead of a record (e.g. partition EOF): a value
    the caller inspects, not an exception."""

    info: KafkaErrorInfo
    topic: str | None = None
    partition: int | None = None
    offset: int | None = None


@dataclass(frozen=True, slots=True)
class Consumed:
    """One consume() call: records in order, error events, and records whose headers the
    client could not read (their ``headers`` are empty; the value says why)."""

    records: list[SourceRecord] = field(default_factory=list)
    errors: list[ConsumerErrorEvent] = field(default_factory=list)
    unreadable_headers: dict[tuple[str, int, int], str] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class CommittedOffset:
    """A committed group offset and its commit metadata."""

    offset: int
    metadata: str | None = None


class GroupMetadata(Protocol):
    """Opaque consumer-group handle for ``send_offsets_to_transaction`` (KIP-447 fencing)."""


class Consumer(Protocol):
    """A group consumer. Offsets are "next to read" positions, as Kafka commits them."""

    def subscribe(
        self,
        topics: Sequence[str],
        *,
        on_assign: RebalanceCallback,
        on_revoke: RebalanceCallback,
        on_lost: RebalanceCallback,
    ) -> None:
        """Join the group for these topics (a ``^regex`` entry subscribes by pattern)."""

    def assign(self, positions: Mapping[TopicPartitionKey, int]) -> None:
        """Read these partitions from these offsets, without group management."""

    def consume(self, max_records: int, timeout_s: float) -> Consumed:
        """Up to ``max_records``; rebalance callbacks run inside this call."""

    def commit(
        self, offsets: Mapping[TopicPartitionKey, int], *, asynchronous: bool = False
    ) -> None:
        """Commit (synchronously unless ``asynchronous``); raises KafkaClientError. An
        asynchronous commit's failure is reported later by ``commit_failures``."""

    def commit_failures(self) -> dict[TopicPartitionKey, int]:
        """The offsets of asynchronous commits that failed, per partition, reported since
        the last call (inside consume()); empty when none failed."""

    def committed(
        self, keys: Sequence[TopicPartitionKey], timeout_s: float
    ) -> dict[TopicPartitionKey, int]:
        """The group's committed offsets of these partitions (absent: none committed)."""

    def position(self, keys: Sequence[TopicPartitionKey]) -> dict[TopicPartitionKey, int]:
        """The next offset consume() returns per partition (absent: not known yet)."""

    def seek(self, key: TopicPartitionKey, offset: int) -> None:
        """Read the partition from ``offset`` next; raises KafkaClientError if not assigned."""

    def assignment(self) -> list[TopicPartitionKey]:
        """The partitions currently assigned."""

    def pause(self, keys: Sequence[TopicPartitionKey]) -> None:
        """Stop returning records of these partitions."""

    def resume(self, keys: Sequence[TopicPartitionKey]) -> None:
        """Return records of these partitions again."""

    def offsets_for_times(
        self, times_ms: Mapping[TopicPartitionKey, int], timeout_s: float
    ) -> dict[TopicPartitionKey, int | None]:
        """Per partition the first offset with a timestamp >= the given one (None: none)."""

    def group_metadata(self) -> GroupMetadata:
        """The handle ``Producer.send_offsets_to_transaction`` needs."""

    def close(self) -> None:
        """Leave the group (revoke callbacks run) and release the client."""


class Producer(Protocol):
    """A producer; delivery callbacks run inside poll() and flush()."""

    def produce(self, record: Producible, on_delivery: DeliveryCallback) -> None:
        """Enqueue; raises BufferError (queue full) or KafkaClientError (refused locally)."""

    def ack_tally(self, on_failure: FailureCallback) -> AckTally:
        """A new tally for ``produce_batch``: counts acknowledgements, ``on_failure`` learns
        each failed output."""

    def produce_batch(self, records: Sequence[Producible], start: int, tally: AckTally) -> int:
        """Enqueue ``records[start:]`` in order, each acknowledged through ``tally``; stop
        at the first record the client does not take (queue full, refused locally) and
        return its index (``len(records)``: all enqueued). ``produce`` that record to learn
        why. The hot path: no per-record report object, no per-record Python frame."""

    def poll(self, timeout_s: float) -> int:
        """Serve delivery callbacks; return how many ran."""

    def flush(self, timeout_s: float) -> int:
        """Wait for every delivery; return how many are still unacknowledged."""

    def init_transactions(self, timeout_s: float) -> None:
        """Register the transactional id; fences older producers with it."""

    def begin_transaction(self) -> None:
        """Open a transaction (local)."""

    def send_offsets_to_transaction(
        self,
        offsets: Mapping[TopicPartitionKey, int],
        group: GroupMetadata,
        timeout_s: float,
        metadata: str | None = None,
    ) -> None:
        """Commit these consumer offsets with the transaction (with commit metadata)."""

    def commit_transaction(self, timeout_s: float) -> None:
        """Flush and commit; raises KafkaClientError (abortable, fatal or fenced)."""

    def abort_transaction(self, timeout_s: float) -> None:
        """Abort the open transaction: its records stay invisible to read_committed readers."""

    def topics(self, timeout_s: float) -> dict[str, int]:
        """Existing topics and their partition counts; raises KafkaClientError if unreachable."""


class Admin(Protocol):
    """Topic and consumer-group administration."""

    def topics(self, timeout_s: float) -> dict[str, int]:
        """Existing topics and their partition counts; raises KafkaClientError if unreachable."""

    def create_topics(
        self, names: Sequence[str], *, partitions: int, replication_factor: int, timeout_s: float
    ) -> dict[str, str]:
        """Create the missing ones; {topic: "created" | "exists"}."""

    def groups(self, prefix: str, timeout_s: float) -> list[str]:
        """Consumer group ids starting with ``prefix``, sorted."""

    def group_offsets(
        self, group: str, keys: Sequence[TopicPartitionKey], timeout_s: float
    ) -> dict[TopicPartitionKey, CommittedOffset]:
        """A group's committed (stable) offsets of these partitions (absent: none)."""

    def end_offsets(
        self, keys: Sequence[TopicPartitionKey], timeout_s: float
    ) -> dict[TopicPartitionKey, int]:
        """The last stable offset (read_committed end) of each partition."""


ErrorCallback = Callable[[KafkaErrorInfo], None]


class ClientFactory(Protocol):
    """Builds the service's clients (``clients.ServiceClients``; the fake's ``FakeClients``)."""

    def consumer(
        self,
        *,
        on_stats: Callable[[str], None] | None = None,
        on_error: ErrorCallback | None = None,
    ) -> Consumer:
        """The group consumer; ``on_stats`` gets raw statistics JSON, ``on_error`` client errors."""

    def producer(self, *, on_error: ErrorCallback | None = None) -> Producer:
        """A producer (transactional when the configuration says so)."""


def missing_topics(client: Producer | Admin, topics: Sequence[str], timeout_s: float) -> list[str]:
    """The topics that do not exist; raises KafkaClientError when the broker is unreachable."""
    existing = client.topics(timeout_s)
    return sorted(t for t in set(topics) if t not in existing)
