"""IntegrityMetrics: symbol-state counters and gauge, NaN/±Inf rate gauges, label policy."""

from __future__ import annotations

import math

import pytest
from prometheus_client import CollectorRegistry

from stream_validator import (
    DataSchemaContractVerifier,
    FieldSpec,
    SchemaContract,
    SchemaContractValidationReport,
)
from stream_validator.service.http.metricsserver import render_metrics
from stream_validator.service.plan.routestate import StateSummary
from stream_validator.service.telemetry.integritymetrics import IntegrityMetrics

CONTRACT = SchemaContract(
    "quotes",
    [FieldSpec("symbol", str), FieldSpec("px", float, allow_non_finite=True)],
)
EVENTS = "stream_validator_symbol_events_total"


@pytest.fixture
def registry() -> CollectorRegistry:
    return CollectorRegistry()


@pytest.fixture
def integrity(registry: CollectorRegistry) -> IntegrityMetrics:
    return IntegrityMetrics(registry)


def report(records: list[dict[str, object]] | None = None) -> SchemaContractValidationReport:
    return DataSchemaContractVerifier(CONTRACT).validate_batch(
        records or [{"symbol": "A", "px": 1.0}]
    )


def value(registry: CollectorRegistry, name: str, **labels: str) -> float | None:
    return registry.get_sample_value(name, labels)


def test_state_counters_start_at_zero(
    registry: CollectorRegistry, integrity: IntegrityMetrics
) -> None:
    """set_state_contract creates every kind's counter, the evictions and the gauge at 0."""
    integrity.set_state_contract("quotes")
    for kind in ("sequence_gap", "sequence_regression", "event_time_regression", "frozen_quote"):
        assert value(registry, EVENTS, contract="quotes", kind=kind) == 0
    assert value(registry, "stream_validator_symbol_state_evictions_total", contract="quotes") == 0
    assert value(registry, "stream_validator_symbol_state_symbols", contract="quotes") == 0


def test_events_evictions_and_symbols_follow_the_summary(
    registry: CollectorRegistry, integrity: IntegrityMetrics
) -> None:
    """Counts add up per contract and kind; the gauge sums the routes of one contract."""
    summary = StateSummary(counts={"sequence_gap": 2, "frozen_quote": 1}, evictions=3, symbols=7)
    integrity.observe_batch("r1", report(), summary)
    integrity.observe_batch("r1", report(), StateSummary(counts={"sequence_gap": 1}, symbols=8))
    integrity.observe_batch("r2", report(), StateSummary(symbols=2))
    assert value(registry, EVENTS, contract="quotes", kind="sequence_gap") == 3
    assert value(registry, EVENTS, contract="quotes", kind="frozen_quote") == 1
    assert value(registry, "stream_validator_symbol_state_evictions_total", contract="quotes") == 3
    assert value(registry, "stream_validator_symbol_state_symbols", contract="quotes") == 10


def test_no_label_carries_a_symbol(
    registry: CollectorRegistry, integrity: IntegrityMetrics
) -> None:
    """Example symbols in the summary never reach /metrics."""
    summary = StateSummary(
        events={"sequence_gap": {"count": 1, "examples": ["SECRETSYM"]}},
        counts={"sequence_gap": 1},
        symbols=1,
    )
    integrity.observe_batch("r1", report(), summary)
    assert "SECRETSYM" not in render_metrics(registry)


def test_an_unknown_kind_is_refused_before_anything_is_recorded(
    registry: CollectorRegistry, integrity: IntegrityMetrics
) -> None:
    """A kind outside the closed set raises ValueError and leaves the registry untouched."""
    with pytest.raises(ValueError, match="kind"):
        integrity.observe_batch("r1", report(), StateSummary(counts={"AAPL": 1}))
    assert value(registry, EVENTS, contract="quotes", kind="AAPL") is None
    assert (
        value(registry, "stream_validator_batch_nan_ratio", contract="quotes", field="px") is None
    )


def test_nan_and_inf_rates_per_declared_field(
    registry: CollectorRegistry, integrity: IntegrityMetrics
) -> None:
    """The gauges hold the last batch's NaN and ±Inf share (0-1) per allow_non_finite field."""
    integrity.set_non_finite_fields("quotes", ["px"])
    assert value(registry, "stream_validator_batch_nan_ratio", contract="quotes", field="px") == 0
    records: list[dict[str, object]] = [
        {"symbol": "A", "px": math.nan},
        {"symbol": "A", "px": -math.inf},
        {"symbol": "A", "px": 1.0},
        {"symbol": "A", "px": 2.0},
    ]
    integrity.observe_batch("r1", report(records), None)
    assert (
        value(registry, "stream_validator_batch_nan_ratio", contract="quotes", field="px") == 0.25
    )
    assert (
        value(registry, "stream_validator_batch_inf_ratio", contract="quotes", field="px") == 0.25
    )
    assert value(registry, EVENTS, contract="quotes", kind="sequence_gap") is None
