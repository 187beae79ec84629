"""The DLQ envelope: content, headers, truncation."""

from __future__ import annotations

import base64
import hashlib
import json
from dataclasses import replace

from stream_validator.dlq import EnvelopeContext, build_dlq_record
from stream_validator.records import SourceRecord
from stream_validator.verify import Violation

CONTEXT = EnvelopeContext("ticks", "tick", "3", "grp", "0.1.0", "2026-11-30T00:00:00+00:00")
VIOLATIONS = [
    Violation("price", "type_mismatch", "field 'price': expected float, got str '1'"),
    Violation("size", "below_min", "field 'size': -1 is below min_value 0"),
]


def record(value: bytes | None = b'{"price":"1"}', **changes: object) -> SourceRecord:
    fields: dict[str, object] = dict(
        topic="md.ticks",
        partition=2,
        offset=41,
        key=b"AAPL",
        value=value,
        headers=[("trace", b"abc"), ("bin", b"\xff")],
        timestamp_ms=1700000000000,
        timestamp_type=1,
    )
    fields.update(changes)
    return SourceRecord(**fields)  # type: ignore[arg-type]


def decode(value: bytes | None) -> dict[str, object]:
    return json.loads(value or b"")  # type: ignore[no-any-return]


def build_envelope(
    source: SourceRecord, violations: list[Violation], context: EnvelopeContext, *, max_bytes: int
) -> tuple[bytes | None, list[tuple[str, bytes | None]], bool]:
    dlq = build_dlq_record(source, violations, context, max_bytes=max_bytes)
    return dlq.value, dlq.headers, dlq.truncated


def test_envelope_fields() -> None:
    """Version, contract, violations, payload, key, headers, source and context are all kept."""
    value, _, truncated = build_envelope(record(), VIOLATIONS, CONTEXT, max_bytes=1_000_000)
    envelope = decode(value)
    assert truncated is False
    assert envelope["envelope_version"] == 1
    assert envelope["contract"] == {"name": "tick", "version": "3"}
    assert envelope["violations"] == [v.as_dict() for v in VIOLATIONS]
    assert envelope["violation_reason"] == "; ".join(v.message for v in VIOLATIONS)
    assert (envelope["payload"], envelope["payload_encoding"]) == ('{"price":"1"}', "utf-8")
    assert envelope["payload_sha256"] == hashlib.sha256(b'{"price":"1"}').hexdigest()
    assert envelope["key"] == "AAPL"
    assert envelope["headers"] == [["trace", "abc", "utf-8"], ["bin", "/w==", "base64"]]
    assert envelope["source"] == {
        "topic": "md.ticks",
        "partition": 2,
        "offset": 41,
        "timestamp_ms": 1700000000000,
        "timestamp_type": 1,
    }
    assert envelope["consumer_group"] == "grp" and envelope["replay_count"] == 0


def test_binary_payload_is_base64() -> None:
    """A payload that is not UTF-8 is stored as base64 and flagged."""
    value, _, _ = build_envelope(record(b"\x00\xff\xfe"), VIOLATIONS, CONTEXT, max_bytes=10**6)
    envelope = decode(value)
    assert envelope["payload_encoding"] == "base64"
    assert base64.b64decode(envelope["payload"]) == b"\x00\xff\xfe"  # type: ignore[arg-type]


def test_tombstone_envelope() -> None:
    """A tombstone has a null payload, encoding, length and digest."""
    envelope = decode(build_envelope(record(None), VIOLATIONS, CONTEXT, max_bytes=10**6)[0])
    assert envelope["payload"] is None and envelope["payload_encoding"] is None
    assert envelope["payload_length"] is None


def test_dlq_headers() -> None:
    """sv.dlq.* headers carry the form, source coordinates, contract, first violation kind,
    route and replay count: every one, in this order, on the envelope form."""
    context = replace(CONTEXT, replay_count=2)
    _, headers, _ = build_envelope(record(), VIOLATIONS, context, max_bytes=10**6)
    assert headers == [
        ("sv.dlq.format", b"envelope"),
        ("sv.dlq.envelope.version", b"1"),
        ("sv.dlq.source.topic", b"md.ticks"),
        ("sv.dlq.source.partition", b"2"),
        ("sv.dlq.source.offset", b"41"),
        ("sv.dlq.contract", b"tick"),
        ("sv.dlq.contract.version", b"3"),
        ("sv.dlq.violation.kind", b"type_mismatch"),
        ("sv.dlq.route", b"ticks"),
        ("sv.dlq.replay.count", b"2"),
    ]


def test_dlq_headers_without_violations_and_with_non_ascii_names() -> None:
    """No violation: an empty kind; names from the configuration are sent as UTF-8."""
    context = replace(CONTEXT, route="tïcks", contract_name="tíck")
    _, headers, _ = build_envelope(record(), [], context, max_bytes=10**6)
    values = dict(headers)
    assert values["sv.dlq.violation.kind"] == b""
    assert values["sv.dlq.route"] == "tïcks".encode()
    assert values["sv.dlq.contract"] == "tíck".encode()


def test_oversized_envelope_is_truncated_not_dropped() -> None:
    """A payload too large for the limit is cut; length and sha256 of the full one remain."""
    payload = b'{"x":"' + b"a" * 50_000 + b'"}'
    value, _, truncated = build_envelope(record(payload), VIOLATIONS, CONTEXT, max_bytes=10_000)
    envelope = decode(value)
    assert truncated and envelope["payload_truncated"] is True
    assert len(value) <= 10_000
    assert envelope["payload_length"] == len(payload)
    assert envelope["payload_sha256"] == hashlib.sha256(payload).hexdigest()
    assert payload.decode().startswith(envelope["payload"])  # type: ignore[arg-type]


def test_truncation_handles_escaping_heavy_payloads() -> None:
    """Payloads whose JSON escaping grows them still fit after truncation."""
    payload = ("\u0001" * 40_000).encode()
    value, _, truncated = build_envelope(record(payload), VIOLATIONS, CONTEXT, max_bytes=8_000)
    assert truncated and len(value or b"") <= 8_000


def test_huge_headers_and_violation_lists_are_shrunk() -> None:
    """Headers are cut (flagged, with their count) and violations capped when nothing fits."""
    many = [
        Violation(f"f{i}", "unknown_field", "undeclared field " + "x" * 50) for i in range(2000)
    ]
    headers = [(f"h{i}", b"v" * 100) for i in range(200)]
    value, _, truncated = build_envelope(
        record(b"{}", headers=headers), many, CONTEXT, max_bytes=12_000
    )
    envelope = decode(value)
    assert truncated and len(value or b"") <= 12_000
    assert envelope["headers_truncated"] is True and envelope["headers_count"] == 200
    assert envelope["violations_omitted"] == 2000 - len(envelope["violations"])  # type: ignore[arg-type]


def test_long_violation_lists_never_cost_the_payload() -> None:
    """In the headers form, long violation lists are capped before any payload byte is cut."""
    many = [Violation(f"f{i}" * 500, "unknown_field", "m" * 5000) for i in range(2000)]
    payload = b"\x00" * 35_000
    dlq = build_dlq_record(record(payload), many, CONTEXT, max_bytes=60_000)
    headers = dict(dlq.headers)
    assert dlq.form == "headers" and dlq.value == payload and not dlq.truncated
    assert headers["sv.dlq.violations.omitted"] == b"1950"
    assert len(dlq.value) + sum(len(n) + len(v or b"") for n, v in dlq.headers) <= 60_000
