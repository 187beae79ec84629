"""The one transaction implementation: a batch's outputs and its input offsets commit together.

The service's exactly-once mode uses it (enabled by ``kafka.transactional_id``, unique per live
instance, stable across its restarts, e.g. the pod name of a StatefulSet), and so does the
replay runner. It talks to the adapter's ``ports.Producer``, so the fake broker drives it in
unit tests. Per batch: ``begin_transaction`` -> produce clean and
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
from collections.abc import Callable, Mapping

from stream_validator.errors import (
    CallTimeoutError,
    FatalTransactionError,
    KafkaClientError,
    ProducerLostError,
    TransactionCallError,
)
from stream_validator.kafka.deadline import DeadlineCaller
from stream_validator.kafka.ports import FENCING, Consumer, GroupMetadata, Producer
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

log = logging.getLogger("stream_validator.service")


class Transactions:
    """A transactional producer: begin, then commit (with consumer offsets) or abort."""

    def __init__(
        self,
        make_producer: Callable[[], Producer],
        group: Callable[[], GroupMetadata],
        timeout_s: float,
        *,
        caller: DeadlineCaller | None = None,
        retry_pause_s: float = 0.2,
    ) -> None:
        self._make_producer = make_producer
        self.producer = make_producer()
        self._group = group
        self._retry_pause_s = retry_pause_s
        self._timeout_s = timeout_s
        self._coordinator_timeout_s = min(timeout_s, _COORDINATOR_TIMEOUT_S)
        self._caller = caller or DeadlineCaller()
        self._open = False
        self._replaced_in_a_row = 0
        #: The last commit's send_offsets_to_transaction and commit_transaction, in seconds.
        self.last_commit_calls_s = (0.0, 0.0)

    def init(self) -> None:
        """Register the transactional id (fences an older instance); retried while retriable."""
        self._call(
            "init_transactions", lambda p: p.init_transactions(self._timeout_s), self._timeout_s
        )

    def begin(self) -> None:
        """Open the batch's transaction. Raises ProducerLostError or FatalTransactionError.

        A begin that fails otherwise (librdkafka's local state check: the producer is not
        where the service left it) is a lost producer too: replacing it fences whatever the
        old one still holds, and the batch is read again from the committed offsets."""
        try:
            self._call("begin_transaction", lambda p: p.begin_transaction(), 0.0)  # local
        except TransactionCallError as exc:
            raise ProducerLostError(f"begin failed: {exc}") from None
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
            except TransactionCallError as exc:  # e.g. the broker is away: fence it with a new one
                raise ProducerLostError(f"abort failed: {exc}") from None

    @property
    def open(self) -> bool:
        """A transaction is open (begun, not yet committed or aborted)."""
        return self._open

    def commit(
        self, offsets: Mapping[TopicPartitionKey, int], metadata: str | None = None
    ) -> str | None:
        """Send the offsets (with commit ``metadata``) and commit; return None on success, or
        why it was aborted. Raises ProducerLostError or FatalTransactionError."""
        group = self._group()
        started = time.monotonic()
        try:
            if offsets:
                self._call(
                    "send_offsets_to_transaction",
                    lambda p: p.send_offsets_to_transaction(
                        offsets, group, self._coordinator_timeout_s, metadata
                    ),
                    self._coordinator_timeout_s,
                )
            sent = time.monotonic()
            self._call(
                "commit_transaction",
                lambda p: p.commit_transaction(self._coordinator_timeout_s),
                self._coordinator_timeout_s,
            )
        except TransactionCallError as exc:
            self.abort()
            return str(exc)
        self._open = False
        self._replaced_in_a_row = 0
        self.last_commit_calls_s = (sent - started, time.monotonic() - sent)
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
            except TransactionCallError as exc:
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
            except CallTimeoutError as exc:
                self._open = False
                raise ProducerLostError(str(exc)) from None
            except KafkaClientError as exc:
                error = exc.info
                if error.code in FENCING:
                    self._open = False
                    raise FatalTransactionError(f"{what}: {error}") from None
                if error.fatal:
                    self._open = False
                    raise ProducerLostError(f"{what}: {error}") from None
                if error.abortable or not error.retriable or attempt == _RETRIES - 1:
                    raise TransactionCallError(f"{what}: {error}") from None
                time.sleep(self._retry_pause_s * (attempt + 1))


def committed_positions(
    consumer: Consumer, first: Mapping[TopicPartitionKey, int], timeout_s: float
) -> dict[TopicPartitionKey, int]:
    """Where to resume after a lost producer: the committed offset of every assigned partition,
    else the batch start (nothing committed yet). Raises KafkaClientError when unreachable."""
    positions = dict(first)
    positions.update(consumer.committed(consumer.assignment(), timeout_s))
    return positions
