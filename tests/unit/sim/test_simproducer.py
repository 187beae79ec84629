"""The simulator's produce loop against a scripted producer and a fake clock: limits, pacing,
faults. (tests/unit/sim/test_producer_fake.py runs it on the in-memory fake broker.)"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from stream_validator.errors import KafkaErrorInfo
from stream_validator.kafka.ports import DeliveryCallback, DeliveryReport, Producible
from stream_validator.sim import Schedule, Simulator
from stream_validator.sim.producer import (
    DeliveryTally,
    Limits,
    RunResult,
    StopFlag,
    produce_simulated,
    seconds_until_due,
)


class FakeClock:
    """Time moves only when the fake producer waits."""

    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


class ScriptedProducer:
    """Queues messages and delivers them on poll/flush, moving the clock while it waits; the
    test picks what goes wrong."""

    def __init__(self, clock: FakeClock, *, fail: bool = False, stuck: bool = False) -> None:
        self.clock = clock
        self.fail = fail
        self.stuck = stuck
        self.queue: list[tuple[str, DeliveryCallback]] = []
        self.produced: list[tuple[str, bytes | None, bytes, list[tuple[str, Any]]]] = []
        self.waits: list[float] = []
        self.full_for = 0
        self.on_produce: Callable[[int], None] = lambda _count: None

    def produce(self, record: Producible, on_delivery: DeliveryCallback) -> None:
        if self.full_for:
            self.full_for -= 1
            raise BufferError("queue full")
        self.produced.append((record.topic, record.value, record.key, record.headers))
        self.queue.append((record.topic, on_delivery))
        self.on_produce(len(self.produced))

    def poll(self, timeout_s: float) -> int:
        self.waits.append(timeout_s)
        self.clock.now += timeout_s
        return self._deliver()

    def flush(self, timeout_s: float) -> int:
        self.clock.now += timeout_s if self.stuck else 0.0
        self._deliver()
        return len(self.queue) + self.full_for  # a queue that says full is not empty

    def _deliver(self) -> int:
        if self.stuck:
            return 0
        delivered, self.queue = self.queue, []
        error = KafkaErrorInfo("_MSG_TIMED_OUT", "Local: Message timed out") if self.fail else None
        for topic, callback in delivered:
            callback(DeliveryReport(topic, error))
        return len(delivered)


def run(
    producer: ScriptedProducer,
    limits: Limits,
    *,
    specs: tuple[str, ...] = (),
    stop: StopFlag | None = None,
    flush_timeout: float = 5.0,
) -> RunResult:
    sim = Simulator("tick", seed=1, schedule=Schedule.parse(specs))
    return produce_simulated(
        producer,  # type: ignore[arg-type]
        "topic",
        sim,
        limits,
        stop or StopFlag(),
        flush_timeout=flush_timeout,
        clock=producer.clock,
    )


def test_count_limit_produces_exactly_that_many() -> None:
    """--count N produces N messages, all delivered, counted per scenario."""
    producer = ScriptedProducer(FakeClock())
    result = run(producer, Limits(count=500), specs=("garbage@n100+50",))
    assert len(producer.produced) == 500
    assert result.produced == {"clean": 450, "garbage": 50}
    assert (result.tally.delivered, result.tally.failed) == (500, 0)
    assert result.stopped_by == "count"


def test_messages_go_to_the_topic_with_key_and_scenario_header() -> None:
    """Each message is produced with the symbol key and the sv-sim-scenario header."""
    producer = ScriptedProducer(FakeClock())
    run(producer, Limits(count=3))
    for topic, _value, key, headers in producer.produced:
        assert topic == "topic" and key
        assert headers == [("sv-sim-scenario", b"clean")]


def test_rate_paces_messages_over_the_duration() -> None:
    """At 50 msgs/s for 2 s, 100 messages go out, each no earlier than due."""
    producer = ScriptedProducer(FakeClock())
    result = run(producer, Limits(duration=2.0, rate=50.0))
    assert result.produced["clean"] == 100
    assert result.stopped_by == "duration"


def test_pacing_waits_in_poll_without_spinning() -> None:
    """Waits are polls of 1 ms to 0.1 s (librdkafka counts whole ms), and few of them."""
    producer = ScriptedProducer(FakeClock())
    run(producer, Limits(duration=10.0, rate=2.0))
    waits = [w for w in producer.waits if w > 0]
    assert waits and min(waits) >= 0.001 and max(waits) <= 0.1
    assert len(waits) <= 10.0 / 0.1 + 20


def test_high_rates_send_bursts_instead_of_sub_millisecond_waits() -> None:
    """At 20,000 msgs/s no wait is shorter than 1 ms, and the rate still holds."""
    producer = ScriptedProducer(FakeClock())
    result = run(producer, Limits(duration=0.5, rate=20_000.0))
    assert min(w for w in producer.waits if w > 0) >= 0.001
    assert 9_900 <= sum(result.produced.values()) <= 10_020


def test_whichever_limit_comes_first_stops_the_run() -> None:
    """With both --count and --duration, the earlier one ends the run."""
    producer = ScriptedProducer(FakeClock())
    result = run(producer, Limits(count=1000, duration=1.0, rate=100.0))
    assert result.stopped_by == "duration"
    assert sum(result.produced.values()) == 100


def test_stop_request_ends_the_run_and_still_flushes() -> None:
    """A signal stops producing; what was produced is still delivered."""
    producer = ScriptedProducer(FakeClock())
    stop = StopFlag()
    producer.on_produce = lambda n: stop.request() if n == 42 else None
    result = run(producer, Limits(count=1000), stop=stop)
    assert result.stopped_by == "signal"
    assert sum(result.produced.values()) == result.tally.delivered == 42


def test_failed_deliveries_are_counted_with_the_reason() -> None:
    """Delivery errors count as failed and their text is kept once."""
    result = run(ScriptedProducer(FakeClock(), fail=True), Limits(count=20))
    assert (result.tally.delivered, result.tally.failed) == (0, 20)
    assert result.tally.errors == ["_MSG_TIMED_OUT: Local: Message timed out"]


def test_full_queue_is_waited_out() -> None:
    """BufferError from a full local queue is retried after serving deliveries."""
    producer = ScriptedProducer(FakeClock())
    producer.full_for = 3
    result = run(producer, Limits(count=10))
    assert result.tally.delivered == 10


def test_undelivered_after_the_flush_timeout_count_as_failed() -> None:
    """Messages still queued when the bounded flush ends are failures, not silence."""
    result = run(ScriptedProducer(FakeClock(), stuck=True), Limits(count=7), flush_timeout=2.0)
    assert result.tally.failed == 7
    assert "7 message(s) still undelivered" in result.tally.errors[0]


def test_second_stop_request_abandons_the_flush() -> None:
    """A second signal during a stuck flush ends it at once."""
    producer = ScriptedProducer(FakeClock(), stuck=True)
    stop = StopFlag()
    producer.on_produce = lambda n: (stop.request(), stop.request()) if n == 5 else None
    start = producer.clock.now
    result = run(producer, Limits(count=100), stop=stop, flush_timeout=600.0)
    assert producer.clock.now - start < 1.0
    assert (result.stopped_by, result.tally.failed) == ("signal", 5)


def test_fatal_error_names_itself_as_the_stop_reason() -> None:
    """An abort records its reason instead of 'signal'."""
    producer = ScriptedProducer(FakeClock())
    stop = StopFlag()
    producer.on_produce = lambda n: stop.abort("fatal error: fenced") if n == 5 else None
    assert run(producer, Limits(count=100), stop=stop).stopped_by == "fatal error: fenced"


@pytest.mark.parametrize(
    ("sent", "elapsed", "rate", "wait"),
    [(0, 0.0, 10.0, 0.0), (5, 0.2, 10.0, 0.3), (5, 0.7, 10.0, -0.2), (9, 0.0, 0.0, 0.0)],
)
def test_seconds_until_due(sent: int, elapsed: float, rate: float, wait: float) -> None:
    """Message n is due at n / rate seconds; rate 0 means always due."""
    assert seconds_until_due(sent, elapsed, rate) == pytest.approx(wait)


def test_tally_keeps_only_a_few_distinct_errors() -> None:
    """Repeated errors are kept once and the list stays short."""
    tally = DeliveryTally()
    for i in range(100):
        tally.fail(f"error {i % 10}")
    assert tally.failed == 100
    assert len(tally.errors) == 5
