"""The DLQ record format (envelope form and headers form) and replay."""

from stream_validator.dlq.envelope import build_dlq_record, envelope_document
from stream_validator.dlq.records import (
    ENVELOPE_VERSION,
    FORMAT_HEADER,
    HEADER_PREFIX,
    DlqRecord,
    EnvelopeContext,
    Headers,
    SourceRecord,
)

__all__ = [
    "ENVELOPE_VERSION",
    "FORMAT_HEADER",
    "HEADER_PREFIX",
    "DlqRecord",
    "EnvelopeContext",
    "Headers",
    "SourceRecord",
    "build_dlq_record",
    "envelope_document",
]
