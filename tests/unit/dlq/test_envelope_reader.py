"""Parsing DLQ records back into envelopes, or into the reason they cannot be replayed."""

from __future__ import annotations

import json

import pytest

from stream_validator.dlq.envelope_reader import (
    Envelope,
    Unreplayable,
    UnreplayableReason,
    dlq_document,
    parse_dlq_record,
    parse_envelope,
)
from stream_validator.verify import Violation, ViolationKind
from tests.support.dlq import PRICE_BELOW_MIN, dlq_record, envelope_of, raw_dlq_record
from tests.support.ticks import seed_tick


def _reason(value: bytes | None) -> UnreplayableReason:
    parsed = parse_envelope(value)
    assert isinstance(parsed, Unreplayable)
    return parsed.reason


def _edited(**changes: object) -> bytes:
    document = envelope_of(dlq_record())
    document.update(changes)
    return json.dumps(document).encode()


def test_original_record_is_rebuilt_byte_for_byte() -> None:
    """Payload, key, headers, timestamp and source coordinates come back unchanged."""
    record = dlq_record(key=b"K1", headers=[("a", b"1"), ("b", None)], source_offset=42)
    parsed = parse_envelope(record.value)
    assert isinstance(parsed, Envelope)
    original = parsed.original
    assert (original.topic, original.partition, original.offset) == ("ticks", 0, 42)
    assert (original.key, original.headers, original.timestamp_ms) == (
        b"K1",
        [("a", b"1"), ("b", None)],
        1_000,
    )
    assert original.value == seed_tick.json(price=-1.0)
    assert (parsed.route, parsed.contract_name, parsed.contract_version) == ("ticks", "tick", "1")
    assert [v.field for v in parsed.violations] == ["price"]


def test_binary_payload_round_trips() -> None:
    """A non-UTF-8 payload (base64 in the envelope) comes back as the same bytes."""
    parsed = parse_envelope(dlq_record(b"\xff\x00\xfe").value)
    assert isinstance(parsed, Envelope) and parsed.original.value == b"\xff\x00\xfe"


def test_tombstone_payload_is_none() -> None:
    """An envelope of a Kafka tombstone (payload null) parses to a None value."""
    document = envelope_of(dlq_record())
    document.update(payload=None, payload_encoding=None, payload_length=None, payload_sha256=None)
    parsed = parse_envelope(json.dumps(document).encode())
    assert isinstance(parsed, Envelope) and parsed.original.value is None


@pytest.mark.parametrize(
    ("value", "reason"),
    [
        (b"\x00garbage{", UnreplayableReason.NOT_JSON),
        (b"", UnreplayableReason.NOT_JSON),
        (None, UnreplayableReason.NOT_AN_ENVELOPE),
        (b"[1, 2]", UnreplayableReason.NOT_AN_ENVELOPE),
        (b'{"payload": "x"}', UnreplayableReason.NOT_AN_ENVELOPE),
        (b'{"envelope_version": 2}', UnreplayableReason.UNSUPPORTED_VERSION),
        (b'{"envelope_version": "1"}', UnreplayableReason.UNSUPPORTED_VERSION),
        (b'{"envelope_version": true}', UnreplayableReason.UNSUPPORTED_VERSION),
        (b'{"envelope_version": 1}', UnreplayableReason.MALFORMED),
    ],
)
def test_non_envelopes_are_unreplayable(value: bytes | None, reason: UnreplayableReason) -> None:
    """Garbage, other JSON and other envelope versions get a reason, never an exception."""
    assert _reason(value) is reason


def test_truncated_envelope_is_unreplayable() -> None:
    """An envelope shrunk to fit the broker's limit holds only a payload prefix."""
    big = b'{"price": -1.0, "pad": "' + b"x" * 5000 + b'"}'
    assert _reason(dlq_record(big, max_bytes=4000).value) is UnreplayableReason.PAYLOAD_TRUNCATED


def test_dropped_headers_are_unreplayable() -> None:
    """Without its original headers a record cannot be sent on as it was."""
    assert _reason(_edited(headers_dropped=True)) is UnreplayableReason.HEADERS_DROPPED


def test_checksum_mismatch_is_unreplayable() -> None:
    """A payload that does not match payload_sha256 is refused."""
    assert _reason(_edited(payload='{"price": 5}')) is UnreplayableReason.CHECKSUM_MISMATCH


@pytest.mark.parametrize(
    "changes",
    [
        {"source": None},
        {"violations": "price"},
        {"payload_encoding": "rot13"},
        {"payload_encoding": "base64", "payload": "***", "payload_length": None},
        {"headers": [["a", "1"]]},
        {"replay_count": -1},
        {"contract": {"name": 1, "version": "1"}},
    ],
)
def test_malformed_envelopes_are_unreplayable(changes: dict[str, object]) -> None:
    """A v1 envelope with a missing or ill-typed field is reported, never raised."""
    assert _reason(_edited(**changes)) is UnreplayableReason.MALFORMED


def test_replay_count_header_on_the_original_counts() -> None:
    """An envelope that lost the count still reads it from the original's sv.replay.count."""
    record = dlq_record(headers=[("sv.replay.count", b"2")], replay_count=0)
    parsed = parse_envelope(record.value)
    assert isinstance(parsed, Envelope) and parsed.replay_count == 2


def test_unreplayable_detail_never_holds_the_payload() -> None:
    """The detail of garbage names the decode error, not the bytes."""
    parsed = parse_envelope(raw_dlq_record(b"secret-price-123").value)
    assert isinstance(parsed, Unreplayable) and "secret-price-123" not in parsed.detail


def test_headers_form_ignores_sv_dlq_headers_of_the_original() -> None:
    """An original that already carried sv.dlq.* headers is rebuilt with them, in order."""
    headers: list[tuple[str, bytes | None]] = [("sv.dlq.format", b"envelope"), ("h", None)]
    record = dlq_record(b"\x00" * 300, headers=headers, max_bytes=2_000)
    assert dict(record.headers[2:])["sv.dlq.format"] == b"headers"
    parsed = parse_dlq_record(record)
    assert isinstance(parsed, Envelope)
    assert parsed.original.headers == headers and parsed.original.value == b"\x00" * 300


def test_headers_form_with_a_tampered_value_is_a_checksum_mismatch() -> None:
    """A headers-form value that no longer matches its sha256 is unreplayable."""
    record = dlq_record(b"\x00" * 300, max_bytes=2_000)
    tampered = record._replace(value=b"\x01" * 300)
    parsed = parse_dlq_record(tampered)
    assert isinstance(parsed, Unreplayable)
    assert parsed.reason is UnreplayableReason.CHECKSUM_MISMATCH


def test_dlq_document_describes_both_forms() -> None:
    """The demo report's view: the envelope, or the sv.dlq.* fields of the headers form."""
    envelope = dlq_document(dlq_record())
    headers_form = dlq_document(dlq_record(b"\x00" * 300, max_bytes=2_000))
    assert envelope is not None and envelope["violations"][0]["kind"] == "below_min"
    assert headers_form is not None and headers_form["format"] == "headers"
    assert headers_form["violations"][0]["kind"] == "below_min"
    assert dlq_document(raw_dlq_record(b"\x00garbage")) is None


CROSSED = Violation(
    None, ViolationKind.RULE_VIOLATION, "rule 'crossed_book' does not hold", rule="crossed_book"
)


@pytest.mark.parametrize("max_bytes", [1_000_000, 2_000], ids=["envelope", "headers-form"])
def test_rule_name_round_trips_in_both_forms(max_bytes: int) -> None:
    """A rule_violation's ``rule`` is written in either form and parsed back; others have none."""
    value = b"\x00" * 300 if max_bytes < 10_000 else None
    record = dlq_record(value, violations=[CROSSED, PRICE_BELOW_MIN], max_bytes=max_bytes)
    document = dlq_document(record)
    assert document is not None
    assert [v.get("rule") for v in document["violations"]] == ["crossed_book", None]
    assert "rule" not in document["violations"][1]
    parsed = parse_dlq_record(record)
    assert isinstance(parsed, Envelope)
    assert parsed.violations == (CROSSED, PRICE_BELOW_MIN)


@pytest.mark.parametrize(
    "absent", [("payload_length", "payload_sha256"), ("payload_length",), ("payload_sha256",)]
)
def test_payload_without_length_and_sha256_is_unchecked(absent: tuple[str, ...]) -> None:
    """An envelope whose payload lacks its length or sha256 parses as not checked."""
    document = envelope_of(dlq_record())
    for name in absent:
        del document[name]
    parsed = parse_envelope(json.dumps(document).encode())
    assert isinstance(parsed, Envelope) and not parsed.checked


def test_payload_with_length_and_sha256_is_checked() -> None:
    """The service's envelopes (and tombstones, which have no payload) are checked."""
    tombstone = envelope_of(dlq_record())
    tombstone.update(payload=None, payload_encoding=None, payload_length=None, payload_sha256=None)
    for value in (dlq_record().value, json.dumps(tombstone).encode()):
        parsed = parse_envelope(value)
        assert isinstance(parsed, Envelope) and parsed.checked


@pytest.mark.parametrize("max_bytes", [1_000_000, 2_000], ids=["envelope", "headers-form"])
def test_flag_action_round_trips_in_both_forms(max_bytes: int) -> None:
    """A flagged violation is written with "action": "flag" and parsed back as flagged."""
    value = b"\x00" * 300 if max_bytes < 10_000 else None
    flagged = PRICE_BELOW_MIN.as_flagged()
    record = dlq_record(value, violations=[CROSSED, flagged], max_bytes=max_bytes)
    document = dlq_document(record)
    assert document is not None
    assert [v.get("action") for v in document["violations"]] == [None, "flag"]
    parsed = parse_dlq_record(record)
    assert isinstance(parsed, Envelope)
    assert parsed.violations == (CROSSED, flagged)
