"""Batches whose outputs are on their way: the one send path of both committers.

``launch`` sends a batch's outputs with ``kafka.io.send_all`` (the adapter's produce loop)
and the committer goes on consuming; each batch becomes a ``Flight`` whose ``AckTally``
(``Producer.ack_tally``: native with librdkafka) counts its acknowledgements, with no
Python frame or object per record; failures reach the flight one by one. A flight is
complete when every output was acknowledged; only then may its offsets be committed and
its counts reported (``accounting``), taken from what was produced since all of it landed.
A failed or refused output marks its flight failed; what failed is
worked out from the flight's outputs only then (rare).

While refused records are being isolated (``rejections``), ``launch`` first turns the clean
outputs the broker refused alone into ``delivery_rejected`` DLQ entries and produces each
suspect alone, flushed before and after, so its outcome is its own; the committer then
waits for that flight before it sends the next (one batch at a time).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from itertools import chain
from operator import attrgetter

from stream_validator.errors import KafkaErrorInfo
from stream_validator.kafka.io import send_all
from stream_validator.kafka.ports import (
    MSG_SIZE_TOO_LARGE,
    RECORD_REJECTIONS,
    AckTally,
    DeliveryFailure,
    Producer,
)
from stream_validator.records import OutputRecord
from stream_validator.service.delivery.accounting import RouteDelivery, delivered_routes
from stream_validator.service.delivery.offsets import BatchOffsets
from stream_validator.service.delivery.rejections import Rejection, Rejections
from stream_validator.service.delivery.replacements import Replacements
from stream_validator.service.plan.planner import BatchPlan


@dataclass(eq=False, slots=True)
class Flight:
    """One submitted batch: its outputs as produced, and how many are still unanswered."""

    plans: Sequence[BatchPlan]
    offsets: BatchOffsets
    outputs: list[OutputRecord]  # in produce order (after too-large replacements)
    started: float  # perf_counter at submit (the batch event's duration)
    tally: AckTally  # counts the acknowledgements; failures go to ``failures``
    expected: int = 0  # the acknowledgements to come (outputs the client took)
    failures: list[DeliveryFailure] = field(default_factory=list)
    refused: list[tuple[int, KafkaErrorInfo]] = field(default_factory=list)  # by the client
    replaced: list[int] = field(default_factory=list)  # clean outputs sent as DLQ entries
    alone: frozenset[int] = frozenset()  # produced on their own (suspects), ascending

    @property
    def pending(self) -> int:
        """The outputs not answered yet."""
        return self.expected - self.tally.acked - len(self.failures)

    @property
    def failed(self) -> bool:
        """An output failed or was refused: the flight will never be complete."""
        return bool(self.failures or self.refused)

    @property
    def complete(self) -> bool:
        """Every output was acknowledged."""
        return self.tally.acked == self.expected and not self.failures and not self.refused

    def delivered(self, acked_at: float) -> list[RouteDelivery]:
        """Per route, what the complete flight delivered (every output acknowledged by
        ``acked_at``, the wall clock when the flight was seen complete)."""
        return delivered_routes(self.plans, self.outputs, self.replaced, acked_at)

    def problems(self) -> tuple[list[Rejection], list[tuple[str, str, str]]]:
        """What was refused for good (rejections) and what failed (route, kind, reason)."""
        rejections: list[Rejection] = []
        failed: list[tuple[str, str, str]] = []
        for index, info in self.refused:
            if info.code in RECORD_REJECTIONS:
                # The client's own checks see this record only, so its refusal is its own;
                # a too-large one is a suspect first, as in ``kafka.io.produce_all``.
                alone = info.code != MSG_SIZE_TOO_LARGE or index in self.alone
                rejections.append(self._rejection(index, str(info), alone=alone))
            else:
                failed.append((self.plan_at(index).route, self.outputs[index].kind, str(info)))
        if not self.failures:
            return rejections, failed
        where = {(out.topic, out.key, out.value): i for i, out in enumerate(self.outputs)}
        for failure in self.failures:
            found = where.get((failure.topic, failure.key, failure.value))
            if found is not None and failure.error.code in RECORD_REJECTIONS:
                alone = found in self.alone
                rejections.append(self._rejection(found, str(failure.error), alone=alone))
                continue
            kind = self.outputs[found].kind if found is not None else "clean"
            route = self.plan_at(found or 0).route
            failed.append((route, kind, str(failure.error)))
        return rejections, failed

    def _rejection(self, index: int, reason: str, *, alone: bool) -> Rejection:
        out = self.outputs[index]
        return Rejection(out.source, out.kind, out.topic, reason, alone)

    def plan_at(self, index: int) -> BatchPlan:
        """The plan the output at ``index`` belongs to."""
        for plan in self.plans:
            if index < len(plan.outputs):
                return plan
            index -= len(plan.outputs)
        return self.plans[-1]


_outputs = attrgetter("outputs")


def launch(
    producer: Producer,
    plans: Sequence[BatchPlan],
    offsets: BatchOffsets,
    started: float,
    replacements: Replacements,
) -> Flight:
    """Send every output of the plans without waiting (the hot path: nothing refused is
    being isolated); a clean output the client finds too large goes as ``oversized``."""
    outputs = list(chain.from_iterable(map(_outputs, plans)))  # in C: no bytecode per output
    flight = _flight(producer, plans, offsets, outputs, started)
    flight.refused, flight.replaced = send_all(
        producer, outputs, flight.tally, too_large=_oversized(plans, replacements)
    )
    flight.expected -= len(flight.refused)  # no callback comes for those
    return flight


def _flight(
    producer: Producer,
    plans: Sequence[BatchPlan],
    offsets: BatchOffsets,
    outputs: list[OutputRecord],
    started: float,
) -> Flight:
    failures: list[DeliveryFailure] = []
    tally = producer.ack_tally(failures.append)
    return Flight(plans, offsets, outputs, started, tally, len(outputs), failures)


def launch_isolating(
    producer: Producer,
    plans: Sequence[BatchPlan],
    offsets: BatchOffsets,
    started: float,
    replacements: Replacements,
    rejections: Rejections,
    *,
    flush_timeout_s: float,
) -> Flight:
    """``launch`` while refused records are isolated (rare): clean outputs refused alone go
    as ``delivery_rejected`` DLQ entries, and each suspect is produced alone, the producer
    flushed before and after it."""
    outputs = list(chain.from_iterable(map(_outputs, plans)))  # in C: no bytecode per output
    flight = _flight(producer, plans, offsets, outputs, started)
    converted = []
    for index, output in enumerate(outputs):
        prepared = replacements.prepare(flight.plan_at(index), output)
        if prepared is not output:
            outputs[index] = prepared
            converted.append(index)
    alone = [i for i, out in enumerate(outputs) if rejections.produce_alone(out.source)]
    flight.alone = frozenset(alone)
    too_large = _oversized(plans, replacements)
    start = 0
    for index in alone:
        _send_part(producer, flight, start, index, too_large)  # the batchmates before it
        producer.flush(flush_timeout_s)
        _send_part(producer, flight, index, index + 1, too_large)
        producer.flush(flush_timeout_s)
        start = index + 1
    _send_part(producer, flight, start, len(outputs), too_large)
    flight.replaced = sorted(converted + flight.replaced)
    flight.expected -= len(flight.refused)  # no callback comes for those
    return flight


def _send_part(
    producer: Producer,
    flight: Flight,
    start: int,
    end: int,
    too_large: Callable[[OutputRecord], OutputRecord | None],
) -> None:
    """Send ``flight.outputs[start:end]`` through the same produce loop as ``launch``."""
    if start >= end:
        return
    part = flight.outputs[start:end]
    refused, replaced = send_all(producer, part, flight.tally, too_large=too_large)
    flight.outputs[start:end] = part  # with the too-large replacements
    flight.refused += [(start + i, info) for i, info in refused]
    flight.replaced += [start + i for i in replaced]


def _oversized(
    plans: Sequence[BatchPlan], replacements: Replacements
) -> Callable[[OutputRecord], OutputRecord | None]:
    """What to send instead of an output the client finds too large: for a clean one, its
    ``oversized`` DLQ entry (key and headers pushed a valid record over the limit)."""
    plan_of = _plan_index(plans)

    def too_large(output: OutputRecord) -> OutputRecord | None:
        if output.kind != "clean":
            return None
        return replacements.oversized(plan_of(output), output)

    return too_large


def _plan_index(plans: Sequence[BatchPlan]) -> Callable[[OutputRecord], BatchPlan]:
    """The plan an output belongs to (only asked for the rare too-large output)."""
    if len(plans) == 1:
        return lambda _: plans[0]

    def plan_of(output: OutputRecord) -> BatchPlan:
        return next(p for p in plans if any(o.source is output.source for o in p.outputs))

    return plan_of
