"""The DLQ record format (envelope form and headers form), writing and reading it."""

from stream_validator.dlq.envelope import build_dlq_record, envelope_document
from stream_validator.dlq.records import (
    ENVELOPE_VERSION,
    FORMAT_HEADER,
    HEADER_PREFIX,
    DlqRecord,
    EnvelopeContext,
)

__all__ = [
    "ENVELOPE_VERSION",
    "FORMAT_HEADER",
    "HEADER_PREFIX",
    "DlqRecord",
    "EnvelopeContext",
    "build_dlq_record",
    "envelope_document",
]
