"""The startup wait for output topics on the fake broker: both clients are polled while the
service waits, so their errors are delivered (and shown) as they happen."""

from __future__ import annotations

import pytest

from stream_validator.errors import KafkaErrorInfo, ServiceExit
from stream_validator.kafka.fake.producer import FakeProducer

from ..fakeservice import Harness, service_config

AUTH = KafkaErrorInfo("_AUTHENTICATION", "SASL authentication error: Authentication failed")


def waiting_harness() -> Harness:
    """A service whose DLQ topic does not exist: it waits for it."""
    h = Harness(service_config())
    del h.broker.logs["dlq"]
    return h


@pytest.mark.timeout(10)  # the bug: nothing was polled while waiting
def test_both_clients_are_polled_while_output_topics_are_missing(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """While waiting, the producer is polled and the consumer consumed (the fake consumer's
    idle call, made only by a consume that waits, stops the service)."""
    polls: list[float] = []
    poll = FakeProducer.poll
    monkeypatch.setattr(FakeProducer, "poll", lambda self, t: polls.append(t) or poll(self, t))
    h = waiting_harness()
    polled_while_waiting: list[int] = []

    def consumed_while_waiting() -> None:
        polled_while_waiting.append(len(polls))
        h.service.stop()

    h.on_idle = consumed_while_waiting
    assert h.run() == ServiceExit.OK
    assert polled_while_waiting and polled_while_waiting[0] > 0
    assert not h.state.ready


@pytest.mark.timeout(10)
def test_client_error_delivered_while_waiting_is_the_status_error() -> None:
    """An error a client reports while the service waits is /status's last_error, not the
    service's own "output topics missing" note written before it."""
    h = waiting_harness()

    def fail_then_stop() -> None:
        for callback in h.clients.error_callbacks:
            callback(AUTH)
        h.service.stop()

    h.on_idle = fail_then_stop
    assert h.run() == ServiceExit.OK
    assert (h.state.last_error or "").startswith("_AUTHENTICATION")
