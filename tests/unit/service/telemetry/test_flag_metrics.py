"""Flagged checks in Prometheus: stream_validator_flagged_violations_total and the rule label
of stream_validator_violations_total, unit and through the fake-broker service loop."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest
from prometheus_client import CollectorRegistry

from stream_validator import SchemaContractValidationReport
from stream_validator.config.settings import config_from_mapping
from stream_validator.service.telemetry.metrics import RECORD_LABEL, ServiceMetrics
from stream_validator.yamlfile import read_text_file, read_yaml
from tests.support.ticks import TICK_YAML
from tests.unit.service.fakeservice import Harness, service_config, tick

FLAGGED = "stream_validator_flagged_violations_total"
VIOLATIONS = "stream_validator_violations_total"


def report(**counts: object) -> SchemaContractValidationReport:
    return SchemaContractValidationReport(
        contract_name="tick",
        contract_version="1",
        max_allowed_null_pct=1.0,
        total_records=10,
        valid_records=[],
        valid_indices=[],
        quarantined_records=[],
        null_rates={},
        null_breach_fields={},
        observed_unknown_fields=set(),
        valid_count=10,
        quarantined_count=0,
        **counts,  # type: ignore[arg-type]
    )


@pytest.fixture
def registry() -> CollectorRegistry:
    return CollectorRegistry()


@pytest.fixture
def metrics(registry: CollectorRegistry) -> ServiceMetrics:
    return ServiceMetrics(registry)


def flagged(registry: CollectorRegistry, field: str, kind: str, rule: str) -> float | None:
    labels = {"route": "ticks", "contract": "tick", "field": field, "kind": kind, "rule": rule}
    return registry.get_sample_value(FLAGGED, labels)


def test_declare_flags_creates_flag_rule_series_at_zero(
    metrics: ServiceMetrics, registry: CollectorRegistry
) -> None:
    """A route's flag rules have their flagged counter at 0 from start-up."""
    metrics.declare_flags("ticks", "tick", ["locked_book"])
    assert flagged(registry, RECORD_LABEL, "rule_violation", "locked_book") == 0


def test_flagged_rules_and_fields_are_counted_per_route(
    metrics: ServiceMetrics, registry: CollectorRegistry
) -> None:
    """Flag rules count under rule=<name>; flagged fields under field=<name>, kind, rule=""."""
    batch = report(
        flagged_counts=Counter({"locked_book": 2}),
        flagged_field_counts=Counter({("size", "below_min"): 3}),
        flagged_records=4,
    )
    metrics.observe_batch("ticks", batch, duration_seconds=0.01, now=1.0)
    metrics.observe_batch("ticks", batch, duration_seconds=0.01, now=1.0)
    assert flagged(registry, RECORD_LABEL, "rule_violation", "locked_book") == 4
    assert flagged(registry, "size", "below_min", "") == 6


def test_rule_violations_carry_their_rule_label(
    metrics: ServiceMetrics, registry: CollectorRegistry
) -> None:
    """violations_total splits rule_violation by rule; other kinds have rule=""."""
    batch = report(
        violation_counts=Counter({(None, "rule_violation"): 3, ("size", "below_min"): 1}),
        rule_violation_counts=Counter({"crossed_book": 2, "wide": 1}),
    )
    metrics.observe_batch("ticks", batch, duration_seconds=0.01, now=1.0)
    rule = {"contract": "tick", "field": RECORD_LABEL, "kind": "rule_violation"}
    assert registry.get_sample_value(VIOLATIONS, {**rule, "rule": "crossed_book"}) == 2
    assert registry.get_sample_value(VIOLATIONS, {**rule, "rule": "wide"}) == 1
    below = {"contract": "tick", "field": "size", "kind": "below_min", "rule": ""}
    assert registry.get_sample_value(VIOLATIONS, below) == 1


def test_an_unknown_flagged_kind_raises_before_recording(
    metrics: ServiceMetrics, registry: CollectorRegistry
) -> None:
    """A flagged field count with a kind outside ViolationKind records nothing."""
    batch = report(flagged_field_counts=Counter({("size", "made_up"): 1}))
    with pytest.raises(ValueError, match="made_up"):
        metrics.observe_batch("ticks", batch, duration_seconds=0.01, now=1.0)
    labels = {"route": "ticks", "contract": "tick"}
    assert registry.get_sample_value("stream_validator_batches_total", labels) is None


def test_the_service_counts_flag_rules_and_rule_violations_by_name() -> None:
    """Through the loop: a locked book flows and is flagged; a crossed book is counted by rule."""
    h = Harness(service_config())
    h.feed([tick.json(1, bid=100.0, ask=100.0), tick.json(2, bid=101.0, ask=100.0)])
    assert h.run() == 0
    assert h.counts()["clean_topic"] == 1 and h.counts()["dlq_topic"] == 1
    assert flagged(h.registry, RECORD_LABEL, "rule_violation", "locked_book") == 1
    assert flagged(h.registry, RECORD_LABEL, "rule_violation", "spread_band") == 0
    labels = {"contract": "tick", "field": RECORD_LABEL, "kind": "rule_violation"}
    assert h.counter(VIOLATIONS, **labels, rule="crossed_book") == 1


def test_the_service_sends_a_flagged_field_breach_on_and_counts_it(tmp_path: Path) -> None:
    """Through the loop: size with action flag below its min goes to clean and is counted."""
    document, _ = read_yaml(read_text_file(TICK_YAML))
    for spec in document["fields"]:
        if spec["name"] == "size":
            spec["action"] = "flag"
    contract = tmp_path / "tick.json"
    contract.write_text(json.dumps(document))
    config = config_from_mapping(
        {
            "kafka": {"group_id": "svc"},
            "batch": {"max_records": 10, "timeout_s": 0.01},
            "service": {"retry_backoff_s": 0.001, "retry_backoff_max_s": 0.001},
            "metrics": {"enabled": False},
            "routes": [
                {
                    "name": "ticks",
                    "source_topics": ["src"],
                    "contract": str(contract),
                    "clean_topic": "clean",
                    "dlq_topic": "dlq",
                }
            ],
        }
    )
    h = Harness(config)
    h.feed([tick.json(1, size=-5), tick.json(2), tick.json(3, size=-5, price=-1.0)])
    assert h.run() == 0
    assert h.counts()["clean_topic"] == 2 and h.counts()["dlq_topic"] == 1
    assert flagged(h.registry, "size", "below_min", "") == 1
    (dlq,) = h.topic("dlq")
    envelope = json.loads(dlq.value or b"")
    assert [(v["field"], v.get("action")) for v in envelope["violations"]] == [
        ("price", None),
        ("size", "flag"),
    ]
