"""Building the committer from the config: the timeouts it derives from the producer's."""

from __future__ import annotations

from dataclasses import replace

import pytest

from stream_validator.config.settings import ServiceConfig
from stream_validator.errors import ServiceExit
from stream_validator.kafka.fake import FakeProducer

from ..fakeservice import EVERY_POLL, Harness, service_config, tick


def with_message_timeout(config: ServiceConfig, timeout_ms: int) -> ServiceConfig:
    producer = {"message.timeout.ms": str(timeout_ms)}
    return replace(config, kafka=replace(config.kafka, producer=producer))


@pytest.fixture
def flush_timeouts(monkeypatch: pytest.MonkeyPatch) -> list[float]:
    """The timeouts every fake producer's flush() is called with, in order."""
    seen: list[float] = []
    flush = FakeProducer.flush

    def recording(self: FakeProducer, timeout_s: float) -> int:
        seen.append(timeout_s)
        return flush(self, timeout_s)

    monkeypatch.setattr(FakeProducer, "flush", recording)
    return seen


def test_transaction_flush_waits_the_message_timeout_plus_5_s(
    flush_timeouts: list[float],
) -> None:
    """The exactly-once committer waits for a transaction's acknowledgements for the
    configured message.timeout.ms + 5 s (before the commit; the last flush is the shutdown's)."""
    config = service_config(transactional=True, commit_interval_s=EVERY_POLL)
    h = Harness(with_message_timeout(config, 2000))
    h.feed([tick.json(i) for i in range(5)])
    assert h.run() == ServiceExit.OK
    assert len(h.topic("clean")) == 5
    assert flush_timeouts[0] == 7.0
