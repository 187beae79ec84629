"""The batch report runs after delivery: it counts failures, never raises."""

from __future__ import annotations

import logging
from collections import Counter

import pytest

from stream_validator.service.delivery.accounting import RouteDelivery
from stream_validator.service.delivery.committer import BatchOutcome, BatchStatus
from stream_validator.service.report.hooks import ServiceHooks
from stream_validator.service.report.reporter import BatchReporter
from stream_validator.service.report.state import ServiceState
from tests.support.ticks import tick

from ..plan.test_planner import processor, source


def delivered(clean: int = 1, dlq: int = 1) -> BatchOutcome:
    plan = processor().plan(source([tick.json(1), b"garbage"]), validated_at="2026-12-01T00:00:00Z")
    return BatchOutcome(BatchStatus.DELIVERED, [RouteDelivery(plan, clean=clean, dlq=dlq)])


def test_raising_hook_is_counted_and_logged_once(caplog: pytest.LogCaptureFixture) -> None:
    """A hook raising on every batch: each failure counted, the traceback logged once."""

    def on_batch(_delivered: RouteDelivery, _duration: float) -> None:
        raise ValueError("route name not a valid label")

    state = ServiceState()
    reporter = BatchReporter(ServiceHooks(on_batch=on_batch), state, str)
    with caplog.at_level(logging.ERROR, logger="stream_validator.service"):
        reporter.report(delivered(), 0.01)
        reporter.report(delivered(), 0.01)
    assert state.hook_errors == 2
    assert [r.exc_info is not None for r in caplog.records] == [True]
    assert len(state.recent_events) == 2  # the report itself went on


def test_event_and_status_count_what_was_delivered() -> None:
    """clean_out/dlq_out and the /status counters come from the outcome, not the plan."""
    state = ServiceState()
    BatchReporter(ServiceHooks(), state, str).report(delivered(clean=0, dlq=2), 0.01)
    (event,) = state.recent_events
    assert (event["clean_out"], event["dlq_out"]) == (0, 2)
    assert (state.clean, state.dlq, state.records, state.batches) == (0, 2, 2, 1)


def test_on_batch_gets_the_delivery_not_the_plan() -> None:
    """The metrics hook sees delivered counts (what Prometheus counts)."""
    seen: list[tuple[int, int]] = []
    hooks = ServiceHooks(on_batch=lambda d, _s: seen.append((d.clean, d.dlq)))
    BatchReporter(hooks, ServiceState(), str).report(delivered(clean=0, dlq=2), 0.01)
    assert seen == [(0, 2)]


def test_event_counts_the_conversions_and_truncations_delivered() -> None:
    """A clean output delivered to the DLQ as ``oversized``: its violation is in the event
    beside the plan's, and the truncated envelopes are those delivered."""
    outcome = delivered(clean=0, dlq=2)
    (route,) = outcome.routes
    route.truncated, route.replaced = 1, 1
    route.converted = Counter({(None, "oversized"): 1})
    state = ServiceState()
    BatchReporter(ServiceHooks(), state, str).report(outcome, 0.01)
    (event,) = state.recent_events
    assert event["truncated_envelopes"] == 1 and event["converted_to_dlq"] == 1
    assert event["violations_by_kind"] == {"undecodable": 1, "oversized": 1}
    assert route.violation_counts == Counter({(None, "undecodable"): 1, (None, "oversized"): 1})
