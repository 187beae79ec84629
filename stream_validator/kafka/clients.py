"""The one client factory: librdkafka settings, and the adapter's consumer, producer and
admin client built from a service config (``ports`` describes what they offer).

Every client logs through the Python logger ``stream_validator.librdkafka`` (the service's
JSON formatter, secrets scrubbed) instead of librdkafka's raw ``%N|`` lines on stderr; the
lines are delivered when the client is polled (consume, poll, flush; the admin client's
calls poll it)."""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping
from typing import Any, TypeVar

from confluent_kafka import Consumer, KafkaError, KafkaException, Producer
from confluent_kafka.admin import AdminClient

from stream_validator.config.settings import ServiceConfig, scrub
from stream_validator.errors import ConfigError, KafkaErrorInfo
from stream_validator.kafka.confluent import (
    CommitFailures,
    ConfluentAdmin,
    ConfluentConsumer,
    ConfluentProducer,
    error_info,
)

# Defaults the service relies on; a user override of one of these is refused
# because it would break the delivery guarantee.
_CONSUMER_PINNED = {"enable.auto.commit": "false", "enable.auto.offset.store": "false"}
_PRODUCER_PINNED = {"enable.idempotence": "true", "acks": "all"}
_ERRORS_ONLY = "delivery.report.only.error"
#: Where librdkafka's own log lines go (a child of the service's JSON-logged package logger).
LIBRDKAFKA_LOGGER = logging.getLogger("stream_validator.librdkafka")


def consumer_settings(
    config: ServiceConfig,
    *,
    stats_cb: Callable[[str], None] | None = None,
    error_cb: Callable[[Any], None] | None = None,
) -> dict[str, Any]:
    """The consumer's librdkafka configuration (user settings on top of safe defaults)."""
    kafka = config.kafka
    settings: dict[str, Any] = {
        "bootstrap.servers": kafka.bootstrap_servers,
        "group.id": kafka.group_id,
        "client.id": kafka.client_id,
        "auto.offset.reset": kafka.auto_offset_reset,
        "partition.assignment.strategy": "cooperative-sticky",
        "isolation.level": "read_committed",
        # Notice newly created source topics (and regex matches) within seconds.
        "topic.metadata.refresh.interval.ms": "5000",
        "statistics.interval.ms": "5000",
    }
    settings.update(kafka.settings)
    settings.update(kafka.consumer)
    _pin(settings, _CONSUMER_PINNED, "consumer")
    if stats_cb is not None:
        settings["stats_cb"] = stats_cb
    if error_cb is not None:
        settings["error_cb"] = error_cb
    return settings


def producer_settings(
    config: ServiceConfig,
    error_cb: Callable[[Any], None] | None = None,
    *,
    silent_acks: bool = False,
) -> dict[str, Any]:
    """The producer's librdkafka configuration; ``silent_acks``: the client reports failed
    outputs only (``ConfluentProducer``'s silent mode counts the acknowledgements)."""
    kafka = config.kafka
    settings: dict[str, Any] = {
        "bootstrap.servers": kafka.bootstrap_servers,
        "client.id": kafka.client_id,
        # How long a produced record may wait for more to share its request (librdkafka's
        # default is 5 ms): 1 ms took 1-3 ms off the source -> clean p50 at 20,000 msg/s
        # (docs/benchmarks.md, "Latency at a steady rate"); a busy feed fills its requests anyway.
        "linger.ms": "1",
        # Java-compatible key hashing, so clean records land where Java clients expect.
        "partitioner": "murmur2_random",
        "message.max.bytes": str(config.max_message_bytes),
        "message.timeout.ms": str(kafka.message_timeout_ms),
    }
    if kafka.transaction_timeout_ms is not None:
        settings["transaction.timeout.ms"] = str(kafka.transaction_timeout_ms)
    settings.update(kafka.settings)
    settings.update(kafka.producer)
    _pin(settings, _PRODUCER_PINNED, "producer")
    # Whether the client reports acknowledgements is the adapter's to decide: a producer
    # told to report failures only would otherwise never learn its outputs were delivered.
    _pin(settings, {_ERRORS_ONLY: "false"}, "producer")
    # confluent-kafka reads this one itself, as a bool (a string is a TypeError).
    settings[_ERRORS_ONLY] = silent_acks
    if "transactional.id" in settings:
        # Exactly-once changes how the service commits, so it is a first-class setting.
        raise ConfigError(
            "kafka.producer: set kafka.transactional_id (SV_KAFKA__TRANSACTIONAL_ID) instead of"
            " the librdkafka property transactional.id"
        )
    if kafka.transactional_id:
        settings["transactional.id"] = kafka.transactional_id
    return settings | ({"error_cb": error_cb} if error_cb is not None else {})


def _pin(settings: dict[str, Any], pinned: dict[str, str], role: str) -> None:
    for key, value in pinned.items():
        given = str(settings.get(key, value)).lower()
        if given != value:
            raise ConfigError(
                f"kafka.{role}: {key}={given} is not allowed (the service needs"
                f" {key}={value} for at-least-once delivery)"
            )
        settings[key] = value


def create_consumer(
    config: ServiceConfig,
    *,
    on_stats: Callable[[str], None] | None = None,
    on_error: Callable[[KafkaErrorInfo], None] | None = None,
    overrides: Mapping[str, Any] | None = None,
) -> ConfluentConsumer:
    """The consumer (``overrides`` on top of the service's settings); librdkafka config
    errors become ConfigError with secrets scrubbed."""
    settings = consumer_settings(config, stats_cb=on_stats, error_cb=_errors_to(on_error))
    settings.update(overrides or {})
    failures = CommitFailures()  # asynchronous commits report their failures to it
    settings["on_commit"] = failures
    return ConfluentConsumer(_build(Consumer, settings, config, "consumer"), failures)


def create_producer(
    config: ServiceConfig,
    *,
    on_error: Callable[[KafkaErrorInfo], None] | None = None,
    overrides: Mapping[str, Any] | None = None,
    silent_acks: bool = False,
) -> ConfluentProducer:
    """The producer (``overrides`` on top, e.g. another ``transactional.id``);
    ``silent_acks``: acknowledgements counted without a report per record (the service's
    producer: ``ConfluentProducer``)."""
    settings = producer_settings(config, error_cb=_errors_to(on_error), silent_acks=silent_acks)
    settings.update(overrides or {})
    client = _build(Producer, settings, config, "producer")
    return ConfluentProducer(client, silent_acks=silent_acks)


def producer_from_settings(
    settings: Mapping[str, Any], *, on_error: Callable[[KafkaErrorInfo], None] | None = None
) -> ConfluentProducer:
    """A producer from plain librdkafka settings (the simulator has no service config);
    ``on_error`` gets client errors, a refused setting raises ConfigError."""
    callback = _errors_to(on_error)
    try:
        return ConfluentProducer(
            Producer(_logged(settings) | ({"error_cb": callback} if callback else {}))
        )
    except (KafkaException, ValueError, TypeError) as exc:
        raise ConfigError(f"invalid producer settings: {exc}") from None


def create_admin(
    config: ServiceConfig, overrides: Mapping[str, Any] | None = None
) -> ConfluentAdmin:
    """An admin client with the connection settings of the config."""
    settings: dict[str, Any] = {
        "bootstrap.servers": config.kafka.bootstrap_servers,
        **config.kafka.settings,
        **(overrides or {}),
    }
    return ConfluentAdmin(_build(AdminClient, settings, config, "admin"))


class ServiceClients:
    """``ports.ClientFactory`` for a service config."""

    def __init__(self, config: ServiceConfig) -> None:
        self._config = config

    def consumer(
        self,
        *,
        on_stats: Callable[[str], None] | None = None,
        on_error: Callable[[KafkaErrorInfo], None] | None = None,
    ) -> ConfluentConsumer:
        """The service's group consumer."""
        return create_consumer(self._config, on_stats=on_stats, on_error=on_error)

    def producer(
        self, *, on_error: Callable[[KafkaErrorInfo], None] | None = None
    ) -> ConfluentProducer:
        """The service's producer (transactional with ``kafka.transactional_id``): it
        reports failed outputs only, the acknowledgements are counted natively."""
        return create_producer(self._config, on_error=on_error, silent_acks=True)


def admin_from_settings(settings: Mapping[str, Any]) -> ConfluentAdmin:
    """An admin client from plain librdkafka settings (the simulator has no service config);
    a refused setting raises ConfigError."""
    try:
        return ConfluentAdmin(AdminClient(_logged(settings)))
    except (KafkaException, ValueError, TypeError) as exc:
        raise ConfigError(f"invalid admin settings: {exc}") from None


_Client = TypeVar("_Client")


def _build(
    factory: Callable[[dict[str, Any]], _Client],
    settings: dict[str, Any],
    config: ServiceConfig,
    role: str,
) -> _Client:
    try:
        return factory(_logged(settings))
    except (KafkaException, ValueError, TypeError) as exc:
        raise ConfigError(scrub(f"invalid {role} settings: {exc}", config.secrets())) from None


def _logged(settings: Mapping[str, Any]) -> dict[str, Any]:
    """The settings with librdkafka's log lines sent to ``LIBRDKAFKA_LOGGER``."""
    return {**settings, "logger": LIBRDKAFKA_LOGGER}


def _errors_to(
    callback: Callable[[KafkaErrorInfo], None] | None,
) -> Callable[[KafkaError], None] | None:
    if callback is None:
        return None
    return lambda error: callback(error_info(error))
