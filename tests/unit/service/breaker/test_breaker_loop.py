"""The DLQ circuit breaker in the loop, on the fake broker: alert, pause, probe, rebalance."""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any

import pytest

from stream_validator.errors import ServiceExit
from stream_validator.kafka.fake import FakeConsumer

from ..fakeservice import Harness, service_config, tick

SRC0 = ("src", 0)
SRC1 = ("src", 1)
BAD = b"garbage"


def breaker(action: str, **changes: object) -> dict[str, object]:
    """Trip when more than half of the last 10 records were quarantined; probe 10 records."""
    spec: dict[str, object] = {
        "action": action,
        "window_records": 10,
        "max_quarantined_share": 0.5,
        "max_consecutive": None,
        "cool_down_s": 30,
        "probe_records": 10,
    }
    return spec | changes


class Clock:
    """The breakers' monotonic clock, moved by the test."""

    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def harness(
    action: str, partitions: int = 1, *, transactional: bool = False, **changes: object
) -> tuple[Harness, Clock]:
    clock = Clock()
    config = service_config(
        commit_interval_s=1e-9,
        transactional=transactional,
        circuit_breaker=breaker(action, **changes),
    )
    return Harness(config, partitions=partitions, monotonic=clock), clock


def consumer(h: Harness) -> FakeConsumer:
    return h.clients.consumers[0]


def out_values(h: Harness) -> list[bytes | None]:
    """Every source value that reached clean or DLQ (a DLQ entry by its source offset)."""
    return [r.value for r in h.topic("clean")]


def while_paused(h: Harness, clock: Clock, step: Callable[[int], None] | None = None) -> list[Any]:
    """An on_idle that, each time the source is paused, notes what was consumed and ends the
    cool-down; it stops the service once idle and not paused (or after 10 pauses)."""
    seen: list[Any] = []

    def idle() -> None:
        c = consumer(h)
        if c.paused and len(seen) < 10:
            positions = c.position(c.assignment())
            seen.append((c.paused, c.assignment(), positions, dict(h.state.breakers["ticks"])))
            if step is not None:
                step(len(seen))
            clock.now += 30
        else:
            h.service.stop()

    h.on_idle = idle
    return seen


def gauge(h: Harness, name: str, **labels: str) -> float:
    return h.registry.get_sample_value(name, {"route": "ticks", **labels}) or 0.0


def test_alert_trips_with_an_event_and_metrics_and_records_keep_flowing(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """alert: the breaker opens (log event, state 1, one trip), nothing is paused, and
    every record is delivered."""
    h, _ = harness("alert")
    h.feed([BAD] * 20 + [tick.json(i) for i in range(30)])
    with caplog.at_level(logging.INFO, logger="stream_validator"):
        assert h.run() == ServiceExit.OK
    assert (len(h.topic("clean")), len(h.topic("dlq"))) == (30, 20)
    assert consumer(h).paused == []
    events = [r for r in caplog.records if r.getMessage() == "breaker"]
    assert [(e.before, e.after, e.cause) for e in events] == [("closed", "open", "share")]  # type: ignore[attr-defined]
    assert gauge(h, "stream_validator_breaker_state") == 1
    assert gauge(h, "stream_validator_breaker_trips_total", reason="share") == 1
    assert h.state.breakers["ticks"]["state"] == "open"


@pytest.mark.parametrize("transactional", [False, True], ids=["at-least-once", "exactly-once"])
def test_pause_stops_the_routes_partitions_staying_in_the_group_then_a_probe_resumes(
    transactional: bool,
) -> None:
    """pause: after the trip no record of the partition is consumed past the batches already
    in flight; the partition stays assigned; after the cool-down a passing probe closes the
    breaker and the backlog is delivered, each record once."""
    h, clock = harness("pause", transactional=transactional)
    h.feed([BAD] * 10 + [tick.json(i) for i in range(40)])
    seen = while_paused(h, clock)
    assert h.run() == ServiceExit.OK
    paused, assigned, positions, status = seen[0]
    assert (paused, assigned) == ([SRC0], [SRC0])
    assert (status["state"], status["paused_partitions"]) == ("open", 1)
    assert positions[SRC0] < 50  # the backlog waited
    assert len(seen) == 1  # the probe passed: never paused again
    assert sorted(out_values(h)) == sorted(tick.json(i) for i in range(40))
    assert len(h.topic("dlq")) == 10
    assert h.broker.committed("svc") == {SRC0: 50}
    assert gauge(h, "stream_validator_breaker_state") == 0
    assert gauge(h, "stream_validator_breaker_trips_total", reason="share") == 1
    assert h.state.breakers["ticks"]["state"] == "closed"


def test_a_failed_probe_pauses_again_and_counts_a_reopen() -> None:
    """Half-open resumes the partition; an all-invalid probe opens the breaker again (a
    reopen, not a trip) and pauses it; the next probe passes; nothing lost or duplicated."""
    h, clock = harness("pause")
    h.feed([BAD] * 20 + [tick.json(i) for i in range(40)])
    seen = while_paused(h, clock)
    assert h.run() == ServiceExit.OK
    assert [positions[SRC0] for _, _, positions, _ in seen] == [10, 20]
    assert gauge(h, "stream_validator_breaker_reopens_total") == 1
    assert gauge(h, "stream_validator_breaker_trips_total", reason="share") == 1
    assert sorted(out_values(h)) == sorted(tick.json(i) for i in range(40))
    assert len(h.topic("dlq")) == 20
    assert h.broker.committed("svc") == {SRC0: 60}


def test_records_fetched_before_the_pause_are_read_again_after_the_resume() -> None:
    """consume() still returns records of a just-paused partition (librdkafka's fetched
    messages): they are not processed but read again after the resume, once."""
    h, clock = harness("pause")
    h.broker.faults.fetched_past_pause = 5
    h.feed([BAD] * 10 + [tick.json(i) for i in range(40)])
    while_paused(h, clock)
    assert h.run() == ServiceExit.OK
    assert sorted(out_values(h)) == sorted(tick.json(i) for i in range(40))
    assert (len(h.topic("clean")), len(h.topic("dlq"))) == (40, 10)


def test_partitions_assigned_to_a_paused_route_are_paused_and_revoked_ones_forgotten() -> None:
    """A rebalance while open: a revoked partition leaves the paused set, one assigned
    again is paused before any of its records is processed."""
    h, clock = harness("pause", partitions=2)
    h.feed([BAD] * 10 + [tick.json(i) for i in range(20)], partition=0)
    h.feed([tick.json(i) for i in range(100, 120)], partition=1)

    def rebalance(pauses: int) -> None:
        c = consumer(h)
        if pauses == 1:
            c.revoke([SRC1])
            c.reassign([SRC1])
            clock.now -= 30  # stay open through the rebalance

    seen = while_paused(h, clock, rebalance)
    assert h.run() == ServiceExit.OK
    assert seen[0][0] == [SRC0, SRC1]
    assert seen[1][0] == [SRC0, SRC1]  # SRC1, assigned again, was paused again
    values = sorted(out_values(h))
    expected = [tick.json(i) for i in range(20)] + [tick.json(i) for i in range(100, 120)]
    assert values == sorted(expected)


def test_records_the_broker_refused_count_as_quarantined_in_delivery_order() -> None:
    """Three clean records refused for good become delivery_rejected DLQ entries (produced
    alone, out of order): the breaker sees them as three quarantined records in a row."""
    h, _ = harness("alert", window_records=1000, max_consecutive=3)
    h.feed([tick.json(i) for i in range(6)])
    refused = (b'"seq":1,', b'"seq":2,', b'"seq":3,')
    h.broker.faults.refuse = lambda r: (
        "INVALID_RECORD"
        if r.topic == "clean" and any(s in (r.value or b"") for s in refused)
        else None
    )
    assert h.run() == ServiceExit.OK
    assert len(h.topic("dlq")) == 3
    assert gauge(h, "stream_validator_breaker_trips_total", reason="consecutive") == 1


def test_a_partition_assigned_while_paused_is_paused_before_it_has_records() -> None:
    """A rebalance gives a paused route a partition with nothing to read yet and no pause
    flag in the client: the next loop turn pauses it, so records produced to it later wait
    for the resume."""
    h, clock = harness("pause", partitions=2)
    h.feed([BAD] * 10 + [tick.json(i) for i in range(10)], partition=0)
    idles: list[list[tuple[str, int]]] = []

    def idle() -> None:
        c = consumer(h)
        idles.append(c.paused)
        if len(idles) == 1:
            c.revoke([SRC1])
            c.resume([SRC1])  # as a partition this member never paused
            c.reassign([SRC1])
        elif len(idles) == 3:
            h.feed([tick.json(i) for i in range(100, 110)], partition=1)
            clock.now += 30  # cool-down over: the probe reads both partitions
        elif not c.paused:
            h.service.stop()

    h.on_idle = idle
    assert h.run() == ServiceExit.OK
    assert idles[:3] == [[SRC0, SRC1], [SRC0], [SRC0, SRC1]]
    expected = [tick.json(i) for i in range(10)] + [tick.json(i) for i in range(100, 110)]
    assert sorted(out_values(h)) == sorted(expected)


def test_a_partition_revoked_while_paused_and_assigned_back_after_the_resume_is_read() -> None:
    """The client keeps a revoked partition's pause flag (librdkafka, cooperative-sticky):
    assigned back after the breaker closed, it is resumed, and its records are read."""
    h, clock = harness("pause", partitions=2)
    h.feed([BAD] * 10 + [tick.json(i) for i in range(10)], partition=0)
    h.feed([tick.json(i) for i in range(100, 110)], partition=1)
    idles: list[list[tuple[str, int]]] = []

    def idle() -> None:
        c = consumer(h)
        idles.append(c.paused)
        if len(idles) == 1:
            c.revoke([SRC1])
        elif len(idles) == 2:
            clock.now += 30  # half-open: resumes SRC0, SRC1 is not assigned
            c.reassign([SRC1])
        elif not c.paused or len(idles) > 10:
            h.service.stop()

    h.on_idle = idle
    assert h.run() == ServiceExit.OK
    assert idles[:2] == [[SRC0, SRC1], [SRC0]]
    expected = [tick.json(i) for i in range(10)] + [tick.json(i) for i in range(100, 110)]
    assert sorted(out_values(h)) == sorted(expected)
