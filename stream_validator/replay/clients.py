"""The Kafka clients a replay run uses, and how they differ from the service's.

``BrokerClients`` builds them with the adapter's one factory (``kafka.clients``), adding
only what a replay needs on top of the service's settings; unit tests pass clients of the
in-memory fake broker instead (anything shaped like ``ReplayClients``).
"""

from __future__ import annotations

from typing import Any, Protocol

from stream_validator.config.model import (
    DEFAULT_MESSAGE_TIMEOUT_MS,
    DEFAULT_TRANSACTION_TIMEOUT_MS,
    KafkaConfig,
)
from stream_validator.config.settings import ServiceConfig
from stream_validator.kafka.clients import create_admin, create_consumer, create_producer
from stream_validator.kafka.ports import Admin, Consumer, Producer

# librdkafka logs only critical messages: connection retries and coordinator loading are
# noise for a command line tool; real failures surface as exceptions in the summary.
_LOG_LEVEL = "2"


class ReplayClients(Protocol):
    """Builds the clients of one replay run; a refused setting raises ConfigError."""

    def admin(self) -> Admin:
        """Topic metadata, the replay groups' offsets and the DLQ's end offsets."""

    def consumer(self) -> Consumer:
        """The DLQ reader: assigned partitions (it never joins its group), partition EOF
        events, read_committed."""

    def producer(self) -> Producer:
        """A transactional producer; every producer built has the same transactional.id."""


class BrokerClients:
    """``ReplayClients`` for the broker of a service config."""

    def __init__(self, config: ServiceConfig, *, group: str, transactional_id: str) -> None:
        self._config = config
        self._group = group
        self._transactional_id = transactional_id

    def admin(self) -> Admin:
        return create_admin(self._config, {"log_level": _LOG_LEVEL})

    def consumer(self) -> Consumer:
        overrides: dict[str, Any] = {
            "group.id": self._group,
            "auto.offset.reset": "earliest",  # a committed offset lost to retention
            "enable.partition.eof": True,
            "fetch.wait.max.ms": 100,
            "statistics.interval.ms": 0,  # nobody reads them
            "log_level": _LOG_LEVEL,
        }
        return create_consumer(self._config, overrides=overrides)

    def producer(self) -> Producer:
        # One transactional id per DLQ + target: two replays to one target never overlap.
        overrides = {
            "transactional.id": self._transactional_id,
            "log_level": _LOG_LEVEL,
            **transaction_timeouts(self._config.kafka),
        }
        return create_producer(self._config, overrides=overrides)


def transaction_timeouts(kafka: KafkaConfig) -> dict[str, str]:
    """The replay producer's ``transaction.timeout.ms`` and ``message.timeout.ms``.

    A replay always runs transactions, even beside an at-least-once service, whose config then
    sets no transaction timeout: without one a replay killed mid-transaction would hide the
    records after it from read_committed readers for librdkafka's default 60 s. Unless the
    user set it, the timeout is the exactly-once default (10 s), raised to a ``message.timeout.ms``
    the user set (librdkafka refuses a message timeout above the transaction's)."""
    given_txn = kafka.producer_setting("transaction.timeout.ms")
    given_msg = kafka.producer_setting("message.timeout.ms")
    if given_txn is not None:
        txn_ms = int(given_txn)
    else:
        txn_ms = max(DEFAULT_TRANSACTION_TIMEOUT_MS, int(given_msg or 0))
    msg_ms = int(given_msg) if given_msg is not None else min(DEFAULT_MESSAGE_TIMEOUT_MS, txn_ms)
    return {"transaction.timeout.ms": str(txn_ms), "message.timeout.ms": str(msg_ms)}
