"""PURE: which DLQ records a replay selects.

A ``Selection`` is a replay's range (DLQ offsets, DLQ record timestamps) plus its
filters (violation kind, field, rule, source topic, contract version) and the route whose
envelopes it replays. Values within one filter are alternatives (OR); different
filters must all hold (AND). When both ``kinds`` and ``fields`` are given, one
violation must match both (``--kind type_mismatch --field price`` means "a type
mismatch on price", not "any type mismatch on a record that has any price problem").
``rules``: some listed violation names one of them (``rule``; a flag rule listed on a
record quarantined for something else counts too).

Its canonical JSON is committed as the metadata of the replay's consumer group and its
digest names that group, so a later replay can tell exactly which records an earlier
one settled (``stream_validator.replay.planner.Coverage``).
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from stream_validator.codec import decode_json, encode_json
from stream_validator.verify import Violation

SELECTION_FORMAT = 1
#: The violation field name of record-level violations, as the reports spell it.
RECORD_FIELD = "<record>"


@dataclass(frozen=True, slots=True)
class OffsetBound:
    """An offset for every partition (``default``) with per-partition exceptions."""

    default: int | None = None
    partitions: tuple[tuple[int, int], ...] = ()

    def get(self, partition: int) -> int | None:
        """The bound of one partition, or None when unbounded."""
        for number, offset in self.partitions:
            if number == partition:
                return offset
        return self.default

    def is_set(self) -> bool:
        """True when any partition is bounded."""
        return self.default is not None or bool(self.partitions)

    def as_json(self) -> dict[str, Any]:
        """The JSON-ready form (stable key order)."""
        return {"default": self.default, "partitions": {str(p): o for p, o in self.partitions}}

    @classmethod
    def from_json(cls, value: Mapping[str, Any]) -> OffsetBound:
        """Invert as_json; raise ValueError on anything else."""
        default = value.get("default")
        parts = value.get("partitions") or {}
        if default is not None and not _is_int(default):
            raise ValueError("offset bound default must be an integer")
        if not isinstance(parts, Mapping) or not all(_is_int(o) for o in parts.values()):
            raise ValueError("offset bound partitions must map partitions to offsets")
        return cls(default, tuple(sorted((int(p), int(o)) for p, o in parts.items())))


_MAX_OFFSET, _MAX_PARTITION = 2**63 - 1, 2**31 - 1


def parse_offset_bound(texts: Iterable[str]) -> OffsetBound:
    """``N`` (every partition) or ``P:N`` (one partition), repeatable; raise ValueError."""
    default: int | None = None
    partitions: dict[int, int] = {}
    for text in texts:
        partition, sep, offset = text.rpartition(":")
        try:
            value = int(offset)
            number = int(partition) if sep else None
        except ValueError:
            raise ValueError(f"not an offset (N or PARTITION:N): {text!r}") from None
        if value < 0 or (number is not None and number < 0):
            raise ValueError(f"offsets and partitions must be >= 0: {text!r}")
        if value > _MAX_OFFSET or (number is not None and number > _MAX_PARTITION):
            raise ValueError(f"offsets are int64 and partitions int32 in Kafka: {text!r}")
        if number is None:
            default = value
        else:
            partitions[number] = value
    return OffsetBound(default, tuple(sorted(partitions.items())))


@dataclass(frozen=True, slots=True)
class Selection:
    """The DLQ records one replay looks at; see the module docstring for the semantics."""

    route: str | None = None
    kinds: frozenset[str] = frozenset()
    fields: frozenset[str] = frozenset()
    rules: frozenset[str] = frozenset()
    source_topics: frozenset[str] = frozenset()
    contract_versions: frozenset[str] = frozenset()
    from_ms: int | None = None
    until_ms: int | None = None
    from_offset: OffsetBound = field(default_factory=OffsetBound)
    until_offset: OffsetBound = field(default_factory=OffsetBound)

    def in_range(self, partition: int, offset: int, timestamp_ms: int | None) -> bool:
        """True when a DLQ record lies within the offset range and [from_ms, until_ms)."""
        low, high = self.from_offset.get(partition), self.until_offset.get(partition)
        if (low is not None and offset < low) or (high is not None and offset >= high):
            return False
        if self.from_ms is None and self.until_ms is None:
            return True
        if timestamp_ms is None:
            return False
        if self.from_ms is not None and timestamp_ms < self.from_ms:
            return False
        return self.until_ms is None or timestamp_ms < self.until_ms

    def rejects(
        self,
        *,
        route: str,
        contract_version: str,
        source_topic: str,
        violations: Sequence[Violation],
    ) -> str | None:
        """Why an envelope is filtered out (the filter's name), or None when it is selected."""
        if self.route is not None and route != self.route:
            return "route"
        if self.source_topics and source_topic not in self.source_topics:
            return "source_topic"
        if self.contract_versions and contract_version not in self.contract_versions:
            return "contract_version"
        if self.kinds or self.fields:
            matched = any(
                (not self.kinds or str(v.kind) in self.kinds)
                and (not self.fields or (v.field or RECORD_FIELD) in self.fields)
                for v in violations
            )
            if not matched:
                return "kind" if self.kinds else "field"
        if self.rules and not any(v.rule in self.rules for v in violations):
            return "rule"
        return None

    def as_json(self) -> dict[str, Any]:
        """The canonical JSON-ready form (sorted sets, every key present but ``rules``,
        present only when set, so selections made before it keep their digest)."""
        out: dict[str, Any] = {
            "format": SELECTION_FORMAT,
            "route": self.route,
            "kinds": sorted(self.kinds),
            "fields": sorted(self.fields),
            "source_topics": sorted(self.source_topics),
            "contract_versions": sorted(self.contract_versions),
            "from_ms": self.from_ms,
            "until_ms": self.until_ms,
            "from_offset": self.from_offset.as_json(),
            "until_offset": self.until_offset.as_json(),
        }
        if self.rules:
            out["rules"] = sorted(self.rules)
        return out

    def encode(self) -> str:
        """Canonical compact JSON text (the consumer group's commit metadata)."""
        return encode_json(self.as_json(), sort_keys=True).decode()

    def digest(self) -> str:
        """A short stable digest of encode(): the suffix of the replay's group name."""
        return hashlib.sha256(self.encode().encode()).hexdigest()[:12]

    @classmethod
    def decode(cls, text: str) -> Selection:
        """Invert encode(); raise ValueError (DecodeError is one) on anything else."""
        doc = decode_json(text)
        if not isinstance(doc, dict) or doc.get("format") != SELECTION_FORMAT:
            raise ValueError("not a replay selection (format 1)")
        try:
            return cls(
                route=_optional_str(doc["route"]),
                kinds=_str_set(doc["kinds"]),
                fields=_str_set(doc["fields"]),
                rules=_str_set(doc.get("rules", [])),
                source_topics=_str_set(doc["source_topics"]),
                contract_versions=_str_set(doc["contract_versions"]),
                from_ms=_optional_int(doc["from_ms"]),
                until_ms=_optional_int(doc["until_ms"]),
                from_offset=OffsetBound.from_json(doc["from_offset"]),
                until_offset=OffsetBound.from_json(doc["until_offset"]),
            )
        except (KeyError, TypeError, AttributeError) as exc:
            raise ValueError(f"malformed replay selection: {exc!r}") from None


def _is_int(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _optional_int(value: object) -> int | None:
    if value is None or _is_int(value):
        return value  # type: ignore[return-value]
    raise ValueError(f"expected an integer or null, got {value!r}")


def _optional_str(value: object) -> str | None:
    if value is None or isinstance(value, str):
        return value
    raise ValueError(f"expected a string or null, got {value!r}")


def _str_set(value: object) -> frozenset[str]:
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise ValueError(f"expected a list of strings, got {value!r}")
    return frozenset(value)
