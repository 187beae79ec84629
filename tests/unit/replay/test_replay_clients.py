"""The replay producer's transaction timeouts, whatever mode the service runs in."""

from __future__ import annotations

from typing import Any

import pytest

from stream_validator.config.settings import KafkaConfig, ServiceConfig
from stream_validator.kafka.clients import producer_settings
from stream_validator.replay import clients
from stream_validator.replay.clients import BrokerClients


def _replay_producer_settings(kafka: KafkaConfig, monkeypatch: pytest.MonkeyPatch) -> Any:
    """The librdkafka settings BrokerClients hands the producer it builds."""
    built: list[dict[str, Any]] = []

    def capture(config: ServiceConfig, *, overrides: dict[str, Any]) -> object:
        built.append(producer_settings(config) | overrides)
        return object()

    monkeypatch.setattr(clients, "create_producer", capture)
    config = ServiceConfig(kafka, routes=())
    BrokerClients(config, group="g", transactional_id="sv-replay-x").producer()
    return built[0]


def test_beside_an_at_least_once_service_the_transaction_timeout_is_10_s(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """An at-least-once config sets no transaction timeout; the replay, which always runs
    transactions, must not fall back to librdkafka's 60 s (readers stall that long after a
    replay is killed). Before the fix the setting was absent."""
    settings = _replay_producer_settings(KafkaConfig(), monkeypatch)
    assert settings["transactional.id"] == "sv-replay-x"
    assert settings["transaction.timeout.ms"] == "10000"
    assert int(settings["message.timeout.ms"]) <= 10000


def test_user_timeouts_are_kept_and_stay_consistent(monkeypatch: pytest.MonkeyPatch) -> None:
    given = KafkaConfig(producer={"transaction.timeout.ms": "20000"})
    settings = _replay_producer_settings(given, monkeypatch)
    assert settings["transaction.timeout.ms"] == "20000"
    assert settings["message.timeout.ms"] == "20000"
    long_messages = KafkaConfig(producer={"message.timeout.ms": "45000"})
    settings = _replay_producer_settings(long_messages, monkeypatch)
    assert settings["message.timeout.ms"] == "45000"
    assert settings["transaction.timeout.ms"] == "45000"


def test_librdkafka_accepts_the_replay_producer_settings() -> None:
    """The settings build a real producer (librdkafka checks message <= transaction timeout)."""
    producer = BrokerClients(
        ServiceConfig(KafkaConfig(bootstrap_servers="127.0.0.1:1"), routes=()),
        group="g",
        transactional_id="sv-replay-y",
    ).producer()
    assert producer is not None
