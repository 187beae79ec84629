"""The exactly-once committer's cadence: a commit is due one interval after the previous
commit started, so the commit's own duration never stretches the cycle."""

from __future__ import annotations

import threading
from datetime import UTC, datetime

import pytest

from stream_validator.kafka.fake import FakeBroker, FakeProducer
from stream_validator.kafka.transactions import Transactions
from stream_validator.service.delivery.committer import BatchStatus
from stream_validator.service.delivery.offsets import BatchOffsets
from stream_validator.service.delivery.rejections import Rejections
from stream_validator.service.delivery.replacements import Replacements
from stream_validator.service.delivery.transactional import Recovery, Transactional

INTERVAL_S = 0.1
COMMIT_S = 0.03  # how long each commit takes on the test's clock


class Clock:
    """A monotonic clock the test moves by hand (and the commit moves by COMMIT_S)."""

    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


@pytest.fixture
def clock(monkeypatch: pytest.MonkeyPatch) -> Clock:
    clock = Clock()
    commit = FakeProducer.commit_transaction

    def slow_commit(self: FakeProducer, timeout_s: float) -> None:
        clock.now += COMMIT_S
        commit(self, timeout_s)

    monkeypatch.setattr(FakeProducer, "commit_transaction", slow_commit)
    return clock


def committer(clock: Clock) -> Transactional:
    broker = FakeBroker()
    broker.create_topic("src", 1)
    consumer = broker.consumer("svc")
    rejections = Rejections()
    transactions = Transactions(
        lambda: broker.producer(transactional_id="svc-0"), consumer.group_metadata, 10.0
    )
    recovery = Recovery(threading.Event(), 0.001, 0.001, 1.0, lambda: None, lambda _: None)
    txn = Transactional(
        consumer,
        transactions,
        Replacements({}, rejections, max_message_bytes=1_000_000, clock=lambda: datetime.now(UTC)),
        rejections,
        recovery,
        on_commit=lambda: None,
        safe=str,
        interval_s=INTERVAL_S,
        flush_timeout_s=1.0,
        clock=clock,
    )
    assert txn.start()
    return txn


def batch(offset: int) -> BatchOffsets:
    return BatchOffsets({("src", 0): offset}, {("src", 0): offset + 1})


def test_the_next_commit_is_due_one_interval_after_the_previous_one_started(clock: Clock) -> None:
    """A commit starting at 0.1 s and taking 30 ms: the transaction opened after it (at
    0.14 s) is due at 0.2 s, not one interval after it opened (0.24 s)."""
    txn = committer(clock)
    txn.submit([], batch(0))
    assert txn.due_in_s == pytest.approx(INTERVAL_S)
    clock.now = 0.1
    [outcome] = txn.poll()
    assert outcome.status is BatchStatus.DELIVERED and clock.now == pytest.approx(0.13)
    clock.now = 0.14
    assert txn.submit([], batch(1)) == []
    assert txn.due_in_s == pytest.approx(0.06)
    clock.now = 0.19
    assert txn.poll() == []  # not due yet
    clock.now = 0.2
    assert [o.status for o in txn.poll()] == [BatchStatus.DELIVERED]


def test_a_transaction_stays_open_at_least_half_an_interval(clock: Clock) -> None:
    """After a pause (or a commit slower than the interval) the next commit is not due at
    once: the transaction collects batches for half an interval, never only one batch."""
    txn = committer(clock)
    txn.submit([], batch(0))
    clock.now = 0.1
    txn.poll()
    clock.now = 0.5  # the feed paused
    txn.submit([], batch(1))
    assert txn.due_in_s == pytest.approx(INTERVAL_S / 2)
    clock.now = 0.54
    assert txn.poll() == []
    clock.now = 0.55
    assert [o.status for o in txn.poll()] == [BatchStatus.DELIVERED]
