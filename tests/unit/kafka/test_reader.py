"""RangeReader on the fake broker: fixed ranges, chunks, partition EOF, stalls."""

from __future__ import annotations

import pytest

from stream_validator.errors import KafkaClientError, KafkaErrorInfo, ReadStalledError
from stream_validator.kafka.fake import FakeBroker
from stream_validator.kafka.ports import Consumed, ConsumerErrorEvent
from stream_validator.kafka.reader import RangeReader
from stream_validator.records import OutputRecord, SourceRecord


def filled(*counts: int) -> FakeBroker:
    """Topic ``t`` with ``counts[p]`` committed records in partition p."""
    broker = FakeBroker()
    broker.create_topic("t", len(counts))
    for partition, count in enumerate(counts):
        for i in range(count):
            broker.append("t", f"{partition}-{i}".encode(), partition=partition)
    return broker


def read_all(reader: RangeReader, size: int) -> list[list[tuple[int, int]]]:
    chunks = []
    while reader.pending:
        records, _ = reader.read_chunk(size)
        chunks.append([(r.partition, r.offset) for r in records])
    return chunks


def test_reads_exactly_the_ranges_in_chunks_and_stops_at_their_ends() -> None:
    """Records from start to end (exclusive) of every partition, at most ``size`` per chunk;
    records past an end (arrived later) are not read."""
    broker = filled(5, 3)
    reader = RangeReader(broker.consumer(partition_eof=True), "t", {0: (1, 4), 1: (0, 3)}, 1.0)
    assert reader.total == 6
    chunks = read_all(reader, 4)
    assert all(len(c) <= 4 for c in chunks)
    assert sorted(o for c in chunks for o in c) == [(0, 1), (0, 2), (0, 3), (1, 0), (1, 1), (1, 2)]
    assert reader.position == {0: 4, 1: 3} and reader.done == 6


def test_empty_ranges_read_nothing() -> None:
    """A partition whose start is its end is done before reading."""
    reader = RangeReader(filled(2).consumer(partition_eof=True), "t", {0: (2, 2)}, 1.0)
    assert (reader.pending, reader.total) == ({}, 0)


def test_aborted_records_at_the_end_are_passed_by_the_eof_event() -> None:
    """A range ending in aborted transactional records (never delivered) finishes at the
    partition EOF instead of waiting for them."""
    broker = filled(2)
    producer = broker.producer(transactional_id="x")
    producer.init_transactions(1.0)
    producer.begin_transaction()
    source = SourceRecord("s", 0, 0, None, b"v", [], None)
    producer.produce(OutputRecord("clean", "t", None, b"gone", [], None, source), lambda _r: None)
    producer.flush(1.0)
    producer.abort_transaction(1.0)
    reader = RangeReader(broker.consumer(partition_eof=True), "t", {0: (0, 3)}, 1.0)
    assert read_all(reader, 10) == [[(0, 0), (0, 1)]]
    assert reader.position == {0: 3}


def test_no_progress_for_the_stall_timeout_raises() -> None:
    """Without records or an EOF event for the stall timeout, reading fails and says which
    partitions are unfinished."""
    now = [0.0]

    def idle() -> None:
        now[0] += 1.0

    consumer = filled(1).consumer(on_idle=idle)  # no EOF events: the end never shows
    reader = RangeReader(consumer, "t", {0: (0, 5)}, 3.0, clock=lambda: now[0])
    assert len(reader.read_chunk(10)[0]) == 1
    with pytest.raises(ReadStalledError, match=r"partitions \[0\] unfinished"):
        reader.read_chunk(10)


def test_consumer_errors_other_than_eof_raise() -> None:
    """An error event that is not partition EOF ends the read with the client's error."""

    class Failing:
        def assign(self, positions: object) -> None:
            return None

        def consume(self, max_records: int, timeout_s: float) -> Consumed:
            info = KafkaErrorInfo("_TRANSPORT", "broker down")
            return Consumed(errors=[ConsumerErrorEvent(info, "t", 0, None)])

    reader = RangeReader(Failing(), "t", {0: (0, 5)}, 1.0)  # type: ignore[arg-type]
    with pytest.raises(KafkaClientError, match="_TRANSPORT"):
        reader.read_chunk(10)
