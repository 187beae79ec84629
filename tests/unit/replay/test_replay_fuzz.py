"""Replay over any DLQ topic content (hypothesis): a decision per record, faithful outputs.

A DLQ topic can hold envelopes of any age, replayed ones, garbage and records of other
tools. Whatever it holds, the planner decides each record once, in order, without raising;
a record that passes is written as its original (key, value, timestamp, headers without
stale ``sv.replay.*`` ones) with the replay headers; one that still fails goes back to the
DLQ as an envelope of the unchanged original that replay can read again, its replay count
one higher.
"""

from __future__ import annotations

from dataclasses import replace

from hypothesis import event, given
from hypothesis import strategies as st

from stream_validator.dlq.envelope_reader import Envelope, Unreplayable, parse_dlq_record
from stream_validator.records import SourceRecord
from stream_validator.replay.planner import REPLAY_HEADER_PREFIX, Outcome, build_output
from tests.support.dlq import DLQ, context, dlq_record, planner, raw_dlq_record
from tests.support.fuzz import TRUNCATED, fuzz_settings, headers, junk
from tests.support.ticks import seed_tick

SETTINGS = fuzz_settings(300)

values = st.one_of(
    st.integers(0, 1000).map(seed_tick.json),
    st.integers(0, 1000).map(lambda s: seed_tick.json(s, price=-5.0)),  # passes when fixed
    st.integers(0, 1000).map(lambda s: seed_tick.json(s, price=-5000.0)),  # still failing
    st.integers(0, 1000).map(lambda s: seed_tick.json(s, volume="x")),
    st.binary(max_size=60),
)
record_headers = headers(
    ["trace", "sv.replay.count", "sv.replay.dlq.offset", "sv.dlq.format"], max_size=3
)
written = st.builds(
    lambda value, key, hdrs, replays, topic, offset, limit: dlq_record(
        value,
        key=key,
        headers=hdrs,
        replay_count=replays,
        source_topic=topic,
        source_offset=offset,
        offset=offset,
        max_bytes=limit,
    ),
    values,
    st.none() | st.binary(max_size=12),
    record_headers,
    st.integers(0, 4),
    st.sampled_from(["ticks", "ticks", "ticks.eu", "other"]),
    st.integers(0, 30),
    st.sampled_from([1_000_000, 1_000_000, 700]),
)
foreign = st.builds(
    lambda value, hdrs, offset: raw_dlq_record(value, headers=hdrs, offset=offset),
    st.none() | st.binary(max_size=80) | junk().map(lambda v: repr(v).encode()),
    record_headers,
    st.integers(0, 30),
)


@SETTINGS
@given(
    records=st.lists(st.one_of(written, written, foreign), min_size=1, max_size=25),
    max_replays=st.sampled_from([0, 2, 5, 5]),
    requeue=st.booleans(),
    limit=st.sampled_from([1_000_000, 1_000_000, 600]),
)
def test_every_dlq_record_gets_one_decision_and_a_faithful_output(
    records: list[SourceRecord], max_replays: int, requeue: bool, limit: int
) -> None:
    written_as = replace(context(), max_message_bytes=limit)
    decisions = planner(max_replays=max_replays, requeue=requeue).decide(records)
    assert [d.record for d in decisions] == records
    for decision in decisions:
        assert isinstance(decision.outcome, Outcome)
        event(f"outcome: {decision.outcome}")
        output = build_output(decision, written_as)
        if output is None:
            continue
        envelope = decision.envelope
        assert envelope is not None
        original = envelope.original
        kept = [h for h in original.headers if not h[0].startswith(REPLAY_HEADER_PREFIX)]
        if output.kind == "target":
            assert decision.outcome is Outcome.PASSED
            assert (output.key, output.value, output.timestamp_ms) == (
                original.key,
                original.value,
                original.timestamp_ms,
            )
            assert output.headers[: len(kept)] == kept
            continue
        assert decision.outcome is Outcome.STILL_FAILING and requeue
        assert output.topic == DLQ
        again = parse_dlq_record(
            SourceRecord(DLQ, 0, 99, output.key, output.value, output.headers, 1_000)
        )
        event(f"requeued, cut: {output.truncated}")
        if output.truncated:
            assert isinstance(again, Unreplayable) and again.reason in TRUNCATED
            continue
        assert isinstance(again, Envelope), again
        assert again.replay_count == envelope.replay_count + 1
        # The envelope keeps the original as it was, its own sv.replay.* headers included.
        assert (again.original.key, again.original.value, again.original.headers) == (
            original.key,
            original.value,
            original.headers,
        )
