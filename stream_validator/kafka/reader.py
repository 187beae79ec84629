"""Reading a fixed offset range of every partition of a topic, chunk by chunk.

The range ends at offsets observed before reading starts, so a reader never waits for
records that arrive later. With ``isolation.level=read_committed`` the end of a partition
may be a transaction marker or aborted records that are never delivered: the consumer's
partition-EOF event (``enable.partition.eof``) tells that everything below the log end was
read. It reads through ``ports.Consumer``, so the fake broker drives it in unit tests.
"""

from __future__ import annotations

import time
from collections.abc import Callable

from stream_validator.errors import KafkaClientError, ReadStalledError
from stream_validator.kafka.ports import PARTITION_EOF, Consumer, ConsumerErrorEvent
from stream_validator.records import SourceRecord

# How long one consume() call may wait; the stall timeout bounds the whole read.
_POLL_S = 0.2


class RangeReader:
    """Reads [start, end) of every DLQ partition, chunk by chunk; never waits past the end."""

    def __init__(
        self,
        consumer: Consumer,
        topic: str,
        ranges: dict[int, tuple[int, int]],
        stall_timeout_s: float,
        *,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._consumer = consumer
        self._topic = topic
        self._stall_timeout_s = stall_timeout_s
        self._clock = clock
        self.position = {p: start for p, (start, _) in ranges.items()}
        self._start = dict(self.position)
        self.pending = {p: end for p, (start, end) in ranges.items() if start < end}
        self.total = sum(end - start for start, end in ranges.values() if start < end)
        if self.pending:
            consumer.assign({(topic, p): self.position[p] for p in self.pending})

    @property
    def done(self) -> int:
        """Offsets consumed so far (for the progress bar)."""
        return sum(self.position[p] - self._start[p] for p in self.position)

    def read_chunk(self, size: int) -> tuple[list[SourceRecord], set[int]]:
        """Up to ``size`` records, and the partitions whose position moved.

        Raises ReadStalledError when nothing arrives for the stall timeout while partitions
        are unfinished, and KafkaClientError on a consumer error other than partition EOF."""
        records: list[SourceRecord] = []
        touched: set[int] = set()
        deadline = self._clock() + self._stall_timeout_s
        while self.pending and len(records) < size:
            consumed = self._consumer.consume(size - len(records), _POLL_S)
            if not consumed.records and not consumed.errors:
                if records or touched:
                    break
                if self._clock() > deadline:
                    raise ReadStalledError(
                        f"no progress reading {self._topic} for {self._stall_timeout_s:.0f}s"
                        f" (partitions {sorted(self.pending)} unfinished)"
                    )
                continue
            deadline = self._clock() + self._stall_timeout_s
            # An EOF event follows the partition's last record, so records go first.
            for record in consumed.records:
                self._take(record, records, touched)
            for error in consumed.errors:
                self._at_end(error, touched)
        return records, touched

    def _take(self, record: SourceRecord, records: list[SourceRecord], touched: set[int]) -> None:
        partition, offset = record.partition, record.offset
        if record.topic != self._topic or partition not in self.pending:
            return  # fetched before its partition was finished and paused
        end = self.pending[partition]
        if offset >= end:
            self.position[partition] = max(self.position[partition], end)
            self._finish(partition, touched)
            return
        records.append(record)
        self.position[partition] = offset + 1
        touched.add(partition)
        if offset + 1 >= end:
            self._finish(partition, touched)

    def _at_end(self, error: ConsumerErrorEvent, touched: set[int]) -> None:
        if error.info.code != PARTITION_EOF:
            where = f"reading {error.topic or self._topic} [{error.partition}]"
            raise KafkaClientError(error.info, where)
        partition, offset = error.partition, error.offset
        if partition is None or partition not in self.pending or offset is None:
            return
        # At the log end: everything below it was read (aborted records, markers).
        end = self.pending[partition]
        self.position[partition] = max(self.position[partition], min(offset, end))
        self._finish(partition, touched)

    def _finish(self, partition: int, touched: set[int]) -> None:
        del self.pending[partition]
        touched.add(partition)
        self._consumer.pause([(self._topic, partition)])
