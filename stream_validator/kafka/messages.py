"""Consumed messages as SourceRecords: no confluent_kafka types past this point."""

from __future__ import annotations

from collections.abc import Sequence
from itertools import chain, repeat
from operator import itemgetter
from typing import Any

from confluent_kafka import OFFSET_INVALID, TIMESTAMP_NOT_AVAILABLE, Message

from stream_validator.records import SourceRecord

UNREADABLE_HEADERS = "header names are not valid UTF-8; the Kafka client cannot read the headers"

# confluent-kafka decodes header names as UTF-8 and, on failure, returns a list holding a NULL
# with the error still pending. Only a call through the C API's result check turns that into
# a SystemError: once CPython specialises a plain ``message.headers()`` call site, the check is
# skipped and iterating the list crashes the interpreter. So the methods are only ever called
# through ``map`` (vectorcall with the result check: the SystemError is raised), never as
# ``message.headers()``; calling them column by column also keeps Python frames per record out.
_headers = Message.headers
_topic = Message.topic
_partition = Message.partition
_offset = Message.offset
_key = Message.key
_value = Message.value
_timestamp = Message.timestamp
_new_tuple = tuple.__new__


def source_record(message: Message) -> SourceRecord:
    """A consumed message as a SourceRecord (headers the client cannot decode are dropped)."""
    return read_record(message)[0]


def read_record(message: Message) -> tuple[SourceRecord, str | None]:
    """A consumed message as a SourceRecord, and why its headers were dropped (or None)."""
    problems: dict[tuple[str, int, int], str] = {}
    record = read_records([message], problems)[0]
    return record, problems.get((record.topic, record.partition, record.offset))


def read_records(
    messages: Sequence[Message], unreadable: dict[tuple[str, int, int], str]
) -> list[SourceRecord]:
    """Consumed messages (no error events) as SourceRecords; records whose headers were
    dropped go into ``unreadable`` with the reason.

    Once per record on the hot path, so it works column by column: each ``map`` over an
    unbound ``Message`` method and the final ``tuple.__new__`` over ``zip`` run in C, with
    no Python frame per record (about a third of the cost of one loop building each record).
    """
    raw = _raw_headers(messages, unreadable)
    headers = _record_headers(raw) if any(raw) else [[] for _ in raw]
    stamps = list(map(_timestamp, messages))
    kinds = list(map(_KIND, stamps))  # column by column, in C
    times: list[int | None] = list(map(_TIME, stamps))
    if TIMESTAMP_NOT_AVAILABLE in kinds:  # no timestamp: None, not the client's -1
        times = [
            None if kind == TIMESTAMP_NOT_AVAILABLE else ts
            for kind, ts in zip(kinds, times, strict=True)
        ]
    offsets: list[int | None] = list(map(_offset, messages))
    if None in offsets:  # never for a record (only for error events); kept total anyway
        offsets = [OFFSET_INVALID if offset is None else offset for offset in offsets]
    return list(
        map(
            _new_tuple,
            repeat(SourceRecord),
            zip(
                map(_topic, messages),
                map(_partition, messages),
                offsets,
                map(_key, messages),  # bytes: the consumer has no deserializers
                map(_value, messages),
                headers,
                times,
                kinds,
                strict=True,
            ),
        )
    )


def _raw_headers(
    messages: Sequence[Message], unreadable: dict[tuple[str, int, int], str]
) -> list[Any]:
    """Each message's raw headers; None (and a note in ``unreadable``) where the client
    cannot decode them (rare: a header name that is not UTF-8)."""
    raw: list[Any] = []
    while True:
        try:
            # extend() keeps what it appended before an exception: len(raw) is the culprit.
            raw.extend(map(_headers, messages[len(raw) :] if raw else messages))
            return raw
        except SystemError:
            # Its cached half-built list holds a NULL: never call headers() on it again.
            message = messages[len(raw)]
            raw.append(None)
            offset = message.offset()
            where = (message.topic() or "", message.partition() or 0, offset)
            unreadable[(where[0], where[1], OFFSET_INVALID if offset is None else offset)] = (
                UNREADABLE_HEADERS
            )


_NAME, _VALUE = itemgetter(0), itemgetter(1)
_KIND, _TIME = itemgetter(0), itemgetter(1)  # of Message.timestamp()
_HEADER_VALUE_TYPES = frozenset({bytes, type(None)})


def _record_headers(raw: list[Any]) -> list[Any]:
    """Each record's header list. The client's own lists are kept when they already hold
    (str, bytes | None) pairs, as consumed messages' always do: checked for the whole batch
    in C, not rebuilt pair by pair in Python (a third of the cost of reading a record that
    carries a header or two)."""
    pairs = list(chain.from_iterable(filter(None, raw)))
    if (
        set(map(type, map(_NAME, pairs))) == {str}
        and set(map(type, map(_VALUE, pairs))) <= _HEADER_VALUE_TYPES
    ):
        return [h if h else [] for h in raw]
    return [[(str(name), _as_bytes(value)) for name, value in h] if h else [] for h in raw]


def _as_bytes(value: str | bytes | None) -> bytes | None:
    return value.encode() if isinstance(value, str) else value
