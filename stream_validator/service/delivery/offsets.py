"""The one record of offsets: where each batch in flight starts and ends, and per partition
what its delivered batches make committable.

A consumed batch carries its ``BatchOffsets`` in its ``Flight``; nothing else tracks source
offsets. A failed batch (and every later one) is read again from ``merged_rewind`` of their
flights; a transaction commits ``merged_after`` of its flights. The at-least-once committer
keeps ``CommitPositions``, fed only by flights that were completely acknowledged, in the
order they were consumed: so no offset is ever committed past an output not acknowledged.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field

from stream_validator.records import TopicPartitionKey


@dataclass(frozen=True, slots=True)
class BatchOffsets:
    """Where a consumed batch starts and ends, per partition."""

    first: dict[TopicPartitionKey, int]  # the batch's first offset: where a retry starts
    after: dict[TopicPartitionKey, int]  # one past its last record: what a commit stores


def merged_rewind(batches: Iterable[BatchOffsets]) -> dict[TopicPartitionKey, int]:
    """Per partition, the first offset of the oldest of these batches that holds it."""
    rewind: dict[TopicPartitionKey, int] = {}
    for offsets in batches:
        for key, offset in offsets.first.items():
            rewind.setdefault(key, offset)
    return rewind


def merged_after(batches: Iterable[BatchOffsets]) -> dict[TopicPartitionKey, int]:
    """Per partition, one past the last record of the newest of these batches that holds it."""
    after: dict[TopicPartitionKey, int] = {}
    for offsets in batches:
        after.update(offsets.after)
    return after


@dataclass(slots=True)
class CommitPositions:
    """Per partition: one past the last delivered batch, the last commit issued (and not
    reported failed) and the last synchronous commit that succeeded."""

    delivered: dict[TopicPartitionKey, int] = field(default_factory=dict)
    sent: dict[TopicPartitionKey, int] = field(default_factory=dict)
    confirmed: dict[TopicPartitionKey, int] = field(default_factory=dict)

    def deliver(self, after: dict[TopicPartitionKey, int]) -> None:
        """A batch was completely acknowledged: its offsets may be committed."""
        self.delivered.update(after)

    @property
    def unsent(self) -> bool:
        """Delivered offsets wait for their commit."""
        return self.delivered != self.sent

    def to_commit(self, *, asynchronous: bool) -> dict[TopicPartitionKey, int]:
        """The delivered offsets a commit must carry, sorted: those that moved since the last
        commit issued (asynchronous), or since the last synchronous one (synchronous, at a
        revoke or shutdown: it repeats what was only committed asynchronously, whose result
        may not have been reported yet)."""
        known = self.sent if asynchronous else self.confirmed
        moved = {k: v for k, v in self.delivered.items() if known.get(k) != v}
        return dict(sorted(moved.items()))

    def committed(self, offsets: dict[TopicPartitionKey, int], *, asynchronous: bool) -> None:
        """These offsets were committed (synchronously: and are known to be)."""
        self.sent.update(offsets)
        if not asynchronous:
            self.confirmed.update(offsets)

    def failed(self, offsets: dict[TopicPartitionKey, int]) -> list[TopicPartitionKey]:
        """Asynchronous commits of these offsets were reported failed: each partition whose
        last commit issued was that one goes out again with the next commit (a later commit
        issued meanwhile supersedes it and reports for itself). The partitions sent again."""
        again = [k for k, v in offsets.items() if self.sent.get(k) == v]
        for key in again:
            del self.sent[key]
        return again

    def drop(self, keys: Iterable[TopicPartitionKey]) -> None:
        """Partitions another member owns now: never commit for them."""
        for key in keys:
            self.delivered.pop(key, None)
            self.sent.pop(key, None)
            self.confirmed.pop(key, None)
