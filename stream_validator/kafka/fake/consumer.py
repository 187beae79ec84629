"""The fake broker's consumer (``ports.Consumer``)."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

from stream_validator.errors import KafkaClientError, KafkaErrorInfo
from stream_validator.kafka.fake.broker import ABORTED, OPEN, FakeBroker
from stream_validator.kafka.ports import (
    PARTITION_EOF,
    Consumed,
    ConsumerErrorEvent,
    GroupMetadata,
    RebalanceCallback,
)
from stream_validator.records import TopicPartitionKey


def _fail(code: str, reason: str, **flags: bool) -> KafkaClientError:
    return KafkaClientError(KafkaErrorInfo(code, reason, **flags))


@dataclass(frozen=True, slots=True)
class FakeGroupMetadata:
    """What send_offsets_to_transaction needs to know about the consumer."""

    group: str
    generation: int


class FakeConsumer:
    """A group consumer; scripted rebalances run in the next consume()."""

    def __init__(
        self,
        broker: FakeBroker,
        group: str,
        *,
        read_committed: bool,
        partition_eof: bool,
        auto_offset_reset: str,
        on_idle: Callable[[], None] | None,
    ) -> None:
        self.broker = broker
        self.group = group
        self.generation = 0
        self.closed = False
        self.on_idle = on_idle
        self._read_committed = read_committed
        self._partition_eof = partition_eof
        self._reset = auto_offset_reset
        self._positions: dict[TopicPartitionKey, int] = {}
        self._paused: set[TopicPartitionKey] = set()
        self._just_paused: set[TopicPartitionKey] = set()  # for faults.fetched_past_pause
        self._eof_told: set[TopicPartitionKey] = set()
        self._subscription: list[str] | None = None
        self._callbacks: dict[str, RebalanceCallback] = {}
        self._events: list[tuple[str, list[TopicPartitionKey]]] = []
        self._failed_commits: dict[TopicPartitionKey, int] = {}

    # --- scripting ------------------------------------------------------------------------

    def revoke(self, keys: Sequence[TopicPartitionKey]) -> None:
        """Revoke these partitions in the next consume()."""
        self._events.append(("revoke", list(keys)))

    def lose(self, keys: Sequence[TopicPartitionKey]) -> None:
        """Lose these partitions (no commit possible) in the next consume()."""
        self._events.append(("lost", list(keys)))

    def reassign(self, keys: Sequence[TopicPartitionKey]) -> None:
        """Assign these partitions (from the group's committed offsets) in the next consume()."""
        self._events.append(("assign", list(keys)))

    # --- ports.Consumer -------------------------------------------------------------------

    def subscribe(
        self,
        topics: Sequence[str],
        *,
        on_assign: RebalanceCallback,
        on_revoke: RebalanceCallback,
        on_lost: RebalanceCallback,
    ) -> None:
        self._subscription = list(topics)
        self._callbacks = {"assign": on_assign, "revoke": on_revoke, "lost": on_lost}
        keys = [
            (t, p)
            for t in self.broker.topics_matching(topics)
            for p in range(len(self.broker.logs[t]))
        ]
        self._events.insert(0, ("assign", keys))

    def assign(self, positions: Mapping[TopicPartitionKey, int]) -> None:
        self._positions = dict(positions)
        self._eof_told.clear()

    def consume(self, max_records: int, timeout_s: float) -> Consumed:
        self._check_open()
        while self._events:
            self._rebalance(*self._events.pop(0))
        consumed = Consumed()
        for key in sorted(self._positions):
            if key not in self._paused and len(consumed.records) < max_records:
                self._read(key, max_records, consumed)
            elif key in self._just_paused and self.broker.faults.fetched_past_pause:
                limit = len(consumed.records) + self.broker.faults.fetched_past_pause
                self._read(key, min(max_records, limit), consumed)
        self._just_paused.clear()
        # Idle: a call that would wait finds nothing (a non-blocking look is not waiting).
        idle = not consumed.records and not consumed.errors and timeout_s > 0
        if idle and self.on_idle is not None:
            self.on_idle()
        return consumed

    def commit(
        self, offsets: Mapping[TopicPartitionKey, int], *, asynchronous: bool = False
    ) -> None:
        self._check_open()
        if self.broker.faults.commit_errors:
            error = self.broker.faults.commit_errors.pop(0)
            if asynchronous:  # librdkafka reports it to the commit callback, later
                self._failed_commits.update(offsets)
                return
            raise KafkaClientError(error, "commit")
        foreign = sorted(set(offsets) - set(self._positions))
        if foreign:
            raise _fail("ILLEGAL_GENERATION", f"commit of unassigned partitions {foreign}")
        self.broker.commit_offsets(self.group, dict(offsets))

    def commit_failures(self) -> dict[TopicPartitionKey, int]:
        failed, self._failed_commits = self._failed_commits, {}
        return failed

    def committed(
        self, keys: Sequence[TopicPartitionKey], timeout_s: float
    ) -> dict[TopicPartitionKey, int]:
        stored = self.broker.committed(self.group)
        return {k: stored[k] for k in keys if k in stored}

    def position(self, keys: Sequence[TopicPartitionKey]) -> dict[TopicPartitionKey, int]:
        return {k: self._positions[k] for k in keys if k in self._positions}

    def seek(self, key: TopicPartitionKey, offset: int) -> None:
        if key not in self._positions:
            raise _fail("_STATE", f"seek: {key} is not assigned")
        self._positions[key] = offset
        self._eof_told.discard(key)

    def assignment(self) -> list[TopicPartitionKey]:
        return sorted(self._positions)

    @property
    def paused(self) -> list[TopicPartitionKey]:
        """The assigned partitions now paused (for tests; not a ``ports.Consumer`` call)."""
        return sorted(self._paused & set(self._positions))

    def pause(self, keys: Sequence[TopicPartitionKey]) -> None:
        self._just_paused.update(set(keys) - self._paused)
        self._paused.update(keys)

    def resume(self, keys: Sequence[TopicPartitionKey]) -> None:
        self._paused.difference_update(keys)

    def offsets_for_times(
        self, times_ms: Mapping[TopicPartitionKey, int], timeout_s: float
    ) -> dict[TopicPartitionKey, int | None]:
        found: dict[TopicPartitionKey, int | None] = {}
        for (topic, partition), wanted in times_ms.items():
            log = self.broker.logs[topic][partition]
            found[(topic, partition)] = next(
                (e.record.offset for e in log if (e.record.timestamp_ms or 0) >= wanted), None
            )
        return found

    def group_metadata(self) -> GroupMetadata:
        return FakeGroupMetadata(self.group, self.generation)

    def close(self) -> None:
        if self.closed:
            return
        if self._subscription is not None and self._positions:
            self._callbacks["revoke"](sorted(self._positions))
        self._positions.clear()
        self.closed = True

    # --- internals ------------------------------------------------------------------------

    def _check_open(self) -> None:
        if self.closed:
            raise RuntimeError("the consumer is closed")

    def _rebalance(self, kind: str, keys: list[TopicPartitionKey]) -> None:
        self.generation += 1
        if kind == "assign":
            stored = self.broker.committed(self.group)
            for key in keys:
                if key in stored:
                    self._positions[key] = stored[key]
                else:
                    end = self.broker.end(key, read_committed=self._read_committed)
                    self._positions[key] = 0 if self._reset == "earliest" else end
            self._callbacks["assign"](keys)
            return
        self._callbacks[kind](keys)  # revoke: still assigned in the callback, so it can commit
        for key in keys:
            # The pause flag stays, as librdkafka keeps it under cooperative-sticky (the
            # service's assignment strategy): a partition assigned back may still be paused.
            self._positions.pop(key, None)

    def _read(self, key: TopicPartitionKey, max_records: int, consumed: Consumed) -> None:
        log = self.broker.logs[key[0]][key[1]]
        position = self._positions[key]
        while position < len(log) and len(consumed.records) < max_records:
            entry = log[position]
            if entry.state == OPEN and self._read_committed:
                break  # the last stable offset: nothing past an open transaction
            position += 1
            if entry.state == ABORTED:
                continue
            record = entry.record
            problem = self.broker.unreadable.get((record.topic, record.partition, record.offset))
            if problem is not None:
                record = record._replace(headers=[])
                consumed.unreadable_headers[(key[0], key[1], record.offset)] = problem
            consumed.records.append(record)
        if position != self._positions[key]:
            self._eof_told.discard(key)
        self._positions[key] = position
        at_end = position >= self.broker.end(key, read_committed=self._read_committed)
        if self._partition_eof and at_end and key not in self._eof_told:
            self._eof_told.add(key)
            info = KafkaErrorInfo(PARTITION_EOF, "end of partition")
            consumed.errors.append(ConsumerErrorEvent(info, key[0], key[1], position))
