"""The plan of any batch (hypothesis): one output per record, in order, nothing lost or changed.

Whatever a vendor sends (valid ticks, ticks with a field dropped, renamed or of the wrong
type, garbage bytes, tombstones, JSON that is not an object, any headers and keys) and
whatever the route's null-ceiling policy and message limit, ``RouteProcessor.plan``:

* gives exactly one output per source record, in source order;
* forwards a clean record byte for byte (key, value, headers, timestamp);
* writes a DLQ record from which replay rebuilds the source record byte for byte, or which
  says it was cut (only when the message limit forced it);
* counts every record once (valid + quarantined = total) and lists or counts every
  violation it reports.
"""

from __future__ import annotations

import json
from typing import Any

from hypothesis import event, given
from hypothesis import strategies as st

from stream_validator.dlq.envelope_reader import (
    Envelope,
    Unreplayable,
    dlq_document,
    parse_dlq_record,
)
from stream_validator.records import SourceRecord
from tests.support.fuzz import TRUNCATED, fuzz_settings, headers, json_scalars
from tests.support.ticks import tick, tick_processor

SETTINGS = fuzz_settings(150)

FIELDS = list(tick())


def _mutated(seq: int, how: str, name: str, junk: Any) -> bytes:
    record = tick(seq)
    if how == "drop":
        record.pop(name)
    elif how == "rename":
        record[name + "_x"] = record.pop(name)
    elif how == "set":
        record[name] = junk
    elif how == "add":
        record["venue_" + name] = junk
    return json.dumps(record).encode()


json_junk = json_scalars | st.lists(st.integers(), max_size=3)
values = st.one_of(
    st.integers(min_value=0, max_value=10**6).map(tick.json),
    # A null bid: valid, but a few of them breach the 1 % null ceiling.
    st.integers(min_value=0, max_value=10**6).map(lambda s: tick.json(s, bid=None)),
    # Too large for the DLQ record to hold it whole under the smaller message limit.
    st.binary(min_size=2_000, max_size=4_000),
    st.builds(
        _mutated,
        st.integers(min_value=0, max_value=10**6),
        st.sampled_from(["drop", "rename", "set", "add"]),
        st.sampled_from(FIELDS),
        json_junk,
    ),
    st.binary(max_size=300),
    st.none(),
    json_junk.map(lambda v: json.dumps(v).encode()),
    st.integers(min_value=0, max_value=10**6).map(
        lambda s: tick.json(s)[:-1] + b',"price":1.0}'  # a repeated key
    ),
)
record_headers = headers(["trace", "sv.replay.count", "sv.dlq.format", "sv.dlq.route"], max_size=4)
records = st.lists(
    st.tuples(
        st.none() | st.binary(max_size=30),
        values,
        record_headers,
        st.none() | st.integers(min_value=0, max_value=2**41),
    ),
    min_size=1,
    max_size=40,
).map(
    lambda rows: [
        SourceRecord("src", i % 3, 100 + i, key, value, hdrs, ts)
        for i, (key, value, hdrs, ts) in enumerate(rows)
    ]
)


@SETTINGS
@given(
    batch=records,
    policy=st.sampled_from(["alert", "quarantine"]),
    limit=st.sampled_from([1_048_576, 2_500]),
)
def test_every_record_has_one_faithful_output(
    batch: list[SourceRecord], policy: str, limit: int
) -> None:
    processor = tick_processor(on_null_ceiling_breach=policy, max_message_bytes=limit)
    plan = processor.plan(batch, validated_at="2026-12-02T00:00:00+00:00")
    assert [out.source for out in plan.outputs] == batch
    report = plan.report
    assert report.total_records == len(batch)
    assert report.valid_count + report.quarantined_count == len(batch)
    quarantined = {q.index for q in report.quarantined_records}
    listed = 0
    for index, (record, out) in enumerate(zip(batch, plan.outputs, strict=True)):
        if out.kind == "clean":
            assert index not in quarantined
            assert (out.topic, out.key, out.value, out.headers, out.timestamp_ms) == (
                "clean",
                record.key,
                record.value,
                record.headers,
                record.timestamp_ms,
            )
            continue
        assert out.topic == "dlq"
        dlq = SourceRecord("dlq", 0, index, out.key, out.value, out.headers, 1_000)
        parsed = parse_dlq_record(dlq)
        if out.truncated:
            assert isinstance(parsed, Unreplayable) and parsed.reason in TRUNCATED, parsed
        else:
            assert isinstance(parsed, Envelope), parsed
            original = parsed.original
            assert (
                original.topic,
                original.partition,
                original.offset,
                original.key,
                original.value,
                original.headers,
                original.timestamp_ms,
            ) == (
                record.topic,
                record.partition,
                record.offset,
                record.key,
                record.value,
                list(record.headers),
                record.timestamp_ms,
            )
        document = dlq_document(dlq)
        assert document is not None
        omitted = document.get("violations_omitted", document.get("violations.omitted", 0))
        listed += len(document["violations"]) + int(omitted)
    dlq_indices = {i for i, out in enumerate(plan.outputs) if out.kind != "clean"}
    # What the examples covered (--hypothesis-show-statistics).
    event(f"valid records: {report.valid_count > 0}, DLQ entries: {bool(dlq_indices)}")
    event(f"cut to the limit: {any(out.truncated for out in plan.outputs)}")
    event(f"null-ceiling entries: {bool(dlq_indices - quarantined)}")
    assert quarantined <= dlq_indices
    if policy == "alert":
        assert dlq_indices == quarantined
    assert listed == sum(plan.violation_counts.values())
