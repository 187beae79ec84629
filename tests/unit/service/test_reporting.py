"""The batch report runs between delivery and commit: it counts failures, never raises."""

from __future__ import annotations

import logging

import pytest

from stream_validator.service.delivery import Deliveries
from stream_validator.service.pipeline import BatchPlan
from stream_validator.service.reporting import BatchReporter
from stream_validator.service.state import ServiceHooks, ServiceState
from tests.support.ticks import tick

from .test_pipeline import processor, source


def plan() -> BatchPlan:
    return processor().plan(source([tick.json(1), b"garbage"]), validated_at="2026-12-01T00:00:00Z")


def test_raising_hook_is_counted_and_logged_once(caplog: pytest.LogCaptureFixture) -> None:
    """A hook raising on every batch: each failure counted, the traceback logged once."""

    def on_batch(_plan: BatchPlan, _duration: float) -> None:
        raise ValueError("route name not a valid label")

    state = ServiceState()
    reporter = BatchReporter(ServiceHooks(on_batch=on_batch), state, str)
    with caplog.at_level(logging.ERROR, logger="stream_validator.service"):
        reporter.report([plan()], Deliveries(), 0.01)
        reporter.report([plan()], Deliveries(), 0.01)
    assert state.hook_errors == 2
    assert [r.exc_info is not None for r in caplog.records] == [True]
    assert len(state.recent_events) == 2  # the report itself went on


def test_event_counts_what_was_delivered() -> None:
    """clean_out and dlq_out in the batch event come from acknowledgements, not the plan."""
    state = ServiceState()
    deliveries = Deliveries()
    deliveries.delivered = {("ticks", "clean"): 1}
    BatchReporter(ServiceHooks(), state, str).report([plan()], deliveries, 0.01)
    (event,) = state.recent_events
    assert (event["clean_out"], event["dlq_out"]) == (1, 0)
