"""The one topic admin path against the real broker: create-topics, concurrent creators."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest
from kafka_helpers import unique_name
from service_helpers import route, write_config

from stream_validator.cli.main import main
from stream_validator.errors import TopicAdminError
from stream_validator.kafka.clients import admin_from_settings
from stream_validator.kafka.topics import create_topics

pytestmark = [pytest.mark.integration, pytest.mark.timeout(120)]


def test_create_topics_command_creates_the_missing_then_reports_they_exist(
    kafka_bootstrap: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """create-topics makes every topic a config names, and a second run finds them all."""
    source, clean, dlq = (unique_name(p) for p in ("src", "clean", "dlq"))
    config = write_config(
        tmp_path, kafka_bootstrap, [route("r", source, clean, dlq)], group=unique_name("g")
    )
    assert main(["create-topics", "--config", str(config), "--partitions", "2"]) == 0
    first = capsys.readouterr().out.split()
    assert first == ["created", clean, "created", dlq, "created", source]
    existing = admin_from_settings({"bootstrap.servers": kafka_bootstrap}).topics(10)
    assert {name: existing.get(name) for name in first[1::2]} == {clean: 2, dlq: 2, source: 2}
    assert main(["create-topics", "--config", str(config)]) == 0
    assert capsys.readouterr().out.split() == ["exists", clean, "exists", dlq, "exists", source]


def test_concurrent_creators_both_succeed(kafka_bootstrap: str) -> None:
    """Two clients creating the same topic at once: one creates, the other sees it exists."""
    name = unique_name("race")
    outcomes: list[str] = []
    errors: list[BaseException] = []

    def create() -> None:
        try:
            admin = admin_from_settings({"bootstrap.servers": kafka_bootstrap})
            outcome = create_topics(admin, [name], partitions=1, timeout_s=20)
            outcomes.append(outcome[name])
        except BaseException as exc:  # collected: the assertion below names it
            errors.append(exc)

    threads = [threading.Thread(target=create) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(30)
    assert not errors
    assert outcomes.count("created") >= 1 and len(outcomes) == 4
    assert set(outcomes) <= {"created", "exists"}


def test_unreachable_broker_is_a_clear_error() -> None:
    """No broker: TopicAdminError naming the address, not a librdkafka traceback."""
    admin = admin_from_settings({"bootstrap.servers": "127.0.0.1:1", "log_level": 0})
    with pytest.raises(TopicAdminError, match=r"^Kafka at 127\.0\.0\.1:1: list_topics: "):
        create_topics(admin, ["t"], partitions=1, timeout_s=1.0, where="Kafka at 127.0.0.1:1")
