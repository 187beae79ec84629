"""The service as a real process: signals, crash recovery, health endpoints, secrets."""

from __future__ import annotations

import json
import signal
from collections import Counter
from pathlib import Path

import pytest
from kafka_helpers import (
    IsolationLevel,
    create_topic,
    end_offsets,
    produce,
    read_topic,
    unique_group,
)
from service_helpers import (
    ServiceProcess,
    all_consumed,
    encode,
    route,
    tick,
    wait_until,
    write_config,
)


def setup_stream(bootstrap: str, count: int) -> tuple[str, str, str]:
    source = create_topic(bootstrap, 3, prefix="src")
    clean = create_topic(bootstrap, 3, prefix="clean")
    dlq = create_topic(bootstrap, 1, prefix="dlq")
    values = [b"garbage" if i % 100 == 3 else encode(tick(i)) for i in range(count)]
    produce(bootstrap, source, [(f"k{i}".encode(), v, None) for i, v in enumerate(values)])
    return source, clean, dlq


def outputs_by_source(
    bootstrap: str,
    source: str,
    clean: str,
    dlq: str,
    isolation_level: IsolationLevel = "read_uncommitted",
) -> Counter[tuple[int, int]]:
    """How often each source (partition, offset) appears across clean and DLQ."""
    coords = {m.key: (m.partition, m.offset) for m in read_topic(bootstrap, source)}
    seen: Counter[tuple[int, int]] = Counter(
        coords[m.key] for m in read_topic(bootstrap, clean, isolation_level=isolation_level)
    )
    for message in read_topic(bootstrap, dlq, isolation_level=isolation_level):
        envelope = json.loads(message.value or b"")
        seen[(envelope["source"]["partition"], envelope["source"]["offset"])] += 1
    assert set(seen) == set(coords.values()), "some source records have no output"
    return seen


def kill_mid_stream_then_recover(
    bootstrap: str, tmp_path: Path, total: int, **sections: dict[str, object]
) -> tuple[str, str, str, ServiceProcess]:
    """Run the service on `total` records, kill -9 it mid-stream, restart it until all is
    committed, stop it with SIGTERM; return the topics and the second run."""
    source, clean, dlq = setup_stream(bootstrap, total)
    group = unique_group("svc")
    path = write_config(
        tmp_path,
        bootstrap,
        [route("ticks", source, clean, dlq)],
        group=group,
        batch={"max_records": 100},
        **sections,
    )
    first = ServiceProcess(path, tmp_path / "run1.log").start()
    try:
        wait_until(lambda: produced(bootstrap, clean) > 2000, 90, "output under way")
    finally:
        first.kill()
    assert produced(bootstrap, clean) < total * 0.99, "killed too late to be mid-stream"
    second = ServiceProcess(path, tmp_path / "run2.log").start()
    try:
        wait_until(lambda: all_consumed(bootstrap, group, source), 120, "all committed")
        second.signal(signal.SIGTERM)
        assert second.wait(30) == 0
    finally:
        second.kill()
    return source, clean, dlq, second


def produced(bootstrap: str, topic: str) -> int:
    return sum(end_offsets(bootstrap, topic).values())


def test_sigterm_exits_zero_and_restart_adds_no_duplicates(
    kafka_bootstrap: str, tmp_path: Path
) -> None:
    """SIGTERM: finish the batch, commit, exit 0; a restart resumes without duplicates."""
    source, clean, dlq = setup_stream(kafka_bootstrap, 6000)
    group = unique_group("svc")
    path = write_config(
        tmp_path,
        kafka_bootstrap,
        [route("ticks", source, clean, dlq)],
        group=group,
        batch={"max_records": 100},
    )
    service = ServiceProcess(path, tmp_path / "run1.log").start()
    try:
        wait_until(service.ready, 60, "readiness")
        assert service.get("/healthz")[0] == 200
        wait_until(lambda: produced(kafka_bootstrap, clean) > 500, 60, "some output")
        service.signal(signal.SIGTERM)
        assert service.wait(30) == 0, service.logs()[-3000:]
    finally:
        service.kill()
    assert any(e.get("msg") == "stopped" for e in service.log_events())
    second = ServiceProcess(path, tmp_path / "run2.log").start()
    try:
        wait_until(lambda: all_consumed(kafka_bootstrap, group, source), 90, "all committed")
        second.signal(signal.SIGTERM)
        assert second.wait(30) == 0
    finally:
        second.kill()
    seen = outputs_by_source(kafka_bootstrap, source, clean, dlq)
    assert max(seen.values()) == 1, "a clean restart must not duplicate outputs"


def test_sigkill_mid_stream_loses_nothing(
    kafka_bootstrap: str, tmp_path: Path, record_property: pytest.RecordProperty
) -> None:
    """kill -9 mid-stream and a restart: every record has an output; duplicates are counted."""
    total = 20_000
    source, clean, dlq, _ = kill_mid_stream_then_recover(kafka_bootstrap, tmp_path, total)
    seen = outputs_by_source(kafka_bootstrap, source, clean, dlq)
    duplicates = sum(n - 1 for n in seen.values())
    record_property("duplicates_after_sigkill", duplicates)
    print(f"SIGKILL recovery: {total} records, {duplicates} duplicated outputs")
    assert len(seen) == total


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
    total = 20_000
    source, clean, dlq, second = kill_mid_stream_then_recover(
        kafka_bootstrap, tmp_path, total, kafka={"transactional_id": unique_group("txn")}
    )
    assert any(
        e.get("msg") == "exactly-once mode: one transaction per commit interval"
        for e in second.log_events()
    )
    seen = outputs_by_source(kafka_bootstrap, source, clean, dlq, "read_committed")
    uncommitted = outputs_by_source(kafka_bootstrap, source, clean, dlq)
    aborted_copies = sum(n - 1 for n in uncommitted.values())
    record_property("uncommitted_copies_visible_to_read_uncommitted", aborted_copies)
    print(
        f"exactly-once: {total} records, read_committed duplicates "
        f"{sum(n - 1 for n in seen.values())}, aborted copies {aborted_copies}"
    )
    assert len(seen) == total
    assert max(seen.values()) == 1
