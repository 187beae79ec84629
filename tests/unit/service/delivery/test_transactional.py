"""The exactly-once loop on the fake broker: abort, fencing, producer replacement."""

from __future__ import annotations

from collections import Counter

import pytest

from stream_validator.errors import KafkaErrorInfo, ServiceExit
from stream_validator.kafka.fake import abortable, fatal

from ..fakeservice import EVERY_POLL, Harness, service_config, tick


def seqs(h: Harness, topic: str = "clean") -> Counter[bytes | None]:
    return Counter(r.value for r in h.topic(topic))


def test_each_batch_commits_its_outputs_and_offsets_together() -> None:
    """read_committed readers see every record once; offsets commit with the transaction."""
    h = Harness(service_config(transactional=True, commit_interval_s=EVERY_POLL))
    h.feed([tick.json(i) for i in range(25)] + [b"garbage"])
    assert h.run() == ServiceExit.OK
    assert h.broker.committed("svc") == {("src", 0): 26}
    assert max(seqs(h).values()) == 1 and len(h.topic("clean")) == 25
    assert h.state.commits == 3


def test_abortable_commit_error_aborts_and_retries_the_batch_counted_once() -> None:
    """An abortable commit error: the batch's outputs never become visible, the batch is
    retried, and each record is counted once."""
    h = Harness(service_config(transactional=True, commit_interval_s=EVERY_POLL))
    h.feed([tick.json(i) for i in range(10)])
    h.broker.faults.fail_transaction_call("commit_transaction", abortable())
    assert h.run() == ServiceExit.OK
    assert len(h.topic("clean")) == 10 and max(seqs(h).values()) == 1
    assert h.counter("stream_validator_records_valid_total") == 10
    assert (h.state.failed_batches, h.state.batches) == (1, 1)


def test_fenced_by_another_instance_exits_1() -> None:
    """Another producer with the same transactional id: the service stops with exit 1."""
    h = Harness(service_config(transactional=True, commit_interval_s=EVERY_POLL))
    h.feed([tick.json(i) for i in range(10)])

    def fence_first(count: int, _record: object) -> None:
        if count == 1:
            h.broker.producer(transactional_id="svc-0").init_transactions(1.0)

    h.broker.faults.on_produce = fence_first
    assert h.run() == ServiceExit.FATAL
    assert h.topic("clean") == [] and h.broker.committed("svc") == {}


@pytest.mark.parametrize(
    ("call", "error", "after"),
    [
        ("commit_transaction", fatal("INVALID_TXN_STATE"), 11),
        ("begin_transaction", abortable(), 1),
        ("begin_transaction", KafkaErrorInfo("_STATE", "Operation not valid in state Ready"), 1),
    ],
    ids=["commit-fatal", "begin-abortable", "begin-state"],
)
def test_lost_producer_is_replaced_and_the_batch_resumes_from_the_committed_offsets(
    call: str, error: KafkaErrorInfo, after: int
) -> None:
    """A fatal error that is not fencing, or a begin_transaction that fails at all (an
    internal exception escaped the loop before), in the second batch: a new producer fences
    the old one, the consumer rewinds to the committed offsets, nothing lost or duplicated."""
    h = Harness(service_config(transactional=True, commit_interval_s=EVERY_POLL))
    h.feed([tick.json(i) for i in range(25)])

    def lose_in_second_batch(count: int, _record: object) -> None:
        if count == after:
            h.broker.faults.fail_transaction_call(call, error)

    h.broker.faults.on_produce = lose_in_second_batch
    assert h.run() == ServiceExit.OK
    assert len(h.clients.producers) == 2
    assert h.broker.committed("svc") == {("src", 0): 25}
    assert len(h.topic("clean")) == 25 and max(seqs(h).values()) == 1
    assert h.counter("stream_validator_records_valid_total") == 25
    assert h.state.failed_batches == 1


def test_failed_outputs_replace_the_producer() -> None:
    """Outputs of a transaction fail: the producer is replaced (a stuck one never returns),
    the batch re-read from the committed offsets, delivered once."""
    h = Harness(service_config(transactional=True, commit_interval_s=EVERY_POLL))
    h.feed([tick.json(i) for i in range(10)])
    h.broker.faults.fail_delivery(nth=4)
    assert h.run() == ServiceExit.OK
    assert len(h.clients.producers) == 2
    assert len(h.topic("clean")) == 10 and max(seqs(h).values()) == 1
    failures = "stream_validator_delivery_failures_total"
    assert h.counter(failures, route="ticks", output="clean") == 1


def test_refused_record_in_a_transaction_is_isolated_without_duplicates() -> None:
    """Refusals abort the transaction; the re-reads isolate the record: no duplicates."""
    h = Harness(service_config(transactional=True, commit_interval_s=EVERY_POLL))
    h.feed([tick.json(i) for i in range(5)])
    h.broker.faults.refuse = lambda r: (
        "INVALID_RECORD" if r.topic == "clean" and b'"seq":2,' in (r.value or b"") else None
    )
    assert h.run() == ServiceExit.OK
    assert len(h.topic("clean")) == 4 and max(seqs(h).values()) == 1
    assert len(h.topic("dlq")) == 1
    assert h.broker.committed("svc") == {("src", 0): 5}


def test_each_transaction_commit_is_timed_in_a_histogram() -> None:
    """Every committed transaction adds one observation to
    stream_validator_transaction_commit_seconds (what an operator reads the stall from)."""
    h = Harness(service_config(transactional=True, commit_interval_s=EVERY_POLL))
    h.feed([tick.json(i) for i in range(25)])
    assert h.run() == ServiceExit.OK
    count = h.registry.get_sample_value("stream_validator_transaction_commit_seconds_count")
    assert count == h.state.commits >= 3
