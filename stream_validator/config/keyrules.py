"""The rules between a service config's keys (one key's type and bounds are checked by
decoding, ``schema``): each raises a ConfigError listing every problem it finds."""

from __future__ import annotations

import re
from collections.abc import Sequence

from stream_validator.config.model import (
    KafkaConfig,
    RouteConfig,
    SchemaRegistryConfig,
    ServiceConfig,
)
from stream_validator.errors import ConfigError, problem_listing

__all__ = [
    "check_producer_queue",
    "check_service",
    "check_transaction_timeouts",
    "registry_problems",
]

_LOG_LEVELS = ("DEBUG", "INFO", "WARNING", "ERROR")


def check_transaction_timeouts(config: ServiceConfig) -> None:
    """The producer's timeouts are whole milliseconds, and everything a transaction waits for
    fits inside ``transaction.timeout.ms`` (else librdkafka refuses the producer, or the broker
    aborts transactions that would have committed)."""
    kafka = config.kafka
    for key in ("message.timeout.ms", "transaction.timeout.ms", "socket.timeout.ms"):
        given = kafka.producer_setting(key)
        if given is not None and not re.fullmatch(r"[0-9]{1,10}", given.strip()):
            raise ConfigError(
                f"{config.source}: {_producer_key(kafka, key)}: expected a whole number of"
                f" milliseconds, got {given[:20]!r}"
            )
    transaction_ms = kafka.transaction_timeout_ms
    if transaction_ms is None:
        return
    default = (
        "" if kafka.producer_setting("transaction.timeout.ms") else ", the exactly-once default"
    )
    txn = f"{_producer_key(kafka, 'transaction.timeout.ms')} ({transaction_ms} ms{default})"
    message_ms = kafka.message_timeout_ms
    socket_ms = kafka.producer_setting("socket.timeout.ms")
    checks = [
        (
            0 < message_ms <= transaction_ms,
            f"{_producer_key(kafka, 'message.timeout.ms')} ({message_ms} ms) must be 1 to {txn}:"
            " a delivery must not outlive the transaction it belongs to",
        ),
        (
            socket_ms is None or int(socket_ms) <= transaction_ms + 100,
            f"{_producer_key(kafka, 'socket.timeout.ms')} ({socket_ms} ms) must be at most {txn}"
            " + 100 ms (librdkafka's rule for transactional producers)",
        ),
        (
            config.batch_commit_interval_s * 1000 < transaction_ms,
            f"batch.commit_interval_s ({config.batch_commit_interval_s} s) must be shorter than"
            f" {txn}: the broker would abort every transaction before it commits",
        ),
    ]
    problems = [message for ok, message in checks if not ok]
    if problems:
        raise ConfigError(f"{config.source}: {problem_listing(problems)}")


def _producer_key(kafka: KafkaConfig, key: str) -> str:
    """Where a producer property is set (``kafka.producer`` wins over ``kafka.settings``)."""
    section = "settings" if key in kafka.settings and key not in kafka.producer else "producer"
    return f"kafka.{section}.{key}"


def check_service(config: ServiceConfig) -> None:
    """The rules between keys (one key's type and bounds are checked by decoding)."""
    checks = [
        (
            config.liveness_timeout_s > config.batch_timeout_s,
            "service.liveness_timeout_s must exceed batch.timeout_s"
            f" ({config.liveness_timeout_s} <= {config.batch_timeout_s})",
        ),
        (
            config.batch_max_in_flight_records >= config.batch_max_records,
            f"batch.max_in_flight_records ({config.batch_max_in_flight_records}) must be at least"
            f" batch.max_records ({config.batch_max_records}): one batch must fit in the window",
        ),
        (
            config.retry_backoff_s <= config.retry_backoff_max_s,
            "service.retry_backoff_s must be <= service.retry_backoff_max_s"
            f" ({config.retry_backoff_s} > {config.retry_backoff_max_s})",
        ),
        *(
            (
                bool(host.strip()),
                f"{key} must not be empty: set an address such as 127.0.0.1 (loopback only)"
                " or 0.0.0.0 (every interface)",
            )
            for key, host in (
                ("service.health_host", config.health_host),
                ("metrics.host", config.metrics_host),
            )
        ),
        (
            config.log_level.upper() in _LOG_LEVELS,
            f"service.log_level: expected one of {', '.join(_LOG_LEVELS)} (any case),"
            f" got {config.log_level[:20]!r}",
        ),
    ]
    problems = [message for ok, message in checks if not ok]
    if problems:
        raise ConfigError(f"{config.source}: {problem_listing(problems)}")


_QUEUE_KEYS = ("queue.buffering.max.kbytes", "queue.buffering.max.messages")


def check_producer_queue(config: ServiceConfig) -> None:
    """The producer's local queue holds one record of ``max_message_bytes``: a record that
    cannot fit in it even empty would wait for room forever.

    librdkafka counts value bytes against ``queue.buffering.max.kbytes`` (every output's
    value is at most ``max_message_bytes``) and records against
    ``queue.buffering.max.messages``, where any value it accepts (0: no limit) admits one
    record into an empty queue; both are checked to be integers here."""
    kafka = config.kafka
    values: dict[str, int] = {}
    for key in _QUEUE_KEYS:
        section = "producer" if key in kafka.producer else "settings"
        raw = getattr(kafka, section).get(key)
        if raw is None:
            continue
        try:
            values[key] = int(raw)
        except ValueError:
            raise ConfigError(
                f"{config.source}: kafka.{section}.{key}: expected an integer, got {raw[:20]!r}"
            ) from None
    kbytes = values.get(_QUEUE_KEYS[0])
    if kbytes is not None and kbytes * 1024 < config.max_message_bytes:
        raise ConfigError(
            f"{config.source}: kafka queue.buffering.max.kbytes={kbytes}"
            f" ({kbytes * 1024} bytes) cannot hold one record of service.max_message_bytes"
            f"={config.max_message_bytes}: set queue.buffering.max.kbytes to at least"
            f" {-(-config.max_message_bytes // 1024)} or lower service.max_message_bytes"
            " (queue.buffering.max.messages bounds the count, not the bytes)"
        )


def registry_problems(registry: SchemaRegistryConfig, routes: Sequence[RouteConfig]) -> list[str]:
    """A route with a registry ``format`` needs ``schema_registry.url``; one way to log in
    (basic auth, with both its keys, or a bearer token); a client key needs its certificate.
    Never quotes a secret."""
    problems: list[str] = []
    if registry.url is None:
        problems.extend(
            f"routes[{index}].format (route {route.name!r}): {route.format!r} needs"
            " schema_registry.url"
            for index, route in enumerate(routes)
            if route.format != "json"
        )
    elif not re.match(r"(?i)(https?|mock)://", registry.url):
        problems.append("schema_registry.url: expected an http:// or https:// URL")
    if (registry.basic_auth_user is None) != (registry.basic_auth_password is None):
        problems.append("schema_registry: basic_auth_user and basic_auth_password go together")
    if registry.bearer_token is not None and registry.basic_auth_user is not None:
        problems.append("schema_registry: either basic auth or bearer_token, not both")
    if registry.ssl_key_location is not None and registry.ssl_certificate_location is None:
        problems.append("schema_registry.ssl_key_location needs ssl_certificate_location")
    return problems
