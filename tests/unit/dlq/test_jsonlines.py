"""The offline validator's DLQ lines: one JSON line per quarantined input line."""

from __future__ import annotations

import json

from stream_validator.dlq.jsonlines import dlq_line
from stream_validator.verify import QuarantinedRecord, Violation, ViolationKind


def test_a_line_names_its_number_violations_and_raw_text() -> None:
    """A quarantined UTF-8 line: its number, violations, reason and the line as text."""
    raw = b'{"price": "x"}'
    quarantined = QuarantinedRecord(0, raw, [Violation("price", "type_mismatch", "bad price")])
    entry = json.loads(dlq_line(7, quarantined, raw))
    assert entry == {
        "line": 7,
        "violations": [{"field": "price", "kind": "type_mismatch", "message": "bad price"}],
        "violation_reason": "bad price",
        "raw": raw.decode(),
        "raw_encoding": "utf-8",
    }


def test_a_line_cut_short_gives_its_true_length() -> None:
    """A line the reader kept only the start of says so, and its messages give the line's
    full length, not the kept part's."""
    kept = b"[" * 11
    message = "payload is 11 bytes, above max_payload_bytes 10"
    oversized = Violation(None, ViolationKind.OVERSIZED, message)
    line = dlq_line(3, QuarantinedRecord(0, kept, [oversized]), kept, length=5000)
    assert line.endswith(b"\n") and line.count(b"\n") == 1
    entry = json.loads(line)
    assert (entry["raw_truncated"], entry["raw_length"], entry["raw"]) == (True, 5000, "[" * 11)
    assert entry["violations"][0]["message"].startswith("payload is 5000 bytes, above")
    assert entry["violation_reason"].startswith("payload is 5000 bytes, above")
