"""The service as a real process: signals, crash recovery, health endpoints, secrets."""

from __future__ import annotations

import signal
import time
from pathlib import Path

import pytest
from kafka_helpers import create_topic, unique_group
from service_helpers import ServiceProcess, Stream, new_stream, route, wait_until, write_config


def kill_mid_stream_then_recover(
    bootstrap: str, tmp_path: Path, total: int, **sections: dict[str, object]
) -> tuple[Stream, ServiceProcess]:
    """Run the service on `total` records, kill -9 it once it has committed 3 times,
    restart it until all is committed, stop it with SIGTERM; return the stream and the
    second run."""
    # Pipelined, the service gets through 20,000 records in well under a second: commit
    # often and look often, so the kill comes mid-stream.
    batch = {"max_records": 100, "commit_interval_s": 0.01}
    stream = new_stream(bootstrap, tmp_path, partitions=3, batch=batch, **sections)
    stream.fill(total)
    first = ServiceProcess(stream.config, tmp_path / "run1.log").start()
    try:
        wait_until(lambda: first.commits() >= 3, 90, "3 commits in /status", interval=0.01)
    finally:
        first.kill()
    assert stream.produced(stream.clean) < total * 0.99, "killed too late to be mid-stream"
    return stream, run_to_the_end(stream, tmp_path / "run2.log", 120)


def run_to_the_end(stream: Stream, log_path: Path, timeout: float) -> ServiceProcess:
    """Start the service, wait until it is ready (its signal handlers are installed by then)
    and its group committed every source record, SIGTERM it: it must exit 0."""
    service = ServiceProcess(stream.config, log_path).start()
    try:
        # A previous run may already have committed everything: without waiting for
        # readiness, SIGTERM could reach the new process before it handles signals.
        wait_until(service.ready, timeout, "readiness")
        wait_until(stream.all_consumed, timeout, "all committed")
        service.signal(signal.SIGTERM)
        assert service.wait(30) == 0, service.logs()[-3000:]
    finally:
        service.kill()
    return service


def test_sigterm_exits_zero_and_restart_adds_no_duplicates(
    kafka_bootstrap: str, tmp_path: Path
) -> None:
    """SIGTERM: finish the batch, commit, exit 0; a restart resumes without duplicates."""
    stream = new_stream(kafka_bootstrap, tmp_path, partitions=3, batch={"max_records": 100})
    stream.fill(6000)
    service = ServiceProcess(stream.config, tmp_path / "run1.log").start()
    try:
        wait_until(service.ready, 60, "readiness")
        assert service.get("/healthz")[0] == 200
        wait_until(lambda: stream.produced(stream.clean) > 500, 60, "some output")
        service.signal(signal.SIGTERM)
        assert service.wait(30) == 0, service.logs()[-3000:]
    finally:
        service.kill()
    assert any(e.get("msg") == "stopped" for e in service.log_events())
    run_to_the_end(stream, tmp_path / "run2.log", 90)
    seen = stream.outputs_by_source()
    assert max(seen.values()) == 1, "a clean restart must not duplicate outputs"


def test_sigkill_mid_stream_loses_nothing(
    kafka_bootstrap: str, tmp_path: Path, record_property: pytest.RecordProperty
) -> None:
    """kill -9 mid-stream and a restart: every record has an output; duplicates are counted."""
    total = 60_000
    stream, _ = kill_mid_stream_then_recover(kafka_bootstrap, tmp_path, total)
    seen = stream.outputs_by_source()
    duplicates = sum(n - 1 for n in seen.values())
    record_property("duplicates_after_sigkill", duplicates)
    print(f"SIGKILL recovery: {total} records, {duplicates} duplicated outputs")
    assert len(seen) == total


def test_sigkill_duplicates_at_most_the_window_and_two_commit_intervals(
    kafka_bootstrap: str, tmp_path: Path, record_property: pytest.RecordProperty
) -> None:
    """kill -9 three times mid-stream, restarted each time: each kill duplicates at most
    batch.max_in_flight_records plus two commit intervals of input at the measured rate: what was
    delivered since the last commit, and the commit still on its way when the process died."""
    total, window, interval = 60_000, 500, 0.01
    batch = {"max_records": 100, "commit_interval_s": interval, "max_in_flight_records": window}
    stream = new_stream(kafka_bootstrap, tmp_path, partitions=3, batch=batch)
    stream.fill(total)
    rates = [kill_mid_stream(stream, tmp_path / f"kill{run}.log") for run in range(3)]
    run_to_the_end(stream, tmp_path / "last.log", 120)
    seen = stream.outputs_by_source()
    duplicates = sum(n - 1 for n in seen.values())
    bound = 3 * (window + max(rates) * 2 * interval)
    record_property("duplicates_after_3_sigkills", duplicates)
    print(f"3 x kill -9: {duplicates} duplicated outputs (bound {bound:.0f}, rates {rates})")
    assert len(seen) == total
    assert duplicates <= bound


def kill_mid_stream(stream: Stream, log_path: Path) -> float:
    """Start the service, kill -9 it once it has committed 3 times and reported 2,000 more
    records; return its rate over those 2,000 (records/s, just before the kill)."""
    service = ServiceProcess(stream.config, log_path).start()
    try:
        wait_until(lambda: service.commits() >= 3, 90, "3 commits in /status", interval=0.01)
        start, before = time.monotonic(), records_reported(service)
        wait_until(
            lambda: records_reported(service) >= before + 2000, 30, "2,000 more records", 0.01
        )
        rate = (records_reported(service) - before) / (time.monotonic() - start)
    finally:
        service.kill()
    assert not stream.all_consumed(), "killed too late to be mid-stream"
    return rate


def records_reported(service: ServiceProcess) -> int:
    """Records reported delivered so far, from /status (0 when it does not answer)."""
    return int(service.status().get("records", 0))


def test_secrets_never_logged(kafka_bootstrap: str, tmp_path: Path) -> None:
    """SASL passwords from the file and the environment never reach the logs."""
    source = create_topic(kafka_bootstrap, 1, prefix="src")
    group = unique_group("svc")
    file_secret, env_secret = "FileSecret-8d1f0e", "EnvSecret-42ab77"
    path = write_config(
        tmp_path, kafka_bootstrap, [route("t", source, "c-none", "d-none")], group=group
    )
    text = path.read_text().replace(
        "settings: {}",
        (
            "settings: {security.protocol: SASL_PLAINTEXT, sasl.mechanisms: PLAIN,"
            f" sasl.username: alice, sasl.password: {file_secret}}}"
        ),
    )
    path.write_text(text)
    service = ServiceProcess(
        path,
        tmp_path / "run.log",
        env={"SV_KAFKA__PRODUCER__SASL_PASSWORD": env_secret, "SV_SERVICE__LOG_LEVEL": "DEBUG"},
    )
    service.start()
    try:
        wait_until(lambda: "not ready" in service.logs(), 60, "connection errors in the log")
        assert not service.ready()
        service.signal(signal.SIGTERM)
        assert service.wait(30) == 0
    finally:
        service.kill()
    logs = service.logs()
    assert file_secret not in logs and env_secret not in logs
    assert '"sasl.password":"***"' in logs


def test_exactly_once_mode_sigkill_no_loss_no_duplicates(
    kafka_bootstrap: str, tmp_path: Path, record_property: pytest.RecordProperty
) -> None:
    """With kafka.transactional_id, kill -9 mid-stream and a restart: each record once, exactly."""
    total = 60_000
    stream, second = kill_mid_stream_then_recover(
        kafka_bootstrap, tmp_path, total, kafka={"transactional_id": unique_group("txn")}
    )
    assert any(
        e.get("msg") == "exactly-once mode: one transaction per commit interval"
        for e in second.log_events()
    )
    seen = stream.outputs_by_source("read_committed")
    uncommitted = stream.outputs_by_source()
    aborted_copies = sum(n - 1 for n in uncommitted.values())
    record_property("uncommitted_copies_visible_to_read_uncommitted", aborted_copies)
    print(
        f"exactly-once: {total} records, read_committed duplicates "
        f"{sum(n - 1 for n in seen.values())}, aborted copies {aborted_copies}"
    )
    assert len(seen) == total
    assert max(seen.values()) == 1
