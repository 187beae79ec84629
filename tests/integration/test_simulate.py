"""``stream-validator simulate`` against the real broker: counts, headers, topics, pacing."""

from __future__ import annotations

from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from confluent_kafka.admin import AdminClient
from kafka_helpers import ReadMessage, create_topic, end_offsets, read_topic, unique_name

from stream_validator import DataSchemaContractVerifier, load_contract
from stream_validator.cli.simulate import main
from stream_validator.codec import decode_json
from stream_validator.errors import SimulateExit

pytestmark = [pytest.mark.integration, pytest.mark.timeout(240)]

CONTRACTS = Path(__file__).resolve().parents[2] / "config" / "contracts"
HEADER = "sv-sim-scenario"


def simulate(
    bootstrap: str, topic: str, capsys: pytest.CaptureFixture[str], *args: str
) -> tuple[int, dict[str, Any]]:
    """Run the command; return its exit code and the JSON summary it printed last."""
    code = main(["--bootstrap-servers", bootstrap, "--topic", topic, *args])
    lines = capsys.readouterr().out.strip().splitlines()
    return code, decode_json(lines[-1]) if lines else {}


def scenario_of(message: ReadMessage) -> str:
    values = [value for key, value in message.headers if key == HEADER]
    assert len(values) == 1 and isinstance(values[0], bytes)
    return values[0].decode()


def test_count_run_lands_every_message_with_its_scenario_header(
    kafka_bootstrap: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """2,000 messages with two count windows: all on the topic, headers matching the schedule."""
    topic = create_topic(kafka_bootstrap, prefix="sim")
    code, summary = simulate(
        kafka_bootstrap,
        topic,
        capsys,
        *("--count", "2000", "--rate", "0", "--seed", "3"),
        *("--scenario", "field_rename@n500+100", "--scenario", "tombstone@n1000+10"),
    )
    assert code == SimulateExit.OK
    messages = read_topic(kafka_bootstrap, topic)
    scenarios = [scenario_of(m) for m in messages]
    expected = {"clean": 1890, "field_rename": 100, "tombstone": 10}
    assert Counter(scenarios) == expected
    assert [i for i, s in enumerate(scenarios) if s == "field_rename"] == list(range(500, 600))
    assert summary["scenarios"] == expected
    assert (summary["produced"], summary["delivered"], summary["failed"]) == (2000, 2000, 0)
    assert summary["stopped_by"] == "count"


def test_read_back_records_fail_validation_exactly_where_drift_was_injected(
    kafka_bootstrap: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """The verifier quarantines the drifted messages, and only those."""
    topic = create_topic(kafka_bootstrap, prefix="sim")
    specs = ("garbage@n100+50", "string_prices@n300+50:0.5", "negative_price@everyn400+5")
    code, _ = simulate(
        kafka_bootstrap,
        topic,
        capsys,
        *("--count", "1500", "--rate", "0", "--seed", "8"),
        *(arg for spec in specs for arg in ("--scenario", spec)),
    )
    assert code == SimulateExit.OK
    messages = read_topic(kafka_bootstrap, topic)
    verifier = DataSchemaContractVerifier(load_contract(CONTRACTS / "tick.yaml"))
    report = verifier.validate_payloads([m.value for m in messages])
    drifted = [i for i, m in enumerate(messages) if scenario_of(m) != "clean"]
    assert [q.index for q in report.quarantined_records] == drifted
    assert not report.null_breach_fields


def test_create_topic_makes_a_partitioned_topic_keyed_by_symbol(
    kafka_bootstrap: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """--create-topic --partitions 3 creates the topic; each symbol stays on one partition."""
    topic = unique_name("sim-created")
    code, summary = simulate(
        kafka_bootstrap,
        topic,
        capsys,
        *("--create-topic", "--partitions", "3", "--entity", "orderbook_snapshot"),
        *("--count", "600", "--rate", "0", "--symbols", "12"),
    )
    assert code == SimulateExit.OK
    assert sorted(end_offsets(kafka_bootstrap, topic)) == [0, 1, 2]
    messages = read_topic(kafka_bootstrap, topic)
    assert len(messages) == summary["delivered"] == 600
    partitions_of: dict[bytes | None, set[int]] = {}
    for message in messages:
        partitions_of.setdefault(message.key, set()).add(message.partition)
    assert len(partitions_of) == 12
    assert all(len(parts) == 1 for parts in partitions_of.values())


def test_create_topic_leaves_an_existing_topic_alone(
    kafka_bootstrap: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """--create-topic on a topic that exists just produces into it."""
    topic = create_topic(kafka_bootstrap, partitions=2, prefix="sim")
    code, _ = simulate(
        kafka_bootstrap, topic, capsys, "--create-topic", "--count", "50", "--rate", "0"
    )
    assert code == SimulateExit.OK
    assert sum(end_offsets(kafka_bootstrap, topic).values()) == 50


def test_missing_topic_is_refused_without_create_topic(
    kafka_bootstrap: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """A missing topic is a setup error (exit 2) and is not created behind the user's back."""
    topic = unique_name("sim-missing")
    code = main(["--bootstrap-servers", kafka_bootstrap, "--topic", topic, "--count", "5"])
    assert code == SimulateExit.USAGE
    assert "pass --create-topic" in capsys.readouterr().err
    admin = AdminClient({"bootstrap.servers": kafka_bootstrap})
    assert topic not in admin.list_topics(timeout=10).topics


def test_rate_and_duration_pace_the_run(
    kafka_bootstrap: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """--rate 200 --duration 2 produces about 400 messages in about 2 s."""
    topic = create_topic(kafka_bootstrap, prefix="sim")
    code, summary = simulate(
        kafka_bootstrap,
        topic,
        capsys,
        *("--duration", "2", "--rate", "200", "--entity", "ohlcv_bar"),
    )
    assert code == SimulateExit.OK
    assert summary["stopped_by"] == "duration"
    assert 380 <= summary["produced"] <= 402
    assert 1.9 <= summary["elapsed_s"] < 4.0
    assert len(read_topic(kafka_bootstrap, topic)) == summary["produced"]


def test_order_feed_drift_is_quarantined_by_the_order_contract(
    kafka_bootstrap: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """--entity order: the order contract quarantines exactly the order-feed drift."""
    topic = create_topic(kafka_bootstrap, prefix="sim")
    specs = ("unknown_side@n100+50", "upper_case_side@n300+50:0.5", "empty_order_id@everyn400+5")
    code, summary = simulate(
        kafka_bootstrap,
        topic,
        capsys,
        *("--entity", "order", "--count", "1200", "--rate", "0", "--seed", "4"),
        *(arg for spec in specs for arg in ("--scenario", spec)),
    )
    assert code == SimulateExit.OK
    assert summary["entity"] == "order"
    messages = read_topic(kafka_bootstrap, topic)
    verifier = DataSchemaContractVerifier(load_contract(CONTRACTS / "order.yaml"))
    report = verifier.validate_payloads([m.value for m in messages])
    drifted = [i for i, m in enumerate(messages) if scenario_of(m) != "clean"]
    assert [q.index for q in report.quarantined_records] == drifted
    produced = summary["scenarios"]
    assert report.violation_counts == {
        ("side", "not_allowed"): produced["unknown_side"] + produced["upper_case_side"],
        ("order_id", "too_short"): produced["empty_order_id"],
    }
