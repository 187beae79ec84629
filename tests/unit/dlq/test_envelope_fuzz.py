"""Hostile DLQ records: the reader never raises, and every DLQ record the service writes is
either rebuilt byte for byte or says why it cannot be (hypothesis).

Replay reads whatever sits on a DLQ topic: records of an older version, of another tool,
or tampered with. ``parse_dlq_record`` promises never to raise; ``dlq_document`` (what
replay shows) returns None rather than raise. SV_FUZZ_EXAMPLES sets the examples per test
(400 by default; more by hand).
"""

from __future__ import annotations

import json
from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from stream_validator.dlq import EnvelopeContext, build_dlq_record
from stream_validator.dlq.envelope_reader import (
    Envelope,
    Unreplayable,
    UnreplayableReason,
    dlq_document,
    parse_dlq_record,
)
from stream_validator.dlq.headers_form import HEADERS_COUNT
from stream_validator.dlq.records import HEADER_PREFIX
from stream_validator.records import SourceRecord
from stream_validator.verify import Violation, ViolationKind
from tests.support.fuzz import TRUNCATED, fuzz_settings, json_scalars

SETTINGS = fuzz_settings(400)

CONTEXT = EnvelopeContext(
    route="ticks",
    contract_name="tick",
    contract_version="1",
    consumer_group="svc",
    validator_version="0.1.0",
    validated_at="2026-12-02T00:00:00+00:00",
)

ENVELOPE_KEYS = [
    "envelope_version",
    "contract",
    "route",
    "violations",
    "violation_reason",
    "payload",
    "payload_encoding",
    "payload_length",
    "payload_sha256",
    "payload_truncated",
    "key",
    "key_encoding",
    "headers",
    "headers_truncated",
    "source",
    "consumer_group",
    "validator_version",
    "validated_at",
    "replay_count",
]
SV_NAMES = [
    HEADER_PREFIX + name
    for name in (
        "format",
        "envelope.version",
        "source.topic",
        "source.partition",
        "source.offset",
        "source.timestamp",
        "source.timestamp.type",
        "contract",
        "contract.version",
        "violation.kind",
        "violations",
        "violations.omitted",
        "route",
        "replay.count",
        "payload.length",
        "payload.sha256",
        "consumer.group",
        "validator.version",
        "validated.at",
    )
] + [HEADERS_COUNT, "sv.replay.count"]

envelope_scalars = json_scalars | st.sampled_from(
    ["envelope", "headers", "utf8", "base64", "1", "-1", "0", "AAPL"]
)
json_values = st.recursive(
    envelope_scalars,
    lambda inner: st.one_of(
        st.lists(inner, max_size=4),
        st.dictionaries(st.sampled_from(ENVELOPE_KEYS) | st.text(max_size=8), inner, max_size=4),
    ),
    max_leaves=12,
)
# JSON objects that look more or less like envelopes: every key of one, values of any type.
envelope_like = st.dictionaries(st.sampled_from(ENVELOPE_KEYS), json_values, max_size=19)
header_values = st.one_of(
    st.none(),
    st.binary(max_size=40),
    st.integers(min_value=-5, max_value=10**12).map(lambda n: str(n).encode()),
    st.sampled_from([b"headers", b"envelope", b"1", b"[]", b"[{}]", b"\xff", b""]),
)
headers = st.lists(
    st.tuples(st.sampled_from(SV_NAMES) | st.text(max_size=12), header_values), max_size=12
)
values = st.one_of(
    st.none(),
    st.binary(max_size=200),
    envelope_like.map(lambda doc: json.dumps(doc).encode()),
)


@SETTINGS
@given(value=values, key=st.none() | st.binary(max_size=20), record_headers=headers)
def test_any_dlq_record_parses_or_is_unreplayable(
    value: bytes | None, key: bytes | None, record_headers: list[tuple[str, bytes | None]]
) -> None:
    """Garbage, envelope-like JSON of any types and any sv.dlq.* headers: an Envelope or an
    Unreplayable with a reason, never an exception; the display form is a dict or None."""
    record = SourceRecord("ticks.dlq", 0, 7, key, value, record_headers, 1_000)
    parsed = parse_dlq_record(record)
    assert isinstance(parsed, Envelope | Unreplayable)
    if isinstance(parsed, Unreplayable):
        assert isinstance(parsed.reason, UnreplayableReason)
    document = dlq_document(record)
    assert document is None or isinstance(document, dict)


violations = st.lists(
    st.builds(
        Violation,
        st.none() | st.text(max_size=300),
        st.sampled_from(list(ViolationKind)),
        st.text(max_size=300),
        st.none() | st.text(max_size=20),
    ),
    min_size=1,
    max_size=60,
)
originals = st.builds(
    SourceRecord,
    topic=st.just("ticks"),
    partition=st.integers(min_value=0, max_value=63),
    offset=st.integers(min_value=0, max_value=2**40),
    key=st.none() | st.binary(max_size=40),
    value=st.none() | st.binary(max_size=3_000) | st.text(max_size=1_000).map(str.encode),
    headers=st.lists(
        st.tuples(st.text(max_size=12), st.none() | st.binary(max_size=40)), max_size=6
    ),
    timestamp_ms=st.none() | st.integers(min_value=0, max_value=2**41),
    # As the Kafka client reports it: not available, create time, log append time.
    timestamp_type=st.sampled_from([0, 1, 2]),
)


@SETTINGS
@given(
    original=originals,
    found=violations,
    max_bytes=st.sampled_from([1_000_000, 20_000, 6_000, 3_000, 1_500]),
    replays=st.integers(min_value=0, max_value=5),
)
def test_every_dlq_record_written_is_rebuilt_or_says_it_was_cut(
    original: SourceRecord, found: list[Violation], max_bytes: int, replays: int
) -> None:
    """Any record, any violations, message limits from 1 MB down to 1.5 KB: a DLQ record
    that was not cut gives back the original key, value and headers byte for byte, its
    coordinates and its violations' kinds (those left out counted); one that was cut is
    unreplayable as truncated."""
    context = EnvelopeContext(**{**_fields(CONTEXT), "replay_count": replays})
    dlq = build_dlq_record(original, found, context, max_bytes=max_bytes)
    read = SourceRecord("ticks.dlq", 0, 3, dlq.key, dlq.value, dlq.headers, 1_000)
    parsed = parse_dlq_record(read)
    if dlq.truncated:
        assert isinstance(parsed, Unreplayable) and parsed.reason in TRUNCATED, parsed
        return
    assert isinstance(parsed, Envelope), parsed
    rebuilt = parsed.original
    assert (rebuilt.key, rebuilt.value, rebuilt.headers) == (
        original.key,
        original.value,
        list(original.headers),
    )
    assert (rebuilt.topic, rebuilt.partition, rebuilt.offset, rebuilt.timestamp_ms) == (
        original.topic,
        original.partition,
        original.offset,
        original.timestamp_ms,
    )
    # Violations are listed in order, at most 50 when the record had to be made smaller
    # (none when even those do not fit); the document says how many were left out.
    listed = [str(v.kind) for v in parsed.violations]
    assert listed == [str(v.kind) for v in found][: len(listed)]
    if len(listed) < len(found):
        assert len(listed) <= 50
        document = dlq_document(read)
        assert document is not None
        omitted = document.get("violations_omitted", document.get("violations.omitted"))
        assert int(omitted) == len(found) - len(listed)
    assert parsed.replay_count == replays
    assert (parsed.contract_name, parsed.route) == ("tick", "ticks")


def _fields(context: EnvelopeContext) -> dict[str, Any]:
    return {name: getattr(context, name) for name in context.__slots__}
