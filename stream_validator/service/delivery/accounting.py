"""Sending one batch's planned outputs and sorting out what became of each.

Shared by both committers (``commit.py``): every planned output is prepared (a clean record
the broker refused alone becomes a ``delivery_rejected`` DLQ entry), produced through the
adapter's one produce loop (``kafka.io.produce_all``: suspects alone, a clean record the
client finds too large replaced by an ``oversized`` DLQ entry), and the deliveries are
counted per route from the acknowledgements: what went to clean and DLQ, truncated
envelopes, end-to-end latencies. Nothing here commits.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from stream_validator.kafka.io import Deliveries, Status, produce_all
from stream_validator.kafka.ports import Producer
from stream_validator.records import OutputRecord, SourceRecord
from stream_validator.service.delivery.rejections import (
    Coordinates,
    Rejection,
    Rejections,
    coordinates,
)
from stream_validator.service.delivery.replacements import Replacements
from stream_validator.service.plan.planner import BatchPlan


@dataclass(slots=True)
class RouteDelivery:
    """What one route batch delivered: counted from acknowledgements, once per record."""

    plan: BatchPlan
    clean: int = 0
    dlq: int = 0
    truncated: int = 0
    replaced: int = 0  # clean outputs delivered to the DLQ instead (oversized, delivery_rejected)
    #: Their violations, (field, kind) -> count, as the plan's own are counted.
    converted: Counter[tuple[str | None, str]] = field(default_factory=Counter)
    latencies: list[float] = field(default_factory=list)  # source timestamp -> clean ack, s
    #: Where the DLQ outputs sit in the route batch (ascending): the circuit breaker's input.
    quarantined: list[int] = field(default_factory=list)

    @property
    def route(self) -> str:
        """The route's name."""
        return self.plan.route

    def add_conversion(self, output: OutputRecord) -> None:
        """Count a clean output the delivery turned into a DLQ entry, with its violation."""
        self.replaced += 1
        self.converted[(None, str(output.first_violation))] += 1

    @property
    def violation_counts(self) -> Counter[tuple[str | None, str]]:
        """(field, kind) -> count over the DLQ entries delivered: the plan's and the
        conversions'."""
        planned = self.plan.violation_counts
        return planned + self.converted if self.converted else planned


@dataclass(slots=True)
class Sent:
    """One batch's deliveries, sorted out."""

    routes: list[RouteDelivery]
    refused: list[Rejection] = field(default_factory=list)
    failed: list[tuple[str, str, str]] = field(default_factory=list)  # (route, kind, reason)
    unacked: int = 0
    acked: list[SourceRecord] = field(default_factory=list)  # sources whose output landed

    @property
    def complete(self) -> bool:
        """Every output was acknowledged."""
        return not self.refused and not self.failed and not self.unacked


class OutputStage:
    """Prepares, produces and sorts the outputs of a batch."""

    def __init__(
        self,
        replacements: Replacements,
        rejections: Rejections,
        *,
        timeout_s: float,
        clock: Callable[[], float],
    ) -> None:
        self.replacements = replacements
        self._rejections = rejections
        self._timeout_s = timeout_s
        self._clock = clock

    def send(self, producer: Producer, plans: Sequence[BatchPlan]) -> Sent:
        """Produce every output of the plans, wait for the acknowledgements, sort them out."""
        plan_of: dict[Coordinates, BatchPlan] = {}
        index_of: dict[Coordinates, int] = {}
        planned_clean: set[Coordinates] = set()
        prepared: list[OutputRecord] = []
        for plan in plans:
            for index, output in enumerate(plan.outputs):
                key = coordinates(output.source)
                plan_of[key] = plan
                index_of[key] = index
                if output.kind == "clean":
                    planned_clean.add(key)
                prepared.append(self.replacements.prepare(plan, output))

        def too_large(output: OutputRecord) -> OutputRecord | None:
            if output.kind != "clean":
                return None
            # Key + headers pushed a valid record over the limit: quarantine it.
            return self.replacements.oversized(plan_of[coordinates(output.source)], output)

        deliveries = produce_all(
            producer,
            prepared,
            timeout_s=self._timeout_s,
            alone=lambda output: self._rejections.produce_alone(output.source),
            too_large=too_large,
            clock=self._clock,
        )
        return _sort(deliveries, plans, plan_of, index_of, planned_clean)


def _sort(
    deliveries: Deliveries[OutputRecord],
    plans: Sequence[BatchPlan],
    plan_of: dict[Coordinates, BatchPlan],
    index_of: dict[Coordinates, int],
    planned_clean: set[Coordinates],
) -> Sent:
    routes = {plan.route: RouteDelivery(plan) for plan in plans}
    sent = Sent(list(routes.values()))
    for delivery in deliveries.items:
        output = delivery.record
        key = coordinates(output.source)
        route = routes[plan_of[key].route]
        status, error = delivery.status, delivery.error
        if status is Status.DELIVERED:
            sent.acked.append(output.source)
            _count(route, output, delivery.acked_at, planned_clean=key in planned_clean)
            if output.kind != "clean":
                route.quarantined.append(index_of[key])
        elif status in (Status.REFUSED, Status.TOO_LARGE):
            reason = str(error) if error is not None else status.value
            sent.refused.append(
                Rejection(output.source, output.kind, output.topic, reason, delivery.alone)
            )
        elif status is Status.FAILED:
            sent.failed.append((route.route, output.kind, str(error)))
        else:
            sent.unacked += 1
    for delivered in sent.routes:
        delivered.quarantined.sort()  # suspects are produced alone, out of order
    return sent


def _count(
    route: RouteDelivery, output: OutputRecord, acked_at: float | None, *, planned_clean: bool
) -> None:
    if output.kind == "clean":
        route.clean += 1
        if output.timestamp_ms is not None and acked_at is not None:
            route.latencies.append(max(acked_at - output.timestamp_ms / 1000.0, 0.0))
        return
    route.dlq += 1
    route.truncated += output.truncated
    if planned_clean:
        route.add_conversion(output)
