"""The send path and Flight.delivered: how a batch goes out, and what a complete flight
reports per route, from its outputs."""

from __future__ import annotations

from collections import Counter
from dataclasses import replace
from datetime import UTC, datetime

import pytest

from stream_validator.kafka.fake.producer import Tally
from stream_validator.records import OutputRecord, SourceRecord
from stream_validator.service.delivery.flight import Flight, launch_isolating
from stream_validator.service.delivery.offsets import BatchOffsets
from stream_validator.service.delivery.rejections import Rejection, Rejections
from stream_validator.service.delivery.replacements import Replacements
from stream_validator.service.plan.planner import BatchPlan
from stream_validator.verify import SchemaContractValidationReport

NOW = datetime(2026, 12, 3, tzinfo=UTC)


def plan(route: str, outputs: list[OutputRecord]) -> BatchPlan:
    report = SchemaContractValidationReport(
        contract_name="tick",
        contract_version="1",
        max_allowed_null_pct=1.0,
        total_records=len(outputs),
        valid_records=[],
        valid_indices=[],
        quarantined_records=[],
        null_rates={},
        null_breach_fields={},
        observed_unknown_fields=set(),
        violation_counts=Counter(),
    )
    return BatchPlan(route, report, outputs, None)


def output(
    kind: str, offset: int, timestamp_ms: int | None, truncated: bool = False
) -> OutputRecord:
    source = SourceRecord("src", 0, offset, b"k", b"v", [], timestamp_ms)
    topic = "clean" if kind == "clean" else "dlq"
    return OutputRecord(kind, topic, b"k", b"v", [], timestamp_ms, source, truncated)  # type: ignore[arg-type]


def test_each_route_gets_its_counts_dlq_positions_and_latencies() -> None:
    """Per route: clean and DLQ counts, where the DLQ outputs sit, truncated envelopes, and a
    latency per clean output with a timestamp (clock skew counts as 0)."""
    first = [
        output("clean", 0, 99_000),
        output("dlq", 1, 99_500, truncated=True),
        output("clean", 2, None),
        output("clean", 3, 100_500),  # stamped after the ack: skew
    ]
    second = [output("dlq", 4, 98_000), output("clean", 5, 98_000)]
    outputs = first + second
    flight = Flight(
        [plan("a", first), plan("b", second)], BatchOffsets({}, {}), outputs, 0.0, Tally([].append)
    )
    a, b = flight.delivered(acked_at=100.0)
    assert (a.route, a.clean, a.dlq, a.quarantined, a.truncated) == ("a", 3, 1, [1], 1)
    assert a.latencies == pytest.approx([1.0, 0.0])
    assert (b.route, b.clean, b.dlq, b.quarantined, b.truncated) == ("b", 1, 1, [0], 0)
    assert b.latencies == pytest.approx([2.0])


def test_an_all_clean_route_has_no_dlq_positions() -> None:
    """No DLQ output: nothing quarantined, every clean output has its latency."""
    outputs = [output("clean", i, 99_000 + i) for i in range(3)]
    (route,) = Flight(
        [plan("a", outputs)], BatchOffsets({}, {}), outputs, 0.0, Tally([].append)
    ).delivered(100.0)
    assert (route.clean, route.dlq, route.quarantined) == (3, 0, [])
    assert route.latencies == pytest.approx([1.0, 0.999, 0.998])


class _Recorder:
    """A producer that takes everything and logs what it was asked to do, in order."""

    def __init__(self) -> None:
        self.calls: list[object] = []

    def ack_tally(self, on_failure: object) -> Tally:
        return Tally([].append)

    def produce_batch(self, records: list[OutputRecord], start: int, tally: object) -> int:
        self.calls.append([r.source.offset for r in records[start:]])
        return len(records)

    def flush(self, timeout_s: float) -> int:
        self.calls.append("flush")
        return 0


def test_isolating_produces_each_suspect_alone_between_flushes() -> None:
    """While refusals are isolated the same produce loop sends the batchmates in order and
    each suspect on its own, flushed before and after; the flight knows which went alone,
    so a refusal of one of them is its own."""
    outputs = [output("clean", i, None) for i in range(5)]
    rejections = Rejections()
    suspect = Rejection(outputs[1].source, "clean", "clean", "INVALID_RECORD", alone=False)
    rejections.learn([suspect, replace(suspect, source=outputs[3].source)])
    producer = _Recorder()
    flight = launch_isolating(
        producer,  # type: ignore[arg-type]
        [plan("a", outputs)],
        BatchOffsets({("src", 0): 0}, {("src", 0): 5}),
        0.0,
        Replacements({}, rejections, max_message_bytes=1000, clock=lambda: NOW),
        rejections,
        flush_timeout_s=1.0,
    )
    assert producer.calls == [[0], "flush", [1], "flush", [2], "flush", [3], "flush", [4]]
    assert flight.alone == {1, 3} and flight.pending == 5 and flight.outputs == outputs
