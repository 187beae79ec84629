"""Sampling a topic: the plan over partitions, and the read through the fake broker."""

from __future__ import annotations

import pytest

from stream_validator.errors import TopicAdminError
from stream_validator.kafka.fake import FakeBroker
from stream_validator.lifecycle.topic import plan_ranges, read_sample


def test_the_plan_takes_the_newest_records_spread_over_the_partitions() -> None:
    """10 of 3 partitions: the newest of each, a short partition's share going elsewhere."""
    ranges = plan_ranges({0: 100, 1: 2, 2: 50}, 10)
    assert ranges == {0: (96, 100), 1: (0, 2), 2: (46, 50)}
    assert sum(end - start for start, end in ranges.values()) == 10


def test_the_plan_takes_everything_of_a_small_topic() -> None:
    """Asking for more than there is reads every partition whole."""
    assert plan_ranges({0: 3, 1: 0}, 100) == {0: (0, 3), 1: (0, 0)}


def test_read_sample_yields_the_planned_values_and_reports_progress() -> None:
    """The newest N values come back (tombstones as None), progress ends at the plan."""
    broker = FakeBroker()
    broker.create_topic("t", 2)
    for i in range(6):
        broker.append("t", f'{{"i": {i}}}'.encode(), partition=i % 2)
    broker.append("t", None, partition=0)
    seen: list[tuple[int, int]] = []
    values = [
        value
        for chunk in read_sample(
            broker.consumer(partition_eof=True),
            broker.admin(),
            "t",
            4,
            1.0,
            lambda done, total: seen.append((done, total)),
        )
        for value in chunk
    ]
    assert sorted(values, key=repr) == sorted(
        [None, b'{"i": 4}', b'{"i": 3}', b'{"i": 5}'], key=repr
    )
    assert seen[0] == (0, 4) and seen[-1] == (4, 4)


def test_a_missing_topic_is_a_clear_error() -> None:
    """No such topic: TopicAdminError naming it."""
    broker = FakeBroker()
    with pytest.raises(TopicAdminError, match="'nope' does not exist"):
        list(read_sample(broker.consumer(partition_eof=True), broker.admin(), "nope", 5, 1.0))
