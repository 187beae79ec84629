"""The DLQ record of one quarantined record, in one of two forms, always within the limit.

The record format (both forms, every field and header, the byte budget) is specified once, in
docs/service/dlq-format.md; this module writes it. The envelope form is built here; the headers
form, used when the envelope would not fit but the original record does, by
``stream_validator.dlq.headers_form``. The budget (``max_bytes - FRAMING_BYTES``) covers key,
value and every header name and value, JSON escaping and base64 growth included; when neither
form fits, a truncated envelope is written, whatever is cut flagged with its full length and
sha256, so a DLQ record is always produced and nothing is dropped silently. With
``dlq.connect_headers`` Kafka Connect's ``__connect.errors.*`` headers are written too, in either
form (``stream_validator.dlq.connect``).
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from typing import Any

from stream_validator.codec import encode_json, payload_to_text
from stream_validator.dlq import connect
from stream_validator.dlq.budget import FRAMING_BYTES, fit_text, headers_size, record_fits
from stream_validator.dlq.headers_form import build_headers_form
from stream_validator.dlq.records import (
    ENVELOPE_VERSION,
    DlqRecord,
    EnvelopeContext,
    dlq_headers,
    headers_sha256,
)
from stream_validator.records import Headers, SourceRecord
from stream_validator.verify import Violation

MAX_VIOLATIONS_WHEN_TRUNCATING = 50
# Violation texts can quote payload-derived names: capped in a truncated envelope.
_MAX_TEXT = 200


def _text_or_none(data: bytes | None) -> tuple[str | None, str | None]:
    if data is None:
        return None, None
    return payload_to_text(data)


def envelope_document(
    record: SourceRecord, violations: Sequence[Violation], context: EnvelopeContext
) -> dict[str, Any]:
    """The complete version 1 envelope of a record (nothing cut)."""
    value = record.value
    if value is None:
        payload_text = payload_encoding = payload_sha256 = None
    else:
        payload_text, payload_encoding = payload_to_text(value)
        payload_sha256 = hashlib.sha256(value).hexdigest()
    key_text, key_encoding = _text_or_none(record.key)
    document = {
        "envelope_version": ENVELOPE_VERSION,
        "contract": {"name": context.contract_name, "version": context.contract_version},
        "route": context.route,
        "violations": [v.as_dict() for v in violations],
        "violation_reason": "; ".join([v.message for v in violations]),
        "payload": payload_text,
        "payload_encoding": payload_encoding,
        "payload_length": None if value is None else len(value),
        "payload_sha256": payload_sha256,
        "payload_truncated": False,
        "key": key_text,
        "key_encoding": key_encoding,
        "headers": [[name, *_text_or_none(data)] for name, data in record.headers],
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
    if context.schema_id is not None or context.schema_guid is not None:
        document["schema"] = _schema(context)
    return document


def _schema(context: EnvelopeContext) -> dict[str, Any]:
    """A registry-format record's writer schema (id, GUID when known, version)."""
    schema: dict[str, Any] = {"id": context.schema_id}
    if context.schema_guid is not None:
        schema["guid"] = context.schema_guid
    schema["version"] = context.schema_version
    return schema


def build_dlq_record(
    record: SourceRecord,
    violations: Sequence[Violation],
    context: EnvelopeContext,
    *,
    max_bytes: int,
    extra_headers: Headers | None = None,
    connect_headers: bool = False,
) -> DlqRecord:
    """The DLQ record (envelope form, else headers form, else truncated envelope).

    ``extra_headers`` (e.g. a replay's ``sv.replay.*``) are appended and budgeted too, then,
    with ``connect_headers``, Kafka Connect's ``__connect.errors.*`` (``dlq.connect``).
    """
    budget = max_bytes - FRAMING_BYTES
    extra = list(extra_headers or [])
    if connect_headers:
        extra += connect.connect_headers(record, violations, context)
    headers = dlq_headers(record, violations, context, "envelope") + extra
    document = envelope_document(record, violations, context)
    value = encode_json(document)
    if record_fits(record.key, value, headers, budget):
        return DlqRecord(record.key, value, headers, "envelope", False)
    raw = build_headers_form(record, violations, context, budget=budget, extra_headers=extra)
    if raw is not None:
        return raw
    return _truncated_envelope(record, document, headers, budget)


def _truncated_envelope(
    record: SourceRecord, document: dict[str, Any], headers: Headers, budget: int
) -> DlqRecord:
    key = record.key
    if key is not None and len(key) > budget // 8:
        # Still a stable partitioning key for the same original key, and small.
        key = hashlib.sha256(key).hexdigest().encode()
    room = budget - len(key or b"") - headers_size(headers)
    everything = document["violations"]
    kept = [
        {**v, "field": v["field"] and v["field"][:_MAX_TEXT], "message": v["message"][:_MAX_TEXT]}
        for v in everything[:MAX_VIOLATIONS_WHEN_TRUNCATING]
    ]
    if len(kept) < len(everything):
        document["violations_omitted"] = len(everything) - len(kept)
    document["violations"] = kept
    document["violation_reason"] = "; ".join(v["message"] for v in kept)[: _MAX_TEXT * 10]
    payload, key_text, original_headers = document["payload"], document["key"], document["headers"]
    # Size the skeleton with every truncation marker present: removing one only shrinks it.
    document.update(payload="" if payload is not None else None, payload_truncated=True)
    if payload is None:
        document["payload_truncated"] = False
    if key_text is not None:
        assert record.key is not None
        document.update(
            key="",
            key_truncated=True,
            key_length=len(record.key),
            key_sha256=hashlib.sha256(record.key).hexdigest(),
        )
    document.update(
        headers=[],
        headers_truncated=True,
        headers_count=len(original_headers),
        headers_sha256=headers_sha256(record.headers),
    )
    # payload_truncated false is one byte longer than true.
    left = room - len(encode_json(document)) - 1
    if left < 0:  # only a pathological violation list gets here: keep its count
        document["violations_omitted"] = document.get("violations_omitted", 0) + len(
            document["violations"]
        )
        document["violations"] = []
        document["violation_reason"] = ""
        left = room - len(encode_json(document)) - 1
    if payload is not None:
        document["payload"] = fit_text(payload, left, document["payload_encoding"])
        left -= len(encode_json(document["payload"])) - 2
        document["payload_truncated"] = document["payload"] != payload
    if key_text is not None:
        document["key"] = fit_text(key_text, left, document["key_encoding"])
        left -= len(encode_json(document["key"])) - 2
        if document["key"] == key_text:
            for name in ("key_truncated", "key_length", "key_sha256"):
                del document[name]
    kept_headers: list[Any] = []
    for item in original_headers:
        size = len(encode_json(item)) + 1  # the comma
        if size > left:
            break
        kept_headers.append(item)
        left -= size
    document["headers"] = kept_headers
    if len(kept_headers) == len(original_headers):
        for name in ("headers_truncated", "headers_count", "headers_sha256"):
            del document[name]
    value = encode_json(document)
    truncated = any(
        document.get(flag) is True
        for flag in ("payload_truncated", "key_truncated", "headers_truncated")
    )
    return DlqRecord(key, value, headers, "envelope", truncated)
