"""Pipelined delivery on the fake broker: batches in flight, commits only of what was
acknowledged, rewinds after a failure in a batch with later ones in flight, revoke and
shutdown, and exactly-once transactions spanning several batches."""

from __future__ import annotations

import json
from collections import Counter

from stream_validator.errors import ServiceExit
from stream_validator.kafka.ports import Producible
from stream_validator.records import TopicPartitionKey

from ..fakeservice import EVERY_POLL, Harness, service_config, tick


def seq_counts(h: Harness, topic: str = "clean") -> Counter[int]:
    """How often each source seq landed in the topic."""
    return Counter(json.loads(r.value or b"{}")["seq"] for r in h.topic(topic))


def watch_commits(h: Harness) -> list[tuple[int, int]]:
    """(committed offset of src[0], outputs landed by then) at every commit."""
    seen: list[tuple[int, int]] = []
    commit = h.broker.commit_offsets

    def checked(
        group: str, offsets: dict[TopicPartitionKey, int], metadata: str | None = None
    ) -> None:
        seen.append((offsets[("src", 0)], len(h.topic("clean")) + len(h.topic("dlq"))))
        commit(group, offsets, metadata)

    h.broker.commit_offsets = checked  # type: ignore[method-assign]
    return seen


def hold_from(h: Harness, count: int, topic: str = "clean") -> None:
    """Outputs to ``topic`` from the ``count``-th produced record on are not acknowledged."""

    def hold(n: int, _record: Producible) -> None:
        if n == count:
            h.broker.faults.hold_topics.add(topic)

    h.broker.faults.on_produce = hold


def test_commit_never_passes_an_unacknowledged_output() -> None:
    """Batch 2's outputs are never acknowledged: batch 1 is committed, nothing past it,
    and batches 2 and 3 are neither committed nor counted."""
    h = Harness(service_config(commit_interval_s=EVERY_POLL))
    h.feed([tick.json(i) for i in range(30)])
    seen = watch_commits(h)
    hold_from(h, 11)
    assert h.run() == ServiceExit.OK
    assert seen and max(offset for offset, _ in seen) == 10
    assert all(offset <= landed for offset, landed in seen)
    assert (h.state.batches, h.state.records) == (1, 10)


def test_failure_in_a_batch_rewinds_to_its_first_offset_while_the_next_is_in_flight() -> None:
    """Batches 1-3 in flight at once, one output of batch 2 fails: batch 1 is committed,
    batches 2 and 3 are abandoned (batch 3's landed outputs are duplicated) and read again
    from batch 2's first offset; every record is counted once."""
    h = Harness(service_config(commit_interval_s=EVERY_POLL))
    h.feed([tick.json(i) for i in range(30)])
    seen = watch_commits(h)
    h.broker.faults.hold_topics.add("clean")

    def release_after_batch_3(n: int, _record: Producible) -> None:
        if n == 30:
            h.broker.faults.hold_topics.clear()

    h.broker.faults.on_produce = release_after_batch_3
    h.broker.faults.fail_delivery(nth=15)  # seq 14, in batch 2
    assert h.run() == ServiceExit.OK
    assert [offset for offset, _ in seen] == [10, 20, 30, 30]
    assert all(offset <= landed for offset, landed in seen)
    counts = seq_counts(h)
    assert {seq for seq, n in counts.items() if n == 1} == {*range(10), 14}
    assert {seq for seq, n in counts.items() if n == 2} == set(range(10, 30)) - {14}
    assert h.counter("stream_validator_records_valid_total") == 30
    assert (h.state.failed_batches, h.state.records) == (1, 30)


def test_revoke_mid_flight_commits_only_what_was_acknowledged() -> None:
    """Partition revoked while batch 2's outputs are unacknowledged: the revoke commits
    batch 1's offsets, nothing of batch 2."""
    h = Harness(service_config(), partitions=2)
    h.feed([tick.json(i) for i in range(20)], partition=1)
    hold_from(h, 11)

    def revoke_once() -> None:
        h.on_idle = h.service.stop
        h.clients.consumers[0].revoke([("src", 1)])

    h.on_idle = revoke_once
    assert h.run() == ServiceExit.OK
    assert h.broker.commit_log == [("svc", {("src", 1): 10})]
    assert (h.state.batches, h.state.records) == (1, 10)


def test_shutdown_waits_for_the_outputs_in_flight_and_commits_them() -> None:
    """Stopped with every batch in flight (none acknowledged yet): shutdown flushes, then
    commits and reports all of them, in one synchronous commit."""
    h = Harness(service_config())
    h.feed([tick.json(i) for i in range(25)])
    h.broker.faults.hold_topics.add("clean")

    def release_and_stop() -> None:
        h.broker.faults.hold_topics.clear()
        h.service.stop()

    h.on_idle = release_and_stop
    assert h.run() == ServiceExit.OK
    assert h.broker.commit_log == [("svc", {("src", 0): 25})]
    assert (h.state.batches, h.state.records, h.state.clean) == (3, 25, 25)
    assert len(h.topic("clean")) == 25


def test_exactly_once_transaction_spans_the_batches_of_a_commit_interval() -> None:
    """A long interval: the three batches go into one transaction, committed once with
    the last batch's offsets; each is reported as a batch."""
    h = Harness(service_config(transactional=True))
    h.feed([tick.json(i) for i in range(25)])
    assert h.run() == ServiceExit.OK
    assert h.broker.commit_log == [("svc", {("src", 0): 25})]
    assert (h.state.commits, h.state.batches, h.state.records) == (1, 3, 25)
    assert len(h.topic("clean")) == 25


def test_exactly_once_failure_aborts_every_batch_of_the_transaction_together() -> None:
    """An output of batch 3 fails: the transaction holding batches 1-3 ends without
    commit, all three are read again, and a read_committed reader sees every record once."""
    h = Harness(service_config(transactional=True))
    h.feed([tick.json(i) for i in range(25)])
    h.broker.faults.fail_delivery(nth=24)
    assert h.run() == ServiceExit.OK
    assert len(h.clients.producers) == 2  # the producer of the failed transaction replaced
    assert max(seq_counts(h).values()) == 1 and len(h.topic("clean")) == 25
    assert h.broker.commit_log == [("svc", {("src", 0): 25})]
    assert (h.state.failed_batches, h.state.records) == (1, 25)
    assert h.counter("stream_validator_records_valid_total") == 25
