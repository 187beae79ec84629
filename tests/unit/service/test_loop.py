"""The at-least-once loop on the fake broker: commit ordering, retries, rebalances, shutdown."""

from __future__ import annotations

import time
from dataclasses import replace
from typing import Any

from stream_validator.errors import KafkaErrorInfo, ServiceExit
from stream_validator.kafka.ports import Producible
from stream_validator.records import TopicPartitionKey
from stream_validator.service.report.hooks import ServiceHooks

from .fakeservice import EVERY_POLL, Harness, service_config, tick


def test_no_offset_is_committed_before_its_outputs_are_acknowledged() -> None:
    """At every commit, each committed source record already has its output in a topic."""
    h = Harness(service_config(commit_interval_s=EVERY_POLL))
    h.feed([tick.json(i) for i in range(25)] + [b"garbage"])
    seen: list[tuple[int, int]] = []
    commit = h.broker.commit_offsets

    def checked(
        group: str, offsets: dict[TopicPartitionKey, int], metadata: str | None = None
    ) -> None:
        landed = len(h.topic("clean")) + len(h.topic("dlq"))
        seen.append((offsets[("src", 0)], landed))
        commit(group, offsets, metadata)

    h.broker.commit_offsets = checked  # type: ignore[method-assign]
    assert h.run() == ServiceExit.OK
    # Asynchronous per poll, then the last again, synchronously, at shutdown.
    assert seen == [(10, 10), (20, 20), (26, 26), (26, 26)]


def test_failed_output_rewinds_to_the_batch_start_and_counts_the_batch_once() -> None:
    """One failed delivery: nothing committed, the batch re-read from its start, and the
    metrics count each record once although 9 outputs of the first attempt landed twice."""
    h = Harness(service_config())
    h.feed([tick.json(i) for i in range(10)])
    h.broker.faults.fail_delivery(nth=3)
    assert h.run() == ServiceExit.OK
    assert h.broker.commit_log == [("svc", {("src", 0): 10})]
    assert len(h.topic("clean")) == 19  # duplicates, never gaps
    assert h.counter("stream_validator_records_valid_total") == 10
    assert (h.state.failed_batches, h.state.batches, h.state.clean) == (1, 1, 10)
    failures = "stream_validator_delivery_failures_total"
    assert h.counter(failures, route="ticks", output="clean") == 1


def test_halts_after_the_configured_failed_batches_without_committing() -> None:
    """halt_after_failed_batches: exit 3, nothing committed."""
    h = Harness(service_config(halt_after_failed_batches=3))
    h.feed([tick.json(i) for i in range(5)])
    h.broker.faults.fail_delivery(topic="clean", times=-1)
    assert h.run() == ServiceExit.HALTED
    assert h.broker.committed("svc") == {}
    assert h.state.failed_batches == 3


def test_revoked_partition_gets_its_pending_offsets_committed_first() -> None:
    """An asynchronous commit that failed is sent again once its failure is reported, and
    the revoke callback commits synchronously before the partition moves (an asynchronous
    commit's result may not be known yet)."""
    h = Harness(service_config(commit_interval_s=EVERY_POLL), partitions=2)
    h.feed([tick.json(i) for i in range(3)], partition=1)
    h.broker.faults.commit_errors.append(KafkaErrorInfo("REQUEST_TIMED_OUT", "slow"))
    consumer_of = h.clients.consumers

    def revoke_once() -> None:
        h.on_idle = h.service.stop
        consumer_of[0].revoke([("src", 1)])

    h.on_idle = revoke_once
    assert h.run() == ServiceExit.OK
    # The failed one sent again (asynchronously), then the revoke's synchronous commit.
    assert h.broker.commit_log == [("svc", {("src", 1): 3})] * 2
    assert consumer_of[0].assignment() == []  # closed


def test_lost_partition_is_never_committed() -> None:
    """Lost partitions drop their pending offsets: another member owns them now."""
    h = Harness(service_config(), partitions=2)
    h.feed([tick.json(i) for i in range(3)], partition=1)
    h.broker.faults.commit_errors.append(KafkaErrorInfo("REQUEST_TIMED_OUT", "slow"))

    def lose_once() -> None:
        h.on_idle = h.service.stop
        h.clients.consumers[0].lose([("src", 1)])

    h.on_idle = lose_once
    assert h.run() == ServiceExit.OK
    assert h.broker.commit_log == []
    assert len(h.topic("clean")) == 3


def test_stop_mid_batch_finishes_and_commits_the_in_flight_batch() -> None:
    """stop() while a batch is produced: that batch is delivered and committed, no more."""
    h = Harness(service_config())
    h.feed([tick.json(i) for i in range(30)])

    def stop_at(count: int, _record: Producible) -> None:
        if count == 15:
            h.service.stop()

    h.broker.faults.on_produce = stop_at
    assert h.run() == ServiceExit.OK
    assert h.broker.committed("svc") == {("src", 0): 20}
    assert len(h.topic("clean")) == 20


def test_clean_record_over_the_size_limit_becomes_an_oversized_dlq_entry() -> None:
    """Key and headers push a valid record past max_message_bytes: DLQ kind oversized,
    counted as quarantined (delivered to the DLQ), not as valid."""
    h = Harness(service_config())
    h.feed([tick.json(0), tick.json(1)])
    h.broker.append("src", tick.json(2), headers=[("big", b"x" * 1_100_000)])
    assert h.run() == ServiceExit.OK
    (dlq,) = h.topic("dlq")
    assert dict(dlq.headers)["sv.dlq.violation.kind"] == b"oversized"
    assert h.counts() == {
        "valid_total": 2,
        "quarantined_total": 1,
        "clean_topic": 2,
        "dlq_topic": 1,
    }
    assert h.state.recent_events[-1]["converted_to_dlq"] == 1
    # Its violation is counted like any DLQ entry's: in the event and in violations_total.
    assert h.state.recent_events[-1]["violations_by_kind"] == {"oversized": 1}
    assert h.state.recent_events[-1]["violations_by_field"] == {"<record>": 1}
    labels = {"contract": "tick", "field": "_record", "kind": "oversized", "rule": ""}
    assert h.counter("stream_validator_violations_total", **labels) == 1


def test_refused_clean_record_is_isolated_and_becomes_delivery_rejected() -> None:
    """A record the clean topic refuses for good fails its batchmates once; re-read, it is
    produced alone, then sent to the DLQ as delivery_rejected while the rest flows."""
    h = Harness(service_config())
    h.feed([tick.json(i) for i in range(5)])
    h.broker.faults.refuse = lambda r: (
        "INVALID_RECORD" if r.topic == "clean" and b'"seq":2,' in (r.value or b"") else None
    )
    assert h.run() == ServiceExit.OK
    (dlq,) = h.topic("dlq")
    assert dict(dlq.headers)["sv.dlq.violation.kind"] == b"delivery_rejected"
    assert h.broker.committed("svc") == {("src", 0): 5}
    assert h.counts()["valid_total"] == 4 and h.counts()["quarantined_total"] == 1
    assert h.state.failed_batches == 0  # re-reads are not failures
    events = h.state.recent_events
    assert sum(e["violations_by_kind"].get("delivery_rejected", 0) for e in events) == 1
    labels = {"contract": "tick", "field": "_record", "kind": "delivery_rejected", "rule": ""}
    assert h.counter("stream_validator_violations_total", **labels) == 1


def test_dlq_entry_refused_alone_halts_with_its_coordinates() -> None:
    """A DLQ entry the DLQ topic refuses alone cannot go anywhere: exit 3, nothing committed."""
    h = Harness(service_config())
    # The route's failure counters exist from start-up: an alert on increase() sees the
    # first batch's failures too.
    failures = {"route": "ticks", "output": "dlq"}
    assert h.registry.get_sample_value("stream_validator_delivery_failures_total", failures) == 0
    h.feed([tick.json(0), b"garbage"])
    h.broker.faults.refuse = lambda r: "INVALID_RECORD" if r.topic == "dlq" else None
    assert h.run() == ServiceExit.HALTED
    assert h.broker.committed("svc") == {}
    error = h.state.last_error or ""
    assert "dlq" in error and "INVALID_RECORD" in error and "@1" in error


def test_unreadable_headers_send_a_valid_record_to_the_dlq() -> None:
    """Headers the client cannot read: the valid record goes to the DLQ as undecodable."""
    h = Harness(service_config())
    (record,) = h.feed([tick.json(0)])
    h.broker.mark_unreadable(record, "header names are not valid UTF-8")
    assert h.run() == ServiceExit.OK
    (dlq,) = h.topic("dlq")
    assert dict(dlq.headers)["sv.dlq.violation.kind"] == b"undecodable"
    assert h.counts()["quarantined_total"] == 1


def test_raising_hook_is_counted_in_status_and_metrics_and_the_batch_commits() -> None:
    """A raising on_batch hook: counted (hook_errors, metric), the batch committed anyway."""
    errors: list[str] = []

    def on_batch(*_: object) -> None:
        raise ValueError("bad label")

    h = Harness(
        service_config(), hooks=ServiceHooks(on_batch=on_batch, on_hook_error=errors.append)
    )
    h.feed([tick.json(i) for i in range(20)])
    assert h.run() == ServiceExit.OK
    assert h.broker.committed("svc") == {("src", 0): 20}
    assert h.state.hook_errors == 2
    assert errors == ["on_batch", "on_batch"]


def test_fatal_client_error_stops_the_service() -> None:
    """A fatal error reported by a client callback: exit 1 at the next loop turn."""
    h = Harness(service_config())
    h.feed([tick.json(0)])

    def fatal_once() -> None:
        h.on_idle = h.service.stop
        h.clients.error_callbacks[0](KafkaErrorInfo("_FATAL", "boom", fatal=True))

    h.on_idle = fatal_once
    assert h.run() == ServiceExit.FATAL


def _recorded_consumes(h: Harness) -> list[tuple[int, float, int]]:
    """Wrap the service's consumer: each consume() call as (max_records, timeout, got)."""
    calls: list[tuple[int, float, int]] = []
    make = h.clients.consumer

    def consumer(**kwargs: Any) -> Any:
        fake = make(**kwargs)
        consume = fake.consume

        def recorded(max_records: int, timeout_s: float) -> Any:
            consumed = consume(max_records, timeout_s)
            calls.append((max_records, timeout_s, len(consumed.records)))
            return consumed

        fake.consume = recorded  # type: ignore[method-assign]
        return fake

    h.clients.consumer = consumer  # type: ignore[method-assign]
    return calls


def test_a_batch_is_never_held_open_waiting_to_fill() -> None:
    """Only the wait for a batch's first record may block; what arrived is taken at once
    (batch.linger_s 0), so 3 records of a max_records=10 batch do not wait for 7 more."""
    h = Harness(service_config())
    calls = _recorded_consumes(h)
    h.feed([tick.json(i) for i in range(3)])
    assert h.run() == ServiceExit.OK
    assert calls[0] == (10, 0.0, 3)  # what has arrived, without waiting
    assert all(timeout == 0.0 or max_records == 1 for max_records, timeout, _ in calls)
    assert len(h.topic("clean")) == 3


def test_linger_waits_for_more_after_the_first_record() -> None:
    """batch.linger_s > 0: once records arrived, wait that long for the batch to fill."""
    config = service_config()
    h = Harness(replace(config, batch_linger_s=0.005))
    calls = _recorded_consumes(h)
    h.feed([tick.json(i) for i in range(3)])
    assert h.run() == ServiceExit.OK
    assert calls[:2] == [(10, 0.0, 3), (7, 0.005, 0)]


def test_linger_never_waits_past_a_due_commit() -> None:
    """While a transaction is open, a batch lingers for more no longer than until the
    commit is due: a long batch.linger_s must not hold records invisible past the interval."""
    config = service_config(transactional=True, commit_interval_s=0.2)
    h = Harness(replace(config, batch_linger_s=5.0))
    calls = _recorded_consumes(h)
    h.feed([tick.json(i) for i in range(3)])
    fed_again: list[bool] = []

    def idle() -> None:  # the first linger finds nothing: the next batch arrives, then stop
        if fed_again:
            h.service.stop()
            return
        fed_again.append(True)
        h.feed([tick.json(i) for i in range(3, 6)])

    h.on_idle = idle
    assert h.run() == ServiceExit.OK
    lingers = [timeout for max_records, timeout, _ in calls if max_records == 7]
    assert lingers[0] == 5.0  # nothing open yet: the whole linger
    assert 0 < lingers[1] <= 0.2  # the first batch's transaction is open
    assert len(h.topic("clean")) == 6


def test_an_open_transaction_is_never_slept_past_its_commit_interval() -> None:
    """While a transaction is open, the wait for records ends when its interval is up, not a
    whole interval after the last look: a quiet feed must not hold records invisible."""
    config = replace(service_config(transactional=True, commit_interval_s=0.2), batch_timeout_s=5.0)
    h = Harness(config)
    timeouts: list[float] = []
    make = h.clients.consumer

    def consumer(**kwargs: Any) -> Any:
        fake = make(**kwargs)
        consume = fake.consume

        def recorded(max_records: int, timeout_s: float) -> Any:
            timeouts.append(timeout_s)  # before the call: on_idle runs inside it
            return consume(max_records, timeout_s)

        fake.consume = recorded  # type: ignore[method-assign]
        return fake

    h.clients.consumer = consumer  # type: ignore[method-assign]
    waited: list[float] = []

    def idle() -> None:
        waited.append(timeouts[-1])
        if len(waited) == 1:
            time.sleep(0.15)  # the first wait, as if no record came for 150 ms
        else:
            h.service.stop()

    h.on_idle = idle
    h.feed([tick.json(i) for i in range(3)])
    assert h.run() == ServiceExit.OK
    assert 0.15 < waited[0] <= 0.2
    assert waited[1] <= 0.05  # what was left of the interval (a whole one before)
    assert len(h.topic("clean")) == 3
