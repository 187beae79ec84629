"""Batch events in the log: INFO only for batches with something to report, DEBUG for every
batch, and a per-route summary every ``service.log_summary_interval_s`` on the loop's clock."""

from __future__ import annotations

import logging
from typing import Any

import pytest

from stream_validator.errors import ServiceExit
from stream_validator.service.breaker.machine import BreakerState, BreakerTransition
from stream_validator.service.delivery.accounting import RouteDelivery
from stream_validator.service.delivery.committer import BatchOutcome, BatchStatus
from stream_validator.service.report.hooks import ServiceHooks
from stream_validator.service.report.reporter import BatchReporter, notable
from stream_validator.service.report.state import ServiceState

from ..breaker.test_breaker_loop import BAD, harness, while_paused
from ..fakeservice import EVERY_POLL, Harness, service_config, tick
from ..plan.test_planner import processor, source

LOGGER = "stream_validator"


class Clock:
    """The loop's monotonic clock, moved by the test."""

    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def fresh(count: int) -> list[bytes]:
    """Valid ticks, each of its own symbol: no per-symbol state event (a sequence gap)."""
    return [tick.json(i, symbol=f"S{i}") for i in range(count)]


def batch_levels(caplog: pytest.LogCaptureFixture) -> list[str]:
    return [r.levelname for r in caplog.records if r.getMessage() == "batch"]


def summaries(caplog: pytest.LogCaptureFixture) -> list[Any]:
    return [r for r in caplog.records if r.getMessage() == "summary"]


def counts(records: int, clean: int, dlq: int, batches: int, flagged: int = 0) -> dict[str, int]:
    return {"records": records, "clean": clean, "dlq": dlq, "batches": batches, "flagged": flagged}


def test_a_clean_batch_is_logged_at_debug_only(caplog: pytest.LogCaptureFixture) -> None:
    """A batch of valid records only: no INFO batch event, one DEBUG one; /status keeps it."""
    h = Harness(service_config(commit_interval_s=EVERY_POLL))
    h.feed(fresh(5))
    with caplog.at_level(logging.DEBUG, logger=LOGGER):
        assert h.run() == ServiceExit.OK
    assert batch_levels(caplog) == ["DEBUG"]
    assert [e["clean_out"] for e in h.state.recent_events] == [5]


def test_a_batch_with_a_dlq_entry_is_logged_at_info(caplog: pytest.LogCaptureFixture) -> None:
    """One undecodable record among valid ones: that batch's event is at INFO."""
    h = Harness(service_config(commit_interval_s=EVERY_POLL))
    h.feed([*fresh(11), b"garbage"])
    with caplog.at_level(logging.DEBUG, logger=LOGGER):
        assert h.run() == ServiceExit.OK
    assert batch_levels(caplog) == ["DEBUG", "INFO"]  # batches of 10, then the DLQ entry's
    (event,) = [r for r in caplog.records if r.levelname == "INFO" and r.getMessage() == "batch"]
    assert event.dlq_out == 1  # type: ignore[attr-defined]


def test_at_info_the_log_holds_no_clean_batch(caplog: pytest.LogCaptureFixture) -> None:
    """At the default level 50 clean records give no batch line, /status all 5 events."""
    h = Harness(service_config(commit_interval_s=EVERY_POLL))
    h.feed(fresh(50))
    with caplog.at_level(logging.INFO, logger=LOGGER):
        assert h.run() == ServiceExit.OK
    assert batch_levels(caplog) == []
    assert (len(h.state.recent_events), h.state.batches, h.state.records) == (5, 5, 50)


def test_the_summary_comes_after_the_interval_with_the_delivered_counts(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """Once the clock passes the interval, the next loop turn logs what each route
    delivered in it; shutdown logs the final partial interval (nothing more here)."""
    clock = Clock()
    config = service_config(commit_interval_s=EVERY_POLL, log_summary_interval_s=30)
    h = Harness(config, monotonic=clock)
    h.feed([tick.json(i) for i in range(24)] + [b"garbage"])
    before: list[int] = []

    def idle() -> None:
        if clock.now == 0:
            before.append(len(summaries(caplog)))
            clock.now = 30.0
        else:
            h.service.stop()

    h.on_idle = idle
    with caplog.at_level(logging.INFO, logger=LOGGER):
        assert h.run() == ServiceExit.OK
    assert before == [0]
    first, final = summaries(caplog)
    assert (first.interval_s, first.final) == (30.0, False)
    assert first.routes == {"ticks": counts(records=25, clean=24, dlq=1, batches=3)}
    assert (final.interval_s, final.final) == (0.0, True)
    assert final.routes == {"ticks": counts(records=0, clean=0, dlq=0, batches=0)}


def test_shutdown_logs_the_final_partial_interval(caplog: pytest.LogCaptureFixture) -> None:
    """Stopped before the interval is up: one summary, marked final, with every count."""
    clock = Clock()
    h = Harness(service_config(commit_interval_s=EVERY_POLL), monotonic=clock)
    h.feed([tick.json(i) for i in range(12)])
    with caplog.at_level(logging.INFO, logger=LOGGER):
        assert h.run() == ServiceExit.OK
    (summary,) = summaries(caplog)
    assert summary.final
    assert summary.routes == {"ticks": counts(records=12, clean=12, dlq=0, batches=2)}


def test_an_interval_of_zero_logs_no_summary(caplog: pytest.LogCaptureFixture) -> None:
    """service.log_summary_interval_s: 0 turns the summary off, at shutdown too."""
    clock = Clock()
    config = service_config(log_summary_interval_s=0)
    h = Harness(config, monotonic=clock)
    h.feed([tick.json(i) for i in range(3)])

    def idle() -> None:
        clock.now += 1e6
        if clock.now > 2e6:
            h.service.stop()

    h.on_idle = idle
    with caplog.at_level(logging.INFO, logger=LOGGER):
        assert h.run() == ServiceExit.OK
    assert summaries(caplog) == []


def test_the_batch_whose_probe_closes_the_breaker_is_logged_at_info(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """pause: after the cool-down, the clean probe batch that closes the breaker is at INFO
    (the breaker change), the clean batches after it at DEBUG."""
    h, clock = harness("pause", probe_records=10)
    h.feed([BAD] * 10 + fresh(40))
    while_paused(h, clock)
    with caplog.at_level(logging.DEBUG, logger=LOGGER):
        assert h.run() == ServiceExit.OK
    logged = [(r.getMessage(), r.levelname, getattr(r, "after", None)) for r in caplog.records]
    closed = logged.index(("breaker", "INFO", "closed"))  # logged before its batch's event
    after = [level for message, level, _ in logged[closed:] if message == "batch"]
    assert after == ["INFO", "DEBUG", "DEBUG", "DEBUG"]  # the probe, then 30 clean records


def quiet() -> BatchOutcome:
    """A delivered route batch of two valid ticks."""
    plan = processor().plan(
        source([tick.json(1), tick.json(2)]), validated_at="2026-12-01T00:00:00Z"
    )
    return BatchOutcome(BatchStatus.DELIVERED, [RouteDelivery(plan, clean=2)])


def quiet_event() -> dict[str, Any]:
    (route,) = quiet().routes
    return route.plan.event(route.violation_counts, (2, 0, 0)) | {"converted_to_dlq": 0}


def test_a_batch_of_valid_records_only_is_not_notable() -> None:
    """Nothing to report: no DLQ entry, breach, drift, flag or state event."""
    assert not notable(quiet_event())


@pytest.mark.parametrize(
    "change",
    [
        {"dlq_out": 1},
        {"null_breach_fields": {"bid": 40.0}},
        {"unknown_fields": ["ask_volume"]},
        {"unknown_fields_left_out": 3},
        {"flagged_by_rule": {"wide_spread": 2}},
        {"symbol_state": {"events": {"sequence_gap": {"count": 1}}}},
        {"converted_to_dlq": 1},
        {"truncated_envelopes": 1},
    ],
    ids=[
        "dlq",
        "null-breach",
        "drift",
        "drift-left-out",
        "flagged",
        "state-event",
        "converted",
        "truncated",
    ],
)
def test_each_thing_to_report_makes_a_batch_notable(change: dict[str, object]) -> None:
    """A DLQ entry, a breach, drift, a flagged record or a state event is worth an INFO line."""
    assert notable(quiet_event() | change)


def test_a_breaker_transition_makes_the_routes_next_batch_info(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """A transition told through on_breaker marks the route's next batch (the one the loop
    reports after the breaker saw it) INFO, once."""
    reporter = BatchReporter(ServiceHooks(), ServiceState(), str)
    reporter.hooks.on_breaker(
        BreakerTransition("ticks", BreakerState.HALF_OPEN, BreakerState.CLOSED, "probe", 0.0)
    )
    with caplog.at_level(logging.DEBUG, logger=LOGGER):
        reporter.report(quiet(), 0.01)
        reporter.report(quiet(), 0.01)
    assert batch_levels(caplog) == ["INFO", "DEBUG"]
