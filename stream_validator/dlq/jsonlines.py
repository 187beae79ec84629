"""The offline validator's DLQ format: one JSON line per quarantined input line.

``stream-validator validate --dlq-out`` writes it (the service's DLQ records are the
envelope and headers forms, ``dlq.envelope``). Fields::

    line              the input line's number (1-based, blank lines counted)
    violations        [{"field", "kind", "message"}] as in the envelope
    violation_reason  every message joined by "; "
    raw, raw_encoding the line as text ("utf-8"), or base64 ("base64")

    only for a line over max_payload_bytes that the reader cut short:
    raw_truncated     true: raw holds the line's first max_payload_bytes + 1 bytes
    raw_length        the line's full length in bytes
"""

from __future__ import annotations

from typing import Any

from stream_validator.codec import encode_json, payload_to_text
from stream_validator.verify import QuarantinedRecord, ViolationKind

__all__ = ["dlq_line"]


def dlq_line(
    line_number: int, quarantined: QuarantinedRecord, raw: bytes, length: int | None = None
) -> bytes:
    """One DLQ entry of the offline validator, as a JSON line.

    ``length``: the line's length when ``raw`` is only its start (a line over
    max_payload_bytes that spanned blocks): the entry says so and gives that length."""
    violations = [v.as_dict() for v in quarantined.violations]
    reason = quarantined.violation_reason
    if length is not None:
        said, true = f"payload is {len(raw)} bytes", f"payload is {length} bytes"
        for violation in violations:
            if violation["kind"] == ViolationKind.OVERSIZED:
                violation["message"] = (violation["message"] or "").replace(said, true, 1)
        reason = reason.replace(said, true, 1)
    text, encoding = payload_to_text(raw)
    entry: dict[str, Any] = {
        "line": line_number,
        "violations": violations,
        "violation_reason": reason,
        "raw": text,
        "raw_encoding": encoding,
    }
    if length is not None:
        entry["raw_truncated"] = True
        entry["raw_length"] = length
    return encode_json(entry) + b"\n"
