"""The service publishes the null ceiling of nested nullable fields under their paths."""

from __future__ import annotations

import dataclasses

from prometheus_client import CollectorRegistry

from stream_validator import FieldSpec, SchemaContract
from stream_validator.service.app import set_route_metrics
from stream_validator.service.integritymetrics import IntegrityMetrics
from stream_validator.service.metrics import ServiceMetrics
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
    assert registry.get_sample_value("stream_validator_null_ceiling_percent", labels) == 2.5
