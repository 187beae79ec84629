"""Producing one batch's outputs and tracking the broker's acknowledgements."""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from typing import Any

from confluent_kafka import KafkaError, KafkaException, Message, Producer

from stream_validator.records import OutputRecord, SourceRecord
from stream_validator.service.pipeline import BatchPlan
from stream_validator.service.rejections import RECORD_REJECTIONS, Rejection

log = logging.getLogger("stream_validator.service")


class Deliveries:
    """Counts acknowledgements of one batch's outputs (callbacks run inside flush/poll)."""

    def __init__(self) -> None:
        self.pending = 0
        self.failed: list[tuple[OutputRecord, str]] = []
        self.rejected: list[Rejection] = []
        self.delivered: dict[tuple[str, str], int] = {}  # (route, kind) -> acknowledged
        self.latencies: dict[str, list[float]] = {}

    def callback(
        self, output: OutputRecord, route: str, *, alone: bool
    ) -> Callable[[Any, Any], None]:
        """A delivery callback for one output; counts it as pending until it fires."""
        self.pending += 1

        def on_delivery(err: KafkaError | None, _msg: Message) -> None:
            self.pending -= 1
            if err is not None:
                self.fail(output, err, f"{err.name()}: {err.str()}", alone=alone)
                return
            self.delivered[(route, output.kind)] = self.delivered.get((route, output.kind), 0) + 1
            if output.kind == "clean" and output.timestamp_ms is not None:
                latency = time.time() - output.timestamp_ms / 1000.0
                self.latencies.setdefault(route, []).append(max(latency, 0.0))

        return on_delivery

    def fail(self, output: OutputRecord, error: object, text: str, *, alone: bool) -> None:
        """Record a failed output: a record-level refusal, or a failure retrying may fix."""
        if isinstance(error, KafkaError) and error.code() in RECORD_REJECTIONS:
            reason = f"{error.name()}: {error.str()}"
            self.rejected.append(Rejection(output.source, output.kind, output.topic, reason, alone))
        else:
            self.failed.append((output, text))


class BatchProducer:
    """Produces every output of a batch in order, then flushes and reports what landed."""

    def __init__(
        self,
        producer: Producer,
        *,
        flush_timeout_s: float,
        prepare: Callable[[BatchPlan, OutputRecord], OutputRecord],
        replace_oversized: Callable[[BatchPlan, OutputRecord], OutputRecord],
        produce_alone: Callable[[SourceRecord], bool],
        safe: Callable[[object], str],
    ) -> None:
        self.producer = producer
        self._flush_timeout_s = flush_timeout_s
        self._prepare = prepare
        self._replace_oversized = replace_oversized
        self._produce_alone = produce_alone
        self._safe = safe

    def produce(self, plans: list[BatchPlan]) -> Deliveries:
        """Produce all outputs of the plans and wait for every acknowledgement."""
        deliveries = Deliveries()
        for plan in plans:
            for planned in plan.outputs:
                output = self._prepare(plan, planned)
                if self._produce_alone(output.source):
                    # Alone in its message set, so a refusal is about this record only.
                    self._flush()
                    self._produce_one(plan, output, deliveries, alone=True)
                    self._flush()
                else:
                    self._produce_one(plan, output, deliveries, alone=False)
        self._flush()
        return deliveries

    def _flush(self) -> None:
        remaining = self.producer.flush(self._flush_timeout_s)
        if remaining:
            log.error("outputs not acknowledged in time", extra={"unacknowledged": remaining})

    def _produce_one(
        self, plan: BatchPlan, output: OutputRecord, deliveries: Deliveries, *, alone: bool
    ) -> None:
        producer = self.producer
        while True:
            kwargs: dict[str, Any] = {
                "key": output.key,
                "value": output.value,
                "headers": output.headers or None,
                "on_delivery": deliveries.callback(output, plan.route, alone=alone),
            }
            if output.timestamp_ms is not None:
                kwargs["timestamp"] = output.timestamp_ms
            try:
                producer.produce(output.topic, **kwargs)
                return
            except BufferError:
                deliveries.pending -= 1
                producer.poll(0.1)  # local queue full: let deliveries drain, then retry
            except KafkaException as exc:
                deliveries.pending -= 1
                error = exc.args[0] if exc.args else None
                too_large = (
                    isinstance(error, KafkaError) and error.code() == KafkaError.MSG_SIZE_TOO_LARGE
                )
                if too_large and output.kind == "clean":
                    # Key + headers pushed a valid record over the limit: quarantine it.
                    output = self._replace_oversized(plan, output)
                    continue
                # The client's own checks see this record only: its refusal is its own.
                deliveries.fail(output, error, self._safe(exc), alone=True)
                return
