"""The committer: owns produce -> acknowledgement -> offset commit for the service.

One interface (``Committer.submit(plans, offsets) -> Outcome``), two implementations:

* ``AtLeastOnce`` produces every output, waits for every acknowledgement, then commits the
  input offsets synchronously. Any failed output: nothing committed, rewind to the batch
  start (outputs that did land are produced again: duplicates, never gaps).
* ``Transactional`` (``transactional.py``) runs the same inside a Kafka transaction whose
  offsets commit with the outputs (``kafka.transactions``).

Both learn from record-level refusals (``rejections.py``): the batch is re-read at once,
suspects produced alone, and a DLQ entry refused alone halts the service. The ``Outcome``
says exactly what was delivered to clean and DLQ per route, what failed, what was committed
and where the consumer must rewind to; the loop reports from it and from nothing else.

``AckedOffsets`` tracks per partition the offset below which every output is acknowledged:
what may be committed. The committers still flush per batch, so today it is the batch end;
pipelining batches (outputs of several in flight) only needs to commit it more often.
"""

from __future__ import annotations

import enum
import logging
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Protocol

from stream_validator.errors import KafkaClientError
from stream_validator.kafka.ports import Consumer, Producer
from stream_validator.records import SourceRecord, TopicPartitionKey
from stream_validator.service.outputs import OutputStage, RouteDelivery, Sent
from stream_validator.service.pipeline import BatchPlan
from stream_validator.service.rejections import Rejections

log = logging.getLogger("stream_validator.service")


class Status(enum.Enum):
    """What became of a submitted batch."""

    DELIVERED = "delivered"  # every output acknowledged; offsets committed (or pending a retry)
    FAILED = "failed"  # nothing committed: rewind and retry after a backoff
    REREAD = "reread"  # refused records learnt: rewind and re-read at once
    HALTED = "halted"  # a record cannot be delivered anywhere without loss


@dataclass(frozen=True, slots=True)
class BatchOffsets:
    """Where a consumed batch starts and ends, per partition."""

    first: dict[TopicPartitionKey, int]  # the batch's first offset: where a retry starts
    after: dict[TopicPartitionKey, int]  # one past its last record: what a commit stores


@dataclass(frozen=True, slots=True)
class Outcome:
    """What submit() did. ``routes`` is filled only when DELIVERED."""

    status: Status
    routes: list[RouteDelivery] = field(default_factory=list)
    committed: dict[TopicPartitionKey, int] = field(default_factory=dict)
    rewind: dict[TopicPartitionKey, int] = field(default_factory=dict)
    reason: str | None = None
    failed: list[tuple[str, str, str]] = field(default_factory=list)  # (route, kind, reason)
    refused: int = 0


class Committer(Protocol):
    """Delivers batches and commits their offsets (at-least-once or transactional)."""

    @property
    def producer(self) -> Producer:
        """The producer in use (it changes when a transactional one is replaced)."""

    def start(self) -> bool:
        """Prepare to deliver (register the transactional id); False if stopped first."""

    def submit(self, plans: Sequence[BatchPlan], offsets: BatchOffsets) -> Outcome:
        """Deliver the plans' outputs and commit the offsets, or say why not."""

    def commit_pending(self, reason: str) -> None:
        """Commit what was delivered but not committed yet (partitions revoked)."""

    def drop(self, keys: Sequence[TopicPartitionKey]) -> None:
        """Forget partitions this member no longer owns (never commit for them)."""

    def finish(self) -> None:
        """Before the consumer closes: commit what is pending, abort an open transaction."""


class AckedOffsets:
    """Per partition, the offset below which every source record's output was acknowledged."""

    def __init__(self) -> None:
        self._pending: dict[TopicPartitionKey, set[int]] = {}
        self._end: dict[TopicPartitionKey, int] = {}

    def track(self, records: Iterable[SourceRecord]) -> None:
        """Records whose outputs are on their way."""
        for record in records:
            key = (record.topic, record.partition)
            self._pending.setdefault(key, set()).add(record.offset)
            self._end[key] = max(self._end.get(key, 0), record.offset + 1)

    def ack(self, records: Iterable[SourceRecord]) -> None:
        """Records whose outputs were acknowledged."""
        for record in records:
            self._pending.get((record.topic, record.partition), set()).discard(record.offset)

    def committable(self, keys: Iterable[TopicPartitionKey]) -> dict[TopicPartitionKey, int]:
        """Per partition: the oldest unacknowledged offset, else one past the newest record."""
        found = {}
        for key in keys:
            if key in self._end:
                pending = self._pending.get(key)
                found[key] = min(pending) if pending else self._end[key]
        return found

    def rewind(self, first: Mapping[TopicPartitionKey, int]) -> None:
        """The records from ``first`` on will be read again: stop waiting for them."""
        for key, offset in first.items():
            self._pending[key] = {o for o in self._pending.get(key, set()) if o < offset}
            self._end[key] = offset

    def drop(self, keys: Iterable[TopicPartitionKey]) -> None:
        """Partitions gone to another member."""
        for key in keys:
            self._pending.pop(key, None)
            self._end.pop(key, None)


class BaseCommitter:
    """What both committers share: sending, acknowledgement tracking, refused records."""

    def __init__(
        self,
        consumer: Consumer,
        stage: OutputStage,
        rejections: Rejections,
        *,
        on_commit: Callable[[], None],
        safe: Callable[[object], str],
    ) -> None:
        self._consumer = consumer
        self._stage = stage
        self._rejections = rejections
        self._on_commit = on_commit
        self._safe = safe
        self.acked = AckedOffsets()

    def _send(self, producer: Producer, plans: Sequence[BatchPlan]) -> Sent:
        self.acked.track(out.source for plan in plans for out in plan.outputs)
        sent = self._stage.send(producer, plans)
        self.acked.ack(sent.acked)
        return sent

    def _not_delivered(self, sent: Sent, offsets: BatchOffsets) -> Outcome:
        """Nothing of the batch is committed: re-read it (refusals) or retry it."""
        self.acked.rewind(offsets.first)
        if sent.refused:
            return self._refused(sent, offsets)
        reasons = sorted({reason for _, _, reason in sent.failed})
        what = f"{len(sent.failed)} outputs failed, {sent.unacked} unacknowledged"
        reason = f"{what}: {'; '.join(reasons)[:500]}" if reasons else what
        return Outcome(Status.FAILED, rewind=offsets.first, reason=reason, failed=sent.failed)

    def _refused(self, sent: Sent, offsets: BatchOffsets) -> Outcome:
        dead_end = self._rejections.learn(sent.refused)
        if dead_end is not None:
            src = dead_end.source
            reason = self._safe(
                f"the DLQ topic {dead_end.topic} refused the DLQ entry of {src.topic}"
                f" [{src.partition}] @{src.offset}: {dead_end.reason}; nothing was committed"
                " past it"
            )
            return Outcome(Status.HALTED, rewind=offsets.first, reason=reason)
        log.warning(
            "the broker refused records for good; re-reading the batch to isolate them",
            extra={
                "refused": len(sent.refused),
                "examples": [
                    f"{r.topic} <- {r.source.topic} [{r.source.partition}] @{r.source.offset}:"
                    f" {r.reason}"
                    for r in sent.refused[:3]
                ],
            },
        )
        return Outcome(
            Status.REREAD, rewind=offsets.first, reason="refused", refused=len(sent.refused)
        )

    def drop(self, keys: Sequence[TopicPartitionKey]) -> None:
        """Forget partitions this member no longer owns."""
        self.acked.drop(keys)
        self._rejections.forget_partitions(list(keys))


class AtLeastOnce(BaseCommitter):
    """Produce, wait for every acknowledgement, then commit the offsets synchronously."""

    def __init__(
        self,
        consumer: Consumer,
        producer: Producer,
        stage: OutputStage,
        rejections: Rejections,
        *,
        on_commit: Callable[[], None],
        safe: Callable[[object], str],
    ) -> None:
        super().__init__(consumer, stage, rejections, on_commit=on_commit, safe=safe)
        self._producer = producer
        self._uncommitted: dict[TopicPartitionKey, int] = {}

    @property
    def producer(self) -> Producer:
        """The producer."""
        return self._producer

    def start(self) -> bool:
        """Nothing to prepare."""
        return True

    def submit(self, plans: Sequence[BatchPlan], offsets: BatchOffsets) -> Outcome:
        """Deliver, then commit; a failed commit is retried with the next batch."""
        sent = self._send(self._producer, plans)
        if not sent.complete:
            return self._not_delivered(sent, offsets)
        self._rejections.forget(offsets.after)
        self._uncommitted.update(self.acked.committable(offsets.after))
        committed = self._commit("batch")
        return Outcome(Status.DELIVERED, sent.routes, committed=committed)

    def commit_pending(self, reason: str) -> None:
        """Commit what was acknowledged and not committed yet."""
        self._commit(reason)

    def drop(self, keys: Sequence[TopicPartitionKey]) -> None:
        """Never commit for partitions another member owns now."""
        for key in keys:
            self._uncommitted.pop(key, None)
        super().drop(keys)

    def finish(self) -> None:
        """Commit what is pending before the consumer leaves the group."""
        self._commit("shutdown")

    def _commit(self, reason: str) -> dict[TopicPartitionKey, int]:
        if not self._uncommitted:
            return {}
        offsets = dict(sorted(self._uncommitted.items()))
        try:
            self._consumer.commit(offsets)
        except KafkaClientError as exc:
            log.warning(
                "commit failed; will retry with the next batch",
                extra={"reason": reason, "error": self._safe(exc)},
            )
            return {}
        self._uncommitted.clear()
        self._on_commit()
        return offsets
