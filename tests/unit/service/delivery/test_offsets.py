"""The one record of offsets: batches' first and after offsets merged, and the at-least-once
committer's positions (delivered, committed, confirmed)."""

from __future__ import annotations

from stream_validator.service.delivery.offsets import (
    BatchOffsets,
    CommitPositions,
    merged_after,
    merged_rewind,
)

A, B = ("src", 0), ("src", 1)


def test_merged_rewind_takes_the_oldest_batchs_first_offset_per_partition() -> None:
    """A failed batch and the later ones are read again from the oldest one's first offsets."""
    older = BatchOffsets({A: 5}, {A: 8})
    newer = BatchOffsets({A: 8, B: 0}, {A: 10, B: 3})
    assert merged_rewind([older, newer]) == {A: 5, B: 0}


def test_merged_after_takes_the_newest_batchs_end_per_partition() -> None:
    """A transaction commits one past the last record of its newest batch per partition."""
    older = BatchOffsets({A: 5, B: 0}, {A: 8, B: 3})
    newer = BatchOffsets({A: 8}, {A: 10})
    assert merged_after([older, newer]) == {A: 10, B: 3}


def test_an_asynchronous_commit_carries_only_what_moved() -> None:
    """After a commit, only partitions whose delivered offset moved are committed again."""
    positions = CommitPositions()
    positions.deliver({B: 3, A: 8})
    first = positions.to_commit(asynchronous=True)
    assert first == {A: 8, B: 3} and list(first) == [A, B]  # sorted
    positions.committed(first, asynchronous=True)
    assert not positions.unsent and positions.to_commit(asynchronous=True) == {}
    positions.deliver({A: 10})
    assert positions.unsent and positions.to_commit(asynchronous=True) == {A: 10}


def test_a_synchronous_commit_repeats_what_was_only_committed_asynchronously() -> None:
    """At a revoke or shutdown an asynchronous commit's result may not be known yet: the
    synchronous commit repeats it, and a second synchronous commit has nothing to add."""
    positions = CommitPositions()
    positions.deliver({A: 8})
    positions.committed(positions.to_commit(asynchronous=True), asynchronous=True)
    assert positions.to_commit(asynchronous=False) == {A: 8}
    positions.committed({A: 8}, asynchronous=False)
    assert positions.to_commit(asynchronous=False) == {}


def test_a_failed_asynchronous_commit_is_sent_again_unless_superseded() -> None:
    """A failure reported later puts its partition back among the unsent; one whose later
    commit was issued meanwhile stays as it is (that commit reports for itself)."""
    positions = CommitPositions()
    positions.deliver({A: 8, B: 3})
    positions.committed(positions.to_commit(asynchronous=True), asynchronous=True)
    positions.deliver({B: 5})
    positions.committed(positions.to_commit(asynchronous=True), asynchronous=True)
    assert not positions.unsent
    assert positions.failed({A: 8, B: 3}) == [A]
    assert positions.unsent and positions.to_commit(asynchronous=True) == {A: 8}


def test_dropped_partitions_are_never_committed() -> None:
    """A partition gone to another member leaves every record of the positions."""
    positions = CommitPositions()
    positions.deliver({A: 8, B: 3})
    positions.committed({A: 8}, asynchronous=False)
    positions.drop([A])
    assert positions.to_commit(asynchronous=False) == {B: 3}
    assert (positions.delivered, positions.sent, positions.confirmed) == ({B: 3}, {}, {})
