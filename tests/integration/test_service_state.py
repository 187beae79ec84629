"""Per-symbol state on the real broker: a sequence gap is flagged and counted once, and state
follows the partitions through a rebalance (the first record after an assignment starts fresh,
so records another member handled meanwhile are no gap and no regression)."""

from __future__ import annotations

import json
from collections.abc import Collection
from pathlib import Path

from kafka_helpers import produce, read_topic
from service_helpers import Stream, ThreadedService, encode, new_stream, tick, wait_until

from stream_validator.config.settings import load_config
from stream_validator.service.app import metrics_hooks, set_integrity_metrics
from stream_validator.service.telemetry.integritymetrics import IntegrityMetrics
from stream_validator.service.telemetry.metrics import CollectorRegistry, ServiceMetrics

SYMBOLS = [f"SYM{i}" for i in range(8)]
EVENTS = "stream_validator_symbol_events_total"


def ticks(
    seqs: range, *, skip: Collection[tuple[str, int]] = ()
) -> list[tuple[bytes, bytes, None]]:
    """Every symbol's ticks with these sequence numbers, keyed by symbol (one partition
    each); ``skip`` leaves (symbol, seq) out: a gap."""
    return [
        (symbol.encode(), encode(tick(seq, symbol=symbol)), None)
        for seq in seqs
        for symbol in SYMBOLS
        if (symbol, seq) not in skip
    ]


class Instance:
    """One service instance on a thread, with its own metrics registry."""

    def __init__(self, stream: Stream) -> None:
        config = load_config(stream.config, environ={})
        self.registry = CollectorRegistry()
        integrity = IntegrityMetrics(self.registry)
        for route in config.routes:
            set_integrity_metrics(integrity, route)
        hooks = metrics_hooks(ServiceMetrics(self.registry), integrity)
        self.service = ThreadedService(config, hooks)

    def value(self, name: str, **labels: str) -> float:
        return self.registry.get_sample_value(name, labels) or 0.0

    def events(self, kind: str) -> float:
        return self.value(EVENTS, contract="tick", kind=kind)

    def consumed(self) -> float:
        return self.value("stream_validator_records_consumed_total", route="ticks", contract="tick")


def test_sequence_gap_is_flagged_and_counted(kafka_bootstrap: str, tmp_path: Path) -> None:
    """One missing number of one symbol: every record to clean, one sequence_gap counted,
    and the batch event on /status names the symbol."""
    stream = new_stream(kafka_bootstrap, tmp_path, partitions=2)
    produce(kafka_bootstrap, stream.source, ticks(range(1, 51), skip={("SYM3", 20)}))
    instance = Instance(stream)
    with instance.service:
        wait_until(stream.all_consumed, 60, "every tick committed")
    assert stream.produced(stream.clean) == 8 * 50 - 1
    assert stream.produced(stream.dlq) == 0
    assert instance.events("sequence_gap") == 1
    assert instance.events("sequence_regression") == 0
    assert instance.value("stream_validator_symbol_state_symbols", contract="tick") == 8
    examples = [
        event["symbol_state"]["events"]["sequence_gap"]["examples"]
        for event in instance.service.service.state.recent_events
        if event["symbol_state"]["events"]
    ]
    assert examples == [["SYM3"]]


def delivered(stream: Stream) -> set[tuple[str, int]]:
    """The distinct (symbol, seq) on the clean topic (at-least-once may repeat some)."""
    values = [json.loads(m.value or b"") for m in read_topic(stream.bootstrap, stream.clean)]
    return {(value["symbol"], value["seq"]) for value in values}


def test_state_follows_partitions_through_a_rebalance(kafka_bootstrap: str, tmp_path: Path) -> None:
    """A alone reads seq 1-50; B joins and takes partitions while 51-100 arrive; B leaves and
    A gets them back for 101-150 (one real gap). Kept state would call 101 after 50 a gap
    on every partition A got back; dropped on revoke, exactly the real gap is counted.

    Progress is awaited on the clean topic, not on commits: while the group changes an
    asynchronous commit can fail unseen and is only repeated by a later synchronous one
    (at a revoke or at shutdown), so committed offsets may lag until the end.
    """
    stream = new_stream(kafka_bootstrap, tmp_path, partitions=4)
    a, b = Instance(stream), Instance(stream)
    with a.service:
        produce(kafka_bootstrap, stream.source, ticks(range(1, 51)))
        wait_until(lambda: len(delivered(stream)) == 8 * 50, 60, "A delivered seq 1-50")
        with b.service:
            wait_until(
                lambda: (
                    b.value("stream_validator_rebalances_total", event="assigned") > 0
                    and a.value("stream_validator_rebalances_total", event="revoked") > 0
                ),
                60,
                "B joined the group and took partitions from A",
            )
            produce(kafka_bootstrap, stream.source, ticks(range(51, 101)))
            wait_until(lambda: len(delivered(stream)) == 8 * 100, 60, "seq 51-100 delivered")
        assert b.consumed() > 0, "B never took a partition: the test proves nothing"
        produce(kafka_bootstrap, stream.source, ticks(range(101, 151), skip={("SYM5", 120)}))
        wait_until(lambda: len(delivered(stream)) == 8 * 150 - 1, 60, "seq 101-150 delivered")
    assert stream.all_consumed()  # A's shutdown commits everything it delivered
    for kind in ("sequence_regression", "event_time_regression", "frozen_quote"):
        assert a.events(kind) == b.events(kind) == 0, kind
    assert a.events("sequence_gap") + b.events("sequence_gap") == 1
