"""The pure replay core: one decision per DLQ record, and the records each decision writes."""

from __future__ import annotations

import json

import pytest

from stream_validator.dlq.envelope_reader import dlq_form
from stream_validator.records import SourceRecord
from stream_validator.replay.planner import (
    Coverage,
    Decision,
    Envelope,
    Outcome,
    Target,
    UnreplayableReason,
    as_unreplayable,
    build_output,
    parse_envelope,
)
from stream_validator.replay.selection import OffsetBound, Selection
from tests.support.dlq import (
    DLQ,
    SOURCE,
    context,
    dlq_record,
    planner,
    raw_dlq_record,
)
from tests.support.ticks import seed_tick


def outcomes(decisions: list[Decision]) -> list[Outcome]:
    return [d.outcome for d in decisions]


STILL_BAD = seed_tick.json(volume="five")


def test_now_valid_record_passes() -> None:
    """A record quarantined under the old contract that the current one accepts passes."""
    assert outcomes(planner().decide([dlq_record()])) == [Outcome.PASSED]


def test_still_failing_record_is_requeued_with_new_violations() -> None:
    """A record the current contract still rejects is requeued with its new violations."""
    (decision,) = planner().decide([dlq_record(STILL_BAD)])
    assert decision.outcome is Outcome.STILL_FAILING and decision.requeue
    assert [(v.field, v.kind) for v in decision.violations] == [("volume", "type_mismatch")]


def test_max_replays_exhausts_passing_and_failing_records() -> None:
    """At max_replays a record is exhausted (never sent again), whether it passes or fails."""
    decisions = planner(max_replays=2).decide(
        [
            dlq_record(STILL_BAD, replay_count=2, offset=0),
            dlq_record(STILL_BAD, replay_count=1, offset=1),
            dlq_record(replay_count=5, offset=2, source_offset=12),
            dlq_record(replay_count=1, offset=3, source_offset=13),
        ]
    )
    assert outcomes(decisions) == [
        Outcome.EXHAUSTED,
        Outcome.STILL_FAILING,
        Outcome.EXHAUSTED,
        Outcome.PASSED,
    ]


def test_no_requeue_holds_the_partition_back() -> None:
    """With requeue off, a still-failing record stays; later passing records of its
    partition are held back and the commit never moves past it."""
    p = planner(requeue=False)
    decisions = p.decide(
        [
            dlq_record(offset=0),
            dlq_record(STILL_BAD, offset=1),
            dlq_record(offset=2),
            dlq_record(offset=0, partition=1, source_offset=9),
        ]
    )
    assert outcomes(decisions) == [
        Outcome.PASSED,
        Outcome.STILL_FAILING,
        Outcome.HELD_BACK,
        Outcome.PASSED,
    ]
    assert not decisions[1].requeue
    assert (p.commit_offset(0, 3), p.commit_offset(1, 1)) == (1, 1)


def test_second_envelope_of_a_source_record_is_a_duplicate() -> None:
    """Two envelopes of one source record (retry duplicates, a requeued copy) send once."""
    p = planner()
    first = p.decide([dlq_record(offset=0, source_offset=7)])
    later = p.decide([dlq_record(offset=5, source_offset=7, replay_count=1)])
    assert outcomes(first + later) == [Outcome.PASSED, Outcome.DUPLICATE]


def _unchecked() -> SourceRecord:
    """A forged envelope: a made-up payload, no payload_length and payload_sha256."""
    record = dlq_record()
    document = json.loads(record.value or b"")
    document["payload"] = '{"symbol": "AAPL", "price": 1.0, "volume": 1}'
    del document["payload_length"], document["payload_sha256"]
    return raw_dlq_record(json.dumps(document).encode(), headers=record.headers)


def test_unchecked_payload_is_unreplayable() -> None:
    """An envelope without payload_length and payload_sha256 is never sent (no --force)."""
    (decision,) = planner().decide([_unchecked()])
    assert (decision.outcome, decision.reason) == (Outcome.UNREPLAYABLE, "payload_unchecked")
    assert build_output(decision, context()) is None


def test_unchecked_payload_replays_with_force() -> None:
    """With --force (allow_unchecked) such an envelope is re-validated like any other."""
    (decision,) = planner(allow_unchecked=True).decide([_unchecked()])
    assert decision.outcome is Outcome.PASSED


def test_records_outside_the_range_are_filtered_out() -> None:
    """The offset range and the filters decide filtered_out, naming the filter."""
    selection = Selection(from_offset=OffsetBound(1), kinds=frozenset({"type_mismatch"}))
    decisions = planner(selection).decide([dlq_record(offset=0), dlq_record(offset=1)])
    assert [(d.outcome, d.reason) for d in decisions] == [
        (Outcome.FILTERED_OUT, "range"),
        (Outcome.FILTERED_OUT, "kind"),
    ]


def test_unreplayable_records_are_selected_despite_filters() -> None:
    """Garbage in range is reported as unreplayable even when filters are set."""
    selection = Selection(kinds=frozenset({"below_min"}))
    (decision,) = planner(selection).decide([raw_dlq_record(b"garbage")])
    assert (decision.outcome, decision.reason) == (Outcome.UNREPLAYABLE, "not_json")


def test_coverage_by_another_group_means_already_handled() -> None:
    """A record another replay group selected and committed past is not sent again."""
    covering = Coverage("g.kind", Selection(kinds=frozenset({"below_min"})), {0: 1})
    other = Coverage("g.size", Selection(kinds=frozenset({"type_mismatch"})), {0: 5})
    decisions = planner(coverage=[covering, other]).decide(
        [dlq_record(offset=0), dlq_record(offset=1, source_offset=8)]
    )
    assert [(d.outcome, d.reason) for d in decisions] == [
        (Outcome.ALREADY_HANDLED, "g.kind"),
        (Outcome.PASSED, ""),
    ]


def test_passing_record_is_sent_as_it_was_with_replay_headers() -> None:
    """Key, value, headers and timestamp are the original's; stale replay headers go."""
    record = dlq_record(offset=4, headers=[("trace", b"t"), ("sv.replay.dlq.offset", b"1")])
    (decision,) = planner().decide([record])
    output = build_output(decision, context())
    assert output is not None and output.kind == "target"
    assert (output.topic, output.key, output.timestamp_ms) == ("ticks.clean", b"AAPL", 1_000)
    assert output.value == seed_tick.json(price=-1.0)
    assert output.headers == [
        ("trace", b"t"),
        ("sv.replay.dlq.topic", DLQ.encode()),
        ("sv.replay.dlq.partition", b"0"),
        ("sv.replay.dlq.offset", b"4"),
        ("sv.replay.time", b"2026-12-01T00:00:00+00:00"),
        ("sv.replay.group", b"replay-group"),
        ("sv.replay.count", b"1"),  # this replay included
    ]


def test_source_target_sends_to_the_original_topic() -> None:
    """--to source sends each record back to the topic it was quarantined from."""
    (decision,) = planner().decide([dlq_record(source_topic="ticks.eu")])
    output = build_output(decision, context(Target("source")))
    assert output is not None and output.topic == "ticks.eu"


def test_requeued_envelope_counts_the_replay() -> None:
    """A requeued record is a new envelope: current contract and violations, count + 1."""
    (decision,) = planner().decide([dlq_record(STILL_BAD, offset=3, replay_count=1)])
    output = build_output(decision, context())
    assert output is not None and (output.kind, output.topic) == ("requeue", DLQ)
    document = json.loads(output.value or b"")
    assert document["replay_count"] == 2
    assert document["contract"] == {"name": "tick", "version": "2"}
    assert document["consumer_group"] == "replay-group"
    assert [v["kind"] for v in document["violations"]] == ["type_mismatch"]
    assert document["source"]["topic"] == SOURCE
    headers = dict(output.headers)
    assert headers["sv.dlq.replay.count"] == b"2"
    assert headers["sv.replay.dlq.offset"] == b"3"
    parsed = parse_envelope(output.value)
    assert isinstance(parsed, Envelope) and parsed.replay_count == 2


def test_requeued_envelope_carries_connect_headers_when_configured() -> None:
    """With dlq.connect_headers a requeued envelope names its source record (not the DLQ
    record it came from) in Kafka Connect's headers too; without, it has none."""
    (decision,) = planner().decide([dlq_record(STILL_BAD, offset=3, source_offset=17)])
    plain = build_output(decision, context())
    output = build_output(decision, context(connect_headers=True))
    assert plain is not None and output is not None
    assert not [name for name, _ in plain.headers if name.startswith("__connect.")]
    assert output.headers[: len(plain.headers)] == plain.headers
    headers = dict(output.headers)
    assert headers["__connect.errors.topic"] == SOURCE.encode()
    assert headers["__connect.errors.offset"] == b"17"
    assert headers["__connect.errors.exception.class.name"] == (
        b"stream_validator.violation.type_mismatch"
    )


@pytest.mark.parametrize(("max_bytes", "form"), [(1_000_000, "envelope"), (3_000, "headers")])
def test_connect_headers_change_no_decision_and_never_reach_the_target(
    max_bytes: int, form: str
) -> None:
    """DLQ records with Connect headers replay as those without: same decisions, and a
    passing record goes out with its original headers only (plus sv.replay.*)."""
    # Still valid JSON; escaped in an envelope, the newlines double: headers form at 3 KB.
    value = seed_tick.json(price=-1.0) + b"\n" * 1000
    records = [
        dlq_record(v, offset=i, max_bytes=max_bytes, connect_headers=connect)
        for connect in (False, True)
        for i, v in enumerate([value, STILL_BAD])
    ]
    assert dlq_form(records[0]) == dlq_form(records[2]) == form
    assert any(name.startswith("__connect.") for name, _ in records[2].headers)
    plain = planner().decide(records[:2])
    with_connect = planner().decide(records[2:])
    assert outcomes(with_connect) == outcomes(plain) == [Outcome.PASSED, Outcome.STILL_FAILING]
    sent = build_output(with_connect[0], context())
    expected = build_output(plain[0], context())
    assert sent is not None and expected is not None and sent.headers == expected.headers
    assert sent.value == value


@pytest.mark.parametrize(
    "outcome",
    [Outcome.EXHAUSTED, Outcome.FILTERED_OUT, Outcome.DUPLICATE, Outcome.HELD_BACK],
)
def test_settled_without_writing(outcome: Outcome) -> None:
    """Exhausted, filtered, duplicate and held-back records write nothing."""
    record = dlq_record()
    envelope = parse_envelope(record.value)
    assert isinstance(envelope, Envelope)
    decision = Decision(record, outcome, envelope)
    assert build_output(decision, context()) is None


def test_no_requeue_writes_nothing_for_still_failing() -> None:
    """A still-failing record left in place (requeue off) has no output."""
    (decision,) = planner(requeue=False).decide([dlq_record(STILL_BAD)])
    assert build_output(decision, context()) is None


def test_as_unreplayable_keeps_the_record() -> None:
    """A record the broker refuses is re-decided as unreplayable with a reason."""
    (decision,) = planner().decide([dlq_record()])
    refused = as_unreplayable(decision, UnreplayableReason.OVERSIZED, "too big")
    assert (refused.outcome, refused.reason, refused.record) == (
        Outcome.UNREPLAYABLE,
        "oversized",
        decision.record,
    )


def test_negative_max_replays_is_refused() -> None:
    """max_replays below zero is a programming error."""
    with pytest.raises(ValueError):
        planner(max_replays=-1)


def test_planner_never_raises_on_odd_records() -> None:
    """Tombstones in the DLQ and envelopes of tombstones are decided, not raised."""
    tombstone = SourceRecord(DLQ, 0, 0, None, None, [], None)
    decisions = planner().decide([tombstone, dlq_record(offset=1, source_offset=3)])
    assert outcomes(decisions) == [Outcome.UNREPLAYABLE, Outcome.PASSED]
