"""Exactly-once timeouts: the transaction timeout's default and what must fit inside it."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from stream_validator.config.settings import ServiceConfig, load_config
from stream_validator.errors import ConfigError
from stream_validator.kafka.clients import producer_settings

TICK = str(Path(__file__).resolve().parents[3] / "config" / "contracts" / "tick.yaml")
ROUTE = {"name": "t", "source_topics": ["in"], "contract": TICK, "clean_topic": "out"}


def document(
    *, exactly_once: bool = True, section: str = "producer", **librdkafka: str
) -> dict[str, Any]:
    """One route; kafka.transactional_id set unless not ``exactly_once``; ``librdkafka``
    properties (``_`` for ``.``) in kafka.<section>."""
    kafka: dict[str, Any] = {section: {k.replace("_", "."): v for k, v in librdkafka.items()}}
    if exactly_once:
        kafka["transactional_id"] = "validator-0"
    return {"kafka": kafka, "routes": [{**ROUTE, "dlq_topic": "dlq"}]}


def load(tmp_path: Path, doc: dict[str, Any]) -> ServiceConfig:
    path = tmp_path / "c.yaml"
    path.write_text(yaml.safe_dump(doc))
    return load_config(path, {})


def error(tmp_path: Path, doc: dict[str, Any]) -> str:
    with pytest.raises(ConfigError) as info:
        load(tmp_path, doc)
    return str(info.value).removeprefix(f"{tmp_path / 'c.yaml'}: ")


def test_exactly_once_defaults_to_a_10_s_transaction_timeout(tmp_path: Path) -> None:
    """Exactly-once: transaction.timeout.ms 10 s, and message.timeout.ms capped to it."""
    settings = producer_settings(load(tmp_path, document()))
    assert settings["transaction.timeout.ms"] == "10000"
    assert settings["message.timeout.ms"] == "10000"


def test_at_least_once_keeps_librdkafkas_transaction_default(tmp_path: Path) -> None:
    """At-least-once: no transaction.timeout.ms is set; message.timeout.ms stays 30 s."""
    settings = producer_settings(load(tmp_path, document(exactly_once=False)))
    assert "transaction.timeout.ms" not in settings
    assert settings["message.timeout.ms"] == "30000"


@pytest.mark.parametrize("section", ["producer", "settings"])
def test_the_transaction_timeout_can_be_set(tmp_path: Path, section: str) -> None:
    """A transaction.timeout.ms in kafka.producer or kafka.settings replaces the default;
    message.timeout.ms then defaults to 30 s again."""
    doc = document(section=section, transaction_timeout_ms="60000")
    config = load(tmp_path, doc)
    assert config.kafka.transaction_timeout_ms == 60000
    settings = producer_settings(config)
    assert (settings["transaction.timeout.ms"], settings["message.timeout.ms"]) == (
        "60000",
        "30000",
    )


def test_a_message_timeout_longer_than_the_transactions_is_refused(tmp_path: Path) -> None:
    """message.timeout.ms above transaction.timeout.ms fails at load, naming both keys."""
    message = error(tmp_path, document(message_timeout_ms="30000"))
    assert message == (
        "kafka.producer.message.timeout.ms (30000 ms) must be 1 to"
        " kafka.producer.transaction.timeout.ms (10000 ms, the exactly-once default):"
        " a delivery must not outlive the transaction it belongs to"
    )


def test_the_error_names_the_section_each_key_was_set_in(tmp_path: Path) -> None:
    """A key set in kafka.settings is named there."""
    doc = document(message_timeout_ms="20000")
    doc["kafka"]["settings"] = {"transaction.timeout.ms": "15000"}
    message = error(tmp_path, doc)
    assert message.startswith(
        "kafka.producer.message.timeout.ms (20000 ms) must be 1 to"
        " kafka.settings.transaction.timeout.ms (15000 ms):"
    )


def test_a_message_timeout_above_30_s_is_fine_without_transactions(tmp_path: Path) -> None:
    """At-least-once has no transaction for a delivery to fit in."""
    config = load(tmp_path, document(exactly_once=False, message_timeout_ms="120000"))
    assert config.kafka.message_timeout_ms == 120000


def test_a_commit_interval_not_shorter_than_the_transaction_timeout_is_refused(
    tmp_path: Path,
) -> None:
    """batch.commit_interval_s must leave a transaction time to commit before the broker
    aborts it: an error names both keys."""
    doc = document(transaction_timeout_ms="5000")
    doc["batch"] = {"commit_interval_s": 5}
    assert error(tmp_path, doc) == (
        "batch.commit_interval_s (5.0 s) must be shorter than"
        " kafka.producer.transaction.timeout.ms (5000 ms): the broker would abort every"
        " transaction before it commits"
    )


def test_a_socket_timeout_past_the_transaction_timeout_is_refused(tmp_path: Path) -> None:
    """librdkafka refuses socket.timeout.ms above transaction.timeout.ms + 100: at load."""
    message = error(tmp_path, document(socket_timeout_ms="30000"))
    assert message.startswith(
        "kafka.producer.socket.timeout.ms (30000 ms) must be at most"
        " kafka.producer.transaction.timeout.ms (10000 ms, the exactly-once default) + 100 ms"
    )


@pytest.mark.parametrize("key", ["message.timeout.ms", "transaction.timeout.ms"])
def test_a_timeout_that_is_not_whole_milliseconds_is_refused(tmp_path: Path, key: str) -> None:
    """A timeout such as '10s' is named with its key, not a crash later."""
    doc = document()
    doc["kafka"]["producer"] = {key: "10s"}
    assert error(tmp_path, doc) == (
        f"kafka.producer.{key}: expected a whole number of milliseconds, got '10s'"
    )
