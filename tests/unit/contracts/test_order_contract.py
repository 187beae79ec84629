"""The shipped order contract (config/contracts/order.yaml): what it accepts and refuses."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from stream_validator import DataSchemaContractVerifier, load_contract
from stream_validator.codec import encode_json

CONTRACTS = Path(__file__).resolve().parents[3] / "config" / "contracts"
ORDER = load_contract(CONTRACTS / "order.yaml")
LIMIT: dict[str, Any] = {
    "order_id": "ORD-0000000001",
    "symbol": "AAPL",
    "exchange": "XNAS",
    "side": "buy",
    "order_type": "limit",
    "qty": 100,
    "price": 190.25,
    "event_ts": "2026-01-05T14:30:00.000001Z",
}


def kinds(record: dict[str, Any]) -> list[tuple[str, str | None]]:
    report = DataSchemaContractVerifier(ORDER).validate_payloads([encode_json(record)])
    return [(v.kind, v.field) for q in report.quarantined_records for v in q.violations]


def test_order_contract_declares_the_enums_and_the_tick_mic_pattern() -> None:
    """side and order_type are enums; exchange has the tick contract's MIC pattern."""
    specs = {spec.name: spec for spec in ORDER.fields}
    tick = {spec.name: spec for spec in load_contract(CONTRACTS / "tick.yaml").fields}
    assert specs["side"].allowed == ("buy", "sell")
    assert specs["order_type"].allowed == ("limit", "market")
    assert specs["exchange"].pattern == tick["exchange"].pattern
    assert specs["qty"].min_value == 1 and not specs["qty"].is_nullable
    assert specs["price"].is_nullable and specs["price"].min_value > 0  # type: ignore[operator]


@pytest.mark.parametrize(
    "record",
    [LIMIT, LIMIT | {"side": "sell"}, LIMIT | {"order_type": "market", "price": None}],
    ids=["limit buy", "limit sell", "market"],
)
def test_order_contract_accepts_well_formed_orders(record: dict[str, Any]) -> None:
    """A limit order with a price and a market order without one pass."""
    assert kinds(record) == []


@pytest.mark.parametrize(
    ("change", "expected"),
    [
        ({"side": "hold"}, ("not_allowed", "side")),
        ({"side": "BUY"}, ("not_allowed", "side")),
        ({"order_type": "stop"}, ("not_allowed", "order_type")),
        ({"order_id": ""}, ("too_short", "order_id")),
        ({"order_id": "ORD 1"}, ("pattern_mismatch", "order_id")),
        ({"order_id": "X" * 65}, ("too_long", "order_id")),
        ({"exchange": ""}, ("pattern_mismatch", "exchange")),
        ({"exchange": "xnas"}, ("pattern_mismatch", "exchange")),
        ({"qty": 0}, ("below_min", "qty")),
        ({"price": 0.0}, ("below_min", "price")),
    ],
    ids=str,
)
def test_order_contract_refuses_a_broken_field(
    change: dict[str, Any], expected: tuple[str, str]
) -> None:
    """Each broken field is one violation of its kind on that field."""
    assert kinds(LIMIT | change) == [expected]


def test_order_contract_flags_a_fat_finger_without_quarantine() -> None:
    """An order over 100 million in notional flows, flagged by the fat_finger rule."""
    record = LIMIT | {"qty": 1_000_000, "price": 1000.0}
    report = DataSchemaContractVerifier(ORDER).validate_payloads([encode_json(record)])
    assert report.quarantined_count == 0
    assert report.flagged_counts == {"fat_finger": 1}
