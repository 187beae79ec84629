"""The DLQ envelope: a versioned JSON document wrapping one quarantined record.

Version 1 fields (see README, "DLQ envelope")::

    envelope_version  1
    contract          {"name", "version"}
    route             route name
    violations        [{"field", "kind", "message"}]
    violation_reason  every message joined by "; "
    payload           original value as text (payload_encoding "utf-8"), base64
                      ("base64"), or null for a tombstone (payload_encoding null)
    payload_length    byte length of the full original value (null for a tombstone)
    payload_sha256    hex digest of the full original value (null for a tombstone)
    payload_truncated true when payload holds only a prefix (the envelope would
                      have exceeded the broker's maximum message size)
    key, key_encoding original key, same encoding rules as the payload
    headers           [[name, value, encoding]] original headers in order
    headers_dropped   true when headers were left out to make the envelope fit
    source            {"topic", "partition", "offset", "timestamp_ms", "timestamp_type"}
    consumer_group, validator_version, validated_at (ISO-8601 UTC), replay_count

The Kafka record also carries ``sv.dlq.*`` headers with the source coordinates,
the contract and the first violation kind, so tools can filter without parsing.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from stream_validator.codec import encode_json, payload_to_text
from stream_validator.verify import Violation

ENVELOPE_VERSION = 1
HEADER_PREFIX = "sv.dlq."
_MAX_VIOLATIONS_WHEN_TRUNCATING = 50
# Bytes kept for the record framing and the sv.dlq.* headers when sizing an envelope.
_FRAMING_BYTES = 2048

Headers = list[tuple[str, bytes | None]]


@dataclass(frozen=True, slots=True)
class SourceRecord:
    """A record as it was read from Kafka (no confluent_kafka types)."""

    topic: str
    partition: int
    offset: int
    key: bytes | None
    value: bytes | None
    headers: Headers
    timestamp_ms: int | None
    timestamp_type: int = 0


@dataclass(frozen=True, slots=True)
class EnvelopeContext:
    """What the service knows about where and when a record was validated."""

    route: str
    contract_name: str
    contract_version: str
    consumer_group: str
    validator_version: str
    validated_at: str
    replay_count: int = 0


def _text_or_none(data: bytes | None) -> tuple[str | None, str | None]:
    if data is None:
        return None, None
    return payload_to_text(data)


def build_envelope(
    record: SourceRecord,
    violations: Sequence[Violation],
    context: EnvelopeContext,
    *,
    max_bytes: int,
) -> tuple[bytes, Headers, bool]:
    """Encode the DLQ envelope and its headers; return (value, headers, truncated).

    An envelope that would exceed ``max_bytes`` is shrunk (payload cut, then headers
    dropped, then violations capped), never refused: the full payload's length and
    sha256 stay in it and ``payload_truncated`` is set.
    """
    payload_text, payload_encoding = _text_or_none(record.value)
    key_text, key_encoding = _text_or_none(record.key)
    document: dict[str, Any] = {
        "envelope_version": ENVELOPE_VERSION,
        "contract": {"name": context.contract_name, "version": context.contract_version},
        "route": context.route,
        "violations": [v.as_dict() for v in violations],
        "violation_reason": "; ".join(v.message for v in violations),
        "payload": payload_text,
        "payload_encoding": payload_encoding,
        "payload_length": None if record.value is None else len(record.value),
        "payload_sha256": None
        if record.value is None
        else hashlib.sha256(record.value).hexdigest(),
        "payload_truncated": False,
        "key": key_text,
        "key_encoding": key_encoding,
        "headers": [[name, *_text_or_none(value)] for name, value in record.headers],
        "headers_dropped": False,
        "source": {
            "topic": record.topic,
            "partition": record.partition,
            "offset": record.offset,
            "timestamp_ms": record.timestamp_ms,
            "timestamp_type": record.timestamp_type,
        },
        "consumer_group": context.consumer_group,
        "validator_version": context.validator_version,
        "validated_at": context.validated_at,
        "replay_count": context.replay_count,
    }
    headers = _dlq_headers(record, violations, context)
    budget = max_bytes - _FRAMING_BYTES - len(record.key or b"")
    encoded = encode_json(document)
    truncated = False
    if len(encoded) > budget:
        truncated = True
        document["payload_truncated"] = True
        if len(document["violations"]) > _MAX_VIOLATIONS_WHEN_TRUNCATING:
            kept = document["violations"][:_MAX_VIOLATIONS_WHEN_TRUNCATING]
            document["violations_omitted"] = len(document["violations"]) - len(kept)
            document["violations"] = kept
            document["violation_reason"] = "; ".join(v["message"] for v in kept) + "; ..."
        if len(encode_json({**document, "payload": ""})) > budget:
            document["headers"] = []
            document["headers_dropped"] = True
        encoded = _fit_payload(document, budget)
    return encoded, headers, truncated


def _fit_payload(document: dict[str, Any], budget: int) -> bytes:
    """Cut the payload text so the encoded envelope fits in budget bytes."""
    text = document["payload"] or ""
    document["payload"] = ""
    overhead = len(encode_json(document))
    room = max(budget - overhead, 0)
    # JSON escaping can grow a character to 6 bytes (\\uXXXX); shrink until it fits.
    cut = text[:room]
    while True:
        document["payload"] = cut
        encoded = encode_json(document)
        if len(encoded) <= budget or not cut:
            return encoded
        cut = cut[: max(len(cut) - (len(encoded) - budget) - 1, 0)]


def _dlq_headers(
    record: SourceRecord, violations: Sequence[Violation], context: EnvelopeContext
) -> Headers:
    first_kind = str(violations[0].kind) if violations else ""
    values = {
        "envelope.version": str(ENVELOPE_VERSION),
        "source.topic": record.topic,
        "source.partition": str(record.partition),
        "source.offset": str(record.offset),
        "contract": context.contract_name,
        "contract.version": context.contract_version,
        "violation.kind": first_kind,
        "route": context.route,
        "replay.count": str(context.replay_count),
    }
    return [(HEADER_PREFIX + name, value.encode()) for name, value in values.items()]
