"""Record-level refusals: suspects are produced alone, refusals alone become DLQ entries."""

from __future__ import annotations

from stream_validator.records import SourceRecord
from stream_validator.service.delivery.rejections import Rejection, Rejections


def record(offset: int, partition: int = 0) -> SourceRecord:
    return SourceRecord("src", partition, offset, b"k", b"{}", [], None)


def refusal(offset: int, kind: str = "clean", *, alone: bool) -> Rejection:
    return Rejection(record(offset), kind, "clean-topic", "MSG_SIZE_TOO_LARGE: too big", alone)


def test_refused_in_a_batch_makes_a_suspect_not_a_rejection() -> None:
    """A record refused together with batchmates is produced alone next time, not rejected."""
    rejections = Rejections()
    assert rejections.learn([refusal(3, alone=False)]) is None
    assert rejections.produce_alone(record(3))
    assert rejections.rejected(record(3)) is None
    assert not rejections.produce_alone(record(4))


def test_refused_alone_is_rejected_with_topic_and_reason() -> None:
    """A clean output refused on its own is rejected, naming the topic and the broker's error."""
    rejections = Rejections()
    rejections.learn([refusal(3, alone=True)])
    assert rejections.rejected(record(3)) == "clean-topic: MSG_SIZE_TOO_LARGE: too big"


def test_dlq_entry_refused_alone_is_a_dead_end() -> None:
    """A DLQ entry refused on its own is returned: it cannot go anywhere."""
    dead_end = refusal(5, "dlq", alone=True)
    assert Rejections().learn([refusal(3, alone=False), dead_end]) is dead_end


def test_forget_drops_records_below_the_committed_offsets() -> None:
    """Committing past a record forgets it; later records and other partitions stay."""
    rejections = Rejections()
    rejections.learn([refusal(3, alone=True), refusal(9, alone=False)])
    rejections.forget({("src", 0): 4})
    assert rejections.rejected(record(3)) is None
    assert rejections.produce_alone(record(9))


def test_forget_partitions_drops_everything_of_a_revoked_partition() -> None:
    """A revoked partition's suspects and rejections are dropped (its new owner relearns)."""
    rejections = Rejections()
    rejections.learn([refusal(3, alone=True)])
    rejections.forget_partitions([("src", 0)])
    assert not rejections.produce_alone(record(3))
