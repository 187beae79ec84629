"""The one topic admin path: which topics a config names, which are missing, create them.

Used by ``create-topics``, ``check-config --connect`` and the simulator's ``--create-topic``,
on top of the adapter's
``ports.Admin`` (whose ``create_topics`` recognises "already exists"
by its error code, never by text).
"""

from __future__ import annotations

import time
from collections.abc import Iterable

from stream_validator.config.settings import ServiceConfig
from stream_validator.errors import KafkaClientError, TopicAdminError
from stream_validator.kafka.ports import Admin


def topics_of(config: ServiceConfig) -> list[str]:
    """Every topic named by the routes: exact sources, clean and DLQ topics."""
    names: set[str] = set()
    for route in config.routes:
        names.update(route.source_topics)
        names.update((route.clean_topic, route.dlq_topic))
    return sorted(names)


def missing_topics(
    admin: Admin, config: ServiceConfig, *, timeout_s: float, where: str = "the broker"
) -> list[str]:
    """The topics the routes name (``topics_of``) that the broker does not have, sorted.

    Raises ``TopicAdminError`` when the broker cannot be reached within ``timeout_s``.
    """
    try:
        existing = admin.topics(timeout_s)
    except KafkaClientError as exc:
        raise TopicAdminError(f"{where}: {exc}") from None
    return [name for name in topics_of(config) if name not in existing]


def create_topics(
    admin: Admin,
    names: Iterable[str],
    *,
    partitions: int,
    replication_factor: int = -1,
    timeout_s: float = 30.0,
    wait_until_usable: bool = False,
    where: str = "the broker",
) -> dict[str, str]:
    """Create the missing topics; return {topic: "created" | "exists"}, sorted.

    Raises ``TopicAdminError`` when the broker cannot be reached or a creation fails for
    another reason than "already exists" (a concurrent creator). ``replication_factor=-1``
    is the cluster's default, right for one node and for many. ``wait_until_usable`` waits
    until every topic shows in the metadata without error (its partitions have leaders).
    """
    wanted = sorted(set(names))
    try:
        outcome = admin.create_topics(
            wanted,
            partitions=partitions,
            replication_factor=replication_factor,
            timeout_s=timeout_s,
        )
        if wait_until_usable:
            _wait_until_usable(admin, wanted, timeout_s)
    except KafkaClientError as exc:
        raise TopicAdminError(f"{where}: {exc}") from None
    return dict(sorted(outcome.items()))


def _wait_until_usable(admin: Admin, names: list[str], timeout_s: float) -> None:
    deadline = time.monotonic() + timeout_s
    while True:
        existing = admin.topics(timeout_s)
        missing = [name for name in names if not existing.get(name)]
        if not missing:
            return
        if time.monotonic() >= deadline:
            raise TopicAdminError(
                f"topic(s) {', '.join(missing)} not usable (no leader) after {timeout_s:g} s"
            )
        time.sleep(0.1)
