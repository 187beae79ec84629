"""Creating the topics a service config needs (``stream-validator create-topics``), through
the adapter's one admin path (``confluent.ConfluentAdmin.create_topics``)."""

from __future__ import annotations

from collections.abc import Iterable

from stream_validator.config.settings import ServiceConfig, scrub
from stream_validator.errors import KafkaClientError
from stream_validator.kafka.clients import create_admin


def topics_of(config: ServiceConfig) -> list[str]:
    """Every topic named by the routes: exact sources, clean and DLQ topics."""
    names: set[str] = set()
    for route in config.routes:
        names.update(route.source_topics)
        names.update((route.clean_topic, route.dlq_topic))
    return sorted(names)


def create_topics(
    config: ServiceConfig,
    names: Iterable[str],
    *,
    partitions: int,
    replication_factor: int = -1,
    timeout_s: float = 30.0,
) -> dict[str, str]:
    """Create missing topics; return {topic: "created" | "exists"}. Raises RuntimeError on
    other errors (the broker unreachable, creation refused), secrets scrubbed."""
    admin = create_admin(config)
    try:
        return admin.create_topics(
            sorted(set(names)),
            partitions=partitions,
            replication_factor=replication_factor,
            timeout_s=timeout_s,
        )
    except KafkaClientError as exc:
        raise RuntimeError(scrub(f"cannot create topics: {exc}", config.kafka.secrets())) from None
