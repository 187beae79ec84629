"""Prometheus metrics of the streaming service; with ``integritymetrics`` (per-symbol state,
NaN/±Inf rates), ``breakermetrics`` (the circuit breakers'), ``histogram`` (a histogram fed
per batch) and ``http.metricsserver`` (the /metrics endpoint) the only modules that import
prometheus_client.

Every metric lives on an injected ``CollectorRegistry`` (never the global one), so each
service instance and each test owns its metrics.

The label policy (the number of series is bounded by construction) is stated in ``series``,
with the label sets it checks.
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram

from stream_validator.contracts.model import metric_path
from stream_validator.labels import (
    OVERFLOW_LABEL,
    RECORD_LABEL,
    LabelBudget,
    choice,
    config_label,
    is_count,
    is_number,
)
from stream_validator.service.telemetry.histogram import BatchHistogram
from stream_validator.service.telemetry.lagstats import consumer_lags
from stream_validator.service.telemetry.series import (
    BATCH_DURATION_BUCKETS,
    BATCH_SIZE_BUCKETS,
    HOOKS,
    LATENCY_BUCKETS,
    MAX_DECLARED_FIELD_LABELS,
    OUTPUTS,
    REBALANCE_EVENTS,
    RULE_KIND,
    TRANSACTION_COMMIT_BUCKETS,
    RouteSeries,
    check_report,
)
from stream_validator.verify import SchemaContractValidationReport, ViolationKind

# CollectorRegistry is re-exported so the app can build a registry without importing
# prometheus_client itself.
__all__ = [
    "OUTPUTS",
    "OVERFLOW_LABEL",
    "REBALANCE_EVENTS",
    "RECORD_LABEL",
    "CollectorRegistry",
    "ServiceMetrics",
]


class ServiceMetrics:
    """All metrics of the streaming service, registered on one ``CollectorRegistry``.

    Call ``set_build_info`` and ``set_null_ceiling`` at startup: they create the drift and
    breach counters at 0, so PromQL ``increase()`` sees the very first drift or breach.
    Safe to call from several threads.
    """

    def __init__(self, registry: CollectorRegistry, *, max_unknown_field_labels: int = 50) -> None:
        if not is_count(max_unknown_field_labels):
            raise ValueError(
                f"max_unknown_field_labels must be an int >= 0, got {max_unknown_field_labels!r}"
            )
        self._lock = threading.Lock()
        self._unknown = LabelBudget(max_unknown_field_labels)
        self._declared = LabelBudget(MAX_DECLARED_FIELD_LABELS)
        self._rules = LabelBudget(MAX_DECLARED_FIELD_LABELS)
        # The labelled children observe_batch touches every batch, looked up once: a
        # ``labels()`` call checks and hashes its labels each time, and a batch made ~20 of
        # them, as much as planning a small batch. Label mappings never change (a declared
        # name's label is fixed once given), and none of these series is ever removed.
        self._route_series: dict[tuple[str, str], RouteSeries] = {}
        self._field_series: dict[tuple[str, str], tuple[Any, Any]] = {}

        def counter(name: str, doc: str, labels: Sequence[str]) -> Counter:
            return Counter(name, doc, labels, registry=registry)

        def gauge(name: str, doc: str, labels: Sequence[str] = ()) -> Gauge:
            return Gauge(name, doc, labels, registry=registry)

        def histogram(name: str, doc: str, buckets: Sequence[float]) -> Histogram:
            return Histogram(name, doc, ["route"], buckets=buckets, registry=registry)

        rc = ("route", "contract")
        cf = ("contract", "field")
        self._build_info = gauge(
            "stream_validator_build_info", "Always 1; the version.", ["version"]
        )
        self._contract_info = gauge(
            "stream_validator_contract_info",
            "Always 1 per loaded contract.",
            ("contract", "version"),
        )
        # Ratios 0-1 (Prometheus' base unit), though contracts and reports speak percent.
        self._null_ceiling = gauge(
            "stream_validator_null_ceiling_ratio",
            "Allowed null share (0-1) per nullable field.",
            cf,
        )
        self._consumed = counter("stream_validator_records_consumed_total", "Records read.", rc)
        self._valid = counter("stream_validator_records_valid_total", "Records passed.", rc)
        self._quarantined = counter(
            "stream_validator_records_quarantined_total", "Records sent to the DLQ.", rc
        )
        self._batches = counter("stream_validator_batches_total", "Micro-batches validated.", rc)
        self._violations = counter(
            "stream_validator_violations_total", "Rule violations.", (*cf, "kind", "rule")
        )
        self._flagged = counter(
            "stream_validator_flagged_violations_total",
            "Flagged checks (action flag) broken by records sent on as valid.",
            (*rc, "field", "kind", "rule"),
        )
        self._null_rate = gauge(
            "stream_validator_batch_null_ratio",
            "Null share (0-1) of each nullable field over the null-ceiling window.",
            cf,
        )
        self._breaches = counter(
            "stream_validator_null_ceiling_breaches_total", "Batches over the null ceiling.", cf
        )
        self._unknown_fields = counter(
            "stream_validator_unknown_fields_total", "Batches carrying the undeclared field.", cf
        )
        self._drift = counter(
            "stream_validator_drift_batches_total", "Batches with undeclared fields.", ["contract"]
        )
        self._first_seen = gauge(
            "stream_validator_unknown_field_first_seen_timestamp_seconds",
            "When the undeclared field (label) was first seen.",
            cf,
        )
        self._batch_size = histogram(
            "stream_validator_batch_size_records", "Records per batch.", BATCH_SIZE_BUCKETS
        )
        self._batch_duration = histogram(
            "stream_validator_batch_duration_seconds",
            "Batch processing time.",
            BATCH_DURATION_BUCKETS,
        )
        # One value per clean record: a histogram fed per batch (see telemetry/histogram.py).
        self._latency = BatchHistogram(
            "stream_validator_end_to_end_latency_seconds",
            "Source record timestamp to clean-topic produce ack.",
            ("route",),
            LATENCY_BUCKETS,
            registry,
        )
        self._lag = gauge(
            "stream_validator_consumer_lag_records", "Consumer lag.", ("topic", "partition")
        )
        self._rebalances = counter(
            "stream_validator_rebalances_total", "Consumer group rebalances.", ["event"]
        )
        self._delivery_failures = counter(
            "stream_validator_delivery_failures_total", "Failed produces.", ("route", "output")
        )
        self._truncated = counter(
            "stream_validator_dlq_envelopes_truncated_total", "DLQ envelopes truncated.", ["route"]
        )
        self._last_commit = gauge(
            "stream_validator_last_commit_timestamp_seconds", "Time of the last offset commit."
        )
        self._transaction_commit = Histogram(
            "stream_validator_transaction_commit_seconds",
            "Exactly-once: flush, send offsets and commit of one transaction.",
            buckets=TRANSACTION_COMMIT_BUCKETS,
            registry=registry,
        )
        self._ready = gauge("stream_validator_ready", "1 when consuming, else 0.")
        self._hook_errors = counter(
            "stream_validator_hook_errors_total", "Failed metrics/report hooks.", ["hook"]
        )
        for event in sorted(REBALANCE_EVENTS):
            self._rebalances.labels(event)

    def set_build_info(self, version: str, contracts: Mapping[str, str]) -> None:
        """Publish the service version and every loaded contract's version."""
        version = config_label("version", version)
        pairs = [
            (config_label("contract", c), config_label("version", v)) for c, v in contracts.items()
        ]
        with self._lock:
            self._build_info.clear()
            self._build_info.labels(version).set(1)
            self._contract_info.clear()
            for name, contract_version in pairs:
                self._contract_info.labels(name, contract_version).set(1)
                self._drift.labels(name)

    def set_null_ceiling(self, contract: str, fields: Sequence[str], pct: float) -> None:
        """Publish a contract's null ceiling for each of its nullable fields: ``pct`` is the
        contract's percent (0-100), the gauge its ratio (0-1)."""
        contract = config_label("contract", contract)
        if isinstance(fields, str):
            raise ValueError(f"fields must be a sequence of names, not the string {fields!r}")
        if not is_number(pct) or not 0 <= pct <= 100:
            raise ValueError(f"pct must be a number in [0, 100], got {pct!r}")
        with self._lock:
            for name in fields:
                label, _ = self._declared.label(contract, name)
                self._null_ceiling.labels(contract, label).set(pct / 100)
                self._breaches.labels(contract, label)

    def drop_null_fields(self, contract: str, fields: Iterable[str]) -> None:
        """Remove the null-rate and null-ceiling gauges of fields a reloaded contract no
        longer declares nullable: their last values would stay, and a stale rate above a
        stale ceiling would keep the null-ceiling alert firing. The breach counters stay."""
        contract = config_label("contract", contract)
        with self._lock:
            for name in fields:
                label, _ = self._declared.label(contract, name)
                for gauge in (self._null_rate, self._null_ceiling):
                    with contextlib.suppress(KeyError):
                        gauge.remove(contract, label)
                self._field_series.pop((contract, name), None)

    def declare_route(self, route: str, contract: str) -> None:
        """Create a configured route's series at start-up, its failure counters at 0: a
        counter first seen at 1 is missed by ``increase()``, so a failure of the route's
        very first batch would not alert."""
        route = config_label("route", route)
        contract = config_label("contract", contract)
        with self._lock:
            if (route, contract) not in self._route_series:
                self._new_route_series(route, contract)

    def declare_flags(self, route: str, contract: str, rules: Sequence[str]) -> None:
        """Create the flagged-violation counters of a route's flag ``rules`` at 0 (a field's
        flagged series appear with its first breach: one per field and kind is too many)."""
        route = config_label("route", route)
        contract = config_label("contract", contract)
        if isinstance(rules, str):
            raise ValueError(f"rules must be a sequence of names, not the string {rules!r}")
        with self._lock:
            for name in rules:
                label, _ = self._rules.label(contract, name)
                self._flagged.labels(route, contract, RECORD_LABEL, RULE_KIND, label)

    def observe_batch(
        self,
        route: str,
        report: SchemaContractValidationReport,
        *,
        duration_seconds: float,
        now: float,
        clean: int | None = None,
        dlq: int | None = None,
        violation_counts: Mapping[tuple[str | None, str], int] | None = None,
    ) -> None:
        """Record one micro-batch: counts, violations, null rates and drift.

        ``clean``/``dlq``: the records delivered to each (the service passes what was
        acknowledged); by default the report's valid and quarantined counts.
        ``violation_counts``: the violations of the DLQ entries made (the service passes
        its plan's, which adds the null ceiling's under ``quarantine``); by default the
        report's.
        """
        series = self._route_series.get((route, report.contract_name))
        if series is None:  # the labels are checked once, before anything is recorded
            config_label("route", route)
            config_label("contract", report.contract_name)
        contract = report.contract_name
        check_report(report)
        valid = report.valid_count if clean is None else clean
        quarantined = report.quarantined_count if dlq is None else dlq
        if not (is_count(valid) and is_count(quarantined)):
            raise ValueError(f"clean and dlq must be ints >= 0, got {clean!r}, {dlq!r}")
        if not is_number(duration_seconds) or duration_seconds < 0:
            raise ValueError(
                f"duration_seconds must be a finite number >= 0, got {duration_seconds!r}"
            )
        if not is_number(now):
            raise ValueError(f"now must be a finite timestamp, got {now!r}")
        with self._lock:
            if series is None:
                series = self._new_route_series(route, contract)
            series.consumed.inc(report.total_records)
            series.valid.inc(valid)
            if quarantined:
                series.quarantined.inc(quarantined)
            series.batches.inc()
            series.batch_size.observe(report.total_records)
            series.batch_duration.observe(duration_seconds)
            if report.observed_unknown_fields:
                series.drift.inc()
                # Sorted, so which names win the label budget does not depend on hash order.
                names = sorted(report.observed_unknown_fields)
                seen = {self._unknown_label(contract, name, now) for name in names}
                for label in sorted(seen):
                    self._unknown_fields.labels(contract, label).inc()

            counts = report.violation_counts if violation_counts is None else violation_counts
            for (name, kind), n in counts.items():
                if name is None:
                    label = RECORD_LABEL
                elif kind == ViolationKind.UNKNOWN_FIELD:
                    label = self._unknown_label(contract, metric_path(name), now)
                else:  # levels[3].price is counted as levels[].price
                    label, _ = self._declared.label(contract, metric_path(name))
                if kind == RULE_KIND and name is None:
                    # Split by rule; any rest (counts given without rules) under rule "".
                    for rule, m in report.rule_violation_counts.items():
                        m = min(m, n)
                        if m:
                            rule_label, _ = self._rules.label(contract, rule)
                            self._violations.labels(contract, label, RULE_KIND, rule_label).inc(m)
                            n -= m
                    if not n:
                        continue
                self._violations.labels(contract, label, str(kind), "").inc(n)

            self._observe_flags(route, contract, report)

            for name, rate in report.null_rates.items():
                self._null_series(contract, name)[0].set(rate / 100)  # percent to ratio
            for name in report.null_breach_fields:
                self._null_series(contract, name)[1].inc()

    def _observe_flags(
        self, route: str, contract: str, report: SchemaContractValidationReport
    ) -> None:
        """Count the flagged breaches of the batch's valid records (under the lock)."""
        for rule, n in report.flagged_counts.items():
            label, _ = self._rules.label(contract, rule)
            self._flagged.labels(route, contract, RECORD_LABEL, RULE_KIND, label).inc(n)
        for (name, kind), n in report.flagged_field_counts.items():
            label, _ = self._declared.label(contract, metric_path(name))
            self._flagged.labels(route, contract, label, kind, "").inc(n)

    def _new_route_series(self, route: str, contract: str) -> RouteSeries:
        """Create a route's series (failure counters at 0, so increase() catches the
        first one) and keep their children (labels checked; under the lock)."""
        for output in sorted(OUTPUTS):
            self._delivery_failures.labels(route, output)
        self._truncated.labels(route)
        series = RouteSeries(
            consumed=self._consumed.labels(route, contract),
            valid=self._valid.labels(route, contract),
            quarantined=self._quarantined.labels(route, contract),
            batches=self._batches.labels(route, contract),
            batch_size=self._batch_size.labels(route),
            batch_duration=self._batch_duration.labels(route),
            drift=self._drift.labels(contract),
        )
        self._route_series[(route, contract)] = series
        return series

    def _null_series(self, contract: str, name: str) -> tuple[Any, Any]:
        """The null-rate gauge and breach counter of a field (under the lock)."""
        pair = self._field_series.get((contract, name))
        if pair is None:
            label, _ = self._declared.label(contract, name)
            pair = (self._null_rate.labels(contract, label), self._breaches.labels(contract, label))
            self._field_series[(contract, name)] = pair
        return pair

    def observe_end_to_end_latency(self, route: str, seconds: Iterable[float]) -> None:
        """Record source-timestamp-to-produce-ack latencies; negatives (clock skew) count as 0."""
        # Non-finite values (a garbled source timestamp) are no latency; skipped.
        self._latency.observe_many((config_label("route", route),), seconds)

    def set_consumer_lag(self, topic: str, partition: int, lag: int) -> None:
        """Publish the lag (records) of one assigned partition."""
        topic = config_label("topic", topic)
        if not is_count(partition):
            raise ValueError(f"partition must be an int >= 0, got {partition!r}")
        if not is_count(lag):
            raise ValueError(f"lag must be an int >= 0, got {lag!r}")
        self._lag.labels(topic, str(partition)).set(lag)

    def remove_partition(self, topic: str, partition: int) -> None:
        """Drop a revoked partition's lag series (no-op when it has none)."""
        self._lag.remove(topic, str(partition))

    def update_from_librdkafka_stats(self, stats: Mapping[str, Any]) -> None:
        """Set consumer lag from decoded librdkafka statistics (``statistics.interval.ms``).

        Reads ``topics.<t>.partitions.<p>.consumer_lag``; skips the internal partition -1,
        unknown lags (-1) and anything malformed. A partition this consumer no longer
        fetches (``desired`` false or ``fetch_state`` none/stopping/stopped) loses its
        series: librdkafka keeps reporting a stale, frozen lag for revoked partitions.
        """
        for topic, partition, lag in consumer_lags(stats):
            if lag is None:
                self._lag.remove(topic, str(partition))
            else:
                self._lag.labels(topic, str(partition)).set(lag)

    def inc_rebalance(self, event: str) -> None:
        """Count a rebalance callback: assigned, revoked or lost."""
        self._rebalances.labels(choice("event", event, REBALANCE_EVENTS)).inc()

    def inc_delivery_failure(self, route: str, output: str) -> None:
        """Count a failed produce to the clean or the dlq topic."""
        route = config_label("route", route)
        self._delivery_failures.labels(route, choice("output", output, OUTPUTS)).inc()

    def inc_dlq_truncated(self, route: str) -> None:
        """Count a DLQ envelope whose payload was cut to fit the message size limit."""
        self._truncated.labels(config_label("route", route)).inc()

    def set_last_commit(self, timestamp: float) -> None:
        """Publish the Unix time of the last successful offset commit."""
        if not is_number(timestamp):
            raise ValueError(f"timestamp must be a finite number, got {timestamp!r}")
        self._last_commit.set(timestamp)

    def observe_transaction_commit(self, seconds: float) -> None:
        """Record how long one transaction's commit took (flush to commit_transaction)."""
        if not is_number(seconds):
            raise ValueError(f"seconds must be a finite number, got {seconds!r}")
        self._transaction_commit.observe(max(seconds, 0.0))

    def inc_hook_error(self, hook: str) -> None:
        """Count a hook (or the batch report) that raised; the loop went on."""
        self._hook_errors.labels(choice("hook", hook, HOOKS)).inc()

    def set_ready(self, ready: bool) -> None:
        """Publish readiness: 1 while consuming with partitions assigned, else 0."""
        self._ready.set(1 if ready else 0)

    def _unknown_label(self, contract: str, name: str, now: float) -> str:
        label, first = self._unknown.label(contract, name)
        if first:
            self._first_seen.labels(contract, label).set(now)
        return label
