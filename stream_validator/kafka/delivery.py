"""Tracking the broker's acknowledgements of one batch's outputs."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

from confluent_kafka import KafkaError, Message

from stream_validator.pipeline import OutputRecord


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
