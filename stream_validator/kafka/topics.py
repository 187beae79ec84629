"""The one topic admin path: which topics exist (and how many partitions), create the missing.

Used by ``create-topics``, the service's start-up check, the simulator's ``--create-topic``
and the replay runner. "Already exists" is recognised by its error code, never by text.
"""

from __future__ import annotations

import time
from collections.abc import Iterable, Mapping
from typing import Any, Protocol

from confluent_kafka import KafkaError, KafkaException
from confluent_kafka.admin import AdminClient
from confluent_kafka.cimpl import NewTopic

from stream_validator.config.settings import ServiceConfig
from stream_validator.errors import TopicAdminError


class _MetadataClient(Protocol):
    def list_topics(self, topic: str | None = ..., timeout: float = ...) -> Any: ...


def topics_of(config: ServiceConfig) -> list[str]:
    """Every topic named by the routes: exact sources, clean and DLQ topics."""
    names: set[str] = set()
    for route in config.routes:
        names.update(route.source_topics)
        names.update((route.clean_topic, route.dlq_topic))
    return sorted(names)


def partition_counts(
    client: _MetadataClient, topics: Iterable[str], timeout_s: float
) -> dict[str, int | None]:
    """{topic: partition count, or None when it does not exist}; one metadata request.

    Raises ``KafkaException`` when the broker cannot be reached within ``timeout_s``.
    """
    metadata = client.list_topics(timeout=timeout_s).topics
    counts: dict[str, int | None] = {}
    for name in sorted(set(topics)):
        meta = metadata.get(name)
        counts[name] = None if meta is None or meta.error is not None else len(meta.partitions)
    return counts


def missing_topics(client: _MetadataClient, topics: Iterable[str], timeout_s: float) -> list[str]:
    """The topics that do not exist; raises KafkaException when the broker is unreachable."""
    return [
        name for name, count in partition_counts(client, topics, timeout_s).items() if not count
    ]


def create_topics(
    settings: Mapping[str, Any],
    names: Iterable[str],
    *,
    partitions: int,
    replication_factor: int = -1,
    timeout_s: float = 30.0,
    wait_for_leaders: bool = False,
) -> dict[str, str]:
    """Create the missing topics; return {topic: "created" | "exists"}.

    ``settings`` are librdkafka client settings (bootstrap servers, security). Raises
    ``TopicAdminError`` when the broker cannot be reached or a creation fails for another
    reason than "already exists" (a concurrent creator). ``replication_factor=-1`` is the
    cluster's default, right for one node and for many.
    """
    admin = AdminClient(dict(settings))
    wanted = sorted(set(names))
    bootstrap = settings.get("bootstrap.servers", "?")
    try:
        counts = partition_counts(admin, wanted, timeout_s)
    except KafkaException as exc:
        raise TopicAdminError(
            f"cannot reach Kafka at {bootstrap} within {timeout_s:g} s: {_describe(exc)}"
        ) from None
    outcome = {name: "exists" for name, count in counts.items() if count}
    new = [
        NewTopic(name, num_partitions=partitions, replication_factor=replication_factor)
        for name, count in counts.items()
        if not count
    ]
    if new:
        for name, future in admin.create_topics(new, operation_timeout=timeout_s).items():
            try:
                future.result(timeout_s)
                outcome[name] = "created"
            except KafkaException as exc:
                error = exc.args[0] if exc.args else None
                if not (
                    isinstance(error, KafkaError)
                    and error.code() == KafkaError.TOPIC_ALREADY_EXISTS
                ):
                    raise TopicAdminError(
                        f"cannot create topic {name!r}: {_describe(exc)}"
                    ) from None
                outcome[name] = "exists"
    if wait_for_leaders:
        for name in wanted:
            _wait_for_leaders(admin, name, timeout_s)
    return dict(sorted(outcome.items()))


def _wait_for_leaders(admin: AdminClient, topic: str, timeout_s: float) -> None:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        meta = admin.list_topics(topic=topic, timeout=timeout_s).topics.get(topic)
        leaders = [p.leader for p in meta.partitions.values()] if meta is not None else []
        if meta is not None and meta.error is None and leaders and min(leaders) >= 0:
            return
        time.sleep(0.1)
    raise TopicAdminError(
        f"topic {topic!r} has no leader for every partition after {timeout_s:g} s"
    )


def _describe(exc: BaseException) -> str:
    """The KafkaError's text when there is one (never the Python repr)."""
    error = exc.args[0] if exc.args else None
    return error.str() if isinstance(error, KafkaError) else str(exc)
