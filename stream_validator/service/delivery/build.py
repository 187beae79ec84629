"""Building the service's committer from its config: at-least-once, or transactional with
``kafka.transactional_id``."""

from __future__ import annotations

import threading
from collections.abc import Callable, Mapping
from datetime import datetime
from typing import Protocol

from stream_validator.config.settings import ServiceConfig
from stream_validator.errors import KafkaErrorInfo
from stream_validator.kafka.ports import ClientFactory, Consumer, Producer
from stream_validator.kafka.transactions import Transactions
from stream_validator.service.delivery.atleastonce import AtLeastOnce
from stream_validator.service.delivery.committer import Committer
from stream_validator.service.delivery.rejections import Rejections
from stream_validator.service.delivery.replacements import Replacements
from stream_validator.service.delivery.transactional import Recovery, Transactional
from stream_validator.service.plan.planner import RouteProcessor


def flush_timeout(config: ServiceConfig) -> float:
    """How long to wait for acknowledgements: the producer's message timeout, plus 5 s."""
    return config.kafka.message_timeout_ms / 1000.0 + 5.0


class OnClientError(Protocol):
    """The loop's handler of a client's errors (``consume.callbacks.ClientCallbacks.on_error``)."""

    def __call__(self, error: KafkaErrorInfo, *, fatal_stops: bool = True) -> None: ...


def build_committer(
    config: ServiceConfig,
    clients: ClientFactory,
    consumer: Consumer,
    processors: Mapping[str, RouteProcessor],
    *,
    on_error: OnClientError,
    stop: threading.Event,
    on_commit: Callable[[], None],
    on_transaction_commit: Callable[[float], None] = lambda _: None,
    heartbeat: Callable[[], None],
    note_error: Callable[[str], None],
    safe: Callable[[object], str],
    clock: Callable[[], datetime],
) -> Committer:
    """The committer the config asks for, with its producer(s) and replacements."""
    rejections = Rejections()
    replacements = Replacements(
        processors,
        rejections,
        max_message_bytes=config.max_message_bytes,
        clock=clock,
    )
    if not config.kafka.transactional_id:
        producer = clients.producer(on_error=on_error)
        return AtLeastOnce(
            consumer,
            producer,
            replacements,
            rejections,
            on_commit=on_commit,
            safe=safe,
            interval_s=config.batch_commit_interval_s,
            flush_timeout_s=flush_timeout(config),
        )
    generation = 0

    def new_producer() -> Producer:
        """A producer whose errors count only while it is the current one."""
        nonlocal generation
        generation += 1
        mine = generation

        def on_current_error(error: KafkaErrorInfo) -> None:
            if mine == generation:
                # A transactional producer's fatal errors surface in its transactional
                # calls, which decide between replacing it and stopping.
                on_error(error, fatal_stops=False)

        return clients.producer(on_error=on_current_error)

    recovery = Recovery(
        stop,
        config.retry_backoff_s,
        config.retry_backoff_max_s,
        config.startup_check_timeout_s,
        heartbeat,
        note_error,
    )
    transactions = Transactions(new_producer, consumer.group_metadata, flush_timeout(config))
    return Transactional(
        consumer,
        transactions,
        replacements,
        rejections,
        recovery,
        on_commit=on_commit,
        on_commit_took=on_transaction_commit,
        safe=safe,
        interval_s=config.batch_commit_interval_s,
        flush_timeout_s=flush_timeout(config),
    )
