"""The committer: owns produce -> acknowledgement -> offset commit for the service.

One interface (``Committer.submit(plans, offsets) -> [BatchOutcome]``), two implementations:

* ``AtLeastOnce`` (``atleastonce.py``) pipelines: it sends a batch's outputs and returns at
  once, and commits asynchronously, every ``batch.commit_interval_s``, per partition the
  offset below which every batch was completely acknowledged.
* ``Transactional`` (``transactional.py``) sends the batches of one commit interval inside
  one Kafka transaction whose offsets commit with the outputs (``kafka.transactions``).

Both send through one path (``flight.launch``) and learn from record-level refusals
(``rejections.py``): the batches are re-read at once, suspects produced alone
(``flight.launch_isolating``: one batch at a time, flushed, until it is committed), and a DLQ
entry refused alone halts the service. A ``BatchOutcome`` says exactly what one batch delivered
to clean and DLQ per route, or what failed and where the consumer must rewind to; the loop
reports from it and from nothing else.
"""

from __future__ import annotations

import enum
import logging
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from typing import Protocol

from stream_validator.kafka.ports import Consumer, Producer
from stream_validator.records import TopicPartitionKey
from stream_validator.service.delivery.accounting import RouteDelivery
from stream_validator.service.delivery.flight import Flight, launch, launch_isolating
from stream_validator.service.delivery.offsets import BatchOffsets, merged_rewind
from stream_validator.service.delivery.rejections import Rejection, Rejections
from stream_validator.service.delivery.replacements import Replacements
from stream_validator.service.plan.planner import BatchPlan

__all__ = [
    "BaseCommitter",
    "BatchOutcome",
    "BatchStatus",
    "Committer",
]

log = logging.getLogger("stream_validator.service")


class BatchStatus(enum.Enum):
    """What became of a submitted batch."""

    DELIVERED = "delivered"  # every output acknowledged; offsets committed (or pending a retry)
    FAILED = "failed"  # nothing committed: rewind and retry after a backoff
    REREAD = "reread"  # refused records learnt: rewind and re-read at once
    HALTED = "halted"  # a record cannot be delivered anywhere without loss


@dataclass(frozen=True, slots=True)
class BatchOutcome:
    """What became of one batch (FAILED, REREAD, HALTED: of it and every batch after it).
    ``routes`` is filled only when DELIVERED."""

    status: BatchStatus
    routes: list[RouteDelivery] = field(default_factory=list)
    rewind: dict[TopicPartitionKey, int] = field(default_factory=dict)
    reason: str | None = None
    failed: list[tuple[str, str, str]] = field(default_factory=list)  # (route, kind, reason)
    duration_s: float = 0.0  # from submit to the last acknowledgement


#: The shortest wait for records while a commit is due: the loop never spins.
MIN_WAIT_S = 0.001


def wait_for_commit(due_at: float, now: float, interval_s: float) -> float:
    """How long the loop may wait for records before a commit due at ``due_at``: what is
    left, but never less than MIN_WAIT_S (or the interval, when that is shorter)."""
    return max(due_at - now, min(interval_s, MIN_WAIT_S))


class Committer(Protocol):
    """Delivers batches and commits their offsets (at-least-once or transactional)."""

    @property
    def producer(self) -> Producer:
        """The producer in use (it changes when a transactional one is replaced)."""

    def start(self) -> bool:
        """Prepare to deliver (register the transactional id); False if stopped first."""

    @property
    def busy(self) -> bool:
        """Outputs are in flight or offsets wait for their commit: poll() again soon."""

    @property
    def due_in_s(self) -> float:
        """Seconds until the next commit is due (``wait_for_commit``); while busy, the loop
        waits no longer than this for records, so a quiet feed never delays a commit."""

    @property
    def in_flight(self) -> int:
        """Records submitted and not delivered yet (``batch.max_in_flight_records`` bounds
        them): outputs awaiting acknowledgement, or in the open transaction."""

    def make_room(self, timeout_s: float) -> None:
        """The window is full: wait up to ``timeout_s`` for acknowledgements (or commit
        the open transaction now); the outcomes come with the next poll."""

    def submit(self, plans: Sequence[BatchPlan], offsets: BatchOffsets) -> list[BatchOutcome]:
        """Send the plans' outputs; the outcomes of the batches finished meanwhile."""

    def poll(self) -> list[BatchOutcome]:
        """Serve acknowledgements, commit when the interval is up; the finished batches."""

    def commit_pending(self, reason: str) -> None:
        """Partitions are revoked: wait for the outputs in flight and commit synchronously
        what was acknowledged (the outcomes come with the next poll)."""

    def drop(self, keys: Sequence[TopicPartitionKey]) -> None:
        """Forget partitions this member no longer owns (never commit for them)."""

    def finish(self) -> list[BatchOutcome]:
        """Before the consumer closes: wait for the outputs in flight, commit what was
        delivered; the outcomes of the batches finished meanwhile."""


class BaseCommitter:
    """What both committers share: the send path, abandoning failed flights, refusals."""

    def __init__(
        self,
        consumer: Consumer,
        replacements: Replacements,
        rejections: Rejections,
        *,
        on_commit: Callable[[], None],
        safe: Callable[[object], str],
        flush_timeout_s: float,
    ) -> None:
        self._consumer = consumer
        self._replacements = replacements
        self._rejections = rejections
        self._on_commit = on_commit
        self._safe = safe
        self._flush_timeout_s = flush_timeout_s
        self._ready: list[BatchOutcome] = []  # finished inside a client callback, for the loop

    def _launch(
        self, producer: Producer, plans: Sequence[BatchPlan], offsets: BatchOffsets
    ) -> Flight:
        """Send the plans' outputs without waiting: at once, or, while refused records are
        isolated, each suspect alone (the caller then waits for this flight alone)."""
        started = time.perf_counter()
        if not self._rejections.pending:
            return launch(producer, plans, offsets, started, self._replacements)
        return launch_isolating(
            producer,
            plans,
            offsets,
            started,
            self._replacements,
            self._rejections,
            flush_timeout_s=self._flush_timeout_s,
        )

    def _abandon(self, flights: Sequence[Flight]) -> BatchOutcome:
        """These flights (a failed one and every later one) are not committed: read their
        partitions again from the oldest one's first offsets; learn what was refused."""
        rewind = merged_rewind(flight.offsets for flight in flights)
        refused: list[Rejection] = []
        failed: list[tuple[str, str, str]] = []
        unacked = 0
        for flight in flights:
            rejections, failures = flight.problems()
            refused += rejections
            failed += failures
            unacked += max(flight.pending, 0)
        if refused:
            return self._refused_outcome(refused, rewind)
        reasons = sorted({reason for _, _, reason in failed})
        what = f"{len(failed)} outputs failed, {unacked} unacknowledged"
        reason = f"{what}: {'; '.join(reasons)[:500]}" if reasons else what
        return BatchOutcome(BatchStatus.FAILED, rewind=rewind, reason=reason, failed=failed)

    def _refused_outcome(
        self, refused: list[Rejection], rewind: dict[TopicPartitionKey, int]
    ) -> BatchOutcome:
        dead_end = self._rejections.learn(refused)
        if dead_end is not None:
            src = dead_end.source
            reason = self._safe(
                f"the DLQ topic {dead_end.topic} refused the DLQ entry of {src.topic}"
                f" [{src.partition}] @{src.offset}: {dead_end.reason}; nothing was committed"
                " past it"
            )
            return BatchOutcome(BatchStatus.HALTED, rewind=rewind, reason=reason)
        log.warning(
            "the broker refused records for good; re-reading the batch to isolate them",
            extra={
                "refused": len(refused),
                "examples": [
                    f"{r.topic} <- {r.source.topic} [{r.source.partition}] @{r.source.offset}:"
                    f" {r.reason}"
                    for r in refused[:3]
                ],
            },
        )
        return BatchOutcome(BatchStatus.REREAD, rewind=rewind, reason="refused")

    def _take_ready(self) -> list[BatchOutcome]:
        """The outcomes finished inside a client callback (a revoke), for the loop."""
        ready, self._ready = self._ready, []
        return ready

    @staticmethod
    def _read_again_too(
        outcomes: list[BatchOutcome], offsets: BatchOffsets
    ) -> list[BatchOutcome] | None:
        """When the last of the outcomes is not delivered, the batch read after it is read
        again too: that outcome's rewind, extended by the batch's first offsets (else None)."""
        if not outcomes or outcomes[-1].status is BatchStatus.DELIVERED:
            return None
        failed = outcomes[-1]
        return [*outcomes[:-1], replace(failed, rewind={**offsets.first, **failed.rewind})]

    def drop(self, keys: Sequence[TopicPartitionKey]) -> None:
        """Forget partitions this member no longer owns."""
        self._rejections.forget_partitions(list(keys))
