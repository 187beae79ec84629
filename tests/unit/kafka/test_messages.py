"""read_records: consumed messages to SourceRecords, column by column."""

from __future__ import annotations

from confluent_kafka import TIMESTAMP_CREATE_TIME, TIMESTAMP_NOT_AVAILABLE, Message

from stream_validator.kafka.messages import read_records
from stream_validator.records import SourceRecord


def message(offset: int, **kwargs: object) -> Message:
    fields: dict[str, object] = {
        "topic": "md.ticks",
        "partition": offset % 3,
        "offset": offset,
        "key": b"SYM%d" % offset,
        "value": b'{"n": %d}' % offset,
        "headers": None,
        "timestamp": (TIMESTAMP_CREATE_TIME, 1_700_000_000_000 + offset),
    }
    fields.update(kwargs)
    return Message(**fields)


def test_each_field_lands_where_it_belongs() -> None:
    messages = [message(n) for n in range(5)]
    records = read_records(messages, {})
    assert records == [
        SourceRecord(
            topic="md.ticks",
            partition=n % 3,
            offset=n,
            key=b"SYM%d" % n,
            value=b'{"n": %d}' % n,
            headers=[],
            timestamp_ms=1_700_000_000_000 + n,
            timestamp_type=TIMESTAMP_CREATE_TIME,
        )
        for n in range(5)
    ]
    assert all(type(r) is SourceRecord for r in records)
    # Each record gets its own header list (nothing shared between records).
    assert records[0].headers is not records[1].headers


def test_headers_are_kept_in_order_with_bytes_values() -> None:
    headers = [("trace", b"1"), ("trace", None), ("text", "x")]
    records = read_records([message(0), message(1, headers=headers)], {})
    assert records[0].headers == []
    assert records[1].headers == [("trace", b"1"), ("trace", None), ("text", b"x")]


def test_a_missing_timestamp_is_none_and_tombstones_keep_none() -> None:
    unreadable: dict[tuple[str, int, int], str] = {}
    [record] = read_records(
        [message(4, timestamp=(TIMESTAMP_NOT_AVAILABLE, 0), key=None, value=None)], unreadable
    )
    assert (record.timestamp_ms, record.timestamp_type) == (None, TIMESTAMP_NOT_AVAILABLE)
    assert (record.key, record.value) == (None, None)
    assert unreadable == {}


def test_no_messages_no_records() -> None:
    assert read_records([], {}) == []


def test_consumed_style_headers_are_kept_per_record() -> None:
    """Pairs of (str, bytes | None), as the client gives them, come through unchanged, one
    list per record."""
    first, second = [("trace", b"1"), ("empty", None)], [("trace", b"2")]
    records = read_records([message(0, headers=first), message(1), message(2, headers=second)], {})
    assert [r.headers for r in records] == [first, [], second]
    assert records[0].headers is not records[2].headers


def test_one_odd_header_value_is_normalised_without_touching_the_rest() -> None:
    """A str value anywhere in the batch (a hand-built message) still becomes bytes."""
    records = read_records(
        [message(0, headers=[("a", b"1")]), message(1, headers=[("b", "two")])], {}
    )
    assert [r.headers for r in records] == [[("a", b"1")], [("b", b"two")]]
