"""Creating the topics a service config needs (``stream-validator create-topics``)."""

from __future__ import annotations

from collections.abc import Iterable

from confluent_kafka import KafkaException
from confluent_kafka.admin import AdminClient
from confluent_kafka.cimpl import NewTopic

from stream_validator.config.settings import ServiceConfig, scrub


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
    """Create missing topics; return {topic: "created" | "exists"}. Raises on other errors."""
    settings: dict[str, str | int | float | bool] = {
        "bootstrap.servers": config.kafka.bootstrap_servers,
        **config.kafka.settings,
    }
    admin = AdminClient(settings)
    wanted = sorted(set(names))
    try:
        existing = set(admin.list_topics(timeout=timeout_s).topics)
    except KafkaException as exc:
        raise RuntimeError(scrub(f"broker not reachable: {exc}", config.kafka.secrets())) from None
    outcome = {name: "exists" for name in wanted if name in existing}
    new = [
        NewTopic(n, num_partitions=partitions, replication_factor=replication_factor)
        for n in wanted
        if n not in existing
    ]
    if new:
        for name, future in admin.create_topics(new, operation_timeout=timeout_s).items():
            try:
                future.result(timeout_s)
                outcome[name] = "created"
            except KafkaException as exc:
                if "TOPIC_ALREADY_EXISTS" not in str(exc):
                    raise RuntimeError(f"cannot create topic {name}: {exc}") from None
                outcome[name] = "exists"
    return outcome
