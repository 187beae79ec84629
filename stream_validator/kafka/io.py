"""The one produce loop: enqueue with backpressure, then learn every record's outcome.

``produce_one`` enqueues a record, serving deliveries while the local queue is full (for a
bounded time; a record the empty queue cannot hold is too large, as the client's own size
check would say);
``send_all`` enqueues a sequence without waiting for acknowledgements (the service's
pipelined hot path: ``Producer.produce_batch``, acknowledgements counted by an ``AckTally``);
``produce_all`` sends a sequence one by one, flushes, and returns one ``Delivery`` per record
sent, its error classified:

* ``DELIVERED``: acknowledged;
* ``FAILED``: the broker or the client failed it; retrying may succeed (timeouts, leader moves);
* ``REFUSED``: a record-level error (``RECORD_REJECTIONS``): this record, as it is, will never
  be accepted. The broker fails the whole message set, so a batchmate's refusal is only
  about this record when it was produced ``alone`` (flushed before and after);
* ``TOO_LARGE``: the client's own size check refused it at produce(), with no replacement;
* ``UNACKED``: no answer within the flush timeout.

Every user of Kafka produces through here: the service's committer, the replay runner and
the simulator.
"""

from __future__ import annotations

import enum
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Generic, TypeVar

from stream_validator.errors import KafkaClientError, KafkaErrorInfo
from stream_validator.kafka.ports import (
    MSG_SIZE_TOO_LARGE,
    QUEUE_FULL,
    RECORD_REJECTIONS,
    AckTally,
    DeliveryCallback,
    DeliveryFailure,
    DeliveryReport,
    Producer,
    Producible,
)

R = TypeVar("R", bound=Producible)

_QUEUE_FULL_POLL_S = 0.1
#: How long ``produce_one`` waits for room in a queue that does not drain. Queued records
#: leave within ``message.timeout.ms`` (30 s in the service) delivered or failed, so only a
#: stuck queue reaches it; the caller then sees a retriable failure, never an endless wait.
MAX_WAIT_FOR_ROOM_S = 30.0


class Status(enum.Enum):
    """What became of one produced record."""

    PENDING = "pending"
    DELIVERED = "delivered"
    FAILED = "failed"
    REFUSED = "refused"
    TOO_LARGE = "too_large"
    UNACKED = "unacked"


@dataclass(slots=True)
class Delivery(Generic[R]):
    """One record sent (after any too-large replacement) and what became of it."""

    record: R
    alone: bool
    status: Status = Status.PENDING
    error: KafkaErrorInfo | None = None
    acked_at: float | None = None  # wall clock of the acknowledgement (latency metrics)
    replaced: R | None = None  # the record it stands for, when too large to send as it was

    def settle(self, report: DeliveryReport, now: float) -> None:
        """Apply the broker's answer."""
        if report.error is None:
            self.status, self.acked_at = Status.DELIVERED, now
        else:
            self.error = report.error
            refused = report.error.code in RECORD_REJECTIONS
            self.status = Status.REFUSED if refused else Status.FAILED


@dataclass(slots=True)
class Deliveries(Generic[R]):
    """The outcome of one produce_all call, in the order the records were sent."""

    items: list[Delivery[R]] = field(default_factory=list)

    def having(self, *statuses: Status) -> list[Delivery[R]]:
        """The deliveries with one of these statuses."""
        return [d for d in self.items if d.status in statuses]

    @property
    def all_delivered(self) -> bool:
        """Every record was acknowledged."""
        return all(d.status is Status.DELIVERED for d in self.items)


def produce_one(
    producer: Producer,
    record: Producible,
    on_delivery: DeliveryCallback,
    *,
    give_up: Callable[[], bool] = lambda: False,
    max_wait_s: float = MAX_WAIT_FOR_ROOM_S,
    clock: Callable[[], float] = time.monotonic,
) -> bool:
    """Enqueue one record; while the local queue is full, serve deliveries and retry.

    Returns False, the record not enqueued, when ``give_up()`` is true while waiting for room
    (the simulator's stop request). Raises KafkaClientError when the client refuses the
    record itself; also ``MSG_SIZE_TOO_LARGE`` when the queue, empty, still has no room for
    it (its value is larger than ``queue.buffering.max.kbytes``: it never fits), and
    ``QUEUE_FULL`` (retriable) when the queue stayed full for ``max_wait_s``."""
    deadline: float | None = None
    drained = False
    while True:
        try:
            producer.produce(record, on_delivery)
            return True
        except BufferError:
            if drained:
                raise _never_fits(record) from None
            if give_up():
                return False
            if producer.flush(0.0) == 0:
                drained = True  # nothing queued: a second refusal is about this record alone
                continue
            now = clock()
            if deadline is None:
                deadline = now + max_wait_s
            elif now >= deadline:
                raise KafkaClientError(
                    KafkaErrorInfo(
                        QUEUE_FULL,
                        f"no room in the producer queue for {max_wait_s:g} s",
                        retriable=True,
                    ),
                    f"produce to {record.topic}",
                ) from None
            producer.poll(_QUEUE_FULL_POLL_S)


def _never_fits(record: Producible) -> KafkaClientError:
    size = len(record.value or b"")
    return KafkaClientError(
        KafkaErrorInfo(
            MSG_SIZE_TOO_LARGE,
            f"a value of {size} bytes does not fit in the empty producer queue"
            " (queue.buffering.max.kbytes)",
        ),
        f"produce to {record.topic}",
    )


def send_all(
    producer: Producer,
    records: list[R],
    tally: AckTally,
    *,
    too_large: Callable[[R], R | None] = lambda _: None,
) -> tuple[list[tuple[int, KafkaErrorInfo]], list[int]]:
    """Enqueue every record in order; ``tally`` (``producer.ack_tally``) learns each
    acknowledgement (or failure) later, inside ``poll``/``flush``. Nothing waits for the
    broker.

    A record the client does not take goes through ``produce_one`` (waiting for room); one
    too large is replaced in ``records`` by ``too_large(record)`` when that gives one.
    Returns the records the client refused itself (index, error: no callback comes for
    them) and the indices of the replaced ones.
    """
    refused: list[tuple[int, KafkaErrorInfo]] = []
    replaced: list[int] = []
    index, count = 0, len(records)
    while index < count:
        index = producer.produce_batch(records, index, tally)
        if index == count:
            break
        record = records[index]
        try:
            produce_one(producer, record, _with_record(tally, record))
        except KafkaClientError as exc:
            replacement = None
            if exc.info.code == MSG_SIZE_TOO_LARGE and index not in replaced[-1:]:
                replacement = too_large(record)
            if replacement is None:
                refused.append((index, exc.info))
            else:
                records[index] = replacement
                replaced.append(index)
                continue  # produce the replacement (refused in turn if it cannot go either)
        index += 1
    return refused, replaced


def _with_record(tally: AckTally, record: Producible) -> DeliveryCallback:
    def delivered(report: DeliveryReport) -> None:
        failure = None
        if report.error is not None:
            failure = DeliveryFailure(report.error, record.topic, record.key, record.value)
        tally.settle(failure)

    return delivered


def produce_all(
    producer: Producer,
    records: Iterable[R],
    *,
    timeout_s: float,
    alone: Callable[[R], bool] = lambda _: False,
    too_large: Callable[[R], R | None] = lambda _: None,
    clock: Callable[[], float] = time.time,
) -> Deliveries[R]:
    """Produce every record in order, flush, and return what became of each.

    ``alone(record)``: produce it in a message set of its own, so a refusal is its own.
    ``too_large(record)``: the record to send instead when the client finds it too large
    (None: report it as TOO_LARGE).
    """
    deliveries: Deliveries[R] = Deliveries()
    for record in records:
        by_itself = alone(record)
        if by_itself:
            producer.flush(timeout_s)
        _send(producer, record, deliveries, by_itself, too_large, clock)
        if by_itself:
            producer.flush(timeout_s)
    producer.flush(timeout_s)
    for delivery in deliveries.items:
        if delivery.status is Status.PENDING:
            delivery.status = Status.UNACKED
    return deliveries


def _send(
    producer: Producer,
    record: R,
    deliveries: Deliveries[R],
    by_itself: bool,
    too_large: Callable[[R], R | None],
    clock: Callable[[], float],
) -> None:
    original: R | None = None
    while True:
        delivery = Delivery(record, by_itself, replaced=original)

        def on_delivery(report: DeliveryReport, d: Delivery[R] = delivery) -> None:
            d.settle(report, clock())

        try:
            produce_one(producer, record, on_delivery)
        except KafkaClientError as exc:
            if exc.info.code == MSG_SIZE_TOO_LARGE:
                replacement = too_large(record) if original is None else None
                if replacement is not None:
                    original, record = record, replacement
                    continue
                delivery.status = Status.TOO_LARGE
            else:
                refused = exc.info.code in RECORD_REJECTIONS
                # The client's own checks see this record only: its refusal is its own.
                delivery.alone = True
                delivery.status = Status.REFUSED if refused else Status.FAILED
            delivery.error = exc.info
        deliveries.items.append(delivery)
        return
