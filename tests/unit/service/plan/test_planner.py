"""Routing a micro-batch (pure): clean vs DLQ outputs, null-ceiling policy, batch events."""

from __future__ import annotations

import json
from collections import Counter
from dataclasses import replace
from datetime import datetime, timedelta
from typing import Any

import pytest

import stream_validator
from stream_validator.contracts import load_contract
from stream_validator.records import OutputRecord, SourceRecord
from stream_validator.service.plan.planner import RouteProcessor, _with_window, clean_outputs
from tests.support.flood import flood_plan
from tests.support.ticks import TICK_YAML, TickFactory, counted, planned_event, tick_processor


def processor(policy: str = "alert") -> RouteProcessor:
    return tick_processor(on_null_ceiling_breach=policy)


def source(values: list[bytes | None]) -> list[SourceRecord]:
    return [
        SourceRecord("src", 0, i, f"k{i}".encode(), v, [("h", b"1")], 1000 + i)
        for i, v in enumerate(values)
    ]


def test_outputs_follow_source_order_and_keep_bytes(make_tick: TickFactory) -> None:
    """Each record yields one output in source order; clean ones are byte-identical."""
    records = source([make_tick.json(0), b"junk", make_tick.json(2), None])
    plan = processor().plan(records, validated_at="t")
    assert [o.kind for o in plan.outputs] == ["clean", "dlq", "clean", "dlq"]
    clean = plan.outputs[0]
    assert (clean.topic, clean.key, clean.value, clean.headers, clean.timestamp_ms) == (
        "clean",
        b"k0",
        make_tick.json(0),
        [("h", b"1")],
        1000,
    )
    assert [o.source.offset for o in plan.outputs] == [0, 1, 2, 3]
    assert plan.outputs[1].first_violation == "undecodable"
    assert plan.outputs[3].first_violation == "not_a_mapping"


def test_dlq_output_is_an_envelope_keyed_like_the_source(make_tick: TickFactory) -> None:
    """A DLQ output carries the envelope, the original key and timestamp."""
    plan = processor().plan(
        source([make_tick.json(0, price="x")]), validated_at="2026-11-30T00:00:00Z"
    )
    (out,) = plan.outputs
    envelope = json.loads(out.value or b"")
    assert (out.topic, out.key, out.timestamp_ms) == ("dlq", b"k0", 1000)
    assert envelope["violations"][0]["kind"] == "type_mismatch"
    assert envelope["validated_at"] == "2026-11-30T00:00:00Z"


def test_the_envelope_names_the_package_version_and_the_group(make_tick: TickFactory) -> None:
    """The DLQ envelope's context: the package's version, the processor's group and route."""
    out = processor().plan(source([b"junk"]), validated_at="t").outputs[0]
    envelope = json.loads(out.value or b"")
    assert envelope["validator_version"] == stream_validator.__version__
    assert (envelope["consumer_group"], envelope["route"]) == ("g", "ticks")


def test_alert_policy_lets_records_flow(make_tick: TickFactory) -> None:
    """With 'alert' a null-ceiling breach is reported but records go to the clean topic."""
    plan = processor("alert").plan(
        source([make_tick.json(i, bid=None) for i in range(10)]), validated_at="t"
    )
    assert counted(plan)[0] == 10 and plan.null_ceiling_action == "alert"
    assert planned_event(plan)["null_breach_fields"] == {"bid": 100.0}


def test_quarantine_policy_sends_whole_batch_to_dlq(make_tick: TickFactory) -> None:
    """With 'quarantine' every record of a breaching batch goes to the DLQ."""
    nulls = [make_tick.json(i, bid=None) for i in range(5)]
    values: list[bytes | None] = [*nulls, make_tick.json(9), b"bad"]
    plan = processor("quarantine").plan(source(values), validated_at="t")
    assert counted(plan)[1] == 7 and counted(plan)[0] == 0
    kinds = [o.first_violation for o in plan.outputs]
    assert kinds == ["null_ceiling_breach"] * 6 + ["undecodable"]
    message = json.loads(plan.outputs[0].value or b"")["violations"][0]["message"]
    assert "'bid'" in message and "above max_allowed_null_pct" in message


def test_no_breach_no_action(make_tick: TickFactory) -> None:
    """A clean batch has no null-ceiling action."""
    plan = processor("quarantine").plan(source([make_tick.json(1)]), validated_at="t")
    assert plan.null_ceiling_action is None and counted(plan)[0] == 1


def test_batch_event_has_counts_and_no_payloads(make_tick: TickFactory) -> None:
    """The batch event counts outcomes and names drift, without payload values."""
    plan = processor().plan(
        source([make_tick.json(0, venue="SECRETVENUE"), make_tick.json(1, price=-5.0)]),
        validated_at="t",
    )
    event = planned_event(plan)
    assert event["records"] == 2 and event["valid"] == 1 and event["quarantined"] == 1
    assert event["violations_by_kind"] == {"below_min": 1}
    assert event["unknown_fields"] == ["venue"]
    assert "SECRETVENUE" not in json.dumps(event)


def test_replay_count_header_is_carried_into_the_envelope() -> None:
    """A replayed record quarantined again keeps its replay count in the new envelope."""
    record = SourceRecord("src", 0, 5, b"k", b"junk", [("sv.replay.count", b"2")], 1000)
    (output,) = processor().plan([record], validated_at="t").outputs
    assert json.loads(output.value or b"")["replay_count"] == 2
    assert dict(output.headers)["sv.dlq.replay.count"] == b"2"


def test_bad_replay_count_header_counts_as_zero() -> None:
    """A garbage or absurdly long sv.replay.count header never raises; it counts as 0."""
    for value in (b"x", b"9" * 5000, None):
        record = SourceRecord("src", 0, 5, b"k", b"junk", [("sv.replay.count", value)], 1000)
        (output,) = processor().plan([record], validated_at="t").outputs
        assert json.loads(output.value or b"")["replay_count"] == 0


def test_batch_event_bounds_payload_derived_names() -> None:
    """90,000 unique keys give at most 50 names (<= 128 chars) per list, plus the count left out."""
    event = planned_event(flood_plan())
    assert len(event["unknown_fields"]) == 50 and event["unknown_fields_left_out"] == 89_950
    assert len(event["violations_by_field"]) == 50
    # 50 named unknown_field violations per record, then one "and 4,450 more" (no field).
    assert event["violations_by_field_left_out"] == 20 * 50 + 1 - 50
    names = [*event["unknown_fields"], *event["violations_by_field"]]
    assert max(len(name) for name in names) <= 128
    assert len(json.dumps(event)) < 20_000


def test_batch_event_cuts_long_and_unprintable_names(make_tick: TickFactory) -> None:
    """A 300-character or unprintable payload key appears cut to 128 printable characters."""
    long_key, odd_key = "x" * 300, "a\nb\x00c"
    plan = processor().plan(
        source([make_tick.json(0, **{long_key: 1, odd_key: 2})]), validated_at="t"
    )
    assert planned_event(plan)["unknown_fields"] == ["a?b?c", "x" * 125 + "..."]


def test_skew_windows_use_the_validation_time(make_tick: TickFactory) -> None:
    """The pipeline measures max_age_s from validated_at: the same tick passes one day and
    is quarantined as timestamp_out_of_range a day later."""
    contract = load_contract(TICK_YAML)
    timed = replace(
        contract,
        fields=tuple(
            replace(spec, max_age_s=3600) if spec.name == "event_ts" else spec
            for spec in contract.fields
        ),
    )
    tick = make_tick.json(0)
    event_ts = json.loads(tick)["event_ts"]
    processor = tick_processor(contract=timed)
    same_day = processor.plan(source([tick]), validated_at=event_ts)
    day_later = (datetime.fromisoformat(event_ts) + timedelta(days=1)).isoformat()
    late = processor.plan(source([tick]), validated_at=day_later)
    assert [o.kind for o in same_day.outputs] == ["clean"]
    assert [o.first_violation for o in late.outputs] == ["timestamp_out_of_range"]


@pytest.mark.parametrize("container", [list, tuple], ids=["native", "column-by-column"])
def test_clean_outputs_equal_keyword_construction(container: Any) -> None:
    """clean_outputs builds tuples positionally (natively for a list, column by column in C
    otherwise): the same records as OutputRecord(...)."""
    records = [
        SourceRecord("src", 1, 7, b"k", b"{}", [("h", b"v")], 1_700_000_000_000, 1),
        SourceRecord("src", 0, 8, None, None, [], None, 0),
    ]
    expected = [
        OutputRecord(
            kind="clean",
            topic="clean.t",
            key=r.key,
            value=r.value,
            headers=r.headers,
            timestamp_ms=r.timestamp_ms,
            source=r,
            truncated=False,
            first_violation=None,
        )
        for r in records
    ]
    got = clean_outputs("clean.t", container(records))
    assert got == expected
    assert all(type(out) is OutputRecord for out in got)
    assert got[0].source is records[0]


def test_batch_event_reports_the_delivered_outputs_not_the_plans(make_tick: TickFactory) -> None:
    """The event's clean_out, dlq_out and truncated_envelopes are the delivered counts it is
    given (a clean output turned into a DLQ entry counts as DLQ), never the plan's."""
    mixed = processor().plan(
        source([make_tick.json(0), b"junk", make_tick.json(2), None]), validated_at="t"
    )
    assert counted(mixed) == (2, 2, 0)
    event = mixed.event(mixed.violation_counts, (1, 3, 1))
    assert (event["clean_out"], event["dlq_out"], event["truncated_envelopes"]) == (1, 3, 1)


def test_window_rates_replace_only_the_null_fields(make_tick: TickFactory) -> None:
    """The report carrying the null window's rates equals dataclasses.replace of the two
    fields: every other field is the verifier's, positional construction included."""
    report = processor().plan(source([make_tick.json(0), b"junk"]), validated_at="t").report
    rates, breaches = {"bid": 12.5}, {"bid": 12.5}
    got = _with_window(report, rates, breaches)
    assert got == replace(report, null_rates=rates, null_breach_fields=breaches)
    assert got.quarantined_records is report.quarantined_records


def test_violation_counts_of_a_plan_adding_none_are_the_reports(make_tick: TickFactory) -> None:
    """A plan adding no violation counts exactly the verifier's; one adding some, both."""
    plan = processor().plan(source([b"junk", make_tick.json(1)]), validated_at="t")
    assert plan.violation_counts == plan.report.violation_counts
    added = replace(plan, added_violations=Counter({("bid", "null_ceiling_breach"): 2}))
    assert added.violation_counts == plan.report.violation_counts + Counter(
        {("bid", "null_ceiling_breach"): 2}
    )
