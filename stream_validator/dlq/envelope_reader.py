"""PURE: a DLQ record back to a typed envelope, or the reason it cannot be replayed.

Both forms of ``stream_validator.dlq.envelope`` are read: the envelope form (version 1
JSON value) and the headers form (original value, ``sv.dlq.*`` headers). The original
record is rebuilt byte for byte (payload, key and headers) and its length and sha256 are
checked (an envelope without them parses with ``checked`` False). Parsing never raises:
anything else (garbage, other versions, a truncated payload, key or headers) becomes
``Unreplayable``.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from dataclasses import dataclass
from enum import StrEnum
from typing import Any

from stream_validator.codec import decode_json, text_to_payload
from stream_validator.dlq.headers_form import split_headers
from stream_validator.dlq.records import (
    ENVELOPE_VERSION,
    FORMAT_HEADER,
    HEADER_PREFIX,
    REPLAY_COUNT_HEADER,
    replayed_count,
)
from stream_validator.errors import DecodeError
from stream_validator.records import SourceRecord
from stream_validator.verify import FlaggedViolation, Violation

__all__ = [
    "REPLAY_COUNT_HEADER",
    "Envelope",
    "Parsed",
    "Unreplayable",
    "UnreplayableReason",
    "dlq_document",
    "dlq_form",
    "parse_dlq_record",
    "parse_envelope",
]


class UnreplayableReason(StrEnum):
    """Why a DLQ record cannot be replayed; stable, used as summary keys."""

    NOT_JSON = "not_json"
    NOT_AN_ENVELOPE = "not_an_envelope"
    UNSUPPORTED_VERSION = "unsupported_envelope_version"
    MALFORMED = "malformed_envelope"
    PAYLOAD_TRUNCATED = "payload_truncated"
    HEADERS_DROPPED = "headers_dropped"
    KEY_TRUNCATED = "key_truncated"
    HEADERS_TRUNCATED = "headers_truncated"
    CHECKSUM_MISMATCH = "payload_checksum_mismatch"
    OVERSIZED = "oversized"
    NOT_A_ROUTE_SOURCE = "not_a_route_source"
    #: The envelope's payload has no ``payload_length`` and ``payload_sha256`` to check it
    #: against (the service always writes both); replayed only with ``--force``.
    PAYLOAD_UNCHECKED = "payload_unchecked"


@dataclass(frozen=True, slots=True)
class Envelope:
    """A parsed v1 envelope: the original record, rebuilt byte for byte, and its history.

    ``replay_count`` is how often the record was replayed: the envelope's field, or the
    ``sv.replay.count`` header on the original record when that is larger (an envelope
    written by a service that did not carry the header into it). ``checked`` is False when
    the payload came without its length and sha256 (nothing vouches for it).
    """

    contract_name: str
    contract_version: str
    route: str
    violations: tuple[Violation, ...]
    original: SourceRecord
    replay_count: int
    checked: bool = True


@dataclass(frozen=True, slots=True)
class Unreplayable:
    """A DLQ record that cannot be replayed, and why."""

    reason: UnreplayableReason
    detail: str


Parsed = Envelope | Unreplayable


def dlq_form(record: SourceRecord) -> str:
    """``headers`` when the DLQ record is in the headers form, else ``envelope``."""
    for name, value in reversed(record.headers):
        if name == FORMAT_HEADER:
            return "headers" if value == b"headers" else "envelope"
    return "envelope"


def dlq_document(record: SourceRecord) -> dict[str, Any] | None:
    """The envelope's fields for display (no payload in the headers form), or None."""
    if dlq_form(record) == "envelope":
        try:
            doc = decode_json(record.value or b"")
        except DecodeError:
            return None
        return doc if isinstance(doc, dict) else None
    try:
        _, fields = split_headers(record.headers)
    except ValueError:
        return None
    doc = {
        name.removeprefix(HEADER_PREFIX): value.decode("utf-8", "replace")
        for name, value in fields.items()
        if value is not None
    }
    try:
        doc["violations"] = decode_json(doc.get("violations", ""))
    except DecodeError:
        return None
    doc["payload_bytes_in_record_value"] = len(record.value or b"")
    return doc


def parse_dlq_record(record: SourceRecord) -> Parsed:
    """Parse one DLQ record of either form; never raises."""
    if dlq_form(record) == "envelope":
        return parse_envelope(record.value)
    try:
        return _from_headers(record)
    except (ValueError, KeyError, TypeError) as exc:  # DecodeError is a ValueError
        return Unreplayable(UnreplayableReason.MALFORMED, f"{type(exc).__name__}: {exc}"[:200])


def parse_envelope(value: bytes | None) -> Parsed:
    """Parse one envelope-form DLQ record value; never raises."""
    if value is None:
        return Unreplayable(UnreplayableReason.NOT_AN_ENVELOPE, "the DLQ record has no value")
    try:
        doc = decode_json(value)
    except DecodeError as exc:
        return Unreplayable(UnreplayableReason.NOT_JSON, str(exc)[:200])
    if not isinstance(doc, dict) or "envelope_version" not in doc:
        return Unreplayable(UnreplayableReason.NOT_AN_ENVELOPE, "no envelope_version field")
    version = doc["envelope_version"]
    if version != ENVELOPE_VERSION or isinstance(version, bool):
        return Unreplayable(
            UnreplayableReason.UNSUPPORTED_VERSION,
            f"envelope_version {version!r}; replay reads version {ENVELOPE_VERSION}",
        )
    if doc.get("payload_truncated") is True:
        return Unreplayable(
            UnreplayableReason.PAYLOAD_TRUNCATED, "the envelope holds only a prefix of the payload"
        )
    if doc.get("headers_dropped") is True:
        return Unreplayable(
            UnreplayableReason.HEADERS_DROPPED, "the original headers were left out of the envelope"
        )
    if doc.get("key_truncated") is True:
        return Unreplayable(
            UnreplayableReason.KEY_TRUNCATED, "the envelope holds only a prefix of the key"
        )
    if doc.get("headers_truncated") is True:
        return Unreplayable(
            UnreplayableReason.HEADERS_TRUNCATED, "the envelope holds only the first headers"
        )
    try:
        return _envelope(doc)
    except (ValueError, KeyError, TypeError) as exc:  # DecodeError is a ValueError
        return Unreplayable(UnreplayableReason.MALFORMED, f"{type(exc).__name__}: {exc}"[:200])


def _envelope(doc: Mapping[str, Any]) -> Parsed:
    payload = _bytes(doc["payload"], doc["payload_encoding"])
    length, digest = doc.get("payload_length"), doc.get("payload_sha256")
    if payload is not None and (
        (length is not None and length != len(payload))
        or (digest is not None and digest != hashlib.sha256(payload).hexdigest())
    ):
        return Unreplayable(
            UnreplayableReason.CHECKSUM_MISMATCH,
            "payload does not match payload_length/payload_sha256",
        )
    source = doc["source"]
    original = SourceRecord(
        topic=_str(source["topic"]),
        partition=_int(source["partition"]),
        offset=_int(source["offset"]),
        key=_bytes(doc.get("key"), doc.get("key_encoding")),
        value=payload,
        headers=[_header(item) for item in _list(doc.get("headers") or [])],
        timestamp_ms=None if source.get("timestamp_ms") is None else _int(source["timestamp_ms"]),
        timestamp_type=_int(source.get("timestamp_type", 0)),
    )
    contract = doc["contract"]
    violations = tuple(map(_violation, _list(doc["violations"])))
    replay_count = _int(doc.get("replay_count", 0))
    if replay_count < 0:
        raise ValueError("replay_count is negative")
    return Envelope(
        _str(contract["name"]),
        _str(contract["version"]),
        _str(doc["route"]),
        violations,
        original,
        max(replay_count, replayed_count(original.headers)),
        checked=payload is None or (length is not None and digest is not None),
    )


def _from_headers(record: SourceRecord) -> Parsed:
    """The headers form: the DLQ record's key and value are the original's."""
    original_headers, fields = split_headers(record.headers)

    def text(name: str) -> str:
        value = fields[HEADER_PREFIX + name]
        if value is None:
            raise ValueError(f"header {HEADER_PREFIX}{name} has no value")
        return value.decode("utf-8")

    def number(name: str) -> int:
        value = text(name)
        if not value.isdigit() or len(value) > 18:
            raise ValueError(f"header {HEADER_PREFIX}{name} is not a number")
        return int(value)

    if text("envelope.version") != str(ENVELOPE_VERSION):
        return Unreplayable(
            UnreplayableReason.UNSUPPORTED_VERSION,
            f"envelope version {text('envelope.version')[:20]!r};"
            f" replay reads version {ENVELOPE_VERSION}",
        )
    payload = record.value
    if payload is not None and (
        number("payload.length") != len(payload)
        or text("payload.sha256") != hashlib.sha256(payload).hexdigest()
    ):
        return Unreplayable(
            UnreplayableReason.CHECKSUM_MISMATCH,
            "value does not match sv.dlq.payload.length/sv.dlq.payload.sha256",
        )
    timestamp = fields.get(HEADER_PREFIX + "source.timestamp")
    original = SourceRecord(
        topic=text("source.topic"),
        partition=number("source.partition"),
        offset=number("source.offset"),
        key=record.key,
        value=payload,
        headers=list(original_headers),
        timestamp_ms=None if timestamp is None else number("source.timestamp"),
        timestamp_type=number("source.timestamp.type"),
    )
    violations = tuple(
        map(_violation, _list(decode_json(fields[HEADER_PREFIX + "violations"] or b"")))
    )
    return Envelope(
        text("contract"),
        text("contract.version"),
        text("route"),
        violations,
        original,
        max(number("replay.count"), replayed_count(original_headers)),
    )


def _violation(item: object) -> Violation:
    """One listed violation; ``rule`` and ``action`` are optional (absent before record rules
    and flagged fields existed)."""
    if not isinstance(item, dict):
        raise TypeError(f"a violation must be an object, got {type(item).__name__}")
    v = item
    cls = FlaggedViolation if v.get("action") == "flag" else Violation
    return cls(
        _optional_str(v["field"]),
        _str(v["kind"]),
        _str(v["message"]),
        _optional_str(v.get("rule")),
    )


def _bytes(text: object, encoding: object) -> bytes | None:
    if text is None and encoding is None:
        return None
    if not isinstance(text, str) or not isinstance(encoding, str):
        raise ValueError(f"bad text/encoding pair ({type(text).__name__}, {encoding!r})")
    return text_to_payload(text, encoding)


def _header(item: object) -> tuple[str, bytes | None]:
    if not isinstance(item, list) or len(item) != 3:
        raise ValueError("a header must be [name, value, encoding]")
    return _str(item[0]), _bytes(item[1], item[2])


def _list(value: object) -> list[Any]:
    if not isinstance(value, list):
        raise TypeError(f"expected a list, got {type(value).__name__}")
    return value


def _str(value: object) -> str:
    if not isinstance(value, str):
        raise TypeError(f"expected a string, got {type(value).__name__}")
    return value


def _optional_str(value: object) -> str | None:
    return None if value is None else _str(value)


def _int(value: object) -> int:
    if not isinstance(value, int) or isinstance(value, bool):
        raise TypeError(f"expected an integer, got {type(value).__name__}")
    return value
