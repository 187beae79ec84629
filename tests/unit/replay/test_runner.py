"""The replay runner on the in-memory fake broker: chunks as transactions, failures, fencing,
stops, requeue and dry runs."""

from __future__ import annotations

import dataclasses
import threading
from collections.abc import Callable

import pytest

from stream_validator.config.settings import KafkaConfig, ServiceConfig
from stream_validator.errors import ReplayExit, ReplaySetupError
from stream_validator.kafka.fake import FakeAdmin, FakeBroker, FakeConsumer, FakeProducer, abortable
from stream_validator.kafka.ports import Producible
from stream_validator.replay.planner import Outcome, Target
from stream_validator.replay.report import ReplaySummary
from stream_validator.replay.runner import DlqReplayer, ReplayJob
from stream_validator.replay.selection import Selection
from tests.support.dlq import DLQ, dlq_record, envelope_of, fixed_verifier
from tests.support.ticks import seed_tick

CLEAN = "ticks.clean"
PASSES = seed_tick.json(price=-1.0)  # quarantined for its price; the fixed contract accepts it
FAILS = seed_tick.json(volume="five")  # still fails the fixed contract


class FakeClients:
    """``ReplayClients`` over a fake broker, keeping what it built."""

    def __init__(self, broker: FakeBroker, job: ReplayJob, max_bytes: int | None = None) -> None:
        self.broker, self.job, self.max_bytes = broker, job, max_bytes
        self.producers: list[FakeProducer] = []

    def admin(self) -> FakeAdmin:
        return self.broker.admin()

    def consumer(self) -> FakeConsumer:
        return self.broker.consumer(self.job.group, partition_eof=True)

    def producer(self) -> FakeProducer:
        producer = self.broker.producer(
            transactional_id=self.job.group_base, message_max_bytes=self.max_bytes
        )
        self.producers.append(producer)
        return producer


def make_job(selection: Selection | None = None, **options: object) -> ReplayJob:
    """A replay of the DLQ to the clean topic with the fixed contract."""
    job = ReplayJob(
        config=ServiceConfig(KafkaConfig(), routes=()),
        dlq_topic=DLQ,
        selection=selection or Selection(),
        verifier=fixed_verifier(),
        target=Target("clean", CLEAN),
        group_base=f"stream-validator-replay.{DLQ}.{CLEAN}",
        batch_size=2,
        timeout_s=1.0,
    )
    return dataclasses.replace(job, **options)  # type: ignore[arg-type]


def broker_with(*values: bytes, timestamps: tuple[int, ...] = ()) -> FakeBroker:
    """A broker whose one-partition DLQ holds one envelope per value (distinct sources)."""
    broker = FakeBroker()
    broker.create_topic(DLQ, 1)
    broker.create_topic(CLEAN, 1)
    for i, value in enumerate(values):
        record = dlq_record(value, offset=i)
        stamp = timestamps[i] if timestamps else 1_000
        broker.append(DLQ, record.value, key=record.key, headers=record.headers, timestamp_ms=stamp)
    return broker


def replay(
    broker: FakeBroker,
    job: ReplayJob | None = None,
    *,
    stop: threading.Event | None = None,
    progress: Callable[[int, int, ReplaySummary], None] | None = None,
    max_bytes: int | None = None,
) -> ReplaySummary:
    job = job or make_job()
    clients = FakeClients(broker, job, max_bytes)
    return DlqReplayer(job, clients=clients, stop=stop, progress=progress).run()


def sent_offsets(broker: FakeBroker) -> list[int]:
    """The DLQ offsets named by the committed records of the clean topic, in order."""
    return [int(dict(r.headers)["sv.replay.dlq.offset"] or b"") for r in broker.records(CLEAN)]


def committed(broker: FakeBroker, job: ReplayJob | None = None) -> dict[tuple[str, int], int]:
    return broker.committed((job or make_job()).group)


def test_each_chunk_commits_its_outputs_and_offsets_together() -> None:
    """After every chunk the target records and the group offset moved together, with the
    selection as commit metadata; records requeued during the run are not read again."""
    broker = broker_with(PASSES, FAILS, PASSES, PASSES, FAILS)
    seen: list[tuple[list[int], dict[tuple[str, int], int]]] = []
    summary = replay(
        broker, progress=lambda *_: seen.append((sent_offsets(broker), committed(broker)))
    )
    assert seen == [
        ([0], {(DLQ, 0): 2}),
        ([0, 2, 3], {(DLQ, 0): 4}),
        ([0, 2, 3], {(DLQ, 0): 5}),
    ]
    assert broker.groups[make_job().group][(DLQ, 0)].metadata == Selection().encode()
    assert (summary.records, summary.outcomes["replayed"], summary.requeued) == (5, 3, 2)
    requeued = broker.records(DLQ)[5:]
    assert [envelope_of(r)["replay_count"] for r in requeued] == [1, 1]
    assert summary.exit_code() == ReplayExit.NOT_ALL  # two records still fail


@pytest.mark.parametrize("failure", ["delivery", "commit"])
def test_a_failed_chunk_commits_nothing_and_the_next_run_redoes_exactly_it(failure: str) -> None:
    """A failed delivery or commit aborts its chunk (exit 3): none of its records become
    visible and the offsets stay; the next run sends exactly that chunk."""
    broker = broker_with(PASSES, PASSES, PASSES, PASSES, PASSES)
    if failure == "delivery":
        broker.faults.fail_delivery(nth=3)  # the first record of the second chunk
    else:  # the commit of the second chunk fails (abortable)
        broker.faults.on_produce = lambda n, _r: (
            broker.faults.fail_transaction_call("commit_transaction", abortable())
            if n == 3
            else None
        )
    summary = replay(broker)
    assert summary.exit_code() == ReplayExit.KAFKA
    assert summary.error is not None and "the chunk was aborted" in summary.error
    expected = "_MSG_TIMED_OUT" if failure == "delivery" else "commit failed"
    assert expected in summary.error
    assert sent_offsets(broker) == [0, 1]
    assert broker.records(CLEAN, committed_only=False) == broker.records(CLEAN)
    assert committed(broker) == {(DLQ, 0): 2}
    again = replay(broker)
    assert (again.exit_code(), again.records) == (ReplayExit.OK, 3)
    assert sent_offsets(broker) == [0, 1, 2, 3, 4]


def test_fenced_by_a_newer_replay_stops_with_exit_code_3() -> None:
    """A second replay to the same target fences the first: it stops with exit code 3, its
    open chunk never becomes visible, and its committed chunks stay."""
    broker = broker_with(PASSES, PASSES, PASSES, PASSES)
    job = make_job()

    def second_replay_starts(number: int, _record: Producible) -> None:
        if number == 3:
            broker.producer(transactional_id=job.group_base).init_transactions(1.0)

    broker.faults.on_produce = second_replay_starts
    summary = replay(broker, job)
    assert summary.exit_code() == ReplayExit.KAFKA
    assert summary.error is not None
    assert "_FENCED" in summary.error and "another replay to the same target" in summary.error
    assert sent_offsets(broker) == [0, 1]
    assert committed(broker, job) == {(DLQ, 0): 2}


def test_stop_after_a_chunk_keeps_it_committed() -> None:
    """A stop request ends the run after the current chunk (exit 130); a later run
    continues where it stopped."""
    broker = broker_with(PASSES, PASSES, PASSES, PASSES)
    stop = threading.Event()
    summary = replay(broker, stop=stop, progress=lambda *_: stop.set())
    assert (summary.exit_code(), summary.interrupted) == (ReplayExit.INTERRUPTED, True)
    assert (sent_offsets(broker), committed(broker)) == ([0, 1], {(DLQ, 0): 2})
    again = replay(broker)
    assert (again.exit_code(), again.records) == (ReplayExit.OK, 2)
    assert sent_offsets(broker) == [0, 1, 2, 3]


def test_no_requeue_leaves_failing_records_and_holds_back_the_rest() -> None:
    """--no-requeue writes nothing to the DLQ, holds passing records behind a failing one,
    and never commits past the failing record; requeue moves on past it."""
    broker = broker_with(PASSES, FAILS, PASSES)
    job = make_job(requeue=False, batch_size=10)
    summary = replay(broker, job)
    assert (summary.outcomes["replayed"], summary.outcomes["held_back"]) == (1, 1)
    assert summary.outcomes["still_failing"] == 1 and summary.requeued == 0
    assert len(broker.records(DLQ)) == 3
    assert (sent_offsets(broker), committed(broker, job)) == ([0], {(DLQ, 0): 1})
    summary = replay(broker, make_job(batch_size=10))
    assert (summary.outcomes["replayed"], summary.requeued) == (1, 1)
    assert sent_offsets(broker) == [0, 2]
    assert committed(broker) == {(DLQ, 0): 3}


def test_dry_run_writes_and_commits_nothing() -> None:
    """--dry-run decides every record but builds no producer, writes and commits nothing."""
    broker = broker_with(PASSES, FAILS, PASSES)
    job = make_job(dry_run=True)
    clients = FakeClients(broker, job)
    summary = DlqReplayer(job, clients=clients).run()
    assert (summary.outcomes["would_pass"], summary.outcomes["still_failing"]) == (2, 1)
    assert clients.producers == []
    assert broker.records(CLEAN, committed_only=False) == []
    assert len(broker.records(DLQ, committed_only=False)) == 3
    assert broker.groups == {}


def test_record_too_large_for_the_producer_is_unreplayable_and_the_chunk_commits() -> None:
    """A record the client refuses as too large is reported unreplayable; the rest of its
    chunk is sent and the offsets move past it."""
    broker = broker_with(PASSES, seed_tick.json(price=-1.0, symbol="X" * 2_000), PASSES)
    summary = replay(broker, make_job(batch_size=10), max_bytes=1_000)
    assert summary.outcomes[str(Outcome.UNREPLAYABLE)] == 1
    assert summary.unreplayable == {"oversized": 1}
    assert sent_offsets(broker) == [0, 2]
    assert committed(broker) == {(DLQ, 0): 3}


def test_overlapping_selection_skips_what_another_group_settled() -> None:
    """An unfiltered replay after a --kind replay skips the records the first one settled."""
    broker = broker_with(PASSES, PASSES, FAILS)
    first = replay(broker, make_job(Selection(kinds=frozenset({"below_min"})), requeue=False))
    assert first.outcomes["replayed"] == 2
    second = replay(broker, make_job(requeue=False))
    assert second.outcomes[str(Outcome.ALREADY_HANDLED)] == 2
    assert sent_offsets(broker) == [0, 1]


def test_from_time_starts_at_the_first_record_at_or_after_it() -> None:
    """--from skips the records before it without reading them."""
    broker = broker_with(PASSES, PASSES, PASSES, timestamps=(1_000, 2_000, 3_000))
    summary = replay(broker, make_job(Selection(from_ms=2_000)))
    assert summary.records == 2
    assert sent_offsets(broker) == [1, 2]


def test_missing_topic_is_a_setup_error() -> None:
    """A missing DLQ or target topic stops the run before anything is read (exit code 2)."""
    broker = FakeBroker()
    broker.create_topic(DLQ)
    with pytest.raises(ReplaySetupError, match=CLEAN):
        replay(broker)


def test_missing_source_target_is_a_kafka_error() -> None:
    """--to source with a source topic that does not exist ends the run with exit code 3
    and commits nothing."""
    broker = broker_with(PASSES)
    summary = replay(broker, make_job(target=Target("source", None, frozenset({"ticks"}))))
    assert summary.exit_code() == ReplayExit.KAFKA
    assert summary.error == "target topic 'ticks' does not exist"
    assert broker.groups == {}


def test_groups_of_a_target_with_a_longer_name_cover_nothing() -> None:
    """A replay to X.v2 settles nothing for a replay to X: both send every record."""
    broker = broker_with(PASSES, PASSES)
    broker.create_topic(f"{CLEAN}.v2", 1)
    v2 = make_job(
        target=Target("topic", f"{CLEAN}.v2"),
        group_base=f"stream-validator-replay.{DLQ}.{CLEAN}.v2",
    )
    assert replay(broker, v2).outcomes["replayed"] == 2
    second = replay(broker, make_job())
    assert second.outcomes["replayed"] == 2
    assert second.outcomes[str(Outcome.ALREADY_HANDLED)] == 0
    assert sent_offsets(broker) == [0, 1]


def test_a_duplicate_envelope_after_a_run_is_sent_by_the_next_run() -> None:
    """The documented limit: duplicates are caught within a run, not across runs."""
    broker = broker_with(PASSES)
    assert replay(broker).outcomes["replayed"] == 1
    again = dlq_record(PASSES, offset=0)  # the same source record, quarantined twice
    broker.append(DLQ, again.value, key=again.key, headers=again.headers, timestamp_ms=1_000)
    assert replay(broker).outcomes["replayed"] == 1
    assert sent_offsets(broker) == [0, 1]


def test_a_run_resumes_from_its_own_group_even_when_the_listing_misses_it() -> None:
    """The run's own committed offsets are read directly, never only through the listing."""
    broker = broker_with(PASSES, PASSES)
    assert replay(broker).outcomes["replayed"] == 2

    class Unlisted(FakeClients):
        def admin(self) -> FakeAdmin:
            admin = self.broker.admin()
            admin.groups = lambda prefix, timeout_s: []  # type: ignore[method-assign]
            return admin

    job = make_job()
    summary = DlqReplayer(job, clients=Unlisted(broker, job)).run()
    assert summary.records == 0
    assert sent_offsets(broker) == [0, 1]
