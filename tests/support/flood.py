"""A batch of 20 records carrying 90,000 unique (undeclared) keys, for the bounded-names tests."""

from __future__ import annotations

import dataclasses

from stream_validator.contracts import load_contract
from stream_validator.records import SourceRecord
from stream_validator.service.plan.planner import BatchPlan
from tests.support.ticks import TICK_YAML, tick, tick_processor

RECORDS, KEYS_PER_RECORD = 20, 4_500


def flood_plan() -> BatchPlan:
    """The plan of 20 valid ticks with 4,500 unique extra keys each (some 300 characters)."""
    contract = dataclasses.replace(load_contract(TICK_YAML), forbid_unknown_fields=True)
    processor = tick_processor(contract=contract, max_message_bytes=100_000_000)
    records = []
    for i in range(RECORDS):
        extra = {f"{'k' * (j % 3) * 100}{i}_{j}": 1 for j in range(KEYS_PER_RECORD)}
        records.append(SourceRecord("src", 0, i, None, tick.json(i, **extra), [], 1000))
    return processor.plan(records, validated_at="t")
