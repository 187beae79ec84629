"""librdkafka's own log lines go to the Python logger (the service's JSON formatter), not to
stderr as raw ``%N|`` lines; they are delivered when the client is polled."""

from __future__ import annotations

import logging
import time
from collections.abc import Iterator

import pytest

from stream_validator.kafka.clients import producer_from_settings

LIBRDKAFKA_LOGGER = logging.getLogger("stream_validator.librdkafka")

UNREACHABLE = {"bootstrap.servers": "127.0.0.1:1", "reconnect.backoff.ms": "10"}


class Lines(logging.Handler):
    def __init__(self) -> None:
        super().__init__(logging.DEBUG)
        self.records: list[logging.LogRecord] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.records.append(record)


@pytest.fixture
def lines() -> Iterator[Lines]:
    """What LIBRDKAFKA_LOGGER receives (attached to it: the package logger may not propagate)."""
    handler = Lines()
    LIBRDKAFKA_LOGGER.addHandler(handler)
    try:
        yield handler
    finally:
        LIBRDKAFKA_LOGGER.removeHandler(handler)


def test_client_log_lines_reach_the_python_logger_not_stderr(
    lines: Lines, capfd: pytest.CaptureFixture[str]
) -> None:
    """A producer that cannot connect logs the failure through LIBRDKAFKA_LOGGER on poll()."""
    producer = producer_from_settings(UNREACHABLE)
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline and not lines.records:
        producer.poll(0.1)
    assert any("127.0.0.1:1" in r.getMessage() for r in lines.records)
    assert "|" not in capfd.readouterr().err  # librdkafka's own format: %3|<ts>|FAIL|...
