"""The one accounting of deliveries: per route, what a batch delivered, counted from its
outputs as produced once every one of them was acknowledged.

What went to clean and to the DLQ (after the delivery's conversions: ``oversized`` and
``delivery_rejected`` DLQ entries in place of clean outputs), truncated envelopes, the
violations of every DLQ entry delivered, the DLQ entries' positions (the circuit breaker's
input) and the end-to-end latencies of the clean outputs. Reports, metrics and the breakers
read these counts and nothing else.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field

from stream_validator._native import delivered_columns
from stream_validator.records import OutputRecord
from stream_validator.service.plan.planner import BatchPlan

_COLUMNS_AT = (OutputRecord._fields.index("kind"), OutputRecord._fields.index("timestamp_ms"))


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


def delivered_routes(
    plans: Sequence[BatchPlan],
    outputs: Sequence[OutputRecord],
    converted: Sequence[int],
    acked_at: float,
) -> list[RouteDelivery]:
    """Per route, what a completely acknowledged batch delivered: ``outputs`` as produced
    (the plans' in order), ``converted`` the indices of those that replaced a clean output,
    ``acked_at`` the wall clock when the batch was seen complete."""
    routes: list[RouteDelivery] = []
    start = 0
    for plan in plans:
        end = start + len(plan.outputs)
        mine = outputs[start:end]
        if type(mine) is not list:
            mine = list(mine)
        # Once per output of every batch: natively, one pass with no object per output but
        # the latencies (``delivered_columns``: the DLQ positions, and acked_at - ms / 1000.0
        # for each clean output with a timestamp).
        dlq, latencies = delivered_columns(mine, "clean", _COLUMNS_AT, acked_at)
        route = RouteDelivery(plan, clean=len(mine) - len(dlq), dlq=len(dlq))
        route.quarantined = dlq
        route.truncated = sum(mine[i].truncated for i in dlq)
        for index in converted:
            if start <= index < end:
                route.add_conversion(outputs[index])
        if latencies and min(latencies) < 0.0:  # clock skew counts as 0
            latencies = [max(seconds, 0.0) for seconds in latencies]
        route.latencies = latencies
        routes.append(route)
        start = end
    return routes
