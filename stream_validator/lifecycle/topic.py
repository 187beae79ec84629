"""A sample of a topic: its newest records, read through the Kafka adapter (``ports``).

``plan_ranges`` shares the sample out over the partitions by their end offsets (the newest
``n // partitions`` of each, what a short partition cannot give going to the others);
``read_sample`` reads those ranges with the adapter's ``RangeReader``: it never waits for
records that arrive after it started, and stops with ``ReadStalledError`` when the broker
delivers nothing for ``timeout_s``. Offsets below a partition's start (retention) are
simply not there: the sample is then smaller than planned. The caller makes the clients
(``kafka.clients``) or passes the fake broker's.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator

from stream_validator.errors import TopicAdminError
from stream_validator.kafka.ports import Admin, Consumer
from stream_validator.kafka.reader import RangeReader

#: Records asked of the consumer per read.
CHUNK = 500


def plan_ranges(ends: dict[int, int], n: int) -> dict[int, tuple[int, int]]:
    """[start, end) per partition: at most ``n`` records in all, the newest of each
    partition, as evenly spread as the partitions' lengths allow."""
    want = dict.fromkeys(ends, 0)
    left = n
    open_partitions = sorted(p for p, end in ends.items() if end > 0)
    while left > 0 and open_partitions:
        share = max(left // len(open_partitions), 1)
        still_open = []
        for partition in open_partitions:
            if left == 0:
                break
            take = min(share, ends[partition] - want[partition], left)
            want[partition] += take
            left -= take
            if want[partition] < ends[partition]:
                still_open.append(partition)
        open_partitions = still_open
    return {p: (ends[p] - want[p], ends[p]) for p in ends}


def read_sample(
    consumer: Consumer,
    admin: Admin,
    topic: str,
    n: int,
    timeout_s: float,
    progress: Callable[[int, int], None] | None = None,
) -> Iterator[list[bytes | None]]:
    """The values of the newest ``n`` records of ``topic``, chunk by chunk; ``progress``
    gets (records read, records planned) after each chunk. TopicAdminError: no such topic;
    KafkaClientError / ReadStalledError: the broker failed or went quiet."""
    partitions = admin.topics(timeout_s).get(topic)
    if partitions is None:
        raise TopicAdminError(f"topic {topic!r} does not exist")
    keys = [(topic, p) for p in range(partitions)]
    ends = {key[1]: end for key, end in admin.end_offsets(keys, timeout_s).items()}
    reader = RangeReader(consumer, topic, plan_ranges(ends, n), timeout_s)
    if progress is not None:
        progress(0, reader.total)
    while reader.pending:
        records, _ = reader.read_chunk(CHUNK)
        if progress is not None:
            progress(reader.done, reader.total)
        if records:
            yield [record.value for record in records]
