"""`create-topics` through the adapter's one admin path: created once, then exists."""

from __future__ import annotations

from pathlib import Path

from kafka_helpers import unique_group, unique_name
from service_helpers import route, write_config

from stream_validator.config.settings import load_config
from stream_validator.kafka.topics import create_topics, topics_of


def test_create_topics_creates_the_missing_ones_and_reports_the_rest(
    kafka_bootstrap: str, tmp_path: Path
) -> None:
    """First call: every route topic created; second call: every one exists."""
    names = [unique_name(p) for p in ("src", "clean", "dlq")]
    path = write_config(tmp_path, kafka_bootstrap, [route("ticks", *names)], group=unique_group())
    config = load_config(path, environ={})
    assert create_topics(config, topics_of(config), partitions=2) == dict.fromkeys(
        sorted(names), "created"
    )
    assert create_topics(config, topics_of(config), partitions=2) == dict.fromkeys(
        sorted(names), "exists"
    )
