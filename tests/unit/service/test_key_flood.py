"""Records carrying tens of thousands of undeclared keys, through the plan and the loop on
the fake broker: the DLQ entries and the batch event list a capped number plus a count."""

from __future__ import annotations

import dataclasses
import json

from stream_validator.config.settings import ServiceConfig
from stream_validator.errors import ServiceExit
from stream_validator.records import SourceRecord
from stream_validator.verify.report import MAX_NAMED_VIOLATIONS
from tests.support.ticks import counted, planned_event, tick, tick_processor

from .fakeservice import EVERY_POLL, Harness, service_config

KEYS, RECORDS = 20_000, 3


def flooded(seq: int) -> bytes:
    return tick.json(seq, **{f"x{seq}_{j}": 1 for j in range(KEYS)})


def forbidding(config: ServiceConfig) -> ServiceConfig:
    """The config with its one route's contract set to forbid unknown fields."""
    (route,) = config.routes
    contract = dataclasses.replace(route.contract, forbid_unknown_fields=True)
    return dataclasses.replace(config, routes=(dataclasses.replace(route, contract=contract),))


def assert_capped(envelope: dict[str, object]) -> None:
    violations = envelope["violations"]
    assert isinstance(violations, list) and len(violations) == MAX_NAMED_VIOLATIONS + 1
    assert all(v["kind"] == "unknown_field" for v in violations)
    assert violations[-1]["field"] is None
    assert violations[-1]["message"].startswith(f"and {KEYS - MAX_NAMED_VIOLATIONS} more")
    assert "violations_omitted" not in envelope


def test_plan_dlq_entries_and_event_carry_the_capped_names_and_counts() -> None:
    """Forbidden keys: each DLQ envelope names 50 plus 'and N more'; the event 50 plus the rest."""
    route = tick_processor()
    contract = dataclasses.replace(route.verifier.contract, forbid_unknown_fields=True)
    records = [SourceRecord("src", 0, i, None, flooded(i), [], 1000) for i in range(RECORDS)]
    plan = tick_processor(contract=contract).plan(records, validated_at="t")
    assert counted(plan)[1] == RECORDS
    for output in plan.outputs:
        assert_capped(json.loads(output.value or b""))
    event = planned_event(plan)
    assert len(event["unknown_fields"]) == 50
    assert event["unknown_fields_left_out"] == RECORDS * KEYS - 50
    assert event["violations_by_kind"] == {"unknown_field": RECORDS * (MAX_NAMED_VIOLATIONS + 1)}


def test_service_delivers_capped_dlq_entries_and_batch_event() -> None:
    """Through the loop on the fake broker: capped DLQ envelopes and a batch event with counts."""
    h = Harness(forbidding(service_config(commit_interval_s=EVERY_POLL)))
    h.feed([flooded(i) for i in range(RECORDS)])
    assert h.run() == ServiceExit.OK
    dlq = h.topic("dlq")
    assert len(dlq) == RECORDS
    for entry in dlq:
        assert_capped(json.loads(entry.value or b""))
    (event,) = [e for e in h.state.recent_events if e.get("event") == "batch"]
    assert len(event["unknown_fields"]) == 50
    assert event["unknown_fields_left_out"] == RECORDS * KEYS - 50
    assert h.counter("stream_validator_drift_batches_total", contract="tick") == 1


def test_service_counts_unknown_names_past_the_batch_cap_under_drift() -> None:
    """Shipped contract (unknown fields allowed): clean delivery, the event names 50 plus
    the count of every other distinct name."""
    h = Harness(service_config(commit_interval_s=EVERY_POLL))
    h.feed([flooded(i) for i in range(RECORDS)])
    assert h.run() == ServiceExit.OK
    assert len(h.topic("clean")) == RECORDS
    (event,) = [e for e in h.state.recent_events if e.get("event") == "batch"]
    assert len(event["unknown_fields"]) == 50
    assert event["unknown_fields_left_out"] == RECORDS * KEYS - 50
