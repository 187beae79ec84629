"""Exactly-once mode: each batch's outputs and its input offsets commit in one transaction.

Enabled by ``kafka.transactional_id`` (unique per live instance, stable across its restarts,
e.g. the pod name of a StatefulSet). Per batch: ``begin_transaction`` -> produce clean and
DLQ outputs -> ``send_offsets_to_transaction`` with the consumer's group metadata (KIP-447
fencing of zombies) -> ``commit_transaction``. An abortable error aborts the transaction and
the batch is re-read; readers with ``isolation.level=read_committed`` never see the aborted
outputs. A fatal error (e.g. fenced by a newer instance with the same id) stops the service.
"""

from __future__ import annotations

import time

from confluent_kafka import Consumer, KafkaError, KafkaException, Producer, TopicPartition

TopicPartitionKey = tuple[str, int]
_RETRIES = 3


class FatalTransactionError(Exception):
    """The producer can no longer run transactions (fenced, or a fatal broker error)."""


class Transactions:
    """The transactional half of the service's delivery: begin, then commit or abort."""

    def __init__(self, producer: Producer, consumer: Consumer, timeout_s: float) -> None:
        self._producer = producer
        self._consumer = consumer
        self._timeout_s = timeout_s
        self._open = False

    def init(self) -> None:
        """Register the transactional id (fences an older instance); retried while retriable."""
        self._call(lambda: self._producer.init_transactions(self._timeout_s))

    def begin(self) -> None:
        """Open the batch's transaction."""
        self._call(self._producer.begin_transaction)
        self._open = True

    def abort(self) -> None:
        """Abort the open transaction, if any (its outputs stay invisible to committed readers)."""
        if self._open:
            self._open = False
            try:
                self._call(lambda: self._producer.abort_transaction(self._timeout_s))
            except _AbortableError as exc:  # cannot abort: the producer state is unknown
                raise FatalTransactionError(f"abort failed: {exc}") from None

    def commit(self, offsets: dict[TopicPartitionKey, int]) -> str | None:
        """Send the offsets and commit; return None on success, or why it was aborted."""
        positions = [TopicPartition(t, p, o) for (t, p), o in sorted(offsets.items())]
        try:
            self._call(
                lambda: self._producer.send_offsets_to_transaction(
                    positions, self._consumer.consumer_group_metadata(), self._timeout_s
                )
            )
            self._call(lambda: self._producer.commit_transaction(self._timeout_s))
        except _AbortableError as exc:
            self.abort()
            return str(exc)
        self._open = False
        return None

    def _call(self, operation: object) -> None:
        for attempt in range(_RETRIES):
            try:
                operation()  # type: ignore[operator]
                return
            except KafkaException as exc:
                error = exc.args[0] if exc.args else None
                if not isinstance(error, KafkaError) or error.fatal():
                    self._open = False
                    raise FatalTransactionError(str(exc)) from None
                if error.txn_requires_abort():
                    raise _AbortableError(f"{error.name()}: {error.str()}") from None
                if not error.retriable() or attempt == _RETRIES - 1:
                    raise _AbortableError(f"{error.name()}: {error.str()}") from None
                time.sleep(0.2 * (attempt + 1))


class _AbortableError(Exception):
    pass
