"""PURE DLQ replay: parse envelopes, select, re-validate, decide, build the outputs.

Parsing lives in ``envelope_reader`` and the selection in ``selection``; both are
re-exported here, so this module is the one API of the replay core.

No Kafka here. The shell (``stream_validator.cli.replay``) reads DLQ records as
``SourceRecord``\\ s, asks a ``ReplayPlanner`` for one ``Decision`` per record, turns
decisions into ``ReplayOutput``\\ s with ``build_output`` and produces them; the idempotence
design (replay consumer groups, transactions, ``Coverage``) is in docs/replay.md.

Outcomes, in the order they are checked:

``filtered_out``     outside the range or not matching a filter (``reason`` names which)
``already_handled``  settled by an earlier replay to the same target (``reason``: its group)
``unreplayable``     not a v1 envelope, truncated payload/key/headers, bad checksum, no
                     checksum (unless ``allow_unchecked``), or (``--to source``) a source
                     topic that is not one of the route's
``duplicate``        a second envelope of a source record already decided in this run
``exhausted``        already replayed ``max_replays`` times (sent on or requeued), whether
                     it passes now or not: left in the DLQ, never sent again
``passed``           valid under the current contract: sent to the target
``held_back``        passed, but behind a record left in place by ``requeue=False``
``still_failing``    still failing: requeued as a new envelope (``requeue``) or left

The replay count survives a round trip through the service: a record sent on carries
``sv.replay.count`` (its replay count, this replay included), and the service copies that
header into the envelope's ``replay_count`` when it quarantines the record again.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from enum import StrEnum
from typing import Literal

from stream_validator.dlq.envelope import build_dlq_record
from stream_validator.dlq.envelope_reader import (
    REPLAY_COUNT_HEADER,
    Envelope,
    Parsed,
    Unreplayable,
    UnreplayableReason,
    parse_dlq_record,
    parse_envelope,
)
from stream_validator.dlq.records import EnvelopeContext
from stream_validator.records import Headers, SourceRecord
from stream_validator.registry.outcome import DecodeResult, SchemaRef, judge_decoded
from stream_validator.replay.seen import SourceOffsets
from stream_validator.replay.selection import Selection
from stream_validator.verify import DataSchemaContractVerifier, QuarantinedRecord, Violation

#: What judging one original gave: its quarantine (None: valid) and, for a registry route,
#: the writer schema its value named.
Judged = tuple[QuarantinedRecord | None, SchemaRef | None]

__all__ = [
    "DEFAULT_MAX_REPLAYS",
    "HEADER_COUNT",
    "HEADER_DLQ_OFFSET",
    "HEADER_DLQ_PARTITION",
    "HEADER_DLQ_TOPIC",
    "HEADER_GROUP",
    "HEADER_TIME",
    "REPLAY_HEADER_PREFIX",
    "Coverage",
    "Decision",
    "Envelope",
    "Outcome",
    "OutputContext",
    "Parsed",
    "ReplayOutput",
    "ReplayPlanner",
    "Target",
    "Unreplayable",
    "UnreplayableReason",
    "as_unreplayable",
    "build_output",
    "filter_reason",
    "parse_dlq_record",
    "parse_envelope",
    "replay_headers",
]

REPLAY_HEADER_PREFIX = "sv.replay."
HEADER_DLQ_TOPIC = "sv.replay.dlq.topic"
HEADER_DLQ_PARTITION = "sv.replay.dlq.partition"
HEADER_DLQ_OFFSET = "sv.replay.dlq.offset"
HEADER_TIME = "sv.replay.time"
HEADER_GROUP = "sv.replay.group"
HEADER_COUNT = REPLAY_COUNT_HEADER
DEFAULT_MAX_REPLAYS = 3


class Outcome(StrEnum):
    """What a replay does (or, in a dry run, would do) with one DLQ record."""

    PASSED = "passed"
    STILL_FAILING = "still_failing"
    EXHAUSTED = "exhausted"
    UNREPLAYABLE = "unreplayable"
    FILTERED_OUT = "filtered_out"
    DUPLICATE = "duplicate"
    ALREADY_HANDLED = "already_handled"
    HELD_BACK = "held_back"


def filter_reason(selection: Selection, record: SourceRecord, parsed: Parsed) -> str | None:
    """Why a DLQ record is outside a selection, or None when selected.

    Unreplayable records are selected whenever they are in range: filters cannot be
    evaluated on them and they must be reported.
    """
    if not selection.in_range(record.partition, record.offset, record.timestamp_ms):
        return "range"
    if isinstance(parsed, Unreplayable):
        return None
    return selection.rejects(
        route=parsed.route,
        contract_version=parsed.contract_version,
        source_topic=parsed.original.topic,
        violations=parsed.violations,
    )


@dataclass(frozen=True, slots=True)
class Coverage:
    """What one replay group settled: records below its committed offsets that it selects."""

    group: str
    selection: Selection
    committed: Mapping[int, int]

    def covers(self, record: SourceRecord, parsed: Parsed) -> bool:
        """True when this group already settled the record."""
        end = self.committed.get(record.partition)
        return (
            end is not None
            and record.offset < end
            and filter_reason(self.selection, record, parsed) is None
        )


@dataclass(frozen=True, slots=True)
class Decision:
    """The outcome for one DLQ record (``violations``: under the current contract)."""

    record: SourceRecord
    outcome: Outcome
    envelope: Envelope | None = None
    violations: tuple[Violation, ...] = ()
    reason: str = ""
    detail: str = ""
    requeue: bool = False
    #: A registry route's writer schema of the original (as decoded now): a requeued
    #: envelope names it, as the service's does.
    schema: SchemaRef | None = None


class ReplayPlanner:
    """Decides each DLQ record's outcome, chunk by chunk, remembering one run's history."""

    __slots__ = (
        "_allow_unchecked",
        "_coverage",
        "_decode",
        "_held",
        "_max_replays",
        "_requeue",
        "_seen",
        "_target",
        "selection",
        "verifier",
    )

    def __init__(
        self,
        selection: Selection,
        verifier: DataSchemaContractVerifier,
        *,
        coverage: Iterable[Coverage] = (),
        max_replays: int = DEFAULT_MAX_REPLAYS,
        requeue: bool = True,
        target: Target | None = None,
        allow_unchecked: bool = False,
        decode: Callable[[SourceRecord], DecodeResult | None] | None = None,
    ) -> None:
        """``decode``: a registry route's decoder of an original record (``registry/``),
        whose record the contract then checks, as the service does; None: JSON values."""
        if max_replays < 0:
            raise ValueError(f"max_replays must be >= 0, got {max_replays}")
        self.selection = selection
        self.verifier = verifier
        self._coverage = tuple(coverage)
        self._max_replays = max_replays
        self._requeue = requeue
        self._target = target
        self._allow_unchecked = allow_unchecked
        self._decode = decode
        self._seen = SourceOffsets()
        self._held: dict[int, int] = {}

    def decide(self, records: Sequence[SourceRecord]) -> list[Decision]:
        """One decision per DLQ record, in order (records of a partition in offset order)."""
        batch = self.verifier.start_batch(keep_records=False)
        decode = self._decode
        if decode is None:

            def validate(original: SourceRecord) -> Judged:
                return batch.add_payload(original.value), None
        else:

            def validate(original: SourceRecord) -> Judged:
                result = decode(original)
                schema = None if result is None else result.schema
                return judge_decoded(batch, result, original.value), schema

        return [self._decide_one(record, validate) for record in records]

    def _decide_one(
        self, record: SourceRecord, validate: Callable[[SourceRecord], Judged]
    ) -> Decision:
        parsed = parse_dlq_record(record)
        reason = filter_reason(self.selection, record, parsed)
        if reason is not None:
            return Decision(record, Outcome.FILTERED_OUT, _or_none(parsed), reason=reason)
        covering = next((c.group for c in self._coverage if c.covers(record, parsed)), None)
        if covering is not None:
            return Decision(record, Outcome.ALREADY_HANDLED, _or_none(parsed), reason=covering)
        if isinstance(parsed, Unreplayable):
            return Decision(
                record, Outcome.UNREPLAYABLE, reason=str(parsed.reason), detail=parsed.detail
            )
        if not parsed.checked and not self._allow_unchecked:
            return Decision(
                record,
                Outcome.UNREPLAYABLE,
                parsed,
                reason=str(UnreplayableReason.PAYLOAD_UNCHECKED),
                detail="no payload_length and payload_sha256 to check the payload against",
            )
        original = parsed.original
        if self._target is not None and not self._target.accepts(original.topic):
            return Decision(
                record,
                Outcome.UNREPLAYABLE,
                parsed,
                reason=str(UnreplayableReason.NOT_A_ROUTE_SOURCE),
                detail=f"source topic {original.topic[:200]!r} is not a source of the route",
            )
        if not self._seen.add(original.topic, original.partition, original.offset):
            return Decision(record, Outcome.DUPLICATE, parsed, reason="source record seen")
        quarantined, schema = validate(original)
        violations = () if quarantined is None else tuple(quarantined.violations)
        if parsed.replay_count >= self._max_replays:
            # Whether it passes now or not: a record the running service keeps rejecting
            # would otherwise go round source -> DLQ -> source forever.
            return Decision(record, Outcome.EXHAUSTED, parsed, violations)
        if quarantined is None:
            if record.partition in self._held:
                return Decision(record, Outcome.HELD_BACK, parsed)
            return Decision(record, Outcome.PASSED, parsed)
        if not self._requeue:
            self._held.setdefault(record.partition, record.offset)
        return Decision(
            record,
            Outcome.STILL_FAILING,
            parsed,
            violations,
            requeue=self._requeue,
            schema=schema,
        )

    def commit_offset(self, partition: int, position: int) -> int:
        """The offset the replay group may commit: never past a record left in place."""
        return min(position, self._held.get(partition, position))

    @property
    def held(self) -> Mapping[int, int]:
        """Per partition, the first record left in place (``requeue=False``)."""
        return dict(self._held)


def as_unreplayable(decision: Decision, reason: UnreplayableReason, detail: str) -> Decision:
    """The same record, settled as unreplayable (e.g. the broker refuses it as too large)."""
    return Decision(
        decision.record, Outcome.UNREPLAYABLE, decision.envelope, reason=str(reason), detail=detail
    )


def _or_none(parsed: Parsed) -> Envelope | None:
    return parsed if isinstance(parsed, Envelope) else None


@dataclass(frozen=True, slots=True)
class Target:
    """Where passing records go: the route's clean topic, their source topic, or a topic.

    A ``source`` target knows the route's configured source topics (or pattern, matched
    in full): a record is only ever sent back to one of them.
    """

    kind: Literal["clean", "source", "topic"]
    topic: str | None = None
    source_topics: frozenset[str] = frozenset()
    source_pattern: str | None = None

    def accepts(self, source_topic: str) -> bool:
        """False when a ``source`` target must refuse a record from this source topic."""
        if self.kind != "source":
            return True
        if source_topic in self.source_topics:
            return True
        return self.source_pattern is not None and bool(
            re.fullmatch(self.source_pattern, source_topic)
        )

    def topic_for(self, envelope: Envelope) -> str:
        """The topic one record is sent to."""
        if self.kind == "source" or self.topic is None:
            return envelope.original.topic
        return self.topic

    @property
    def label(self) -> str:
        """A name for summaries and group names."""
        return "source" if self.kind == "source" or self.topic is None else self.topic


@dataclass(frozen=True, slots=True)
class OutputContext:
    """What a replay run writes into headers and requeued envelopes."""

    target: Target
    dlq_topic: str
    group: str
    replay_time: str
    contract_name: str
    contract_version: str
    validator_version: str
    max_message_bytes: int
    #: Requeued envelopes also carry Kafka Connect's ``__connect.errors.*`` headers.
    connect_headers: bool = False


@dataclass(frozen=True, slots=True)
class ReplayOutput:
    """One record to produce: to the target (``passed``) or back to the DLQ (``requeue``)."""

    kind: Literal["target", "requeue"]
    topic: str
    key: bytes | None
    value: bytes | None
    headers: Headers
    timestamp_ms: int | None
    decision: Decision
    truncated: bool = False


def replay_headers(dlq_record: SourceRecord, context: OutputContext, replay_count: int) -> Headers:
    """The ``sv.replay.*`` headers naming the DLQ record an output comes from."""
    values = {
        HEADER_DLQ_TOPIC: dlq_record.topic,
        HEADER_DLQ_PARTITION: str(dlq_record.partition),
        HEADER_DLQ_OFFSET: str(dlq_record.offset),
        HEADER_TIME: context.replay_time,
        HEADER_GROUP: context.group,
        HEADER_COUNT: str(replay_count),
    }
    return [(name, value.encode()) for name, value in values.items()]


def build_output(decision: Decision, context: OutputContext) -> ReplayOutput | None:
    """The record a decision writes, or None (nothing is written for it)."""
    envelope = decision.envelope
    if envelope is None:
        return None
    original = envelope.original
    if decision.outcome is Outcome.PASSED:
        # Stale sv.replay.* headers (a record replayed before) would name the wrong DLQ record.
        kept = [(n, v) for n, v in original.headers if not n.startswith(REPLAY_HEADER_PREFIX)]
        headers = kept + replay_headers(decision.record, context, envelope.replay_count + 1)
        return ReplayOutput(
            "target",
            context.target.topic_for(envelope),
            original.key,
            original.value,
            headers,
            original.timestamp_ms,
            decision,
        )
    if decision.outcome is Outcome.STILL_FAILING and decision.requeue:
        count = envelope.replay_count + 1
        schema = decision.schema
        envelope_context = EnvelopeContext(
            route=envelope.route,
            contract_name=context.contract_name,
            contract_version=context.contract_version,
            consumer_group=context.group,
            validator_version=context.validator_version,
            validated_at=context.replay_time,
            replay_count=count,
            schema_id=schema.id if schema is not None else None,
            schema_guid=schema.guid if schema is not None else None,
            schema_version=schema.version if schema is not None else None,
        )
        dlq = build_dlq_record(
            original,
            decision.violations,
            envelope_context,
            max_bytes=context.max_message_bytes,
            extra_headers=replay_headers(decision.record, context, count),
            connect_headers=context.connect_headers,
        )
        return ReplayOutput(
            "requeue",
            context.dlq_topic,
            dlq.key,
            dlq.value,
            dlq.headers,
            original.timestamp_ms,
            decision,
            dlq.truncated,
        )
    return None
