"""Prometheus metrics of the DLQ circuit breakers (one of the service's metrics modules, the
only ones allowed to import prometheus_client; ``metrics`` lists them).

On the same injected ``CollectorRegistry`` as ``ServiceMetrics``. Labels come from a closed
set: ``route`` is a configured route with a breaker (anything else raises ValueError before
anything is recorded), ``reason`` the transition's cause (``share`` or ``consecutive``).
Every series exists from the start, at 0, so ``increase()`` sees the first trip.
"""

from __future__ import annotations

from collections.abc import Iterable

from prometheus_client import CollectorRegistry, Counter, Gauge

from stream_validator.service.breaker.machine import BreakerState, BreakerTransition

#: The state gauge's values.
STATE_VALUES = {BreakerState.CLOSED: 0, BreakerState.OPEN: 1, BreakerState.HALF_OPEN: 2}
TRIP_REASONS = ("share", "consecutive")


class BreakerMetrics:
    """State, trips, reopens and operator resumes of each route's breaker."""

    def __init__(self, registry: CollectorRegistry, routes: Iterable[str]) -> None:
        self._routes = frozenset(routes)
        self.state = Gauge(
            "stream_validator_breaker_state",
            "DLQ circuit breaker state per route: 0 closed, 1 open, 2 half_open",
            ["route"],
            registry=registry,
        )
        self.trips = Counter(
            "stream_validator_breaker_trips",
            "DLQ circuit breaker trips (closed -> open) per route and reason",
            ["route", "reason"],
            registry=registry,
        )
        self.reopens = Counter(
            "stream_validator_breaker_reopens",
            "Failed probes (half_open -> open) per route",
            ["route"],
            registry=registry,
        )
        self.resumes = Counter(
            "stream_validator_breaker_operator_resumes",
            "Breakers closed by an operator (stream-validator resume, POST /breaker/resume)",
            ["route"],
            registry=registry,
        )
        for route in sorted(self._routes):
            self.state.labels(route).set(0)
            for reason in TRIP_REASONS:
                self.trips.labels(route, reason)
            self.reopens.labels(route)
            self.resumes.labels(route)

    def observe(self, transition: BreakerTransition) -> None:
        """One change of a breaker's state (the ``on_breaker`` hook)."""
        route = transition.route
        if route not in self._routes:
            raise ValueError(f"route {route[:100]!r} has no breaker")
        opened = transition.after is BreakerState.OPEN
        if opened and transition.cause not in TRIP_REASONS:
            raise ValueError(f"trip cause must be one of {TRIP_REASONS}, got {transition.cause!r}")
        self.state.labels(route).set(STATE_VALUES[transition.after])
        if opened and transition.before is BreakerState.CLOSED:
            self.trips.labels(route, transition.cause).inc()
        elif opened:
            self.reopens.labels(route).inc()
        elif transition.cause == "operator":
            self.resumes.labels(route).inc()
