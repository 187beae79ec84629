"""Replacements: a clean output that cannot be delivered becomes a DLQ entry, its envelope
built where the plan builds its own."""

from __future__ import annotations

import json
from datetime import UTC, datetime

import stream_validator
from stream_validator.service.delivery.rejections import Rejection, Rejections
from stream_validator.service.delivery.replacements import Replacements
from tests.support.ticks import TickFactory, tick_processor

from ..plan.test_planner import source

AT = datetime(2026, 12, 3, tzinfo=UTC)


def _replacements(rejections: Rejections) -> Replacements:
    processor = tick_processor()
    return Replacements({"ticks": processor}, rejections, max_message_bytes=1000, clock=lambda: AT)


def test_an_oversized_entry_has_the_plans_envelope_context(make_tick: TickFactory) -> None:
    """The oversized DLQ entry names the package's version, the group and the route, as the
    plan's own DLQ entries do, and the time of the replacement."""
    plan = tick_processor().plan(source([make_tick.json(0)]), validated_at="t")
    out = _replacements(Rejections()).oversized(plan, plan.outputs[0])
    envelope = json.loads(out.value or b"")
    assert out.kind == "dlq"
    assert envelope["validator_version"] == stream_validator.__version__
    assert (envelope["consumer_group"], envelope["route"]) == ("g", "ticks")
    assert envelope["validated_at"].startswith("2026-12-03T00:00:00")
    assert envelope["violations"][0]["kind"] == "oversized"


def test_a_clean_output_refused_alone_becomes_delivery_rejected(make_tick: TickFactory) -> None:
    """prepare() turns a clean output the broker refused alone into a delivery_rejected DLQ
    entry, and leaves every other output as it is."""
    records = source([make_tick.json(0), make_tick.json(1)])
    plan = tick_processor().plan(records, validated_at="t")
    rejections = Rejections()
    rejections.learn([Rejection(records[0], "clean", "clean", "INVALID_RECORD", alone=True)])
    replacements = _replacements(rejections)
    first, second = (replacements.prepare(plan, out) for out in plan.outputs)
    assert first.kind == "dlq" and second is plan.outputs[1]
    envelope = json.loads(first.value or b"")
    assert envelope["violations"][0]["kind"] == "delivery_rejected"
    assert envelope["validator_version"] == stream_validator.__version__
