"""Exactly-once mode: each batch's outputs and its input offsets commit in one transaction.

Enabled by ``kafka.transactional_id`` (unique per live instance, stable across its restarts,
e.g. the pod name of a StatefulSet). Per batch: ``begin_transaction`` -> produce clean and
DLQ outputs -> ``send_offsets_to_transaction`` with the consumer's group metadata (KIP-447
fencing of zombies) -> ``commit_transaction``. An abortable error aborts the transaction and
the batch is re-read; readers with ``isolation.level=read_committed`` never see the aborted
outputs. A fatal error (e.g. fenced by a newer instance with the same id) stops the service.

Every transactional call has a deadline the service enforces itself (``deadline.py``). On
expiry, or on a fatal error that is not fencing (a broker restart can end a transaction with
``INVALID_TXN_STATE``), the call raises ``ProducerLostError``: the caller then abandons the
producer with ``recover()``, which creates a new one with the same ``transactional.id``; its
``init_transactions`` fences the old one and aborts (or completes) its open transaction, after
which the committed offsets are the truth.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable

from confluent_kafka import Consumer, KafkaError, KafkaException, Producer, TopicPartition

from stream_validator.errors import FatalTransactionError, ProducerLostError
from stream_validator.kafka.deadline import CallTimeout, DeadlineCaller
from stream_validator.records import TopicPartitionKey

_RETRIES = 3
# librdkafka's own timeout plus this much before the service gives up on a call.
_GRACE_S = 5.0
# The outputs are flushed before the offsets are sent, so the calls after init only talk to
# the coordinators: a healthy one answers in well under a second. A shorter bound than the
# flush timeout shortens recovery; expiring too early only costs a producer replacement.
_COORDINATOR_TIMEOUT_S = 10.0
# Abandoned producers still blocked in librdkafka, or replacements without a commit between
# them; past this many, a process restart is cleaner.
_MAX_STUCK = 4
_MAX_REPLACEMENTS = 5
# Fatal errors meaning another instance owns the transactional id (or we may not use it).
_FENCED = frozenset(
    {
        KafkaError._FENCED,
        KafkaError.PRODUCER_FENCED,
        KafkaError.INVALID_PRODUCER_EPOCH,
        KafkaError.TRANSACTIONAL_ID_AUTHORIZATION_FAILED,
    }
)

log = logging.getLogger("stream_validator.service")


class Transactions:
    """The transactional half of the service's delivery: begin, then commit or abort."""

    def __init__(
        self,
        make_producer: Callable[[], Producer],
        consumer: Consumer,
        timeout_s: float,
        *,
        caller: DeadlineCaller | None = None,
    ) -> None:
        self._make_producer = make_producer
        self.producer = make_producer()
        self._consumer = consumer
        self._timeout_s = timeout_s
        self._coordinator_timeout_s = min(timeout_s, _COORDINATOR_TIMEOUT_S)
        self._caller = caller or DeadlineCaller()
        self._open = False
        self._replaced_in_a_row = 0

    def init(self) -> None:
        """Register the transactional id (fences an older instance); retried while retriable."""
        self._call(
            "init_transactions", lambda p: p.init_transactions(self._timeout_s), self._timeout_s
        )

    def begin(self) -> None:
        """Open the batch's transaction."""
        self._call("begin_transaction", lambda p: p.begin_transaction(), 0.0)  # local
        self._open = True

    def abort(self) -> None:
        """Abort the open transaction, if any (its outputs stay invisible to committed readers)."""
        if self._open:
            self._open = False
            try:
                self._call(
                    "abort_transaction",
                    lambda p: p.abort_transaction(self._coordinator_timeout_s),
                    self._coordinator_timeout_s,
                )
            except _AbortableError as exc:  # e.g. the broker is away: fence it with a new one
                raise ProducerLostError(f"abort failed: {exc}") from None

    def commit(self, offsets: dict[TopicPartitionKey, int]) -> str | None:
        """Send the offsets and commit; return None on success, or why it was aborted."""
        positions = [TopicPartition(t, p, o) for (t, p), o in sorted(offsets.items())]
        metadata = self._consumer.consumer_group_metadata()
        try:
            self._call(
                "send_offsets_to_transaction",
                lambda p: p.send_offsets_to_transaction(
                    positions, metadata, self._coordinator_timeout_s
                ),
                self._coordinator_timeout_s,
            )
            self._call(
                "commit_transaction",
                lambda p: p.commit_transaction(self._coordinator_timeout_s),
                self._coordinator_timeout_s,
            )
        except _AbortableError as exc:
            self.abort()
            return str(exc)
        self._open = False
        self._replaced_in_a_row = 0
        return None

    def recover(
        self,
        stop: threading.Event,
        backoff_s: float,
        backoff_max_s: float,
        *,
        heartbeat: Callable[[], None] = lambda: None,
    ) -> bool:
        """Replace a lost producer by a new one with the same transactional.id and initialise
        it (retrying while the broker is away); False if stopped first."""
        replace = True
        while not stop.is_set():
            heartbeat()
            if replace:
                self._replaced_in_a_row += 1
                if self._caller.stuck >= _MAX_STUCK or self._replaced_in_a_row > _MAX_REPLACEMENTS:
                    raise FatalTransactionError(
                        f"{self._replaced_in_a_row} producers replaced without a commit,"
                        f" {self._caller.stuck} still blocked in librdkafka"
                    )
                self._open = False
                self.producer = self._make_producer()
            try:
                self.init()
                return True
            except ProducerLostError as exc:
                replace = True
                log.warning("the new producer was lost too", extra={"error": str(exc)})
            except _AbortableError as exc:
                replace = False
                log.warning("init_transactions failed; retrying", extra={"error": str(exc)})
            stop.wait(backoff_s)
            backoff_s = min(backoff_s * 2, backoff_max_s)
        return False

    def _call(self, what: str, operation: Callable[[Producer], object], timeout_s: float) -> None:
        producer = self.producer
        for attempt in range(_RETRIES):
            try:
                self._caller.call(what, lambda: operation(producer), timeout_s + _GRACE_S)
                return
            except CallTimeout as exc:
                self._open = False
                raise ProducerLostError(str(exc)) from None
            except KafkaException as exc:
                error = exc.args[0] if exc.args else None
                if not isinstance(error, KafkaError) or error.code() in _FENCED:
                    self._open = False
                    raise FatalTransactionError(str(exc)) from None
                if error.fatal():
                    self._open = False
                    raise ProducerLostError(f"{error.name()}: {error.str()}") from None
                if error.txn_requires_abort():
                    raise _AbortableError(f"{error.name()}: {error.str()}") from None
                if not error.retriable() or attempt == _RETRIES - 1:
                    raise _AbortableError(f"{error.name()}: {error.str()}") from None
                time.sleep(0.2 * (attempt + 1))


def committed_positions(
    consumer: Consumer, first: dict[TopicPartitionKey, int], timeout_s: float
) -> dict[TopicPartitionKey, int]:
    """Where to resume after a lost producer: the committed offset of every assigned partition,
    else the batch start (nothing committed yet). Raises KafkaException when unreachable."""
    assigned = consumer.assignment()
    committed = consumer.committed(assigned, timeout=timeout_s) if assigned else []
    positions = dict(first)
    positions.update({(tp.topic, tp.partition): tp.offset for tp in committed if tp.offset >= 0})
    return positions


class _AbortableError(Exception):
    pass
