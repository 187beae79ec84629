"""Reading a fixed offset range of every partition of a topic, chunk by chunk.

The range ends at offsets observed before reading starts, so a reader never waits for
records that arrive later. With ``isolation.level=read_committed`` the end of a partition
may be a transaction marker or aborted records that are never delivered: the consumer's
partition-EOF event tells that everything below the log end was read.
"""

from __future__ import annotations

import time

from confluent_kafka import Consumer, KafkaError, KafkaException, Message, TopicPartition

from stream_validator.errors import ReadStalledError
from stream_validator.kafka.messages import source_record
from stream_validator.records import SourceRecord


class RangeReader:
    """Reads [start, end) of every DLQ partition, chunk by chunk; never waits past the end."""

    def __init__(
        self,
        consumer: Consumer,
        topic: str,
        ranges: dict[int, tuple[int, int]],
        stall_timeout_s: float,
    ) -> None:
        self._consumer = consumer
        self._topic = topic
        self._stall_timeout_s = stall_timeout_s
        self.position = {p: start for p, (start, _) in ranges.items()}
        self._start = dict(self.position)
        self.pending = {p: end for p, (start, end) in ranges.items() if start < end}
        self.total = sum(end - start for start, end in ranges.values() if start < end)
        if self.pending:
            consumer.assign([TopicPartition(topic, p, self.position[p]) for p in self.pending])

    @property
    def done(self) -> int:
        """Offsets consumed so far (for the progress bar)."""
        return sum(self.position[p] - self._start[p] for p in self.position)

    def read_chunk(self, size: int) -> tuple[list[SourceRecord], set[int]]:
        """Up to ``size`` records, and the partitions whose position moved."""
        records: list[SourceRecord] = []
        touched: set[int] = set()
        deadline = time.monotonic() + self._stall_timeout_s
        while self.pending and len(records) < size:
            messages = self._consumer.consume(num_messages=size - len(records), timeout=0.2)
            if not messages:
                if records or touched:
                    break
                if time.monotonic() > deadline:
                    raise ReadStalledError(
                        f"no progress reading {self._topic} for {self._stall_timeout_s:.0f}s"
                        f" (partitions {sorted(self.pending)} unfinished)"
                    )
                continue
            deadline = time.monotonic() + self._stall_timeout_s
            for message in messages:
                self._take(message, records, touched)
        return records, touched

    def _take(self, message: Message, records: list[SourceRecord], touched: set[int]) -> None:
        partition, offset, error = message.partition(), message.offset(), message.error()
        if partition is None or partition not in self.pending or offset is None:
            if error is not None and error.code() != KafkaError._PARTITION_EOF:
                raise KafkaException(error)
            return
        end = self.pending[partition]
        if error is not None:
            if error.code() != KafkaError._PARTITION_EOF:
                raise KafkaException(error)
            # At the log end: everything below it was read (aborted records, markers).
            self.position[partition] = max(self.position[partition], min(offset, end))
            self._finish(partition, touched)
            return
        if offset >= end:
            self.position[partition] = max(self.position[partition], end)
            self._finish(partition, touched)
            return
        records.append(source_record(message))
        self.position[partition] = offset + 1
        touched.add(partition)
        if offset + 1 >= end:
            self._finish(partition, touched)

    def _finish(self, partition: int, touched: set[int]) -> None:
        del self.pending[partition]
        touched.add(partition)
        self._consumer.pause([TopicPartition(self._topic, partition)])
