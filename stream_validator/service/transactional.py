"""The exactly-once committer: each batch's outputs and input offsets in one transaction.

Per batch: begin -> produce clean and DLQ outputs -> send the offsets with the consumer's
group metadata -> commit (``kafka.transactions``, which bounds every call). An abortable
error aborts and the batch is retried from its start. When the outputs fail, or a call
outlives its deadline, or a fatal error that is not fencing ends the transaction, the
producer is abandoned: a new one with the same ``transactional.id`` fences it (retried while
the broker is away), and the consumer rewinds to the committed offsets, since the fenced
transaction may have committed or not. Fencing by another instance raises
FatalTransactionError (the service exits 1).
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace

from stream_validator.errors import (
    FatalTransactionError,
    KafkaClientError,
    ProducerLostError,
)
from stream_validator.kafka.ports import Consumer, Producer
from stream_validator.kafka.transactions import Transactions, committed_positions
from stream_validator.records import TopicPartitionKey
from stream_validator.service.commit import BaseCommitter, BatchOffsets, Outcome, Status
from stream_validator.service.outputs import OutputStage
from stream_validator.service.pipeline import BatchPlan
from stream_validator.service.rejections import Rejections

log = logging.getLogger("stream_validator.service")


@dataclass(frozen=True, slots=True)
class Recovery:
    """How the committer waits while it replaces a producer or reads committed offsets."""

    stop: threading.Event
    backoff_s: float
    backoff_max_s: float
    committed_timeout_s: float
    heartbeat: Callable[[], None]  # the loop is alive (liveness) while it waits
    note_error: Callable[[str], None]  # /status last_error, not ready


class Transactional(BaseCommitter):
    """One Kafka transaction per batch, with producer replacement when it is lost."""

    def __init__(
        self,
        consumer: Consumer,
        transactions: Transactions,
        stage: OutputStage,
        rejections: Rejections,
        recovery: Recovery,
        *,
        on_commit: Callable[[], None],
        safe: Callable[[object], str],
    ) -> None:
        super().__init__(consumer, stage, rejections, on_commit=on_commit, safe=safe)
        self._txn = transactions
        self._recovery = recovery

    @property
    def producer(self) -> Producer:
        """The current transactional producer (replaced when lost)."""
        return self._txn.producer

    def start(self) -> bool:
        """Register the transactional id (fencing an older instance); False if stopped."""
        try:
            self._txn.init()
        except ProducerLostError as exc:
            if not self._replace(exc):
                return False
        return True

    def submit(self, plans: Sequence[BatchPlan], offsets: BatchOffsets) -> Outcome:
        """Deliver and commit in one transaction, or rewind."""
        failed: list[tuple[str, str, str]] = []
        try:
            self._txn.begin()
            sent = self._send(self._txn.producer, plans)
            if sent.refused:
                return self._abort_refused(self._not_delivered(sent, offsets), offsets)
            if not sent.complete:
                failed = sent.failed
                why = self._not_delivered(sent, offsets).reason
                # After a broker restart the old producer can stay stuck (its next
                # transactional call may never return); a new one's init aborts the
                # failed transaction, and the committed offsets say where to resume.
                raise ProducerLostError(f"outputs of the transaction failed ({why})")
            commit = self.acked.committable(offsets.after)
            aborted = self._txn.commit(commit)
            if aborted is not None:
                self.acked.rewind(offsets.first)
                return Outcome(
                    Status.FAILED, rewind=offsets.first, reason=f"transaction aborted: {aborted}"
                )
        except ProducerLostError as exc:
            return self._lost(exc, offsets, failed)
        self._rejections.forget(offsets.after)
        self._on_commit()
        return Outcome(Status.DELIVERED, sent.routes, committed=commit)

    def commit_pending(self, reason: str) -> None:
        """Nothing is ever pending: offsets commit with their transaction."""

    def finish(self) -> None:
        """Abort the transaction left open by an error mid-batch, if any."""
        try:
            self._txn.abort()
        except (FatalTransactionError, ProducerLostError) as exc:
            log.warning("abort at shutdown failed", extra={"error": self._safe(exc)})

    def _abort_refused(self, outcome: Outcome, offsets: BatchOffsets) -> Outcome:
        """Abort after refusals; the re-read (or the halt) stands even if the abort fails."""
        try:
            self._txn.abort()
        except ProducerLostError as exc:
            lost = self._lost(exc, offsets, [])
            return replace(outcome, rewind=lost.rewind) if outcome.status is Status.HALTED else lost
        return outcome

    def _lost(
        self, exc: ProducerLostError, offsets: BatchOffsets, failed: list[tuple[str, str, str]]
    ) -> Outcome:
        self.acked.rewind(offsets.first)
        reason = f"abandoning the transactional producer: {exc}"
        if not self._replace(exc):
            return Outcome(Status.FAILED, rewind=offsets.first, reason=reason, failed=failed)
        rewind = self._committed(offsets.first)
        return Outcome(Status.FAILED, rewind=rewind, reason=reason, failed=failed)

    def _replace(self, exc: ProducerLostError) -> bool:
        """Fence the stuck or broken producer with a new one; False if stopped first."""
        recovery = self._recovery
        recovery.note_error(f"abandoning the transactional producer: {exc}")
        log.error("transactional producer lost; replacing it", extra={"error": str(exc)})
        if not self._txn.recover(
            recovery.stop,
            recovery.backoff_s,
            recovery.backoff_max_s,
            heartbeat=recovery.heartbeat,
        ):
            return False
        log.info("new transactional producer ready; re-reading from the committed offsets")
        return True

    def _committed(self, first: dict[TopicPartitionKey, int]) -> dict[TopicPartitionKey, int]:
        """The committed offsets (the fenced transaction may have committed or not)."""
        recovery = self._recovery
        backoff = recovery.backoff_s
        while not recovery.stop.is_set():
            recovery.heartbeat()
            try:
                return committed_positions(self._consumer, first, recovery.committed_timeout_s)
            except KafkaClientError as exc:
                recovery.note_error(f"cannot read the committed offsets: {exc}")
                recovery.stop.wait(backoff)
                backoff = min(backoff * 2, recovery.backoff_max_s)
        return first
