"""The fake broker's admin client (``ports.Admin``)."""

from __future__ import annotations

from collections.abc import Sequence

from stream_validator.kafka.fake.broker import FakeBroker
from stream_validator.kafka.ports import (
    CommittedOffset,
)
from stream_validator.records import TopicPartitionKey


class FakeAdmin:
    """Topic and group administration over the fake broker."""

    def __init__(self, broker: FakeBroker) -> None:
        self.broker = broker

    def topics(self, timeout_s: float) -> dict[str, int]:
        return {name: len(parts) for name, parts in self.broker.logs.items()}

    def create_topics(
        self, names: Sequence[str], *, partitions: int, replication_factor: int, timeout_s: float
    ) -> dict[str, str]:
        outcome = {}
        for name in sorted(set(names)):
            outcome[name] = "exists" if name in self.broker.logs else "created"
            self.broker.create_topic(name, partitions)
        return outcome

    def groups(self, prefix: str, timeout_s: float) -> list[str]:
        return sorted(g for g in self.broker.groups if g.startswith(prefix))

    def group_offsets(
        self, group: str, keys: Sequence[TopicPartitionKey], timeout_s: float
    ) -> dict[TopicPartitionKey, CommittedOffset]:
        stored = self.broker.groups.get(group, {})
        return {k: stored[k] for k in keys if k in stored}

    def end_offsets(
        self, keys: Sequence[TopicPartitionKey], timeout_s: float
    ) -> dict[TopicPartitionKey, int]:
        return {k: self.broker.end(k) for k in keys}
