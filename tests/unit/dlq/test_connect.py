"""Kafka Connect's ``__connect.errors.*`` headers on DLQ records (``dlq.connect_headers``)."""

from __future__ import annotations

from collections.abc import Sequence

import pytest

from stream_validator.dlq import DlqRecord, EnvelopeContext, build_dlq_record
from stream_validator.dlq.budget import FRAMING_BYTES, headers_size
from stream_validator.dlq.connect import MAX_MESSAGE_BYTES, PREFIX, connect_headers, stage
from stream_validator.dlq.envelope_reader import Envelope, dlq_document, parse_dlq_record
from stream_validator.records import SourceRecord
from stream_validator.verify import Violation, ViolationKind

CONTEXT = EnvelopeContext("ticks", "tick", "3", "grp", "0.1.0", "2026-11-30T00:00:00+00:00")
VIOLATIONS = [
    Violation("price", ViolationKind.TYPE_MISMATCH, "field 'price': expected float, got str"),
    Violation("size", ViolationKind.BELOW_MIN, "field 'size': -1 is below min_value 0"),
]
#: Every Connect header written, in order.
NAMES = [
    "__connect.errors.topic",
    "__connect.errors.partition",
    "__connect.errors.offset",
    "__connect.errors.connector.name",
    "__connect.errors.stage",
    "__connect.errors.exception.class.name",
    "__connect.errors.exception.message",
]


def record(value: bytes | None = b'{"price":"1"}', **changes: object) -> SourceRecord:
    fields: dict[str, object] = dict(
        topic="md.ticks",
        partition=2,
        offset=41,
        key=b"AAPL",
        value=value,
        headers=[("trace", b"abc")],
        timestamp_ms=1700000000000,
        timestamp_type=1,
    )
    fields.update(changes)
    return SourceRecord(**fields)  # type: ignore[arg-type]


def build(
    source: SourceRecord,
    violations: Sequence[Violation] = VIOLATIONS,
    *,
    max_bytes: int = 1_000_000,
    connect: bool = True,
) -> DlqRecord:
    return build_dlq_record(
        source, violations, CONTEXT, max_bytes=max_bytes, connect_headers=connect
    )


def connect_of(dlq: DlqRecord) -> dict[str, bytes | None]:
    return {name: value for name, value in dlq.headers if name.startswith(PREFIX)}


def test_off_unless_asked() -> None:
    """Without the option a DLQ record carries no __connect.errors.* header."""
    assert connect_of(build(record(), connect=False)) == {}


def test_envelope_form_gets_them_after_its_own_headers() -> None:
    """The Connect headers follow the unchanged sv.dlq.* headers; the value is unchanged."""
    plain, with_connect = build(record(), connect=False), build(record())
    assert with_connect.form == "envelope" and with_connect.value == plain.value
    assert with_connect.headers[: len(plain.headers)] == plain.headers
    assert [name for name, _ in with_connect.headers[len(plain.headers) :]] == NAMES


def test_values_are_utf8_strings_as_connect_writes_them() -> None:
    """Source coordinates in decimal, the route, the stage, the first violation's kind and
    every message joined by "; "."""
    assert connect_of(build(record())) == {
        "__connect.errors.topic": b"md.ticks",
        "__connect.errors.partition": b"2",
        "__connect.errors.offset": b"41",
        "__connect.errors.connector.name": b"ticks",
        "__connect.errors.stage": b"TRANSFORMATION",
        "__connect.errors.exception.class.name": b"stream_validator.violation.type_mismatch",
        "__connect.errors.exception.message": (
            b"field 'price': expected float, got str; field 'size': -1 is below min_value 0"
        ),
    }


@pytest.mark.parametrize(
    ("violation", "expected"),
    [
        (Violation(None, ViolationKind.UNDECODABLE, "not JSON"), "VALUE_CONVERTER"),
        (Violation("a", ViolationKind.DUPLICATE_KEY, "twice"), "VALUE_CONVERTER"),
        (Violation(None, ViolationKind.NOT_A_MAPPING, "a list"), "VALUE_CONVERTER"),
        (Violation("headers", ViolationKind.UNDECODABLE, "bad names"), "HEADER_CONVERTER"),
        (Violation(None, ViolationKind.OVERSIZED, "too big"), "KAFKA_PRODUCE"),
        (Violation(None, ViolationKind.DELIVERY_REJECTED, "refused"), "KAFKA_PRODUCE"),
        (Violation("px", ViolationKind.ABOVE_MAX, "too high"), "TRANSFORMATION"),
        (Violation(None, ViolationKind.RULE_VIOLATION, "crossed", "bid_le_ask"), "TRANSFORMATION"),
        (Violation(None, ViolationKind.NULL_CEILING_BREACH, "nulls"), "TRANSFORMATION"),
        (None, "TRANSFORMATION"),
    ],
)
def test_stage_names_the_step_that_failed(violation: Violation | None, expected: str) -> None:
    """Reading the value or headers, producing, or else the contract's checks."""
    assert stage(violation) == expected


def test_the_first_violation_decides_stage_and_class() -> None:
    """As sv.dlq.violation.kind, the first violation names the error."""
    violations = [Violation(None, ViolationKind.UNDECODABLE, "not JSON"), *VIOLATIONS]
    headers = connect_of(build(record(b"{"), violations))
    assert headers["__connect.errors.stage"] == b"VALUE_CONVERTER"
    assert headers["__connect.errors.exception.class.name"] == (
        b"stream_validator.violation.undecodable"
    )


def test_message_is_cut_to_its_cap_between_characters() -> None:
    """Thousands of long messages make at most MAX_MESSAGE_BYTES of valid UTF-8."""
    many = [Violation(f"f{i}", ViolationKind.MISSING_FIELD, "é" * 301) for i in range(5000)]
    message = connect_of(build(record(), many))["__connect.errors.exception.message"]
    assert message is not None
    assert MAX_MESSAGE_BYTES - 4 < len(message) <= MAX_MESSAGE_BYTES
    assert message.decode("utf-8").startswith("é" * 301 + "; ")


def test_a_lone_surrogate_is_replaced() -> None:
    """A message that cannot be UTF-8 as it is still makes a UTF-8 header (the JSON
    decoders refuse lone surrogates, so only a caller's own message could hold one)."""
    bad = [Violation("x", ViolationKind.UNKNOWN_FIELD, "unknown field 'a\ud800b'")]
    headers = dict(connect_headers(record(), bad, CONTEXT))
    assert headers["__connect.errors.exception.message"] == b"unknown field 'a?b'"


def test_headers_form_gets_them_after_the_sv_dlq_headers() -> None:
    """In the headers form the original's headers come first, then sv.dlq.*, then Connect's."""
    dlq = build(record(b"\x00" * 300), max_bytes=2_000)
    assert dlq.form == "headers" and dlq.value == b"\x00" * 300
    names = [name for name, _ in dlq.headers]
    assert names[0] == "trace" and names[-len(NAMES) :] == NAMES
    assert connect_of(dlq)["__connect.errors.offset"] == b"41"


def test_truncated_envelope_keeps_them_within_the_limit() -> None:
    """A record too large for either form: the envelope is cut, the Connect headers kept,
    the whole within max_bytes."""
    dlq = build(record(b"x" * 20_000), max_bytes=8_000)
    assert dlq.form == "envelope" and dlq.truncated
    assert list(connect_of(dlq)) == NAMES
    size = len(dlq.key or b"") + len(dlq.value or b"") + headers_size(dlq.headers)
    assert size <= 8_000 - FRAMING_BYTES


@pytest.mark.parametrize(("max_bytes", "form"), [(1_000_000, "envelope"), (2_000, "headers")])
def test_the_reader_ignores_them(max_bytes: int, form: str) -> None:
    """Replay's reader rebuilds the same original from a record with Connect headers as
    from one without, in both forms; dlq_document reads both."""
    source = record(b"\x00" * 300)
    plain = build(source, max_bytes=max_bytes, connect=False)
    with_connect = build(source, max_bytes=max_bytes)
    assert with_connect.form == plain.form == form

    def read(dlq: DlqRecord) -> SourceRecord:
        return SourceRecord("md.ticks.dlq", 0, 7, dlq.key, dlq.value, dlq.headers, 1)

    parsed = parse_dlq_record(read(with_connect))
    assert isinstance(parsed, Envelope) and parsed == parse_dlq_record(read(plain))
    assert parsed.original.headers == [("trace", b"abc")]
    assert parsed.original.value == b"\x00" * 300
    assert dlq_document(read(with_connect)) == dlq_document(read(plain))
