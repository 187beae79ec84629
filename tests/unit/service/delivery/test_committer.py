"""The committer's bookkeeping: what may be committed, and failed commits retried."""

from __future__ import annotations

import pytest

from stream_validator.errors import KafkaErrorInfo, ServiceExit
from stream_validator.records import TopicPartitionKey
from stream_validator.service.delivery.committer import MIN_WAIT_S, wait_for_commit

from ..fakeservice import EVERY_POLL, Harness, service_config, tick


def test_failed_commit_is_retried_with_the_next_batch() -> None:
    """A commit error loses nothing: the next batch's commit carries the offsets on."""
    h = Harness(service_config())
    h.feed([tick.json(i) for i in range(20)])
    h.broker.faults.commit_errors.append(KafkaErrorInfo("REQUEST_TIMED_OUT", "slow"))
    assert h.run() == ServiceExit.OK
    assert h.broker.commit_log == [("svc", {("src", 0): 20})]
    assert (h.state.batches, h.state.commits, h.state.failed_batches) == (2, 1, 0)


def test_an_asynchronous_commit_that_failed_is_sent_again_while_running() -> None:
    """Asynchronous commit errors are reported later (librdkafka's commit callback): the
    offsets they carried go out again with the next commit, not only at the next revoke or
    shutdown (a partition kept through a rebalance stayed behind for minutes), and no
    synchronous commit stalls the loop meanwhile."""
    h = Harness(service_config(commit_interval_s=EVERY_POLL))
    h.feed([tick.json(i) for i in range(20)])
    lost = KafkaErrorInfo("REBALANCE_IN_PROGRESS", "cooperative rebalance")
    h.broker.faults.commit_errors += [lost, lost]  # both asynchronous commits fail
    idle_log: list[list[tuple[str, dict[TopicPartitionKey, int]]]] = []

    def stop_on_second_idle() -> None:
        idle_log.append(list(h.broker.commit_log))
        if len(idle_log) == 2:
            h.service.stop()

    h.on_idle = stop_on_second_idle
    assert h.run() == ServiceExit.OK
    # Committed while the service still ran (before shutdown's own synchronous commit).
    assert idle_log[0] == [] and ("svc", {("src", 0): 20}) in idle_log[1]


def test_the_wait_for_a_commit_is_what_is_left_but_never_zero() -> None:
    """The loop waits what is left of the interval, at least 1 ms (or the interval itself
    when shorter): it never spins on a zero timeout."""
    assert wait_for_commit(10.3, 10.1, 1.0) == pytest.approx(0.2)
    assert wait_for_commit(10.0, 10.5, 1.0) == MIN_WAIT_S
    assert wait_for_commit(10.0, 10.5, 1e-9) == 1e-9
