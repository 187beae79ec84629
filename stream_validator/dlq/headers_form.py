"""PURE: the headers form of a DLQ record (Kafka Connect's convention).

Used when the JSON envelope would exceed the message limit (escaping and base64 can grow
a payload up to six-fold) but the original record fits: the DLQ record is the original
key, value and headers, byte for byte, followed by the envelope's fields as headers::

    sv.dlq.format            "headers" (the marker)
    sv.dlq.headers.count     how many headers before the sv.dlq.* ones are the original's
    sv.dlq.envelope.version, sv.dlq.source.{topic,partition,offset}, sv.dlq.contract,
    sv.dlq.contract.version, sv.dlq.violation.kind, sv.dlq.route, sv.dlq.replay.count
                             as on every DLQ record
    sv.dlq.source.timestamp  epoch ms (no value when the source had none)
    sv.dlq.source.timestamp.type
    sv.dlq.violations        the envelope's violations as a JSON list (each with ``rule``
                             when it is a rule_violation)
    sv.dlq.violations.omitted  present when only the first 50 are listed
    sv.dlq.consumer.group, sv.dlq.validator.version, sv.dlq.validated.at
    sv.dlq.payload.length, sv.dlq.payload.sha256   (absent for a tombstone)

Readers take the last occurrence of each ``sv.dlq.*`` name, so an original record that
already carried such headers is still read correctly. Extra headers (a replay's
``sv.replay.*``, Kafka Connect's ``__connect.errors.*`` with ``dlq.connect_headers``) follow
the ``sv.dlq.*`` ones; readers ignore them.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping, Sequence

from stream_validator.codec import encode_json
from stream_validator.dlq.budget import record_fits
from stream_validator.dlq.records import HEADER_PREFIX, DlqRecord, EnvelopeContext, dlq_headers
from stream_validator.records import Headers, SourceRecord
from stream_validator.verify import Violation

HEADERS_COUNT = HEADER_PREFIX + "headers.count"
_MAX_VIOLATIONS = 50
# Violation messages can quote payload-derived names; cut them before cutting the payload
# (50 short violations take about 20 KB, well inside the default 48 KB of headroom).
_MAX_TEXT = 200


def build_headers_form(
    record: SourceRecord,
    violations: Sequence[Violation],
    context: EnvelopeContext,
    *,
    budget: int,
    extra_headers: Headers,
) -> DlqRecord | None:
    """The headers-form DLQ record, or None when even it exceeds ``budget`` bytes."""
    short = [
        Violation(
            None if v.field is None else v.field[:_MAX_TEXT], v.kind, v.message[:_MAX_TEXT], v.rule
        )
        for v in violations[:_MAX_VIOLATIONS]
    ]
    for shown in (violations, short):
        headers = list(record.headers) + _fields(record, shown, len(violations), context)
        headers += extra_headers
        if record_fits(record.key, record.value, headers, budget):
            return DlqRecord(record.key, record.value, headers, "headers", False)
    return None


def _fields(
    record: SourceRecord, violations: Sequence[Violation], total: int, context: EnvelopeContext
) -> Headers:
    fields: dict[str, bytes | None] = {
        "headers.count": str(len(record.headers)).encode(),
        "source.timestamp": None
        if record.timestamp_ms is None
        else str(record.timestamp_ms).encode(),
        "source.timestamp.type": str(record.timestamp_type).encode(),
        "violations": encode_json([v.as_dict() for v in violations]),
        "consumer.group": context.consumer_group.encode(),
        "validator.version": context.validator_version.encode(),
        "validated.at": context.validated_at.encode(),
    }
    if total > len(violations):
        fields["violations.omitted"] = str(total - len(violations)).encode()
    if record.value is not None:
        fields["payload.length"] = str(len(record.value)).encode()
        fields["payload.sha256"] = hashlib.sha256(record.value).hexdigest().encode()
    return dlq_headers(record, violations, context, "headers") + [
        (HEADER_PREFIX + name, value) for name, value in fields.items()
    ]


def split_headers(headers: Headers) -> tuple[Headers, Mapping[str, bytes | None]]:
    """(the original record's headers, the last value of each sv.dlq.* header).

    Raise ValueError when ``sv.dlq.headers.count`` is missing or out of range.
    """
    fields: dict[str, bytes | None] = {}
    for name, value in headers:
        if name.startswith(HEADER_PREFIX):
            fields[name] = value
    count = fields.get(HEADERS_COUNT)
    if count is None or not count.isdigit() or len(count) > 9 or int(count) > len(headers):
        raise ValueError(f"{HEADERS_COUNT} is missing or out of range")
    return headers[: int(count)], fields
