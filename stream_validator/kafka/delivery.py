"""Producing one batch's outputs and tracking the broker's acknowledgements."""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from typing import Any

from confluent_kafka import KafkaError, KafkaException, Message, Producer

from stream_validator.pipeline import BatchPlan, OutputRecord

log = logging.getLogger("stream_validator.service")


class Deliveries:
    """Counts acknowledgements of one batch's outputs (callbacks run inside flush/poll)."""

    def __init__(self) -> None:
        self.pending = 0
        self.failed: list[tuple[OutputRecord, str]] = []
        self.latencies: dict[str, list[float]] = {}

    def callback(self, output: OutputRecord, route: str) -> Callable[[Any, Any], None]:
        """A delivery callback for one output; counts it as pending until it fires."""
        self.pending += 1

        def on_delivery(err: KafkaError | None, _msg: Message) -> None:
            self.pending -= 1
            if err is not None:
                self.failed.append((output, f"{err.name()}: {err.str()}"))
            elif output.kind == "clean" and output.timestamp_ms is not None:
                latency = time.time() - output.timestamp_ms / 1000.0
                self.latencies.setdefault(route, []).append(max(latency, 0.0))

        return on_delivery


class BatchProducer:
    """Produces every output of a batch in order, then flushes and reports what landed."""

    def __init__(
        self,
        producer: Producer,
        *,
        flush_timeout_s: float,
        replace_oversized: Callable[[BatchPlan, OutputRecord], OutputRecord],
        safe: Callable[[object], str],
    ) -> None:
        self._producer = producer
        self._flush_timeout_s = flush_timeout_s
        self._replace_oversized = replace_oversized
        self._safe = safe

    def produce(self, plans: list[BatchPlan], *, flush: bool = True) -> Deliveries:
        """Produce all outputs of the plans; with flush, wait for every acknowledgement."""
        deliveries = Deliveries()
        for plan in plans:
            for output in plan.outputs:
                self._produce_one(plan, output, deliveries)
        if not flush:
            return deliveries
        remaining = self._producer.flush(self._flush_timeout_s)
        if remaining:
            log.error("outputs not acknowledged in time", extra={"unacknowledged": remaining})
        return deliveries

    def _produce_one(self, plan: BatchPlan, output: OutputRecord, deliveries: Deliveries) -> None:
        producer = self._producer
        while True:
            kwargs: dict[str, Any] = {
                "key": output.key,
                "value": output.value,
                "headers": output.headers or None,
                "on_delivery": deliveries.callback(output, plan.route),
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
                deliveries.failed.append((output, self._safe(exc)))
                return
