"""DLQ records for the replay unit tests, built with the service's own envelope code."""

from __future__ import annotations

import json
from collections.abc import Sequence

from stream_validator import DataSchemaContractVerifier, FieldSpec
from stream_validator.dlq import EnvelopeContext, build_dlq_record
from stream_validator.records import Headers, SourceRecord
from stream_validator.replay.planner import OutputContext, ReplayPlanner, Target
from stream_validator.replay.selection import Selection
from stream_validator.verify import Violation, ViolationKind
from tests.support.ticks import seed_tick, tick_contract

DLQ = "ticks.dlq"
SOURCE = "ticks"
PRICE_BELOW_MIN = Violation("price", ViolationKind.BELOW_MIN, "price -1.0 below min_value 1e-09")


def dlq_record(
    value: bytes | None = None,
    *,
    offset: int = 0,
    partition: int = 0,
    source_offset: int | None = None,
    source_topic: str = SOURCE,
    violations: Sequence[Violation] = (PRICE_BELOW_MIN,),
    replay_count: int = 0,
    key: bytes | None = b"AAPL",
    headers: Headers | None = None,
    route: str = "ticks",
    contract_version: str = "1",
    timestamp_ms: int | None = 1_000,
    max_bytes: int = 1_000_000,
    connect_headers: bool = False,
) -> SourceRecord:
    """A DLQ record (as read from Kafka) holding the envelope of one quarantined tick
    (``connect_headers``: with Kafka Connect's ``__connect.errors.*`` headers too)."""
    original = SourceRecord(
        topic=source_topic,
        partition=0,
        offset=offset if source_offset is None else source_offset,
        key=key,
        value=seed_tick.json(price=-1.0) if value is None else value,
        headers=[("trace", b"t1")] if headers is None else headers,
        timestamp_ms=timestamp_ms,
    )
    context = EnvelopeContext(
        route=route,
        contract_name="tick",
        contract_version=contract_version,
        consumer_group="svc",
        validator_version="0.1.0",
        validated_at="2026-11-30T14:30:00+00:00",
        replay_count=replay_count,
    )
    dlq = build_dlq_record(
        original, violations, context, max_bytes=max_bytes, connect_headers=connect_headers
    )
    return SourceRecord(DLQ, partition, offset, dlq.key, dlq.value, dlq.headers, 1_000)


def raw_dlq_record(
    value: bytes | None,
    *,
    offset: int = 0,
    partition: int = 0,
    headers: Headers | None = None,
    timestamp_ms: int | None = 1_000,
) -> SourceRecord:
    """A DLQ record with any value (garbage, hand-made envelopes)."""
    return SourceRecord(DLQ, partition, offset, b"k", value, headers or [], timestamp_ms)


def envelope_of(record: SourceRecord) -> dict[str, object]:
    """The JSON document of a DLQ record built by dlq_record."""
    document: dict[str, object] = json.loads(record.value or b"")
    return document


def fixed_verifier() -> DataSchemaContractVerifier:
    """The unit tick contract with price allowed down to -1000 (the "corrected" contract)."""
    contract = tick_contract(
        version="2",
        fields=[
            FieldSpec("price", float, min_value=-1000.0),
            FieldSpec("volume", int, min_value=0),
            FieldSpec("symbol", str),
        ],
    )
    return DataSchemaContractVerifier(contract)


def planner(selection: Selection | None = None, **options: object) -> ReplayPlanner:
    """A planner re-validating with fixed_verifier()."""
    return ReplayPlanner(selection or Selection(), fixed_verifier(), **options)  # type: ignore[arg-type]


def context(target: Target | None = None, *, connect_headers: bool = False) -> OutputContext:
    """What a replay to the clean topic (or ``target``) writes into its outputs."""
    return OutputContext(
        target=target or Target("clean", "ticks.clean"),
        dlq_topic=DLQ,
        group="replay-group",
        replay_time="2026-12-01T00:00:00+00:00",
        contract_name="tick",
        contract_version="2",
        validator_version="9.9.9",
        max_message_bytes=1_000_000,
        connect_headers=connect_headers,
    )
