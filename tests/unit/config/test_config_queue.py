"""The producer queue bound: a queue that cannot hold one record of max_message_bytes is
refused at load."""

from __future__ import annotations

from typing import Any

import pytest

from stream_validator.config.settings import config_from_mapping
from stream_validator.errors import ConfigError
from tests.support.ticks import TICK_YAML


def document(max_message_bytes: int | None = None, **kafka: Any) -> dict[str, Any]:
    service = {} if max_message_bytes is None else {"max_message_bytes": max_message_bytes}
    return {
        "kafka": kafka,
        "service": service,
        "routes": [
            {
                "name": "t",
                "source_topics": ["in"],
                "contract": str(TICK_YAML),
                "clean_topic": "out",
                "dlq_topic": "dlq",
            }
        ],
    }


def test_queue_smaller_than_max_message_bytes_is_refused() -> None:
    """queue.buffering.max.kbytes below service.max_message_bytes: a config error naming both."""
    with pytest.raises(ConfigError) as caught:
        config_from_mapping(document(producer={"queue.buffering.max.kbytes": "100"}))
    message = str(caught.value)
    assert "queue.buffering.max.kbytes=100" in message
    assert "service.max_message_bytes=1048576" in message
    assert "at least 1024" in message


def test_queue_bound_in_the_shared_settings_is_checked_too() -> None:
    """kafka.settings reach the producer as well, so a small queue there is refused."""
    with pytest.raises(ConfigError, match=r"queue\.buffering\.max\.kbytes=100 "):
        config_from_mapping(document(settings={"queue.buffering.max.kbytes": 100}))


def test_queue_that_holds_max_message_bytes_is_accepted() -> None:
    """A queue of exactly max_message_bytes (rounded up to a kilobyte) loads."""
    config = config_from_mapping(
        document(100 * 1024, producer={"queue.buffering.max.kbytes": "100"})
    )
    assert config.kafka.producer["queue.buffering.max.kbytes"] == "100"


@pytest.mark.parametrize("key", ["queue.buffering.max.kbytes", "queue.buffering.max.messages"])
def test_queue_bound_that_is_not_an_integer_is_refused(key: str) -> None:
    """A queue bound that is not a number is a config error naming the key."""
    with pytest.raises(ConfigError, match=rf"kafka\.producer\.{key}: expected an integer"):
        config_from_mapping(document(producer={key: "lots"}))


@pytest.mark.parametrize("messages", ["0", "1"])
def test_any_message_count_bound_is_accepted(messages: str) -> None:
    """queue.buffering.max.messages 0 (no limit) or 1 still admits one record: no error."""
    config = config_from_mapping(document(producer={"queue.buffering.max.messages": messages}))
    assert config.kafka.producer["queue.buffering.max.messages"] == messages
