"""PURE: Kafka Connect's ``__connect.errors.*`` headers on a DLQ record (``dlq.connect_headers``).

Kafka Connect's dead letter queue (``errors.deadletterqueue.context.headers.enable``) names
the failed record and the error in headers, every value a UTF-8 string (numbers in decimal);
tools that redrive Connect DLQs read them. With the option on, every DLQ record, in either
form, carries them after its own ``sv.dlq.*`` headers (which stay)::

    __connect.errors.topic                 the source record's topic
    __connect.errors.partition             its partition
    __connect.errors.offset                its offset
    __connect.errors.connector.name        the route
    __connect.errors.stage                 the step that failed, as Connect names it (below)
    __connect.errors.exception.class.name  stream_validator.violation.<kind>, the first
                                           violation's kind (as ``sv.dlq.violation.kind``)
    __connect.errors.exception.message     the violation messages joined by "; " (as the
                                           envelope's ``violation_reason``), cut to 1000 bytes

The stage: ``VALUE_CONVERTER`` when the value could not be read as a record (undecodable,
duplicate key, not a JSON object), ``HEADER_CONVERTER`` when the headers could not,
``KAFKA_PRODUCE`` when the record cannot be written to the clean topic (oversized, refused
by the broker), else ``TRANSFORMATION``: the contract's checks, between reading a record and
delivering it, are where a Connect pipeline runs its transforms and filters.

Not written, having no counterpart here: ``task.id`` (no tasks), ``class.name`` (the executing
Connect plugin) and ``exception.stacktrace`` (a record that breaks a contract raises nothing).
In the headers form the original record's headers come first; a reader that takes the last
header of a name (Kafka's ``Headers.lastHeader``) reads these even when the original record
came out of a Connect DLQ itself.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Final

from stream_validator.dlq.records import EnvelopeContext
from stream_validator.records import Headers, SourceRecord
from stream_validator.verify import Violation, ViolationKind

PREFIX: Final = "__connect.errors."
TOPIC: Final = PREFIX + "topic"
PARTITION: Final = PREFIX + "partition"
OFFSET: Final = PREFIX + "offset"
CONNECTOR: Final = PREFIX + "connector.name"
STAGE: Final = PREFIX + "stage"
EXCEPTION_CLASS: Final = PREFIX + "exception.class.name"
EXCEPTION_MESSAGE: Final = PREFIX + "exception.message"
#: The exception class name: this prefix and the first violation's kind.
CLASS_PREFIX: Final = "stream_validator.violation"
#: The message's cap in bytes (messages can quote payload-derived field names).
MAX_MESSAGE_BYTES: Final = 1000

_UNREADABLE: Final = frozenset(
    {ViolationKind.UNDECODABLE, ViolationKind.DUPLICATE_KEY, ViolationKind.NOT_A_MAPPING}
)
_UNWRITABLE: Final = frozenset({ViolationKind.OVERSIZED, ViolationKind.DELIVERY_REJECTED})


def connect_headers(
    record: SourceRecord, violations: Sequence[Violation], context: EnvelopeContext
) -> Headers:
    """The ``__connect.errors.*`` headers of the DLQ record of ``record``."""
    first = violations[0] if violations else None
    kind = "" if first is None else str(first.kind)
    values = [
        (TOPIC, record.topic),
        (PARTITION, str(record.partition)),
        (OFFSET, str(record.offset)),
        (CONNECTOR, context.route),
        (STAGE, stage(first)),
        (EXCEPTION_CLASS, f"{CLASS_PREFIX}.{kind}" if kind else CLASS_PREFIX),
    ]
    headers: Headers = [(name, value.encode("utf-8", "replace")) for name, value in values]
    headers.append((EXCEPTION_MESSAGE, _message(violations)))
    return headers


def stage(violation: Violation | None) -> str:
    """Connect's name of the step that failed (see the module docstring)."""
    if violation is None:
        return "TRANSFORMATION"
    if violation.kind in _UNREADABLE:
        return "HEADER_CONVERTER" if violation.field == "headers" else "VALUE_CONVERTER"
    if violation.kind in _UNWRITABLE:
        return "KAFKA_PRODUCE"
    return "TRANSFORMATION"


def _message(violations: Sequence[Violation]) -> bytes:
    """The messages joined by "; ", at most MAX_MESSAGE_BYTES of UTF-8 (cut between
    characters); a lone surrogate becomes "?"."""
    parts: list[str] = []
    size = 0
    for violation in violations:  # stop joining once past the cap: a batch can hold many
        parts.append(violation.message)
        size += len(violation.message) + 2
        if size > MAX_MESSAGE_BYTES:
            break
    data = "; ".join(parts).encode("utf-8", "replace")
    if len(data) <= MAX_MESSAGE_BYTES:
        return data
    return data[:MAX_MESSAGE_BYTES].decode("utf-8", "ignore").encode()
