"""The exactly-once committer: the outputs and input offsets of one commit interval's batches
in one transaction.

The first batch after a commit begins a transaction; batches are sent into it without
waiting (pipelined, as ``atleastonce.py``) until the commit is due (or partitions are revoked,
or the window is full, or the service stops). Commits keep a fixed cadence: the next is due
``batch.commit_interval_s`` after the previous one *started*, so neither a commit's own
duration nor the wait for the next batch stretches the cycle (a record waits at most about
one interval plus one commit), but a transaction stays open at least half an interval, so
commits slower than the interval still leave room to consume. At the commit the producer
is flushed, and when every output was acknowledged the batches' offsets are sent with the
consumer's group metadata and the transaction commits (``kafka.transactions``, which bounds
every call); the batches are reported only then. An abortable error aborts and every
batch of the transaction is retried from its start (refusals: re-read at once, then one
batch per transaction with the suspects produced alone until that batch commits). When the
outputs fail, or a call outlives its deadline, or a fatal error that is not fencing ends
the transaction, the producer is abandoned: a new one with the same ``transactional.id``
fences it (retried while the broker is away), and the consumer rewinds to the committed
offsets, since the fenced transaction may have committed or not. Fencing by another
instance raises FatalTransactionError (the service exits 1).
"""

from __future__ import annotations

import logging
import threading
import time
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
from stream_validator.service.delivery.committer import (
    BaseCommitter,
    BatchOutcome,
    BatchStatus,
    wait_for_commit,
)
from stream_validator.service.delivery.flight import Flight
from stream_validator.service.delivery.offsets import BatchOffsets, merged_after, merged_rewind
from stream_validator.service.delivery.rejections import Rejections
from stream_validator.service.delivery.replacements import Replacements
from stream_validator.service.plan.planner import BatchPlan

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
    """One Kafka transaction per commit interval, with producer replacement when it is lost."""

    def __init__(
        self,
        consumer: Consumer,
        transactions: Transactions,
        replacements: Replacements,
        rejections: Rejections,
        recovery: Recovery,
        *,
        on_commit: Callable[[], None],
        on_commit_took: Callable[[float], None] = lambda _: None,
        safe: Callable[[object], str],
        interval_s: float,
        flush_timeout_s: float,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        super().__init__(
            consumer,
            replacements,
            rejections,
            on_commit=on_commit,
            safe=safe,
            flush_timeout_s=flush_timeout_s,
        )
        self._txn = transactions
        self._on_commit_took = on_commit_took
        self._recovery = recovery
        self._interval_s = interval_s
        self._clock = clock
        self._flights: list[Flight] = []  # the batches of the open transaction
        self._opened_at = 0.0
        self._due_at = 0.0  # when the open transaction commits
        self._last_started: float | None = None  # when the last commit began

    @property
    def producer(self) -> Producer:
        """The current transactional producer (replaced when lost)."""
        return self._txn.producer

    @property
    def busy(self) -> bool:
        """A transaction is open: it commits when its commit is due."""
        return bool(self._flights)

    @property
    def due_in_s(self) -> float:
        """Until the open transaction's commit is due (its records become visible to
        read_committed readers only then: the loop must not sleep past it)."""
        if not self._flights:
            return self._interval_s
        return wait_for_commit(self._due_at, self._clock(), self._interval_s)

    @property
    def in_flight(self) -> int:
        """The records of the open transaction."""
        return sum(len(flight.outputs) for flight in self._flights)

    def make_room(self, timeout_s: float) -> None:
        """The open transaction holds the whole window: commit it now, before its interval
        is up (it waits for its acknowledgements up to the flush timeout, not ``timeout_s``)."""
        self.commit_pending("window full")

    def start(self) -> bool:
        """Register the transactional id (fencing an older instance); False if stopped."""
        try:
            self._txn.init()
        except ProducerLostError as exc:
            if not self._replace(exc):
                return False
        return True

    def submit(self, plans: Sequence[BatchPlan], offsets: BatchOffsets) -> list[BatchOutcome]:
        """Send the batch into the open transaction (begun if none is); the outcomes of the
        batches whose transaction ended meanwhile."""
        if self._rejections.pending:
            outcomes = self._take_ready() + self._commit_open()
            reread = self._read_again_too(outcomes, offsets)
            if reread is not None:
                return reread
            return [*outcomes, self._submit_alone(plans, offsets)]
        if not self._flights:
            try:
                self._txn.begin()
            except ProducerLostError as exc:
                return [*self._take_ready(), self._lost(exc, offsets.first, [])]
            self._opened()
        self._flights.append(self._launch(self._txn.producer, plans, offsets))
        return self.poll()

    def poll(self) -> list[BatchOutcome]:
        """Serve acknowledgements; commit the transaction when its commit is due, or end it
        at once when an output failed."""
        outcomes = self._take_ready()
        if not self._flights:
            return outcomes
        self._txn.producer.poll(0)
        due = self._clock() >= self._due_at
        if due or any(flight.failed for flight in self._flights):
            outcomes += self._commit_open()
        return outcomes

    def commit_pending(self, reason: str) -> None:
        """Partitions are revoked: commit the open transaction now (outcomes: next poll)."""
        self._ready += self._commit_open()

    def drop(self, keys: Sequence[TopicPartitionKey]) -> None:
        """Partitions lost: abort an open transaction holding their outputs (their new owner
        reads them again), and read the others of the transaction again too."""
        gone = set(keys)
        if any(gone & flight.offsets.first.keys() for flight in self._flights):
            flights, self._flights = self._flights, []
            rewind = {
                k: v for k, v in merged_rewind(f.offsets for f in flights).items() if k not in gone
            }
            reason = "partitions lost: the open transaction was aborted"
            outcome = BatchOutcome(BatchStatus.REREAD, rewind=rewind, reason=reason)
            self._ready.append(self._abort_refused(outcome, rewind))
        super().drop(keys)

    def finish(self) -> list[BatchOutcome]:
        """Commit the open transaction; abort one an error left open."""
        outcomes = self._take_ready()
        try:
            outcomes += self._commit_open()
            self._txn.abort()
        except FatalTransactionError as exc:  # fenced: another instance owns the id now
            log.error("fatal transaction error at shutdown", extra={"error": self._safe(exc)})
        except ProducerLostError as exc:
            log.warning("abort at shutdown failed", extra={"error": self._safe(exc)})
        return outcomes

    # --- internals ----------------------------------------------------------------------

    def _opened(self) -> None:
        """A transaction was begun: it is due one interval after the last commit started
        (the fixed cadence), but no sooner than half an interval from now."""
        now = self._clock()
        interval = self._interval_s
        self._opened_at = now
        cadence = now + interval if self._last_started is None else self._last_started + interval
        self._due_at = max(cadence, now + interval / 2)

    def _commit_open(self) -> list[BatchOutcome]:
        """Flush, then commit the open transaction with its batches' offsets, or end it."""
        if not self._flights:
            return []
        flights, self._flights = self._flights, []
        rewind = merged_rewind(flight.offsets for flight in flights)
        began = self._last_started = self._clock()
        try:
            self._txn.producer.flush(self._flush_timeout_s)
            flushed = self._clock()
            if any(flight.failed or flight.pending for flight in flights):
                return [self._failed(flights, rewind)]
            offsets = merged_after(flight.offsets for flight in flights)
            aborted = self._txn.commit(offsets)
        except ProducerLostError as exc:
            return [self._lost(exc, rewind, [])]
        except KafkaClientError as exc:  # a fatal error raised by flush
            return [self._lost(ProducerLostError(f"flush failed: {exc}"), rewind, [])]
        if aborted is not None:
            return [
                BatchOutcome(
                    BatchStatus.FAILED, rewind=rewind, reason=f"transaction aborted: {aborted}"
                )
            ]
        if self._rejections.pending:
            self._rejections.forget(offsets)
        self._on_commit()
        done = self._clock()
        self._on_commit_took(done - began)
        if log.isEnabledFor(logging.DEBUG):
            send_offsets_s, commit_s = self._txn.last_commit_calls_s
            log.debug(
                "transaction committed",
                extra={
                    "open_s": round(began - self._opened_at, 4),
                    "flush_s": round(flushed - began, 4),
                    "send_offsets_s": round(send_offsets_s, 4),
                    "commit_transaction_s": round(commit_s, 4),
                    "batches": len(flights),
                    "records": sum(len(flight.outputs) for flight in flights),
                },
            )
        acked_at, now = time.time(), time.perf_counter()
        return [
            BatchOutcome(
                BatchStatus.DELIVERED,
                flight.delivered(acked_at),
                duration_s=now - flight.started,
            )
            for flight in flights
        ]

    def _failed(self, flights: list[Flight], rewind: dict[TopicPartitionKey, int]) -> BatchOutcome:
        """Outputs of the transaction failed or were refused: abort (refusals) or abandon
        the producer (after a broker restart the old one can stay stuck; a new one's init
        aborts the failed transaction, and the committed offsets say where to resume)."""
        outcome = self._abandon(flights)
        if outcome.status is not BatchStatus.FAILED:
            return self._abort_refused(outcome, rewind)
        exc = ProducerLostError(f"outputs of the transaction failed ({outcome.reason})")
        return self._lost(exc, rewind, outcome.failed)

    def _submit_alone(self, plans: Sequence[BatchPlan], offsets: BatchOffsets) -> BatchOutcome:
        """Refused records are being isolated: this batch alone in a transaction (rare)."""
        try:
            self._txn.begin()
        except ProducerLostError as exc:
            return self._lost(exc, offsets.first, [])
        self._opened()
        self._flights = [self._launch(self._txn.producer, plans, offsets)]
        [outcome] = self._commit_open()  # one flight: one outcome, delivered or not
        return outcome

    def _abort_refused(
        self, outcome: BatchOutcome, rewind: dict[TopicPartitionKey, int]
    ) -> BatchOutcome:
        """Abort after refusals; the re-read (or the halt) stands even if the abort fails."""
        try:
            self._txn.abort()
        except ProducerLostError as exc:
            lost = self._lost(exc, rewind, [])
            return (
                replace(outcome, rewind=lost.rewind)
                if outcome.status is BatchStatus.HALTED
                else lost
            )
        return outcome

    def _lost(
        self,
        exc: ProducerLostError,
        first: dict[TopicPartitionKey, int],
        failed: list[tuple[str, str, str]],
    ) -> BatchOutcome:
        reason = f"abandoning the transactional producer: {exc}"
        if not self._replace(exc):
            return BatchOutcome(BatchStatus.FAILED, rewind=first, reason=reason, failed=failed)
        rewind = self._committed(first)
        return BatchOutcome(BatchStatus.FAILED, rewind=rewind, reason=reason, failed=failed)

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
