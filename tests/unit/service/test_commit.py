"""The committer's bookkeeping: what may be committed, and failed commits retried."""

from __future__ import annotations

from stream_validator.errors import KafkaErrorInfo, ServiceExit
from stream_validator.records import SourceRecord
from stream_validator.service.commit import AckedOffsets

from .fakeservice import Harness, service_config, tick


def rec(offset: int, partition: int = 0) -> SourceRecord:
    return SourceRecord("src", partition, offset, None, b"{}", [], None)


def test_committable_stops_at_the_oldest_unacknowledged_record() -> None:
    """Per partition: the oldest offset still in flight, else one past the newest record."""
    acked = AckedOffsets()
    acked.track([rec(5), rec(6), rec(7), rec(0, partition=1)])
    acked.ack([rec(5), rec(7), rec(0, partition=1)])
    assert acked.committable([("src", 0), ("src", 1), ("src", 2)]) == {
        ("src", 0): 6,
        ("src", 1): 1,
    }
    acked.ack([rec(6)])
    assert acked.committable([("src", 0)]) == {("src", 0): 8}


def test_rewind_forgets_records_that_will_be_read_again() -> None:
    """After a rewind to 6 the partition is committable up to 6, not blocked by 6 and 7."""
    acked = AckedOffsets()
    acked.track([rec(5), rec(6), rec(7)])
    acked.ack([rec(5)])
    acked.rewind({("src", 0): 6})
    assert acked.committable([("src", 0)]) == {("src", 0): 6}
    acked.drop([("src", 0)])
    assert acked.committable([("src", 0)]) == {}


def test_failed_commit_is_retried_with_the_next_batch() -> None:
    """A commit error loses nothing: the next batch's commit carries the offsets on."""
    h = Harness(service_config())
    h.feed([tick.json(i) for i in range(20)])
    h.broker.faults.commit_errors.append(KafkaErrorInfo("REQUEST_TIMED_OUT", "slow"))
    assert h.run() == ServiceExit.OK
    assert h.broker.commit_log == [("svc", {("src", 0): 20})]
    assert (h.state.batches, h.state.commits, h.state.failed_batches) == (2, 1, 0)
