"""PURE: consumer lag per partition out of decoded librdkafka statistics."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

from stream_validator.labels import is_config_label, is_count

_NOT_FETCHING = frozenset({"none", "stopping", "stopped"})


def consumer_lags(stats: Mapping[str, Any]) -> Iterator[tuple[str, int, int | None]]:
    """(topic, partition, lag) per partition; lag None for a partition no longer fetched.

    Reads ``topics.<t>.partitions.<p>.consumer_lag``; skips the internal partition -1,
    unknown lags (-1) and anything malformed. A partition this consumer no longer fetches
    (``desired`` false or ``fetch_state`` none/stopping/stopped) must lose its series:
    librdkafka keeps reporting a stale, frozen lag for revoked partitions.
    """
    topics = stats.get("topics")
    if not isinstance(topics, Mapping):
        return
    for topic, topic_stats in topics.items():
        partitions = topic_stats.get("partitions") if isinstance(topic_stats, Mapping) else None
        if not is_config_label(topic) or not isinstance(partitions, Mapping):
            continue
        for key, partition_stats in partitions.items():
            partition = _parse_partition(key)
            if partition is None or not isinstance(partition_stats, Mapping):
                continue
            lag = partition_stats.get("consumer_lag")
            if not _is_fetching(partition_stats):
                yield topic, partition, None
            elif is_count(lag):
                yield topic, partition, lag


def _parse_partition(key: object) -> int | None:
    # JSON object keys are strings; "-1" (librdkafka's internal partition) is rejected here.
    if isinstance(key, str) and key.isascii() and key.isdigit():
        return int(key)
    return None


def _is_fetching(partition_stats: Mapping[str, Any]) -> bool:
    # Missing keys count as fetching, so a trimmed stats document still reports lag.
    return (
        partition_stats.get("desired") is not False
        and partition_stats.get("fetch_state") not in _NOT_FETCHING
    )
