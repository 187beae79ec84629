"""PURE: the size of a Kafka record as the producer counts it, and fitting text into bytes.

librdkafka refuses a record (``MSG_SIZE_TOO_LARGE``) when key + value + serialized
headers exceed ``message.max.bytes``; the broker then adds the record and batch framing.
Every DLQ record is sized with ``record_size`` against ``max_message_bytes - FRAMING_BYTES``.
"""

from __future__ import annotations

from collections.abc import Sequence

from stream_validator.codec import PAYLOAD_ENCODING_BASE64, encode_json

#: Room left for the record batch header (61 bytes) and the record's own varints.
FRAMING_BYTES = 512


def _varint_size(value: int) -> int:
    """Bytes of a Kafka (zigzag) varint holding a non-negative value."""
    zigzag, size = value << 1, 1
    while zigzag >= 0x80:
        zigzag >>= 7
        size += 1
    return size


def header_size(name: str, value: bytes | None) -> int:
    """Serialized bytes of one record header (name, value and their length varints)."""
    raw = name.encode("utf-8", "surrogatepass")  # never raises; over-counts escapes
    size = _varint_size(len(raw)) + len(raw)
    return size + _varint_size(len(value)) + len(value) if value is not None else size + 1


def headers_size(headers: Sequence[tuple[str, bytes | None]]) -> int:
    """Serialized bytes of a header list, count included."""
    return _varint_size(len(headers)) + sum(header_size(n, v) for n, v in headers)


def record_size(
    key: bytes | None, value: bytes | None, headers: Sequence[tuple[str, bytes | None]]
) -> int:
    """Key + value + headers: what the producer compares with ``message.max.bytes``."""
    return len(key or b"") + len(value or b"") + headers_size(headers)


def record_fits(
    key: bytes | None,
    value: bytes | None,
    headers: Sequence[tuple[str, bytes | None]],
    budget: int,
) -> bool:
    """``record_size(key, value, headers) <= budget``, settled by a cheap upper bound first.

    A DLQ envelope is usually a few KB against a limit of about 1 MB, and the exact size
    (a varint per header name and value) cost about 6 µs per DLQ record. The bound counts
    each varint as 5 bytes (lengths stay below 2**31) and each character of a name as 4.
    """
    bound = len(key or b"") + len(value or b"") + 5
    for name, header_value in headers:
        bound += 10 + 4 * len(name) + (len(header_value) if header_value is not None else 0)
    return bound <= budget or record_size(key, value, headers) <= budget


def json_text_size(text: str) -> int:
    """Bytes the text adds to a JSON document (escaping included, quotes excluded)."""
    return len(encode_json(text)) - 2


def fit_text(text: str, room: int, encoding: str | None) -> str:
    """The longest prefix of text whose JSON form takes at most room bytes.

    A base64 prefix is cut to whole 4-character groups so it still decodes.
    """
    if json_text_size(text) <= room:
        return text
    low, high = 0, min(len(text), max(room, 0))
    while low < high:  # JSON size grows with the prefix: binary search the longest fit
        middle = (low + high + 1) // 2
        if json_text_size(text[:middle]) <= room:
            low = middle
        else:
            high = middle - 1
    if encoding == PAYLOAD_ENCODING_BASE64:
        low -= low % 4
    return text[:low]
