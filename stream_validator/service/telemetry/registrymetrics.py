"""Prometheus metrics of the Schema Registry as the service sees it (one of the service's
metrics modules, the only ones allowed to import prometheus_client; ``metrics`` lists them).

On the same injected ``CollectorRegistry`` as ``ServiceMetrics``. ``route`` is a route name
from the config (a route with a registry ``format``); its series exists from the start, at 0.
A schema id or version is never a label (unbounded): they are in DLQ envelopes and events.
"""

from __future__ import annotations

from collections.abc import Iterable

from prometheus_client import CollectorRegistry, Counter

from stream_validator.labels import config_label


class RegistryMetrics:
    """Batches that waited because the registry could not answer, per route."""

    def __init__(self, registry: CollectorRegistry, routes: Iterable[str]) -> None:
        self.unavailable = Counter(
            "stream_validator_registry_unavailable",
            "Batches not judged because the Schema Registry could not answer (retried later)",
            ["route"],
            registry=registry,
        )
        for route in sorted(set(routes)):
            self.unavailable.labels(route)

    def observe(self, route: str) -> None:
        """One batch of a route set back: the registry could not answer."""
        self.unavailable.labels(config_label("route", route)).inc()
