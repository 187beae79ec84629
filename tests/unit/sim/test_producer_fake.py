"""The simulator's producer on the in-memory fake broker: what lands, what the tally says,
stops, and the topic checks on the Admin port."""

from __future__ import annotations

import pytest

from stream_validator.errors import SimulateError
from stream_validator.kafka.fake import FakeBroker, FakeProducer
from stream_validator.kafka.ports import Producible
from stream_validator.sim import Schedule, Simulator
from stream_validator.sim.producer import (
    Limits,
    RunResult,
    StopFlag,
    check_topic,
    ensure_topic,
    produce_simulated,
)

TOPIC = "md.ticks"


def run(
    producer: FakeProducer, count: int, *, stop: StopFlag | None = None, flush_timeout: float = 1.0
) -> RunResult:
    sim = Simulator("tick", seed=7, schedule=Schedule.parse(("garbage@n10+5",)))
    limits = Limits(count=count, rate=0.0)
    return produce_simulated(
        producer, TOPIC, sim, limits, stop or StopFlag(), flush_timeout=flush_timeout
    )


def broker() -> FakeBroker:
    fake = FakeBroker()
    fake.create_topic(TOPIC, 3)
    return fake


def test_every_message_lands_and_the_tally_counts_it() -> None:
    """N messages are produced, delivered and counted per scenario, keyed, with the header."""
    fake = broker()
    result = run(fake.producer(), 40)
    landed = fake.records(TOPIC)
    assert len(landed) == 40
    assert (result.tally.delivered, result.tally.failed, result.tally.errors) == (40, 0, [])
    assert result.produced == {"clean": 35, "garbage": 5}
    assert all(r.key for r in landed)
    scenarios = [dict(r.headers)["sv-sim-scenario"] for r in landed]
    assert scenarios.count(b"garbage") == 5


def test_failed_deliveries_are_counted_with_the_reason() -> None:
    """Deliveries the broker fails count as failed, their reason kept once."""
    fake = broker()
    fake.faults.fail_delivery(topic=TOPIC, times=3)
    result = run(fake.producer(), 20)
    assert (result.tally.delivered, result.tally.failed) == (17, 3)
    assert result.tally.errors == ["_MSG_TIMED_OUT: scripted delivery failure"]
    assert len(fake.records(TOPIC)) == 17


def test_records_refused_by_the_client_count_as_failed() -> None:
    """A record the client refuses at produce() (too large) is a failure, not a crash."""
    fake = broker()
    result = run(fake.producer(message_max_bytes=10), 3)
    assert (result.tally.delivered, result.tally.failed) == (0, 3)
    assert result.tally.errors[0].startswith("MSG_SIZE_TOO_LARGE")


def test_stop_request_ends_the_run_and_what_was_sent_is_delivered() -> None:
    """A stop request ends producing; the produced messages are still flushed and counted."""
    fake = broker()
    stop = StopFlag()

    def request_stop(number: int, _record: Producible) -> None:
        if number == 12:
            stop.request()

    fake.faults.on_produce = request_stop
    result = run(fake.producer(), 1_000, stop=stop)
    assert result.stopped_by == "signal"
    assert sum(result.produced.values()) == result.tally.delivered == 12
    assert len(fake.records(TOPIC)) == 12


def test_unacknowledged_after_the_flush_count_as_failed() -> None:
    """Messages the broker never acknowledges are failures once the bounded flush ends."""
    fake = broker()
    fake.faults.hold_topics.add(TOPIC)
    result = run(fake.producer(), 4, flush_timeout=0.0)
    assert (result.tally.delivered, result.tally.failed) == (0, 4)
    assert "4 message(s) still undelivered" in result.tally.errors[0]


def test_check_topic_gives_the_partition_count_or_says_what_to_do() -> None:
    """An existing topic's partitions; a missing one is refused with the remedy."""
    fake = broker()
    assert check_topic(fake.admin(), TOPIC, 1.0, where="fake:9092") == 3
    with pytest.raises(SimulateError, match="'other' is not available on fake:9092"):
        check_topic(fake.admin(), "other", 1.0, where="fake:9092")


def test_ensure_topic_creates_a_missing_topic_only() -> None:
    """--create-topic creates the topic with its partitions; an existing one is left alone."""
    fake = broker()
    assert ensure_topic(fake.admin(), "new", 4, 1.0, where="fake:9092")
    assert len(fake.logs["new"]) == 4
    assert not ensure_topic(fake.admin(), TOPIC, 1, 1.0, where="fake:9092")
    assert len(fake.logs[TOPIC]) == 3
