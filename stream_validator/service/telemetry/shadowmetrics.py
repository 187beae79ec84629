"""Prometheus metrics of shadow contracts (one of the service's metrics modules, the only
ones allowed to import prometheus_client; ``metrics`` lists them).

On the same injected ``CollectorRegistry`` as ``ServiceMetrics``, fed from delivered batches
only (a retried batch counts once). Labels come from closed sets or are bounded: ``route``
(configured), ``difference`` and ``change`` (fixed words), ``kind`` (a violation kind),
``field`` (a declared field's metric path, ``_record`` for a record-level problem, an
undeclared field's name within a budget of ``MAX_UNKNOWN_FIELD_LABELS`` per route, past it
``__overflow__``). Never an offset, a key or a value. Each route's record series exist from
the start at 0, so ``increase()`` sees the first difference.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any, Final

from prometheus_client import CollectorRegistry, Counter

from stream_validator.contracts.model import metric_path
from stream_validator.labels import RECORD_LABEL, LabelBudget, config_label
from stream_validator.service.plan.shadowdiff import ShadowDiff
from stream_validator.service.telemetry.series import MAX_DECLARED_FIELD_LABELS
from stream_validator.verify import ViolationKind

#: How a shadow's verdict on a record compares with the live one.
RECORD_DIFFERENCES: Final = ("rescued", "newly_quarantined", "unchanged")
#: Undeclared field names (payload-derived) that become labels of their own, per route.
MAX_UNKNOWN_FIELD_LABELS: Final = 50
_UNKNOWN = str(ViolationKind.UNKNOWN_FIELD)


class ShadowMetrics:
    """How the routes' shadow contracts judge records differently from the live ones."""

    def __init__(self, registry: CollectorRegistry, routes: Iterable[str]) -> None:
        """``routes``: those with a shadow contract (their series start at 0)."""
        self.records = Counter(
            "stream_validator_shadow_records",
            "Records a route's shadow contract judged, by how its verdict compares with the"
            " live contract's",
            ["route", "difference"],
            registry=registry,
        )
        self.violations = Counter(
            "stream_validator_shadow_violations",
            "Violations of the records a shadow contract would route differently, per field"
            " and kind",
            ["route", "difference", "field", "kind"],
            registry=registry,
        )
        self.ceiling = Counter(
            "stream_validator_shadow_null_ceiling_changes",
            "Batches in which a shadow contract's null-ceiling verdict of a field differs",
            ["route", "field", "change"],
            registry=registry,
        )
        #: route -> its record counters by difference, looked up once (``labels()`` checks
        #: and hashes its labels at every call, and every batch counts its records).
        self._route_series: dict[str, dict[str, Any]] = {}
        self._declared = LabelBudget(MAX_DECLARED_FIELD_LABELS)
        self._unknown = LabelBudget(MAX_UNKNOWN_FIELD_LABELS)
        for route in routes:
            self._series(route)

    def _series(self, route: str) -> dict[str, Any]:
        series = self._route_series.get(route)
        if series is None:
            config_label("route", route)
            series = {d: self.records.labels(route, d) for d in RECORD_DIFFERENCES}
            self._route_series[route] = series
        return series

    def observe(self, route: str, diff: ShadowDiff) -> None:
        """One delivered batch as the route's shadow judged it."""
        series = self._series(route)
        series["unchanged"].inc(diff.unchanged)
        if not diff.differs:
            return
        series["rescued"].inc(len(diff.rescued))
        series["newly_quarantined"].inc(len(diff.newly_quarantined))
        for (difference, name, kind), n in diff.violations.items():
            self.violations.labels(route, difference, self._field(route, name, kind), kind).inc(n)
        for name, change in diff.ceiling.items():
            self.ceiling.labels(route, self._field(route, name, ""), change).inc()

    def _field(self, route: str, name: str | None, kind: str) -> str:
        if name is None:
            return RECORD_LABEL
        budget = self._unknown if kind == _UNKNOWN else self._declared
        return budget.label(route, metric_path(name))[0]
