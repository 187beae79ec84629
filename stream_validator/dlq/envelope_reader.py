"""PURE: a DLQ record's value back to a typed envelope, or the reason it cannot be replayed.

Only envelope version 1 (``stream_validator.dlq.envelope``) is read. The original record
is rebuilt byte for byte (payload, key and headers via ``codec.text_to_payload``) and its
length and sha256 are checked against the envelope. Parsing never raises: anything else
(garbage, other versions, truncated payloads, dropped headers) becomes ``Unreplayable``.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from dataclasses import dataclass
from enum import StrEnum
from typing import Any

from stream_validator.codec import decode_json, text_to_payload
from stream_validator.dlq.envelope import ENVELOPE_VERSION, SourceRecord
from stream_validator.errors import DecodeError
from stream_validator.verify import Violation

#: Set by a replay on every record it sends on (see ``stream_validator.dlq.replay``).
REPLAY_COUNT_HEADER = "sv.replay.count"


class UnreplayableReason(StrEnum):
    """Why a DLQ record cannot be replayed; stable, used as summary keys."""

    NOT_JSON = "not_json"
    NOT_AN_ENVELOPE = "not_an_envelope"
    UNSUPPORTED_VERSION = "unsupported_envelope_version"
    MALFORMED = "malformed_envelope"
    PAYLOAD_TRUNCATED = "payload_truncated"
    HEADERS_DROPPED = "headers_dropped"
    CHECKSUM_MISMATCH = "payload_checksum_mismatch"
    OVERSIZED = "oversized"


@dataclass(frozen=True, slots=True)
class Envelope:
    """A parsed v1 envelope: the original record, rebuilt byte for byte, and its history.

    ``replay_count`` is how often the record was replayed and quarantined again: the
    envelope's field, or one more than an ``sv.replay.count`` header on the original
    record when that is larger (a replay to the source topic that failed in the service).
    """

    contract_name: str
    contract_version: str
    route: str
    violations: tuple[Violation, ...]
    original: SourceRecord
    replay_count: int


@dataclass(frozen=True, slots=True)
class Unreplayable:
    """A DLQ record that cannot be replayed, and why."""

    reason: UnreplayableReason
    detail: str


Parsed = Envelope | Unreplayable


def parse_envelope(value: bytes | None) -> Parsed:
    """Parse one DLQ record value; never raises."""
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
    violations = tuple(
        Violation(_optional_str(v["field"]), _str(v["kind"]), _str(v["message"]))
        for v in _list(doc["violations"])
    )
    replay_count = _int(doc.get("replay_count", 0))
    if replay_count < 0:
        raise ValueError("replay_count is negative")
    # A record replayed to its source topic and quarantined again by the service gets a
    # fresh envelope (replay_count 0); the header the replay added still counts for it.
    replay_count = max(replay_count, _replayed_before(original.headers))
    return Envelope(
        _str(contract["name"]),
        _str(contract["version"]),
        _str(doc["route"]),
        violations,
        original,
        replay_count,
    )


def _replayed_before(headers: list[tuple[str, bytes | None]]) -> int:
    """1 + the sv.replay.count header of a record a replay sent on, else 0."""
    for name, value in reversed(headers):
        if name == REPLAY_COUNT_HEADER and value is not None and value.isdigit():
            return int(value) + 1
    return 0


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
