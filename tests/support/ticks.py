"""The tick factories and the seed contract, shared by every test package (loaded once through
``pytest_plugins``).

Two contracts, one factory type: ``tick`` builds ticks valid under config/contracts/tick.yaml
(what the service, the CLI and the integration tests run), ``seed_tick`` ticks valid under the
seed spec's ``tick_contract()`` (price, volume, symbol; the verifier's unit tests). Call them at
module level, or take the ``make_tick`` fixture in a test.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from stream_validator import DataSchemaContractVerifier, FieldSpec, SchemaContract
from stream_validator.config.settings import RouteConfig
from stream_validator.contracts import load_contract
from stream_validator.service.plan.planner import BatchPlan, RouteProcessor

TICK_YAML = Path(__file__).resolve().parents[2] / "config" / "contracts" / "tick.yaml"


class TickFactory:
    """Builds valid ticks of one contract: ``factory(seq, **changes)`` gives a dict,
    ``factory.json(seq, **changes)`` its compact JSON bytes.

    ``seq`` makes each tick unique (tests find records by value); ``changes`` replace or add
    fields, so ``factory(3, price=None)`` is one null price and ``factory(3, venue="X")`` one
    undeclared field.
    """

    def __init__(self, fields: Callable[[int], dict[str, object]]) -> None:
        self._fields = fields

    def __call__(self, seq: int = 0, **changes: object) -> dict[str, object]:
        record = self._fields(seq)
        record.update(changes)
        return record

    def json(self, seq: int = 0, **changes: object) -> bytes:
        return json.dumps(self(seq, **changes), separators=(",", ":")).encode()


def _market_tick(seq: int) -> dict[str, object]:
    return {
        "symbol": f"SYM{seq % 13}",
        "exchange": "XNAS",
        "event_ts": "2026-11-30T14:30:00.000001+00:00",
        "seq": seq,
        "price": 100.0 + seq % 50,
        "size": 10 + seq % 7,
        "bid": 99.99,
        "ask": 100.01,
        "bid_sz": 3,
        "ask_sz": 4,
    }


def _seed_tick(seq: int) -> dict[str, object]:
    return {"price": 100.0 + seq, "volume": seq, "symbol": f"SYM{seq % 7}"}


tick = TickFactory(_market_tick)
"""Ticks valid under config/contracts/tick.yaml."""

seed_tick = TickFactory(_seed_tick)
"""Ticks valid under tick_contract()."""


@pytest.fixture
def make_tick() -> TickFactory:
    """The config/contracts/tick.yaml tick factory."""
    return tick


def counted(plan: BatchPlan) -> tuple[int, int, int]:
    """A plan's clean, DLQ and truncated DLQ outputs, as if every one was delivered as
    planned (the service counts what was acknowledged; tests of the plan count this)."""
    dlq = [out for out in plan.outputs if out.kind != "clean"]
    return len(plan.outputs) - len(dlq), len(dlq), sum(out.truncated for out in dlq)


def planned_event(plan: BatchPlan) -> dict[str, Any]:
    """The plan's batch event, as if every output was delivered as planned."""
    return plan.event(plan.violation_counts, counted(plan))


def tick_processor(
    *,
    contract: SchemaContract | None = None,
    max_message_bytes: int = 1_048_576,
    null_window: int = 500,
    **route_options: Any,
) -> RouteProcessor:
    """The pure pipeline of a route src -> clean | dlq checking ``tick`` records against
    config/contracts/tick.yaml (or ``contract``); ``route_options`` are RouteConfig fields."""
    route = RouteConfig(
        name="ticks",
        contract_path=str(TICK_YAML),
        contract=contract or load_contract(TICK_YAML),
        clean_topic="clean",
        dlq_topic="dlq",
        source_topics=("src",),
        **route_options,
    )
    return RouteProcessor(
        route,
        consumer_group="g",
        max_message_bytes=max_message_bytes,
        null_window=null_window,
    )


def tick_contract(**overrides: object) -> SchemaContract:
    """The seed spec's TickContract: price float > 0, volume int >= 0, symbol str."""
    fields = [
        FieldSpec("price", float, min_value=1e-9),
        FieldSpec("volume", int, min_value=0),
        FieldSpec("symbol", str),
    ]
    options: dict[str, object] = {"name": "tick", "fields": fields}
    options.update(overrides)
    return SchemaContract(**options)  # type: ignore[arg-type]


@pytest.fixture
def tick_verifier() -> DataSchemaContractVerifier:
    """A verifier for the seed spec's TickContract."""
    return DataSchemaContractVerifier(tick_contract())
