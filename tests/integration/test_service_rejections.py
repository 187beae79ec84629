"""Records the broker refuses for good, unreadable headers, and hooks that raise."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from confluent_kafka.admin import AdminClient, AlterConfigOpType, ConfigEntry, ConfigResource
from kafka_helpers import committed_offsets, produce, read_topic, unique_group
from raw_produce import produce_raw
from service_helpers import ThreadedService, encode, new_stream, wait_until

from stream_validator.service.plan.planner import BatchPlan
from stream_validator.service.report.hooks import ServiceHooks
from tests.support.ticks import tick

MODES = ["at-least-once", "exactly-once"]


def kafka_section(mode: str) -> dict[str, Any]:
    return {"transactional_id": unique_group("txn")} if mode == "exactly-once" else {}


def envelopes(bootstrap: str, dlq: str) -> list[dict[str, Any]]:
    return [
        json.loads(m.value or b"")
        for m in read_topic(bootstrap, dlq, isolation_level="read_committed")
    ]


@pytest.mark.parametrize("mode", MODES)
def test_record_refused_by_the_clean_topic_goes_to_the_dlq(
    kafka_bootstrap: str, tmp_path: Path, mode: str
) -> None:
    """A record too large for the clean topic becomes a delivery_rejected entry; the rest flows."""
    stream = new_stream(
        kafka_bootstrap,
        tmp_path,
        clean_config={"max.message.bytes": "2000"},
        kafka=kafka_section(mode),
    )
    values = [encode(tick(i, padding="p" * (5000 if i in (7, 23) else 0))) for i in range(40)]
    messages = [(f"k{i}".encode(), v, None) for i, v in enumerate(values)]
    produce(kafka_bootstrap, stream.source, messages)
    with ThreadedService.from_file(stream.config) as runner:
        wait_until(stream.all_consumed, 90, "all committed")
        assert runner.exit_code is None
        events = list(runner.service.state.recent_events)
    # The two conversions are counted as violations, as the verifier's own are.
    assert sum(e["violations_by_kind"].get("delivery_rejected", 0) for e in events) == 2
    assert sum(e["converted_to_dlq"] for e in events) == 2
    clean_keys = Counter(
        m.key for m in read_topic(kafka_bootstrap, stream.clean, isolation_level="read_committed")
    )
    assert set(clean_keys) == {f"k{i}".encode() for i in range(40) if i not in (7, 23)}
    if mode == "exactly-once":
        assert max(clean_keys.values()) == 1
    refused = envelopes(kafka_bootstrap, stream.dlq)
    assert sorted(e["source"]["offset"] for e in refused) == [7, 23]
    for envelope in refused:
        (violation,) = envelope["violations"]
        assert violation["kind"] == "delivery_rejected"
        assert stream.clean in violation["message"] and "MSG_SIZE_TOO_LARGE" in violation["message"]


def test_dlq_entry_refused_by_the_dlq_topic_halts(kafka_bootstrap: str, tmp_path: Path) -> None:
    """A DLQ entry the DLQ topic refuses halts (exit 3), commits nothing; once fixed, all lands."""
    stream = new_stream(kafka_bootstrap, tmp_path, dlq_config={"max.message.bytes": "200"})
    dlq = stream.dlq
    produce(
        kafka_bootstrap,
        stream.source,
        [(b"a", encode(tick(1)), None), (b"b", b"garbage", None), (b"c", encode(tick(2)), None)],
    )
    with ThreadedService.from_file(stream.config) as runner:
        wait_until(runner.finished, 60, "the service to halt")
        assert runner.exit_code == 3
        last_error = runner.service.state.last_error or ""
    assert dlq in last_error and "MSG_SIZE_TOO_LARGE" in last_error and "@1" in last_error
    assert committed_offsets(kafka_bootstrap, stream.group, stream.source) == {0: -1001}
    admin = AdminClient({"bootstrap.servers": kafka_bootstrap})
    entry = ConfigEntry("max.message.bytes", "1048588", incremental_operation=AlterConfigOpType.SET)
    resource = ConfigResource("topic", dlq, incremental_configs=[entry])
    for future in admin.incremental_alter_configs([resource]).values():
        future.result(30)
    with ThreadedService.from_file(stream.config):
        wait_until(stream.all_consumed, 60, "commit after fix")
    assert [e["source"]["offset"] for e in envelopes(kafka_bootstrap, dlq)] == [1]


@pytest.mark.parametrize("mode", MODES)
def test_non_utf8_header_names_and_values_never_stop_the_loop(
    kafka_bootstrap: str, tmp_path: Path, mode: str
) -> None:
    """Non-UTF-8 header names send the record to the DLQ; non-UTF-8 values flow byte for byte."""
    stream = new_stream(kafka_bootstrap, tmp_path, kafka=kafka_section(mode))
    produce_raw(
        kafka_bootstrap,
        stream.source,
        [
            (b"ok", encode(tick(1)), []),
            (b"bad-name", encode(tick(2)), [(b"\xff\xfe-name", b"v")]),
            (b"bad-value", encode(tick(3)), [(b"trace", b"\xff\xfe\x00")]),
            (b"both", b"garbage", [(b"\xc3\x28", b"\xff")]),
        ],
    )
    with ThreadedService.from_file(stream.config) as runner:
        wait_until(stream.all_consumed, 60, "all committed")
        assert runner.exit_code is None
    clean_msgs = read_topic(kafka_bootstrap, stream.clean, isolation_level="read_committed")
    assert sorted(m.key for m in clean_msgs) == [b"bad-value", b"ok"]  # type: ignore[type-var]
    (with_value,) = [m for m in clean_msgs if m.key == b"bad-value"]
    assert [(n, bytes(v)) for n, v in with_value.headers] == [("trace", b"\xff\xfe\x00")]  # type: ignore[arg-type]
    by_key = {e["key"]: e for e in envelopes(kafka_bootstrap, stream.dlq)}
    assert set(by_key) == {"bad-name", "both"}
    assert by_key["bad-name"]["violations"][0]["kind"] == "undecodable"
    assert by_key["bad-name"]["violations"][0]["field"] == "headers"


@pytest.mark.parametrize("mode", MODES)
def test_raising_hook_never_stops_the_loop_or_skips_the_commit(
    kafka_bootstrap: str, tmp_path: Path, mode: str
) -> None:
    """A hook raising after delivery: committed anyway, each record once, failures counted."""
    stream = new_stream(
        kafka_bootstrap, tmp_path, batch={"max_records": 50}, kafka=kafka_section(mode)
    )
    messages = [(f"k{i}".encode(), encode(tick(i)), None) for i in range(500)]
    produce(kafka_bootstrap, stream.source, messages)

    def on_batch(_plan: BatchPlan, _duration: float) -> None:
        raise ValueError("bad label")

    with ThreadedService.from_file(stream.config, ServiceHooks(on_batch=on_batch)) as runner:
        wait_until(stream.all_consumed, 60, "all committed")
        assert runner.exit_code is None
        assert runner.service.state.hook_errors >= 10
    keys = Counter(m.key for m in read_topic(kafka_bootstrap, stream.clean))
    assert len(keys) == 500 and max(keys.values()) == 1
