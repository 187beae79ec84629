"""The at-least-once committer, pipelined: outputs in flight while the next batches are read.

``submit`` sends a batch's outputs and returns at once; each batch is a ``Flight`` that
counts its acknowledgements. Batches finish in the order they were consumed: a complete
one at the head of the queue is reported and its offsets become committable. Every
``batch.commit_interval_s`` the offsets that moved are committed asynchronously (an
asynchronous commit that failed is reported by the consumer later, and its offsets go out
again with the next commit: nothing here waits for the group coordinator); on revoke and at
shutdown the committer waits for the outputs in flight and commits synchronously.
So no offset is ever committed before every output (clean and DLQ) of every record below
it was acknowledged.

A failed output: the producer is drained (flushed), the batches complete before the failed
one are reported and committable, and the failed batch and every later one are abandoned,
never committed: each of their partitions is read again from its first offset not
committed (outputs that landed are produced again: duplicates, never gaps; each key's
outputs go out again in source order). A record refused for good switches to one batch at
a time (``flight.launch_isolating``: suspects produced alone, flushed) until that batch is
delivered.
"""

from __future__ import annotations

import logging
import time
from collections import deque
from collections.abc import Callable, Sequence

from stream_validator.errors import KafkaClientError
from stream_validator.kafka.ports import Consumer, Producer
from stream_validator.records import TopicPartitionKey
from stream_validator.service.delivery.committer import (
    BaseCommitter,
    BatchOutcome,
    BatchStatus,
    wait_for_commit,
)
from stream_validator.service.delivery.flight import Flight
from stream_validator.service.delivery.offsets import BatchOffsets, CommitPositions
from stream_validator.service.delivery.rejections import Rejections
from stream_validator.service.delivery.replacements import Replacements
from stream_validator.service.plan.planner import BatchPlan

log = logging.getLogger("stream_validator.service")


class AtLeastOnce(BaseCommitter):
    """Pipelined delivery; commits what was acknowledged, asynchronously on an interval."""

    def __init__(
        self,
        consumer: Consumer,
        producer: Producer,
        replacements: Replacements,
        rejections: Rejections,
        *,
        on_commit: Callable[[], None],
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
        self._producer = producer
        self._interval_s = interval_s
        self._clock = clock
        self._flights: deque[Flight] = deque()
        self._positions = CommitPositions()  # fed by the delivered flights, in order
        self._last_commit = clock()

    @property
    def producer(self) -> Producer:
        """The producer."""
        return self._producer

    @property
    def busy(self) -> bool:
        """Outputs in flight, or delivered offsets not committed yet."""
        return bool(self._flights) or self._positions.unsent

    @property
    def due_in_s(self) -> float:
        """Until the interval's asynchronous commit."""
        interval = self._interval_s
        return wait_for_commit(self._last_commit + interval, self._clock(), interval)

    @property
    def in_flight(self) -> int:
        """The records of the batches not reported yet (complete ones behind an incomplete
        one included: they are not committable either)."""
        return sum(len(flight.outputs) for flight in self._flights)

    def make_room(self, timeout_s: float) -> None:
        """Serve acknowledgements, waiting up to ``timeout_s`` for the first."""
        self._producer.poll(timeout_s)

    def start(self) -> bool:
        """Nothing to prepare."""
        return True

    def submit(self, plans: Sequence[BatchPlan], offsets: BatchOffsets) -> list[BatchOutcome]:
        """Send the batch's outputs; the outcomes of the batches finished meanwhile."""
        if self._rejections.pending:
            return self._submit_alone(plans, offsets)
        self._flights.append(self._launch(self._producer, plans, offsets))
        return self.poll()

    def poll(self) -> list[BatchOutcome]:
        """Serve acknowledgements; report finished batches; commit when the interval is up."""
        self._producer.poll(0)
        outcomes = self._take_ready() + self._collect(drained=False)
        failed = self._consumer.commit_failures()
        if failed:
            # E.g. during a cooperative rebalance: without sending them again, a partition
            # kept through it would stay behind until the next revoke or shutdown (lag shown
            # wrongly, and a restart re-reads more than needed).
            again = self._positions.failed(failed)
            log.warning(
                "asynchronous commit failed; sent again with the next commit",
                extra={"partitions": again},
            )
        if self._clock() - self._last_commit >= self._interval_s:
            self._commit("interval", asynchronous=True)
        return outcomes

    def commit_pending(self, reason: str) -> None:
        """Wait for the outputs in flight, then commit every delivered offset synchronously."""
        self._ready += self._drain()
        self._commit(reason, asynchronous=False)

    def drop(self, keys: Sequence[TopicPartitionKey]) -> None:
        """Never commit for partitions another member owns now."""
        self._positions.drop(keys)
        for key in keys:
            for flight in self._flights:
                flight.offsets.first.pop(key, None)
                flight.offsets.after.pop(key, None)
        super().drop(keys)

    def finish(self) -> list[BatchOutcome]:
        """Wait for the outputs in flight and commit what was delivered, synchronously."""
        outcomes = self._take_ready() + self._drain()
        self._commit("shutdown", asynchronous=False)
        return outcomes

    # --- internals ----------------------------------------------------------------------

    def _collect(self, *, drained: bool) -> list[BatchOutcome]:
        """Report the complete flights at the head; after a failure drain, then abandon the
        failed flight and every later one (``drained``: whatever is still unanswered too)."""
        flights = self._flights
        outcomes: list[BatchOutcome] = []
        acked_at: float | None = None
        while flights and flights[0].complete:
            acked_at = acked_at or time.time()
            outcomes.append(self._delivered(flights.popleft(), acked_at))
        if not flights:
            return outcomes
        if not drained and any(flight.failed for flight in flights):
            return outcomes + self._drain()
        if drained:
            abandoned = list(flights)
            flights.clear()
            outcomes.append(self._abandon(abandoned))
        return outcomes

    def _drain(self) -> list[BatchOutcome]:
        """Wait (up to the flush timeout) for every output in flight, then sort them out."""
        if self._flights:
            try:
                self._producer.flush(self._flush_timeout_s)
            except KafkaClientError as exc:  # a fatal producer error: nothing more will land
                log.warning("flush failed", extra={"error": self._safe(exc)})
        return self._collect(drained=True)

    def _delivered(self, flight: Flight, acked_at: float) -> BatchOutcome:
        after = flight.offsets.after
        self._positions.deliver(after)
        if self._rejections.pending:
            self._rejections.forget(after)
        duration = time.perf_counter() - flight.started
        return BatchOutcome(BatchStatus.DELIVERED, flight.delivered(acked_at), duration_s=duration)

    def _submit_alone(
        self, plans: Sequence[BatchPlan], offsets: BatchOffsets
    ) -> list[BatchOutcome]:
        """Refused records are being isolated: one batch at a time, flushed (rare)."""
        outcomes = self._take_ready() + self._drain()
        reread = self._read_again_too(outcomes, offsets)
        if reread is not None:
            return reread
        self._flights.append(self._launch(self._producer, plans, offsets))
        return outcomes + self._drain()

    def _commit(self, reason: str, *, asynchronous: bool) -> None:
        """Commit the delivered offsets: those that moved (asynchronous), or all of them."""
        self._last_commit = self._clock()
        offsets = self._positions.to_commit(asynchronous=asynchronous)
        if not offsets:
            return
        try:
            self._consumer.commit(offsets, asynchronous=asynchronous)
        except KafkaClientError as exc:
            log.warning(
                "commit failed; will retry at the next commit",
                extra={"reason": reason, "error": self._safe(exc)},
            )
            return
        self._positions.committed(offsets, asynchronous=asynchronous)
        self._on_commit()
