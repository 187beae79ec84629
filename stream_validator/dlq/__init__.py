"""The DLQ envelope (versioned JSON) and, later, replay."""

from stream_validator.dlq.envelope import (
    ENVELOPE_VERSION,
    HEADER_PREFIX,
    EnvelopeContext,
    Headers,
    SourceRecord,
    build_envelope,
)

__all__ = [
    "ENVELOPE_VERSION",
    "HEADER_PREFIX",
    "EnvelopeContext",
    "Headers",
    "SourceRecord",
    "build_envelope",
]
