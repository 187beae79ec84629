"""The order entity: clean orders against config/contracts/order.yaml, and the order-feed
drift (a side outside the enum, a side in capitals, an empty order id) quarantined with the
string checks' violation kinds."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest

from stream_validator import DataSchemaContractVerifier, load_contract
from stream_validator.codec import decode_json
from stream_validator.sim import SCENARIOS, Entity, Schedule, SimMessage, Simulator
from stream_validator.sim.orders import UNKNOWN_SIDES

CONTRACTS = Path(__file__).resolve().parents[3] / "config" / "contracts"
CONTRACT = load_contract(CONTRACTS / "order.yaml")
ORDER_SCENARIOS = {
    # scenario: (violation kind, field)
    "unknown_side": ("not_allowed", "side"),
    "upper_case_side": ("not_allowed", "side"),
    "empty_order_id": ("too_short", "order_id"),
}


def messages(count: int, *specs: str, entity: Entity = Entity.ORDER) -> list[SimMessage]:
    sim = Simulator(entity, symbols=8, seed=5, schedule=Schedule.parse(specs))
    return list(sim.take(count))


def decoded(batch: list[SimMessage]) -> list[dict[str, Any]]:
    out = []
    for message in batch:
        assert message.value is not None
        out.append(decode_json(message.value))
    return out


def test_order_scenarios_are_registered_for_orders_only() -> None:
    """Each order scenario applies to the order entity and to no other."""
    for name in ORDER_SCENARIOS:
        assert SCENARIOS[name].entities == frozenset({Entity.ORDER})
    orders = {n for n, s in SCENARIOS.items() if s.apply.__module__.endswith(".orders")}
    assert orders == set(ORDER_SCENARIOS)


def test_limit_orders_carry_a_price_and_market_orders_none() -> None:
    """order_type says whether the price is there; both types and both sides occur."""
    rows = decoded(messages(3000))
    for row in rows:
        assert (row["order_type"] == "market") == (row["price"] is None)
    assert {r["order_type"] for r in rows} == {"limit", "market"}
    assert {r["side"] for r in rows} == {"buy", "sell"}


def test_order_ids_are_unique_and_match_the_contract_pattern() -> None:
    """Every clean order has its own id, inside the contract's pattern and length bounds."""
    spec = next(f for f in CONTRACT.fields if f.name == "order_id")
    assert spec.pattern is not None and spec.max_length is not None
    ids = [r["order_id"] for r in decoded(messages(2000))]
    assert len(set(ids)) == len(ids)
    assert all(re.fullmatch(spec.pattern, i) and len(i) <= spec.max_length for i in ids)


@pytest.mark.parametrize("scenario", sorted(ORDER_SCENARIOS))
def test_order_drift_is_quarantined_with_its_violation_kind(scenario: str) -> None:
    """Exactly the drifted orders are quarantined, each with one violation on the field."""
    batch = messages(600, f"{scenario}@n100+300")
    report = DataSchemaContractVerifier(CONTRACT).validate_payloads([m.value for m in batch])
    hit = [i for i, m in enumerate(batch) if m.scenario == scenario]
    assert len(hit) == 300
    assert [q.index for q in report.quarantined_records] == hit
    kind, field = ORDER_SCENARIOS[scenario]
    for quarantined in report.quarantined_records:
        assert [(v.kind, v.field) for v in quarantined.violations] == [(kind, field)]


def test_unknown_side_draws_every_unknown_value() -> None:
    """unknown_side sends each of UNKNOWN_SIDES, never a side the contract allows."""
    sides = {r["side"] for r in decoded(messages(300, "unknown_side"))}
    assert sides == set(UNKNOWN_SIDES)


def test_upper_case_side_capitalises_the_clean_side() -> None:
    """upper_case_side keeps the order's side, in capitals."""
    clean = decoded(messages(300))
    upper = decoded(messages(300, "upper_case_side"))
    assert [r["side"] for r in upper] == [r["side"].upper() for r in clean]


def test_negative_price_sends_a_market_orders_missing_price_as_minus_one() -> None:
    """A market order under negative_price carries -1.0; a limit order its negated price."""
    clean = decoded(messages(500))
    negative = decoded(messages(500, "negative_price"))
    for before, after in zip(clean, negative, strict=True):
        expected = -1.0 if before["price"] is None else -before["price"]
        assert after["price"] == expected


@pytest.mark.parametrize("entity", sorted(set(Entity) - {Entity.ORDER}))
@pytest.mark.parametrize("scenario", sorted(ORDER_SCENARIOS))
def test_order_scenarios_leave_other_entities_clean(scenario: str, entity: Entity) -> None:
    """On ticks, books and bars an order scenario changes nothing: clean bytes and header."""
    assert messages(200, f"{scenario}@n50+100", entity=entity) == messages(200, entity=entity)
