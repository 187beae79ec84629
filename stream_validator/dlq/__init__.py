"""The DLQ formats: the service's DLQ record (envelope form and headers form), writing
and reading it, and the offline validator's DLQ lines (``jsonlines``)."""

from stream_validator.dlq.envelope import build_dlq_record, envelope_document
from stream_validator.dlq.jsonlines import dlq_line
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
    "dlq_line",
    "envelope_document",
]
