"""The service labels nested fields by their metric path (no index): ceilings, violations."""

from __future__ import annotations

import dataclasses

from prometheus_client import CollectorRegistry

from stream_validator import DataSchemaContractVerifier, FieldSpec, SchemaContract
from stream_validator.service.app import set_route_metrics
from stream_validator.service.telemetry.integritymetrics import IntegrityMetrics
from stream_validator.service.telemetry.metrics import ServiceMetrics
from tests.unit.service.fakeservice import service_config


def test_null_ceiling_gauge_names_nested_fields_by_metric_path() -> None:
    """A nullable item field gets its ceiling series as levels[].size at start-up."""
    level = FieldSpec("level", dict, fields=[FieldSpec("size", float, is_nullable=True)])
    contract = SchemaContract(
        "ob", [FieldSpec("levels", list, items=level)], max_allowed_null_pct=2.5
    )
    route = dataclasses.replace(service_config().routes[0], contract=contract)
    registry = CollectorRegistry()
    set_route_metrics(ServiceMetrics(registry), IntegrityMetrics(registry), route)
    labels = {"contract": "ob", "field": "levels[].size"}
    assert registry.get_sample_value("stream_validator_null_ceiling_ratio", labels) == 0.025


def test_nested_violations_are_labelled_by_path_without_indexes() -> None:
    """levels[3].price and levels[7].price count under one series, levels[].price."""
    contract = SchemaContract(
        "ob",
        [FieldSpec("levels", list, items=FieldSpec("l", dict, fields=[FieldSpec("price", float)]))],
    )
    verifier = DataSchemaContractVerifier(contract)
    bad = [{"price": 1.0}] * 3 + [{"price": "x"}] * 5
    report = verifier.validate_batch([{"levels": bad}, {"levels": [{"price": 1.0, "y": 1}]}])
    registry = CollectorRegistry()
    metrics = ServiceMetrics(registry)
    metrics.declare_route("r", "ob")
    metrics.observe_batch("r", report, duration_seconds=0.0, now=0.0)
    labels = {"contract": "ob", "field": "levels[].price", "kind": "type_mismatch", "rule": ""}
    assert registry.get_sample_value("stream_validator_violations_total", labels) == 5
    drift = {"contract": "ob", "field": "levels[].y"}
    assert registry.get_sample_value("stream_validator_unknown_fields_total", drift) == 1
