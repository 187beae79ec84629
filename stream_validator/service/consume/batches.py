"""Taking a batch from the consumer: as much as has arrived, a bounded linger for more, and
nothing while the batch would not fit in the in-flight window."""

from __future__ import annotations

from stream_validator.config.settings import ServiceConfig
from stream_validator.kafka.ports import Consumed, Consumer
from stream_validator.service.delivery.committer import Committer


class Batches:
    """The loop's consume step (``batch.max_records``, ``batch.linger_s``,
    ``batch.max_in_flight_records``)."""

    __slots__ = ("_linger_s", "_max_in_flight", "_max_records")

    def __init__(self, config: ServiceConfig) -> None:
        self._max_records = config.batch_max_records
        self._max_in_flight = config.batch_max_in_flight_records
        self._linger_s = config.batch_linger_s

    def take(self, consumer: Consumer, committer: Committer | None, timeout_s: float) -> Consumed:
        """Take what has arrived, up to ``batch.max_records``: wait (up to ``timeout_s``)
        only for the first record, then at most ``batch.linger_s`` for more (no longer than
        until the next commit is due). Nothing while a batch would not fit in the window
        (``batch.max_in_flight_records``).

        ``consume(max_records, timeout)`` alone holds the batch open until it is full: at
        20,000 records/s a batch of 500 waits 25 ms for its last record, which was most of
        the service's latency. When records are queued already (a busy feed), the first,
        non-blocking call returns a whole batch and nothing waits.
        """
        max_records = self._max_records
        if committer and committer.in_flight + max_records > self._max_in_flight:
            # The window is full: serve acknowledgements, not the feed (what a crash can
            # duplicate stays bounded). Asking for no record keeps the group membership
            # (max.poll.interval.ms) without taking any.
            committer.make_room(timeout_s)
            return consumer.consume(0, 0.0)
        consumed = consumer.consume(max_records, 0.0)
        if not consumed.records and not consumed.errors:
            consumed = consumer.consume(1, timeout_s)
            if not consumed.records:
                return consumed
        left = max_records - len(consumed.records)
        linger = self._linger_s
        if linger > 0 and committer and committer.busy:
            linger = min(linger, committer.due_in_s)  # the linger never delays a commit
        if left > 0 and (linger > 0 or len(consumed.records) == 1):
            more = consumer.consume(left, linger)
            consumed.records.extend(more.records)
            consumed.errors.extend(more.errors)
            consumed.unreadable_headers.update(more.unreadable_headers)
        return consumed
