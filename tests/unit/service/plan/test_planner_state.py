"""Per-symbol state in the pure pipeline: which records feed it, flag vs quarantine, drops."""

from __future__ import annotations

import json
from collections import Counter
from dataclasses import replace

import pytest

from stream_validator.contracts import load_contract
from stream_validator.contracts.rulespec import RuleAction
from stream_validator.contracts.statespec import SymbolStateSpec
from stream_validator.records import SourceRecord
from stream_validator.service.plan.planner import BatchPlan, RouteProcessor
from stream_validator.sim import Entity, Schedule, Simulator
from tests.support.ticks import TICK_YAML, planned_event, tick, tick_processor


def processor(policy: str = "alert", **state: object) -> RouteProcessor:
    """tick.yaml with a state section keyed on symbol, sequenced on seq (``state`` overrides)."""
    spec = SymbolStateSpec(**{"key_field": "symbol", "sequence_field": "seq", **state})  # type: ignore[arg-type]
    contract = replace(load_contract(TICK_YAML), state=spec)
    return tick_processor(contract=contract, on_null_ceiling_breach=policy)


def ticks(
    seqs: list[int], *, symbol: str = "AAPL", partition: int = 0, **changes: object
) -> list[SourceRecord]:
    return [
        SourceRecord(
            "src", partition, n, b"k", tick.json(seq, symbol=symbol, **changes), [], 1000 + n
        )
        for n, seq in enumerate(seqs)
    ]


def plan(p: RouteProcessor, records: list[SourceRecord]) -> BatchPlan:
    return p.plan(records, validated_at="2026-12-01T00:00:00+00:00")


def test_sequence_gap_is_flagged_counted_and_flows_to_clean() -> None:
    """flag: a gap is an event with its symbol as example; every record goes to clean."""
    result = plan(processor(), ticks([1, 2, 5, 6]))
    assert [o.kind for o in result.outputs] == ["clean"] * 4
    assert result.state is not None
    assert result.state.counts == {"sequence_gap": 1}
    event = planned_event(result)["symbol_state"]
    assert event["events"] == {"sequence_gap": {"count": 1, "examples": ["AAPL"]}}
    assert event["symbols"] == 1 and event["quarantined"] == 0


def test_quarantine_action_sends_the_record_to_the_dlq_with_the_event_kind() -> None:
    """quarantine: the gapped record is a DLQ entry of kind sequence_gap on field seq."""
    result = plan(processor(sequence_action=RuleAction.QUARANTINE), ticks([1, 2, 5, 6]))
    assert [o.kind for o in result.outputs] == ["clean", "clean", "dlq", "clean"]
    assert result.outputs[2].first_violation == "sequence_gap"
    (violation,) = json.loads(result.outputs[2].value or b"")["violations"]
    assert violation["field"] == "seq" and "2 sequence number(s) missing" in violation["message"]
    assert result.violation_counts == {("seq", "sequence_gap"): 1}
    assert planned_event(result)["violations_by_kind"] == {"sequence_gap": 1}


def test_event_time_regression_can_quarantine() -> None:
    """An event time going back beyond the tolerance is event_time_regression."""
    p = processor(
        sequence_field=None,
        event_time_field="event_ts",
        event_time_action=RuleAction.QUARANTINE,
    )
    records = ticks([1], event_ts="2026-12-01T10:00:00Z") + ticks(
        [2], event_ts="2026-12-01T09:00:00Z"
    )
    result = plan(p, records)
    assert [o.first_violation for o in result.outputs] == [None, "event_time_regression"]
    assert result.violation_counts == {("event_ts", "event_time_regression"): 1}


def test_frozen_quote_is_an_alert_never_a_quarantine() -> None:
    """A frozen quote is counted even when sequence events quarantine; the record flows."""
    p = processor(
        sequence_action=RuleAction.QUARANTINE,
        quote_fields=("price", "bid", "ask"),
        frozen_max_updates=2,
    )
    result = plan(p, ticks([1, 2, 3, 4], price=101.0))
    assert [o.kind for o in result.outputs] == ["clean"] * 4
    assert result.state is not None and result.state.counts == {"frozen_quote": 1}


def test_a_record_quarantined_for_another_field_still_feeds_its_seq() -> None:
    """A record quarantined for a field the state does not read (size) or a quote field
    (price) still feeds its good seq: its symbol's next record shows no gap."""
    records = ticks([1]) + ticks([2], price="x") + ticks([3], size=True) + ticks([4])
    result = plan(processor(sequence_action=RuleAction.QUARANTINE), records)
    kinds = [o.first_violation for o in result.outputs]
    assert kinds == [None, "type_mismatch", "type_mismatch", None]
    assert result.state is not None and result.state.counts == {}


def test_a_record_whose_seq_failed_leaves_its_number_missing() -> None:
    """A seq that failed its own check (below min_value) is not fed: the next record of
    the symbol reports the number the feed never gave."""
    result = plan(processor(), ticks([1]) + ticks([-2]) + ticks([3]))
    assert [o.first_violation for o in result.outputs] == [None, "below_min", None]
    assert result.state is not None and result.state.counts == {"sequence_gap": 1}


def test_a_record_without_a_good_key_feeds_nothing() -> None:
    """A record whose key field failed (null) is not seen, nor is an undecodable one."""
    garbage = [SourceRecord("src", 0, 9, b"k", b"{", [], 1009)]
    records = ticks([1]) + ticks([2], symbol=None) + garbage + ticks([3])  # type: ignore[arg-type]
    result = plan(processor(), records)
    assert result.state is not None and result.state.counts == {"sequence_gap": 1}
    assert result.state.symbols == 1


def test_a_record_with_a_bad_quote_field_neither_ends_nor_extends_a_frozen_quote() -> None:
    """The frozen-quote detector sees a quote only when all its fields passed: a bad bid
    between held quotes leaves the episode as it is."""
    p = processor(quote_fields=("price", "bid", "ask"), frozen_max_updates=3)
    records = ticks([1, 2, 3], price=101.0) + ticks([4], price=101.0, bid="x")
    records += ticks([5], price=101.0)
    result = plan(p, records)
    assert result.outputs[3].first_violation == "type_mismatch"
    assert result.state is not None and result.state.counts == {"frozen_quote": 1}


def test_an_event_time_outside_its_skew_window_is_not_fed() -> None:
    """A record quarantined for an event time far ahead of the validation time feeds its
    seq but not its time: the symbol's later records do not go back in time."""
    contract = load_contract(TICK_YAML)
    fields = tuple(
        replace(f, max_future_s=300) if f.name == "event_ts" else f for f in contract.fields
    )
    spec = SymbolStateSpec(key_field="symbol", sequence_field="seq", event_time_field="event_ts")
    p = tick_processor(contract=replace(contract, fields=fields, state=spec))
    at = "2026-12-01T00:00:00Z"
    records = ticks([1], event_ts=at) + ticks([2], event_ts="2099-01-01T00:00:00Z")
    records += ticks([3], event_ts=at)
    result = plan(p, records)
    kinds = [o.first_violation for o in result.outputs]
    assert kinds == [None, "timestamp_out_of_range", None]
    assert result.state is not None and result.state.counts == {}


def test_a_record_quarantined_by_a_rule_still_feeds_the_state() -> None:
    """A crossed book (rule_violation) carries a good seq: no gap after it."""
    records = ticks([1]) + ticks([2], bid=101.0, ask=100.0) + ticks([3])
    result = plan(processor(), records)
    assert [o.first_violation for o in result.outputs] == [None, "rule_violation", None]
    assert result.state is not None and result.state.counts == {}


def test_a_record_already_in_the_dlq_keeps_its_own_violations() -> None:
    """A rule-quarantined record that is also a regression is not quarantined twice."""
    p = processor(sequence_action=RuleAction.QUARANTINE)
    records = ticks([5]) + ticks([3], bid=101.0, ask=100.0)
    result = plan(p, records)
    assert result.outputs[1].first_violation == "rule_violation"
    assert ("seq", "sequence_regression") not in result.violation_counts
    assert result.state is not None and result.state.counts == {"sequence_regression": 1}


def test_state_carries_across_batches_and_drop_starts_a_partition_fresh() -> None:
    """The next batch continues the state; after drop_state the same records raise nothing."""
    p = processor()
    plan(p, ticks([1, 2, 3]))
    again = plan(p, ticks([1, 2, 3]))  # replayed: regressions while the state is kept
    assert again.state is not None and again.state.counts == {"sequence_regression": 3}
    p.drop_state([("src", 0)])
    fresh = plan(p, ticks([1, 2, 3]))
    assert fresh.state is not None and fresh.state.counts == {}


def test_state_is_kept_per_partition() -> None:
    """The same symbol on two partitions has two sequences; dropping one keeps the other."""
    p = processor()
    plan(p, ticks([10], partition=0) + ticks([1], partition=1))
    p.drop_state([("src", 1)])
    result = plan(p, ticks([11], partition=0) + ticks([1], partition=1))
    assert result.state is not None and result.state.counts == {}
    assert result.state.symbols == 2


def test_examples_are_capped_per_kind() -> None:
    """Seven symbols with a gap: seven counted, five example symbols, each cut short."""
    records = [r for i in range(7) for r in ticks([1, 3], symbol=f"S{i}-" + "x" * 60)]
    result = plan(processor(), records)
    summary = planned_event(result)["symbol_state"]["events"]["sequence_gap"]
    assert summary["count"] == 7
    assert len(summary["examples"]) == 5 and all(len(s) == 32 for s in summary["examples"])


def test_lru_evictions_are_reported() -> None:
    """max_symbols bounds the state; each eviction is counted in the batch's summary."""
    records = [r for i in range(5) for r in ticks([1], symbol=f"S{i}")]
    result = plan(processor(max_symbols=3), records)
    assert result.state is not None
    assert (result.state.evictions, result.state.symbols) == (2, 3)


def test_null_ceiling_quarantine_is_not_doubled_by_state() -> None:
    """Records the null ceiling sends to the DLQ keep that kind; their gaps are only counted."""
    p = processor("quarantine", sequence_action=RuleAction.QUARANTINE)
    result = plan(p, ticks([1, 5], bid=None))
    assert [o.first_violation for o in result.outputs] == ["null_ceiling_breach"] * 2
    assert result.state is not None and result.state.counts == {"sequence_gap": 1}
    assert {kind for _, kind in result.violation_counts} == {"null_ceiling_breach"}


def test_a_contract_without_state_reports_none() -> None:
    """No state section: no tracker, symbol_state None in the batch event."""
    contract = replace(load_contract(TICK_YAML), state=None)
    result = plan(tick_processor(contract=contract), ticks([1, 5]))
    assert result.state is None and planned_event(result)["symbol_state"] is None


@pytest.mark.parametrize(
    ("scenario", "expected"),
    [
        ("", {}),
        ("sequence_gap@everyn100+3", {"sequence_gap": 27}),
        ("sequence_regression@everyn100+3", {"sequence_regression": 27}),
        ("stale_timestamp@everyn100+3", {"event_time_regression": 27}),
        ("frozen_quote@n0+1000", {"frozen_quote": 8}),
        ("crossed_book@everyn100+3", {}),
    ],
)
def test_shipped_tick_state_catches_the_simulators_scenarios(
    scenario: str, expected: dict[str, int]
) -> None:
    """tick.yaml's state section, through the pipeline in batches of 100: each scenario
    gives exactly its event (a crossed book none: it is rule-quarantined but still fed)."""
    sim = Simulator(
        Entity.TICK, symbols=8, seed=11, schedule=Schedule.parse([scenario] if scenario else [])
    )
    records = [
        SourceRecord("src", 0, n, m.key, m.value, [], 0) for n, m in enumerate(sim.take(1000))
    ]
    p = tick_processor()
    found: Counter[str] = Counter()
    for start in range(0, len(records), 100):
        result = plan(p, records[start : start + 100])
        assert result.state is not None
        found.update(result.state.counts)
    assert found == expected
