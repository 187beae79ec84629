"""The value types every feature shares: the record read, the record to produce, keys.

No ``confluent_kafka`` types: the Kafka adapter converts at its edge, so the pure core,
the service loop and the replay runner work with these (and the in-memory fake broker
too).
"""

from __future__ import annotations

from typing import Literal, NamedTuple

#: Kafka record headers in order; a name may repeat and a value may be null.
Headers = list[tuple[str, bytes | None]]
#: (topic, partition)
TopicPartitionKey = tuple[str, int]
OutputKind = Literal["clean", "dlq"]


class SourceRecord(NamedTuple):
    """A record as it was read from Kafka (no confluent_kafka types).

    Immutable like the other values; a NamedTuple rather than a frozen dataclass because one is
    built per consumed record and per output: the frozen dataclass's ``__init__`` (one
    ``object.__setattr__`` per field) cost about 1.5 µs each on the hot path, the tuple a third
    of that. Copy with ``_replace``.
    """

    topic: str
    partition: int
    offset: int
    key: bytes | None
    value: bytes | None
    headers: Headers
    timestamp_ms: int | None
    timestamp_type: int = 0


class OutputRecord(NamedTuple):
    """One record to produce, tied to the source record it accounts for (a NamedTuple for
    the same reason as ``SourceRecord``)."""

    kind: OutputKind
    topic: str
    key: bytes | None
    value: bytes | None
    headers: Headers
    timestamp_ms: int | None
    source: SourceRecord
    truncated: bool = False
    first_violation: str | None = None
