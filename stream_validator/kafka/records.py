"""Consumed messages as SourceRecords: no confluent_kafka types past this point."""

from __future__ import annotations

from typing import Any

from confluent_kafka import OFFSET_INVALID, TIMESTAMP_NOT_AVAILABLE, Message

from stream_validator.dlq import SourceRecord


def source_record(message: Message) -> SourceRecord:
    """A consumed message as a SourceRecord (no confluent_kafka types past this point)."""
    ts_type, ts = message.timestamp()
    headers: list[tuple[str, Any]] = list(message.headers() or [])  # type: ignore[arg-type]
    offset = message.offset()
    return SourceRecord(
        topic=message.topic() or "",
        partition=message.partition() or 0,
        offset=offset if offset is not None else OFFSET_INVALID,
        key=_as_bytes(message.key()),
        value=_as_bytes(message.value()),
        headers=[(name, _as_bytes(value)) for name, value in headers],
        timestamp_ms=None if ts_type == TIMESTAMP_NOT_AVAILABLE else ts,
        timestamp_type=ts_type,
    )


def _as_bytes(value: str | bytes | None) -> bytes | None:
    return value.encode() if isinstance(value, str) else value
