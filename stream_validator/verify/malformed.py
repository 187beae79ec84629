"""What a batch reports for input that is not a well-formed JSON object. PURE.

One violation each for a tombstone, a value that is not bytes, an oversized or
undecodable payload, a JSON value that is not an object, a mapping whose lookups raise,
and repeated keys; and the shallow ``snapshot`` a quarantined record keeps as DLQ
evidence. None of this is on the path of a valid record.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from typing import Any

from stream_validator.verify.dupkeys import duplicate_keys, no_duplicates_possible
from stream_validator.verify.render import key_name, show, show_name, type_label
from stream_validator.verify.report import MAX_NAMED_VIOLATIONS, Violation, ViolationKind

__all__ = [
    "duplicate_key_violations",
    "duplicates",
    "not_a_mapping",
    "not_bytes",
    "oversized",
    "snapshot",
    "tombstone",
    "undecodable",
    "unreadable_mapping",
]


def tombstone() -> Violation:
    """A null payload (a Kafka tombstone)."""
    return Violation(None, ViolationKind.NOT_A_MAPPING, "payload is null (a Kafka tombstone)")


def not_bytes(payload: object) -> Violation:
    """A payload that is not bytes at all."""
    return Violation(
        None, ViolationKind.NOT_A_MAPPING, f"payload must be bytes, got {type_label(payload)}"
    )


def oversized(size: int, limit: int) -> Violation:
    """A payload over ``max_payload_bytes`` (never decoded)."""
    return Violation(
        None, ViolationKind.OVERSIZED, f"payload is {size} bytes, above max_payload_bytes {limit}"
    )


def undecodable(exc: Exception) -> Violation:
    """Bytes that are not one JSON value."""
    return Violation(None, ViolationKind.UNDECODABLE, f"payload is not valid JSON: {exc}")


def not_a_mapping(value: object) -> Violation:
    """A JSON value (or a record) that is not an object."""
    got = "null" if value is None else f"{type_label(value)} {show(value)}"
    return Violation(
        None, ViolationKind.NOT_A_MAPPING, f"payload is not a JSON object (mapping): got {got}"
    )


def unreadable_mapping(exc: Exception) -> Violation:
    """A Mapping implementation whose lookups raise."""
    return Violation(
        None, ViolationKind.NOT_A_MAPPING, f"mapping could not be read: {type_label(exc)}"
    )


def duplicates(payload: bytes, record: dict[Any, Any]) -> list[str]:
    """The keys a decoded object's payload repeats (none when its size rules it out)."""
    if no_duplicates_possible(payload, len(record)):
        return []
    return duplicate_keys(payload)


def duplicate_key_violations(keys: list[str]) -> list[Violation]:
    """One violation per repeated key, at most MAX_NAMED_VIOLATIONS, then one for the rest."""
    out = [
        Violation(
            key_name(key),
            ViolationKind.DUPLICATE_KEY,
            f"key {show_name(key)} appears more than once in the object"
            " (parsers disagree on which value wins)",
        )
        for key in keys[:MAX_NAMED_VIOLATIONS]
    ]
    more = len(keys) - MAX_NAMED_VIOLATIONS
    if more > 0:
        out.append(
            Violation(
                None,
                ViolationKind.DUPLICATE_KEY,
                f"and {more} more keys appear more than once in the object",
            )
        )
    return out


def snapshot(value: object) -> Any:
    """A shallow copy, so later mutation by the caller cannot rewrite DLQ evidence."""
    if isinstance(value, dict):
        return dict(value)
    if isinstance(value, Mapping):
        try:
            return dict(value)
        except Exception:  # an unreadable mapping is kept as it is
            return value
    if isinstance(value, list | bytearray | set):
        return copy.copy(value)
    return value
