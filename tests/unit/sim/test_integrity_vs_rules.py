"""The stateless integrity scenarios against the shipped contracts' record rules and
timestamp checks: each is caught as the rule it stands for, and clean records pass."""

from __future__ import annotations

from collections import Counter
from dataclasses import replace
from pathlib import Path

import pytest

from stream_validator import DataSchemaContractVerifier, SchemaContract, load_contract
from stream_validator.sim import DEFAULT_START, Entity, Schedule, SimMessage, Simulator
from stream_validator.sim.integrity import FUTURE_BY, STALE_BY
from stream_validator.verify import SchemaContractValidationReport

CONTRACTS = Path(__file__).resolve().parents[3] / "config" / "contracts"


def contract(entity: Entity) -> SchemaContract:
    return load_contract(CONTRACTS / f"{entity.value}.yaml")


def run(
    entity: Entity, spec: str, contract_: SchemaContract | None = None, **kwargs: object
) -> tuple[list[SimMessage], SchemaContractValidationReport]:
    sim = Simulator(entity, symbols=8, seed=5, schedule=Schedule.parse([spec]))
    batch = list(sim.take(1000))
    verifier = DataSchemaContractVerifier(contract_ or contract(entity))
    report = verifier.validate_payloads([m.value for m in batch], **kwargs)  # type: ignore[arg-type]
    return batch, report


def hit(batch: list[SimMessage], scenario: str) -> list[int]:
    return [i for i, message in enumerate(batch) if message.scenario == scenario]


@pytest.mark.parametrize("entity", [Entity.TICK, Entity.ORDERBOOK_SNAPSHOT])
def test_crossed_book_is_quarantined_by_its_rule(entity: Entity) -> None:
    """Every crossed book, and nothing else, is a rule_violation of crossed_book."""
    batch, report = run(entity, "crossed_book@everyn10+2")
    assert [q.index for q in report.quarantined_records] == hit(batch, "crossed_book")
    for quarantined in report.quarantined_records:
        assert [(v.kind, v.rule) for v in quarantined.violations] == [
            ("rule_violation", "crossed_book")
        ]


@pytest.mark.parametrize("entity", [Entity.TICK, Entity.ORDERBOOK_SNAPSHOT])
def test_locked_book_flows_and_is_flagged(entity: Entity) -> None:
    """A locked book stays valid; each one is counted under locked_book."""
    batch, report = run(entity, "locked_book@everyn10+2")
    assert report.quarantined_count == 0
    assert report.flagged_counts == Counter({"locked_book": len(hit(batch, "locked_book"))})


def test_impossible_bar_is_quarantined_by_the_ohlc_rules() -> None:
    """Every impossible bar breaks open_in_range or close_in_range, and nothing else
    quarantines it (a broken flag rule is listed too, flagged)."""
    batch, report = run(Entity.OHLCV_BAR, "impossible_bar@everyn10+2")
    assert [q.index for q in report.quarantined_records] == hit(batch, "impossible_bar")
    rules = Counter(
        v.rule for q in report.quarantined_records for v in q.violations if not v.flagged
    )
    assert set(rules) == {"open_in_range", "close_in_range"}


@pytest.mark.parametrize("entity", list(Entity))
def test_naive_timestamp_is_a_type_mismatch(entity: Entity) -> None:
    """require_timezone rejects the offset-less event time of every naive_timestamp record."""
    batch, report = run(entity, "naive_timestamp@everyn10+2")
    assert [q.index for q in report.quarantined_records] == hit(batch, "naive_timestamp")
    assert {k for q in report.quarantined_records for k in q.kinds} == {"type_mismatch"}


@pytest.mark.parametrize("scenario", ["stale_timestamp", "future_timestamp"])
def test_skew_window_catches_stale_and_future_ticks(scenario: str) -> None:
    """With a skew window (not shipped: opt-in) and the time of validation, stale and future
    ticks are timestamp_out_of_range and clean ones pass."""
    tick = contract(Entity.TICK)
    window = {
        "max_age_s": STALE_BY.total_seconds() / 2,
        "max_future_s": FUTURE_BY.total_seconds() / 2,
    }
    timed = replace(
        tick,
        fields=tuple(
            replace(spec, **window) if spec.name == "event_ts" else spec  # type: ignore[arg-type]
            for spec in tick.fields
        ),
    )
    batch, report = run(Entity.TICK, f"{scenario}@everyn10+2", timed, now=DEFAULT_START)
    assert [q.index for q in report.quarantined_records] == hit(batch, scenario)
    assert {k for q in report.quarantined_records for k in q.kinds} == {"timestamp_out_of_range"}
