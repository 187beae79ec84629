"""The label sets, buckets and input checks of ``ServiceMetrics``, and the per-route series it
keeps: what a label may be, so a wrong value raises before anything is recorded.

Label policy (the number of series is bounded by construction):

* Values that come from code or configuration -- ``route``, ``contract``, ``topic``,
  versions, the ``event`` and ``output`` enums, violation kinds, counts and timings -- are
  checked and a wrong one raises ``ValueError`` (a programming or configuration error)
  *before* anything is recorded, so a bad call never half-updates the registry.
* Values derived from payloads are never used raw. An unknown field name (a payload key)
  gets its own ``field`` label only if it is one of the first ``max_unknown_field_labels``
  distinct names of its contract, is printable, at most 128 characters long and not a
  reserved label; every other name is counted under ``"__overflow__"``. Declared field
  names get the same treatment with a fixed backstop cap of 1000 per contract. A nested
  field's violation is labelled by its path without indexes (``levels[].price``).
  Payload values (symbols, prices, ...) are never read.
* Rule names (``rule``) are declared in the contract (``[a-z][a-z0-9_]*``, unique): a
  closed set, given the same backstop cap of 1000 per contract. ``rule`` is ``""`` on
  every violation that is not a ``rule_violation``.
* librdkafka statistics are external data: malformed entries are skipped, never raised on.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from stream_validator.labels import is_count, is_number
from stream_validator.verify import SchemaContractValidationReport, ViolationKind

REBALANCE_EVENTS = frozenset({"assigned", "revoked", "lost"})
OUTPUTS = frozenset({"clean", "dlq"})
HOOKS = frozenset(
    {"on_batch", "on_clean_latencies", "on_delivery_failure", "on_truncated", "on_rebalance",
     "on_commit", "on_stats", "on_ready", "on_breaker", "on_contract_reload",
     "on_registry_unavailable", "on_transaction_commit", "batch report"}
)  # fmt: skip
VIOLATION_KINDS = frozenset(str(kind) for kind in ViolationKind)
RULE_KIND = str(ViolationKind.RULE_VIOLATION)
MAX_DECLARED_FIELD_LABELS = 1000

BATCH_SIZE_BUCKETS = (1, 10, 50, 100, 250, 500, 1000, 2500, 5000, 10000, 25000, 50000, 100000)
BATCH_DURATION_BUCKETS = (
    0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0,
)  # fmt: skip
TRANSACTION_COMMIT_BUCKETS = (
    0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0,
)  # fmt: skip
LATENCY_BUCKETS = (
    0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0, 120.0, 300.0,
)  # fmt: skip


def check_report(report: SchemaContractValidationReport) -> None:
    """A report's counts, violation kinds and rates are what the metrics accept (else
    ValueError, before anything is recorded)."""
    counts = (report.total_records, report.valid_count, report.quarantined_count)
    if not all(is_count(n) for n in counts):
        raise ValueError(f"report counts must be ints >= 0, got {counts!r}")
    kinds = {str(kind) for _, kind in report.violation_counts}
    kinds.update(str(kind) for _, kind in report.flagged_field_counts)
    bad = sorted(kinds - VIOLATION_KINDS)
    if bad:
        raise ValueError(f"unknown violation kinds {bad}; expected ViolationKind values")
    tallies: tuple[Mapping[Any, int], ...] = (
        report.violation_counts,
        report.rule_violation_counts,
        report.flagged_counts,
        report.flagged_field_counts,
    )
    for tally in tallies:
        if not all(is_count(n) for n in tally.values()):
            raise ValueError("violation and flagged counts must be ints >= 0")
    rates = list(report.null_rates.values())
    if not all(is_number(r) for r in rates):
        raise ValueError(f"null rates must be finite numbers, got {rates!r}")


@dataclass(frozen=True, slots=True)
class RouteSeries:
    """The children of one (route, contract) that every batch updates."""

    consumed: Any
    valid: Any
    quarantined: Any
    batches: Any
    batch_size: Any
    batch_duration: Any
    drift: Any
