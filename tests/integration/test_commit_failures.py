"""The consumer adapter on the real broker: an asynchronous commit that fails is reported
by librdkafka's commit callback (served inside consume()), so the at-least-once committer
sends its offsets again without a periodic synchronous commit stalling the loop."""

from __future__ import annotations

import time
from pathlib import Path

import pytest
from confluent_kafka import TopicPartition
from kafka_helpers import create_topic, produce, unique_group
from service_helpers import CONTRACTS, write_config

from stream_validator.config.settings import load_config
from stream_validator.kafka.clients import create_consumer

pytestmark = [pytest.mark.integration, pytest.mark.timeout(120)]


def test_an_asynchronous_commit_failure_is_reported_by_the_consumer(
    kafka_bootstrap: str, tmp_path: Path
) -> None:
    source = create_topic(kafka_bootstrap, prefix="src")
    produce(kafka_bootstrap, source, [(None, b"{}", None)] * 3)
    route = {
        "name": "ticks",
        "source_topics": [source],
        "contract": str(CONTRACTS / "tick.yaml"),
        "clean_topic": "unused-clean",
        "dlq_topic": "unused-dlq",
    }
    config = load_config(write_config(tmp_path, kafka_bootstrap, [route], group=unique_group()), {})
    consumer = create_consumer(config)
    try:
        consumer.assign({(source, 0): 0})
        consumer.commit({(source, 0): 2}, asynchronous=True)  # succeeds
        # Metadata past the broker's offset.metadata.max.bytes (4,096): the broker refuses
        # it (OFFSET_METADATA_TOO_LARGE); the adapter's commit sends no metadata, so the
        # client underneath is asked directly.
        big = TopicPartition(source, 0, 3, "m" * 10_000)
        consumer._consumer.commit(offsets=[big], asynchronous=True)
        failed: dict[tuple[str, int], int] = {}
        deadline = time.monotonic() + 30
        while not failed and time.monotonic() < deadline:
            consumer.consume(10, 0.2)  # serves the commit callback
            failed = consumer.commit_failures()
        assert failed == {(source, 0): 3}
        assert consumer.commit_failures() == {}  # taken once
        assert consumer.committed([(source, 0)], 10) == {(source, 0): 2}
    finally:
        consumer.close()
