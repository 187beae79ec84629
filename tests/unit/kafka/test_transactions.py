"""The one transaction helper, driven by the fake broker: retries, aborts, escalation."""

from __future__ import annotations

import threading

import pytest

from stream_validator.errors import (
    CallTimeoutError,
    FatalTransactionError,
    KafkaErrorInfo,
    ProducerLostError,
)
from stream_validator.kafka.deadline import DeadlineCaller
from stream_validator.kafka.fake import FakeBroker, abortable, fatal
from stream_validator.kafka.fake.producer import FakeProducer
from stream_validator.kafka.io import produce_all
from stream_validator.kafka.transactions import Transactions, committed_positions
from stream_validator.records import OutputRecord, SourceRecord


def out(value: bytes) -> OutputRecord:
    return OutputRecord(
        "clean", "t", None, value, [], None, SourceRecord("s", 0, 0, None, value, [], None)
    )


@pytest.fixture
def broker() -> FakeBroker:
    broker = FakeBroker()
    broker.create_topic("t")
    broker.create_topic("s")
    return broker


def transactions(broker: FakeBroker) -> tuple[Transactions, list[FakeProducer]]:
    made: list[FakeProducer] = []

    def make() -> FakeProducer:
        made.append(broker.producer(transactional_id="tx"))
        return made[-1]

    consumer = broker.consumer("g")
    txn = Transactions(make, consumer.group_metadata, 5.0, retry_pause_s=0.0)
    txn.init()
    return txn, made


def test_commit_publishes_outputs_and_offsets(broker: FakeBroker) -> None:
    """begin -> produce -> commit: the records and the group's offsets land together."""
    txn, _ = transactions(broker)
    txn.begin()
    produce_all(txn.producer, [out(b"a")], timeout_s=1.0)
    assert txn.commit({("s", 0): 1}) is None
    assert [r.value for r in broker.records("t")] == [b"a"]
    assert broker.committed("g") == {("s", 0): 1}
    assert not txn.open


def test_abortable_error_aborts_and_says_why(broker: FakeBroker) -> None:
    """An abortable commit error aborts: no records, no offsets, and the reason returned."""
    txn, _ = transactions(broker)
    broker.faults.fail_transaction_call("commit_transaction", abortable())
    txn.begin()
    produce_all(txn.producer, [out(b"a")], timeout_s=1.0)
    reason = txn.commit({("s", 0): 1})
    assert reason is not None and "CONCURRENT_TRANSACTIONS" in reason
    assert broker.records("t", committed_only=False) == []
    assert broker.committed("g") == {}


def test_retriable_error_is_retried(broker: FakeBroker) -> None:
    """A retriable error of a call is retried; the commit then succeeds."""
    txn, _ = transactions(broker)
    retriable = KafkaErrorInfo("COORDINATOR_LOAD_IN_PROGRESS", "loading", retriable=True)
    broker.faults.fail_transaction_call("send_offsets_to_transaction", retriable)
    txn.begin()
    assert txn.commit({("s", 0): 1}) is None
    assert broker.committed("g") == {("s", 0): 1}


def test_fencing_is_fatal(broker: FakeBroker) -> None:
    """Fenced by a newer instance with the same id: FatalTransactionError."""
    txn, _ = transactions(broker)
    broker.producer(transactional_id="tx").init_transactions(1.0)
    with pytest.raises(FatalTransactionError, match="_FENCED"):
        txn.begin()


def test_fatal_error_that_is_not_fencing_loses_the_producer(broker: FakeBroker) -> None:
    """A fatal non-fencing error raises ProducerLostError; recover() brings a new producer."""
    txn, made = transactions(broker)
    broker.faults.fail_transaction_call("commit_transaction", fatal("INVALID_TXN_STATE"))
    txn.begin()
    produce_all(txn.producer, [out(b"a")], timeout_s=1.0)
    with pytest.raises(ProducerLostError):
        txn.commit({("s", 0): 1})
    assert txn.recover(threading.Event(), 0.0, 0.0)
    assert len(made) == 2 and txn.producer is made[1]
    # The new producer's init aborted the lost one's transaction.
    assert broker.records("t", committed_only=False) == []


def test_too_many_replacements_without_a_commit_are_fatal(broker: FakeBroker) -> None:
    """Past the replacement limit without a commit, recovery gives up for good."""
    txn, _ = transactions(broker)
    with pytest.raises(FatalTransactionError, match="replaced without a commit"):
        for _ in range(10):
            txn.recover(threading.Event(), 0.0, 0.0)


def test_committed_positions_prefer_commits_over_the_batch_start(broker: FakeBroker) -> None:
    """Where to resume: committed offsets where there are any, else the batch start."""
    broker.create_topic("s2", partitions=2)
    consumer = broker.consumer("g")
    consumer.assign({("s2", 0): 0, ("s2", 1): 0})
    broker.commit_offsets("g", {("s2", 0): 5})
    assert committed_positions(consumer, {("s2", 0): 3, ("s2", 1): 2}, 1.0) == {
        ("s2", 0): 5,
        ("s2", 1): 2,
    }


class _StuckCaller(DeadlineCaller):
    """A deadline caller whose calls all outlive their deadline."""

    def call(self, what: str, operation: object, deadline_s: float) -> object:  # type: ignore[override]
        raise CallTimeoutError(f"{what} did not return within {deadline_s:.0f}s")


def test_a_call_past_its_deadline_loses_the_producer(broker: FakeBroker) -> None:
    """A transaction call that outlives its deadline raises ProducerLostError (the client
    object must be abandoned), not the timeout itself."""
    consumer = broker.consumer("g")
    producer = broker.producer(transactional_id="tx")
    txn = Transactions(lambda: producer, consumer.group_metadata, 5.0, caller=_StuckCaller())
    with pytest.raises(ProducerLostError, match="init_transactions did not return"):
        txn.init()
