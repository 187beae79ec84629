"""The service waiting for a broker it cannot log in to: both clients are polled while it
waits, so the real error (authentication) reaches /status and the log as it happens, and
librdkafka's own lines go through the JSON log formatter with secrets scrubbed."""

from __future__ import annotations

import json
import re
import signal
from pathlib import Path

import pytest
from kafka_helpers import create_topic, unique_group
from service_helpers import ServiceProcess, route, wait_until, write_config

pytestmark = [pytest.mark.integration, pytest.mark.timeout(180)]

SECRET = "Wrong-Pass-5c1e9a"


def sasl_config(tmp_path: Path, bootstrap: str) -> Path:
    """A config that speaks SASL PLAIN to the test broker's PLAINTEXT listener."""
    source = create_topic(bootstrap, 1, prefix="src")
    path = write_config(
        tmp_path,
        bootstrap,
        [route("t", source, "c-none", "d-none")],
        group=unique_group("svc"),
        kafka={
            "settings": {
                "security.protocol": "SASL_PLAINTEXT",
                "sasl.mechanisms": "PLAIN",
                "sasl.username": "alice",
                "sasl.password": SECRET,
            }
        },
    )
    return path


def client_errors(service: ServiceProcess) -> int:
    return sum(1 for e in service.log_events() if e["msg"] == "kafka client error")


def test_waiting_service_reports_the_authentication_error_in_json_logs(
    kafka_bootstrap: str, tmp_path: Path
) -> None:
    """/status names _AUTHENTICATION while waiting, client errors are logged before shutdown,
    and every output line is JSON (no raw librdkafka %N| line, no secret)."""
    service = ServiceProcess(sasl_config(tmp_path, kafka_bootstrap), tmp_path / "run.log")
    service.start()
    try:
        wait_until(
            lambda: "_AUTHENTICATION" in (service.status().get("last_error") or ""),
            60,
            "the authentication error in /status",
        )
        wait_until(lambda: client_errors(service) >= 3, 60, "client errors logged while waiting")
        assert not service.ready()
        service.signal(signal.SIGTERM)
        assert service.wait(30) == 0
    finally:
        service.kill()
    lines = service.logs().splitlines()
    assert not [line for line in lines if re.match(r"%\d+\|", line)]
    events = [json.loads(line) for line in lines]  # every line is a JSON object
    librdkafka = [e for e in events if e["logger"] == "stream_validator.librdkafka"]
    assert any("SASL" in e["msg"] for e in librdkafka)
    assert SECRET not in service.logs()
