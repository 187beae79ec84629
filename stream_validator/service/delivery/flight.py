"""Batches whose outputs are on their way: the bookkeeping of pipelined delivery.

The committers send a batch's outputs with ``kafka.io.send_all`` and go on consuming; each
batch becomes a ``Flight`` that counts its acknowledgements (one decrement per record, in
the producer's delivery callback: no object per record). A flight is complete when every
output was acknowledged; only then may its offsets be committed and its counts reported,
taken from what was produced since all of it landed. A failed or refused output marks its
flight failed; what failed is worked out from the flight's outputs only then (rare).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from itertools import compress, repeat
from operator import eq, itemgetter, not_

from stream_validator.errors import KafkaErrorInfo
from stream_validator.kafka.ports import MSG_SIZE_TOO_LARGE, RECORD_REJECTIONS, DeliveryFailure
from stream_validator.records import OutputRecord, TopicPartitionKey
from stream_validator.service.delivery.accounting import RouteDelivery
from stream_validator.service.delivery.rejections import Rejection
from stream_validator.service.plan.planner import BatchPlan

_kind = itemgetter(OutputRecord._fields.index("kind"))
_timestamp_ms = itemgetter(OutputRecord._fields.index("timestamp_ms"))


@dataclass(frozen=True, slots=True)
class BatchOffsets:
    """Where a consumed batch starts and ends, per partition."""

    first: dict[TopicPartitionKey, int]  # the batch's first offset: where a retry starts
    after: dict[TopicPartitionKey, int]  # one past its last record: what a commit stores


@dataclass(eq=False, slots=True)
class Flight:
    """One submitted batch: its outputs as produced, and how many are still unanswered."""

    plans: Sequence[BatchPlan]
    offsets: BatchOffsets
    outputs: list[OutputRecord]  # in produce order (after too-large replacements)
    started: float  # perf_counter at submit (the batch event's duration)
    pending: int = 0
    failures: list[DeliveryFailure] = field(default_factory=list)
    refused: list[tuple[int, KafkaErrorInfo]] = field(default_factory=list)  # by the client
    replaced: list[int] = field(default_factory=list)  # clean outputs sent as oversized DLQ

    def on_ack(self, failure: DeliveryFailure | None) -> None:
        """The producer's answer for one output (the hot path: keep it tiny)."""
        self.pending -= 1
        if failure is not None:
            self.failures.append(failure)

    @property
    def failed(self) -> bool:
        """An output failed or was refused: the flight will never be complete."""
        return bool(self.failures or self.refused)

    @property
    def complete(self) -> bool:
        """Every output was acknowledged."""
        return self.pending == 0 and not self.failures and not self.refused

    def delivered(self, acked_at: float) -> list[RouteDelivery]:
        """Per route, what the complete flight delivered (every output acknowledged by
        ``acked_at``, the wall clock when the flight was seen complete)."""
        routes: list[RouteDelivery] = []
        start = 0
        for plan in self.plans:
            end = start + len(plan.outputs)
            outputs = self.outputs[start:end]
            # Once per output of every batch: column by column, in C (no Python frame per
            # output), as clean_outputs builds them.
            clean = list(map(eq, map(_kind, outputs), repeat("clean")))
            dlq = list(compress(range(len(outputs)), map(not_, clean)))
            route = RouteDelivery(plan, clean=len(outputs) - len(dlq), dlq=len(dlq))
            route.quarantined = dlq
            route.truncated = sum(outputs[i].truncated for i in dlq)
            for index in self.replaced:
                if start <= index < end:
                    route.add_conversion(self.outputs[index])
            stamps = list(compress(map(_timestamp_ms, outputs), clean))
            if None in stamps:
                stamps = [ms for ms in stamps if ms is not None]
            latencies = [acked_at - ms / 1000.0 for ms in stamps]
            if latencies and min(latencies) < 0.0:  # clock skew counts as 0
                latencies = [max(seconds, 0.0) for seconds in latencies]
            route.latencies = latencies
            routes.append(route)
            start = end
        return routes

    def problems(self) -> tuple[list[Rejection], list[tuple[str, str, str]]]:
        """What was refused for good (rejections) and what failed (route, kind, reason)."""
        rejections: list[Rejection] = []
        failed: list[tuple[str, str, str]] = []
        for index, info in self.refused:
            if info.code in RECORD_REJECTIONS:
                # The client's own checks see this record only, so its refusal is its own;
                # a too-large one is a suspect first, as in ``kafka.io.produce_all``.
                alone = info.code != MSG_SIZE_TOO_LARGE
                rejections.append(self._rejection(index, str(info), alone=alone))
            else:
                failed.append((self._plan_at(index).route, self.outputs[index].kind, str(info)))
        if not self.failures:
            return rejections, failed
        where = {(out.topic, out.key, out.value): i for i, out in enumerate(self.outputs)}
        for failure in self.failures:
            found = where.get((failure.topic, failure.key, failure.value))
            if found is not None and failure.error.code in RECORD_REJECTIONS:
                rejections.append(self._rejection(found, str(failure.error), alone=False))
                continue
            kind = self.outputs[found].kind if found is not None else "clean"
            route = self._plan_at(found or 0).route
            failed.append((route, kind, str(failure.error)))
        return rejections, failed

    def _rejection(self, index: int, reason: str, *, alone: bool) -> Rejection:
        out = self.outputs[index]
        return Rejection(out.source, out.kind, out.topic, reason, alone)

    def _plan_at(self, index: int) -> BatchPlan:
        for plan in self.plans:
            if index < len(plan.outputs):
                return plan
            index -= len(plan.outputs)
        return self.plans[-1]


def merged_rewind(flights: Sequence[Flight]) -> dict[TopicPartitionKey, int]:
    """Per partition, the first offset of the oldest of these flights that holds it."""
    rewind: dict[TopicPartitionKey, int] = {}
    for flight in flights:
        for key, offset in flight.offsets.first.items():
            rewind.setdefault(key, offset)
    return rewind


def merged_after(flights: Sequence[Flight]) -> dict[TopicPartitionKey, int]:
    """Per partition, one past the last record of the newest of these flights that holds it."""
    after: dict[TopicPartitionKey, int] = {}
    for flight in flights:
        after.update(flight.offsets.after)
    return after
