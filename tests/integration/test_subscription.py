"""Pattern routes on the real broker: librdkafka subscribes exactly what routing accepts."""

from __future__ import annotations

import threading
from pathlib import Path

from kafka_helpers import create_topic, produce, read_topic, unique_group
from service_helpers import CONTRACTS, all_consumed, encode, wait_until, write_config

from stream_validator.config.settings import load_config
from stream_validator.service.loop import StreamService
from stream_validator.service.report.hooks import ServiceHooks
from tests.support.ticks import tick


def test_pattern_consumes_only_topics_it_matches_whole(
    kafka_bootstrap: str, tmp_path: Path
) -> None:
    """A pattern naming topic T is not assigned 'T-<suffix>' (once it was: '^T' prefix match)."""
    exact = create_topic(kafka_bootstrap, prefix="src")
    longer = create_topic(kafka_bootstrap, prefix=exact)  # "<exact>-<hex>": starts with exact
    clean = create_topic(kafka_bootstrap, prefix="clean")
    dlq = create_topic(kafka_bootstrap, prefix="dlq")
    for topic, first in ((exact, 0), (longer, 100)):
        produce(kafka_bootstrap, topic, [(None, encode(tick(first + i)), None) for i in range(5)])
    group = unique_group("pattern")
    route = {
        "name": "ticks",
        "source_pattern": exact,  # topic names here have no regex metacharacters
        "contract": str(CONTRACTS / "tick.yaml"),
        "clean_topic": clean,
        "dlq_topic": dlq,
    }
    config = load_config(write_config(tmp_path, kafka_bootstrap, [route], group=group), {})
    assigned: set[str] = set()
    hooks = ServiceHooks(
        on_rebalance=lambda event, parts: (
            assigned.update(t for t, _ in parts) if event == "assigned" else None
        )
    )
    service = StreamService(config, hooks=hooks)
    thread = threading.Thread(target=service.run, daemon=True)
    thread.start()
    try:
        wait_until(lambda: all_consumed(kafka_bootstrap, group, exact), 60, "source consumed")
    finally:
        service.stop()
        thread.join(30)
    assert assigned == {exact}
    assert sorted(m.value for m in read_topic(kafka_bootstrap, clean)) == sorted(  # type: ignore[type-var]
        encode(tick(i)) for i in range(5)
    )
