"""The service process when the broker dies under it: exactly-once recovery and signals."""

from __future__ import annotations

import signal
import time
from pathlib import Path

import pytest
from kafka_helpers import committed_offsets, unique_group
from service_helpers import ServiceProcess, new_stream, wait_until

from stream_validator.cli.devkafka import LocalKafkaBroker


def test_exactly_once_recovers_after_broker_kill_and_restart(
    restartable_kafka: LocalKafkaBroker, tmp_path: Path, record_property: pytest.RecordProperty
) -> None:
    """Broker kill -9 after 25 committed transactions, back once the service has seen it go:
    exactly-once resumes, 0 lost, 0 duplicated."""
    bootstrap = restartable_kafka.bootstrap_servers
    total = 60_000
    stream = new_stream(
        bootstrap,
        tmp_path,
        partitions=3,
        # Short transactions, so that 25 commits come well before the end of the stream.
        batch={"max_records": 200, "commit_interval_s": 0.01},
        kafka={"transactional_id": unique_group("txn")},
    )
    stream.fill(total)
    group, source = stream.group, stream.source
    service = ServiceProcess(stream.config, tmp_path / "run.log").start()
    try:
        wait_until(lambda: service.commits() >= 25, 120, "25 commits in /status")
        restartable_kafka.kill()
        wait_until(service.reports_not_ready, 60, "/status to report the broker gone")
        restartable_kafka.start(keep_data=True)
        back = time.monotonic()
        before = sum(committed_offsets(bootstrap, group, source).values())
        wait_until(
            lambda: sum(committed_offsets(bootstrap, group, source).values()) > before,
            120,
            "a commit after the broker came back",
        )
        recovery_s = time.monotonic() - back
        assert before < total, "killed too late to be mid-stream"
        wait_until(stream.all_consumed, 180, "all committed")
        finished_s = time.monotonic() - back
        service.signal(signal.SIGTERM)
        assert service.wait(40) == 0, service.logs()[-3000:]
    finally:
        service.kill()
    seen = stream.outputs_by_source("read_committed")
    record_property("eos_recovery_after_broker_restart_s", round(recovery_s, 1))
    print(
        f"exactly-once broker kill: {total} records, first commit {recovery_s:.1f}s and all"
        f" committed {finished_s:.1f}s after the broker was back,"
        f" lost {total - len(seen)}, duplicated {sum(n - 1 for n in seen.values())}"
    )
    assert len(seen) == total
    assert max(seen.values()) == 1


@pytest.mark.parametrize("mode", ["at-least-once", "exactly-once"])
def test_sigterm_while_blocked_in_librdkafka_exits_within_the_deadline(
    restartable_kafka: LocalKafkaBroker, tmp_path: Path, mode: str
) -> None:
    """SIGTERM while blocked in librdkafka on a dead broker: exit 0 or 4 within deadline + 5 s."""
    bootstrap = restartable_kafka.bootstrap_servers
    producer = {"message.timeout.ms": "120000"}
    kafka: dict[str, object] = {"producer": producer}
    if mode == "exactly-once":
        kafka["transactional_id"] = unique_group("txn")
        producer["transaction.timeout.ms"] = "180000"  # must not be below message.timeout.ms
    stream = new_stream(
        bootstrap,
        tmp_path,
        partitions=3,
        # Frequent commits, so that 20 come while the stream is still flowing.
        batch={"max_records": 100, "commit_interval_s": 0.01},
        # Not live once the loop has not come round for 3 s: blocked, which is what we wait for.
        service={"shutdown_timeout_s": 5, "liveness_timeout_s": 3},
        kafka=kafka,
    )
    stream.fill(60_000)  # pipelined, the service gets through 20,000 records in well under 1 s
    service = ServiceProcess(stream.config, tmp_path / "run.log").start()
    try:
        wait_until(lambda: service.commits() >= 20, 90, "20 commits in /status")
        restartable_kafka.kill()
        if mode == "exactly-once":
            # With a transaction open the loop now waits in librdkafka (up to 125 s) for
            # acknowledgements that cannot come, and stops coming round.
            wait_until(service.reports_stuck, 60, "/status to report the loop stuck (not live)")
        else:
            # Pipelined, the loop keeps coming round with outputs in flight; it blocks in
            # librdkafka at shutdown instead, waiting for them (up to 125 s).
            wait_until(service.reports_not_ready, 60, "/status to report the broker gone")
        service.signal(signal.SIGTERM)
        code = service.wait(5 + 5)
    finally:
        service.kill()
    assert code in (0, 4), service.logs()[-3000:]
