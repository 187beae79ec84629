"""Consumed messages as SourceRecords: no confluent_kafka types past this point."""

from __future__ import annotations

import operator
from collections.abc import Iterable
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
    problems: dict[tuple[str, int, int], str] = {}
    record = read_records([message], problems)[0]
    return record, problems.get((record.topic, record.partition, record.offset))


def read_records(
    messages: Iterable[Message], unreadable: dict[tuple[str, int, int], str]
) -> list[SourceRecord]:
    """Consumed messages (no error events) as SourceRecords; records whose headers were
    dropped go into ``unreadable`` with the reason. Once per record on the hot path: one
    loop, positional arguments, no helper calls when a record has no headers."""
    records: list[SourceRecord] = []
    append = records.append
    for message in messages:
        problem = None
        try:
            raw: Any = _headers(message)
        except SystemError:
            # The half-built list it cached holds a NULL: never call headers() again.
            raw, problem = None, UNREADABLE_HEADERS
        headers = [(str(name), _as_bytes(value)) for name, value in raw] if raw else []
        ts_type, ts = message.timestamp()
        offset = message.offset()
        record = SourceRecord(
            message.topic() or "",
            message.partition() or 0,
            OFFSET_INVALID if offset is None else offset,
            message.key(),  # bytes: the consumer has no deserializers
            message.value(),
            headers,
            None if ts_type == TIMESTAMP_NOT_AVAILABLE else ts,
            ts_type,
        )
        append(record)
        if problem is not None:
            unreadable[(record.topic, record.partition, record.offset)] = problem
    return records


def _as_bytes(value: str | bytes | None) -> bytes | None:
    return value.encode() if isinstance(value, str) else value
