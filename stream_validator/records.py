"""The value types every feature shares: the record read, the record to produce, keys.

No ``confluent_kafka`` types: the Kafka adapter converts at its edge, so the pure core,
the service loop and the replay runner work with these (and the in-memory fake broker
too).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

#: Kafka record headers in order; a name may repeat and a value may be null.
Headers = list[tuple[str, bytes | None]]
#: (topic, partition)
TopicPartitionKey = tuple[str, int]
OutputKind = Literal["clean", "dlq"]


@dataclass(frozen=True, slots=True)
class SourceRecord:
    """A record as it was read from Kafka (no confluent_kafka types)."""

    topic: str
    partition: int
    offset: int
    key: bytes | None
    value: bytes | None
    headers: Headers
    timestamp_ms: int | None
    timestamp_type: int = 0


@dataclass(frozen=True, slots=True)
class OutputRecord:
    """One record to produce, tied to the source record it accounts for."""

    kind: OutputKind
    topic: str
    key: bytes | None
    value: bytes | None
    headers: Headers
    timestamp_ms: int | None
    source: SourceRecord
    truncated: bool = False
    first_violation: str | None = None
