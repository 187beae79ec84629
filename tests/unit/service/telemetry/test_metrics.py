"""ServiceMetrics: the right series and values, bounded label sets, librdkafka stats, /metrics."""

from __future__ import annotations

import json
import math
import urllib.request
from collections import Counter
from typing import Any

import pytest
from prometheus_client import CollectorRegistry

from stream_validator import (
    DataSchemaContractVerifier,
    FieldSpec,
    SchemaContract,
    SchemaContractValidationReport,
)
from stream_validator.service.http.metricsserver import render_metrics, start_http_server
from stream_validator.service.telemetry.metrics import OVERFLOW_LABEL, RECORD_LABEL, ServiceMetrics
from tests.support.http import half_sent
from tests.support.ticks import tick_contract

NOW = 1_700_000_000.0


@pytest.fixture
def registry() -> CollectorRegistry:
    return CollectorRegistry()


@pytest.fixture
def metrics(registry: CollectorRegistry) -> ServiceMetrics:
    return ServiceMetrics(registry, max_unknown_field_labels=3)


def report(
    contract: str = "tick",
    *,
    total: int = 10,
    valid: int = 10,
    quarantined: int = 0,
    violations: dict[tuple[str | None, str], int] | None = None,
    null_rates: dict[str, float] | None = None,
    breaches: dict[str, float] | None = None,
    unknown: set[str] | None = None,
) -> SchemaContractValidationReport:
    return SchemaContractValidationReport(
        contract_name=contract,
        contract_version="1",
        max_allowed_null_pct=1.0,
        total_records=total,
        valid_records=[],
        valid_indices=[],
        quarantined_records=[],
        null_rates=null_rates or {},
        null_breach_fields=breaches or {},
        observed_unknown_fields=unknown or set(),
        violation_counts=Counter(violations or {}),
        valid_count=valid,
        quarantined_count=quarantined,
    )


def observe(metrics: ServiceMetrics, rep: SchemaContractValidationReport, now: float = NOW) -> None:
    metrics.observe_batch("ticks", rep, duration_seconds=0.02, now=now)


def value(registry: CollectorRegistry, name: str, **labels: str) -> float | None:
    return registry.get_sample_value(name, labels)


def sample_count(registry: CollectorRegistry) -> int:
    return sum(len(family.samples) for family in registry.collect())


def label_values(registry: CollectorRegistry) -> set[str]:
    return {
        v
        for family in registry.collect()
        for sample in family.samples
        for v in sample.labels.values()
    }


def field_labels(registry: CollectorRegistry, family_name: str) -> set[str]:
    return {
        sample.labels["field"]
        for family in registry.collect()
        if family.name == family_name
        for sample in family.samples
    }


def test_build_info_sets_version_and_contracts(registry: CollectorRegistry) -> None:
    """set_build_info publishes build_info{version} and contract_info{contract,version} as 1."""
    ServiceMetrics(registry).set_build_info("0.1.0", {"tick": "1", "ohlcv_bar": "2"})
    assert value(registry, "stream_validator_build_info", version="0.1.0") == 1
    assert value(registry, "stream_validator_contract_info", contract="tick", version="1") == 1
    assert value(registry, "stream_validator_contract_info", contract="ohlcv_bar", version="2") == 1


def test_build_info_replaces_previous_version(registry: CollectorRegistry) -> None:
    """A second set_build_info leaves no stale version series behind."""
    metrics = ServiceMetrics(registry)
    metrics.set_build_info("0.1.0", {"tick": "1"})
    metrics.set_build_info("0.2.0", {"tick": "2"})
    assert value(registry, "stream_validator_build_info", version="0.1.0") is None
    assert value(registry, "stream_validator_contract_info", contract="tick", version="1") is None
    assert value(registry, "stream_validator_contract_info", contract="tick", version="2") == 1


def test_build_info_creates_drift_counter_at_zero(registry: CollectorRegistry) -> None:
    """Drift counters exist at 0 from startup so increase() sees the first drift batch."""
    ServiceMetrics(registry).set_build_info("0.1.0", {"tick": "1"})
    assert value(registry, "stream_validator_drift_batches_total", contract="tick") == 0


def test_null_ceiling_gauge_per_field(metrics: ServiceMetrics, registry: CollectorRegistry) -> None:
    """set_null_ceiling publishes the ceiling as a ratio (the contract's 1.5 % is 0.015) for
    each nullable field, and zeroed breach counters."""
    metrics.set_null_ceiling("tick", ["bid", "ask"], 1.5)
    for name in ("bid", "ask"):
        labels = {"contract": "tick", "field": name}
        assert value(registry, "stream_validator_null_ceiling_ratio", **labels) == 0.015
        assert value(registry, "stream_validator_null_ceiling_breaches_total", **labels) == 0


def test_null_ceiling_rejects_a_bare_string(metrics: ServiceMetrics) -> None:
    """A str passed as the field list is a programming error, not one label per character."""
    with pytest.raises(ValueError, match="sequence of names"):
        metrics.set_null_ceiling("tick", "bid", 1.0)


@pytest.mark.parametrize("pct", [-0.1, 100.5, math.nan])
def test_null_ceiling_rejects_pct_outside_0_100(metrics: ServiceMetrics, pct: float) -> None:
    """The ceiling is a percentage in [0, 100]."""
    with pytest.raises(ValueError, match="pct"):
        metrics.set_null_ceiling("tick", ["bid"], pct)


def test_observe_batch_counts_records(metrics: ServiceMetrics, registry: CollectorRegistry) -> None:
    """Consumed, valid and quarantined counters add the report's counts per route and contract."""
    observe(metrics, report(total=10, valid=7, quarantined=3))
    observe(metrics, report(total=5, valid=5, quarantined=0))
    labels = {"route": "ticks", "contract": "tick"}
    assert value(registry, "stream_validator_records_consumed_total", **labels) == 15
    assert value(registry, "stream_validator_records_valid_total", **labels) == 12
    assert value(registry, "stream_validator_records_quarantined_total", **labels) == 3
    assert value(registry, "stream_validator_batches_total", **labels) == 2


def test_series_stay_apart_per_route_and_contract(
    metrics: ServiceMetrics, registry: CollectorRegistry
) -> None:
    """Batches of several routes and contracts, interleaved, each land on their own series
    (the children kept per route and per field must not be mixed up)."""
    for _ in range(2):
        metrics.observe_batch("a", report("tick", total=3, valid=3), duration_seconds=0, now=NOW)
        metrics.observe_batch("b", report("tick", total=5, valid=5), duration_seconds=0, now=NOW)
        metrics.observe_batch(
            "a",
            report("bar", total=7, valid=7, null_rates={"bid": 2.0}, breaches={"bid": 2.0}),
            duration_seconds=0,
            now=NOW,
        )
    consumed = "stream_validator_records_consumed_total"
    assert value(registry, consumed, route="a", contract="tick") == 6
    assert value(registry, consumed, route="b", contract="tick") == 10
    assert value(registry, consumed, route="a", contract="bar") == 14
    rate = "stream_validator_batch_null_ratio"
    assert value(registry, rate, contract="bar", field="bid") == 0.02
    assert value(registry, rate, contract="tick", field="bid") is None
    breaches = "stream_validator_null_ceiling_breaches_total"
    assert value(registry, breaches, contract="bar", field="bid") == 2


def test_observe_batch_counts_delivered_outputs_when_given(
    metrics: ServiceMetrics, registry: CollectorRegistry
) -> None:
    """clean/dlq (what was delivered) override the verdict: a valid record sent to the DLQ
    (null-ceiling quarantine, oversized) counts as quarantined, not valid."""
    rep = report(total=10, valid=10, quarantined=0)
    metrics.observe_batch("ticks", rep, duration_seconds=0.01, now=NOW, clean=0, dlq=10)
    labels = {"route": "ticks", "contract": "tick"}
    assert value(registry, "stream_validator_records_valid_total", **labels) == 0
    assert value(registry, "stream_validator_records_quarantined_total", **labels) == 10
    with pytest.raises(ValueError, match="clean and dlq"):
        metrics.observe_batch("ticks", rep, duration_seconds=0.01, now=NOW, clean=-1, dlq=0)


def test_hook_errors_are_counted_per_hook(
    metrics: ServiceMetrics, registry: CollectorRegistry
) -> None:
    """A failing hook is counted under its name; unknown names are refused."""
    metrics.inc_hook_error("on_batch")
    metrics.inc_hook_error("batch report")
    assert value(registry, "stream_validator_hook_errors_total", hook="on_batch") == 1
    with pytest.raises(ValueError):
        metrics.inc_hook_error("symbol=AAPL")


def test_observe_batch_fills_size_and_duration_histograms(
    metrics: ServiceMetrics, registry: CollectorRegistry
) -> None:
    """Batch size and duration land in their per-route histograms."""
    metrics.observe_batch("ticks", report(total=80, valid=80), duration_seconds=0.03, now=NOW)
    size = "stream_validator_batch_size_records"
    assert value(registry, f"{size}_count", route="ticks") == 1
    assert value(registry, f"{size}_sum", route="ticks") == 80
    assert value(registry, f"{size}_bucket", route="ticks", le="50.0") == 0
    assert value(registry, f"{size}_bucket", route="ticks", le="100.0") == 1
    duration = "stream_validator_batch_duration_seconds"
    assert value(registry, f"{duration}_sum", route="ticks") == pytest.approx(0.03)
    assert value(registry, f"{duration}_bucket", route="ticks", le="0.05") == 1


def test_violations_by_declared_field_and_kind(
    metrics: ServiceMetrics, registry: CollectorRegistry
) -> None:
    """violations_total adds each (field, kind) count under the declared field name."""
    observe(metrics, report(violations={("price", "below_min"): 4, ("size", "type_mismatch"): 1}))
    observe(metrics, report(violations={("price", "below_min"): 2}))
    name = "stream_validator_violations_total"
    assert value(registry, name, contract="tick", field="price", kind="below_min", rule="") == 6
    assert value(registry, name, contract="tick", field="size", kind="type_mismatch", rule="") == 1


def test_record_level_violation_uses_record_label(
    metrics: ServiceMetrics, registry: CollectorRegistry
) -> None:
    """A violation with field None is labelled field="_record"."""
    observe(metrics, report(violations={(None, "undecodable"): 2}))
    labels = {"contract": "tick", "field": RECORD_LABEL, "kind": "undecodable", "rule": ""}
    assert value(registry, "stream_validator_violations_total", **labels) == 2


def test_unknown_field_violation_uses_capped_label(
    metrics: ServiceMetrics, registry: CollectorRegistry
) -> None:
    """unknown_field violations past the label cap are counted under __overflow__."""
    names = ["a", "b", "c", "d", "e"]
    observe(
        metrics, report(unknown=set(names), violations={(n, "unknown_field"): 1 for n in names})
    )
    name = "stream_validator_violations_total"
    assert value(registry, name, contract="tick", field="a", kind="unknown_field", rule="") == 1
    assert value(registry, name, contract="tick", field="d", kind="unknown_field", rule="") is None
    overflow = {"contract": "tick", "field": OVERFLOW_LABEL, "kind": "unknown_field", "rule": ""}
    assert value(registry, name, **overflow) == 2


def test_null_rate_gauge_holds_last_batch(
    metrics: ServiceMetrics, registry: CollectorRegistry
) -> None:
    """batch_null_ratio is the last batch's null share (0-1) per field; the report's rates
    are percent."""
    observe(metrics, report(null_rates={"bid": 12.5, "ask": 0.0}))
    observe(metrics, report(null_rates={"bid": 0.5, "ask": 0.0}))
    name = "stream_validator_batch_null_ratio"
    assert value(registry, name, contract="tick", field="bid") == 0.005
    assert value(registry, name, contract="tick", field="ask") == 0.0


def test_null_ceiling_breach_counted_per_batch(
    metrics: ServiceMetrics, registry: CollectorRegistry
) -> None:
    """Each batch breaching a field's ceiling adds 1; fields not breached stay at 0."""
    rates = {"bid": 40.0, "ask": 0.0}
    observe(metrics, report(null_rates=rates, breaches={"bid": 40.0}))
    observe(metrics, report(null_rates=rates, breaches={"bid": 40.0}))
    name = "stream_validator_null_ceiling_breaches_total"
    assert value(registry, name, contract="tick", field="bid") == 2
    assert value(registry, name, contract="tick", field="ask") == 0


def test_unknown_field_counted_once_per_batch(
    metrics: ServiceMetrics, registry: CollectorRegistry
) -> None:
    """unknown_fields_total adds 1 per batch in which the field was seen."""
    observe(metrics, report(unknown={"venue"}))
    observe(metrics, report(unknown={"venue"}))
    observe(metrics, report())
    assert (
        value(registry, "stream_validator_unknown_fields_total", contract="tick", field="venue")
        == 2
    )


def test_drift_batches_counted(metrics: ServiceMetrics, registry: CollectorRegistry) -> None:
    """drift_batches_total counts batches with any unknown field, and exists at 0 otherwise."""
    observe(metrics, report(contract="bar"))
    assert value(registry, "stream_validator_drift_batches_total", contract="bar") == 0
    observe(metrics, report(contract="bar", unknown={"x", "y"}))
    assert value(registry, "stream_validator_drift_batches_total", contract="bar") == 1


def test_first_seen_timestamp_set_once(
    metrics: ServiceMetrics, registry: CollectorRegistry
) -> None:
    """The first-seen gauge keeps the time of the first batch that carried the field."""
    observe(metrics, report(unknown={"venue"}), now=NOW)
    observe(metrics, report(unknown={"venue"}), now=NOW + 60)
    name = "stream_validator_unknown_field_first_seen_timestamp_seconds"
    assert value(registry, name, contract="tick", field="venue") == NOW


def test_overflow_label_past_the_cap(metrics: ServiceMetrics, registry: CollectorRegistry) -> None:
    """Names beyond max_unknown_field_labels per contract share the __overflow__ label."""
    observe(metrics, report(unknown={"a", "b", "c"}), now=NOW)
    observe(metrics, report(unknown={"d", "e"}), now=NOW + 1)
    observe(metrics, report(unknown={"a", "f"}), now=NOW + 2)
    name = "stream_validator_unknown_fields_total"
    assert value(registry, name, contract="tick", field="a") == 2
    assert value(registry, name, contract="tick", field="d") is None
    assert value(registry, name, contract="tick", field=OVERFLOW_LABEL) == 2
    first_seen = "stream_validator_unknown_field_first_seen_timestamp_seconds"
    assert value(registry, first_seen, contract="tick", field=OVERFLOW_LABEL) == NOW + 1


def test_unknown_label_cap_is_per_contract(
    metrics: ServiceMetrics, registry: CollectorRegistry
) -> None:
    """One contract's drift does not use up another contract's label budget."""
    observe(metrics, report(contract="tick", unknown={"a", "b", "c", "d"}))
    observe(metrics, report(contract="bar", unknown={"z"}))
    assert value(registry, "stream_validator_unknown_fields_total", contract="bar", field="z") == 1


@pytest.mark.parametrize("bad", ["x" * 129, "tab\there", "\ud800", OVERFLOW_LABEL, RECORD_LABEL])
def test_unsafe_unknown_names_go_to_overflow(
    metrics: ServiceMetrics, registry: CollectorRegistry, bad: str
) -> None:
    """Over-long, non-printable or reserved names never become their own label."""
    observe(metrics, report(unknown={bad}))
    assert field_labels(registry, "stream_validator_unknown_fields") == {OVERFLOW_LABEL}


def test_10k_distinct_symbols_add_no_series(registry: CollectorRegistry) -> None:
    """10k bad records with 10k distinct symbols add no series and no symbol label."""
    metrics = ServiceMetrics(registry)
    verifier = DataSchemaContractVerifier(tick_contract())
    bad = [{"price": -1.0, "volume": i, "symbol": f"SYM{i:05d}"} for i in range(10_000)]
    observe(metrics, verifier.validate_batch(bad[:10]))
    before = sample_count(registry)
    rep = verifier.validate_batch(bad)
    observe(metrics, rep)
    assert rep.quarantined_count == 10_000
    assert sample_count(registry) == before
    assert not any(v.startswith("SYM") for v in label_values(registry))
    assert "SYM09999" not in render_metrics(registry)


def test_10k_distinct_unknown_fields_add_bounded_series(registry: CollectorRegistry) -> None:
    """A stream of batches with 10k distinct unknown field names adds series bounded by the cap."""
    cap = 20
    metrics = ServiceMetrics(registry, max_unknown_field_labels=cap)
    contract = SchemaContract(
        "tick", (FieldSpec("price", float), FieldSpec("symbol", str)), forbid_unknown_fields=True
    )
    verifier = DataSchemaContractVerifier(contract)
    observe(metrics, verifier.validate_batch([{"price": 1.0, "symbol": "A"}]))
    before = sample_count(registry)
    for batch in range(100):
        records = [{"price": 1.0, "symbol": "A", f"x{batch}_{i}": 1} for i in range(100)]
        observe(metrics, verifier.validate_batch(records))
    # Per admitted label (cap + overflow): unknown_fields_total + _created, first-seen gauge,
    # violations_total + _created.
    assert sample_count(registry) - before <= 5 * (cap + 1)
    assert len(field_labels(registry, "stream_validator_unknown_fields")) == cap + 1


def test_unknown_violation_kind_raises_before_recording(
    metrics: ServiceMetrics, registry: CollectorRegistry
) -> None:
    """A kind outside ViolationKind raises ValueError and records nothing of the batch."""
    with pytest.raises(ValueError, match="unknown violation kinds"):
        observe(metrics, report(violations={("price", "made_up"): 1}))
    assert (
        value(registry, "stream_validator_records_consumed_total", route="ticks", contract="tick")
        is None
    )


@pytest.mark.parametrize("route", ["", "bad\nroute", "r" * 250])
def test_invalid_route_raises(metrics: ServiceMetrics, route: str) -> None:
    """Route labels must be printable, non-empty and at most 249 characters."""
    with pytest.raises(ValueError, match="route"):
        metrics.observe_batch(route, report(), duration_seconds=0.1, now=NOW)


def test_negative_duration_raises(metrics: ServiceMetrics) -> None:
    """A negative batch duration is a programming error."""
    with pytest.raises(ValueError, match="duration_seconds"):
        metrics.observe_batch("ticks", report(), duration_seconds=-1.0, now=NOW)


def test_end_to_end_latency_histogram(metrics: ServiceMetrics, registry: CollectorRegistry) -> None:
    """Latencies land in the per-route end-to-end histogram."""
    metrics.observe_end_to_end_latency("ticks", [0.004, 0.2, 3.0])
    name = "stream_validator_end_to_end_latency_seconds"
    assert value(registry, f"{name}_count", route="ticks") == 3
    assert value(registry, f"{name}_bucket", route="ticks", le="0.005") == 1
    assert value(registry, f"{name}_bucket", route="ticks", le="0.25") == 2


def test_latency_clamps_skew_and_skips_non_finite(
    metrics: ServiceMetrics, registry: CollectorRegistry
) -> None:
    """Negative latencies (clock skew) count as 0; NaN and inf are dropped."""
    metrics.observe_end_to_end_latency("ticks", [-2.0, math.nan, math.inf])
    name = "stream_validator_end_to_end_latency_seconds"
    assert value(registry, f"{name}_count", route="ticks") == 1
    assert value(registry, f"{name}_sum", route="ticks") == 0


def test_consumer_lag_gauge(metrics: ServiceMetrics, registry: CollectorRegistry) -> None:
    """set_consumer_lag publishes lag per topic and partition."""
    metrics.set_consumer_lag("md.ticks", 3, 42)
    labels = {"topic": "md.ticks", "partition": "3"}
    assert value(registry, "stream_validator_consumer_lag_records", **labels) == 42


@pytest.mark.parametrize(("partition", "lag"), [(-1, 0), (0, -1), (True, 0), (0, 1.5)])
def test_consumer_lag_rejects_bad_numbers(
    metrics: ServiceMetrics, partition: Any, lag: Any
) -> None:
    """Partition and lag must be ints >= 0."""
    with pytest.raises(ValueError):
        metrics.set_consumer_lag("md.ticks", partition, lag)


def test_remove_partition_drops_series(
    metrics: ServiceMetrics, registry: CollectorRegistry
) -> None:
    """A revoked partition's lag series disappears; the others stay."""
    metrics.set_consumer_lag("md.ticks", 0, 5)
    metrics.set_consumer_lag("md.ticks", 1, 7)
    metrics.remove_partition("md.ticks", 0)
    name = "stream_validator_consumer_lag_records"
    assert value(registry, name, topic="md.ticks", partition="0") is None
    assert value(registry, name, topic="md.ticks", partition="1") == 7


def test_remove_unknown_partition_is_a_noop(metrics: ServiceMetrics) -> None:
    """Removing a partition that has no series does not raise."""
    metrics.remove_partition("md.ticks", 9)


# A consumer's statistics JSON, cut down to the fields ServiceMetrics reads plus neighbours
# (librdkafka STATISTICS.md layout): partition 0 assigned and fetching, partition 1 revoked
# (librdkafka 2.x keeps its last lag, 40, frozen after an unassign), partition 3 assigned
# but its lag not known yet (-1), and the internal UA partition -1.
LIBRDKAFKA_STATS = """
{
  "name": "rdkafka#consumer-1", "client_id": "stream-validator", "type": "consumer",
  "ts": 1093839219034, "time": 1717000000, "replyq": 0,
  "topics": {
    "md.ticks": {
      "topic": "md.ticks", "age": 60012, "metadata_age": 5003,
      "partitions": {
        "0": {
          "partition": 0, "broker": 1, "leader": 1, "desired": true, "unknown": false,
          "fetchq_cnt": 120, "fetchq_size": 38911, "fetch_state": "active",
          "query_offset": -1001, "next_offset": 18230, "app_offset": 18230,
          "stored_offset": 18230, "committed_offset": 18100, "eof_offset": 18230,
          "lo_offset": 0, "hi_offset": 18342, "ls_offset": 18342,
          "consumer_lag": 242, "consumer_lag_stored": 112,
          "rxmsgs": 18230, "rxbytes": 5512031, "msgs": 18230, "rx_ver_drops": 0
        },
        "1": {
          "partition": 1, "broker": 2, "leader": 2, "desired": false, "unknown": false,
          "fetch_state": "stopped", "committed_offset": 60, "hi_offset": 100,
          "ls_offset": 100, "consumer_lag": 40, "consumer_lag_stored": 40
        },
        "3": {
          "partition": 3, "broker": 1, "leader": 1, "desired": true, "unknown": false,
          "fetch_state": "offset-query", "committed_offset": -1001, "hi_offset": -1001,
          "ls_offset": -1001, "consumer_lag": -1, "consumer_lag_stored": -1
        },
        "-1": {
          "partition": -1, "broker": -1, "leader": -1, "desired": false, "unknown": false,
          "fetch_state": "none", "committed_offset": -1001, "consumer_lag": -1
        }
      }
    },
    "md.bars": {
      "topic": "md.bars", "age": 60010, "metadata_age": 5003,
      "partitions": {
        "2": {"partition": 2, "fetch_state": "active", "consumer_lag": 0}
      }
    }
  },
  "cgrp": {"state": "up", "join_state": "steady", "rebalance_cnt": 1, "assignment_size": 2}
}
"""


def test_librdkafka_stats_set_lag(metrics: ServiceMetrics, registry: CollectorRegistry) -> None:
    """consumer_lag of each assigned partition becomes the lag gauge."""
    metrics.update_from_librdkafka_stats(json.loads(LIBRDKAFKA_STATS))
    name = "stream_validator_consumer_lag_records"
    assert value(registry, name, topic="md.ticks", partition="0") == 242
    assert value(registry, name, topic="md.bars", partition="2") == 0


def test_librdkafka_stats_skip_internal_and_unknown_lag(
    metrics: ServiceMetrics, registry: CollectorRegistry
) -> None:
    """The internal partition -1 and a lag of -1 (not known yet) produce no series."""
    metrics.update_from_librdkafka_stats(json.loads(LIBRDKAFKA_STATS))
    name = "stream_validator_consumer_lag_records"
    assert value(registry, name, topic="md.ticks", partition="3") is None
    assert value(registry, name, topic="md.ticks", partition="-1") is None


def test_librdkafka_stats_drop_revoked_partition(
    metrics: ServiceMetrics, registry: CollectorRegistry
) -> None:
    """A partition no longer fetched loses its series despite its stale non-negative lag."""
    metrics.set_consumer_lag("md.ticks", 1, 40)
    metrics.update_from_librdkafka_stats(json.loads(LIBRDKAFKA_STATS))
    name = "stream_validator_consumer_lag_records"
    assert value(registry, name, topic="md.ticks", partition="1") is None


@pytest.mark.parametrize(
    "stats",
    [
        {},
        {"topics": []},
        {"topics": {"t": None}},
        {"topics": {"t": {"partitions": {"0": {"consumer_lag": "7"}}}}},
        {"topics": {"t": {"partitions": {"x": {"consumer_lag": 7}}}}},
        {"topics": {"": {"partitions": {"0": {"consumer_lag": 7}}}}},
    ],
)
def test_librdkafka_stats_ignore_malformed(
    metrics: ServiceMetrics, registry: CollectorRegistry, stats: dict[str, Any]
) -> None:
    """Malformed statistics are skipped without raising and without series."""
    metrics.update_from_librdkafka_stats(stats)
    assert not [
        f for f in registry.collect() if f.name.endswith("consumer_lag_records") and f.samples
    ]


def test_rebalance_counter(metrics: ServiceMetrics, registry: CollectorRegistry) -> None:
    """inc_rebalance counts per event; all three events exist at 0 from the start."""
    metrics.inc_rebalance("revoked")
    assert value(registry, "stream_validator_rebalances_total", event="revoked") == 1
    assert value(registry, "stream_validator_rebalances_total", event="lost") == 0


def test_rebalance_rejects_unknown_event(metrics: ServiceMetrics) -> None:
    """An event outside {assigned, revoked, lost} raises ValueError."""
    with pytest.raises(ValueError, match="event"):
        metrics.inc_rebalance("rejoined")


def test_delivery_failure_counter(metrics: ServiceMetrics, registry: CollectorRegistry) -> None:
    """inc_delivery_failure counts per route and output."""
    metrics.inc_delivery_failure("ticks", "dlq")
    name = "stream_validator_delivery_failures_total"
    assert value(registry, name, route="ticks", output="dlq") == 1


def test_delivery_failures_start_at_zero(
    metrics: ServiceMetrics, registry: CollectorRegistry
) -> None:
    """After a route's first batch its failure and truncation counters exist at 0."""
    observe(metrics, report())
    name = "stream_validator_delivery_failures_total"
    assert value(registry, name, route="ticks", output="clean") == 0
    assert value(registry, "stream_validator_dlq_envelopes_truncated_total", route="ticks") == 0


def test_a_declared_route_starts_at_zero(
    metrics: ServiceMetrics, registry: CollectorRegistry
) -> None:
    """declare_route (at start-up) creates the route's counters at 0 before any batch, so
    that increase() catches a delivery failure of the very first batch."""
    metrics.declare_route("ticks", "tick")
    name = "stream_validator_delivery_failures_total"
    for output in ("clean", "dlq"):
        assert registry.get_sample_value(name, {"route": "ticks", "output": output}) == 0
    labels = {"route": "ticks", "contract": "tick"}
    assert registry.get_sample_value("stream_validator_records_consumed_total", labels) == 0
    metrics.inc_delivery_failure("ticks", "dlq")
    observe(metrics, report())  # the first batch reuses the declared series
    assert registry.get_sample_value(name, {"route": "ticks", "output": "dlq"}) == 1


def test_delivery_failure_rejects_unknown_output(metrics: ServiceMetrics) -> None:
    """An output outside {clean, dlq} raises ValueError."""
    with pytest.raises(ValueError, match="output"):
        metrics.inc_delivery_failure("ticks", "md.ticks.clean")


def test_dlq_truncated_counter(metrics: ServiceMetrics, registry: CollectorRegistry) -> None:
    """inc_dlq_truncated counts per route."""
    metrics.inc_dlq_truncated("ticks")
    assert value(registry, "stream_validator_dlq_envelopes_truncated_total", route="ticks") == 1


def test_last_commit_timestamp(metrics: ServiceMetrics, registry: CollectorRegistry) -> None:
    """set_last_commit publishes the commit time."""
    metrics.set_last_commit(NOW)
    assert value(registry, "stream_validator_last_commit_timestamp_seconds") == NOW


def test_last_commit_rejects_nan(metrics: ServiceMetrics) -> None:
    """A NaN commit time is a programming error."""
    with pytest.raises(ValueError, match="timestamp"):
        metrics.set_last_commit(math.nan)


def test_ready_gauge(metrics: ServiceMetrics, registry: CollectorRegistry) -> None:
    """set_ready publishes 1 or 0."""
    metrics.set_ready(True)
    assert value(registry, "stream_validator_ready") == 1
    metrics.set_ready(False)
    assert value(registry, "stream_validator_ready") == 0


def test_negative_label_cap_rejected(registry: CollectorRegistry) -> None:
    """max_unknown_field_labels must be an int >= 0."""
    with pytest.raises(ValueError, match="max_unknown_field_labels"):
        ServiceMetrics(registry, max_unknown_field_labels=-1)


def test_metric_names_follow_the_convention(
    metrics: ServiceMetrics, registry: CollectorRegistry
) -> None:
    """Every metric is stream_validator_<thing>_<unit>; counters end in _total."""
    units = ("_total", "_info", "_ratio", "_records", "_seconds", "_ready")
    for family in registry.collect():
        name = family.name + ("_total" if family.type == "counter" else "")
        assert name.startswith("stream_validator_")
        assert name.endswith(units), name


def test_render_metrics_is_text_exposition(
    metrics: ServiceMetrics, registry: CollectorRegistry
) -> None:
    """render_metrics returns the text format with HELP/TYPE lines."""
    metrics.set_ready(True)
    text = render_metrics(registry)
    assert "# TYPE stream_validator_ready gauge" in text
    assert "stream_validator_ready 1.0" in text


def test_http_server_serves_registry_and_closes(
    metrics: ServiceMetrics, registry: CollectorRegistry
) -> None:
    """start_http_server serves the injected registry on /metrics and close() frees it."""
    metrics.set_ready(True)
    server = start_http_server(registry, port=0)
    try:
        url = f"http://127.0.0.1:{server.port}/metrics"
        with urllib.request.urlopen(url, timeout=5) as response:
            body = response.read().decode()
    finally:
        server.close()
    assert "stream_validator_ready 1.0" in body
    assert not server.thread.is_alive()


def test_metrics_server_bounds_half_sent_requests(registry: CollectorRegistry) -> None:
    """100 half-sent requests hold at most the cap of connections; a scrape still answers."""
    server = start_http_server(registry, port=0, max_connections=4)
    stalled = [half_sent(server.port) for _ in range(100)]
    try:
        url = f"http://127.0.0.1:{server.port}/metrics"
        with urllib.request.urlopen(url, timeout=5) as response:
            assert response.status == 200
        assert server.server.peak_connections <= 4
    finally:
        for conn in stalled:
            conn.close()
        server.close()
