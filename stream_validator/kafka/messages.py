"""Consumed messages as SourceRecords: no confluent_kafka types past this point."""

from __future__ import annotations

import operator
from typing import Any

from confluent_kafka import OFFSET_INVALID, TIMESTAMP_NOT_AVAILABLE, Message

from stream_validator.records import SourceRecord

UNREADABLE_HEADERS = "header names are not valid UTF-8; the Kafka client cannot read the headers"

# confluent-kafka decodes header names as UTF-8 and, on failure, returns a list holding a NULL
# with the error still pending. Only a call through the C API's result check turns that into
# a SystemError: once CPython specialises a plain ``message.headers()`` call site, the check is
# skipped and iterating the list crashes the interpreter. methodcaller always goes through it.
_headers = operator.methodcaller("headers")


def source_record(message: Message) -> SourceRecord:
    """A consumed message as a SourceRecord (headers the client cannot decode are dropped)."""
    return read_record(message)[0]


def read_record(message: Message) -> tuple[SourceRecord, str | None]:
    """A consumed message as a SourceRecord, and why its headers were dropped (or None)."""
    ts_type, ts = message.timestamp()
    problem: str | None = None
    try:
        raw: Any = _headers(message) or []
        headers = [(str(name), _as_bytes(value)) for name, value in raw]
    except SystemError:
        # The half-built list it cached holds a NULL: never call headers() again.
        headers, problem = [], UNREADABLE_HEADERS
    offset = message.offset()
    record = SourceRecord(
        topic=message.topic() or "",
        partition=message.partition() or 0,
        offset=offset if offset is not None else OFFSET_INVALID,
        key=_as_bytes(message.key()),
        value=_as_bytes(message.value()),
        headers=headers,
        timestamp_ms=None if ts_type == TIMESTAMP_NOT_AVAILABLE else ts,
        timestamp_type=ts_type,
    )
    return record, problem


def _as_bytes(value: str | bytes | None) -> bytes | None:
    return value.encode() if isinstance(value, str) else value
