"""Record-level delivery errors that retrying cannot fix (``kafka.io`` classifies them:
``Status.REFUSED``, codes in ``kafka.ports.RECORD_REJECTIONS``).

The broker refuses some records for good: too large for the topic's ``max.message.bytes``,
a timestamp outside its ``message.timestamp.*`` window, a record its validation rejects
(KIP-467 ``INVALID_RECORD``, e.g. a null key on a compacted topic). Such an error fails the
whole message set the record was sent in, so its batchmates fail too although they are
fine. Hence two steps, both by rewinding the batch, so the same plan works in exactly-once
mode, where one failed record aborts the whole transaction:

1. every output failed that way becomes a *suspect*; the batch is re-read and each suspect
   is produced alone (flushed before and after), so its outcome is its own;
2. a suspect refused alone is *rejected*: on the next re-read its clean output is replaced by
   a DLQ entry of kind ``delivery_rejected`` carrying the broker's error. A DLQ entry refused
   alone cannot go anywhere without loss: the service halts with that reason.
"""

from __future__ import annotations

from dataclasses import dataclass

from stream_validator.records import SourceRecord

Coordinates = tuple[str, int, int]


def coordinates(record: SourceRecord) -> Coordinates:
    """Where a source record was read: (topic, partition, offset)."""
    return (record.topic, record.partition, record.offset)


@dataclass(frozen=True, slots=True)
class Rejection:
    """One output the broker refused with a record-level error."""

    source: SourceRecord
    kind: str  # the output's kind: "clean" or "dlq"
    topic: str
    reason: str
    alone: bool  # produced on its own: the refusal is about this record, not a batchmate


class Rejections:
    """What the service learnt about refused records, kept until their batch commits."""

    def __init__(self) -> None:
        self._suspects: set[Coordinates] = set()
        self._rejected: dict[Coordinates, str] = {}

    @property
    def pending(self) -> bool:
        """Something was learnt that the next batches must act on (until committed)."""
        return bool(self._suspects or self._rejected)

    def produce_alone(self, record: SourceRecord) -> bool:
        """Whether the record's output must be produced on its own."""
        key = coordinates(record)
        return key in self._suspects or key in self._rejected

    def rejected(self, record: SourceRecord) -> str | None:
        """Why the broker refused the record's clean output, produced alone; else None."""
        return self._rejected.get(coordinates(record))

    def learn(self, rejections: list[Rejection]) -> Rejection | None:
        """Remember this round's refusals; return a DLQ entry refused alone (a dead end)."""
        for rejection in rejections:
            key = coordinates(rejection.source)
            if rejection.alone and rejection.kind == "dlq":
                return rejection
            if rejection.alone:
                self._rejected[key] = f"{rejection.topic}: {rejection.reason}"
            self._suspects.add(key)
        return None

    def forget(self, committed: dict[tuple[str, int], int]) -> None:
        """Drop what concerns records below the committed offsets."""
        if not self._suspects and not self._rejected:
            return

        def done(key: Coordinates) -> bool:
            return key[2] < committed.get((key[0], key[1]), -1)

        self._suspects = {k for k in self._suspects if not done(k)}
        self._rejected = {k: v for k, v in self._rejected.items() if not done(k)}

    def forget_partitions(self, partitions: list[tuple[str, int]]) -> None:
        """Drop what concerns partitions this member no longer owns."""
        gone = set(partitions)
        self._suspects = {k for k in self._suspects if (k[0], k[1]) not in gone}
        self._rejected = {k: v for k, v in self._rejected.items() if (k[0], k[1]) not in gone}
